"""One exception tree for everything reader refuses or cannot do.

The core (reader/core.py) and the modules under it raise these; each interface maps
them in one place: the JSON API to {"error": message} with `status`, the pages to the
error page with `status`, the command line to one line on stderr and exit status 2.
Anything else that escapes is a bug, and still answered without a traceback.
"""

from __future__ import annotations


class ReaderError(Exception):
    """Something reader refuses or cannot do; the message is for the person.

    Each kind below carries its usual HTTP status; one error that needs another (a
    replayed answer, a framework's 404) or a retry hint is built with them as arguments,
    never patched after it is made."""

    status = 500
    retry_after: int | None = None  # seconds, sent as Retry-After where the interface can

    def __init__(self, message: str, *, status: int | None = None, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status
        if retry_after is not None:
            self.retry_after = retry_after


class NotFound(ReaderError):
    """No such article or feed (deleted, or never there)."""

    status = 404


class Invalid(ReaderError):
    """The input is not acceptable: a URL that is not http(s), a lane that does not exist."""

    status = 422


class Malformed(Invalid):
    """The request itself cannot be read: not JSON, not a JSON object, nested too deep."""

    status = 400


class Conflict(ReaderError):
    """The request is valid, but the library's state does not allow it now."""

    status = 409


class Forbidden(ReaderError):
    """Not for whoever asked: a link on another site's page cannot start work (fetching,
    cleaning) the person did not ask for."""

    status = 403


class ExtractionFailed(ReaderError):
    """Fetching or cleaning the article failed; the message says why."""

    status = 502


class FetchFailed(ReaderError):
    """A page, a feed or an image could not be fetched: the network, the site, or the
    address guard said no (reader/fetch). The message is written for the card."""

    status = 502


class Unavailable(ReaderError):
    """The database cannot do this right now (full disk, read-only file, locked)."""

    status = 503


class StorageError(Unavailable):
    """SQLite could not do what was asked: the disk is full, the file is read-only or
    damaged. Reads usually still work, so one failed write must not take the app down.
    `kind` is "full", "read-only", "damaged", "busy", "io", or "foreign" (a file this
    reader may not use: another program's SQLite database, or a newer reader's)."""

    def __init__(self, message: str, kind: str, *, retry_after: int | None = None) -> None:
        super().__init__(message, retry_after=retry_after)
        self.kind = kind


# SQLite's primary result codes (the low byte of an extended code) and what each means
# for the person: https://www.sqlite.org/rescode.html
_SQLITE_KINDS: dict[int, tuple[str, str]] = {
    13: ("full", "the disk is full: free some space and try again (nothing was changed)"),
    8: ("read-only", "the database is read-only: reading works, changes cannot be saved"),
    11: ("damaged", "the database file is damaged: run `reader check`, and `reader export` to save what is left"),
    26: ("damaged", "the database file is damaged (not a database): run `reader check`"),
    5: ("busy", "the database is busy: try again in a moment"),
    6: ("busy", "the database is busy: try again in a moment"),
    10: ("io", "the disk could not be read or written: try again, and check the disk"),
    14: ("io", "the database file cannot be opened: check that it and its directory exist and are readable"),
}


# aiosqlite and older builds do not always carry the code: then the message tells.
_SQLITE_MESSAGES: tuple[tuple[str, int], ...] = (
    ("disk is full", 13), ("readonly", 8), ("read-only", 8), ("malformed", 11),
    ("not a database", 26), ("locked", 5), ("disk i/o", 10),
)


def storage_error(exc: Exception) -> StorageError | None:
    """The StorageError for an exception from SQLite, with a sentence a person can act
    on; None for anything that is not the file's or the disk's fault (a statement's
    error is a bug, or, like an FTS syntax error, the caller's to handle)."""
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    if primary not in _SQLITE_KINDS:
        text = str(exc).lower()
        primary = next((p for needle, p in _SQLITE_MESSAGES if needle in text), None)
    if primary is None:
        return None
    kind, message = _SQLITE_KINDS[primary]
    return StorageError(message, kind)


class Stopping(Unavailable):
    """This process is shutting down: it starts no new work. Another process, or this one
    after its restart, will do it."""

    retry_after = 5

    def __init__(self, message: str = "reader is shutting down; try again in a few seconds") -> None:
        super().__init__(message)
