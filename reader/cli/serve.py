"""Long-running commands: `serve` (the web app with one worker) and `worker` (a process
that only pulls from the queue)."""

from __future__ import annotations

import argparse
import asyncio
import shutil
import signal
import sys
from pathlib import Path
from typing import Any

from ..core import library
from ..resources import seed_db
from ..settings import Settings
from ..web.server import server_options
from ..core import running
from ..web.app import create_app, stop_taking_work
from .base import Command, one_line, whole

EXAMPLE_DB = seed_db()


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    serve = sub.add_parser("serve", parents=[common], help="run the web app with one worker")
    serve.add_argument("--host", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=whole(0, 65535), help="port (default 8000)")
    worker = sub.add_parser("worker", parents=[common], help="run a worker process that pulls from the queue")
    worker.add_argument("--concurrency", type=whole(1, 64), default=1, help="articles cleaned at once (default 1)")


def seed_database(path: Path) -> None:
    """A first run gets the sample database: headlines to skim and articles to clean,
    all served from files inside the package, so it works offline."""
    if not path.exists() and EXAMPLE_DB.exists():
        shutil.copyfile(EXAMPLE_DB, path)
        print(f"reader: created {path} from the sample database", file=sys.stderr)


def serve(settings: Settings, args: argparse.Namespace) -> int:
    import uvicorn  # only serving needs the server: the other commands do without loading it

    settings.check_for_serving()  # beyond loopback, a password: refused as any ReaderError
    seed_database(settings.db)
    health = library.check(settings)
    if health.unreadable or health.damaged:
        # Serving a damaged file answers errors wherever its bad pages are read, and every
        # write risks more: stop here, and say how to save what is left.
        # another program's file or a newer reader's: nothing to save, only the wrong file
        hint = "" if health.foreign else " (then `reader import` the export into a fresh database)"
        print(f"reader: refusing to serve {settings.db}: {one_line('; '.join(health.problems()))}{hint}",
              file=sys.stderr)
        return 2
    for problem in health.problems():  # read-only or full: serve what can be served
        print(f"reader: warning: {one_line(problem)}", file=sys.stderr)
    print(f"reader: serving {settings.db} on http://{settings.host}:{settings.port}/", file=sys.stderr)
    if settings.host.strip("[]") in ("0.0.0.0", "::") and not (settings.allowed_hosts or settings.public_url):
        print("reader: only loopback names are answered (a guard against DNS rebinding): set READER_ALLOWED_HOSTS"
              " or READER_PUBLIC_URL to the names you reach reader by", file=sys.stderr)
    app = create_app(settings)

    class StoppingServer(uvicorn.Server):
        """uvicorn's server, which also tells reader the moment a stop is asked for:
        uvicorn itself ends the app's lifespan only after waiting for open connections."""

        loop: asyncio.AbstractEventLoop | None = None

        async def serve(self, sockets: Any = None) -> None:
            self.loop = asyncio.get_running_loop()
            await super().serve(sockets)

        def handle_exit(self, sig: int, frame: Any) -> None:
            super().handle_exit(sig, frame)
            if self.loop is not None:  # in a signal handler: hand over to the loop
                self.loop.call_soon_threadsafe(stop_taking_work, app)

    StoppingServer(uvicorn.Config(app, log_level="info", **server_options(settings))).run()
    return 0


def worker(settings: Settings, args: argparse.Namespace) -> int:
    async def work() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        async with running(settings, role="worker", refresher=False, concurrency=args.concurrency):
            print(f"reader: worker pulling from {settings.db} (concurrency {args.concurrency})", file=sys.stderr)
            await stop.wait()
            print("reader: stopping; letting extractions in progress finish", file=sys.stderr)

    asyncio.run(work())
    return 0


COMMANDS: dict[str, Command] = {"serve": serve, "worker": worker}
