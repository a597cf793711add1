"""Moving in: apply a file another app exported (parsed by reader/formats) to the store.

Links become saved articles with their tags, time added, state, star and notes; a text
that came with the export becomes the article's cleaned content at once (recorded as
imported, not as a fetch); feeds are subscribed with their folders. Nothing is queued and
nothing is fetched here: whether the new feeds are fetched is the one rule in
reader/core/library.py. The outcome is an `ImportOutcome`: new, already there, skipped
(each with its reason), which every interface shows.

The links go from the file to the database in batches, read as they are stored: memory
holds one batch, never the file's links all at once (a 2.5 MB Pocket ZIP of a million rows
took a server from 57 MB to 940 MB). The file is read once first to count its links and
to refuse it whole if it cannot be read; an import brings in at most
READER_MAX_IMPORT_LINKS links and says so when a file holds more. Imports against one
database in one process take turns (a job waiting its turn says so), and a job told to
stop ends at the next batch: what was stored stays, and the same file imported again adds
the rest without copies (links merge by normalized URL, into saved links and feeds'
articles alike: one card per link)."""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import html
import json
import logging
import time
import weakref
from array import array
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..errors import Invalid
from ..formats.importers import (
    ImportFileError,
    LinkRecord,
    ParsedImport,
    count_links,
    plan_file,
    stream_links,
)
from ..clean.sanitize import plain_text
from ..feeds.refresh import RefreshResult
from ..settings import Settings
from ..store import ImportLink, Store

BATCH = 2_000  # links per transaction: progress can be shown, and the writer lock is never held long
MAX_IMPORT_LINKS: int = Settings.max_import_links  # the setting's default, for callers that pass none
log = logging.getLogger(__name__)

TURN_POLL = 0.05  # seconds between a waiting import's looks at whether its turn has come

Progress = Callable[[int, int], None]  # (links done, links in the file)


@dataclass
class ImportOutcome:
    """What one file did to the library."""

    name: str
    format: str
    new: int = 0
    merged: int = 0  # already there (or the same link twice in the file): united
    in_feeds: int = 0  # of those, merged into an article a feed brought: one card for the link
    contents: int = 0  # texts that came with the export, ready without a fetch
    feeds_new: int = 0
    feeds_there: int = 0
    new_feed_ids: list[int] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (where, why)
    skipped_not_listed: int = 0
    notes: list[str] = field(default_factory=list)  # about the file as a whole, and rows changed
    refused_feeds: list[str] = field(default_factory=list)  # OPML xmlUrls that are not http(s), as given
    states: int = 0  # reader's own export: read, starred and reading places taken from it
    # after the import (reader/core/library.py): the new feeds fetched right away, or how
    # many were left to the background refresher
    fetched: list[RefreshResult] = field(default_factory=list)
    waiting: int = 0
    stopped: bool = False  # told to stop (reader shutting down) before the file was done
    # the articles its links are, new or merged (a link twice in the file, or in two
    # batches, may be here twice): what "queue the unread links" of its report queues.
    # Packed: a finished web import is kept for its report, and 100,000 ids are 800 kB
    # this way where a list of ints takes 3.6 MB.
    article_ids: array[int] = field(default_factory=lambda: array("q"))

    def summary(self) -> str:
        parts = []
        if self.new or self.merged or not (self.feeds_new or self.feeds_there):
            there = f" ({self.in_feeds} of them from your feeds)" if self.in_feeds else ""
            parts.append(f"{self.new} new links, {self.merged} already there{there}")
        if self.contents:
            parts.append(f"{self.contents} with their saved text")
        if self.feeds_new or self.feeds_there:
            parts.append(f"{self.feeds_new} new feeds, {self.feeds_there} already subscribed")
        parts.append(f"{len(self.skipped) + self.skipped_not_listed} skipped")
        return ", ".join(parts)


