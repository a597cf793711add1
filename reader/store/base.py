"""The Store's plumbing: two connections, reads and write transactions, and the SQL
fragments the entity modules share.

Connections per Store, all in autocommit mode:

* *read* connections, a small pool (READ_CONNECTIONS at most, opened as needed): each
  runs single statements and fetches every row in the same call (`execute_fetchall`),
  so no cursor is ever left half-read across an `await`. One aiosqlite connection runs
  one statement at a time, so with a single shared one a slow search held up every
  other read (/api/stats waited 23.7 s behind an 800-term query); WAL lets several
  readers run at once, each on its own connection;
* one plain sqlite3 connection on the event loop's own thread, opened read-only with no
  busy wait, for the one statement that opens an article's page (`_read_here`): the
  trip to a read connection's thread and back, not the statement, was most of what
  opening a ready article cost under load. Anything that keeps it from answering at
  once (SQLite busy, an error) sends the read through the pool instead;
* the *write* connection runs every state change inside `BEGIN IMMEDIATE ... COMMIT`,
  one task at a time (`self._write_lock`). Tasks that shared one aiosqlite connection
  would share its transaction: a "win" by one task could be rolled back by another.
  The asyncio lock only serialises use of that one connection object inside this
  process; who may extract an article is decided by the claim row, which every
  process sees.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiosqlite

from ..errors import StorageError, Unavailable, storage_error
from .check import read_only_uri, writable
from .schema import MIGRATIONS, check_schema, migrate

STATES = ("new", "queued", "cleaning", "ready", "failed")
RUN_KINDS = ("fetch", "reclean", "browser")

# The state of an article, derived (never stored) so it cannot drift from the rows
# that define it. Needs the aliases a, q, cl, c and the :now parameter.
_STATE = """
CASE
    WHEN c.article_id IS NOT NULL THEN 'ready'
    WHEN cl.expires_at > :now THEN 'cleaning'
    WHEN q.seq IS NOT NULL THEN 'queued'
    WHEN a.error IS NOT NULL THEN 'failed'
    ELSE 'new'
END
"""

# An article's place in the line, read in the same statement as its state: read apart,
# a take committed between the two made a queued article's position None (a 500). The
# line is numbered once per statement (the CTE below, materialized on first use) and
# looked up only for the queued articles among the rows.
_LINE = """
line AS MATERIALIZED (
    SELECT q.article_id, row_number() OVER (ORDER BY q.due_at, q.seq) AS position FROM queue q
    WHERE NOT EXISTS (SELECT 1 FROM claims cl WHERE cl.article_id = q.article_id AND cl.expires_at > :now)
)
"""
_POSITION = f"""
CASE WHEN ({_STATE}) = 'queued' THEN (SELECT line.position FROM line WHERE line.article_id = a.id) END
"""
# For one article, counting those ahead of it is cheaper than numbering the whole line.
_POSITION_OF_ONE = f"""
CASE WHEN ({_STATE}) = 'queued' THEN (
    SELECT count(*) FROM queue q2
    WHERE (q2.due_at, q2.seq) <= (q.due_at, q.seq)
    AND NOT EXISTS (SELECT 1 FROM claims cl2 WHERE cl2.article_id = q2.article_id AND cl2.expires_at > :now)
) END
"""

# A glance (GLANCED, below) is not shown as done: the article was never on the list, and
# nobody finished it; its "done" button makes it done for real.
_SHOWN_DONE = "CASE WHEN a.tapped_at IS NULL AND a.done_at = a.read_at THEN NULL ELSE a.done_at END"

# A cleaned article's words, from the index that holds them beside its id (schema v14):
# c.words walks the row's overflow pages, html and text, to get there.
_WORDS = "(SELECT w.words FROM contents w INDEXED BY contents_words WHERE w.article_id = a.id)"

# The names of the other feeds that carry the story (schema v18), a JSON array: one seek in
# sources_by_article per card, and an empty array for nearly all of them.
# How many highlights the article has (a list's rows say so): one count in the
# highlights_by_article index per card, 0 for nearly all of them.
_HIGHLIGHTS = "(SELECT count(*) FROM highlights h WHERE h.article_id = a.id)"
_ALSO_IN = """(SELECT json_group_array(coalesce(nullif(sf.title, ''), sf.url))
    FROM sources s JOIN feeds sf ON sf.id = s.feed_id WHERE s.article_id = a.id)"""

_ARTICLE_BASE_COLUMNS = f"""
    a.id, a.feed_id, a.guid, a.url, a.title, a.summary, a.author, a.published, a.sort_at,
    a.added_at, a.error, a.failed_at, a.read_at, a.starred_at, a.summary_text,
    coalesce(f.title, a.source) AS feed_title, q.seq AS queue_seq, q.due_at, q.lane,
    a.read_position, a.read_position_at, {_SHOWN_DONE} AS done_at, {_WORDS} AS words, c.partial,
    {_STATE} AS state, {_ALSO_IN} AS also_in, {_HIGHLIGHTS} AS highlights
