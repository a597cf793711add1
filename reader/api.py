"""The JSON API: what scripts and other clients rely on (documented in the README).
Errors are always {"error": "..."} with a fitting status."""

from __future__ import annotations

import json
import sqlite3
from typing import Any
from urllib.parse import urlsplit

from starlette.convertors import IntegerConvertor, register_url_convertor
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .cleaning import ArticleFailed, UnknownArticle
from .discover import NoFeedFound, subscribe_with
from .line import estimate_wait
from .store import STATES, fts_query

LANES = ("normal", "next")
MAX_LIMIT = 500

# SQLite integers are signed 64-bit: an id past 2**63 - 1 in a path or query string made
# the driver raise OverflowError, a bare 500 (not JSON, and outside the CSP middleware).
# Ids are bounded where they come in: path ids by this convertor (at most 18 digits, so a
# longer number matches no route and is a 404), query ids by int_param (422).
MAX_ID = 2**63 - 1


class RowIdConvertor(IntegerConvertor):
    regex = "[0-9]{1,18}"


register_url_convertor("rowid", RowIdConvertor())


class ApiError(Exception):
    def __init__(self, status: int, message: str):
        self.status = status
        self.message = message


def reader_of(request: Request):
    return request.app.state.reader


def valid_url(value: Any) -> str:
    """An http(s) URL with a host, or ApiError 422."""
    if not isinstance(value, str) or not value.strip():
        raise ApiError(422, "url is required")
    url = value.strip()
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ApiError(422, f"not an http or https URL: {url!r}")
    return url


def int_param(request: Request, name: str, default: int | None = None, *, low: int = 1, high: int = MAX_ID):
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ApiError(422, f"{name} must be an integer") from None
    if value < low or (high is not None and value > high):
        raise ApiError(422, f"{name} must be between {low} and {high}")
    return value


def path_id(request: Request, name: str = "id") -> int:
    return request.path_params[name]


async def json_body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        body = json.loads(raw)
    except ValueError:
        raise ApiError(400, "request body is not valid JSON") from None
    if not isinstance(body, dict):
        raise ApiError(400, "request body must be a JSON object")
    return body


def article_json(a: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": a["id"],
        "title": a["title"],
        "url": a["url"],
        "feed_id": a["feed_id"],
        "feed_title": a.get("feed_title"),
        "published": a["published"],
        "state": a["state"],
        "position": a.get("position"),
        "lane": a.get("lane"),
        "wait_seconds": a.get("wait"),
        "error": a["error"] if a["state"] == "failed" else None,
        "read": a.get("read_at") is not None,
        "starred": a.get("starred_at") is not None,
    }


def tap_json(articles: list[dict[str, Any]]) -> dict[str, Any]:
    """What a tap answers: where the article stands now."""
    [a] = articles
    return {"id": a["id"], "state": a["state"], "position": a["position"], "lane": a["lane"],
            "wait_seconds": a.get("wait")}


