"""The access layer under attack (issue 10): foreign Host names (DNS rebinding), odd
cookies, oversized bodies and URLs, cross-site subresources, password guessing, stolen
or stale sessions, slow headers, and error answers without the security headers. Real
uvicorn and raw sockets where the wire matters."""

from __future__ import annotations

import contextlib
import html
import re
import socket
import threading
import time
from collections.abc import Iterator

import httpx
import pytest
import uvicorn
from starlette.requests import Request
from starlette.responses import Response

from reader.web.access import PRE_LOGIN_BODY_BYTES
from reader.web.server import LIMIT_CONCURRENCY, server_options
from reader.web.sessions import FAILURES_OVERALL, FAILURES_PER_CLIENT, SESSION_COOKIE, Sessions, Throttle
from reader.web.app import create_app

from .. import commands
from ..helpers import app_client, free_port, rss, until

PASSWORD = "correct horse battery"


async def _article(client: httpx.AsyncClient, pages) -> int:
    link = pages.add_article("a")
    feed = pages.add("/feed.xml", rss([{"title": "A", "link": link}]), headers={"Content-Type": "application/rss+xml"})
    assert (await client.post("/api/feeds", json={"url": feed})).status_code == 201
    return (await client.get("/api/articles")).json()["items"][0]["id"]


def _assert_secured(response: httpx.Response) -> None:
    assert "script-src 'self'" in response.headers["content-security-policy"], response.status_code
    assert response.headers["x-content-type-options"] == "nosniff"


# -- item 2: DNS rebinding ------------------------------------------------------------------


async def test_a_rebound_host_name_is_refused_before_any_route_runs(settings, pages):
    async with app_client(settings.replace(serve_workers=0)) as client:
        await _article(client, pages)
        rebound = {"Host": "rebind.attacker.example:8000", "Origin": "http://rebind.attacker.example:8000"}
        listing = await client.get("/api/feeds", headers=rebound)
        deleting = await client.delete("/api/feeds/1", headers=rebound)
        page = await client.get("/feeds", headers=rebound)
        assert listing.status_code == deleting.status_code == page.status_code == 421
        assert "READER_ALLOWED_HOSTS" in listing.json()["error"]
        assert "csrf" not in page.text  # no form token leaks to the rebound page
        _assert_secured(page)
        assert len((await client.get("/api/feeds")).json()["feeds"]) == 1
        for host in ("localhost:8000", "127.0.0.1", "127.8.9.10:8123", "[::1]:8000", "LOCALHOST"):
            assert (await client.get("/api/stats", headers={"Host": host})).status_code == 200, host
        for host in ("localhost.attacker.example", "127.0.0.1.nip.io", "0.0.0.0:8000", "reader.test@evil", "[::1"):
            assert (await client.get("/api/stats", headers={"Host": host})).status_code == 421, host


async def test_the_public_url_and_allowed_hosts_and_a_non_loopback_bind_are_answered(settings):
    configured = settings.replace(public_url="https://reader.example.org", allowed_hosts=("lan-box", "reader.test"),
                                  host="192.0.2.10", serve_workers=0)
    async with app_client(configured) as client:
        for host in ("reader.example.org", "lan-box:8000", "192.0.2.10:8000", "reader.test"):
            assert (await client.get("/api/stats", headers={"Host": host})).status_code == 200, host
        assert (await client.get("/api/stats", headers={"Host": "198.51.100.7"})).status_code == 421
        # behind a TLS proxy the browser's Origin is the public https one, the request plain http
        saved = await client.post("/api/articles", json={"url": "https://example.org/a"},
                                  headers={"Host": "reader.example.org", "Origin": "https://reader.example.org"})
        assert saved.status_code == 201
        page = (await client.get("/feeds", headers={"Host": "lan-box:8000"})).text
        assert _bookmarklet_origin(page) == "https://reader.example.org"


def _bookmarklet_origin(page: str) -> str:
    [href] = re.findall(r'href="(javascript:[^"]*)"', page)
    return re.search(r'u="(.*?)/save\?url="', html.unescape(href)).group(1)


async def test_the_bookmarklet_points_at_the_port_in_use(settings):
    # a container's name has an underscore: it once sent the bookmarklet to port 8000
    async with app_client(settings.replace(serve_workers=0, allowed_hosts=("reader.test", "reader_box"))) as client:
        for host in ("127.0.0.1:8123", "localhost:9001", "[::1]:8443", "reader_box:8123"):
            page = (await client.get("/feeds", headers={"Host": host})).text
            assert _bookmarklet_origin(page) == f"http://{host}"


# -- item 3: a non-ASCII session cookie -------------------------------------------------------


