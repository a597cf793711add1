"""The core: what reader does, behind every interface.

The pages (views.py), the JSON API (api.py) and the command line (cli.py) are adapters:
they parse their input, call a `Reader` method and shape its answer. The rules live
here: the one tap into the queue, an article with its place in the line and its wait,
search, reading state, saved links, subscriptions, OPML. A refusal is a `ReaderError`
(reader/errors.py), which each adapter maps in one place.

The parsing the adapters share is written once and exported from here too: `parse_bool`
and `parse_int` with the id and offset caps (reader/params.py), `check_url`
(reader/urls.py), `snippet_html` for search results.
"""

from __future__ import annotations

import dataclasses
import re
import sqlite3
from collections.abc import Sequence
from typing import Any

import httpx
from markupsafe import Markup, escape

from .cleaning import ArticleFailed, Cleaner, UnknownArticle
from .discover import NoFeedFound, NotSubscribed, Subscription, subscribe
from .errors import ExtractionFailed, Invalid, NotFound
from .extract import CpuPool
from .feeds import RefreshResult, refresh_feeds
from .line import Timings, Work, estimate_waits
from .opml import ImportResult, OpmlError, export_opml, import_opml
from .params import MAX_ID, MAX_LIMIT, SEARCH_MAX_OFFSET, parse_bool, parse_int, parse_title
from .records import Article, Content, Feed
from .settings import Settings
from .store import STATES, Store, fts_query
from .urls import check_url
from .worker import Worker

__all__ = ["LANES", "MAX_ID", "MAX_LIMIT", "SEARCH_MAX_OFFSET", "Reader", "parse_bool", "parse_int",
           "parse_title", "snippet_html"]

LANES = ("normal", "next")

_MARKED = re.compile("\x02(.*?)\x03", re.S)


def snippet_html(snippet: str | None) -> Markup:
    """A search snippet as HTML: the text escaped first, then each \\x02 … \\x03 match
    (control characters, never markup) turned into <mark> … </mark>."""
    text = str(escape(snippet or ""))
    marked = _MARKED.sub(r"<mark>\1</mark>", text)
    return Markup(marked.replace("\x02", "").replace("\x03", ""))


