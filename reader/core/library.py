"""The library as files: the one way anything comes in, the ways it goes out, and what can
be done to the database file without running the app.

In: `import_data` (one file's bytes: an OPML list, another app's export, reader's own
export, told apart by content) and `import_path` (a file, or a directory of reader's own
export). The web form, `reader import` and `reader import-opml` all come through here
(the Reader's `import_data` and `import_path` pass it the refresh), and so does every
interface to come.

The one rule for fetching after an import, whichever interface asked for it:

    The feeds an import subscribes to anew are fetched right after it, as part of the
    import, when there are at most IMPORT_FETCH_LIMIT (20) of them: a person who moves a
    few subscriptions in sees their headlines at once. More than that would keep them
    waiting for minutes, so all of them are left to the background refresher, which
    takes feeds never fetched on its next round (`reader refresh`, or "Refresh all now",
    fetches them at once). Links are never fetched or queued: that takes a tap. The
    command line's `--no-refresh` is the one way to opt out.

Out: `export_opml` (the feeds with their folders), and, taking Settings because they must
work when the app cannot be opened (a damaged or foreign file): `check`, `backup`,
`export` and `salvage`. `clean_file` cleans a saved page as the workers do, with no
database at all.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from ..clean import CleanedPage, pipeline
from ..errors import Invalid, StorageError
from ..feeds.refresh import RefreshResult
from ..formats.importers import FeedRecord, ImportFileError, ParsedImport, detect_format
from ..formats.opml import build_opml, parse_opml
from ..settings import Settings
from ..store import Store
from ..store.check import Health, check_file
from ..store.salvage import Salvage
from . import exports, highlights
from .exports import PortabilityError, folder_path
from .imports import MAX_IMPORT_LINKS, ImportJob, ImportOutcome, Progress, apply, parse

# More new feeds than this in one import are left to the background refresher.
IMPORT_FETCH_LIMIT = 20

# Fetch these feeds now (the Reader's refresh_ids): what the rule calls.
Fetch = Callable[[Sequence[int]], Awaitable[Sequence[RefreshResult]]]


async def fetch_new_feeds(outcome: ImportOutcome, fetch: Fetch | None) -> None:
    """The one rule (see the module's docstring), applied to an import just stored:
    `fetch` None is the explicit opt-out."""
    new = outcome.new_feed_ids
    if not new:
        return
    if fetch is None or len(new) > IMPORT_FETCH_LIMIT:
        outcome.waiting = len(new)
        return
    outcome.fetched = list(await fetch(new))


# -- in -----------------------------------------------------------------------------------


async def import_data(store: Store, data: bytes, name: str, *, fetch: Fetch | None,
                      progress: Progress | None = None, opml_only: bool = False,
                      job: ImportJob | None = None, max_links: int = MAX_IMPORT_LINKS) -> ImportOutcome:
    """Import one file's bytes, any format reader reads (`opml_only`: it must be OPML, and
    anything else is refused in the OPML reader's words), then apply the rule for its new
    feeds. At most `max_links` links come in (READER_MAX_IMPORT_LINKS), one import at a
    time; a `job` told to stop ends at a batch boundary. Raises Invalid for a file that
    cannot be imported at all."""
    try:
        if opml_only:
            parsed = await asyncio.to_thread(_parse_opml, data, name)
        else:
            parsed = await asyncio.to_thread(parse, data, name)
        if parsed.native is not None:
            outcome = await exports.import_export_data(store, data, name)
        else:
            outcome = await apply(store, parsed, progress, job=job, max_links=max_links)
    except (ImportFileError, PortabilityError) as exc:
        raise Invalid(str(exc)) from None
    await fetch_new_feeds(outcome, fetch)
    return outcome


def _parse_opml(data: bytes, name: str) -> ParsedImport:
    parsed = ParsedImport(format="opml", name=name)
    parsed.feeds = parse_opml(data, name, parsed.report, parsed.refused_feeds)
    return parsed


async def import_path(store: Store, path: Path, *, fetch: Fetch | None,
                      progress: Progress | None = None, max_links: int = MAX_IMPORT_LINKS) -> ImportOutcome:
    """Import a file, or a directory holding reader's own export (feeds.opml and
    articles.json, read and checked before anything is written), as `import_data` does.
    Raises Invalid, naming the path, for one that cannot be read or imported."""
    if path.is_dir():
        try:
            outcome = await exports.import_files(store, [path])
        except PortabilityError as exc:
            raise Invalid(str(exc)) from None
        await fetch_new_feeds(outcome, fetch)
        return outcome
    return await import_data(store, read_file(path), str(path), fetch=fetch, progress=progress,
                             max_links=max_links)


def read_file(path: Path) -> bytes:
    """A file named to be read whole; Invalid, naming it, when it cannot be."""
    refused = not_a_regular_file(path)
    if refused:
        raise Invalid(refused)
    try:
        return path.read_bytes()
    except OSError as exc:
        reason = exc.strerror or "no such file"
        raise Invalid(f"{path}: {reason.replace('No such file or directory', 'no such file')}") from None


def not_a_regular_file(path: Path) -> str | None:
    """Why a file named to be read whole is refused before it is opened: a pipe blocks
    the open until someone writes to it, and a device (/dev/zero) never ends."""
    if path.exists() and not path.is_file() and not path.is_dir():
        return f"{path}: not a regular file (a pipe, a socket or a device): give the file itself"
    return None


def format_of(data: bytes, name: str) -> str:
    """The format key of a file (reader/formats/importers FORMATS); Invalid for one reader
    does not import."""
    try:
        return detect_format(data, name)
    except ImportFileError as exc:
        raise Invalid(str(exc)) from None


async def export_opml(store: Store) -> bytes:
    """Every feed, inside outlines for its folder, a paused one with when its pause ends."""
    return build_opml(FeedRecord(url=f["url"], title=f["title"], site_url=f["site_url"],
                                 folder=folder_path(f["folder"]), paused_until=f["paused_until"])
                      for f in await store.list_feeds(counts=False))


# -- the database file, without the app -----------------------------------------------------


def check(settings: Settings) -> Health:
    """Is the database a reader database, intact, writable, with room on its disk? Read
    only: it works on a file the app would refuse to open."""
    return check_file(settings.db)


async def backup(settings: Settings, dest: Path) -> Path:
    """A consistent copy of the database (safe while the app runs) at `dest`, a file or a
    directory to put a dated copy in. Raises PortabilityError, saying why."""
    try:
        return await exports.backup(settings.db, dest)
    except (OSError, sqlite3.Error) as exc:
        raise PortabilityError(str(exc)) from exc


async def export(settings: Settings, out: Path, *, bookmarks: bool = False) -> list[Path]:
    """Write reader's export to `out` (a directory, or a FILE.json), or the library as a
    bookmark file; the files written. Opens only the store, so the app's processes and
    client are not started for it. A damaged file raises StorageError (kind "damaged"):
    then `salvage` saves what is still readable. Other failures are PortabilityError."""
    try:
        async with await Store.open(settings.db) as store:
            if bookmarks:
                return [await exports.export_bookmarks(store, out)]
            return await exports.export(store, out)
    except sqlite3.DatabaseError as exc:
        raise StorageError(str(exc), "damaged") from exc
    except OSError as exc:
        raise PortabilityError(str(exc)) from exc


async def export_highlights(settings: Settings, out: Path, *, readwise: bool = False) -> list[Path]:
    """Every highlight as Markdown, one file per article, into the directory `out` (or a
    ZIP of them if `out` ends in .zip), or with `readwise` as Readwise's CSV at `out`; the
    files written. The links back use READER_PUBLIC_URL, else the address `reader serve`
    listens on. Raises PortabilityError."""
    base = settings.public_url or f"http://{settings.host}:{settings.port}"
    try:
        async with await Store.open(settings.db) as store:
            rows = await store.every_highlight()
            tags = await store.tags_of(sorted({r["article_id"] for r in rows}))
        if readwise:
            out.write_text(highlights.readwise_csv(rows, tags), encoding="utf-8", newline="")
            return [out]
        files = highlights.markdown_files(rows, tags, base.rstrip("/"))
        if out.suffix.lower() == ".zip":
            out.write_bytes(highlights.markdown_zip(files))
            return [out]
        out.mkdir(parents=True, exist_ok=True)
        written = []
        for name, text in files.items():
            (out / name).write_text(text, encoding="utf-8")
            written.append(out / name)
        return written
    except sqlite3.DatabaseError as exc:
        raise StorageError(str(exc), "damaged") from exc
    except OSError as exc:
        raise PortabilityError(str(exc)) from exc


async def salvage(settings: Settings, out: Path) -> tuple[list[Path], Salvage]:
    """The export of a damaged file: what rows can still be read, one at a time, and
    counts of what was lost. Raises PortabilityError."""
    try:
        return await exports.salvage_export(settings.db, out)
    except (OSError, sqlite3.Error) as exc:
        raise PortabilityError(str(exc)) from exc


def clean_file(path: str | Path, url: str | None = None) -> CleanedPage:
    """A saved HTML file cleaned exactly as the workers clean a page (no database)."""
    return pipeline.clean_file(path, url)


def as_json_line(path: str, result: CleanedPage | None, error: str | None = None) -> str:
    """One line of `reader clean --json`: the file and its result, or why it failed."""
    return pipeline.as_json_line(path, result, error)


__all__ = [
    "IMPORT_FETCH_LIMIT", "Fetch", "Health", "ImportOutcome", "PortabilityError",
    "Progress", "Salvage", "as_json_line", "backup", "check", "clean_file", "export", "export_highlights",
    "export_opml",
    "fetch_new_feeds", "format_of", "import_data", "import_path", "not_a_regular_file", "read_file",
    "salvage",
]
