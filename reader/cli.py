"""The `reader` command (also `python -m reader`)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ipaddress
import json
import logging
import shutil
import signal
import sys
from pathlib import Path

from .settings import Settings, describe

EXAMPLE_DB = Path(__file__).resolve().parent.parent / "reader.db.example"


def _parser() -> argparse.ArgumentParser:
    settings_help = "\n".join(f"  {env:28} {help} (default {default})" for env, default, help in describe())
    parser = argparse.ArgumentParser(
        prog="reader",
        description="A self-hosted reading app: skim headlines, tap to queue, read clean text.",
        epilog="settings (environment variables):\n" + settings_help,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--db", type=Path, help="database file (READER_DB, default ./reader.db)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = sub.add_parser("serve", parents=[common], help="run the web app with one worker")
    serve.add_argument("--host", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default 8000)")

    worker = sub.add_parser("worker", parents=[common], help="run a worker process that pulls from the queue")
    worker.add_argument("--concurrency", type=int, default=1, help="articles cleaned at once (default 1)")

    add = sub.add_parser("add-feed", parents=[common], help="subscribe to a feed and fetch it")
    add.add_argument("url")
    sub.add_parser("refresh", parents=[common], help="refresh every feed now")
    sub.add_parser("stats", parents=[common], help="the extraction ledger's counts")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per fetch is noise
    try:
        settings = Settings.from_env(db=args.db, host=getattr(args, "host", None), port=getattr(args, "port", None))
    except ValueError as exc:
        print(f"reader: {exc}", file=sys.stderr)
        return 2
    command = {"serve": _serve, "worker": _worker, "add-feed": _add_feed, "refresh": _refresh, "stats": _stats}
    return command[args.command](settings, args)


def seed_database(path: Path) -> None:
    """A first run gets the sample database: headlines to skim and articles to clean,
    all served from files inside the package, so it works offline."""
    if not path.exists() and EXAMPLE_DB.exists():
        shutil.copyfile(EXAMPLE_DB, path)
        print(f"reader: created {path} from the sample database", file=sys.stderr)


def _serve(settings: Settings, args) -> int:
    import uvicorn

    from .app import create_app

    if not _loopback(settings.host) and not settings.password:
        print(f"reader: refusing to listen on {settings.host} without READER_PASSWORD: anyone who can reach it"
              " could read and change your library. Set READER_PASSWORD, or bind to 127.0.0.1.", file=sys.stderr)
        return 2
    seed_database(settings.db)
    print(f"reader: serving {settings.db} on http://{settings.host}:{settings.port}/", file=sys.stderr)
    uvicorn.run(create_app(settings), host=settings.host, port=settings.port, log_level="info",
                timeout_graceful_shutdown=15)
    return 0


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _worker(settings: Settings, args) -> int:
    from .app import running

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


@contextlib.asynccontextmanager
async def _quiet(settings: Settings):
    from .app import running

    async with running(settings, role="cli", worker=False, refresher=False) as reader:
        yield reader


def _add_feed(settings: Settings, args) -> int:
    from .api import ApiError, valid_url
    from .feeds import refresh_feeds

    try:
        url = valid_url(args.url)
    except ApiError as exc:
        print(f"reader: {exc.message}", file=sys.stderr)
        return 2

    async def add() -> int:
        async with _quiet(settings) as reader:
            feed_id, created = await reader.store.add_feed(url)
            [result] = await refresh_feeds(reader.store, reader.client, reader.pool,
                                           [await reader.store.get_feed(feed_id)],
                                           max_bytes=settings.max_page_bytes, deadline=settings.fetch_timeout)
            if result.error:
                print(f"feed {feed_id} added, but fetching it failed: {result.error}", file=sys.stderr)
                return 1
            print(f"feed {feed_id}: {'added' if created else 'already subscribed'}, {result.new} new articles")
            return 0

    return asyncio.run(add())


def _refresh(settings: Settings, args) -> int:
    from .feeds import refresh_feeds

    async def refresh() -> int:
        async with _quiet(settings) as reader:
            results = await refresh_feeds(reader.store, reader.client, reader.pool, await reader.store.list_feeds(),
                                          max_bytes=settings.max_page_bytes, deadline=settings.fetch_timeout)
        for r in results:
            status = f"error: {r.error}" if r.error else ("not modified" if r.not_modified else f"{r.new} new")
            print(f"{r.feed_id:>5}  {r.url}  {status}")
        return 1 if any(r.error for r in results) else 0

    return asyncio.run(refresh())


def _stats(settings: Settings, args) -> int:
    from .store import Store

    async def stats() -> int:
        async with await Store.open(settings.db) as store:
            print(json.dumps(await store.stats(), indent=2))
        return 0

    return asyncio.run(stats())
