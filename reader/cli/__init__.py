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
import sqlite3
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from ..resources import seed_db
from ..web.server import server_options
from ..web.sessions import MIN_PASSWORD_LENGTH
from ..core import running
from ..web.app import create_app, stop_taking_work
from ..core import Reader, parse_int
from ..params import MAX_ID
from ..core.editions import Filters, make_edition, mark_read_after_download
from ..errors import Invalid, ReaderError, StorageError
from ..formats.importers import ImportFileError, detect_format
from ..core.exports import PortabilityError, backup, export, export_bookmarks, import_files, salvage_export
from ..settings import Settings, describe
from ..store import Store
from ..store.check import check_file
from ..urls import check_url

EXAMPLE_DB = seed_db()


def _clean(args: argparse.Namespace) -> int:
    """Clean each file; one that cannot be cleaned is reported and the rest go on.
    Exit status 1 if any file failed."""
    from ..clean.pipeline import as_json_line, clean_file

    failed = 0
    for name in args.files:
        refused = _not_a_regular_file(Path(name))
        try:
            if refused:
                raise ValueError(refused.removeprefix(f"{name}: "))
            result = clean_file(name, args.url)
        except Exception as exc:  # noqa: BLE001 - any file's failure is reported, never a traceback
            failed += 1
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc) or type(exc).__name__
            if args.json:
                print(as_json_line(name, None, reason), flush=True)
            else:
                print(f"reader: {name}: {reason}", file=sys.stderr)
            continue
        if args.json:
            print(as_json_line(name, result), flush=True)
        else:
            print(f"# {result['title'] or name}\n\n{result['text']}\n")
    return 1 if failed else 0


def _whole(low: int, high: int) -> Any:
    """An argparse type: a whole number within [low, high], else argparse's one-line usage
    error (exit status 2). A port past 65535 reached bind() as a traceback, an id past
    SQLite's 64 bits reached the driver as one, and a concurrency of 0 was a worker that
    never took anything."""

    def whole(text: str) -> int:
        try:
            number = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not low <= number <= high:
            raise argparse.ArgumentTypeError(f"{text} is not between {low} and {high}")
        return number

    return whole


def _not_a_regular_file(path: Path) -> str | None:
    """Why a file named to be read whole is refused before it is opened: a pipe blocks
    the open until someone writes to it, and a device (/dev/zero) never ends."""
    if path.exists() and not path.is_file() and not path.is_dir():
        return f"{path}: not a regular file (a pipe, a socket or a device): give the file itself"
    return None


def _database_path_problem(path: Path) -> str | None:
    """What makes `path` no place for a database before SQLite is asked: SQLite's own
    answers for these ("unable to open database file", or an aiosqlite thread left
    behind) came out as tracebacks."""
    if path.exists() and not path.is_file():
        return f"{path} is a directory, not a database file"
    if not path.exists() and not path.parent.is_dir():
        return f"no such directory: {path.parent} (for the database {path})"
    return None


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
    serve.add_argument("--port", type=_whole(0, 65535), help="port (default 8000)")

    worker = sub.add_parser("worker", parents=[common], help="run a worker process that pulls from the queue")
    worker.add_argument("--concurrency", type=_whole(1, 64), default=1, help="articles cleaned at once (default 1)")

    add = sub.add_parser("add-feed", parents=[common], help="subscribe to a feed and fetch it")
    add.add_argument("url")
    sub.add_parser("refresh", parents=[common], help="refresh every feed now")
    sub.add_parser("stats", parents=[common], help="the extraction ledger's counts, per kind of run too")
    reclean = sub.add_parser("reclean", parents=[common],
                             help="clean articles again from their stored raw pages (fetches no page)")
    which = reclean.add_mutually_exclusive_group(required=True)
    which.add_argument("ids", nargs="*", type=_whole(1, MAX_ID), default=[], metavar="ID", help="these articles")
    which.add_argument("--all", action="store_true", help="every article with a stored raw page")
    which.add_argument("--failed", action="store_true", help="every failed article with a stored raw page")
    sub.add_parser("check", parents=[common],
                   help="is the database intact (PRAGMA quick_check), writable, with room on its disk?")
    clean = sub.add_parser("clean", help="clean saved HTML files exactly as the workers do (no database)")
    clean.add_argument("files", nargs="+", metavar="FILE")
    clean.add_argument("--url", help="the page's address, for its links (default: the file's own)")
    clean.add_argument("--json", action="store_true", help="one JSON object per file, one per line")
    _library_parsers(sub, common)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "clean":
        return _clean(args)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per fetch is noise
    try:
        settings = Settings.from_env(db=args.db, host=getattr(args, "host", None), port=getattr(args, "port", None))
    except ValueError as exc:
        print(f"reader: {exc}", file=sys.stderr)
        return 2
    problem = _database_path_problem(settings.db) if args.command != "check" else None
    if problem:
        print(f"reader: {_one_line(problem)}", file=sys.stderr)
        return 2
    command = {"serve": _serve, "worker": _worker, "add-feed": _add_feed, "refresh": _refresh, "stats": _stats,
               "check": _check, "reclean": _reclean, **LIBRARY_COMMANDS}
    try:
        return command[args.command](settings, args)
    except ReaderError as exc:  # the one place a refusal becomes a command's answer
        print(f"reader: {_one_line(exc.message)}", file=sys.stderr)
        return 2


