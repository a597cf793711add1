"""Workers pull. A free worker takes the next article in line itself, and taking it
makes it its own (`Store.take_next`: one transaction). There is no dispatcher that
looks for idle workers, so any number of workers, in this process or others, can run
against one database without doing anything twice.

A worker never chooses work: everything it takes was put in line by a person's tap.

Several articles at once (`concurrency` pullers, READER_SERVE_WORKERS for `reader
serve`), politely: never two of one site. The exact rule, decided inside take_next's
transaction: a free puller takes the first article in service order (due time, then tap
order; a "queue first" tap is due `next_lead` earlier, so the lane rule is untouched)
whose host name has no live claim by a run that fetches, from any process. An article
is passed over only while another of its site is being cleaned, and only by articles of
other sites; among one site's articles the order is kept exactly. A puller that
finishes wakes the idle ones: its site is free again, and whatever it skipped may now
be taken.
"""

from __future__ import annotations

import asyncio
import logging
import time

from .cleaning import Cleaner
from ..errors import StorageError
from ..store import Store

log = logging.getLogger(__name__)

# How often an idle worker asks whether anything was committed by anyone (a tap in
# another process): one `PRAGMA data_version`, which reads no table.
WATCH_INTERVAL = 0.5


class Worker:
    def __init__(self, store: Store, cleaner: Cleaner, *, interval: float, claim_ttl: float, concurrency: int = 1):
        self.store = store
        self.cleaner = cleaner
        self.interval = interval
        self.claim_ttl = claim_ttl
        self.concurrency = concurrency
        self._nudge = asyncio.Event()
        self._stopping = False
        self._trouble: dict[str, str] = {}  # what fails to write -> the last message said
        self._stopped = asyncio.Event()

    def wake(self) -> None:
        """A tap in this process: look at the line now rather than at the next poll.
        Each waiter holds the event it saw before looking, and a wake replaces it, so a
        tap that lands between a worker's look and its wait is not missed."""
        nudge, self._nudge = self._nudge, asyncio.Event()
        nudge.set()

    async def run(self) -> None:
        """Pull until stopped. Extractions in progress are left to Cleaner.drain."""
        beat = asyncio.create_task(self._heartbeat())
        watch = asyncio.create_task(self._watch())
        try:
            await asyncio.gather(*(self._pull() for _ in range(self.concurrency)))
        finally:
            beat.cancel()
            watch.cancel()
            await asyncio.gather(beat, watch, return_exceptions=True)
            try:
                await asyncio.shield(self.store.worker_gone(self.cleaner.name))
            except StorageError:  # the row expires by itself; stopping must not fail for it
                pass

    async def _heartbeat(self) -> None:
        """Tell the database this worker is alive, for the wait estimates on the cards."""
        beat = min(self.interval, 5.0)
        while True:
            try:
                await self.store.worker_alive(self.cleaner.name, self.concurrency, ttl=3 * beat)
            except StorageError as exc:
                self._storage_trouble("the worker's heartbeat", exc)
            except Exception:
                log.exception("worker heartbeat failed")
            else:
                self._storage_trouble("the worker's heartbeat", None)
            await asyncio.sleep(beat)

    def _storage_trouble(self, what: str, exc: StorageError | None) -> None:
        """A full disk or a read-only file fails every write until someone fixes it: say
        so once when it starts and once when it is over, not every few seconds."""
        message = exc.message if exc is not None else None
        if message == self._trouble.get(what):
            return
        if message is None:
            log.info("%s works again", what)
            del self._trouble[what]
        else:
            log.warning("%s cannot write to the database: %s", what, message)
            self._trouble[what] = message

    async def _watch(self) -> None:
        """Wake the pullers when another connection (another process's tap, a claim handed
        back) has committed: `wake` reaches only this process, and waiting out the poll
        interval made a tap in another process wait up to that long."""
        seen: int | None = None
        failing = False
        while not self._stopping:
            version: int | None
            try:
                version = await self.store.data_version()
            except Exception as exc:
                # Whatever stops it (a file made read-only, a disk gone) stops it at every
                # look, twice a second: say so once, and once when it is over
                if not failing:
                    log.warning("watching the database for changes failed (%s); a tap in another process"
                                " waits for the poll interval until it works again", exc)
                failing = True
                version = seen
            else:
                if failing:
                    log.info("watching the database for changes works again")
                failing = False
            if seen is not None and version != seen:
                self.wake()
            seen = version
            await asyncio.sleep(WATCH_INTERVAL)

    async def _idle_for(self) -> float:
        """How long to wait before looking at the line again if nothing wakes us: the
        poll interval, or less when a claim on a queued article (whose holder may have
        died) runs out sooner."""
        try:
            expiry = await self.store.next_expiry()
        except Exception:
            log.exception("reading the claims' expiry failed")
            expiry = None
        if expiry is None:
            return self.interval
        return max(0.05, min(self.interval, expiry - time.time() + 0.05))

    def stop(self) -> None:
        self._stopping = True
        self._stopped.set()
        self.wake()

    async def _pull(self) -> None:
        while not self._stopping:
            nudge = self._nudge
            try:
                run = await self.store.take_next(self.cleaner.name, self.claim_ttl)
            except StorageError as exc:
                self._storage_trouble("taking from the queue", exc)
                run = None
            except Exception:
                log.exception("taking from the queue failed; retrying after the poll interval")
                run = None
            else:
                self._storage_trouble("taking from the queue", None)
            if run is not None:
                # Shielded: stopping the worker stops the pulling, not the extraction.
                try:
                    outcome, _ = await asyncio.shield(self.cleaner.start(run))
                except Exception:
                    log.exception("cleaning article %s failed", run.article_id)
                    outcome = None
                self.wake()  # the site of this article is free again for the idle pullers
                if outcome != "unavailable":
                    continue
                # The extraction processes keep dying: wait a poll interval before taking
                # the article (handed back, still first in line) again. Only a stop cuts
                # this short: handing the claim back was a commit, which wakes us.
                try:
                    await asyncio.wait_for(self._stopped.wait(), self.interval)
                except TimeoutError:
                    pass
                continue
            idle = await self._idle_for()  # first: a cancel here must not strand a wait() coroutine
            try:
                await asyncio.wait_for(nudge.wait(), idle)
            except TimeoutError:
                pass
