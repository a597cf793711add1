"""The background refresher the app's lifespan owns: due feeds, every interval, then the
age rules' sweep. It stores headlines (and what the rules decide for them) and nothing
else: it never queues."""

from __future__ import annotations

import asyncio
import logging
import time

import httpx

from ..pool import CpuPool
from ..store import Store

from ..feeds.refresh import refresh_feeds, sweep_aged

log = logging.getLogger(__name__)


async def refresh_periodically(
    store: Store, client: httpx.AsyncClient, pool: CpuPool, *, interval: float, max_bytes: int, deadline: float,
) -> None:
    """The background refresher owned by the app's lifespan: due feeds, every interval."""
    while True:
        try:
            due = await store.feeds_due(time.time() - interval)
            if due:
                await refresh_feeds(store, client, pool, due, max_bytes=max_bytes, deadline=deadline)
        except Exception:
            log.exception("background refresh failed; trying again next interval")
        try:  # what grew older than an age rule's days since the last round
            await sweep_aged(store)
        except Exception:
            log.exception("sweeping the age rules failed; trying again next round")
        await asyncio.sleep(min(interval, 60.0))