"""
# Statements selecting these columns start with `WITH {_LINE}`.

# The reading list's rule, on the ready articles: not done. Read is another fact (opening
# marks it, as in a feed reader, and so does a bulk read); done is reaching the end
# (records.FINISHED) or saying so. Written as the articles_to_read index's condition.
NOT_DONE = "a.done_at IS NULL"
# An article nobody tapped joins the reading list only while it is being read: opening it
# (from the headlines, the direct lane cleaning it) is done with it at that moment, so a
# glance at a headline does not leave it on the list; a place part-way in brings it back
# (started, in progress) and reaching the end is done again, for good. Such a glance is
# told by its done_at being the read_at the same open wrote. A tapped article is never
# done by an open: it stays until it is read to the end or said done.
GLANCE_DONE = ("done_at = CASE WHEN read_at IS NULL AND tapped_at IS NULL AND done_at IS NULL"
               " AND read_position IS NULL THEN :now ELSE done_at END")
GLANCED = "(tapped_at IS NULL AND done_at = read_at)"
_ARTICLE_COLUMNS = f"{_ARTICLE_BASE_COLUMNS}, {_POSITION} AS position"

# Shown in the lists, search and counts: not hidden by a rule (store/rules.py), and not an
# article of a feed paused until after :now (the pause ends by itself, with no write). An
# article a person tapped or opened is shown whatever its feed or a rule says: it is the
# reading list's (whose length the triggers count), and a person's act wins.
# Needs the alias a and the :now parameter.
PAUSED = "SELECT id FROM feeds WHERE paused_until > :now"
SHOWN = f"""(a.tapped_at IS NOT NULL OR a.tap_order IS NOT NULL
    OR (a.hidden_by IS NULL AND coalesce(a.feed_id, 0) NOT IN ({PAUSED})))"""
_ONE_ARTICLE_COLUMNS = f"{_ARTICLE_BASE_COLUMNS}, {_POSITION_OF_ONE} AS position"

_ARTICLE_LEFT_JOINS = """
    LEFT JOIN feeds f ON f.id = a.feed_id
    LEFT JOIN queue q ON q.article_id = a.id
    LEFT JOIN claims cl ON cl.article_id = a.id
    LEFT JOIN contents c ON c.article_id = a.id
