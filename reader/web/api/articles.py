"""/api/articles: lists and search, one article, saving, the queue taps, marks (read, star,
done), tags, the place reached in it, and its cleaned content (the direct lane)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ...core import MAX_LIMIT, SEARCH_MAX_OFFSET, parse_filter, parse_int, snippet_html
from ...errors import Invalid
from ..requests import opened_by, reader_of
from .json import article_json, json_body, once, path_id, query_int, queued_json, queued_many_json


async def list_articles(request: Request) -> Response:
    """GET /api/articles: every filter combines (state, feed, unread, starred, q). With
    q it is a search, best match first, each item with an HTML `snippet`."""
    reader = reader_of(request)
    params = request.query_params
    limit = query_int(request, "limit", 50, high=MAX_LIMIT) or 50
    f = parse_filter(params)
    if params.get("q") is not None:
        offset = query_int(request, "offset", 0, low=0, high=SEARCH_MAX_OFFSET) or 0
        found = await reader.search(params["q"].strip(), limit=limit, offset=offset, within=f, param="q")
        return JSONResponse({"items": [{**article_json(a), "snippet": str(snippet_html(a.snippet))}
                                       for a in found]})
    articles = await reader.listing(f, before=query_int(request, "before"), limit=limit)
    return JSONResponse({"items": [article_json(a) for a in articles]})


async def get_article(request: Request) -> Response:
    return JSONResponse(article_json(await reader_of(request).article(path_id(request))))


async def save_article(request: Request) -> Response:
    """POST /api/articles {"url", "title"?}: 201 saved, 200 saved already, 422 bad URL.
    Saving queues nothing: that takes a tap."""
    body = await json_body(request)
    article, created = await reader_of(request).save(body.get("url"), body.get("title"))
    return JSONResponse(article_json(article), status_code=201 if created else 200)


async def article_content(request: Request) -> Response:
    """GET /api/articles/{id}/content: the cleaned text, cleaned now if it is not: its HTML,
    the body's plain text and word count, and the lead (the dek) and the figures with their
    captions, read from the HTML (`text` holds neither; an article cleaned before leads were
    marked has its dek in the text and no lead). A link on
    another site's page (a top-level navigation carries the session cookie) gets the text if
    it is there and otherwise 403 {"error"}, with nothing started (Reader.open decides)."""
    article_id = path_id(request)
    content = await reader_of(request).open(article_id, by=opened_by(request))
    parts = content.parts()
    return JSONResponse({
        "id": article_id, "title": content.title, "author": content.author, "published": content.published,
        "lead": parts["lead"], "html": content.html, "text": content.text, "figures": parts["figures"],
        "words": content.words,
    })


async def queue_article(request: Request) -> Response:
    lane = (await json_body(request)).get("lane", "normal")
    return JSONResponse(queued_json(await reader_of(request).queue(path_id(request), lane)))


async def unqueue_article(request: Request) -> Response:
    reader = reader_of(request)
    article_id = path_id(request)

    async def apply() -> dict[str, Any]:
        return queued_json(await reader.unqueue(article_id))

    return await once(request, apply)


def _bulk_ids(body: dict[str, Any]) -> list[int] | None:
    raw_ids = body.get("ids")
    if raw_ids is None:
        return None
    if not isinstance(raw_ids, list):
        raise Invalid("ids must be a list of article ids")
    return [parse_int(i, "ids") or 0 for i in raw_ids]


async def tag_many(request: Request) -> Response:
    """POST /api/articles/tags {"tags": [...], "ids": [...]} or with the filter's parameters
    and "until": add the tags to a selection at once."""
    body = await json_body(request)
    tagged = await reader_of(request).tag_many(body.get("tags", []), ids=_bulk_ids(body), within=parse_filter(body),
                                               until=parse_int(body.get("until"), "until", low=0))
    return JSONResponse({"tagged": tagged})


async def _mark_many(request: Request, read: bool) -> Response:
    """POST (read) / DELETE (unread) /api/articles/read: {"ids": [...]} or the filter's
    parameters with "until", the newest article id the client has seen."""
    body = await json_body(request)
    ids = _bulk_ids(body)
    until = parse_int(body.get("until"), "until", low=0)
    marked = await reader_of(request).mark_many(read, ids=ids, within=parse_filter(body), until=until)
    return JSONResponse({"changed": len(marked.ids), "ids": marked.ids})


async def queue_many(request: Request) -> Response:
    """POST /api/articles/queue {"ids": [...]} or {"filter": {...}, "until": N} (the filter's
    parameters may also stand at the top level, as for /api/articles/read): a person's one
    act for many taps, the oldest first, at most `limit` at once (`left`: how many more
    the same request would queue next)."""
    body = await json_body(request)
    within = body.get("filter", body)
    if not isinstance(within, dict):
        raise Invalid("filter must be an object of a list's parameters (state, feed, unread, starred, q, tag, folder)")
    queued = await reader_of(request).queue_many(ids=_bulk_ids(body), within=parse_filter(within),
                                                  until=parse_int(body.get("until"), "until", low=0))
    return JSONResponse(queued_many_json(queued))


async def undo_queue(request: Request) -> Response:
    """POST /api/articles/queue/undo {"undo": token}: the bulk queue's articles that have not
    started leave the line; `started` says how many could not be taken back."""
    body = await json_body(request)
    if "undo" not in body:
        raise Invalid("undo: give the token the bulk queue answered")
    taken = await reader_of(request).undo_queue(body["undo"])
    return JSONResponse({"unqueued": len(taken.ids), "ids": taken.ids, "started": taken.started})


async def mark_many_read(request: Request) -> Response:
    return await _mark_many(request, True)


async def mark_many_unread(request: Request) -> Response:
    return await _mark_many(request, False)


async def _done_many(request: Request, done: bool) -> Response:
    """POST (done) / DELETE (not done) /api/articles/done: the same selection as the bulk
    read ({"ids": [...]} or the filter's parameters with "until"). DELETE with the ids a
    POST answered undoes it."""
    body = await json_body(request)
    until = parse_int(body.get("until"), "until", low=0)
    marked = await reader_of(request).done_many(done, ids=_bulk_ids(body), within=parse_filter(body), until=until)
    return JSONResponse({"changed": len(marked.ids), "ids": marked.ids})


async def done_many(request: Request) -> Response:
    return await _done_many(request, True)


async def not_done_many(request: Request) -> Response:
    return await _done_many(request, False)


async def set_tags(request: Request) -> Response:
    """POST /api/articles/{id}/tags {"tags": [...]}: exactly these tags from now on."""
    reader = reader_of(request)
    article_id = path_id(request)
    body = await json_body(request)
    if "tags" not in body:
        raise Invalid('tags: give the list of tags ({"tags": []} removes them all)')
    await reader.set_tags([article_id], body["tags"])
    return JSONResponse(article_json(await reader.article(article_id)))


async def set_position(request: Request) -> Response:
    """PUT /api/articles/{id}/position {"position": 0 to 1, "at"?: seconds since the epoch}."""
    reader = reader_of(request)
    article_id = path_id(request)
    body = await json_body(request)

    async def apply() -> dict[str, Any]:
        return article_json(await reader.set_position(article_id, body.get("position"), body.get("at")))

    return await once(request, apply)


async def _mark(request: Request, field: str, on: bool) -> Response:
    reader = reader_of(request)
    change = {"read": reader.mark_read, "star": reader.star, "done": reader.mark_done}[field]
    article_id = path_id(request)

    async def apply() -> dict[str, Any]:
        return article_json(await change(article_id, on))

    return await once(request, apply)


async def mark_read(request: Request) -> Response:
    return await _mark(request, "read", True)


async def mark_unread(request: Request) -> Response:
    return await _mark(request, "read", False)


async def star(request: Request) -> Response:
    return await _mark(request, "star", True)


async def unstar(request: Request) -> Response:
    return await _mark(request, "star", False)


async def mark_done(request: Request) -> Response:
    return await _mark(request, "done", True)


async def mark_not_done(request: Request) -> Response:
    return await _mark(request, "done", False)
