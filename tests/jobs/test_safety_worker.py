"""The worker on a bad disk day, second pass (issue 26): a read-only database must cost
one warning, not a traceback every half second.

The database sits on a real tmpfs of its own, remounted read-only (needs root, as
tests/test_bad_disk.py does)."""

from __future__ import annotations

import asyncio
import logging

import pytest

from reader.jobs import worker
from reader.settings import Settings

from ..helpers import LoopbackServer, app_client, subscribe_slugs
from ..test_bad_disk import Disk, disk  # noqa: F401 (the tmpfs of its own, and the fixture)


async def test_a_worker_on_a_read_only_database_warns_once_and_then_keeps_quiet(
        settings: Settings, disk: Disk, pages: LoopbackServer, caplog: pytest.LogCaptureFixture) -> None:
    on_disk = settings.replace(db=disk.root / "reader.db", extract_processes=0)
    async with app_client(on_disk.replace(serve_workers=0)) as client:
        await subscribe_slugs(client, pages, ["one"])
    disk.remount("ro")

    caplog.set_level(logging.INFO, logger="reader")
    async with app_client(on_disk.replace(serve_workers=1, worker_interval=0.3)) as client:
        assert (await client.get("/")).status_code == 200
        await asyncio.sleep(12 * worker.WATCH_INTERVAL)  # a dozen looks for changes
    said = [r for r in caplog.records if r.name.startswith("reader.jobs") and r.levelno >= logging.WARNING]
    assert not any(r.exc_info for r in said), [r.getMessage() for r in said]  # no tracebacks
    # the watcher reads through the read-only connection, which works; the heartbeat and
    # the take cannot write, and say so once each
    assert not [r for r in said if "watching" in r.getMessage()], [r.getMessage() for r in said]
    assert len(said) <= 2, [r.getMessage() for r in said]

