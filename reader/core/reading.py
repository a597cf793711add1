"""The direct lane: an article opened now, not tapped into the line.

What belongs here is what opening means, for every interface: one waiting task per
article (concurrent opens and a page's poll share it, and abandoning a wait never
cancels the work), a wait with a bound, a failed article not tried again by opening it
(a retry is a tap), opening marking it read only when a person opened it, and the
cleaner's exceptions turned into the error tree once. The Reader (reader.py) builds one
`DirectLane` and its methods `open`, `reading_state` and `open_page` call it; the
claim protocol itself (who extracts, losers waiting for the winner) is the cleaner's
(reader/jobs/cleaning.py), and the HTTP conditions that say who opened an article are
the adapter's.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import ExtractionFailed, Stopping
from ..jobs.cleaning import Cleaner
from ..records import Article, ArticlePage, Content

# Who opened an article (or asked for a book of them), as the adapter tells it:
#   "person"        the person, from reader itself: the text is started, and it is read
#   "offline copy"  a device saving it for offline reading (the service worker): the text
#                   is started, but nobody read it
#   "another site"  a link on another site's page was followed: that is not the person
#                   asking, so nothing starts and nothing changes until they ask from reader
OpenedBy = Literal["person", "offline copy", "another site"]

# What a lane that could start work answers another site instead (the API's direct lane).
STARTED_ELSEWHERE = ("a link on another site's page cannot start cleaning an article: "
                     "open it from reader itself")


def starts_work(by: OpenedBy) -> bool:
    """The one rule for what another site's link may start: nothing. A top-level
    navigation passes the access layer from anywhere (the session cookie goes along), so a
    GET from there reads what is there and never cleans an article, fetches a page or an
    image, or tries a failed one again. Every lane a GET can reach asks this: the reader
    view, its body, the API's content and the editions."""
    return by != "another site"


def marks_read(by: OpenedBy) -> bool:
    """Opening marks an article read (not done with: see Reader.mark_opened) only when
    the person opened it."""
    return by == "person"


@dataclass(frozen=True)
class Opened:
    """What opening an article found: its text, or why it failed, or neither (pending:
    the extraction goes on, and asking again later finds its outcome)."""

    article: Article
    content: Content | None
    error: str | None = None

    @property
    def pending(self) -> bool:
        return self.content is None and self.error is None


@dataclass(frozen=True)
class OpenedPage(Opened):
    """An article's page as it was read (`page`: its neighbours, notes, the reading list's
    length and the library's version), with the article as it is after this open.
    `unchanged`: the page read at `page.version` still shows it (the text was there
    already and the open marked nothing), so a page rendered at that version holds.
    `unsaved`: what the open meant to write and could not (the disk full, the file
    read-only), for the page to say; the text is shown all the same."""

    page: ArticlePage | None = None
    unchanged: bool = False
    unsaved: str | None = None


class DirectLane:
    """One waiting task per article, held here (a strong reference: a task only the
    event loop references may be collected) until its extraction ends."""

    def __init__(self, cleaner: Cleaner, article: Callable[[int], Awaitable[Article]]) -> None:
        self._cleaner = cleaner
        self._article = article  # the article as the Reader reads it, with its wait
        self._waiting: dict[int, asyncio.Task[dict[str, Any]]] = {}

    def _task(self, article_id: int) -> asyncio.Task[dict[str, Any]]:
        """The task that waits for `cleaner.open` (which starts or joins the extraction and
        is shielded: abandoning this wait never cancels the work)."""
        task = self._waiting.get(article_id)
        if task is None:
            task = asyncio.create_task(self._cleaner.open(article_id), name=f"open-{article_id}")
            self._waiting[article_id] = task

            def forget(t: asyncio.Task[dict[str, Any]], key: int = article_id) -> None:
                if self._waiting.get(key) is t:
                    del self._waiting[key]
                if not t.cancelled():
                    t.exception()  # retrieved: whoever asks next reads the outcome from the store

            task.add_done_callback(forget)
        return task

    async def text(self, article_id: int, wait: float | None = None) -> Content | None:
        """The text once the extraction ends, or None if it has not within `wait` seconds
        (None: as long as it takes), the work still going. Raises ExtractionFailed,
        NotFound or Stopping."""
        task = self._task(article_id)
        if not task.done():
            await asyncio.wait({task}, timeout=None if wait is None else max(0.0, wait))
        if not task.done():
            return None
        if task.cancelled():  # only the end of the process cancels the waiting task
            raise Stopping()
        # the cleaner's errors are the core's own (ArticleFailed is an ExtractionFailed,
        # UnknownArticle a NotFound, ShuttingDown a Stopping): they pass as they are
        return Content.from_row(task.result())

    async def state(self, article: Article, content: Content | None, *, wait: float,
                    start: bool = True) -> Opened:
        """The article as opening it finds it, from the article and content just read: the
        text if it is there; a failed article's reason, with nothing started (a retry is a
        tap, not a side effect of opening); else the extraction started or joined (unless
        not `start`) and waited for up to `wait` seconds, and the article read again."""
        if content is not None:
            return Opened(article, content)
        if article.state == "failed":
            return Opened(article, None, article.error)
        if not start:
            return Opened(article, None)
        error = None
        try:
            content = await self.text(article.id, wait)
        except ExtractionFailed as exc:
            error = exc.message
        fresh = await self._article(article.id)
        if fresh.read_at is None and article.read_at is not None:
            fresh = dataclasses.replace(fresh, read_at=article.read_at)
        return Opened(fresh, content, error)
