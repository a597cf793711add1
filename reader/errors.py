"""One exception tree for everything reader refuses or cannot do.

The core (reader/core.py) and the modules under it raise these; each interface maps
them in one place: the JSON API to {"error": message} with `status`, the pages to the
error page with `status`, the command line to one line on stderr and exit status 2.
Anything else that escapes is a bug, and still answered without a traceback.
"""

from __future__ import annotations


class ReaderError(Exception):
    """Something reader refuses or cannot do; the message is for the person."""

    status = 500

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


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


class ExtractionFailed(ReaderError):
    """Fetching or cleaning the article failed; the message says why."""

    status = 502


class Unavailable(ReaderError):
    """The database cannot do this right now (full disk, read-only file, locked)."""

    status = 503