async def test_a_non_ascii_session_cookie_is_logged_out_not_a_500(settings):
    async with app_client(settings.replace(password=PASSWORD, serve_workers=0)) as client:
        cookie = {"Cookie": f"{SESSION_COOKIE}=\xe9t\xe9".encode("latin-1")}
        page = await client.get("/queue", headers=cookie)
        api = await client.get("/api/stats", headers=cookie)
        assert page.status_code == 303 and page.headers["location"].startswith("/login")
        assert api.status_code == 401


# -- item 5: sessions ------------------------------------------------------------------------


async def _login(client: httpx.AsyncClient, password: str = PASSWORD) -> httpx.Response:
    await client.get("/login")
    return await client.post("/login", data={"password": password, "next": "/queue"})


async def test_a_session_is_random_and_dies_at_logout(settings):
    async with app_client(settings.replace(password=PASSWORD, serve_workers=0)) as client:
        assert (await _login(client)).status_code == 303
        first = client.cookies.get(SESSION_COOKIE)
        assert PASSWORD not in first and (await client.get("/queue")).status_code == 200
        assert (await client.post("/logout")).status_code == 303
        assert (await _login(client)).status_code == 303
        second = client.cookies.get(SESSION_COOKIE)
        assert second != first  # not derived from the password
        assert (await client.post("/logout")).status_code == 303
        client.cookies.delete(SESSION_COOKIE)
        for stale in (first, second):  # a copy of the cookie kept from before the logout
            replayed = await client.get("/queue", headers={"Cookie": f"{SESSION_COOKIE}={stale}"})
            assert replayed.status_code == 303 and replayed.headers["location"].startswith("/login")


def test_a_session_granted_under_one_password_is_not_honoured_under_another():
    sessions = Sessions()
    granted = sessions.start("old password one")
    assert sessions.valid(granted, "old password one")
    assert not sessions.valid(granted, "new password two")
    assert not sessions.valid(granted, "old password one")  # and it is gone for good
    other = sessions.start("p" * 12)
    sessions.end(other)
    assert not sessions.valid(other, "p" * 12)
    assert not sessions.valid("\ud800\xe9", "p" * 12)


# -- item 5: the throttle --------------------------------------------------------------------


async def test_wrong_passwords_are_throttled_per_client_and_the_right_one_waits_too(settings):
    async with app_client(settings.replace(password=PASSWORD, serve_workers=0)) as client:
        await client.get("/login")
        for _ in range(FAILURES_PER_CLIENT):
            assert (await client.post("/login", data={"password": "guess"})).status_code == 401
        refused = await client.post("/login", data={"password": "guess"})
        assert refused.status_code == 429 and int(refused.headers["retry-after"]) > 0
        assert "try again" in refused.text
        _assert_secured(refused)
        # the right password gives no answer either while throttled: it would confirm a guess
        assert (await client.post("/login", data={"password": PASSWORD})).status_code == 429
        bearer = await client.get("/api/stats", headers={"Authorization": f"Bearer {PASSWORD}"})
        assert bearer.status_code == 429 and bearer.json()["error"].startswith("too many wrong passwords")


async def test_bearer_guesses_from_many_addresses_meet_the_overall_ceiling(settings):
    app = create_app(settings.replace(password=PASSWORD, serve_workers=0))
    async with app.router.lifespan_context(app):
        async def get(address: str, token: str) -> httpx.Response:
            transport = httpx.ASGITransport(app=app, client=(address, 40000))
            async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
                return await c.get("/api/stats", headers={"Authorization": f"Bearer {token}"})

        for i in range(FAILURES_OVERALL):
            assert (await get(f"10.1.{i // 200}.{i % 200 + 1}", "guess")).status_code == 401
        fresh = await get("10.9.9.9", PASSWORD)
        assert fresh.status_code == 429 and int(fresh.headers["retry-after"]) > 0
        # IPv6 guesses count against the /64, so a new address in it does not start afresh
        for i in range(FAILURES_PER_CLIENT):
            await get(f"2001:db8::{i + 1}", "guess")
        assert (await get("2001:db8::ffff", "guess")).status_code == 429


def test_a_throttled_client_may_try_again_once_its_oldest_failure_leaves_the_window():
    now = [1000.0]
    throttle = Throttle(per_client=3, overall=10, window=60.0, clock=lambda: now[0])
    for _ in range(3):
        assert throttle.wait("a") == 0
        throttle.failed("a")
        now[0] += 10
    assert throttle.wait("a") == pytest.approx(30.0)  # the first failure, at 1000, leaves at 1060
    assert throttle.wait("b") == 0  # another address is not held up by this one
    now[0] = 1060.5
    assert throttle.wait("a") == 0
    throttle.failed("a")
    assert throttle.wait("a") == pytest.approx(9.5)


