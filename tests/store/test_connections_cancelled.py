"""A connection being opened when its task is cancelled is closed, not left behind.

aiosqlite opens each connection on a thread of its own. A task cancelled while that thread
is still opening (the worker's first `data_version`, a read connection opened for one
statement, shutdown right after start) used to drop the connection on the floor: its
thread finished the open later and, with the test's loop already closed, died with
"Event loop is closed" (CI failed on it once), or it waited on its queue forever."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

from reader.core.running import running
from reader.settings import Settings
from reader.store import Store


def connection_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if "_connection_worker_thread" in t.name and t.is_alive()}


async def settle(before: set[threading.Thread]) -> set[threading.Thread]:
    """The connection threads that outlived what opened them, after a moment to finish."""
    for _ in range(100):
        left = connection_threads() - before
        if not left:
            return left
        await asyncio.sleep(0.02)
    return connection_threads() - before


async def test_reads_cancelled_while_their_connection_opens_leave_no_thread(settings: Settings) -> None:
    before = connection_threads()
    store = await Store.open(settings.db)
    try:
        for delay in [0.0, 0.0005, 0.001, 0.002, 0.004, 0.008] * 3:
            # More reads at once than idle connections: each of the others opens one.
            reads = [asyncio.ensure_future(store.data_version())]
            reads += [asyncio.ensure_future(store.all_tags()) for _ in range(6)]
            await asyncio.sleep(delay)
            for read in reads:
                read.cancel()
            await asyncio.gather(*reads, return_exceptions=True)
        assert (await store.all_tags()) == []  # still answers after all that
    finally:
        await store.close()
    assert await settle(before) == set()


async def test_shutting_down_at_any_moment_of_start_leaves_no_thread(settings: Settings) -> None:
    before = connection_threads()
    for delay in [0.0, 0.001, 0.003, 0.006, 0.01, 0.02]:
        async with running(settings) as reader:
            await asyncio.sleep(delay)
            assert reader is not None
    assert await settle(before) == set()


def test_no_thread_outlives_a_closed_loop(settings: Settings, tmp_path: Path) -> None:
    """The failure CI saw, made on purpose: a loop that closes right after a cancelled
    open. A thread left behind raises in the background (pytest turns it into an error)."""
    before = connection_threads()

    async def start_and_cancel() -> None:
        store = await Store.open(settings.db)
        try:
            for _ in range(20):
                reads = [asyncio.ensure_future(store.all_tags()) for _ in range(6)]
                reads.append(asyncio.ensure_future(store.data_version()))
                await asyncio.sleep(0)
                for read in reads:
                    read.cancel()
                await asyncio.gather(*reads, return_exceptions=True)
        finally:
            await store.close()

    asyncio.run(start_and_cancel())
    for _ in range(100):  # each thread left finishes its last job within moments, or never
        if not connection_threads() - before:
            break
        time.sleep(0.02)
    assert connection_threads() - before == set()
