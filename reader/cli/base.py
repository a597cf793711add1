"""What every command shares: argparse types, one-line messages, and the Reader opened
quietly (no worker, no refresher) for a command that does one thing and ends."""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from ..core import Reader
from ..settings import Settings
# The composition root (the Reader with its store, pool and client) is still
# reader/web/app.py's `running`; once it moves into reader/core, import it from there.
from ..core import running

Command = Callable[[Settings, argparse.Namespace], int]


def whole(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: a whole number within [low, high], else argparse's one-line usage
    error (exit status 2). A port past 65535 reached bind() as a traceback, an id past
    SQLite's 64 bits reached the driver as one, and a concurrency of 0 was a worker that
    never took anything."""

    def number(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text} is not between {low} and {high}")
        return value

    return number


def one_line(text: str) -> str:
    """A message fit for one line of a terminal: no newlines, no lone surrogates."""
    return " ".join(text.encode("utf-8", "replace").decode("utf-8").split())


def database_path_problem(path: Path) -> str | None:
    """What makes `path` no place for a database before SQLite is asked: SQLite's own
    answers for these ("unable to open database file", or an aiosqlite thread left
    behind) came out as tracebacks."""
    if path.exists() and not path.is_file():
        return f"{path} is a directory, not a database file"
    if not path.exists() and not path.parent.is_dir():
        return f"no such directory: {path.parent} (for the database {path})"
    return None


@contextlib.asynccontextmanager
async def quiet(settings: Settings) -> AsyncIterator[Reader]:
    """The Reader without a worker or a refresher: a command's own work only."""
    async with running(settings, role="cli", worker=False, refresher=False) as reader:
        yield reader
