"""/api/queue and /api/stats: the line and the ledger's counts."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ..requests import reader_of


async def queue(request: Request) -> Response:
    items = [a for a in await reader_of(request).line() if a.state == "queued"]
    return JSONResponse({"items": [
        {"id": a.id, "position": a.position, "lane": a.lane, "title": a.title, "url": a.url,
         "wait_seconds": a.wait}
        for a in items
    ]})


async def stats(request: Request) -> Response:
    return JSONResponse(await reader_of(request).stats())