def _one_line(text: str) -> str:
    """A message fit for one line of a terminal: no newlines, no lone surrogates."""
    return " ".join(text.encode("utf-8", "replace").decode("utf-8").split())


def seed_database(path: Path) -> None:
    """A first run gets the sample database: headlines to skim and articles to clean,
    all served from files inside the package, so it works offline."""
    if not path.exists() and EXAMPLE_DB.exists():
        shutil.copyfile(EXAMPLE_DB, path)
        print(f"reader: created {path} from the sample database", file=sys.stderr)


def _serve(settings: Settings, args: argparse.Namespace) -> int:
    import uvicorn  # only serving needs the server: the other commands do without loading it

    if not _loopback(settings.host) and not settings.password:
        print(f"reader: refusing to listen on {settings.host} without READER_PASSWORD: anyone who can reach it"
              " could read and change your library. Set READER_PASSWORD, or bind to 127.0.0.1.", file=sys.stderr)
        return 2
    if not _loopback(settings.host) and len(settings.password or "") < MIN_PASSWORD_LENGTH:
        print(f"reader: READER_PASSWORD is too short to listen on {settings.host}: anyone who can reach it may"
              f" guess it. Use at least {MIN_PASSWORD_LENGTH} characters.", file=sys.stderr)
        return 2
    seed_database(settings.db)
    health = check_file(settings.db)
    if health.unreadable or health.damaged:
        # Serving a damaged file answers errors wherever its bad pages are read, and every
        # write risks more: stop here, and say how to save what is left.
        # another program's file or a newer reader's: nothing to save, only the wrong file
        hint = "" if health.foreign else " (then `reader import` the export into a fresh database)"
        print(f"reader: refusing to serve {settings.db}: {_one_line('; '.join(health.problems()))}{hint}",
              file=sys.stderr)
        return 2
    for problem in health.problems():  # read-only or full: serve what can be served
        print(f"reader: warning: {_one_line(problem)}", file=sys.stderr)
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


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _worker(settings: Settings, args: argparse.Namespace) -> int:
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
async def _quiet(settings: Settings) -> AsyncIterator[Reader]:
    async with running(settings, role="cli", worker=False, refresher=False) as reader:
        yield reader


def _add_feed(settings: Settings, args: argparse.Namespace) -> int:
    url = check_url(args.url)  # refused before anything is opened

    async def add() -> int:
        async with _quiet(settings) as reader:
            # a feed's URL or a site's (its feed is discovered); a new feed is fetched by
            # subscribing, one already there is refreshed now
            try:
                subscription = await reader.subscribe(url)
            except Invalid as exc:  # a page that links to no feed
                print(f"reader: {_one_line(exc.message)}", file=sys.stderr)
                return 1
            feed_id, created = subscription.feed_id, subscription.created
            new = None
            if not created:
                [result] = await reader.refresh_ids([feed_id])
                new = result.new
            feed = await reader.feed(feed_id)
            if feed.error:
                print(f"feed {feed_id} added, but fetching it failed: {feed.error}", file=sys.stderr)
                return 1
            found = f" (found on {url})" if subscription.discovered else ""
            count = f"{new} new articles" if new is not None else f"{feed.articles} articles"
            print(f"feed {feed_id}: {'added' if created else 'already subscribed'}{found}, {count}")
            return 0

    return asyncio.run(add())


