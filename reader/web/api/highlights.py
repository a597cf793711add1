"""/api/highlights and /api/articles/{id}/highlights: passages marked while reading, each
answered with its W3C Web Annotation (`annotation`), or as the annotation alone with
?format=jsonld. Writes take an Idempotency-Key, like the other actions an offline device
sends again (reader/static/offline.js)."""

from __future__ import annotations

import json
import re
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ...core import MAX_LIMIT
from ...core.highlights import annotation
from ...errors import Invalid, NotFound
from ..requests import reader_of
from .json import json_body, once, path_id, query_int


def _jsonld(request: Request) -> bool:
    wanted = request.query_params.get("format")
    if wanted not in (None, "", "json", "jsonld"):
        raise Invalid("format must be json or jsonld")
    return wanted == "jsonld"


def highlight_json(row: dict[str, Any], base: str) -> dict[str, Any]:
    return {
        "id": row["id"], "article_id": row["article_id"], "article_title": row.get("article_title"),
        "quote": row["quote"], "prefix": row["prefix"], "suffix": row["suffix"],
        "start": None if row["detached"] else row["start"], "end": None if row["detached"] else row["end"],
        "note": row["note"], "color": row["color"], "tags": row["tags"], "detached": row["detached"],
        "created_at": row["created_at"], "updated_at": row["updated_at"],
        "annotation": annotation(row, base),
    }


def _base(request: Request) -> str:
    return str(request.base_url).rstrip("/")


def _answer(request: Request, row: dict[str, Any]) -> dict[str, Any]:
    return annotation(row, _base(request)) if _jsonld(request) else highlight_json(row, _base(request))


def _page(request: Request, rows: list[dict[str, Any]], following: str | None) -> Response:
    base = _base(request)
    if _jsonld(request):
        page: dict[str, Any] = {"@context": "http://www.w3.org/ns/anno.jsonld", "type": "AnnotationPage",
                                "items": [annotation(r, base) for r in rows]}
    else:
        page = {"items": [highlight_json(r, base) for r in rows]}
    page["next"] = following
    return JSONResponse(page)


async def article_highlights(request: Request) -> Response:
    """GET /api/articles/{id}/highlights: in the order of the text, detached ones last."""
    _jsonld(request)
    rows = await reader_of(request).highlights(path_id(request))
    return _page(request, rows, None)


async def add_highlight(request: Request) -> Response:
    """POST /api/articles/{id}/highlights {quote, prefix?, suffix?} or {start, end} or both,
    with note?, color?, tags?: the highlight as placed in the text; 422 if it is not there."""
    reader = reader_of(request)
    article_id = path_id(request)
    body = await json_body(request)
    _jsonld(request)

    async def apply() -> dict[str, Any]:
        return _answer(request, await reader.add_highlight(article_id, body))

    return await once(request, apply)


async def get_highlight(request: Request) -> Response:
    _jsonld(request)
    return JSONResponse(_answer(request, await reader_of(request).highlight(path_id(request))))


# The action that makes a highlight, as `once` names it.
_MADE = re.compile(r"POST /api/articles/\d+/highlights")


async def _highlight_id(request: Request) -> int:
    """The highlight a path names: /api/highlights/{id}, or /api/highlights/made/{key}, the
    one made by the POST a device sent with that Idempotency-Key. A highlight made offline
    has no id on the device yet; its edits follow its POST in the device's outbox and name it
    this way. 404 while reader has not made it (or refused to)."""
    if "key" not in request.path_params:
        return path_id(request)
    answer = await reader_of(request).answered(request.path_params["key"], _MADE)
    try:
        found = json.loads(answer)["id"] if answer is not None else None
    except (ValueError, TypeError, KeyError):
        found = None
    if not isinstance(found, int) or isinstance(found, bool):
        raise NotFound("no highlight was made by that action: reader has not received it, or refused it")
    return found


async def update_highlight(request: Request) -> Response:
    """PATCH /api/highlights/{id} (or made/{key}) {note?, color?, tags?}."""
    reader = reader_of(request)
    highlight_id = await _highlight_id(request)
    body = await json_body(request)
    _jsonld(request)

    async def apply() -> dict[str, Any]:
        return _answer(request, await reader.update_highlight(highlight_id, body))

    return await once(request, apply)


async def delete_highlight(request: Request) -> Response:
    """DELETE /api/highlights/{id} (or made/{key})."""
    reader = reader_of(request)
    highlight_id = await _highlight_id(request)

    async def apply() -> dict[str, Any]:
        await reader.delete_highlight(highlight_id)
        return {"deleted": highlight_id}

    return await once(request, apply)


async def list_highlights(request: Request) -> Response:
    """GET /api/highlights ?tag ?article ?feed ?q ?before ?limit: newest first; `next` is
    the `before` of the following page (null on the last)."""
    params = request.query_params
    _jsonld(request)
    rows, following = await reader_of(request).list_highlights(
        article_id=query_int(request, "article"), feed_id=query_int(request, "feed"),
        tag=params.get("tag") or None, text=params.get("q") or None, before=params.get("before"),
        limit=query_int(request, "limit", 50, high=MAX_LIMIT) or 50)
    return _page(request, rows, following)