def test_serve_refuses_a_short_password_beyond_loopback(tmp_path):
    result = commands.run(["serve", "--host", "0.0.0.0", "--port", str(free_port()), "--db", str(tmp_path / "r.db")],
                          timeout=60, env={"PATH": "/usr/bin:/bin", "READER_PASSWORD": "x"})
    stderr = result.stderr.decode()
    assert result.returncode == 2
    assert "too short" in stderr and "12 characters" in stderr
    assert not (tmp_path / "r.db").exists()


# -- item 7: cross-site GETs with side effects -------------------------------------------------


async def test_another_sites_img_cannot_mark_read_or_start_cleaning(settings, pages):
    async with app_client(settings.replace(serve_workers=0)) as client:
        article_id = await _article(client, pages)
        cross = {"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}
        image = await client.get(f"/articles/{article_id}", headers={**cross, "Sec-Fetch-Mode": "no-cors",
                                                                     "Sec-Fetch-Dest": "image"})
        frame = await client.get(f"/articles/{article_id}", headers={**cross, "Sec-Fetch-Mode": "navigate",
                                                                     "Sec-Fetch-Dest": "iframe"})
        fetched = await client.get(f"/api/articles/{article_id}/content",
                                   headers={**cross, "Sec-Fetch-Mode": "cors", "Sec-Fetch-Dest": "empty"})
        nearby = await client.get(f"/articles/{article_id}", headers={"Sec-Fetch-Site": "same-site",
                                                                      "Sec-Fetch-Mode": "no-cors"})
        assert image.status_code == frame.status_code == fetched.status_code == nearby.status_code == 403
        _assert_secured(image)
        article = (await client.get(f"/api/articles/{article_id}")).json()
        assert article["state"] == "new" and not article["read"]
        assert pages.hits["/a.html"] == 0
        # a link followed from another site opens the article, but starts and marks nothing
        # (test_access.py::test_an_article_opened_from_another_sites_link_is_neither_cleaned_nor_marked_read)
        link = await client.get(f"/articles/{article_id}", headers={**cross, "Sec-Fetch-Mode": "navigate",
                                                                    "Sec-Fetch-Dest": "document"})
        assert link.status_code == 200 and "has not started cleaning" in link.text
        assert not (await client.get(f"/api/articles/{article_id}")).json()["read"]
        assert pages.hits["/a.html"] == 0


# -- item 4: body and URL caps ---------------------------------------------------------------


async def test_body_caps_depend_on_the_route_and_the_upload_cap_is_a_setting(settings):
    async with app_client(settings.replace(password=PASSWORD, serve_workers=0,
                                           max_upload_bytes=300_000)) as client:
        before = await client.post("/api/feeds", content=b"{" + b" " * 40_000 + b"}",
                                   headers={"Content-Type": "application/json"})
        assert before.status_code == 413  # not logged in: 16 KB, not even a 401 after reading it all
        _assert_secured(before)
        assert (await _login(client)).status_code == 303
        form = await client.post("/feeds", data={"url": "http://example.org/" + "a" * 1_100_000})
        assert form.status_code == 413
        opml = b'<?xml version="1.0"?><opml version="2.0"><body><outline xmlUrl="http://example.org/f"/>' + \
            b"<!--" + b"x" * 200_000 + b"--></body></opml>"
        taken = await client.post("/feeds/import", files={"opml": ("feeds.opml", opml)})
        assert taken.status_code in (303, 200), taken.text  # 200 KB is under the upload cap
        big = await client.post("/feeds/import", files={"opml": ("feeds.opml", opml + b" " * 200_000)})
        assert big.status_code == 413 and "300,000" in big.text


async def test_a_request_url_longer_than_the_cap_is_refused(client):
    response = await client.get("/feeds?x=" + "a" * 9000)
    assert response.status_code == 414
    _assert_secured(response)
    assert (await client.get("/feeds?x=" + "a" * 1000)).status_code == 200


# -- item 6: every error answer carries the security headers ----------------------------------


async def test_a_500_carries_the_security_headers(settings):
    async def crash(request: Request) -> Response:
        raise RuntimeError("a bug")

    app = create_app(settings.replace(serve_workers=0))
    app.add_route("/crash-for-test", crash)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
            response = await c.get("/crash-for-test")
            missing = await c.get("/no/such/page")
    assert response.status_code == 500 and "a bug" not in response.text
    _assert_secured(response)
    assert missing.status_code == 404
    _assert_secured(missing)


# -- the wire: a real uvicorn configured as `reader serve` configures it -----------------------


@contextlib.contextmanager
def served(settings) -> Iterator[int]:
    port = free_port()
    config = uvicorn.Config(create_app(settings), log_level="warning",
                            **server_options(settings.replace(host="127.0.0.1", port=port)))
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(30)


def _read_to_close(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (a timeout fails the test)."""
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def test_an_oversized_login_is_answered_413_and_the_connection_closed(settings):
    with served(settings.replace(password=PASSWORD, serve_workers=0)) as port:
        with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
            sock.sendall(b"POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; "
                         b"boundary=x\r\nContent-Length: 300000000\r\n\r\n")
            answer = _read_to_close(sock)  # at once: not one byte of the body was needed
        assert answer.startswith(b"HTTP/1.1 413 ")
        assert b"connection: close" in answer.lower() and b"nosniff" in answer
        with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
            sock.sendall(b"POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded"
                         b"\r\nTransfer-Encoding: chunked\r\n\r\n")
            chunk = b"a" * 4096
            for _ in range(PRE_LOGIN_BODY_BYTES // len(chunk) + 2):  # past the cap, and never finished
                sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            try:
                answer = _read_to_close(sock)
            except ConnectionResetError:
                # the server closed with some of our chunks unread, so its kernel may answer with
                # a reset that overtakes the 413: the connection was still cut off past the cap
                answer = b"HTTP/1.1 413 (overtaken by the reset)"
        assert answer.startswith(b"HTTP/1.1 413 ")


def test_slow_headers_are_cut_off_but_slow_answers_are_not(settings, pages):
    link = pages.add_article("slow", delay=2.5)  # the page takes longer than the header deadline
    with served(settings.replace(header_timeout=1.0, serve_workers=0)) as port:
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            closed = threading.Event()

            def trickle() -> None:  # a byte at a time, as a slow-headers attack sends them
                with contextlib.suppress(OSError):
                    while not closed.is_set():
                        sock.sendall(b"X")
                        closed.wait(0.2)

            sender = threading.Thread(target=trickle, daemon=True)
            sender.start()
            try:
                try:
                    cut_off = _read_to_close(sock)
                except ConnectionResetError:
                    # the server closed with a trickled byte unread, so its kernel answered with a
                    # reset: cut off all the same, and a reset carries no answer
                    cut_off = b""
                assert cut_off == b""  # closed without an answer
            finally:
                closed.set()
                sender.join(5)
        base = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=base, timeout=30) as client:
            saved = client.post("/api/articles", json={"url": link}).json()
            opened = client.get(f"/api/articles/{saved['id']}/content")
            assert opened.status_code == 200 and "marker-slow" in opened.json()["html"]
            assert client.get("/api/stats").status_code == 200  # the same kept-alive connection



def _ask(port: int, request: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        sock.sendall(request)
        return _read_to_close(sock)


def test_uvicorns_own_answers_carry_the_security_headers(settings):
    """The 400 for a request h11 cannot parse and the 503 past the concurrency limit are
    answered before any route runs; they carry the same headers as every other answer."""
    with served(settings.replace(serve_workers=0, header_timeout=60.0)) as port:
        for garbage in (b"NOT A REQUEST\r\n\r\n", b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header\r\n\r\n"):
            answer = _ask(port, garbage)
            head = answer.partition(b"\r\n\r\n")[0].lower()
            assert answer.startswith(b"HTTP/1.1 400 "), answer[:200]
            assert b"x-content-type-options: nosniff" in head and b"content-security-policy: default-src" in head
            assert b"x-frame-options: deny" in head and b"connection: close" in head

        held = []
        try:
            for _ in range(LIMIT_CONCURRENCY):  # idle connections up to the limit
                held.append(socket.create_connection(("127.0.0.1", port), timeout=20))
            stats = b"GET /api/stats HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
            # until the server has taken in every one of them
            answer = until(lambda: (a := _ask(port, stats)).startswith(b"HTTP/1.1 503 ") and a)
            head, _, body = answer.partition(b"\r\n\r\n")
            assert b"x-content-type-options: nosniff" in head.lower() and b"retry-after: 1" in head.lower()
            assert b"content-security-policy: default-src" in head.lower()
            assert b'"error"' in body and b"too many requests at once" in body  # the API's JSON shape
            page = _ask(port, b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            assert page.startswith(b"HTTP/1.1 503 ") and b"nosniff" in page
        finally:
            for sock in held:
                sock.close()
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            until(lambda: client.get("/api/stats").status_code == 200)  # once the held ones have closed