def _refresh(settings: Settings, args: argparse.Namespace) -> int:
    async def refresh() -> int:
        async with _quiet(settings) as reader:
            results = await reader.refresh()
        for r in results:
            status = f"error: {r.error}" if r.error else ("not modified" if r.not_modified else f"{r.new} new")
            print(f"{r.feed_id:>5}  {r.url}  {status}")
        return 1 if any(r.error for r in results) else 0

    return asyncio.run(refresh())


def _check(settings: Settings, args: argparse.Namespace) -> int:
    """One line: `ok`, or what is wrong (exit status 2)."""
    health = check_file(settings.db)
    if health.ok:
        print(f"{settings.db}: ok")
        return 0
    print(f"reader: {settings.db}: {_one_line('; '.join(health.problems()))}", file=sys.stderr)
    return 2


def _stats(settings: Settings, args: argparse.Namespace) -> int:

    async def stats() -> int:
        async with _quiet(settings) as reader:
            print(json.dumps(await reader.stats(), indent=2))
        return 0

    return asyncio.run(stats())


def _reclean(settings: Settings, args: argparse.Namespace) -> int:
    """One line per article: recleaned, failed (the text it had stays) or skipped.
    Exit status 1 if any failed or was skipped."""
    if not (args.ids or args.all or args.failed):
        print("reader: name the articles (IDs), or --all, or --failed", file=sys.stderr)
        return 2

    async def reclean() -> int:
        status = 0
        async with _quiet(settings) as reader:
            ids = list(args.ids) if args.ids else await reader.reclean_ids(failed=args.failed)
            if not ids:
                print("nothing to reclean: no article has a stored raw page" + (" and failed" if args.failed else ""))
            # as many at once as there are extraction processes; the lines still come in
            # the order asked, each as soon as it and those before it are done
            at_once = asyncio.Semaphore(max(1, settings.extract_processes))

            async def one(article_id: int) -> tuple[str, str | None]:
                async with at_once:
                    return await reader.reclean(article_id)

            runs = [asyncio.ensure_future(one(article_id)) for article_id in ids]
            for article_id, run in zip(ids, runs):
                outcome, error = await run
                if outcome == "cached":
                    print(f"article {article_id}: recleaned")
                else:
                    status = 1
                    print(f"article {article_id}: {outcome}: {_one_line(error or '')}")
        return status

    return asyncio.run(reclean())


# -- the library and your data: save, OPML, backup, export, import ---------------------------


def _library_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    save = sub.add_parser("save", parents=[common], help="save any link for later (queues nothing)")
    save.add_argument("url")
    save.add_argument("--title", help="a title until the page is cleaned (default: the URL)")
    opml_in = sub.add_parser("import-opml", parents=[common], help="subscribe to the feeds in an OPML file")
    opml_in.add_argument("file", type=Path)
    opml_in.add_argument("--no-refresh", action="store_true", help="subscribe only; let the refresher fetch them")
    sub.add_parser("export-opml", parents=[common], help="write your feeds as OPML to stdout")
    backup = sub.add_parser("backup", parents=[common], help="a consistent copy of the database, safe while it runs")
    backup.add_argument("path", type=Path, help="file to write (or a directory to put a dated copy in)")
    export = sub.add_parser("export", parents=[common],
                            help="feeds as OPML, saved, starred and cleaned articles as JSON")
    export.add_argument("--out", type=Path, default=Path("reader-export"),
                        help="a directory (feeds.opml + articles.json) or a FILE.json (default ./reader-export)")
    export.add_argument("--bookmarks", type=Path, metavar="FILE.html",
                        help="instead, the library as a Netscape bookmark file (what other apps import)")
    imp = sub.add_parser("import", parents=[common], help="move in: reader's export, Pocket, Instapaper, Omnivore, wallabag,"
                                                            " bookmarks, OPML; nothing is fetched, twice is harmless")
    imp.add_argument("files", type=Path, nargs="+", help="export files (any format, told by content) or directories")
    edition = sub.add_parser("edition", parents=[common],
                             help="the reading list (ready and not done with) as an EPUB book for an e-reader")
    edition.add_argument("--out", type=Path, required=True, help="the FILE.epub to write")
    edition.add_argument("--feed", help="only this feed's articles (its id)")
    edition.add_argument("--starred", action="store_true", help="only starred articles")