def outcome_json(outcome: ImportOutcome) -> str:
    """The report as the imports table keeps it (its article ids are kept apart, packed)."""
    report = {f.name: getattr(outcome, f.name) for f in dataclasses.fields(outcome) if f.name != "article_ids"}
    report["fetched"] = [dataclasses.asdict(r) for r in outcome.fetched]
    return json.dumps(report, ensure_ascii=False)


def outcome_from_json(text: str, article_ids: bytes | None) -> ImportOutcome:
    """An ImportOutcome as outcome_json wrote it; keys it does not know are left out (a
    report written by a later version)."""
    report = json.loads(text)
    known = {f.name for f in dataclasses.fields(ImportOutcome)} - {"article_ids"}
    values = {key: value for key, value in report.items() if key in known}
    values["skipped"] = [(where, why) for where, why in values.get("skipped", [])]
    result_fields = {f.name for f in dataclasses.fields(RefreshResult)}
    values["fetched"] = [RefreshResult(**{k: v for k, v in r.items() if k in result_fields})
                         for r in values.get("fetched", [])]
    outcome = ImportOutcome(**values)
    if article_ids:
        outcome.article_ids.frombytes(article_ids[: len(article_ids) - len(article_ids) % 8])
    return outcome


def _prepared(link: LinkRecord) -> ImportLink:
    """The store's form of a link; the text's plain version is made here (CPU, off the loop)."""
    content = None
    if link.content_html:
        text = plain_text(link.content_html)
        content = (link.content_html, text, len(text.split()))
    summary_text = link.summary or ""
    return ImportLink(
        url=link.url, key=link.key, title=link.title, tags=set(link.tags), added_at=link.added_at,
        read=link.read, starred=link.starred, author=link.author, published=link.published,
        summary=f"<p>{html.escape(summary_text)}</p>" if summary_text else "", summary_text=summary_text,
        content=content, notes=[(n.text, n.comment, n.created_at) for n in link.notes if not n.highlight],
        highlights=[(n.text, n.prefix, n.suffix, n.comment or "", n.created_at) for n in link.notes if n.highlight],
    )


def parse(data: bytes, name: str) -> ParsedImport:
    """The file told apart and checked, for a thread; its links are read later, by apply,
    in batches (plan_file). Raises ImportFileError."""
    return plan_file(data, name)


_NOT_STARTED = "reader was stopping before this import's turn came: nothing was stored; import the file again"


class _Line:
    """The imports of one database in this process, in the order they asked: the first
    one runs, the rest wait."""

    def __init__(self) -> None:
        self.waiting: collections.deque[object] = collections.deque()


_lines: weakref.WeakKeyDictionary[Store, _Line] = weakref.WeakKeyDictionary()


async def _wait_turn(store: Store, turn: object, job: ImportJob | None) -> None:
    """Returns when `turn` is first in line. A job told to stop while it waits leaves the
    line: Invalid, nothing stored."""
    line = _lines.setdefault(store, _Line())
    line.waiting.append(turn)
    try:
        while line.waiting[0] is not turn:
            if job is not None:
                job.waiting = True
                if job.stopping:
                    raise Invalid(_NOT_STARTED)
            await asyncio.sleep(TURN_POLL)
    except BaseException:
        line.waiting.remove(turn)
        raise
    finally:
        if job is not None:
            job.waiting = False


def _leave_line(store: Store, turn: object) -> None:
    line = _lines.get(store)
    if line is not None and turn in line.waiting:
        line.waiting.remove(turn)


async def apply(store: Store, parsed: ParsedImport, progress: Progress | None = None, *,
                job: ImportJob | None = None, max_links: int = MAX_IMPORT_LINKS) -> ImportOutcome:
    """Store what a parsed file holds. `progress(done, total)` is called after each batch
    (a job's own progress when none is given). One import at a time per database; a job
    told to stop ends at the next batch boundary, the outcome saying how far it got.
    Raises Invalid for a file that turns out unreadable (nothing of it is stored)."""
    if progress is None and job is not None:
        progress = job.progress
    turn = object()
    await _wait_turn(store, turn, job)
    if job is not None and job.stopping:  # told while it read the file, before anything was stored
        _leave_line(store, turn)
        raise Invalid(_NOT_STARTED)
    try:
        return await _apply(store, parsed, progress, job, max(0, max_links))
    finally:
        _leave_line(store, turn)


