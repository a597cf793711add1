"""Storage: every SQL statement in reader lives in this package.

The database file is the only state. The core (reader/core/), the jobs and the commands
call the named methods of `Store` and never build SQL themselves. By entity:

    schema.sql the current schema, commented: every table, index and trigger, and why
    schema     making a new file from schema.sql; version 1 and the numbered migrations
               that bring an older file up to date
    base       two connections, write transactions, the SQL fragments shared below
    feeds      subscriptions and what a refresh stores (a story another feed brought
               already is a source of that article, not a second one)
    articles   browse (and the reading list), search, one article, read/star (one or in
               bulk, and its undo), unread counts, saved links
    line       the queue (filled only by taps), claims, storing a result
    ledger     live workers and extraction runs: wait estimates and stats
    media      an article's stored images and its raw page (for a reclean)
    portable   export and import of the library
    library    tags, notes, feed folders, links imported from other apps
    highlights passages marked in a text, placed again when the text changes
    devices    reading positions, actions sent with a device's id, the list saved offline
    sync       app passwords and their tokens, streams and items as native apps read them
    rules      rules, the articles they hid, an apply's undo, paused feeds
    rows       the TypedDicts of the rows reads return (those typed so far)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .articles import ArticleStore, ListFilter
from .base import RUN_KINDS, STATES, Run, StoreBase, TooSlow, _as_storage_error
from .devices import DeviceStore
from .feeds import FeedStore
from .ledger import LedgerStore
from .highlights import HighlightStore
from .library import ImportLink, LibraryStore, LinkCounts
from .line import LineStore
from .media import MediaStore
from .portable import PortableStore
from .rules import RuleStore
from .schema import MIGRATIONS
from .sync import SyncStore
from .search import MAX_SEARCH_CHARS, MAX_SEARCH_TERMS, fts_query, fts_terms

__all__ = ["RUN_KINDS", "MAX_SEARCH_CHARS", "MAX_SEARCH_TERMS", "MIGRATIONS", "STATES", "ImportLink", "LinkCounts",
           "ListFilter", "Run",
           "Store", "TooSlow", "fts_query", "fts_terms"]


class Store(FeedStore, ArticleStore, LineStore, LedgerStore, MediaStore, PortableStore, LibraryStore, DeviceStore,
            SyncStore, HighlightStore, RuleStore, StoreBase):
    """One database file: `await Store.open(path)`, then the methods of each entity."""

    @classmethod
    async def open(cls, path: str | Path) -> "Store":
        path = Path(path)
        with _as_storage_error():  # a file that is not a database: a sentence, not a traceback
            read, write = await cls._connect(path)
        return cls(path, read, write)

    async def __aenter__(self) -> "Store":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()