async def add_waits(reader, articles: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Estimated seconds until each queued article is ready (None when there is nothing
    honest to say), and how many articles the live workers clean at once."""
    if any(a["state"] == "queued" for a in articles):
        durations = await reader.store.recent_durations()
        capacity = await reader.store.capacity()
        for a in articles:
            if a["state"] == "queued":
                a["wait"] = estimate_wait(a["position"], durations, capacity)
                a["capacity"] = capacity
    return articles


def feed_json(f: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f["id"], "url": f["url"], "title": f["title"], "site_url": f["site_url"],
        "refreshed_at": f["refreshed_at"], "error": f["error"], "articles": f.get("articles"),
    }


async def list_feeds(request: Request) -> Response:
    feeds = await reader_of(request).store.list_feeds()
    return JSONResponse({"feeds": [feed_json(f) for f in feeds]})


async def add_feed(request: Request) -> Response:
    reader = reader_of(request)
    url = valid_url((await json_body(request)).get("url"))
    # a feed's URL, or a site's: its <link rel="alternate"> feed is found (reader/discover.py)
    try:
        subscription = await subscribe_with(reader, url)
    except NoFeedFound as exc:
        raise ApiError(422, str(exc)) from None
    feed_id, created = subscription.feed_id, subscription.created
    # Read the feed back from list_feeds, not get_feed: only list_feeds counts its articles,
    # and without it the documented "articles" field came back null here.
    feed = next((f for f in await reader.store.list_feeds() if f["id"] == feed_id), None)
    if feed is None:  # unsubscribed by another request in the meantime
        raise ApiError(404, "no such feed")
    return JSONResponse(feed_json(feed), status_code=201 if created else 200)


async def delete_feed(request: Request) -> Response:
    if not await reader_of(request).store.delete_feed(path_id(request)):
        raise ApiError(404, "no such feed")
    return Response(status_code=204)


async def refresh(request: Request) -> Response:
    reader = reader_of(request)
    results = await reader.refresh(await reader.store.list_feeds())
    return JSONResponse({"feeds": [
        {"id": r.feed_id, "url": r.url, "new": r.new, "not_modified": r.not_modified, "error": r.error}
        for r in results
    ]})


async def list_articles(request: Request) -> Response:
    state = request.query_params.get("state") or None
    if state is not None and state not in STATES:
        raise ApiError(422, f"state must be one of {', '.join(STATES)}")
    reader = reader_of(request)
    if request.query_params.get("q") is not None:
        return await search_articles(request)
    articles = await add_waits(reader, await reader.store.list_articles(
        state=state,
        feed_id=int_param(request, "feed"),
        before=int_param(request, "before"),
        unread=bool_param(request, "unread"),
        starred=bool_param(request, "starred"),
        limit=int_param(request, "limit", 50, high=MAX_LIMIT),
    ))
    return JSONResponse({"items": [article_json(a) for a in articles]})


async def get_article(request: Request) -> Response:
    reader = reader_of(request)
    article = await reader.store.get_article(path_id(request))
    if article is None:
        raise ApiError(404, "no such article")
    await add_waits(reader, [article])
    return JSONResponse(article_json(article))


async def tap(reader, article_id: int, lane: str) -> dict[str, Any]:
    """The tap: the one way into the queue, shared by the API and the browse page."""
    if lane not in LANES:
        raise ApiError(422, f"lane must be one of {', '.join(LANES)}")
    if not await reader.store.enqueue(article_id, lane, reader.settings.next_lead):
        raise ApiError(404, "no such article")
    if reader.worker is not None:
        reader.worker.wake()
    return await reader.store.get_article(article_id)


async def untap(reader, article_id: int) -> dict[str, Any]:
    await reader.store.dequeue(article_id)
    article = await reader.store.get_article(article_id)
    if article is None:
        raise ApiError(404, "no such article")
    return article


async def queue_article(request: Request) -> Response:
    lane = (await json_body(request)).get("lane", "normal")
    reader = reader_of(request)
    article = await tap(reader, path_id(request), lane)
    return JSONResponse(tap_json(await add_waits(reader, [article])))


async def unqueue_article(request: Request) -> Response:
    reader = reader_of(request)
    article = await untap(reader, path_id(request))
    return JSONResponse(tap_json(await add_waits(reader, [article])))


async def article_content(request: Request) -> Response:
    reader = reader_of(request)
    article_id = path_id(request)
    if await reader.store.get_article(article_id) is None:
        raise ApiError(404, "no such article")
    try:
        content = await reader.cleaner.open(article_id)
    except ArticleFailed as exc:
        raise ApiError(502, str(exc)) from None
    except UnknownArticle:
        raise ApiError(404, "no such article") from None
    return JSONResponse({
        "id": article_id, "title": content["title"], "author": content["author"],
        "published": content["published"], "html": content["html"], "text": content["text"],
        "words": content["words"],
    })


async def queue(request: Request) -> Response:
    reader = reader_of(request)
    items = await add_waits(reader, [a for a in await reader.store.line() if a["state"] == "queued"])
    return JSONResponse({"items": [
        {"id": a["id"], "position": a["position"], "lane": a["lane"], "title": a["title"], "url": a["url"],
         "wait_seconds": a.get("wait")}
        for a in items
    ]})


async def stats(request: Request) -> Response:
    return JSONResponse(await reader_of(request).store.stats())


routes = [
    Route("/api/feeds", list_feeds, methods=["GET"]),
    Route("/api/feeds", add_feed, methods=["POST"]),
    Route("/api/feeds/{id:rowid}", delete_feed, methods=["DELETE"]),
    Route("/api/refresh", refresh, methods=["POST"]),
    Route("/api/articles", list_articles, methods=["GET"]),
    Route("/api/articles/{id:rowid}", get_article, methods=["GET"]),
    Route("/api/articles/{id:rowid}/queue", queue_article, methods=["POST"]),
    Route("/api/articles/{id:rowid}/queue", unqueue_article, methods=["DELETE"]),
    Route("/api/articles/{id:rowid}/content", article_content, methods=["GET"]),
    Route("/api/queue", queue, methods=["GET"]),
    Route("/api/stats", stats, methods=["GET"]),
]



# -- the library: save any link (an article without a feed) -------------------------------


async def save_article(request: Request) -> Response:
    """POST /api/articles {"url", "title"?}: 201 saved, 200 saved already, 422 bad URL.
    Saving queues nothing: that takes a tap."""
    from .sanitize import plain_text

    reader = reader_of(request)
    body = await json_body(request)
    url = valid_url(body.get("url"))
    title = body.get("title")
    if title is not None and not isinstance(title, str):
        raise ApiError(422, "title must be a string")
    article_id, created = await reader.store.save_link(url, plain_text(title or "")[:500] or None)
    article = await reader.store.get_article(article_id)
    await add_waits(reader, [article])
    return JSONResponse(article_json(article), status_code=201 if created else 200)


routes += [
    Route("/api/articles", save_article, methods=["POST"]),
]

async def _api_error(request: Request, exc: ApiError) -> Response:
    return JSONResponse({"error": exc.message}, status_code=exc.status)


async def _http_error(request: Request, exc: HTTPException) -> Response:
    if request.url.path.startswith("/api/"):
        return JSONResponse({"error": exc.detail}, status_code=exc.status_code, headers=exc.headers)
    from .views import error_page  # the HTML side renders its own error page

    return error_page(request, exc.status_code, exc.detail)


exception_handlers = {ApiError: _api_error, HTTPException: _http_error}


# -- the reading side: search, read/unread, star ------------------------------------------

SEARCH_MAX_OFFSET = 10_000


def bool_param(request: Request, name: str) -> bool:
    raw = (request.query_params.get(name) or "").lower()
    if raw in ("", "0", "false", "no", "off"):
        return False
    if raw in ("1", "true", "yes", "on"):
        return True
    raise ApiError(422, f"{name} must be 1 or 0")


def snippet_html(snippet: str | None) -> str:
    """The snippet's text HTML-escaped, its matches in <mark> … </mark>."""
    from .views import _highlight

    return str(_highlight(snippet))


async def search_articles(request: Request) -> Response:
    """GET /api/articles?q=…: best match first, each item with an HTML `snippet`. What a
    person typed is made safe by fts_query; nothing searchable left is a 422, not a 500."""
    text = (request.query_params.get("q") or "").strip()
    query = fts_query(text)
    if not query:
        raise ApiError(422, "q has nothing to search for: give it words or a \"quoted phrase\"")
    reader = reader_of(request)
    limit = int_param(request, "limit", 50, high=MAX_LIMIT)
    offset = int_param(request, "offset", 0, low=0, high=SEARCH_MAX_OFFSET)
    try:
        found = await reader.store.search(query, limit=limit, offset=offset)
    except sqlite3.OperationalError:  # fts_query leaves no syntax; this is a last resort
        raise ApiError(422, "q could not be searched: use plain words") from None
    articles = await add_waits(reader, found)
    return JSONResponse({"items": [{**article_json(a), "snippet": snippet_html(a["snippet"])} for a in articles]})


async def _mark(request: Request, field: str, on: bool) -> Response:
    reader = reader_of(request)
    article_id = path_id(request)
    change = reader.store.mark_read if field == "read" else reader.store.star
    if not await change(article_id, on):
        raise ApiError(404, "no such article")
    article = await reader.store.get_article(article_id)
    if article is None:
        raise ApiError(404, "no such article")
    await add_waits(reader, [article])
    return JSONResponse(article_json(article))


async def mark_read(request: Request) -> Response:
    return await _mark(request, "read", True)


async def mark_unread(request: Request) -> Response:
    return await _mark(request, "read", False)


async def star(request: Request) -> Response:
    return await _mark(request, "star", True)


async def unstar(request: Request) -> Response:
    return await _mark(request, "star", False)


routes += [
    Route("/api/articles/{id:rowid}/read", mark_read, methods=["POST"]),
    Route("/api/articles/{id:rowid}/read", mark_unread, methods=["DELETE"]),
    Route("/api/articles/{id:rowid}/star", star, methods=["POST"]),
    Route("/api/articles/{id:rowid}/star", unstar, methods=["DELETE"]),
]
