"""What a handler reads off a request besides its parameters: the Reader it is served
by, whether htmx sent it, and who opened an article (the HTTP conditions the core's
`OpenedBy` is told in). Pages and the JSON API both import this; it imports neither."""

from __future__ import annotations

from starlette.requests import Request

from ..core import OpenedBy, Reader
from .access import from_another_site


def reader_of(request: Request) -> Reader:
    # by item: State's attribute lookup goes through __getattr__, ten times slower
    reader: Reader = request.app.state["reader"]
    return reader


def is_htmx(request: Request) -> bool:
    return request.headers.get("hx-request") == "true"


# The service worker sends this header (value "save") when it saves an article for
# offline reading: that fetch is no person opening it, so it does not mark it read.
OFFLINE_SAVE_HEADER = "x-reader-offline"


def opened_by(request: Request) -> OpenedBy:
    """Who opened an article (or asked for a book of them), from the request: a link on
    another site's page is not the person asking; the service worker saving the reading
    list for offline reading sends OFFLINE_SAVE_HEADER; anything else is the person, from
    reader (an e-reader app sends no Sec-Fetch-Site: it is the person). What each may
    start is the core's rule (reader/core/reading.py)."""
    if from_another_site(request):
        return "another site"
    if request.headers.get(OFFLINE_SAVE_HEADER) == "save":
        return "offline copy"
    return "person"