def _save(settings: Settings, args: argparse.Namespace) -> int:
    url = check_url(args.url)  # refused before the database is opened

    async def save() -> int:
        async with _quiet(settings) as reader:
            article, created = await reader.save(url, args.title)
        print(f"article {article.id}: {'saved' if created else 'already saved'}")
        return 0

    return asyncio.run(save())


def _import_opml(settings: Settings, args: argparse.Namespace) -> int:
    refused = _not_a_regular_file(args.file)
    if refused:
        print(f"reader: {_one_line(refused)}", file=sys.stderr)
        return 2
    try:
        data = args.file.read_bytes()
    except OSError as exc:
        print(f"reader: {args.file}: {exc.strerror or exc}", file=sys.stderr)
        return 2

    async def run() -> int:
        async with _quiet(settings) as reader:
            try:
                result = await reader.import_opml(data, str(args.file))
            except Invalid as exc:
                print(f"reader: {_one_line(exc.message)}", file=sys.stderr)
                return 1
            print(f"{args.file}: {result.summary()}")
            for url in result.skipped:
                print(f"  skipped {_one_line(url)}", file=sys.stderr)
            if result.added and not args.no_refresh:
                results = await reader.refresh_ids(result.added)
                failed = [r for r in results if r.error]
                print(f"fetched {len(results) - len(failed)} of {len(results)} new feeds")
                for r in failed:
                    print(f"  {r.url}: {r.error}", file=sys.stderr)
            return 0

    return asyncio.run(run())


def _export_opml(settings: Settings, args: argparse.Namespace) -> int:

    async def run() -> bytes:
        async with _quiet(settings) as reader:
            return await reader.export_opml()

    sys.stdout.buffer.write(asyncio.run(run()))
    sys.stdout.flush()
    return 0


def _backup(settings: Settings, args: argparse.Namespace) -> int:

    try:
        written = asyncio.run(backup(settings.db, args.path))
    except (PortabilityError, OSError, sqlite3.Error) as exc:
        print(f"reader: backup failed: {exc}", file=sys.stderr)
        return 1
    print(f"backed up {settings.db} to {written}")
    return 0


def _export(settings: Settings, args: argparse.Namespace) -> int:

    async def run() -> list[Path]:
        async with await Store.open(settings.db) as store:
            if args.bookmarks is not None:
                return [await export_bookmarks(store, args.bookmarks)]
            return await export(store, args.out)

    try:
        written = asyncio.run(run())
    except (StorageError, sqlite3.DatabaseError) as exc:
        if isinstance(exc, StorageError) and exc.kind != "damaged":
            raise
        return _salvage(settings, args, exc)
    except (PortabilityError, OSError) as exc:
        print(f"reader: export failed: {exc}", file=sys.stderr)
        return 1
    for path in written:
        print(f"wrote {path}")
    return 0


def _salvage(settings: Settings, args: argparse.Namespace, exc: Exception) -> int:
    """A damaged file: export what is still readable, row by row, and say what was lost.
    Exit status 1 if anything was."""
    print(f"reader: {settings.db} is damaged ({_one_line(str(exc))}); exporting what is still readable",
          file=sys.stderr)
    try:
        written, found = asyncio.run(salvage_export(settings.db, args.out))
    except (PortabilityError, OSError, sqlite3.Error) as error:
        print(f"reader: export failed: {_one_line(str(error))}", file=sys.stderr)
        return 1
    for path in written:
        print(f"wrote {path}")
    print(f"saved {len(found.feeds)} feeds and {len(found.articles)} articles; unreadable: {found.lost_feeds} feeds,"
          f" {found.lost_articles} articles, {found.lost_contents} cleaned texts")
    return 1 if found.lost_feeds or found.lost_articles or found.lost_contents else 0


