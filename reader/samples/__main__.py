"""Build the sample database shipped as reader.db.example, the seed of a first run:
`python -m reader.samples reader.db.example`. It holds the sample feed and its
headlines, nothing cleaned and nothing queued, at the current schema. (The migration
tests keep their own frozen copy of the first released schema in tests/fixtures/.)"""

import asyncio
import contextlib
import sqlite3
import sys
from pathlib import Path

from ..core import running
from ..settings import Settings
from . import SAMPLE_FEED_URL


async def build(path: Path) -> None:
    path.unlink(missing_ok=True)
    settings = Settings(db=path, extract_processes=0)
    async with running(settings, worker=False, refresher=False) as reader:
        feed_id, _ = await reader._store.add_feed(SAMPLE_FEED_URL)
        [result] = await reader.refresh_ids([feed_id])
        if result.error:
            raise SystemExit(f"sample feed failed: {result.error}")
    # A self-contained file: it ships read-only inside the package, where a WAL-mode
    # database could not even be read (that needs a -shm file next to it). Each copy made
    # from it is switched to WAL when reader opens it.
    with contextlib.closing(sqlite3.connect(path)) as connection:
        connection.execute("PRAGMA journal_mode = DELETE")
        connection.execute("VACUUM")
    print(f"{path}: sample feed with {result.new} headlines")


asyncio.run(build(Path(sys.argv[1] if len(sys.argv) > 1 else "reader.db.example")))