def _outcome_of(parsed: ParsedImport) -> ImportOutcome:
    report = parsed.report
    outcome = ImportOutcome(name=parsed.name, format=parsed.format, merged=report.merged, notes=list(report.notes))
    outcome.skipped = [(i.where, i.reason) for i in report.issues if not i.kept]
    outcome.notes += [f"{i.where}: {i.reason}" for i in report.issues if i.kept and "merged into" not in i.reason]
    outcome.skipped_not_listed = report.issues_not_listed
    outcome.refused_feeds = list(parsed.refused_feeds)
    return outcome


async def _apply(store: Store, parsed: ParsedImport, progress: Progress | None, job: ImportJob | None,
                 max_links: int) -> ImportOutcome:
    if parsed.source is None:  # parse_file's result (links in memory), or a file of feeds
        return await _apply_parsed(store, parsed, progress)
    try:
        total = await asyncio.to_thread(count_links, parsed, max_links)
    except ImportFileError as exc:
        raise Invalid(str(exc)) from None
    capped = total > max_links
    total = min(total, max_links)
    if progress is not None and total:
        progress(0, total)  # the file is read: from here on it is storing
    known = await store.link_keys() if total else {}
    loop = asyncio.get_running_loop()
    stored = {"new": 0, "merged": 0, "contents": 0, "in_feeds": 0}
    touched = array("q")

    class Stop(Exception):
        """Told to stop: ends the reading of the file at this batch boundary."""

    async def store_batch(batch: list[ImportLink], held: int) -> None:
        counts = await store.import_links(batch, parsed.format, known)
        stored["new"] += counts.new
        stored["merged"] += counts.merged - held  # highlights for a link stored: not a link of the file
        stored["contents"] += counts.contents
        touched.extend(counts.ids)
        stored["in_feeds"] += counts.in_feeds
        if progress is not None:
            progress(min(stored["new"] + stored["merged"], total), total)

    def flush(links: list[LinkRecord], held: int) -> None:  # on the reading thread, which waits while the batch is stored
        if job is not None and job.stopping:
            raise Stop
        batch = [_prepared(link) for link in links]
        asyncio.run_coroutine_threadsafe(store_batch(batch, held), loop).result()

    stopped = False
    try:
        await asyncio.to_thread(stream_links, parsed, flush, BATCH, max_links, known)
    except Stop:
        stopped = True
    except ImportFileError as exc:  # count_links read the same file without complaint: kept for safety
        raise Invalid(str(exc)) from None
    outcome = _outcome_of(parsed)
    outcome.new, outcome.contents, outcome.in_feeds = stored["new"], stored["contents"], stored["in_feeds"]
    outcome.article_ids = touched
    outcome.merged += stored["merged"]
    if capped:
        outcome.notes.append(f"the file holds more than {max_links:,} links, the most one import brings in"
                             f" (READER_MAX_IMPORT_LINKS): the first {max_links:,} came in, the rest were left out")
    if stopped:
        outcome.stopped = True
        done = min(stored["new"] + stored["merged"], total)
        log.warning("import of %s stopped (reader is stopping) after %d of %d links; importing it again"
                    " brings in the rest", parsed.name, done, total)
        outcome.notes.append(f"stopped when reader was stopping, after {done:,} of {total:,} links;"
                             " importing the same file again brings in the rest without copies")
    return outcome


