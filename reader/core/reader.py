"""The core: what reader does, behind every interface.

The pages (reader/web/pages), the JSON API (reader/web/api) and the command line
(reader/cli) are adapters:
they parse their input, call a `Reader` method and shape its answer. The rules live
here: the one tap into the queue, an article with its place in the line and its wait,
the direct lane (reading.py), search, reading state, saved links, subscriptions, OPML. A refusal is a `ReaderError`
(reader/errors.py), which each adapter maps in one place.

The parsing the adapters share is written once and exported from here too: `parse_bool`
and `parse_int` with the id and offset caps (reader/params.py), `parse_filter` and
`parse_list_page` for a list and a page of it, `check_url` (reader/urls.py),
`snippet_html` for search results.

The store, the cleaner, the pool, the HTTP client and the worker are private: an adapter
asks the Reader, never them.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import html
import json
import math
import re
import sqlite3
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx
from markupsafe import Markup, escape

from ..jobs.cleaning import Cleaner
from ..feeds.discover import Subscription, subscribe
from ..errors import Conflict, Forbidden, Invalid, Malformed, NotFound, ReaderError, StorageError, Unavailable
from ..fetch import FetchError, Response, fetch
from ..formats.epub import Edition, EditionArticle, assemble_epub
from ..formats.importers.base import one_line
from ..pool import CpuPool
from ..feeds.refresh import RefreshResult, refresh_feeds
from .reading import (STARTED_ELSEWHERE, DirectLane, Opened, OpenedBy, OpenedPage, marks_read,
                      starts_work)
from .waits import FIRST_GUESS, Timings, Work, estimate_waits
from .imports import ImportJob, Progress, job_of_record, outcome_json, stop_imports
from . import highlights, library
from .tags import parse_tags
from . import library
from . import rules as rule_book
from ..feeds.rules import Rule
from .library import export_opml
from .exports import bookmarks_html
from ..params import MAX_ID, MAX_LIMIT, SEARCH_MAX_OFFSET, parse_bool, parse_int, parse_title
from ..records import (READING_LIST, Article, ArticleFilter, ArticlePage, Content, Feed, FeedChoice, Link,
                       ListFacts, Marked, QueuedMany, StoredImage, TakenBack)
from ..settings import Settings
from ..clean.sanitize import valid_text
from ..store import MAX_SEARCH_CHARS, MAX_SEARCH_TERMS, STATES, ListFilter, Store, TooSlow, fts_query, fts_terms
from ..urls import check_url
from ..jobs.worker import Worker

__all__ = ["LANES", "MAX_QUEUE_BATCH", "READING_LIST", "ArticleFilter", "Marked", "QueuedMany", "TakenBack", "parse_filter", "parse_list_page", "MAX_ID", "MAX_LIMIT",
           "SEARCH_MAX_OFFSET", "STATES", "UNREAD_CAP", "Reader", "Saved", "parse_bool", "parse_int", "parse_tags", "parse_title",
           "snippet_html"]

log = logging.getLogger(__name__)

LANES = ("normal", "next")
# How an image is named in its article's HTML: the sha256 of its bytes, hex.
IMAGE_HASH = re.compile(r"[0-9a-f]{64}")
# A search's neighbours are found among this many of its best matches.
SEARCH_NEIGHBOURS = 500
# Ids one bulk request may name; more is what a filter with `until` is for.
MAX_BULK = 10_000
# Articles one bulk queue puts in line at most: hours of work for the workers already, and
# the same act again queues the next ones (the store takes BATCH_MOST at the most).
MAX_QUEUE_BATCH = 500
MAX_NAME = 200  # a tag or folder named in a filter
# Past this many, a list's unread count says "999+" (counting all of a broad filter costs a scan).
UNREAD_CAP = 999
MAX_IMPORT_JOBS = 20  # finished web imports kept for their report pages
MAX_IMPORT_NAME = 200  # characters of an uploaded file's name an import keeps
MATCHING_CAP = 100  # highlights a search counts for its pointer to them ("100+")
# A device's id for an action: long enough to be unique when random, short enough to store.
ACTION_KEY = re.compile(r"[A-Za-z0-9._:-]{8,100}")
# Seconds a replay waits for the same action still being applied by another request.
ACTION_WAIT = 10.0
# Articles of the reading list offered for saving on a device at most (the size budget
# usually says stop first).
OFFLINE_ARTICLES = 1000
_IMG_SRC = re.compile(r"<img\b[^>]*?\ssrc=\"([^\"]*)\"", re.I)


@dataclasses.dataclass
class OfflineArticle:
    """An article a device saves: its page, the same-origin images the page shows, and the
    size of its cleaned text (the images' sizes are counted by the device as it fetches)."""

    id: int
    page: str
    images: list[str]
    bytes: int


def same_origin_images(content_html: str, origin: str) -> list[str]:
    """The images of a cleaned article served by reader itself, as paths: only those can be
    saved for offline reading (another site's images are neither fetched nor shown offline)."""
    found: list[str] = []
    for raw in _IMG_SRC.findall(content_html):
        src = html.unescape(raw)
        if src.startswith(origin + "/"):
            src = src[len(origin):]
        if src.startswith("/") and not src.startswith("//") and src not in found:
            found.append(src)
    return found


def _match(text: str, named: str = "") -> str:
    """What a person typed as an FTS5 query, within the same limits as a search. `named`:
    what the refusal starts with (the interface's name for the text, as "q: ")."""
    if len(text) > MAX_SEARCH_CHARS:
        raise Invalid(f"{named}the search is too long ({len(text):,} characters): use at most {MAX_SEARCH_CHARS}")
    terms = fts_terms(text)
    if not terms:
        raise Invalid(f"{named}nothing to search for in “{text[:100]}”: type a word or a \"quoted phrase\"")
    if len(terms) > MAX_SEARCH_TERMS:
        raise Invalid(f"{named}the search has too many words ({len(terms)}): use at most {MAX_SEARCH_TERMS}")
    return " ".join(terms)


def parse_filter(params: Mapping[str, Any], *, strict: bool = True) -> ArticleFilter:
    """A list's filter from query parameters, a form or JSON: state, feed, unread,
    starred, q. Strict (the API) refuses what it cannot read; lenient (a page's link)
    drops it instead, so a link is never refused for how it spells a filter."""
    def get(name: str) -> Any:
        value = params.get(name)
        return None if value is None or value == "" else value

    def lenient(parse: Callable[[], Any], fallback: Any) -> Any:
        try:
            return parse()
        except Invalid:
            if strict:
                raise
            return fallback

    state = get("state")
    if state is not None and state not in STATES:
        if strict:
            raise Invalid(f"state must be one of {', '.join(STATES)}")
        state = None
    q = get("q")
    if q is not None and not isinstance(q, str):
        if strict:
            raise Invalid("q must be a string")
        q = None
    names: dict[str, str | None] = {}
    for name in ("tag", "folder"):
        value = get(name)
        if value is not None and (not isinstance(value, str) or len(value) > MAX_NAME):
            if strict:
                raise Invalid(f"{name} must be a name of at most {MAX_NAME} characters")
            value = None
        names[name] = " ".join(value.split()) or None if value is not None else None
    return ArticleFilter(
        state=state,
        feed_id=lenient(lambda: parse_int(get("feed"), "feed"), None),
        unread=lenient(lambda: parse_bool(get("unread"), "unread"), False),
        starred=lenient(lambda: parse_bool(get("starred"), "starred"), False),
        q=(q or "").strip(),  # a search that is too long is refused by search(), with a message
        tag=names["tag"], folder=names["folder"],
    )


# Any whole number int() reads from text (it refuses more than 4,300 digits): the bound
# that lets parse_int tell "not a number" apart from "out of range".
_ANY_NUMBER = 10**4301


def parse_list_page(params: Mapping[str, Any]) -> tuple[int | None, int | None, int]:
    """Where a page of a list starts, from its link: (before, feed, offset): `before` the
    last article id of the page before it, `feed` the feed it lists, `offset` a search
    page's first result. Malformed (400: a link reader did not make) otherwise."""
    try:
        before, feed_id, offset = (parse_int(params.get(name), name, low=-_ANY_NUMBER, high=_ANY_NUMBER)
                                   for name in ("before", "feed", "offset"))
    except Invalid:
        raise Malformed("before, feed and offset must be numbers") from None
    if any(n is not None and not 0 <= n <= MAX_ID for n in (before, feed_id)):
        raise Malformed("before and feed must be article and feed ids")
    if offset is None:
        offset = 0
    if not 0 <= offset <= SEARCH_MAX_OFFSET:
        raise Malformed(f"offset must be between 0 and {SEARCH_MAX_OFFSET}")
    return before, feed_id, offset


@dataclasses.dataclass(frozen=True)
class Saved:
    """A link saved: the article, whether saving added it, and whether it was queued."""

    article: Article
    created: bool
    queued: bool = False


def _selection(ids: Sequence[int] | None, within: ArticleFilter | None, until: int | None) -> dict[str, Any]:
    """What a bulk action applies to, as the store's arguments: these ids, or everything
    the filter matches up to article `until` (articles added after it arrived after the
    person looked)."""
    if ids is None and until is None:
        raise Invalid("give the articles' ids, or a filter with until (the newest article id shown)")
    if ids is not None and len(ids) > MAX_BULK:
        raise Invalid(f"at most {MAX_BULK} ids at once; use a filter with until for more")
    f = within or ArticleFilter()
    if f.state is not None and f.state not in STATES:
        raise Invalid(f"state must be one of {', '.join(STATES)}")
    return {"ids": ids, "until": until if ids is None else None, "state": f.state, "feed_id": f.feed_id,
            "unread": f.unread, "starred": f.starred, "match": _match(f.q) if f.q else None,
            "tag": f.tag, "folder": f.folder}


def _undo_stamp(token: object) -> float:
    """A bulk queue's undo token (its stamp, as text or a number) read back; Invalid for
    anything else."""
    try:
        stamp = float(token) if isinstance(token, (str, int, float)) and not isinstance(token, bool) else math.nan
    except ValueError:
        stamp = math.nan
    if not math.isfinite(stamp) or stamp <= 0:
        raise Invalid("undo must be the token a bulk queue answered")
    return stamp


_MARKED = re.compile("\x02(.*?)\x03", re.S)


def snippet_html(snippet: str | None) -> Markup:
    """A search snippet as HTML: the text escaped first, then each \\x02 … \\x03 match
    (control characters, never markup) turned into <mark> … </mark>."""
    text = str(escape(snippet or ""))
    marked = _MARKED.sub(r"<mark>\1</mark>", text)
    return Markup(marked.replace("\x02", "").replace("\x03", ""))


# SQLite's lower() folds ASCII letters only: the feeds are in the order the library page
# lists them (ORDER BY lower(title), id).
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


@functools.lru_cache(maxsize=8)
def _feed_choices(listed: str) -> tuple[FeedChoice, ...]:
    """The feeds as the store lists them (JSON, in no order) for a list's feed filter, by
    name, parsed and sorted once while they stay the same: every list page asks, and they
    change when a feed or its unread count does. The same answer is the same tuple, which
    lets a page keep what it drew from it (web/pages/browse.py)."""
    feeds = sorted(json.loads(listed), key=lambda f: (str(f[1]).translate(_ASCII_LOWER), f[0]))
    return tuple(FeedChoice(int(i), str(title or url), folder, int(unread)) for i, title, url, folder, unread in feeds)


class Reader:
    """Everything an interface needs, built once per process by `running` (running.py)."""

    def __init__(self, settings: Settings, store: Store, client: httpx.AsyncClient, pool: CpuPool,
                 cleaner: Cleaner, worker: Worker | None) -> None:
        self.settings = settings
        self._store = store
        self._client = client
        self._pool = pool
        self._cleaner = cleaner
        self._worker = worker
        self._lane = DirectLane(cleaner, self.article)
        self.marks = highlights.KeptMarks()  # the reader view's marks of the articles opened last
        self.imports: dict[int, ImportJob] = {}  # the web form's imports, the latest few
        self._import_tasks: set[asyncio.Task[None]] = set()

    @property
    def read_only(self) -> bool:
        """Whether the database can only be read (a read-only file or disk): pages then
        show no forms that would change anything."""
        return self._store.read_only

    # -- work in this process ----------------------------------------------------------

    def stop_taking_work(self) -> None:
        """Stop taking new work: the worker stops pulling from the line (extractions in
        progress go on; `drain` bounds them), and imports end at their next batch."""
        if self._worker is not None:
            self._worker.stop()
        stop_imports(self.imports.values())

    async def drain(self, grace: float | None = None) -> None:
        """Shutdown: no open starts an extraction from now on, and those in progress get
        `grace` seconds (READER_SHUTDOWN_GRACE by default) before they are cut off, which
        releases their claims."""
        await self._cleaner.drain(self.settings.shutdown_grace if grace is None else grace)

    async def epub(self, articles: Sequence[EditionArticle], **options: Any) -> Edition:
        """Articles as one EPUB (see formats/epub.assemble_epub for `options`), made in the
        extraction pool: a few hundred articles are seconds of CPU, and the event loop
        keeps answering meanwhile."""
        return await self._pool.run(functools.partial(assemble_epub, articles, **options))

    async def fetch_image(self, url: str, max_bytes: int) -> Response | None:
        """An image from another site, through the same guarded client and deadline as
        every fetch; None when it cannot be had."""
        try:
            return await fetch(self._client, url, max_bytes=min(self.settings.max_page_bytes, max_bytes),
                               deadline=self.settings.fetch_timeout, accept="image/png,image/jpeg,image/gif")
        except FetchError:
            return None

    # -- articles -------------------------------------------------------------------

    async def _with_waits(self, rows: Sequence[dict[str, Any]], *, tagged: bool = False) -> list[Article]:
        """Records for store rows, each queued one with its estimated wait and the
        workers' capacity (the history and the line are read once, only when something is
        queued and a worker is running). The wait costs the article by its own site's recent runs and the work
        ahead of it by theirs (core/waits.py). `tagged`: the rows carry their tags already."""
        if tagged:
            tags: Mapping[int, Sequence[str]] = {row["id"]: row["tags"] for row in rows}
        else:
            tags = await self._store.tags_of([row["id"] for row in rows]) if rows else {}
        waits: dict[int, float | None] = {}
        capacity = None
        if any(row["state"] == "queued" for row in rows):
            waits, capacity = await self._line_waits()
        articles = []
        for row in rows:
            queued = row["state"] == "queued" and row.get("position") is not None
            articles.append(Article.from_row(row, tags=tuple(tags.get(row["id"], ())),
                                             wait=waits.get(row["id"]) if queued else None,
                                             capacity=capacity if queued else None))
        return articles

    async def _line_waits(self) -> tuple[dict[int, float | None], int]:
        """Every article in line with its estimated wait, and the workers' capacity: the
        one estimate the cards and a bulk queue's notice share (core/waits.py)."""
        capacity = await self._store.capacity()
        if capacity == 0:  # without a worker no wait can be estimated (estimate_waits says None)
            return {}, capacity
        timings = Timings.from_runs(await self._store.recent_timings(), prior=FIRST_GUESS)
        work = await self._store.work_in_line()
        estimates = estimate_waits([Work(w["url"], w["started_at"] if w["cleaning"] else None) for w in work],
                                   timings, capacity)
        return {w["article_id"]: wait for w, wait in zip(work, estimates)}, capacity

    async def article(self, article_id: int) -> Article:
        row = await self._store.get_article(article_id)
        if row is None:
            raise NotFound("no such article")
        return (await self._with_waits([row]))[0]

    async def articles(
        self, *, state: str | None = None, feed_id: int | None = None, before: int | None = None,
        ids: Sequence[int] | None = None, unread: bool = False, starred: bool = False,
        tag: str | None = None, folder: str | None = None, limit: int = 50, backwards: bool = False,
    ) -> list[Article]:
        """Newest first, filtered (a `ready` list in tap order, oldest tap first); `before`
        is the last id of the previous page; `backwards` lists those ahead of it instead."""
        if state is not None and state not in STATES:
            raise Invalid(f"state must be one of {', '.join(STATES)}")
        rows = await self._store.list_articles(state=state, feed_id=feed_id, before=before, ids=ids,
                                              unread=unread, starred=starred, tag=tag, folder=folder,
                                              limit=limit, backwards=backwards, tags=True)
        return await self._with_waits(rows, tagged=True)

    async def search(self, text: str, *, limit: int = 50, offset: int = 0,
                     within: ArticleFilter | None = None, param: str | None = None) -> list[Article]:
        """What a person typed, best match first, each with its snippet; `within` narrows
        it by the other filters. Nothing searchable in it, too much of it, or a search too
        broad to finish within the budget is Invalid, never an FTS syntax error and never a
        frozen app. `param`: the interface's name for the text, which the refusals about
        the text then start with (as parse_int's name its parameter)."""
        named = f"{param}: " if param else ""
        query = _match(text, named)
        f = within or ArticleFilter()
        if f.state is not None and f.state not in STATES:
            raise Invalid(f"state must be one of {', '.join(STATES)}")
        try:
            rows = await self._store.search(query, limit=limit, offset=offset, state=f.state,
                                           feed_id=f.feed_id, unread=f.unread, starred=f.starred,
                                           tag=f.tag, folder=f.folder, budget=self.settings.search_budget)
        except TooSlow:
            raise Invalid(f"{named}the search for “{text[:100]}” is too broad to finish in time:"
                          " try fewer or rarer words") from None
        except sqlite3.OperationalError:  # fts_terms leaves no syntax; this is a last resort
            raise Invalid(f"{named}could not search for “{text[:100]}”: try plain words") from None
        return await self._with_waits(rows)  # each row carries its snippet

    async def listing(self, f: ArticleFilter, *, before: int | None = None, offset: int = 0,
                      limit: int = 50) -> list[Article]:
        """One page of a list: a search when the filter has words, else a keyset page."""
        if f.q:
            return await self.search(f.q, limit=limit, offset=offset, within=f)
        return await self.articles(state=f.state, feed_id=f.feed_id, unread=f.unread, starred=f.starred,
                                   tag=f.tag, folder=f.folder, before=before, limit=limit)

    async def _search_neighbours(self, f: ArticleFilter, article_id: int) -> tuple[Link | None, Link | None]:
        """A search is ranked, not keyed: its neighbours are looked up in its first
        SEARCH_NEIGHBOURS results."""
        try:
            found = await self.search(f.q, limit=SEARCH_NEIGHBOURS, within=f)
        except Invalid:
            return None, None
        at = next((i for i, a in enumerate(found) if a.id == article_id), None)
        if at is None:
            return None, None
        prev, nxt = (found[at - 1] if at > 0 else None), (found[at + 1] if at + 1 < len(found) else None)
        return (Link(prev.id, prev.title) if prev else None), (Link(nxt.id, nxt.title) if nxt else None)

    async def mark_many(self, read: bool, *, ids: Sequence[int] | None = None, within: ArticleFilter | None = None,
                        until: int | None = None) -> Marked:
        """Triage in bulk: mark read (or unread) these articles, or everything the filter
        matches up to article `until` (articles added after it are left alone: they
        arrived after the person looked). Only articles whose state changes count."""
        changed, stamp = await self._store.mark_many(read, **_selection(ids, within, until))
        return Marked(ids=changed, stamp=stamp if read and changed else None)

    async def undo_read(self, stamp: float) -> list[int]:
        """Undo one bulk read: exactly the articles it changed are unread again."""
        return await self._store.unmark_stamp(stamp)

    async def done_many(self, done: bool, *, ids: Sequence[int] | None = None, within: ArticleFilter | None = None,
                        until: int | None = None) -> Marked:
        """Done (or not done) in bulk: these articles, or everything the filter matches up
        to article `until` (the reading list's filter: all of it). Only articles whose state
        changes count; `stamp` is what `undo_done` takes."""
        changed, stamp = await self._store.done_many(done, **_selection(ids, within, until))
        return Marked(ids=changed, stamp=stamp if done and changed else None)

    async def undo_done(self, stamp: float) -> list[int]:
        """Undo one bulk done: exactly the articles it changed are back on the reading list,
        each in its place."""
        return await self._store.undone_stamp(stamp)

    async def unread_counts(self) -> dict[int | None, int]:
        """Unread articles per feed id (None: saved links); a story several feeds carry
        counts under each, as it shows in each feed's list."""
        return await self._store.unread_counts()

    async def unread_per_folder(self) -> dict[str, int]:
        """Unread articles per folder, a story two of its feeds carry once."""
        return await self._store.unread_per_folder()

    async def unread_total(self, *, saved: bool = True) -> int:
        """Unread articles, a story in several feeds once; without `saved`, those of feeds."""
        return await self._store.unread_total(saved=saved)
    async def list_facts(self) -> ListFacts:
        """What a list's page shows around its articles, in one read: each feed with its
        unread count (the feed filter), the newest article, the reading list's length."""
        row = await self._store.list_facts()
        return ListFacts(_feed_choices(row["feeds"]), int(row["saved_unread"]), int(row["newest"]),
                         int(row["reading"]), int(row["total"]))

    async def unread_in(self, f: ArticleFilter, facts: ListFacts, *, cap: int = UNREAD_CAP) -> int | None:
        """What the `unread` filter lists within the other filters of `f`, as the count shown
        beside it, so the count matches the list it leads to: from the kept per-feed counts
        when at most a feed or a folder narrows it, the reading list's own length for it,
        else counted, up to `cap` + 1 (more than `cap` is "cap+"). None for a search: it is
        ranked, not counted."""
        if f.q:
            return None
        if f.is_reading_list or dataclasses.replace(f, unread=True).is_reading_list:
            return facts.reading
        if f.state is None and not f.starred and f.tag is None and f.folder is None:
            return facts.unread(feed_id=f.feed_id, folder=f.folder)
        return await self._store.count_articles(cap=cap + 1, state=f.state, feed_id=f.feed_id, unread=True,
                                                starred=f.starred, tag=f.tag, folder=f.folder)

    async def reading_count(self) -> int:
        """The reading list's length: cleaned and not done (read or not)."""
        return await self._store.reading_count()

    async def newest_id(self) -> int:
        return await self._store.newest_id()

    async def line(self) -> list[Article]:
        """The whole line: what is being cleaned, then what waits, in service order."""
        return await self._with_waits(await self._store.line())

    async def queue(self, article_id: int, lane: str = "normal") -> Article:
        """A person's tap: the one way into the queue."""
        if lane not in LANES:
            raise Invalid(f"lane must be one of {', '.join(LANES)}")
        if not await self._store.queue(article_id, lane, self.settings.next_lead):
            raise NotFound("no such article")
        if self._worker is not None:
            self._worker.wake()
        return await self.article(article_id)

    async def queue_many(self, *, ids: Sequence[int] | None = None, within: ArticleFilter | None = None,
                         until: int | None = None) -> QueuedMany:
        """A person's one act for many taps ("Queue these"): these articles, or everything
        the filter matches up to article `until` (as mark_many), that are new or failed,
        queued in the normal lane the oldest first, at most MAX_QUEUE_BATCH at once. Only
        a person's act may call this: never a refresh, a rule, an import or a worker."""
        return await self._queue_selection(_selection(ids, within, until))

    async def _queue_selection(self, chosen: dict[str, Any]) -> QueuedMany:
        queued, matched, stamp = await self._store.queue_many(limit=MAX_QUEUE_BATCH, **chosen)
        if not queued:
            return QueuedMany([], matched, MAX_QUEUE_BATCH, None, None)
        if self._worker is not None:
            self._worker.wake()
        waits, capacity = await self._line_waits()
        # until the last of them is ready: the longest wait among those still to do (one
        # cleaned already, by a quick worker, waits for nothing)
        pending = [waits[i] for i in queued if i in waits]
        estimate = None if capacity == 0 or any(w is None for w in pending) else max((w or 0.0 for w in pending), default=0.0)
        return QueuedMany(queued, matched, MAX_QUEUE_BATCH, estimate, repr(stamp), capacity)

    async def undo_queue(self, token: object) -> TakenBack:
        """Take back one bulk queue, by the token it answered: exactly its articles that
        have not started (one being cleaned, cleaned or failed stays as it is), saying how
        many could not be taken back."""
        stamp = _undo_stamp(token)
        taken, started = await self._store.unqueue_batch(stamp)
        return TakenBack(taken, started)

    async def import_unqueued(self, job: ImportJob) -> int:
        """How many links of a finished import are unread and not queued, being cleaned or
        ready: what its report offers to queue."""
        if job.outcome is None or not job.outcome.article_ids:
            return 0
        return await self._store.queueable(ids=job.outcome.article_ids.tolist(), unread=True)

    async def queue_import(self, job_id: int) -> QueuedMany:
        """The person's "Queue the N unread links" on an import's report: its links that
        are unread and not queued or ready, as one bulk queue (the oldest first, capped,
        with its undo). An import never queues anything by itself."""
        job = await self.import_job(job_id)
        if not job.finished:
            raise Conflict("the import is still running: queue its links once it is done")
        if job.outcome is None or not job.outcome.article_ids:
            return QueuedMany([], 0, MAX_QUEUE_BATCH, None, None)
        return await self._queue_selection({"ids": job.outcome.article_ids.tolist(), "unread": True})

    async def unqueue(self, article_id: int) -> Article:
        await self._store.unqueue(article_id)
        return await self.article(article_id)

    async def mark_read(self, article_id: int, read: bool = True) -> Article:
        """Mark read by hand, or unread (one read to the end starts over). Read is not done:
        an article on the reading list stays there (`mark_done` takes it off)."""
        if not await self._store.mark_read(article_id, read):
            raise NotFound("no such article")
        return await self.article(article_id)

    async def mark_done(self, article_id: int, done: bool = True) -> Article:
        """The person is done with it: off the reading list, read or not. Not done: back on
        the list in its place (its tap order never moved), one read to the end starting over."""
        if not await self._store.mark_done(article_id, done):
            raise NotFound("no such article")
        return await self.article(article_id)

    async def mark_opened(self, article_id: int) -> Article:
        """A person opened it: read, as in any feed reader (unread counts, the unread
        filter), but not done: it stays on the reading list until its end is reached
        (records.FINISHED) or the person says done."""
        if not await self._store.mark_opened(article_id):
            raise NotFound("no such article")
        return await self.article(article_id)

    async def star(self, article_id: int, starred: bool = True) -> Article:
        if not await self._store.star(article_id, starred):
            raise NotFound("no such article")
        return await self.article(article_id)

    async def set_tags(self, article_ids: Sequence[int], tags: object, *, add_only: bool = False) -> int:
        """Give articles exactly these tags (add_only: these as well); how many were found."""
        names = parse_tags(tags)
        found = await self._store.set_tags(article_ids, names, add_only=add_only)
        if not found:
            raise NotFound("no such article")
        return found

    async def tag_many(self, tags: object, *, ids: Sequence[int] | None = None, within: ArticleFilter | None = None,
                       until: int | None = None) -> int:
        """Tag a selection at once: these articles, or everything the filter matches up to
        article `until` (as mark_many). Adds the tags; how many articles were tagged."""
        names = parse_tags(tags)
        if not names:
            raise Invalid("tags: name at least one tag to add")
        return await self._store.tag_many(names, **_selection(ids, within, until))

    async def notes(self, article_id: int) -> list[dict[str, Any]]:
        """Highlights and annotations brought from other apps, oldest first."""
        return await self._store.notes_of(article_id)

    async def tags(self) -> list[dict[str, Any]]:
        return await self._store.all_tags()

    # -- highlights (core/highlights.py) ------------------------------------------------

    async def highlights(self, article_id: int) -> list[dict[str, Any]]:
        """An article's highlights in the order of its text, detached ones last."""
        if await self._store.get_article(article_id) is None:
            raise NotFound("no such article")
        return await self._store.highlights_of(article_id)

    async def add_highlight(self, article_id: int, body: Mapping[str, Any]) -> dict[str, Any]:
        """A highlight made by a person's selection: see highlights.add."""
        return await highlights.add(self._store, article_id, body)

    async def highlight(self, highlight_id: int) -> dict[str, Any]:
        found = await self._store.highlight(highlight_id)
        if found is None:
            raise NotFound("no such highlight")
        return found

    async def update_highlight(self, highlight_id: int, body: Mapping[str, Any]) -> dict[str, Any]:
        return await highlights.update(self._store, highlight_id, body)

    async def delete_highlight(self, highlight_id: int) -> None:
        if not await self._store.delete_highlight(highlight_id):
            raise NotFound("no such highlight")

    async def list_highlights(self, *, article_id: int | None = None, feed_id: int | None = None,
                              tag: str | None = None, text: str | None = None, before: object = None,
                              limit: int = 50) -> tuple[list[dict[str, Any]], str | None]:
        """A page of highlights, newest first, and the `before` of the next (None: the last)."""
        return await highlights.listing(self._store, article_id=article_id, feed_id=feed_id, tag=tag, text=text,
                                        before=before, limit=limit)

    async def highlights_matching(self, text: str) -> int:
        """How many highlights (quote, note or tags) hold what a search typed, up to
        MATCHING_CAP: the search page points to them, since its own matches are the
        articles' words. 0 for a text with nothing to search for."""
        query = fts_query(text) if len(text) <= highlights.MAX_TEXT_FILTER else ""
        if not query:
            return 0
        try:
            return await self._store.highlights_matching(query, MATCHING_CAP)
        except sqlite3.OperationalError:  # fts_query leaves no syntax; a last resort, as in search
            return 0

    async def highlight_tags(self) -> list[str]:
        return await self._store.highlight_tags()

    async def highlights_markdown(self, base: str) -> dict[str, str]:
        """Every article's highlights as a Markdown file for notes apps (Obsidian), by name;
        `base`: the address reader is reached at, for the links back."""
        rows = await self._store.every_highlight()
        tags = await self._store.tags_of(sorted({r["article_id"] for r in rows}))
        return highlights.markdown_files(rows, tags, base.rstrip("/"))

    async def highlights_zip(self, base: str) -> bytes:
        return highlights.markdown_zip(await self.highlights_markdown(base))

    async def highlights_readwise(self) -> str:
        """Every highlight as Readwise's CSV."""
        rows = await self._store.every_highlight()
        return highlights.readwise_csv(rows, await self._store.tags_of(sorted({r["article_id"] for r in rows})))

    async def import_job(self, job_id: int) -> ImportJob:
        """A web import: the one this process is running, or its record (the latest
        MAX_IMPORT_JOBS are kept, across restarts)."""
        job = self.imports.get(job_id)
        if job is not None:
            return job
        row = await self._store.import_record(job_id)
        if row is None:
            raise NotFound(f"no such import: {job_id} (the latest {MAX_IMPORT_JOBS} imports are kept)")
        return job_of_record(row)

    async def finish_imports(self) -> None:
        """Shutdown: running imports end at their next batch (each batch is its own
        transaction: what was stored stays, and importing the file again adds the rest)."""
        stop_imports(self.imports.values())
        await asyncio.gather(*self._import_tasks, return_exceptions=True)

    async def set_position(self, article_id: int, fraction: object, at: object = None) -> Article:
        """Where the person stopped: a fraction of the text (0 to 1), reached at `at` (seconds
        since the epoch, by the device's clock; now if not given). An older place than the
        one stored is ignored (a device syncing late), and a time in the future counts as
        now, so a fast clock cannot pin a place against every later one. A place at the end
        (records.FINISHED) is done with it: read, and off the reading list."""
        if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not math.isfinite(fraction) \
                or not 0 <= fraction <= 1:
            raise Invalid("position must be a number from 0 (the start) to 1 (the end)")
        now = time.time()
        if at is None:
            at = now
        elif isinstance(at, bool) or not isinstance(at, (int, float)) or not math.isfinite(at) or at < 0:
            raise Invalid("at must be a time in seconds since the epoch")
        stored = await self._store.set_read_position(article_id, round(float(fraction), 4), min(float(at), now))
        if stored is None:
            raise NotFound("no such article")
        return await self.article(article_id)

    async def answered(self, key: object, action: re.Pattern[str]) -> str | None:
        """What reader answered to the device's action `key`, if it was applied (200) and
        is an `action` (a pattern of "METHOD /path"); None when reader has not applied it,
        refused it, or it was something else. How a device that acted offline refers to
        what it made before it learnt its id (see the highlights API's made/{key})."""
        if not isinstance(key, str) or not ACTION_KEY.fullmatch(key):
            raise Invalid("an action's id must be 8 to 100 letters, digits or . _ : -")
        row = await self._store.action(key)
        if row is None or row["status"] != 200 or not action.fullmatch(row["action"]):
            return None
        return str(row["answer"])

    async def once(self, key: object, action: str, apply: Callable[[], Awaitable[str]]) -> str:
        """Apply an action a device sent with its own id `key` exactly once: the first time,
        `apply` runs and its answer (or its refusal) is remembered; the same id again,
        however often a flapping connection resends it, gets that answer without applying
        anything. A replay racing the first one waits for its answer. An id already used
        for a different action is a Conflict."""
        if not isinstance(key, str) or not ACTION_KEY.fullmatch(key):
            raise Invalid("an action's id must be 8 to 100 letters, digits or . _ : -")
        row = await self._store.begin_action(key, action)
        if row is None:
            try:
                answer = await apply()
            except ReaderError as exc:
                if isinstance(exc, Unavailable):  # the disk, a shutdown: a replay may succeed
                    await asyncio.shield(self._store.drop_action(key))
                    raise
                await self._store.finish_action(key, exc.status, exc.message)
                raise
            except BaseException:
                await asyncio.shield(self._store.drop_action(key))
                raise
            await self._store.finish_action(key, 200, answer)
            return answer
        deadline = time.monotonic() + ACTION_WAIT
        while row is not None and row["status"] is None and row["action"] == action:
            if time.monotonic() > deadline:
                raise Conflict("this action is still being applied: send it again in a moment", retry_after=1)
            await asyncio.sleep(0.05)
            row = await self._store.action(key)
        if row is None:  # dropped by the request applying it (it failed): apply it now
            return await self.once(key, action, apply)
        if row["action"] != action:
            raise Conflict(f"this action id was used for another action ({row['action']})")
        if row["status"] != 200:
            raise ReaderError(row["answer"], status=row["status"])
        remembered: str = row["answer"]
        return remembered

    async def offline_list(self, origin: str) -> list[OfflineArticle]:
        """The reading list as a device saves it for offline reading, in tap order, cut at
        the size budget by its text alone (the device stops earlier once it counts images)."""
        budget = self.settings.offline_max_bytes
        chosen: list[OfflineArticle] = []
        total = 0
        for row in await self._store.reading_list_contents(OFFLINE_ARTICLES):
            total += row["bytes"]
            if total > budget:
                break
            chosen.append(OfflineArticle(row["id"], f"/articles/{row['id']}",
                                         same_origin_images(row["html"], origin), row["bytes"]))
        return chosen

    async def save(self, url: object, title: object = None) -> tuple[Article, bool]:
        """Save any link as an article without a feed; (article, created). Queues
        nothing: that takes a tap."""
        checked = check_url(url)
        article_id, created = await self._store.save_link(checked, parse_title(title))
        return await self.article(article_id), created

    async def save_and_queue(self, url: object, title: object = None) -> Saved:
        """"Save and queue", the person's tap on a confirmation: saved, then queued only if
        it is new or failed (a ready one is there to read; one queued or being cleaned is
        on its way already)."""
        article, created = await self.save(url, title)
        if article.state not in ("new", "failed"):
            return Saved(article, created)
        return Saved(await self.queue(article.id), created, queued=True)

    async def reading(self, article_id: int) -> tuple[Article, Content | None]:
        """An article and its cleaned content, if there is any, in one read."""
        row, content = await self._store.reading(article_id)
        if row is None:
            raise NotFound("no such article")
        [article] = await self._with_waits([row])
        return article, Content.from_row(content) if content is not None else None

    async def reading_page(self, article_id: int, within: ArticleFilter = READING_LIST) -> ArticlePage:
        """An article, its cleaned content if any, and what its page shows around it (its
        notes, the reading list's length, the previous and next article of the list
        `within`, as `neighbours` finds them) in one read; two for a search's neighbours."""
        keyed = not within.q and (within.state is None or within.state in STATES)
        around = ListFilter(state=within.state, feed_id=within.feed_id, unread=within.unread,
                            starred=within.starred, tag=within.tag, folder=within.folder) if keyed else None
        row, content = await self._store.reading_page(article_id, around)
        if row is None:
            raise NotFound("no such article")
        notes, count, version = row.pop("notes"), row.pop("reading_count"), row.pop("version")
        marked, marked_at = row.pop("highlights"), row.pop("highlights_version")
        prev, nxt = (Link(**side) if (side := row.pop(name)) else None for name in ("prev", "next"))
        [article] = await self._with_waits([row], tagged=True)
        if within.q:
            prev, nxt = await self._search_neighbours(within, article_id)
        return ArticlePage(article, Content.from_row(content) if content is not None else None, notes, count,
                           prev, nxt, version, marked, marked_at)

    async def page_version(self, article_id: int) -> tuple[int, bool]:
        """Whether a page of this article rendered before still shows what it would now,
        in one small read: the library's version (it grows with every change a page can
        show, made by any process) and whether the article is unread (opening it then
        has an effect of its own). Raises NotFound."""
        found = await self._store.page_version(article_id)
        if found is None:
            raise NotFound("no such article")
        return found

    async def open(self, article_id: int, *, by: OpenedBy = "person") -> Content:
        """The cleaned text, extracting it now if nobody has (the direct lane), however long
        that takes: the claim row decides who extracts, and a loser waits for the winner's
        result. Asking for the text itself (the API, the command line) is asking for the
        work, so a failed article is tried again. Opened by another site's link: the text
        if it is there, else Forbidden, with nothing started. Raises NotFound, Forbidden,
        ExtractionFailed, Stopping."""
        if not starts_work(by):
            _, there = await self.reading(article_id)
            if there is None:
                raise Forbidden(STARTED_ELSEWHERE)
            return there
        await self.article(article_id)  # NotFound before any work starts
        content = await self._lane.text(article_id)
        assert content is not None  # no bound on the wait
        return content

    async def reading_state(self, article_id: int, *, wait: float = 0.0, by: OpenedBy = "person") -> Opened:
        """The reader view's body as it is now: the text, or why it failed, or pending,
        with the extraction started or joined if it is not (opened by another site's link:
        nothing started) and waited for up to `wait` seconds. A failed article is not tried
        again: a retry is a tap. Marks nothing."""
        article, content = await self.reading(article_id)
        return await self._lane.state(article, content, wait=wait, start=starts_work(by))

    async def open_page(self, article_id: int, within: ArticleFilter = READING_LIST, *,
                        by: OpenedBy = "person") -> OpenedPage:
        """An article's page opened: what `reading_page` reads, the text (waited for up to
        READER_OPEN_WAIT seconds, as `reading_state`), and the article marked read if the
        person opened it (once: later opens write nothing). A mark the database cannot
        take is said in `unsaved`, not raised."""
        page = await self.reading_page(article_id, within)
        opened = await self._lane.state(page.article, page.content, wait=self.settings.open_wait,
                                        start=starts_work(by))
        article = opened.article
        marked = article.read_at is None and marks_read(by)
        unsaved = None
        if marked:
            try:
                article = await self.mark_opened(article_id)
            except StorageError as exc:
                # Reading goes on when writing cannot: the mark is a side effect of opening,
                # and a full or read-only disk must not take the text down with it.
                marked, unsaved = False, f"Not marked read (the mark could not be saved): {exc.message}"
        return OpenedPage(article, opened.content, opened.error, page=page,
                          unchanged=page.content is not None and not marked and unsaved is None, unsaved=unsaved)

    async def kept_version(self, article_id: int, *, by: OpenedBy = "person") -> int | None:
        """The library's version, if opening this article now changes nothing (a page of it
        rendered at that version still holds), in one small read; None if opening it would
        mark it read. Raises NotFound."""
        found = await self._store.page_version(article_id)  # not page_version: this is the reopen's hot path
        if found is None:
            raise NotFound("no such article")
        version, unread = found
        return None if unread and marks_read(by) else version

    @staticmethod
    def changes_with_version(f: ArticleFilter) -> bool:
        """Whether the list `f` (an article's neighbours in it) changes only when the
        library's version does. The lists of the states a claim decides (queued, cleaning,
        new, failed: reader/store/base.py's _STATE) also change as claims expire, with no
        write; every other list is keyed by stored rows alone."""
        return f.state is None or f.state == "ready"

    async def image(self, article_id: int, digest: str) -> StoredImage:
        """An image stored with an article, by its hash."""
        image = await self._store.image(article_id, digest) if IMAGE_HASH.fullmatch(digest) else None
        if image is None:
            raise NotFound("no such image")
        return image

    async def finish_with_page(self, url: object, page: bytes, title: object = None) -> tuple[Article, Content]:
        """The second chance: the person's browser sent the page at `url` as it rendered
        it. The article with that address that is not cleaned yet (a failed one, most
        likely; saved now if there is none) is cleaned from that page, through the same
        claim as every other lane: two posts of the page, or a post racing a worker, clean
        it once. The page is hostile HTML like any other: the same cleaner and sanitizer."""
        checked = check_url(url)
        if not page.strip():
            raise Invalid("the page sent was empty")
        if len(page) > self.settings.max_page_bytes:
            raise Invalid(f"the page is larger than {self.settings.max_page_bytes:,} bytes")
        article_id = await self._store.article_for(checked)
        if article_id is None:
            article_id, _ = await self._store.save_link(checked, parse_title(title))
        content = Content.from_row(await self._cleaner.finish_with_page(article_id, page, checked))
        return await self.article(article_id), content

    async def reclean(self, article_id: int, *, refetch: bool = False) -> tuple[str, str | None]:
        """Clean an article again from its stored raw page, fetching no page (`refetch`:
        from the page fetched anew): (outcome, error), the outcome "cached", "failed" or
        "skipped". Its highlights are placed again in the new text (store/highlights.py)."""
        return await self._cleaner.reclean(article_id, refetch=refetch)

    async def reclean_ids(self, *, failed: bool = False) -> list[int]:
        """The articles a reclean can work on (those with a raw page; `failed`: only failed ones)."""
        return await self._store.reclean_ids(failed=failed)

    async def capacity(self) -> int:
        return await self._store.capacity()

    async def stats(self) -> dict[str, Any]:
        """The ledger's counts (all kinds of run together), the bytes the runs took in,
        the same counts for each kind (`kinds`), and what stored images and raw pages take."""
        stats: dict[str, Any] = dict(await self._store.stats())
        kinds = await self._store.stats_by_kind()
        stats["bytes"] = sum(k["bytes"] for k in kinds.values())
        stats["kinds"] = kinds
        stats.update(await self._store.media_totals())
        return stats

    async def week(self) -> dict[str, int]:
        """The last seven days for a person: articles cleaned, failed and read."""
        return await self._store.week(time.time() - 7 * 86400)

    async def latest_runs(self, limit: int = 20) -> list[dict[str, Any]]:
        """The ledger's latest runs, newest first, with their articles' titles."""
        return await self._store.latest_runs(limit)

    async def runs(self, limit: int | None = None) -> list[dict[str, Any]]:
        """The ledger, oldest first; with `limit`, only the latest runs."""
        runs = await self._store.runs()
        return runs[-limit:] if limit else runs

    # -- feeds ------------------------------------------------------------------------

    async def feeds(self, *, counts: bool = True) -> list[Feed]:
        return [Feed.from_row(row) for row in await self._store.list_feeds(counts=counts)]

    async def feed(self, feed_id: int) -> Feed:
        """One feed, with its article counts."""
        found = next((f for f in await self.feeds() if f.id == feed_id), None)
        if found is None:
            raise NotFound("no such feed")
        return found

    async def subscribe(self, url: object) -> Subscription:
        """Subscribe by a feed's URL or a site's (its feed is discovered)."""
        checked = check_url(url)
        # NoFeedFound and NotSubscribed are Invalid: a refusal with one plain sentence
        return await subscribe(self._store, self._client, self._pool, checked,
                               max_bytes=self.settings.max_page_bytes, deadline=self.settings.fetch_timeout)

    async def set_folder(self, feed_id: int, folder: object) -> None:
        """Put a feed in a folder (None or "": in none)."""
        if folder is not None and not isinstance(folder, str):
            raise Invalid("folder must be text or null")
        name = " ".join(valid_text(folder).split())[:200] if folder else None
        if not await self._store.set_folder(feed_id, name or None):
            raise NotFound("no such feed")

    async def unsubscribe_counts(self, feed_id: int) -> tuple[int, int]:
        """(articles unsubscribing would keep, articles it would remove)."""
        counts = await self._store.unsubscribe_counts(feed_id)
        if counts is None:
            raise NotFound("no such feed")
        return counts

    async def unsubscribe(self, feed_id: int) -> tuple[int, int]:
        """Unsubscribe, keeping every article a person starred or read cleaned as a library
        item under the feed's name; returns (kept, removed)."""
        result = await self._store.delete_feed(feed_id)
        if result is None:
            raise NotFound("no such feed")
        return result

    async def rename_feed(self, feed_id: int, title: object) -> None:
        name = parse_title(title, "name")
        if not name:
            raise Invalid("a feed's name cannot be empty")
        if not await self._store.rename_feed(feed_id, name):
            raise NotFound("no such feed")

    async def refresh(self, feeds: Sequence[Feed] | None = None) -> list[RefreshResult]:
        """Refresh these feeds (all of them by default) now, within the fetch limits."""
        chosen = await self.feeds(counts=False) if feeds is None else feeds
        return await refresh_feeds(self._store, self._client, self._pool, [dataclasses.asdict(f) for f in chosen],
                                   max_bytes=self.settings.max_page_bytes, deadline=self.settings.fetch_timeout)

    async def refresh_ids(self, feed_ids: Sequence[int]) -> list[RefreshResult]:
        """Refresh the feeds with these ids (unknown ids are ignored)."""
        wanted = set(feed_ids)
        return await self.refresh([f for f in await self.feeds(counts=False) if f.id in wanted])

    # -- rules and paused feeds (core/rules.py) ------------------------------------------

    async def rules(self) -> list[Rule]:
        """Every rule, oldest first, each with how many articles it hides now."""
        return await rule_book.rules(self._store)

    async def rule(self, rule_id: int) -> Rule:
        return await rule_book.rule(self._store, rule_id)

    async def add_rule(self, fields: Mapping[str, Any]) -> Rule:
        return await rule_book.add_rule(self._store, fields)

    async def update_rule(self, rule_id: int, changes: Mapping[str, Any]) -> Rule:
        return await rule_book.update_rule(self._store, rule_id, changes)

    async def delete_rule(self, rule_id: int) -> int:
        """Delete a rule; what it hid is shown again (how many)."""
        return await rule_book.delete_rule(self._store, rule_id)

    async def test_rule(self, fields: Mapping[str, Any], limit: int = rule_book.TEST_HEADLINES,
                        ) -> list[rule_book.Tested]:
        return await rule_book.test_rule(self._store, fields, limit)

    async def apply_rule(self, rule_id: int, *, dry_run: bool) -> rule_book.Applied:
        return await rule_book.apply_rule(self._store, rule_id, dry_run=dry_run)

    async def undo_rule(self, rule_id: int, stamp: object) -> int:
        return await rule_book.undo_apply(self._store, rule_id, stamp)

    async def hidden(self, *, before: int | None = None, limit: int = 50) -> list[dict[str, Any]]:
        """The articles rules hid, newest first, each with the rule that hid it."""
        rows = await self._store.hidden_articles(before=before, limit=limit)
        for row in rows:
            row["rule"] = (Rule(id=row["hidden_by"], field=row["rule_field"], kind=row["rule_kind"],
                                pattern=row["rule_pattern"], scope=row["rule_scope"], action=row["rule_action"])
                           if row["rule_field"] else None)
        return rows

    async def hidden_count(self) -> int:
        return await self._store.hidden_count()

    async def show_again(self, article_id: int) -> None:
        """Show an article a rule hid again (unread again if hiding made it read)."""
        if not await self._store.show_again(article_id):
            raise NotFound("no such hidden article")

    async def pause_feed(self, feed_id: int, value: object) -> float | None:
        """Pause a feed: "day", "week", a date, a time, or None to end the pause."""
        return await rule_book.pause_feed(self._store, feed_id, value)

    async def export_bookmarks(self) -> bytes:
        """The library as Netscape bookmark HTML, the format every other app imports."""
        return await bookmarks_html(self._store)

    async def export_opml(self) -> bytes:
        return await export_opml(self._store)

    # -- the library as files: one way in, one rule for fetching after it (core/library.py)

    async def import_data(self, data: bytes, name: str, *, progress: Progress | None = None,
                          fetch: bool = True, opml_only: bool = False,
                          job: ImportJob | None = None) -> library.ImportOutcome:
        """Import one file's bytes, any format reader reads, told apart by content
        (`opml_only`: it must be OPML). Its new feeds are fetched right after it when
        there are at most library.IMPORT_FETCH_LIMIT, else left to the refresher (the one
        rule, reader/core/library.py); `fetch=False` opts out. Links are never fetched."""
        return await library.import_data(self._store, data, name, fetch=self.refresh_ids if fetch else None,
                                         progress=progress, opml_only=opml_only, job=job,
                                         max_links=self.settings.max_import_links)

    async def import_path(self, path: Path, *, progress: Progress | None = None,
                          fetch: bool = True) -> library.ImportOutcome:
        """import_data for a file, or for a directory of reader's own export."""
        return await library.import_path(self._store, path, fetch=self.refresh_ids if fetch else None,
                                         progress=progress, max_links=self.settings.max_import_links)

    @staticmethod
    def format_of(data: bytes, name: str) -> str:
        """Which format reader reads a file as (told apart by content); Invalid for one it
        does not import."""
        return library.format_of(data, name)

    async def start_import_data(self, data: bytes, name: str) -> ImportJob:
        """import_data in the background, its progress and outcome (with the fetch of its new
        feeds) on the job: the web form answers at once and its page follows the job. The
        job is a row of the imports table from the start and its report is written there
        at the end, so its page outlives a restart."""
        name = one_line(name, MAX_IMPORT_NAME) or "the file"  # a browser sends what it likes here
        job_id = max(await self._store.next_import_id(), max(self.imports, default=0) + 1)
        job = ImportJob(id=job_id, name=name)
        self.imports[job.id] = job
        for old in [i for i, j in self.imports.items() if j.recorded]:
            del self.imports[old]  # their reports are in the table

        async def record_start() -> None:
            try:
                await self._store.start_import(job.id, name, job.started_at, MAX_IMPORT_JOBS)
            except Exception:  # its end writes the row all the same
                log.exception("the start of the import of %s could not be recorded", name)

        async def run() -> None:
            # Beside the import, not before it: with another writer holding the database the
            # page still shows how far the file was read while both wait.
            started = asyncio.create_task(record_start(), name=f"import-{job.id}-start")
            try:
                job.outcome = await self.import_data(data, name, progress=job.progress, job=job)
            except Invalid as exc:
                job.error = exc.message
            except Exception as exc:  # a storage failure: the page says so, the server goes on
                log.exception("import of %s failed", name)
                job.error = f"the import stopped: {exc}; what was stored stays, and importing again merges"
            await started
            try:
                await self._store.finish_import(
                    job.id, name, job.started_at, outcome=None if job.outcome is None else outcome_json(job.outcome),
                    article_ids=b"" if job.outcome is None else job.outcome.article_ids.tobytes(),
                    error=job.error, finished_at=time.time())
                job.recorded = True
            except Exception:  # the report stays in memory; after a restart the page says it was cut short
                log.exception("the report of the import of %s could not be stored", name)

        task = asyncio.create_task(run(), name=f"import-{job.id}")
        self._import_tasks.add(task)
        task.add_done_callback(self._import_tasks.discard)
        return job