def _import(settings: Settings, args: argparse.Namespace) -> int:
    """Each file on its own: a file that cannot be read is reported and the rest go on."""
    own: list[Path] = []  # reader's own exports (and their directories): restored exactly
    others: list[tuple[Path, bytes]] = []
    failed = False
    for path in args.files:
        if path.is_dir():
            own.append(path)
            continue
        refused = _not_a_regular_file(path)
        if refused:
            print(f"reader: import failed: {_one_line(refused)}", file=sys.stderr)
            failed = True
            continue
        try:
            data = path.read_bytes()
        except OSError as exc:
            print(f"reader: import failed: {path}: {exc.strerror or 'no such file'}"
                  .replace("No such file or directory", "no such file"), file=sys.stderr)
            failed = True
            continue
        try:
            kind = detect_format(data, str(path))
        except ImportFileError as exc:
            print(f"reader: import failed: {exc}", file=sys.stderr)
            failed = True
            continue
        if kind == "reader":
            own.append(path)
        else:
            others.append((path, data))

    def progress(done: int, total: int) -> None:
        if total >= 5_000:  # small files are done before a progress line could help
            print(f"  {done} of {total} links", file=sys.stderr, flush=True)

    async def run() -> int:
        code = 0
        async with _quiet(settings) as reader:
            for path, data in others:
                try:
                    outcome = await reader.import_file(data, str(path), progress)
                except Invalid as exc:
                    print(f"reader: import failed: {exc.message}", file=sys.stderr)
                    code = 1
                    continue
                print(f"{path} ({outcome.format}): {outcome.summary()}")
                for where, why in outcome.skipped:
                    print(f"  skipped {where}: {_one_line(why)}", file=sys.stderr)
                if outcome.skipped_not_listed:
                    print(f"  and {outcome.skipped_not_listed} more", file=sys.stderr)
                for note in outcome.notes:
                    print(f"  note: {_one_line(note)}", file=sys.stderr)
            if own:
                try:
                    counts = await import_files(reader._store, own)
                except PortabilityError as exc:
                    print(f"reader: import failed: {exc}", file=sys.stderr)
                    return 1
                print(", ".join(f"{n} {what}" for what, n in (
                    ("new feeds", counts["feeds"]), ("new articles", counts["articles"]),
                    ("cleaned texts", counts["contents"]), ("read/starred states", counts["states"]),
                    ("skipped records", counts["skipped"]))))
        return code

    code = asyncio.run(run())
    return 1 if failed else code


def _edition(settings: Settings, args: argparse.Namespace) -> int:
    out: Path = args.out
    if out.is_dir():
        raise Invalid(f"cannot write {out}: it is a directory; give a FILE.epub")
    filters = Filters(feed_id=parse_int(args.feed, "--feed"), starred=args.starred)

    async def make() -> int:
        async with _quiet(settings) as reader:
            edition = await make_edition(reader, filters)
            try:
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(edition.data)
            except OSError as exc:
                raise Invalid(f"cannot write {out}: {exc.strerror or exc}") from None
            if settings.edition_marks_read:  # only once the book is safely on disk
                await mark_read_after_download(reader, edition.included)
        count = len(edition.included)
        note = f"; {edition.left_out} more did not fit in READER_EDITION_MAX_BYTES" if edition.left_out else ""
        print(f"reader: wrote {out}: {count} article{'' if count == 1 else 's'}, {len(edition.data):,} bytes{note}",
              file=sys.stderr)
        return 0

    return asyncio.run(make())


LIBRARY_COMMANDS = {"save": _save, "import-opml": _import_opml, "export-opml": _export_opml,
                    "backup": _backup, "export": _export, "import": _import, "edition": _edition}
