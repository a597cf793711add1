"""What a device that reads offline asks: the articles to save for offline reading, and
the opens it reports once it is back online."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ..access import origin_of
from ..requests import reader_of
from .json import article_json, once, path_id


async def offline(request: Request) -> Response:
    """GET /api/offline: what a device keeps for offline reading (its service worker asks):
    the reading list's articles in tap order with their same-origin images, and the budget."""
    reader = reader_of(request)
    articles = await reader.offline_list(origin_of(request))
    return JSONResponse({
        "budget": reader.settings.offline_max_bytes,
        "pages": ["/?state=ready&unread=1", "/queue"],
        "articles": [{"id": a.id, "page": a.page, "images": a.images, "bytes": a.bytes} for a in articles],
    }, headers={"cache-control": "no-store"})


async def mark_opened(request: Request) -> Response:
    """POST /api/articles/{id}/opened: what opening the article's page does (read, not
    done with), for a device that opened its saved copy offline and reports it later."""
    reader = reader_of(request)
    article_id = path_id(request)

    async def apply() -> dict[str, Any]:
        return article_json(await reader.mark_opened(article_id))

    return await once(request, apply)
