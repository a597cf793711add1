"""The JSON API, an adapter over the core (reader/core.py): what scripts and other
clients rely on (documented in the README). Errors are always {"error": "..."} with the
status of their ReaderError (`error_response`, the one place they are mapped)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.convertors import IntegerConvertor, register_url_convertor
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .access import origin_of
from ..core import MAX_ID, MAX_LIMIT, SEARCH_MAX_OFFSET, Reader, parse_filter, parse_int, snippet_html
from ..errors import Invalid, Malformed, ReaderError
from ..records import Article, Feed


class RowIdConvertor(IntegerConvertor):
    """Path ids of at most 18 digits: a longer number (past SQLite's 64-bit integers)
    matches no route and is a 404, never an OverflowError."""

    regex = "[0-9]{1,18}"


register_url_convertor("rowid", RowIdConvertor())


def reader_of(request: Request) -> Reader:
    # by item: State's attribute lookup goes through __getattr__, ten times slower
    reader: Reader = request.app.state["reader"]
    return reader


def error_response(error: ReaderError) -> Response:
    return JSONResponse({"error": error.message}, status_code=error.status)


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
    }


def queued_json(a: Article) -> dict[str, Any]:
    """What a queue or unqueue answers: where the article stands now."""
    return {"id": a.id, "state": a.state, "position": a.position, "lane": a.lane, "wait_seconds": a.wait}


def feed_json(f: Feed) -> dict[str, Any]:
    return {
        "id": f.id, "url": f.url, "title": f.title, "site_url": f.site_url,
        "refreshed_at": f.refreshed_at, "error": f.error, "note": f.note, "articles": f.articles, "unread": f.unread,
        "folder": f.folder,
    }


async def list_feeds(request: Request) -> Response:
    feeds = await reader_of(request).feeds()
    return JSONResponse({"feeds": [feed_json(f) for f in feeds]})


async def add_feed(request: Request) -> Response:
    """A feed's URL, or a site's: its <link rel="alternate"> feed is found."""
    reader = reader_of(request)
    subscription = await reader.subscribe((await json_body(request)).get("url"))
    # read back with its article counts (the documented "articles" field)
    feed = await reader.feed(subscription.feed_id)
    return JSONResponse(feed_json(feed), status_code=201 if subscription.created else 200)


async def delete_feed(request: Request) -> Response:
    kept, removed = await reader_of(request).unsubscribe(path_id(request))
    return JSONResponse({"kept": kept, "removed": removed})


async def update_feed(request: Request) -> Response:
    """PATCH /api/feeds/{id} {"folder": "..." | null, "title"?: "..."}: the feed as it is now."""
    reader = reader_of(request)
    feed_id = path_id(request)
    body = await json_body(request)
    if "title" in body:
        await reader.rename_feed(feed_id, body["title"])
    if "folder" in body:
        await reader.set_folder(feed_id, body["folder"])
    return JSONResponse(feed_json(await reader.feed(feed_id)))


async def set_tags(request: Request) -> Response:
    """POST /api/articles/{id}/tags {"tags": [...]}: exactly these tags from now on."""
    reader = reader_of(request)
    article_id = path_id(request)
    body = await json_body(request)
    if "tags" not in body:
        raise Invalid('tags: give the list of tags ({"tags": []} removes them all)')
    await reader.set_tags([article_id], body["tags"])
    return JSONResponse(article_json(await reader.article(article_id)))


async def refresh(request: Request) -> Response:
    results = await reader_of(request).refresh()
    return JSONResponse({"feeds": [
        {"id": r.feed_id, "url": r.url, "new": r.new, "not_modified": r.not_modified, "error": r.error}
        for r in results
    ]})


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


async def mark_many_read(request: Request) -> Response:
    return await _mark_many(request, True)


async def mark_many_unread(request: Request) -> Response:
    return await _mark_many(request, False)


async def get_article(request: Request) -> Response:
    return JSONResponse(article_json(await reader_of(request).article(path_id(request))))


async def save_article(request: Request) -> Response:
    """POST /api/articles {"url", "title"?}: 201 saved, 200 saved already, 422 bad URL.
    Saving queues nothing: that takes a tap."""
    body = await json_body(request)
    article, created = await reader_of(request).save(body.get("url"), body.get("title"))
    return JSONResponse(article_json(article), status_code=201 if created else 200)


async def queue_article(request: Request) -> Response:
    lane = (await json_body(request)).get("lane", "normal")
    return JSONResponse(queued_json(await reader_of(request).queue(path_id(request), lane)))


async def unqueue_article(request: Request) -> Response:
    reader = reader_of(request)
    article_id = path_id(request)

    async def apply() -> dict[str, Any]:
        return queued_json(await reader.unqueue(article_id))

    return await _once(request, apply)


async def _once(request: Request, apply: Callable[[], Awaitable[dict[str, Any]]]) -> Response:
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


async def set_position(request: Request) -> Response:
    """PUT /api/articles/{id}/position {"position": 0 to 1, "at"?: seconds since the epoch}."""
    reader = reader_of(request)
    article_id = path_id(request)
    body = await json_body(request)

    async def apply() -> dict[str, Any]:
        return article_json(await reader.set_position(article_id, body.get("position"), body.get("at")))

    return await _once(request, apply)


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


async def article_content(request: Request) -> Response:
    article_id = path_id(request)
    content = await reader_of(request).open(article_id)
    return JSONResponse({
        "id": article_id, "title": content.title, "author": content.author, "published": content.published,
        "html": content.html, "text": content.text, "words": content.words,
    })


async def queue(request: Request) -> Response:
    items = [a for a in await reader_of(request).line() if a.state == "queued"]
    return JSONResponse({"items": [
        {"id": a.id, "position": a.position, "lane": a.lane, "title": a.title, "url": a.url,
         "wait_seconds": a.wait}
        for a in items
    ]})


async def stats(request: Request) -> Response:
    return JSONResponse(await reader_of(request).stats())


async def _mark(request: Request, field: str, on: bool) -> Response:
    reader = reader_of(request)
    change = reader.mark_read if field == "read" else reader.star
    article_id = path_id(request)

    async def apply() -> dict[str, Any]:
        return article_json(await change(article_id, on))

    return await _once(request, apply)


async def mark_read(request: Request) -> Response:
    return await _mark(request, "read", True)


async def mark_opened(request: Request) -> Response:
    """POST /api/articles/{id}/opened: what opening the article's page does (read, not
    done with), for a device that opened its saved copy offline and reports it later."""
    reader = reader_of(request)
    article_id = path_id(request)

    async def apply() -> dict[str, Any]:
        return article_json(await reader.mark_opened(article_id))

    return await _once(request, apply)


async def mark_unread(request: Request) -> Response:
    return await _mark(request, "read", False)


async def star(request: Request) -> Response:
    return await _mark(request, "star", True)


async def unstar(request: Request) -> Response:
    return await _mark(request, "star", False)


routes = [
    Route("/api/feeds", list_feeds, methods=["GET"]),
    Route("/api/feeds", add_feed, methods=["POST"]),
    Route("/api/feeds/{id:rowid}", delete_feed, methods=["DELETE"]),
    Route("/api/feeds/{id:rowid}", update_feed, methods=["PATCH"]),
    Route("/api/refresh", refresh, methods=["POST"]),
    Route("/api/articles", list_articles, methods=["GET"]),
    Route("/api/articles", save_article, methods=["POST"]),
    Route("/api/articles/read", mark_many_read, methods=["POST"]),
    Route("/api/articles/tags", tag_many, methods=["POST"]),
    Route("/api/articles/read", mark_many_unread, methods=["DELETE"]),
    Route("/api/articles/{id:rowid}", get_article, methods=["GET"]),
    Route("/api/articles/{id:rowid}/queue", queue_article, methods=["POST"]),
    Route("/api/articles/{id:rowid}/queue", unqueue_article, methods=["DELETE"]),
    Route("/api/articles/{id:rowid}/content", article_content, methods=["GET"]),
    Route("/api/articles/{id:rowid}/read", mark_read, methods=["POST"]),
    Route("/api/articles/{id:rowid}/read", mark_unread, methods=["DELETE"]),
    Route("/api/articles/{id:rowid}/opened", mark_opened, methods=["POST"]),
    Route("/api/articles/{id:rowid}/star", star, methods=["POST"]),
    Route("/api/articles/{id:rowid}/tags", set_tags, methods=["POST"]),
    Route("/api/articles/{id:rowid}/star", unstar, methods=["DELETE"]),
    Route("/api/articles/{id:rowid}/position", set_position, methods=["PUT"]),
    Route("/api/offline", offline, methods=["GET"]),
    Route("/api/queue", queue, methods=["GET"]),
    Route("/api/stats", stats, methods=["GET"]),
]
