"""What every JSON handler shares: reading a body and a path's id, the records as JSON,
the error as JSON, and an action a device may send more than once applied once."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ...core import MAX_ID, parse_int
from ...errors import Malformed
from ...records import Article, Feed, QueuedMany
from ..requests import reader_of


def path_id(request: Request, name: str = "id") -> int:
    value: int = request.path_params[name]
    return value


def query_int(request: Request, name: str, default: int | None = None, *, low: int = 1,
              high: int = MAX_ID) -> int | None:
    return parse_int(request.query_params.get(name), name, default, low=low, high=high)


async def json_body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        body = json.loads(raw)
    except ValueError:
        raise Malformed("request body is not valid JSON") from None
    except RecursionError:  # arrays nested thousands deep exhaust the parser's stack
        raise Malformed("request body is nested too deeply") from None
    if not isinstance(body, dict):
        raise Malformed("request body must be a JSON object")
    return body


def article_json(a: Article) -> dict[str, Any]:
    return {
        "id": a.id,
        "title": a.title,
        "url": a.url,
        "feed_id": a.feed_id,
        "feed_title": a.feed_title,
        "also_in": list(a.also_in),
        "published": a.published,
        "state": a.state,
        "position": a.position,
        "lane": a.lane,
        "wait_seconds": a.wait,
        "error": a.error if a.state == "failed" else None,
        "read": a.read_at is not None,
        "starred": a.starred_at is not None,
        "added_at": a.added_at,
        "tags": list(a.tags),
        # how far through the text the person got (0 to 1; `position` is the place in the line)
        "read_position": a.read_position,
        # done with it (read to the end or said done): off the reading list; read is another fact
        "done": a.done_at is not None,
        "done_at": a.done_at,
        # ready, but the text may be only the article's start: why (null: whole, or not ready)
        "partial": a.partial,
    }


def queued_json(a: Article) -> dict[str, Any]:
    """What a queue or unqueue answers: where the article stands now."""
    return {"id": a.id, "state": a.state, "position": a.position, "lane": a.lane, "wait_seconds": a.wait}


def queued_many_json(q: QueuedMany) -> dict[str, Any]:
    """What a bulk queue answers: the articles queued (oldest first), the seconds until the
    last of them is ready (null: no estimate, as with no worker running), the token of its
    undo, and how many the cap left for the next request."""
    return {"queued": len(q.ids), "ids": q.ids, "estimate_seconds": q.estimate, "undo": q.undo,
            "matched": q.matched, "left": q.left, "limit": q.limit}


def feed_json(f: Feed) -> dict[str, Any]:
    return {
        "id": f.id, "url": f.url, "title": f.title, "site_url": f.site_url,
        "refreshed_at": f.refreshed_at, "error": f.error, "note": f.note, "articles": f.articles, "unread": f.unread,
        "folder": f.folder, "paused_until": f.paused_until,
    }


async def once(request: Request, apply: Callable[[], Awaitable[dict[str, Any]]]) -> Response:
    """An action that may come from a device that was offline: with an Idempotency-Key
    header (the device's own id for it) it is applied once, and sending it again answers
    the same without applying it again. Without the header it is applied as asked."""
    key = request.headers.get("idempotency-key")
    if key is None:
        return JSONResponse(await apply())

    async def answer() -> str:
        return json.dumps(await apply())

    text = await reader_of(request).once(key, f"{request.method} {request.url.path}", answer)
    return Response(text, media_type="application/json")
