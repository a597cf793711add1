"""The Fever API at /fever/ (and /api/fever.php, where FreshRSS answers it), as Unread,
Fiery Feeds, ReadKit and Reeder Classic call it: one endpoint, flags in the query saying
what to answer, `api_key` = md5("NAME:PASSWORD") of an app password. Every answer is JSON
(one client failed on any other type); a bad key is `auth: 0` with 200, never a 401.
Read-mostly: no subscribing and no folder edits here. An adapter over reader/core/sync.py."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ...core import sync
from ...errors import Malformed, ReaderError
from ..access import origin_of
from .wire import Params, client, params, reader_of, throttle_of

API_VERSION = 3
PAGE = 50  # items a page holds, as Fever serves them


def _answer(body: dict[str, Any], status: int = 200) -> Response:
    return JSONResponse({"api_version": API_VERSION, **body}, status_code=status)


def _id(given: Params, name: str) -> int | None:
    text = given.one(name)
    if text is None or text == "":
        return None
    if not (text.isascii() and text.isdigit()) or len(text) > 18:
        raise Malformed(f"{name} must be a whole number, not {text[:30]!r}")
    return int(text)


def _ids(text: str) -> list[int]:
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if len(parts) > PAGE:
        raise Malformed(f"with_ids names at most {PAGE} items")
    if not all(p.isascii() and p.isdigit() and len(p) <= 18 for p in parts):
        raise Malformed("with_ids is item ids separated by commas")
    return [int(p) for p in parts]


def _joined(ids: list[int]) -> str:
    return ",".join(str(i) for i in ids)


async def fever(request: Request) -> Response:
    reader = reader_of(request)
    throttle, who = throttle_of(request), client(request)
    try:
        given = await params(request)
        key = given.one("api_key")
    except ReaderError as exc:
        return _answer({"auth": 0, "error": exc.message}, 400)
    wait = throttle.wait(who)
    if wait > 0:
        return _answer({"auth": 0, "error": f"too many wrong keys: try again in {int(wait) + 1} s"})
    session = await sync.fever_session(reader, key) if key else None
    if session is None:
        if key:
            throttle.failed(who)
        body: dict[str, Any] = {"auth": 0}
        if not await sync.has_app_passwords(reader):
            body["error"] = sync.HOW_TO_ADD
        return _answer(body)
    throttle.succeeded(who)
    try:
        return _answer({"auth": 1, **await _reply(request, given, session)})
    except ReaderError as exc:
        return _answer({"auth": 1, "error": " ".join(exc.message.split())}, exc.status if exc.status < 500 else 500)


async def _reply(request: Request, given: Params, session: sync.Session) -> dict[str, Any]:
    """What the flags ask for; a mark is applied first, so the lists asked with it show it."""
    reader = reader_of(request)
    asked = {k for k, _ in given.pairs}
    body: dict[str, Any] = {"last_refreshed_on_time": await sync.last_refreshed(reader)}
    mark = given.one("mark")
    if mark is not None:
        target = _id(given, "id")
        if target is None:
            raise Malformed("mark needs the id of the item, feed or group")
        before = _id(given, "before")
        as_ = given.one("as") or ""
        await sync.fever_mark(reader, mark, as_, target, float(before) if before else None)
        # as Fever does: the list the mark changed comes back with it
        asked.add("saved_item_ids" if as_ in ("saved", "unsaved") else "unread_item_ids")
    if "groups" in asked or "feeds" in asked:
        groups = await sync.groups(reader)
        if "groups" in asked:
            body["groups"] = [{"id": g, "title": name} for g, name, _ in groups]
        if "feeds" in asked:
            body["feeds"] = [
                {"id": f.id, "favicon_id": 0, "title": f.title or f.url, "url": f.url, "site_url": f.site_url or "",
                 "is_spark": 0, "last_updated_on_time": int(f.refreshed_at or 0)}
                for f in await sync.subscriptions(reader)]
        body["feeds_groups"] = [{"group_id": g, "feed_ids": _joined(ids)} for g, _, ids in groups]
    if "favicons" in asked:
        body["favicons"] = []  # reader keeps no favicons
    if "items" in asked:
        with_ids = given.one("with_ids")
        found = await sync.fever_items(reader, session, origin_of(request), since_id=_id(given, "since_id"),
                                       max_id=_id(given, "max_id"),
                                       with_ids=_ids(with_ids) if with_ids is not None else None)
        body["items"] = [
            {"id": i.id, "feed_id": i.feed_id, "title": i.title, "author": i.author or "", "html": i.html,
             "url": i.url, "is_saved": int(i.starred), "is_read": int(i.read), "created_on_time": int(i.published)}
            for i in found]
        body["total_items"] = await sync.total_items(reader)
    if "unread_item_ids" in asked:
        body["unread_item_ids"] = _joined(await sync.all_ids(reader, sync.Stream("unread")))
    if "saved_item_ids" in asked:
        body["saved_item_ids"] = _joined(await sync.all_ids(reader, sync.Stream("starred")))
    if "links" in asked:
        body["links"] = []  # no Sparks: reader has nothing like Fever's hot links
    return body