"""
_ARTICLE_JOINS = "articles a" + _ARTICLE_LEFT_JOINS


# Which of the articles with one url_key a saved or imported link is, when there are several
# (two feeds carrying one story): a ready one first, so a link whose text is there is
# never fetched again, then the oldest. Needs the alias a.
FIRST_COPY = "EXISTS (SELECT 1 FROM contents c WHERE c.article_id = a.id) DESC, a.id"


# The workers' service order over queue rows q that nobody is cleaning.
_SERVICE_ORDER = "ORDER BY q.due_at, q.seq"

_WAITING = "NOT EXISTS (SELECT 1 FROM claims cl WHERE cl.article_id = q.article_id AND cl.expires_at > :now)"


@dataclass(frozen=True)
class Run:
    """A claim won: this run may extract the article until expires_at (renewable)."""

    id: int
    article_id: int
    url: str
    lane: str
    # what the run cleans: a fetch of the page, a reclean of the stored raw page, or a
    # page the person's browser sent (`RUN_KINDS`)
    kind: str = "fetch"


Params = dict[str, Any] | Sequence[Any]


def _dicts(rows: Iterable[sqlite3.Row]) -> list[dict[str, Any]]:
    """Rows as dicts, their column names read once: dict() of each row looks every name up
    again (a list page's 51 rows of 30 columns took 0.4 ms that way, 0.1 ms this way). A
    statement naming a column twice keeps the first, as dict(row) does."""
    rows = list(rows)
    if not rows:
        return []
    names = rows[0].keys()
    if len(set(names)) != len(names):
        return [dict(r) for r in rows]
    return [dict(zip(names, r)) for r in rows]


async def rows_of(db: aiosqlite.Connection, sql: str, params: Params = ()) -> list[sqlite3.Row]:
    """Every row of one statement, fetched in the same call (no cursor left half-read)."""
    return list(await db.execute_fetchall(sql, params))


async def _configure(conn: aiosqlite.Connection) -> None:
    conn.row_factory = sqlite3.Row
    await conn.execute("PRAGMA busy_timeout = 30000")
    await conn.execute("PRAGMA foreign_keys = ON")
    await conn.execute("PRAGMA synchronous = NORMAL")


async def open_connection(target: str | Path, *, configure: bool = True, uri: bool = False) -> aiosqlite.Connection:
    """One aiosqlite connection, opened (and configured) all the way or not at all.

    aiosqlite opens on a thread of its own. A task cancelled half-way (shutdown right after
    start, a request that went away while its read connection opened) would leave that
    thread running with nobody to close it: it waits on its queue forever, or finishes the
    open after the loop is gone and dies with "Event loop is closed". So the opening runs
    shielded, and a cancelled opener waits for it to end, closes what it opened, then
    passes the cancellation on."""

    async def opened() -> aiosqlite.Connection:
        conn = await aiosqlite.connect(target, uri=uri, isolation_level=None)
        try:
            if configure:
                await _configure(conn)
        except BaseException:
            await conn.close()
            raise
        return conn

    opening = asyncio.ensure_future(opened())
    try:
        return await asyncio.shield(opening)
    except asyncio.CancelledError:
        while not opening.done():  # a few milliseconds: an open and three pragmas
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(opening)
        if not opening.cancelled() and opening.exception() is None:
            await asyncio.shield(opening.result().close())
        raise

# Read connections a Store opens at most: enough that one slow read never holds up the
# pages, few enough that a burst of requests cannot open a thread per request.
READ_CONNECTIONS = 4


# Items one refresh takes from one feed, newest first: a feed that rotates its guids
# once added 100,000 rows (+28 MB) per refresh.
FEED_ITEMS = 200
RAW_PAGES_BYTES = 200_000_000


class TooSlow(Unavailable):
    """A read went over its time budget and was interrupted."""


class StoreBase:
    def __init__(self, path: Path, read: aiosqlite.Connection, write: aiosqlite.Connection) -> None:
        self.path = path
        self._read = read
        self._write = write
        self._write_lock = asyncio.Lock()
        self._read_only = read is write
        self._idle: list[aiosqlite.Connection] = [read]
        self._readers: list[aiosqlite.Connection] = [read]
        self._read_slots = asyncio.Semaphore(READ_CONNECTIONS)
        self._here: sqlite3.Connection | None = None  # see _read_here
        # see ArticleStore._highlights_at
        self._kept_highlights: OrderedDict[int, tuple[int, tuple[dict[str, Any], ...]]] = OrderedDict()
        # Items a refresh takes from one feed at most; the app sets it from READER_FEED_ITEMS.
        self.feed_items = FEED_ITEMS
        # Compressed bytes of raw pages kept, all articles together; the app sets it from
        # READER_RAW_PAGES_BYTES. Past it the oldest raw pages are dropped.
        self.raw_pages_budget = RAW_PAGES_BYTES

    @property
    def read_only(self) -> bool:
        """Opened read-only (the file, its directory or its disk cannot be written):
        reads work, every write is a StorageError saying so."""
        return self._read_only

    @classmethod
    async def _connect(cls, path: Path) -> tuple[aiosqlite.Connection, aiosqlite.Connection]:
        if path.is_file() and not writable(path):
            return await cls._connect_read_only(path)
        write = await open_connection(path)
        try:
            await check_schema(write)  # before WAL: another program's file is left exactly as it was
            await write.execute("PRAGMA journal_mode = WAL")
            await migrate(write)
            read = await open_connection(path)
        except BaseException:
            await write.close()
            raise
        return read, write

    @classmethod
    async def _connect_read_only(cls, path: Path) -> tuple[aiosqlite.Connection, aiosqlite.Connection]:
        read = await open_connection(read_only_uri(path), uri=True)
        try:
            with _as_storage_error():
                version = (await rows_of(read, "PRAGMA user_version"))[0][0]
            if version != len(MIGRATIONS):
                raise StorageError(f"the database is read-only and at schema version {version}, not"
                                   f" {len(MIGRATIONS)}: it cannot be upgraded; make it writable", "read-only")
        except BaseException:
            await read.close()
            raise
        # One connection serves both: every write on it fails with SQLITE_READONLY.
        return read, read

    async def close(self) -> None:
        if self._here is not None:
            self._here.close()
            self._here = None
        for conn in self._readers:
            await conn.close()
        self._readers, self._idle = [], []
        if self._write is not self._read:
            await self._write.close()


    # -- plumbing ---------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def _reading(self) -> AsyncIterator[aiosqlite.Connection]:
        """A read connection of this Store's own, for one statement: an idle one, a new
        one while fewer than READ_CONNECTIONS are open, else the first one freed."""
        if self._read_only:  # one connection opened read-only serves everything
            yield self._read
            return
        # The bookkeeping has no await in it: a reader cancelled at any point (a request
        # that went away) gives its slot and its connection back, and a connection opened
        # is always one of _readers, closed by close().
        async with self._read_slots:
            conn = self._idle.pop() if self._idle else None
            if conn is None:
                conn = await open_connection(self.path)
                self._readers.append(conn)
            try:
                yield conn
            finally:
                self._idle.append(conn)

    async def _all(self, sql: str, params: Params = (), *, budget: float | None = None) -> list[dict[str, Any]]:
        """Every row of one read statement. With `budget` (seconds), a statement still
        running after that long is interrupted and TooSlow raised."""
        async with self._reading() as conn:
            if budget is None:
                with _as_storage_error():
                    return _dicts(await conn.execute_fetchall(sql, params))
            deadline = time.monotonic() + budget

            def over_budget() -> int:  # runs in the connection's thread, every 1000 VM steps
                return 1 if time.monotonic() > deadline else 0

            await conn.set_progress_handler(over_budget, 1000)
            try:
                with _as_storage_error():
                    return _dicts(await conn.execute_fetchall(sql, params))
            except sqlite3.OperationalError as exc:
                if "interrupt" in str(exc) and time.monotonic() > deadline:
                    raise TooSlow(f"over its budget of {budget:g} s") from None
                raise
            finally:
                await conn.set_progress_handler(None, 0)  # type: ignore[arg-type]

    def _read_here(self, sql: str, params: Params = ()) -> list[dict[str, Any]] | None:
        """Every row of one read statement, read on the calling (event loop) thread, or
        None if SQLite could not answer at once: the caller then reads through the pool.
        Only for statements that are quick by construction (a primary key, index seeks):
        the loop waits for it. Autocommit, every row fetched: no read transaction is left
        open to hold back the WAL's checkpoints."""
        if self._read_only:
            return None
        try:
            if self._here is None:
                here = sqlite3.connect(self.path.resolve().as_uri() + "?mode=ro", uri=True,
                                       isolation_level=None, timeout=0)
                here.row_factory = sqlite3.Row
                self._here = here
            return _dicts(self._here.execute(sql, params).fetchall())
        except sqlite3.Error:
            return None

    async def _one(self, sql: str, params: Params = ()) -> dict[str, Any] | None:
        rows = await self._all(sql, params)
        return rows[0] if rows else None

    async def _count(self, sql: str, params: Params = ()) -> int:
        """The number in the first column of an aggregate's single row."""
        async with self._reading() as conn:
            with _as_storage_error():
                rows = await rows_of(conn, sql, params)
        return int(rows[0][0])

    @contextlib.asynccontextmanager
    async def _transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        async with self._write_lock:
            with _as_storage_error():
                try:
                    # BEGIN inside the try: a task cancelled while waiting for it (a worker's
                    # heartbeat at shutdown) has still begun, in SQLite's thread, and the
                    # transaction left open made every later write on this connection fail
                    # ("cannot start a transaction within a transaction"). A ROLLBACK without
                    # a transaction is an error, suppressed below.
                    await self._write.execute("BEGIN IMMEDIATE")
                    yield self._write
                except BaseException:
                    # A full disk or an I/O error may have rolled the transaction back
                    # already; the error that matters is the one that got us here.
                    with contextlib.suppress(sqlite3.Error):
                        await self._write.execute("ROLLBACK")
                    raise
                else:
                    try:
                        await self._write.execute("COMMIT")
                    except sqlite3.Error:
                        with contextlib.suppress(sqlite3.Error):
                            await self._write.execute("ROLLBACK")
                        raise


@contextlib.contextmanager
def _as_storage_error() -> Iterator[None]:
    """A full disk, a read-only or damaged file becomes a StorageError (a 503 with a
    sentence, one line on the command line); any other SQLite error is left as it is."""
    try:
        yield
    except sqlite3.Error as exc:
        converted = storage_error(exc)
        if converted is None:
            raise
        raise converted from exc

