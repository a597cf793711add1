"""Your library and your data: `save` a link, `import` anything reader reads, `export`,
`backup`, and an `edition` of the reading list as EPUB."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from ..core import library, parse_int
from ..core.editions import Filters, make_edition, mark_read_after_download
from ..errors import Invalid, StorageError
from ..settings import Settings
from ..urls import check_url
from .base import Command, one_line, quiet
from .feeds import print_fetched


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    save = sub.add_parser("save", parents=[common], help="save any link for later (queues nothing)")
    save.add_argument("url")
    save.add_argument("--title", help="a title until the page is cleaned (default: the URL)")
    imp = sub.add_parser("import", parents=[common],
                         help="move in: reader's export, Pocket, Instapaper, Omnivore, wallabag, Pinboard, Delicious,"
                              " bookmarks (HTML, Chrome's and Firefox's JSON), OPML;"
                              f" links are not fetched, new feeds are (up to {library.IMPORT_FETCH_LIMIT}),"
                              " twice is harmless")
    imp.add_argument("files", type=Path, nargs="+", help="export files (any format, told by content) or directories")
    imp.add_argument("--no-refresh", action="store_true", help="fetch no feed either; let the refresher do it")
    export = sub.add_parser("export", parents=[common],
                            help="feeds as OPML, saved, starred and cleaned articles as JSON")
    export.add_argument("--out", type=Path, default=Path("reader-export"),
                        help="a directory (feeds.opml + articles.json) or a FILE.json (default ./reader-export)")
    which = export.add_mutually_exclusive_group()
    which.add_argument("--bookmarks", type=Path, metavar="FILE.html",
                       help="instead, the library as a Netscape bookmark file (what other apps import)")
    which.add_argument("--highlights", type=Path, metavar="DIR",
                       help="instead, every highlight as Markdown, a file per article (Obsidian and other notes"
                            " apps), into DIR, or into a ZIP if DIR ends in .zip")
    which.add_argument("--readwise", type=Path, metavar="FILE.csv",
                       help="instead, every highlight as Readwise's CSV")
    backup = sub.add_parser("backup", parents=[common], help="a consistent copy of the database, safe while it runs")
    backup.add_argument("path", type=Path, help="file to write (or a directory to put a dated copy in)")
    edition = sub.add_parser("edition", parents=[common],
                             help="the reading list (ready and not done with) as an EPUB book for an e-reader")
    edition.add_argument("--out", type=Path, required=True, help="the FILE.epub to write")
    edition.add_argument("--feed", help="only this feed's articles (its id)")
    edition.add_argument("--starred", action="store_true", help="only starred articles")


def save(settings: Settings, args: argparse.Namespace) -> int:
    url = check_url(args.url)  # refused before the database is opened

    async def run() -> int:
        async with quiet(settings) as reader:
            article, created = await reader.save(url, args.title)
        print(f"article {article.id}: {'saved' if created else 'already saved'}")
        return 0

    return asyncio.run(run())


def import_(settings: Settings, args: argparse.Namespace) -> int:
    """Each file on its own: a file that cannot be read is reported and the rest go on."""
    own: list[Path] = []  # reader's own exports (and their directories): restored together
    others: list[tuple[Path, bytes]] = []
    failed = False
    for path in args.files:
        if path.is_dir():
            own.append(path)
            continue
        try:
            data = library.read_file(path)
            kind = library.format_of(data, str(path))
        except Invalid as exc:
            print(f"reader: import failed: {one_line(exc.message)}", file=sys.stderr)
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
        async with quiet(settings) as reader:
            for path, data in others:
                try:
                    outcome = await reader.import_data(data, str(path), progress=progress, fetch=not args.no_refresh)
                except Invalid as exc:
                    print(f"reader: import failed: {exc.message}", file=sys.stderr)
                    code = 1
                    continue
                print(f"{path} ({outcome.format}): {outcome.summary()}")
                for where, why in outcome.skipped:
                    print(f"  skipped {where}: {one_line(why)}", file=sys.stderr)
                if outcome.skipped_not_listed:
                    print(f"  and {outcome.skipped_not_listed} more", file=sys.stderr)
                for note in outcome.notes:
                    print(f"  note: {one_line(note)}", file=sys.stderr)
                if not args.no_refresh:
                    print_fetched(outcome)
            for path in own:
                try:
                    outcome = await reader.import_path(path, fetch=not args.no_refresh)
                except Invalid as exc:
                    print(f"reader: import failed: {exc.message}", file=sys.stderr)
                    return 1
                print(", ".join(f"{n} {what}" for what, n in (
                    ("new feeds", outcome.feeds_new), ("new articles", outcome.new),
                    ("cleaned texts", outcome.contents), ("read/starred states", outcome.states),
                    ("skipped records", len(outcome.skipped)))))
                if not args.no_refresh:
                    print_fetched(outcome)
        return code

    code = asyncio.run(run())
    return 1 if failed else code


def export(settings: Settings, args: argparse.Namespace) -> int:
    try:
        if args.highlights is not None or args.readwise is not None:
            written = asyncio.run(library.export_highlights(settings, args.readwise or args.highlights,
                                                            readwise=args.readwise is not None))
        else:
            written = asyncio.run(library.export(settings, args.bookmarks if args.bookmarks is not None else args.out,
                                                 bookmarks=args.bookmarks is not None))
    except StorageError as exc:
        if exc.kind != "damaged":
            raise
        return _salvage(settings, args, exc)
    except library.PortabilityError as exc:
        print(f"reader: export failed: {exc}", file=sys.stderr)
        return 1
    for path in written:
        print(f"wrote {path}")
    return 0


def _salvage(settings: Settings, args: argparse.Namespace, exc: Exception) -> int:
    """A damaged file: export what is still readable, row by row, and say what was lost.
    Exit status 1 if anything was."""
    print(f"reader: {settings.db} is damaged ({one_line(str(exc))}); exporting what is still readable",
          file=sys.stderr)
    try:
        written, found = asyncio.run(library.salvage(settings, args.out))
    except library.PortabilityError as error:
        print(f"reader: export failed: {one_line(str(error))}", file=sys.stderr)
        return 1
    for path in written:
        print(f"wrote {path}")
    print(f"saved {len(found.feeds)} feeds and {len(found.articles)} articles; unreadable: {found.lost_feeds} feeds,"
          f" {found.lost_articles} articles, {found.lost_contents} cleaned texts")
    return 1 if found.lost_feeds or found.lost_articles or found.lost_contents else 0


def backup(settings: Settings, args: argparse.Namespace) -> int:
    try:
        written = asyncio.run(library.backup(settings, args.path))
    except library.PortabilityError as exc:
        print(f"reader: backup failed: {exc}", file=sys.stderr)
        return 1
    print(f"backed up {settings.db} to {written}")
    return 0


def edition(settings: Settings, args: argparse.Namespace) -> int:
    out: Path = args.out
    if out.is_dir():
        raise Invalid(f"cannot write {out}: it is a directory; give a FILE.epub")
    filters = Filters(feed_id=parse_int(args.feed, "--feed"), starred=args.starred)

    async def make() -> int:
        async with quiet(settings) as reader:
            book = await make_edition(reader, filters)
            try:
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(book.data)
            except OSError as exc:
                raise Invalid(f"cannot write {out}: {exc.strerror or exc}") from None
            if settings.edition_marks_read:  # only once the book is safely on disk
                await mark_read_after_download(reader, book.included)
        count = len(book.included)
        note = f"; {book.left_out} more did not fit in READER_EDITION_MAX_BYTES" if book.left_out else ""
        print(f"reader: wrote {out}: {count} article{'' if count == 1 else 's'}, {len(book.data):,} bytes{note}",
              file=sys.stderr)
        return 0

    return asyncio.run(make())


COMMANDS: dict[str, Command] = {"save": save, "import": import_, "export": export, "backup": backup,
                                "edition": edition}
