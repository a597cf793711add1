"""The Google Reader API, as NetNewsWire, Read You, Reeder Classic, Fluent Reader, FeedMe
and Liferea call it (/work/shared/specs/native-sync.md has each one's quirks): sign-in at
/accounts/ClientLogin, the rest under /reader/api/0/. An adapter: it reads the wire,
calls reader/core/sync.py and shapes the answer; the rules are there."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from starlette.convertors import Convertor, register_url_convertor
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from ...core import Reader, sync
from ...errors import Malformed, NotFound, ReaderError
from ..access import origin_of
from .wire import Params, client, params, reader_of, refusal, refusing, throttle_of, too_many_tries

PREFIX = "/reader/api/0"


class _SyncId(Convertor[int]):
    """A row id in a path: at most 18 digits, so a longer one is a 404, never an overflow."""

    regex = "[0-9]{1,18}"

    def convert(self, value: str) -> int:
        return int(value)

    def to_string(self, value: int) -> str:
        return str(value)


register_url_convertor("syncid", _SyncId())
DEFAULT_PAGE = 20  # Google's own default n


@dataclass
class Call:
    """One authenticated call: the request, its parameters and its session."""

    request: Request
    reader: Reader
    params: Params
    session: sync.Session
    token: str

    @property
    def origin(self) -> str:
        return origin_of(self.request)


def unauthorized(message: str = "Unauthorized") -> Response:
    """What clients take as "sign in again": 401 with Google's header."""
    return PlainTextResponse(message, status_code=401, headers={"Google-Bad-Token": "true"})


def _token_of(request: Request) -> str | None:
    scheme, _, credential = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "googlelogin" or not credential.lower().startswith("auth="):
        return None
    return credential[len("auth="):].strip()


Handler = Callable[[Call], Awaitable[Response]]


def _call(handler: Handler, *, write: bool = False) -> Callable[[Request], Awaitable[Response]]:
    """The endpoint for a handler: the token checked (401 without a live one), T checked
    on a write, every refusal a line of text."""
    async def endpoint(request: Request) -> Response:
        reader = reader_of(request)
        throttle = throttle_of(request)
        wait = throttle.wait(client(request))
        if wait > 0:
            return too_many_tries(wait)
        token = _token_of(request)
        session = await sync.session(reader, token) if token else None
        if session is None or token is None:
            if token:
                throttle.failed(client(request))
            if not await sync.has_app_passwords(reader):
                return unauthorized(f"Unauthorized: {sync.HOW_TO_ADD}")
            return unauthorized()
        if write and request.method != "POST":  # after the token: no sync route answers without one
            return PlainTextResponse("this call changes things: send it as a POST", status_code=405,
                                     headers={"Allow": "POST"})
        try:
            given = await params(request)
            if write and not sync.edit_token_ok(token, given.one("T")):
                return unauthorized("Unauthorized: T is not this session's edit token: ask /reader/api/0/token again")
            return await handler(Call(request, reader, given, session, token))
        except ReaderError as exc:
            return refusal(exc)

    return endpoint


# -- sign-in ------------------------------------------------------------------------------

@refusing
async def client_login(request: Request) -> Response:
    """ClientLogin: Email (the app password's name) and Passwd (the app password), in the
    form or the query. Plain `SID=..\\nLSID=..\\nAuth=..` unless output=json."""
    given = await params(request)
    reader = reader_of(request)
    throttle, who = throttle_of(request), client(request)
    wait = throttle.wait(who)
    if wait > 0:
        return too_many_tries(wait)
    token = await sync.sign_in(reader, given.one("Email"), given.one("Passwd"))
    if token is None:
        throttle.failed(who)
        if not await sync.has_app_passwords(reader):
            return PlainTextResponse(f"Error=BadAuthentication\nInfo={sync.HOW_TO_ADD}\n", status_code=401)
        return PlainTextResponse("Error=BadAuthentication\n", status_code=401)
    throttle.succeeded(who)
    if given.wants_json():
        return JSONResponse({"SID": token, "LSID": token, "Auth": token})
    return PlainTextResponse(f"SID={token}\nLSID={token}\nAuth={token}\n")


async def token(call: Call) -> Response:
    return PlainTextResponse(sync.edit_token(call.token))


async def user_info(call: Call) -> Response:
    name = call.session.name
    return JSONResponse({"userId": "1", "userName": name, "userProfileId": "1", "userEmail": name})


# -- lists ----------------------------------------------------------------------------------