class Reader:
    """Everything an interface needs, built once per process by `app.running`."""

    def __init__(self, settings: Settings, store: Store, client: httpx.AsyncClient, pool: CpuPool,
                 cleaner: Cleaner, worker: Worker | None) -> None:
        self.settings = settings
        self.store = store
        self.client = client
        self.pool = pool
        self.cleaner = cleaner
        self.worker = worker

    # -- articles -------------------------------------------------------------------

    async def _with_waits(self, rows: Sequence[dict[str, Any]]) -> list[Article]:
        """Records for store rows, each queued one with its estimated wait and the
        workers' capacity (the history and the line are read once, only when something is
        queued). The wait costs the article by its own site's recent runs and the work
        ahead of it by theirs (reader/line.py)."""
        articles = [Article.from_row(row) for row in rows]
        if any(a.state == "queued" for a in articles):
            timings = Timings.from_runs(await self.store.recent_timings())
            capacity = await self.store.capacity()
            work = await self.store.work_in_line()
            waits = estimate_waits([Work(w["url"], w["started_at"] if w["cleaning"] else None) for w in work],
                                   timings, capacity)
            wait_of = {w["article_id"]: wait for w, wait in zip(work, waits)}
            for a in articles:
                if a.state == "queued" and a.position is not None:
                    a.wait = wait_of.get(a.id)
                    a.capacity = capacity
        return articles

    async def article(self, article_id: int) -> Article:
        row = await self.store.get_article(article_id)
        if row is None:
            raise NotFound("no such article")
        return (await self._with_waits([row]))[0]

    async def articles(
        self, *, state: str | None = None, feed_id: int | None = None, before: int | None = None,
        ids: Sequence[int] | None = None, unread: bool = False, starred: bool = False, limit: int = 50,
    ) -> list[Article]:
        """Newest first, filtered; `before` is the last id of the previous page."""
        if state is not None and state not in STATES:
            raise Invalid(f"state must be one of {', '.join(STATES)}")
        rows = await self.store.list_articles(state=state, feed_id=feed_id, before=before, ids=ids,
                                              unread=unread, starred=starred, limit=limit)
        return await self._with_waits(rows)

    async def search(self, text: str, *, limit: int = 50, offset: int = 0) -> list[Article]:
        """What a person typed, best match first, each with its snippet. Nothing
        searchable in it is Invalid, never an FTS syntax error."""
        query = fts_query(text)
        if not query:
            raise Invalid(f"nothing to search for in “{text[:100]}”: type a word or a \"quoted phrase\"")
        try:
            rows = await self.store.search(query, limit=limit, offset=offset)
        except sqlite3.OperationalError:  # fts_query leaves no syntax; this is a last resort
            raise Invalid(f"could not search for “{text[:100]}”: try plain words") from None
        articles = await self._with_waits(rows)
        for a, row in zip(articles, rows):
            a.snippet = row["snippet"]
        return articles

    async def line(self) -> list[Article]:
        """The whole line: what is being cleaned, then what waits, in service order."""
        return await self._with_waits(await self.store.line())

    async def queue(self, article_id: int, lane: str = "normal") -> Article:
        """A person's tap: the one way into the queue."""
        if lane not in LANES:
            raise Invalid(f"lane must be one of {', '.join(LANES)}")
        if not await self.store.queue(article_id, lane, self.settings.next_lead):
            raise NotFound("no such article")
        if self.worker is not None:
            self.worker.wake()
        return await self.article(article_id)

    async def unqueue(self, article_id: int) -> Article:
        await self.store.unqueue(article_id)
        return await self.article(article_id)

    async def mark_read(self, article_id: int, read: bool = True) -> Article:
        if not await self.store.mark_read(article_id, read):
            raise NotFound("no such article")
        return await self.article(article_id)

    async def star(self, article_id: int, starred: bool = True) -> Article:
        if not await self.store.star(article_id, starred):
            raise NotFound("no such article")
        return await self.article(article_id)

    async def save(self, url: Any, title: Any = None) -> tuple[Article, bool]:
        """Save any link as an article without a feed; (article, created). Queues
        nothing: that takes a tap."""
        checked = check_url(url)
        article_id, created = await self.store.save_link(checked, parse_title(title))
        return await self.article(article_id), created

    async def reading(self, article_id: int) -> tuple[Article, Content | None]:
        """An article and its cleaned content, if there is any, in one read."""
        row, content = await self.store.reading(article_id)
        if row is None:
            raise NotFound("no such article")
        [article] = await self._with_waits([row])
        return article, Content.from_row(content) if content is not None else None

    async def open(self, article_id: int) -> Content:
        """The cleaned text, extracting it now if nobody has (the direct lane): the
        claim row decides who extracts, and a loser waits for the winner's result."""
        try:
            return Content.from_row(await self.cleaner.open(article_id))
        except ArticleFailed as exc:
            raise ExtractionFailed(str(exc)) from None
        except UnknownArticle:
            raise NotFound("no such article") from None

    async def capacity(self) -> int:
        return await self.store.capacity()

    async def stats(self) -> dict[str, int]:
        return await self.store.stats()

    async def latest_runs(self, limit: int = 20) -> list[dict[str, Any]]:
        """The ledger's latest runs, newest first, with their articles' titles."""
        return await self.store.latest_runs(limit)

    async def runs(self, limit: int | None = None) -> list[dict[str, Any]]:
        """The ledger, oldest first; with `limit`, only the latest runs."""
        runs = await self.store.runs()
        return runs[-limit:] if limit else runs

    # -- feeds ------------------------------------------------------------------------

    async def feeds(self, *, counts: bool = True) -> list[Feed]:
        return [Feed.from_row(row) for row in await self.store.list_feeds(counts=counts)]

    async def feed(self, feed_id: int) -> Feed:
        """One feed, with its article counts."""
        found = next((f for f in await self.feeds() if f.id == feed_id), None)
        if found is None:
            raise NotFound("no such feed")
        return found

    async def subscribe(self, url: Any) -> Subscription:
        """Subscribe by a feed's URL or a site's (its feed is discovered)."""
        checked = check_url(url)
        try:
            return await subscribe(self.store, self.client, self.pool, checked,
                                   max_bytes=self.settings.max_page_bytes, deadline=self.settings.fetch_timeout)
        except (NoFeedFound, NotSubscribed) as exc:
            raise Invalid(str(exc)) from None

    async def unsubscribe(self, feed_id: int) -> None:
        if not await self.store.delete_feed(feed_id):
            raise NotFound("no such feed")

    async def rename_feed(self, feed_id: int, title: Any) -> None:
        name = parse_title(title, "name")
        if not name:
            raise Invalid("a feed's name cannot be empty")
        if not await self.store.rename_feed(feed_id, name):
            raise NotFound("no such feed")

    async def refresh(self, feeds: Sequence[Feed] | None = None) -> list[RefreshResult]:
        """Refresh these feeds (all of them by default) now, within the fetch limits."""
        chosen = await self.feeds(counts=False) if feeds is None else feeds
        return await refresh_feeds(self.store, self.client, self.pool, [dataclasses.asdict(f) for f in chosen],
                                   max_bytes=self.settings.max_page_bytes, deadline=self.settings.fetch_timeout)

    async def refresh_ids(self, feed_ids: Sequence[int]) -> list[RefreshResult]:
        """Refresh the feeds with these ids (unknown ids are ignored)."""
        wanted = set(feed_ids)
        return await self.refresh([f for f in await self.feeds(counts=False) if f.id in wanted])

    # -- OPML ---------------------------------------------------------------------------

    async def import_opml(self, data: bytes, name: str = "the file") -> ImportResult:
        """Subscribe to every feed in an OPML file (nothing is fetched here)."""
        try:
            return await import_opml(self.store, data)
        except OpmlError as exc:
            raise Invalid(f"{name}: {exc}") from None

    async def export_opml(self) -> bytes:
        return await export_opml(self.store)