async def _apply_parsed(store: Store, parsed: ParsedImport, progress: Progress | None) -> ImportOutcome:
    report = parsed.report
    outcome = _outcome_of(parsed)
    if parsed.feeds:
        results = await store.import_feeds([(f.url, f.title, f.site_url, f.folder_name) for f in parsed.feeds])
        # reader's own pausedUntil, to a feed with no pause (one already over is left out)
        await store.pause_unpaused([(feed_id, f.paused_until) for f, (feed_id, _) in zip(parsed.feeds, results)
                                    if f.paused_until is not None and f.paused_until > time.time()])
        outcome.new_feed_ids = [feed_id for feed_id, created in results if created]
        outcome.feeds_new = len(outcome.new_feed_ids)
        # subscribed before this file: a feed the file lists twice is one of its notes
        outcome.feeds_there = len(results) - outcome.feeds_new
        outcome.merged = 0  # the file's duplicate outlines were feeds, not links
    links = parsed.links
    if progress is not None and links:
        progress(0, len(links))  # the file is read: from here on it is storing
    known = await store.link_keys() if links else {}
    for start in range(0, len(links), BATCH):
        batch = await asyncio.to_thread(lambda part: [_prepared(link) for link in part], links[start:start + BATCH])
        counts = await store.import_links(batch, parsed.format, known)
        outcome.new += counts.new
        outcome.merged += counts.merged
        outcome.contents += counts.contents
        outcome.article_ids.extend(counts.ids)
        outcome.in_feeds += counts.in_feeds
        if progress is not None:
            progress(min(start + BATCH, len(links)), len(links))
    return outcome


# What the report of an import says when no process ran it to its end (killed, or the
# machine stopped): the links stored before stay, and the same file again merges.
CUT_SHORT = ("reader stopped before this import was done: the links stored until then stay;"
             " import the same file again to bring in the rest without copies")


@dataclass
class ImportJob:
    """One import started from the web form, running while its page shows how far it got.
    The running ones are in the memory of the process that runs them; each is a row of the
    imports table from its start, and its report is written there when it ends, so the
    report page, its queue button and GET /api/imports/{n} outlive a restart (a row never
    finished is one a restart cut short: `job_of_record` says so)."""

    id: int
    name: str
    started_at: float = field(default_factory=time.time)
    done: int = 0  # links stored so far
    total: int | None = None  # links in the file, once it is read
    outcome: ImportOutcome | None = None
    error: str | None = None  # the file as a whole was refused: why
    waiting: bool = False  # for the import before it to finish
    stopping: bool = False  # told to stop: it ends at the next batch boundary
    recorded: bool = False  # its end is written in the imports table

    @property
    def finished(self) -> bool:
        return self.outcome is not None or self.error is not None

    @property
    def status(self) -> str:
        """Where it is, in words, while it runs."""
        if self.waiting:
            return "waiting for the import before it"
        if self.total:
            return f"{self.done:,} of {self.total:,} links stored"
        return "reading the file"

    def progress(self, done: int, total: int) -> None:
        self.done, self.total = done, total

    def stop(self) -> None:
        """End at the next batch boundary (or leave the line, if still waiting): what was
        stored stays, and the outcome says how far it got."""
        self.stopping = True


def job_of_record(row: dict[str, Any]) -> ImportJob:
    """The job an imports row describes, for an import no process here is running: finished,
    with its report or its error, or cut short by a restart."""
    job = ImportJob(id=int(row["id"]), name=str(row["name"]), started_at=float(row["started_at"]))
    outcome, error = row.get("outcome"), row.get("error")
    if isinstance(outcome, str):
        ids = row.get("article_ids")
        job.outcome = outcome_from_json(outcome, ids if isinstance(ids, bytes) else None)
        job.done = job.total = job.outcome.new + job.outcome.merged
    elif isinstance(error, str):
        job.error = error
    else:
        job.error = CUT_SHORT
    return job


def stop_imports(jobs: Iterable[ImportJob]) -> None:
    """Shutdown: tell every import still running or waiting to stop at its next batch."""
    for job in jobs:
        if not job.finished:
            job.stop()


__all__ = ["CUT_SHORT", "ImportFileError", "ImportJob", "ImportOutcome", "Progress", "apply", "job_of_record",
           "outcome_from_json", "outcome_json", "parse", "stop_imports"]