def _label(name: str) -> dict[str, str]:
    return {"id": sync.LABEL + name, "label": name}


async def subscription_list(call: Call) -> Response:
    feeds = await sync.subscriptions(call.reader)
    return JSONResponse({"subscriptions": [
        {"id": f"feed/{f.id}", "title": f.title or f.url, "categories": [_label(f.folder)] if f.folder else [],
         "url": f.url, "htmlUrl": f.site_url or "", "iconUrl": "", "firstitemmsec": str(int(f.added_at * 1000))}
        for f in feeds]})


async def tag_list(call: Call) -> Response:
    tags: list[dict[str, str]] = [{"id": sync.STATE + "starred"}]
    tags += [{"id": sync.LABEL + name, "type": kind} for name, kind in await sync.labels(call.reader)]
    return JSONResponse({"tags": tags})


async def unread_count(call: Call) -> Response:
    counts = await sync.unread_counts(call.reader)
    return JSONResponse({"max": max((c.count for c in counts), default=0), "unreadcounts": [
        {"id": c.stream_id, "count": c.count, "newestItemTimestampUsec": str(int((c.newest or 0) * 1e6))}
        for c in counts]})


# -- streams --------------------------------------------------------------------------------

def _number(given: Params, name: str) -> int | None:
    text = given.one(name)
    if text is None or text == "":
        return None
    if not (text.isascii() and text.lstrip("-").isdigit()) or len(text) > 19:
        raise Malformed(f"{name} must be a whole number, not {text[:30]!r}")
    return int(text)


async def _query(call: Call, stream_id: str | None) -> sync.Query:
    """A stream call's parameters: s (or the path's stream; none: the reading list), n
    (capped at the largest page, never refused for its size), r=o, ot, nt, xt, it, c."""
    given = call.params
    chosen = stream_id or given.one("s") or sync.READING_LIST
    n = _number(given, "n")
    if n is not None and n < 1:
        raise Malformed("n must be 1 or more")
    order = given.one("r")
    if order not in (None, "", "o", "n", "d"):
        raise Malformed("r must be o (oldest first) or n (newest first)")
    ot, nt = _number(given, "ot"), _number(given, "nt")
    return sync.Query(
        stream=await sync.stream(call.reader, chosen),
        include=tuple([await sync.stream(call.reader, s) for s in given.all("it") if s]),
        exclude=tuple([await sync.stream(call.reader, s) for s in given.all("xt") if s]),
        newer_than=float(ot) if ot is not None else None, older_than=float(nt) if nt is not None else None,
        oldest_first=order == "o", continuation=given.one("c") or None,
        limit=min(n or DEFAULT_PAGE, sync.MAX_PAGE))


async def stream_item_ids(call: Call) -> Response:
    """Item ids as decimal strings (NetNewsWire parses them as integers)."""
    page = await sync.page(call.reader, await _query(call, None))
    answer: dict[str, Any] = {"itemRefs": [
        {"id": str(i), "directStreamIds": [], "timestampUsec": str(int(at * 1e6))} for i, at in page.items]}
    if page.continuation:
        answer["continuation"] = page.continuation
    return JSONResponse(answer)


def item_json(item: sync.Item) -> dict[str, Any]:
    """An item, its state in `categories` (the only way an app reading stream/contents
    learns what is read and starred) and `canonical` (Fluent Reader needs it)."""
    categories = [sync.READING_LIST]
    categories += [sync.STATE + "read"] if item.read else []
    categories += [sync.STATE + "starred"] if item.starred else []
    categories += [sync.LABEL + name for name in item.labels]
    return {
        "id": sync.long_id(item.id),
        "crawlTimeMsec": str(int(item.added_at * 1000)),
        "timestampUsec": str(int(item.added_at * 1e6)),
        "published": int(item.published),
        "updated": int(item.published),
        "title": item.title,
        "canonical": [{"href": item.url}],
        "alternate": [{"href": item.url, "type": "text/html"}],
        "categories": categories,
        "origin": {"streamId": f"feed/{item.feed_id}", "title": item.feed_title, "htmlUrl": item.site_url or ""},
        "summary": {"direction": "ltr", "content": item.html},
        "author": item.author or "",
    }


def _items_answer(stream_id: str, found: list[sync.Item], continuation: str | None = None) -> Response:
    answer: dict[str, Any] = {"id": stream_id, "updated": int(time.time()),
                              "items": [item_json(i) for i in found]}
    if continuation:
        answer["continuation"] = continuation
    return JSONResponse(answer)


