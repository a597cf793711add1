"""One way to clean an article, shared by both lanes: the worker (queue lane) and a
person opening an article that is not ready (direct lane).

Who does the work is decided by a claim row in SQLite (`Store.claim`,
`Store.take_next`), not an asyncio lock: the other lane may be another event loop,
thread or process. The claim expires, so a holder that died blocks nobody for long; a
live holder renews it, so it is never robbed.

Once a claim is won the extraction runs in a task this Cleaner owns, awaited through
`asyncio.shield`: a reader who closes the page cancels only their wait, never the work.
The loser of a race does not fail and does not extract: it waits for the winner's
result and takes over only if the winner's claim expires.

Expiry is judged on the wall clock, which every process on the machine shares. A jump
forward longer than a claim's remaining life makes live claims look expired, so a page
may then be fetched twice. The damage is bounded, not prevented: every write of a run is
fenced by its run id (a robbed run cannot renew, release, or mark the article failed),
the first content stored wins, and a robbed run stays `abandoned` in the ledger.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import socket
import time
import uuid
import zlib
from dataclasses import dataclass, field
from typing import Any

import httpx

from ..clean import CleanedPage, ExtractError, clean_page
from ..clean.parts import read_parts
from ..errors import ExtractionFailed, NotFound, Stopping, StorageError
from ..pool import CpuPool, PoolUnavailable
from ..fetch.pages import fetch_page
from ..fetch import FetchError, Response
from .images import fetch_images
from ..clean.images import image_sources, rewrite
from ..records import RawPage, StoredImage
from ..settings import Settings
from ..store import Run, Store

log = logging.getLogger(__name__)


# The note on a run abandoned because the extraction processes died under it: what
# `Store.release_after_crash` counts.
POOL_DIED = "the extraction processes died"


@dataclass
class Cleaned:
    """One run's result before it is stored: the content, the images its HTML points at,
    the raw page to keep (None for a reclean, whose page is kept already) and the bytes
    the run took in."""

    content: CleanedPage
    images: list[StoredImage] = field(default_factory=list)
    page: RawPage | None = None
    received: int = 0


class _PageFailed(FetchError):
    """The page arrived but could not be cleaned: the run fails, and the page is kept."""

    def __init__(self, message: str, page: RawPage | None, received: int):
        super().__init__(message)
        self.page = page
        self.received = received


class ArticleFailed(ExtractionFailed):
    """Extraction of this article failed; the message says why."""


class UnknownArticle(NotFound):
    """No such article (deleted while it waited, or never there)."""

    def __init__(self, article_id: int) -> None:
        super().__init__("no such article")
        self.article_id = article_id


class ShuttingDown(Stopping):
    """The process is stopping: no extraction is started, and one cut off by the end of
    the grace period has no result. Try again (another process, or after the restart)."""


def worker_name(role: str) -> str:
    return f"{role}@{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


class Cleaner:
    def __init__(self, store: Store, client: httpx.AsyncClient, pool: CpuPool, settings: Settings, name: str):
        self.store = store
        self.client = client
        self.pool = pool
        self.settings = settings
        self.name = name
        # Strong references: a task only referenced by the event loop may be collected.
        self._running: dict[int, asyncio.Task[tuple[str, str | None]]] = {}
        # Results that could not be stored (a full disk): kept here and stored again
        # once that works, rather than fetched a second time after the claim expires.
        self.unsaved: dict[int, tuple[Run, Cleaned]] = {}
        self._saver: asyncio.Task[None] | None = None
        self.save_retry = 1.0  # seconds before the first new try; doubles up to 10 s
        self.stopping = False

    # -- the two lanes ------------------------------------------------------------

    async def open(self, article_id: int) -> dict[str, Any]:
        """The direct lane: cleaned content for an article, extracting it now if nobody
        has. Raises ArticleFailed or UnknownArticle. Cancelling the caller leaves any
        extraction running to completion."""
        waiting_since = time.time()
        while True:
            kept = self.unsaved.get(article_id)
            if kept is not None:  # cleaned, not yet stored: the person reads it anyway
                return {**kept[1].content, "article_id": article_id, "cleaned_at": time.time()}
            content = await self.store.get_content(article_id)
            if content is not None:
                return content
            if self.stopping and article_id not in self._running:
                raise ShuttingDown()
            run = await self.store.claim(article_id, self.name, self.settings.claim_ttl)
            if run is not None:
                outcome, error = await self._outcome(self.start(run))
                if outcome in ("failed", "unavailable"):
                    raise ArticleFailed(error or "cleaning failed")
                continue  # cached, kept or released at shutdown: read back what there is
            await self._wait_for_holder(article_id, waiting_since)

    async def finish_with_page(self, article_id: int, body: bytes, url: str) -> dict[str, Any]:
        """The browser's lane: clean an article that is not ready from the page the
        person's browser sent (`body`, UTF-8, as shown at `url`), through the same claim as
        every other lane. Whoever holds the claim already (a worker, an open, another post
        of the same page) wins and this waits for its result: the page is cleaned once.
        Raises ArticleFailed or UnknownArticle."""
        waiting_since = time.time()
        while True:
            content = await self.store.get_content(article_id)
            if content is not None:
                return content
            if self.stopping and article_id not in self._running:
                raise ShuttingDown()
            run = await self.store.claim(article_id, self.name, self.settings.claim_ttl, kind="browser")
            if run is not None:
                outcome, error = await self._outcome(self.start(run, (body, url)))
                if outcome in ("failed", "unavailable"):
                    raise ArticleFailed(error or "cleaning failed")
                continue
            await self._wait_for_holder(article_id, waiting_since)

    async def reclean(self, article_id: int, *, refetch: bool = False) -> tuple[str, str | None]:
        """Clean an article again from its stored raw page, fetching no page (images that
        are stored with it under the same address are reused): one run of kind
        `reclean`, under the same claim. An article cleaned before raw pages were kept
        keeps its text and gets its images stored. `refetch`: fetch the page anew instead
        (the site changed it), in the same kind of run, whose text replaces the old one.
        Returns (outcome, error): ("cached", None), ("failed", why) or ("skipped", why)
        when there is nothing to do."""
        if await self.store.get_article(article_id) is None:
            return "skipped", "no such article"
        if not refetch and await self.store.raw_page(article_id) is None \
                and await self.store.get_content(article_id) is None:
            return "skipped", "no stored page (it was never fetched, or it was dropped past READER_RAW_PAGES_BYTES)"
        while True:
            if self.stopping:
                raise ShuttingDown()
            run = await self.store.claim(article_id, self.name, self.settings.claim_ttl, kind="reclean")
            if run is not None:
                return await self._outcome(self.start(run, refetch=refetch))
            await self._holder_gone(article_id)

    async def _holder_gone(self, article_id: int) -> None:
        """Return once nobody holds a live claim on the article."""
        local = self._running.get(article_id)
        if local is not None:
            await asyncio.gather(asyncio.shield(local), return_exceptions=True)
            return
        delay = 0.02
        while True:
            holder = await self.store.claim_holder(article_id)
            if holder is None or holder["expires_at"] <= time.time():
                return
            await asyncio.sleep(delay)
            delay = min(delay * 1.5, 0.5)

    def start(self, run: Run, given: tuple[bytes, str] | None = None, *,
              refetch: bool = False) -> asyncio.Task[tuple[str, str | None]]:
        """Run the extraction of a won claim in a task owned here (the queue lane calls
        this with what `take_next` gave it). `given` is the page the browser sent, with the
        address it was shown at, for a run of kind `browser`; `refetch`, a reclean that
        fetches the page."""
        task = asyncio.create_task(self._extract(run, given, refetch), name=f"extract-{run.article_id}")
        self._running[run.article_id] = task
        task.add_done_callback(functools.partial(self._forget, run.article_id))
        return task

    async def _outcome(self, task: asyncio.Task[tuple[str, str | None]]) -> tuple[str, str | None]:
        """Wait for an extraction task, shielded: cancelling the caller never cancels the
        work. The work itself is cancelled only by shutdown past its grace, which the
        caller hears as ShuttingDown rather than as its own cancellation."""
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            if task.cancelled():
                current = asyncio.current_task()
                if current is None or not current.cancelling():
                    raise ShuttingDown() from None
            raise

    def _forget(self, article_id: int, task: asyncio.Task[tuple[str, str | None]]) -> None:
        if self._running.get(article_id) is task:
            del self._running[article_id]

    async def _wait_for_holder(self, article_id: int, waiting_since: float) -> None:
        """Someone else holds the claim. Return when it is worth trying again: the
        content may be there, or the claim has gone. Raise if the holder failed."""
        local = self._running.get(article_id)
        if local is not None:  # the holder is a task of ours: its outcome is ours too
            outcome, error = await self._outcome(local)
            # A failure is the answer for everyone who joined it: claiming again would
            # fetch the page a second time for one open.
            if outcome in ("failed", "unavailable"):
                raise ArticleFailed(error or "cleaning failed")
            return
        if article_id in self.unsaved:
            return
        delay = 0.02
        while True:
            await asyncio.sleep(delay)
            delay = min(delay * 1.5, 0.5)
            if await self.store.get_content(article_id) is not None:
                return
            holder = await self.store.claim_holder(article_id)
            if holder is not None and holder["expires_at"] > time.time():
                continue
            article = await self.store.get_article(article_id)
            if article is None:
                raise UnknownArticle(article_id)
            if holder is None and article["error"] and article.get("failed_at", 0) >= waiting_since:
                raise ArticleFailed(article["error"])
            return

    # -- the work itself -------------------------------------------------------------

    async def _extract(self, run: Run, given: tuple[bytes, str] | None = None,
                       refetch: bool = False) -> tuple[str, str | None]:
        keeper = asyncio.create_task(self._keep_claim(run))
        try:
            try:
                kept = self.unsaved.pop(run.article_id, None)
                # The claim of a kept result expired before the disk had room again: this
                # new run stores what was already cleaned instead of fetching it twice.
                cleaned = kept[1] if kept is not None else await self._clean(run, given, refetch)
            except _PageFailed as exc:
                await self.store.store_failed(run, str(exc), exc.page, exc.received)
                return "failed", str(exc)
            except (FetchError, ExtractError) as exc:
                await self.store.store_failed(run, str(exc))
                return "failed", str(exc)
            except PoolUnavailable as exc:
                # Most likely the machine failed, not the article: hand the claim back (the
                # run is abandoned, a queued article stays in line). But a page that kills the
                # processes every time would be taken again forever: after `crash_limit`
                # such runs it fails, with a reason, until a person asks again.
                log.error("article %s: %s", run.article_id, exc)
                limit = max(1, self.settings.crash_limit)
                reason = (f"cleaning this page made the extraction processes die {limit} times; it is not"
                          " tried again by itself (retry to try once more)")
                if await self.store.release_after_crash(run, POOL_DIED, limit, reason):
                    log.error("article %s: failed after %d crashed runs", run.article_id, limit)
                    return "failed", reason
                return "unavailable", f"cleaning is unavailable right now ({exc}); try again"
            except Exception as exc:
                log.exception("extracting article %s (%s) failed", run.article_id, run.url)
                error = f"internal error while cleaning ({type(exc).__name__})"
                await self.store.store_failed(run, error)
                return "failed", error
            try:
                await self._store(run, cleaned)
            except StorageError as exc:
                self._keep(run, cleaned, exc)
                return "kept", None
            return "cached", None
        except asyncio.CancelledError:
            # Only shutdown cancels an extraction, after its grace period: hand the claim
            # back so the next worker to start picks the article up at once.
            await asyncio.shield(self.store.release(run))
            raise
        finally:
            keeper.cancel()

    async def _store(self, run: Run, cleaned: Cleaned) -> None:
        await self.store.store_cleaned(run, cleaned.content, cleaned.images, cleaned.page, cleaned.received)

    async def _clean(self, run: Run, given: tuple[bytes, str] | None, refetch: bool = False) -> Cleaned:
        """The work of one run, inside its claim: get the page (fetch it, read the stored
        one for a reclean, or take the one the browser sent), clean it off the event loop,
        then fetch the article's images and point its HTML at them."""
        stored: list[StoredImage] = []
        page: RawPage | None = None
        received = 0
        if run.kind == "reclean" and refetch:
            stored = await self.store.images_of(run.article_id)
        if run.kind == "reclean" and not refetch:
            kept = await self.store.raw_page(run.article_id)
            stored = await self.store.images_of(run.article_id)
            if kept is None:
                # Cleaned before raw pages were kept: the text stays as it is, and only
                # its images are fetched and stored (the step it was cleaned without).
                old = await self.store.get_content(run.article_id)
                if old is None:
                    raise ExtractError("no stored page to clean again")
                parts = read_parts(old["html"])
                kept_text = CleanedPage(title=old["title"], author=old["author"], published=old["published"],
                                        site=None, html=old["html"], text=old["text"], words=old["words"],
                                        lead=parts["lead"], figures=parts["figures"])
                return await self._with_images(run, kept_text, run.url, stored, None, 0)
            body, url, charset = await asyncio.to_thread(zlib.decompress, kept.data), kept.url, kept.charset
        else:
            if given is not None:
                (body, url), charset = given, "utf-8"
            else:
                response = await self._fetch_with_retries(run)
                body, url, charset = response.body, response.url, response.charset
            received = len(body)
            page = RawPage(url, charset, await asyncio.to_thread(zlib.compress, body))
        try:
            content = await self.pool.run(clean_page, body, url, charset)
        except (FetchError, ExtractError) as exc:  # ExtractError: the page holds no article (for this cleaner)
            raise _PageFailed(str(exc), page, received) from exc
        return await self._with_images(run, content, url, stored, page, received)

    async def _with_images(self, run: Run, content: CleanedPage, url: str, stored: list[StoredImage],
                           page: RawPage | None, received: int) -> Cleaned:
        """Fetch the cleaned article's images and point its HTML at reader's copies."""
        # most articles have no image: no round trip to the pool for them
        sources = await self.pool.run(image_sources, content["html"]) if "<img" in content["html"] else []
        fetched = await fetch_images(self.client, sources, self.settings, referer=url, stored=stored)
        if sources:
            content["html"] = await self.pool.run(rewrite, content["html"], run.article_id, fetched.kept)
        return Cleaned(content, fetched.images, page, received + fetched.received)

    async def _fetch_with_retries(self, run: Run) -> Response:
        """Transient failures (timeouts, 5xx, 429, connection errors) are tried again
        within this one run, after a backoff that doubles; the claim is kept renewed
        meanwhile. Permanent ones (404, not HTML, blocked, too large) fail at once."""
        retries = max(0, self.settings.fetch_retries)
        for attempt in range(retries + 1):
            try:
                return await fetch_page(
                    self.client, run.url, max_bytes=self.settings.max_page_bytes, deadline=self.settings.fetch_timeout,
                )
            except FetchError as exc:
                if not exc.transient:
                    raise
                if attempt == retries:
                    if retries == 0:
                        raise
                    raise FetchError(f"{exc} (tried {retries + 1} times)", transient=True) from exc
                delay = self.settings.retry_backoff * 2**attempt
                log.info("article %s: %s; trying again in %g s", run.article_id, exc, delay)
                await asyncio.sleep(delay)
        raise AssertionError("unreachable")

    def _keep(self, run: Run, content: Cleaned, exc: StorageError) -> None:
        """Hold a result the database would not take, and make sure something stores it
        again. Its run stays open (neither cached nor failed) until it is stored."""
        log.warning("article %s is cleaned but cannot be stored (%s): keeping it in memory and trying again",
                    run.article_id, exc.message)
        self.unsaved[run.article_id] = (run, content)
        if self._saver is None or self._saver.done():
            self._saver = asyncio.create_task(self._store_unsaved(), name="store-unsaved")

    async def _store_unsaved(self) -> None:
        delay = self.save_retry
        while self.unsaved:
            await asyncio.sleep(delay)
            await self.save_unsaved()
            delay = min(delay * 2, 10.0)

    async def save_unsaved(self) -> int:
        """Try to store every kept result now; returns how many are still unsaved. The
        claim may have expired meanwhile: store_cleaned keeps a late result all the same
        (the first stored content wins), and closes this run's ledger row."""
        for article_id, (run, content) in list(self.unsaved.items()):
            try:
                await self._store(run, content)
            except StorageError:
                break  # the disk is still full: the rest would fail the same way
            except Exception:
                log.exception("storing the kept result of article %s failed", article_id)
                break
            del self.unsaved[article_id]
            log.info("article %s: the kept result is stored now", article_id)
        return len(self.unsaved)

    async def _keep_claim(self, run: Run) -> None:
        """Renew the claim while the extraction runs, so a slow but live holder is never
        robbed. Stops when the claim has passed to someone else (fenced by run id). A
        renewal that fails is tried again sooner than the next beat, and nothing it
        raises ends the renewing: a keeper that died with an error let the claim expire
        under a live holder."""
        beat = self.settings.claim_ttl / 3
        delay = beat
        while True:
            await asyncio.sleep(delay)
            try:
                renewed = await self.store.renew(run, self.settings.claim_ttl)
            except StorageError as exc:  # nobody else can write either
                log.warning("could not renew the claim on article %s: %s", run.article_id, exc.message)
                delay = beat / 3
                continue
            except Exception:
                log.exception("renewing the claim on article %s failed", run.article_id)
                delay = beat / 3
                continue
            delay = beat
            if not renewed:
                log.warning("lost the claim on article %s; the result will still be kept", run.article_id)
                return

    async def drain(self, grace: float) -> None:
        """Shutdown: start no extraction from now on, let running ones finish within
        `grace` seconds, then cancel the rest, which releases their claims."""
        self.stopping = True
        tasks = list(self._running.values())
        if tasks:
            done, pending = await asyncio.wait(tasks, timeout=grace)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        if self._saver is not None:
            self._saver.cancel()
            await asyncio.gather(self._saver, return_exceptions=True)
        if self.unsaved and await self.save_unsaved():
            log.error("stopping with %d cleaned articles that could not be stored (%s); they will be"
                      " cleaned again (a queued one is still in line)",
                      len(self.unsaved), ", ".join(map(str, self.unsaved)))
