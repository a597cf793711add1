"""What is wrong with a database file, if anything: `reader check`, and `reader serve`
before it starts. Plain sqlite3 (run it in a thread from async code): it must work on a
file the Store could not open."""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from .schema import schema_problem

# Less free space than this and the next article or feed refresh may not fit.
LOW_SPACE = 1_000_000


@dataclass
class Health:
    """The findings about one file. `damaged` and `unreadable` stop `serve`;
    `read_only` and `full` let it serve what it can."""

    path: Path
    unreadable: str | None = None
    damaged: list[str] = field(default_factory=list)
    read_only: str | None = None
    full: str | None = None
    foreign: bool = False  # `unreadable` because the file is not this reader's to use

    @property
    def ok(self) -> bool:
        return not (self.unreadable or self.damaged or self.read_only or self.full)

    def problems(self) -> list[str]:
        found = [self.unreadable] if self.unreadable else []
        if self.damaged:
            more = f" (and {len(self.damaged) - 3} more)" if len(self.damaged) > 3 else ""
            found.append("the database file is damaged: " + "; ".join(self.damaged[:3]) + more
                         + "; `reader export` saves what is still readable")
        found += [p for p in (self.read_only, self.full) if p]
        return found


def writable(path: Path) -> bool:
    """Whether SQLite can write the file and the journal files beside it. os.access
    sees read-only mounts as well as permissions."""
    if not os.access(path, os.W_OK):
        return False
    if os.access(path.parent, os.W_OK):
        return True
    # The directory is closed, but WAL files already there (another process has the
    # database open) are all SQLite needs.
    return all(os.access(path.with_name(path.name + suffix), os.W_OK) for suffix in ("-wal", "-shm"))


def read_only_uri(path: Path) -> str:
    """A database in WAL mode on a file nobody can write cannot even be opened normally
    (SQLite cannot create its -shm): `immutable` reads it as it is, and refuses writes."""
    return path.resolve().as_uri() + "?immutable=1"


def connect_for_reading(path: Path) -> sqlite3.Connection:
    if writable(path):
        return sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True, timeout=30)
    return sqlite3.connect(read_only_uri(path), uri=True)


def check_file(path: Path, *, max_errors: int = 20) -> Health:
    """Open `path` for reading only and look: is it a reader database, is it intact
    (`PRAGMA quick_check`), can it be written, is there room on its disk."""
    path = Path(path)
    health = Health(path)
    if not path.is_file():
        health.unreadable = f"no database at {path}"
        return health
    if not writable(path):
        health.read_only = "the database is read-only (the file, its directory or the disk): reading works," \
                           " changes cannot be saved"
    else:
        free = shutil.disk_usage(path.parent).free
        if free < LOW_SPACE:
            health.full = f"the disk is full ({free // 1024} KB free): free some space"
    try:
        with contextlib.closing(connect_for_reading(path)) as db:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            problem = schema_problem(version, tables)
            if problem:
                health.unreadable = f"{path} cannot be used: {problem}"
                health.foreign = True
                return health
            rows = db.execute(f"PRAGMA quick_check({int(max_errors)})").fetchall()
    except sqlite3.DatabaseError as exc:
        if "not a database" in str(exc) or "file is not" in str(exc):
            health.unreadable = f"{path} is not a reader database (or its first page is damaged): {exc}"
        else:
            health.damaged.append(str(exc))
        return health
    health.damaged.extend(row[0] for row in rows if row[0] != "ok")
    return health
