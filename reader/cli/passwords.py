"""`reader app-password add NAME | list | revoke NAME-or-ID`: the passwords native apps
sign in with (the Google Reader API and Fever, reader/core/sync.py). A new one is
printed once and never again: only its hash is kept."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from typing import Any

from ..core import running, sync
from ..settings import Settings

COMMAND = "app-password"


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    """The `app-password` command and its three actions, on the CLI's subparsers."""
    command = sub.add_parser(COMMAND, parents=[common],
                             help="passwords for native apps (NetNewsWire, Reeder, Read You, Unread...)")
    actions = command.add_subparsers(dest="action", required=True, metavar="ACTION")
    add = actions.add_parser("add", parents=[common], help="make one; it is printed once")
    add.add_argument("name", help="what to call it; also the user name the app signs in with")
    actions.add_parser("list", parents=[common], help="every app password, with when it was last used")
    revoke = actions.add_parser("revoke", parents=[common], help="revoke one: apps using it stop at once")
    revoke.add_argument("name", metavar="NAME-or-ID")


def _when(stamp: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp)) if stamp else "never"


def run(settings: Settings, args: argparse.Namespace) -> int:
    """Run `reader app-password ACTION`; a refusal (a name taken, no such password) is
    a ReaderError, which the CLI prints as one line with exit status 2."""
    async def act() -> int:
        async with running(settings, role="cli", worker=False, refresher=False) as reader:
            if args.action == "add":
                made, password = await sync.add_app_password(reader, args.name)
                print(password)
                print(f"reader: app password {made.name} (id {made.id}) made; it is shown only this once. In an app,"
                      f" sign in with user name {made.name} and this password (Google Reader API: the server's"
                      " address; Fever: the address followed by /fever/)", file=sys.stderr)
            elif args.action == "list":
                for p in await sync.app_passwords(reader):
                    state = f"revoked {_when(p.revoked_at)}" if p.revoked_at else f"last used {_when(p.last_used_at)}"
                    print(f"{p.id}\t{p.name}\tmade {_when(p.created_at)}\t{state}")
            else:
                gone = await sync.revoke_app_password(reader, args.name)
                print(f"reader: revoked app password {gone.name} (id {gone.id}); apps using it are signed out",
                      file=sys.stderr)
        return 0

    return asyncio.run(act())


COMMANDS = {COMMAND: run}
