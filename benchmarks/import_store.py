"""The whole import: a generated 20,000-link Pocket CSV through `reader import` (the CLI
process, parse and store, in one real database file), wall time; then the same file again
(every link merges, nothing changes). Target: 20,000 links in under 30 s.

    python -m benchmarks.import_store
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .common import Row, main_for, verdict
from .import_parse import LINKS, pocket_csv

TARGET_SECONDS = 30.0


def _import(db: Path, path: Path) -> float:
    env = {**os.environ, "READER_REFRESH_INTERVAL": "0"}
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "reader", "import", str(path), "--db", str(db)], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - started


def run() -> list[Row]:
    with tempfile.TemporaryDirectory() as tmp:
        db, path = Path(tmp) / "reader.db", Path(tmp) / "pocket.csv"
        path.write_bytes(pocket_csv(LINKS))
        first = _import(db, path)
        connection = sqlite3.connect(db)
        saved = connection.execute("SELECT count(*) FROM articles WHERE feed_id IS NULL").fetchone()[0]
        queued = connection.execute("SELECT count(*) FROM queue").fetchone()[0]
        connection.close()
        again = _import(db, path)
    return [
        Row("import_store", f"`reader import` of a {LINKS:,}-row Pocket CSV into an empty library (process start,"
            " parse, one transaction per 2,000 links)", f"**{first:.1f} s** wall, {saved:,} links, {queued} queued",
            f"< {TARGET_SECONDS:.0f} s", verdict(first < TARGET_SECONDS and saved >= LINKS - 1 and queued == 0)),
        Row("import_store", "the same file again: every link merges, nothing changes", f"**{again:.1f} s** wall",
            f"< {TARGET_SECONDS:.0f} s", verdict(again < TARGET_SECONDS)),
    ]


if __name__ == "__main__":
    main_for(run)