async def stream_items_contents(call: Call) -> Response:
    """Items by id, in any of the four id forms, in the order asked."""
    ids = sync.item_ids(call.params.all("i"))
    found = await sync.items(call.reader, ids, call.session, call.origin)
    return _items_answer(sync.READING_LIST, found)


async def stream_contents(call: Call) -> Response:
    """A stream's items, the stream in the path or `s`; with neither, the reading list
    (Fluent Reader and FeedMe ask so)."""
    stream_id = call.request.path_params.get("stream") or None
    query = await _query(call, stream_id)
    page = await sync.page(call.reader, query)
    found = await sync.items(call.reader, [i for i, _ in page.items], call.session, call.origin)
    return _items_answer(stream_id or call.params.one("s") or sync.READING_LIST, found, page.continuation)


# -- writes ---------------------------------------------------------------------------------

def ok() -> Response:
    return PlainTextResponse("OK")


async def edit_tag(call: Call) -> Response:
    ids = sync.item_ids(call.params.all("i"))
    if not ids:  # News+ sends an empty list and wants it to be nothing, not a refusal
        return ok()
    await sync.edit_tags(call.reader, ids, call.params.all("a"), call.params.all("r"))
    return ok()


async def mark_all_as_read(call: Call) -> Response:
    s = call.params.one("s")
    if not s:
        raise Malformed("mark-all-as-read needs the stream (s)")
    target = await sync.stream(call.reader, s)
    ts = call.params.one("ts")
    await sync.mark_all_read(call.reader, target, sync.timestamp(ts) if ts else None)
    return ok()


async def quickadd(call: Call) -> Response:
    url = call.params.one("quickadd")
    if not url:
        raise Malformed("quickadd needs the address to subscribe to (quickadd)")
    feed = await sync.quickadd(call.reader, url)
    if feed is None:
        return JSONResponse({"numResults": 0, "query": url})
    return JSONResponse({"numResults": 1, "query": url, "streamId": f"feed/{feed.id}",
                         "streamName": feed.title or feed.url})


async def subscription_edit(call: Call) -> Response:
    given = call.params
    await sync.edit_subscription(call.reader, given.one("ac") or "edit", given.one("s"), given.one("t"),
                                 given.all("a"), given.all("r"))
    return ok()


async def rename_tag(call: Call) -> Response:
    source, dest = call.params.one("s") or call.params.one("t"), call.params.one("dest")
    if not source or not dest:
        raise Malformed("rename-tag needs the label (s) and its new name (dest)")
    await sync.rename_label(call.reader, source, dest)
    return ok()


async def disable_tag(call: Call) -> Response:
    source = call.params.one("s") or call.params.one("t")
    if not source:
        raise Malformed("disable-tag needs the label (s)")
    await sync.disable_label(call.reader, source)
    return ok()


async def unknown(call: Call) -> Response:
    raise NotFound(f"no such call: {call.request.url.path[:100]}")


# -- the stored images an item shows ----------------------------------------------------------

@refusing
async def image(request: Request) -> Response:
    """A stored image by its capability URL (core/sync.py signs them per app password)."""
    p = request.path_params
    found = await sync.image(reader_of(request), p["password"], p["signature"], p["id"], p["hash"])
    return Response(found.data, media_type=found.type,
                    headers={"Cache-Control": "private, max-age=31536000, immutable"})


async def no_image(request: Request) -> Response:
    raise NotFound("no such image")


# The endpoints the route table (reader/web/routes.py) names: each handler wrapped once
# with its sign-in and token checks.
token_endpoint = _call(token)
user_info_endpoint = _call(user_info)
subscription_list_endpoint = _call(subscription_list)
tag_list_endpoint = _call(tag_list)
unread_count_endpoint = _call(unread_count)
stream_item_ids_endpoint = _call(stream_item_ids)
stream_items_contents_endpoint = _call(stream_items_contents)
stream_contents_endpoint = _call(stream_contents)
edit_tag_endpoint = _call(edit_tag, write=True)
mark_all_as_read_endpoint = _call(mark_all_as_read, write=True)
quickadd_endpoint = _call(quickadd, write=True)
subscription_edit_endpoint = _call(subscription_edit, write=True)
rename_tag_endpoint = _call(rename_tag, write=True)
disable_tag_endpoint = _call(disable_tag, write=True)
unknown_endpoint = _call(unknown)
no_image_endpoint = refusing(no_image)
