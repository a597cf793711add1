"""Moving in: apply a file another app exported (parsed by reader/formats) to the store.

Links become saved articles with their tags, time added, state, star and notes; a text
that came with the export becomes the article's cleaned content at once (recorded as
imported, not as a fetch); feeds are subscribed with their folders. Nothing is queued and
nothing is fetched here: whether the new feeds are fetched is the one rule in
reader/core/library.py. The outcome is an `ImportOutcome`: new, already there, skipped
(each with its reason), which every interface shows."""

from __future__ import annotations

import asyncio
import html
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ..formats.importers import ImportFileError, LinkRecord, ParsedImport, normalize_url, parse_file
from ..clean.sanitize import plain_text
from ..feeds.refresh import RefreshResult
from ..store import ImportLink, Store

BATCH = 2_000  # links per transaction: progress can be shown, and the writer lock is never held long

Progress = Callable[[int, int], None]  # (links done, links in the file)


@dataclass
class ImportOutcome:
    """What one file did to the library."""

    name: str
    format: str
    new: int = 0
    merged: int = 0  # already there (or the same link twice in the file): united
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

    def summary(self) -> str:
        parts = []
        if self.new or self.merged or not (self.feeds_new or self.feeds_there):
            parts.append(f"{self.new} new links, {self.merged} already there")
        if self.contents:
            parts.append(f"{self.contents} with their saved text")
        if self.feeds_new or self.feeds_there:
            parts.append(f"{self.feeds_new} new feeds, {self.feeds_there} already subscribed")
        parts.append(f"{len(self.skipped) + self.skipped_not_listed} skipped")
        return ", ".join(parts)


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
        content=content, notes=[(n.text, n.comment, n.created_at) for n in link.notes],
    )


def parse(data: bytes, name: str) -> ParsedImport:
    """parse_file, for a thread. Raises ImportFileError."""
    return parse_file(data, name)


async def apply(store: Store, parsed: ParsedImport, progress: Progress | None = None) -> ImportOutcome:
    """Store what a parsed file holds. `progress(done, total)` is called after each batch."""
    report = parsed.report
    outcome = ImportOutcome(name=parsed.name, format=parsed.format, merged=report.merged,
                            notes=list(report.notes))
    outcome.skipped = [(i.where, i.reason) for i in report.issues if not i.kept]
    outcome.notes += [f"{i.where}: {i.reason}" for i in report.issues if i.kept and "merged into" not in i.reason]
    outcome.skipped_not_listed = report.issues_not_listed
    outcome.refused_feeds = list(parsed.refused_feeds)
    if parsed.feeds:
        results = await store.import_feeds([(f.url, f.title, f.site_url, f.folder_name) for f in parsed.feeds])
        outcome.new_feed_ids = [feed_id for feed_id, created in results if created]
        outcome.feeds_new = len(outcome.new_feed_ids)
        # subscribed before this file: a feed the file lists twice is one of its notes
        outcome.feeds_there = len(results) - outcome.feeds_new
        outcome.merged = 0  # the file's duplicate outlines were feeds, not links
    links = parsed.links
    if progress is not None and links:
        progress(0, len(links))  # the file is read: from here on it is storing
    known = await store.saved_link_keys(normalize_url) if links else {}
    for start in range(0, len(links), BATCH):
        batch = await asyncio.to_thread(lambda part: [_prepared(link) for link in part], links[start:start + BATCH])
        counts = await store.import_links(batch, parsed.format, known)
        outcome.new += counts.new
        outcome.merged += counts.merged
        outcome.contents += counts.contents
        if progress is not None:
            progress(min(start + BATCH, len(links)), len(links))
    return outcome


@dataclass
class ImportJob:
    """One import started from the web form, running while its page shows how far it got.
    Kept in memory by the process that runs it: an import is seconds, and one cut short
    by a restart is finished by importing the file again (which merges)."""

    id: int
    name: str
    started_at: float = field(default_factory=time.time)
    done: int = 0  # links stored so far
    total: int | None = None  # links in the file, once it is read
    outcome: ImportOutcome | None = None
    error: str | None = None  # the file as a whole was refused: why

    @property
    def finished(self) -> bool:
        return self.outcome is not None or self.error is not None

    def progress(self, done: int, total: int) -> None:
        self.done, self.total = done, total


__all__ = ["ImportFileError", "ImportJob", "ImportOutcome", "Progress", "apply", "parse"]
