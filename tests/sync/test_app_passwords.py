"""App passwords: `reader app-password add | list | revoke` (reader/cli/passwords.py, run
here through its own two functions), what is stored of them, the sign-in throttle, and a
revoked password stopping a signed-in app at once."""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import sqlite3
from pathlib import Path

import pytest

from reader.cli import passwords
from reader.core import sync
from reader.errors import Conflict, Invalid, NotFound

from ..helpers import app_client
from ..syncing import GReader, Serve, app_password, feed_of, subscribed


def _command(settings, *argv: str) -> int:
    """`reader app-password ARGV...` through the module's parser and runner."""
    parser = argparse.ArgumentParser(prog="reader")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--db", type=Path)
    sub = parser.add_subparsers(dest="command", required=True)
    passwords.add_parsers(sub, common)
    args = parser.parse_args([passwords.COMMAND, *argv])
    return passwords.run(settings.replace(extract_processes=0), args)


def test_add_prints_the_password_once_list_shows_it_and_revoke_ends_it(settings, capsys):
    assert _command(settings, "add", "phone") == 0
    out, err = capsys.readouterr()
    password = out.strip()
    assert len(password) == 24 and password.count("-") == 4
    assert "user name phone" in err and "shown only this once" in err
    assert _command(settings, "add", "tablet") == 0
    capsys.readouterr()

    assert _command(settings, "list") == 0
    listing = capsys.readouterr().out.splitlines()
    assert [line.split("\t")[:2] for line in listing] == [["1", "phone"], ["2", "tablet"]]
    assert all("last used never" in line for line in listing)
    assert password not in "".join(listing)

    with pytest.raises(Conflict):
        _command(settings, "add", "PHONE")  # one live password per name, in any case
    with pytest.raises(Invalid):
        _command(settings, "add", "my phone")
    assert _command(settings, "revoke", "phone") == 0
    assert _command(settings, "revoke", "2") == 0
    with pytest.raises(NotFound):
        _command(settings, "revoke", "phone")
    capsys.readouterr()
    assert _command(settings, "list") == 0
    assert all("revoked" in line for line in capsys.readouterr().out.splitlines())
    assert _command(settings, "add", "phone") == 0  # a revoked one's name may be used again


def test_only_a_salted_scrypt_hash_is_stored(settings, capsys):
    _command(settings, "add", "phone")
    password = capsys.readouterr().out.strip()
    with sqlite3.connect(settings.db) as db:
        salt, digest, fever = db.execute("SELECT salt, hash, fever_key FROM app_passwords").fetchone()
        everything = b"".join(bytes(str(row), "utf-8") for row in db.execute("SELECT * FROM app_passwords"))
    assert password.encode() not in everything
    assert digest == hashlib.scrypt(password.encode(), salt=salt, n=2**14, r=8, p=1, dklen=32)
    assert len(salt) == 16
    assert fever == hashlib.sha256(hashlib.md5(f"phone:{password}".encode()).hexdigest().encode()).hexdigest()


async def test_wrong_app_passwords_are_throttled_like_the_web_login(settings):
    async with app_client(settings.replace(serve_workers=0, extract_processes=0), csrf=False) as client:
        _, password = await sync.add_app_password(client.app.state.reader, "phone")
        for _ in range(5):
            wrong = await client.post("/accounts/ClientLogin", data={"Email": "phone", "Passwd": "guess"})
            assert wrong.status_code == 401
        held = await client.post("/accounts/ClientLogin", data={"Email": "phone", "Passwd": password})
        assert held.status_code == 429 and int(held.headers["retry-after"]) > 0
        fever = await client.post("/fever/?api", data={"api_key": "0" * 32})
        assert fever.status_code == 200 and fever.json()["auth"] == 0 and "too many" in fever.json()["error"]


async def test_a_revoked_app_password_stops_every_app_signed_in_with_it_at_once(settings, pages):
    await subscribed(settings, feed_of(pages, ["a"]))
    password = await app_password(settings, "phone")
    other = await app_password(settings, "tablet")
    async with Serve(settings) as server, GReader(server.url) as phone, GReader(server.url) as tablet:
        assert (await phone.login("phone", password)).status_code == 200
        assert (await tablet.login("tablet", other)).status_code == 200
        assert (await phone.get("/subscription/list")).status_code == 200
        assert await asyncio.to_thread(_command, settings, "revoke", "phone") == 0
        gone = await phone.get("/subscription/list")
        assert gone.status_code == 401 and gone.headers["google-bad-token"] == "true"
        assert (await phone.login("phone", password)).status_code == 401
        assert (await tablet.get("/subscription/list")).status_code == 200  # the other app is not touched


async def test_the_edit_token_is_the_sessions_own(settings, pages):
    ids = await subscribed(settings, feed_of(pages, ["a"]))
    async with app_client(settings.replace(serve_workers=0, extract_processes=0), csrf=False) as client:
        _, password = await sync.add_app_password(client.app.state.reader, "phone")
        apps = []
        for _ in range(2):
            answer = await client.post("/accounts/ClientLogin", data={"Email": "phone", "Passwd": password})
            auth = {"Authorization": "GoogleLogin auth=" + answer.text.split("Auth=")[1].strip()}
            apps.append((auth, (await client.get("/reader/api/0/token", headers=auth)).text))
        (one, t_one), (two, t_two) = apps
        assert t_one != t_two
        item = str(ids["Article a"])
        read = "user/-/state/com.google/read"
        refused = await client.post("/reader/api/0/edit-tag", data={"i": item, "a": read, "T": t_two}, headers=one)
        assert refused.status_code == 401
        assert (await client.get(f"/api/articles/{item}")).json()["read"] is False
        done = await client.post("/reader/api/0/edit-tag", data={"i": item, "a": read, "T": t_one}, headers=one)
        assert done.text == "OK"
