"""An article's page fetched: the HTML Accept header, and a refusal of anything that is
not an HTML page, worded for the card."""

from __future__ import annotations

import httpx

from . import FetchError, Response, fetch, is_html

HTML_ACCEPT = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.1"


async def fetch_page(client: httpx.AsyncClient, url: str, *, max_bytes: int, deadline: float) -> Response:
    """Fetch an article's page. Raises FetchError with a reason fit for the card; a
    response that is not an HTML page is refused as permanently as a 404."""
    response = await fetch(client, url, max_bytes=max_bytes, deadline=deadline, accept=HTML_ACCEPT)
    if not is_html(response.content_type, response.body):
        raise FetchError(f"not an HTML page ({response.content_type or 'unknown type'})")
    return response
