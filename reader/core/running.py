"""The composition root: `running(settings)` opens the long-lived resources (database,
HTTP client, extraction pool), starts the background work (worker, refresher), yields
the one Reader built on them, and stops it all in order. The web app's lifespan and the
command line both enter it; nothing else builds a Reader."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from ..fetch import make_client
from ..fetch.guard import Resolver
from ..samples.transport import sample_sites
from ..jobs.cleaning import Cleaner, worker_name
from ..jobs.refresher import refresh_periodically
from ..jobs.worker import Worker
from ..pool import CpuPool
from ..settings import Settings
from ..store import Store
from .reader import Reader

log = logging.getLogger(__name__)


@contextlib.asynccontextmanager
async def running(
    settings: Settings, *, role: str = "serve", worker: bool = True, refresher: bool = True,
    concurrency: int = 1, resolver: Resolver | None = None,
) -> AsyncIterator[Reader]:
    """Open everything, start the background work, and on exit stop it in order:
    stop pulling, let in-flight extractions finish (bounded), then close."""
    store = await Store.open(settings.db)
    try:
        await store.close_expired_claims()
    except Exception:  # a database that cannot be written is reported by what needs it
        log.exception("closing the runs of expired claims failed")
    store.feed_items = max(1, settings.feed_items)
    store.raw_pages_budget = max(0, settings.raw_pages_bytes)
    client = make_client(allow_private=settings.allow_private_urls, deadline=settings.fetch_timeout,
                         resolver=resolver, sites=sample_sites())
    pool = CpuPool(settings.extract_processes, warm=worker or refresher)
    cleaner = Cleaner(store, client, pool, settings, worker_name(role))
    the_worker = (
        Worker(store, cleaner, interval=settings.worker_interval, claim_ttl=settings.claim_ttl,
               concurrency=concurrency)
        if worker else None
    )
    background: list[asyncio.Task[None]] = []
    reader: Reader | None = None
    try:
        if the_worker is not None:
            background.append(asyncio.create_task(the_worker.run(), name="worker"))
        if refresher and settings.refresh_interval > 0:
            background.append(asyncio.create_task(
                refresh_periodically(store, client, pool, interval=settings.refresh_interval,
                                     max_bytes=settings.max_page_bytes, deadline=settings.fetch_timeout),
                name="refresher",
            ))
        reader = Reader(settings, store, client, pool, cleaner, the_worker)
        yield reader
    finally:
        if reader is not None:
            await reader.finish_imports()
        if the_worker is not None:
            the_worker.stop()
        await cleaner.drain(settings.shutdown_grace)
        for task in background:
            task.cancel()
        await asyncio.gather(*background, return_exceptions=True)
        await client.aclose()
        await asyncio.to_thread(pool.close)
        await store.close()
