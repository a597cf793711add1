"""/api/feeds and /api/refresh: subscriptions."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ..requests import reader_of
from .json import feed_json, json_body, path_id


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
    """PATCH /api/feeds/{id} {"folder": "..." | null, "title"?: "...", "paused_until"?: "day" |
    "week" | "YYYY-MM-DD" | seconds | null}: the feed as it is now."""
    reader = reader_of(request)
    feed_id = path_id(request)
    body = await json_body(request)
    if "title" in body:
        await reader.rename_feed(feed_id, body["title"])
    if "folder" in body:
        await reader.set_folder(feed_id, body["folder"])
    if "paused_until" in body:
        await reader.pause_feed(feed_id, body["paused_until"])
    return JSONResponse(feed_json(await reader.feed(feed_id)))


async def refresh(request: Request) -> Response:
    results = await reader_of(request).refresh()
    return JSONResponse({"feeds": [
        {"id": r.feed_id, "url": r.url, "new": r.new, "not_modified": r.not_modified, "error": r.error}
        for r in results
    ]})
