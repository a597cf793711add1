"""The HTML pages. Every action is a plain form (POST, then a 303 redirect) that works
without JavaScript; htmx adds partial swaps on top, and for an htmx request the same
template renders just the card."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import hmac
import json
import re
import secrets
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from typing import Any
from urllib.parse import urlencode, urlsplit

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.datastructures import FormData, QueryParams
from starlette.requests import Request
from starlette.background import BackgroundTask
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import Scope

from .access import (
    MAX_TARGET_LENGTH,
    SESSION_COOKIE,
    check_token,
    checked_form,
    end_session,
    from_another_site,
    origin_of,
    start_session,
)
from .api import reader_of
from ..core import (
    LANES,
    MAX_ID,
    READING_LIST,
    STATES,
    ArticleFilter,
    OpenedBy,
    Reader,
    Saved,
    parse_bool,
    parse_filter,
    parse_int,
    parse_list_page,
    snippet_html,
)
from ..core.editions import Filters, article_book, catalog, make_edition, mark_read_after_download
from ..errors import Invalid, NotFound, ReaderError
from ..clean.images import without_images
from ..formats.importers import ImportFileError, detect_format
from ..core.waits import describe_wait
from ..records import FINISHED, Article, ArticlePage, Content, Feed
from .pwa import manifest, service_worker
from ..clean.sanitize import plain_text
from ..settings import Settings
from ..resources import templates_dir
from ..urls import check_url

TEMPLATES = templates_dir()


def _date(timestamp: float | None) -> str:
    if not timestamp:
        return ""
    return datetime.datetime.fromtimestamp(timestamp, datetime.UTC).strftime("%Y-%m-%d")


def _ago(timestamp: float | None) -> str:
    if not timestamp:
        return "never"
    seconds = max(0, time.time() - timestamp)
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{int(seconds // size)} {unit} ago"
    return "just now"


def _excerpt(html: str, limit: int = 240) -> str:
    text = plain_text(html or "")
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


WORDS_PER_MINUTE = 230


def reading_minutes(words: int) -> int:
    return max(1, round(words / WORDS_PER_MINUTE))


env = Environment(
    loader=FileSystemLoader(TEMPLATES),
    autoescape=select_autoescape(["html"]),
    trim_blocks=True,
    lstrip_blocks=True,
    auto_reload=False,  # templates ship with the code: no stat() of every file on every render
)
env.filters.update(date=_date, ago=_ago, excerpt=_excerpt, minutes=reading_minutes, wait=describe_wait,
                   without_images=without_images)


def render(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    reader = getattr(request.app.state, "reader", None)
    read_only = reader is not None and reader.read_only
    # How often a page with something still being cleaned asks again (htmx's "every Ns").
    poll = reader.settings.poll_interval if reader is not None else Settings.poll_interval
    html = env.get_template(template).render(request=request, csrf=request.scope.get("reader.csrf", ""),
                                             read_only=read_only, poll=f"{poll:g}s", **context)
    # Card states change by the second: Back must show the line as it is now, not a copy
    # the browser kept from before.
    return HTMLResponse(html, status_code=status, headers={"Cache-Control": "no-store"})


def is_htmx(request: Request) -> bool:
    return request.headers.get("hx-request") == "true"


def back_to(form: FormData | QueryParams, default: str = "/") -> str:
    """Where a no-JavaScript form returns to: a path on this site, nothing else."""
    target = str(form.get("next") or default)
    if not target.startswith("/") or target.startswith("//") or "\\" in target:
        return default
    return target


def error_page(request: Request, status: int, message: str) -> HTMLResponse:
    return render(request, "error.html", status=status, status_code=status, message=message)


def error_response(request: Request, error: ReaderError) -> Response:
    """The one place a ReaderError becomes a page."""
    return error_page(request, error.status, error.message)


# Query parameters a page reads once, for its notice, and never passes on in its links.
_NOTICE_PARAMS = ("marked", "undo", "restored", "tagged")


def _list_url(f: ArticleFilter, **extra: Any) -> str:
    """The address of a list (and a page of it): the filter's parameters plus `extra`."""
    query = urlencode({**f.query(), **{k: v for k, v in extra.items() if v is not None}})
    return "/?" + query if query else "/"


def _with(f: ArticleFilter, **changes: Any) -> str:
    """The filter link that changes one filter and keeps the others (the search too)."""
    return _list_url(dataclasses.replace(f, **changes))


def _list_param(f: ArticleFilter) -> str:
    """What an article link carries so the reader view can read through the list it was
    opened from. No parameter at all means the reading list."""
    return "?" + urlencode({"list": urlencode(f.query())})


def _list_of(params: QueryParams) -> tuple[ArticleFilter, str]:
    """The list an article was opened from (the reading list when none is named) and the
    parameter that names it again on the next article's link."""
    raw = params.get("list")
    if raw is None:
        return READING_LIST, ""
    return parse_filter(QueryParams(raw[:2000]), strict=False), "?" + urlencode({"list": raw[:2000]})


async def _nav(request: Request) -> dict[str, Any]:
    """What the main nav shows on every full page: the reading list's length."""
    return {"reading_count": await reader_of(request).reading_count()}


def _bulk_notice(params: QueryParams) -> dict[str, Any] | None:
    """The notice after a bulk read (with its undo) or an undo, rebuilt from numbers only."""
    try:
        if params.get("marked") is not None:
            stamp = float(params.get("undo") or "nan")
            marked = int(params["marked"])
            return {"marked": marked, "stamp": repr(stamp) if stamp == stamp else None}
        if params.get("restored") is not None:
            return {"restored": int(params["restored"])}
        if params.get("tagged") is not None:
            return {"tagged": int(params["tagged"])}
    except ValueError:
        return None
    return None


async def browse(request: Request) -> Response:
    reader = reader_of(request)
    params = request.query_params
    f = parse_filter(params, strict=False)
    text = f.q
    before, feed_id, offset = parse_list_page(params)
    f = dataclasses.replace(f, feed_id=feed_id)
    size = reader.settings.page_size
    message = None
    articles: list[Article] = []
    if text:
        try:
            articles = await reader.listing(f, limit=size + 1, offset=offset)
        except Invalid as exc:
            message = exc.message[:1].upper() + exc.message[1:] + "."
        else:
            if not articles and offset == 0:
                message = f"No articles match “{text}”."
    else:
        articles = await reader.listing(f, before=before, limit=size + 1)
    more = len(articles) > size
    articles = articles[:size]
    next_page = None
    if more and text:
        next_page = _list_url(f, offset=offset + size)
    elif more:
        next_page = _list_url(f, before=articles[-1].id)
    feeds = await reader.feeds(counts=False)  # the filter needs names; the unread counts come apart
    counts = await reader.unread_counts()
    kept = [(k, v) for k, v in params.multi_items() if k not in _NOTICE_PARAMS]
    here = request.url.path + ("?" + urlencode(kept) if kept else "")
    return render(
        request, "browse.html", articles=articles, next_page=next_page, active=_pending(articles), state=f.state,
        feed_id=feed_id, unread=f.unread, starred=f.starred, query=text, message=message, offset=offset,
        feeds=feeds, states=STATES, here=here, filter=f, with_filter=_with, list_param=_list_param(f),
        unread_counts=counts, unread_total=sum(counts.values()), reading_list=f.is_reading_list,
        unread_ids=",".join(str(a.id) for a in articles if not a.done),  # in progress: not done with
        page_ids=",".join(str(a.id) for a in articles), newest=await reader.newest_id(),
        bulk=_bulk_notice(params), list_name=_list_name(f), **await _nav(request),
    )


def _chosen(form: FormData) -> tuple[list[int] | None, int | None]:
    """Which articles a bulk form means: the cards on the page (`ids`), or, without ids,
    the list's filter up to `until` (the newest article when the page was shown)."""
    if form.get("ids") is not None:
        try:
            return [int(i) for i in str(form.get("ids") or "").split(",") if i.strip()], None
        except ValueError:
            raise Invalid("ids must be article ids") from None
    return None, parse_int(str(form.get("until") or "") or None, "until", low=0)


async def mark_many(request: Request) -> Response:
    """POST /articles/read: "mark these read" (ids, the cards on the page) or "mark all
    read" (the list's filter and until, the newest article when the page was shown). Back
    to the list with a notice whose undo restores exactly the articles changed."""
    form = await checked_form(request)
    reader = reader_of(request)
    ids, until = _chosen(form)
    marked = await reader.mark_many(True, ids=ids, within=parse_filter(form), until=until)
    target = back_to(form)
    notice = urlencode({"marked": len(marked.ids), "undo": repr(marked.stamp) if marked.stamp else ""})
    return RedirectResponse(target + ("&" if "?" in target else "?") + notice, status_code=303)


async def tag_many(request: Request) -> Response:
    """POST /articles/tags: add the tags typed (`tags`, separated by commas) to the cards
    on the page (ids) or to everything the list's filter matches up to `until`; back to
    the list, saying how many were tagged."""
    form = await checked_form(request)
    ids, until = _chosen(form)
    tagged = await reader_of(request).tag_many(str(form.get("tags") or ""), ids=ids, within=parse_filter(form),
                                               until=until)
    target = back_to(form)
    return RedirectResponse(target + ("&" if "?" in target else "?") + urlencode({"tagged": tagged}),
                            status_code=303)


async def set_tags(request: Request) -> Response:
    """POST /articles/{id}/tags: exactly the tags typed (`tags`, separated by commas;
    empty removes them all). htmx gets the card; without JavaScript, back where the
    person was (the card's list or the reader view)."""
    form = await checked_form(request)
    reader = reader_of(request)
    article_id = request.path_params["id"]
    await reader.set_tags([article_id], str(form.get("tags") or ""))
    return await _card_or_back(request, await reader.article(article_id), form)


async def undo_mark(request: Request) -> Response:
    """POST /articles/read/undo: the articles one bulk read changed are unread again."""
    form = await checked_form(request)
    try:
        stamp = float(str(form.get("stamp") or ""))
    except ValueError:
        return error_page(request, 422, "nothing to undo")
    restored = await reader_of(request).undo_read(stamp)
    target = back_to(form)
    return RedirectResponse(target + ("&" if "?" in target else "?") + urlencode({"restored": len(restored)}),
                            status_code=303)


def _pending(articles: list[Article]) -> bool:
    return any(a.state in ("queued", "cleaning") for a in articles)


async def card(request: Request) -> Response:
    article = await reader_of(request).article(request.path_params["id"])
    return render(request, "_card.html", article=article)


async def live(request: Request) -> Response:
    """The batched poll: the current card of every id asked for, swapped in out of band,
    and the poller itself, which stays active while any of them is still pending."""
    reader = reader_of(request)
    try:
        ids = [int(i) for i in request.query_params.getlist("id")][:500]
    except ValueError:
        return error_page(request, 400, "id must be a number")
    articles = await reader.articles(ids=ids, limit=500) if ids else []
    _, list_param = _list_of(request.query_params)  # the page's list, named again on its cards
    return render(request, "_live_update.html", articles=articles, active=_pending(articles), list_param=list_param)


def _ids(values: list[str], limit: int = 500) -> list[int]:
    """The ids of a page's pending cards as a form or a poll sends them; anything else is
    dropped (they only say which cards to refresh)."""
    return [int(v) for v in values[:limit] if v.isascii() and v.isdigit() and int(v) <= MAX_ID]


async def _card_or_back(request: Request, article: Article, form: FormData) -> Response:
    """After a tap: the new card for htmx, with the page's other pending cards (their ids
    come with the tap) read in the same statement and swapped in out of band, so every
    position on the page comes from one read; and the poller switched on, so the cards
    keep moving. Without JavaScript, back where the person was."""
    if is_htmx(request):
        here = back_to(form)
        # the swapped card's link keeps naming the list the page shows, for reading through
        path, _, query = here.partition("?")
        listed = _list_param(parse_filter(QueryParams(query), strict=False)) if path == "/" else None
        others = [i for i in _ids([str(v) for v in form.getlist("id")]) if i != article.id]
        fresh = await reader_of(request).articles(ids=[article.id, *others], limit=len(others) + 1)
        article = next((a for a in fresh if a.id == article.id), article)
        rest = [a for a in fresh if a.id != article.id]
        return render(request, "_card_update.html", article=article, others=rest,
                      active=_pending([article, *rest]), here=here, list_param=listed or "")
    return RedirectResponse(back_to(form), status_code=303)


async def queue(request: Request) -> Response:
    form = await checked_form(request)
    lane = str(form.get("lane") or "normal")
    article = await reader_of(request).queue(request.path_params["id"], lane if lane in LANES else "normal")
    return await _card_or_back(request, article, form)


async def unqueue(request: Request) -> Response:
    form = await checked_form(request)
    article = await reader_of(request).unqueue(request.path_params["id"])
    return await _card_or_back(request, article, form)


async def read(request: Request) -> Response:
    """The direct lane: the cleaned text now if it is cached; else the extraction started
    (or joined) and, by default, the feed's summary painted at once with a "cleaning…"
    state that polls for the full text and swaps it in by itself (`open_wait` seconds of
    waiting for the text first, if set). The extraction is its own task: the page going
    away never cancels it. A ready page rendered before and still current is answered
    before this, by `kept_page` (in front of the router).

    A link on another site's page is not the person asking: followed from there, the page
    shows what is already there and changes nothing (no cleaning started, not marked read)
    until the person asks again from reader itself."""
    reader = reader_of(request)
    article_id = request.path_params["id"]
    f, carry = _list_of(request.query_params)
    by = opened_by(request)
    opened = await reader.open_page(article_id, f, by=by)
    page = opened.page
    assert page is not None
    # The page read with the article (its version, the nav's count) holds unless this open
    # changed it: the text came later, by a write, or the open marked the article read.
    count = page.reading_count if opened.unchanged else None
    key = None
    if opened.unchanged and reader.changes_with_version(f):
        key = _page_key(reader, article_id, request.scope.get("reader.csrf", ""), carry)
    through = await _through(request, page, f, carry, count)
    if opened.content is not None and opened.error is None:
        return _ready_page(request, opened.article, opened.content, through,
                           (key, page.version) if key is not None else None)
    return render(request, "article.html", article=opened.article, content=opened.content, error=opened.error,
                  held=by == "another site", **through)


def opened_by(request: Request) -> OpenedBy:
    """Who opened an article, from the request: a link on another site's page is not the
    person asking; the service worker saving the reading list for offline reading sends
    OFFLINE_SAVE_HEADER; anything else is the person, from reader."""
    if from_another_site(request):
        return "another site"
    if request.headers.get(OFFLINE_SAVE_HEADER) == "save":
        return "offline copy"
    return "person"


async def _through(request: Request, page: ArticlePage, f: ArticleFilter, carry: str,
                   reading_count: int | None) -> dict[str, Any]:
    """Reading through: the previous and next article of the list this one was opened
    from (read with it), the parameter that keeps that list on their links, the
    article's notes and the nav's count (read now if `reading_count` is None)."""
    back = _list_url(f) if carry else "/"
    nav = {"reading_count": reading_count} if reading_count is not None else await _nav(request)
    # highlights and annotations brought from other apps; a tuple, so a page's version hashes it
    notes = tuple((n["text"], n["comment"], n["created_at"]) for n in page.notes)
    return {"prev": page.prev, "next": page.next, "carry": carry, "back": back, "list_name": _list_name(f),
            "notes": notes, **nav}


def _list_name(f: ArticleFilter) -> str:
    if f.is_reading_list:
        return "ready to read"
    if f.q:
        return f"search: {f.q}"
    words = [w for w in (f.state, "unread" if f.unread else None, "starred" if f.starred else None,
                         f"tag {f.tag}" if f.tag else None, f"folder {f.folder}" if f.folder else None) if w]
    return " · ".join(words) or "headlines"


# A ready article's page is rendered from the database (its row, content, tags and notes,
# its neighbours in a list, the reading list's length), the CSRF token its forms carry,
# the list its links keep (the `list` parameter), whether the database is read-only, and
# this process's templates. Rendering it was most of what an open cost (see
# benchmarks/README.md), so the last few rendered pages are kept. A page is kept under
# what it varies with besides the database, with the library's version it was read at
# (schema v12: every change a page can show, by any process, makes it grow): a reopen
# is then one small read and a lookup. The page's ETag says the same, so a browser that
# kept it gets a 304 without even the lookup. _BOOT puts this process's templates into
# every ETag: a restart renders afresh.
_BOOT = secrets.token_hex(4)
PAGE_CACHE_SIZE = 64
PAGE_CACHE_BYTES = 8_000_000  # a page is 20-100 KB; a few pathological ones must not hold memory


class KeptPage(Response):
    """A page answered as it was kept: its body and headers were made once, when it was
    rendered (Starlette's Response makes its headers anew for every answer)."""

    def __init__(self, body: bytes, raw_headers: list[tuple[bytes, bytes]]) -> None:
        self.status_code = 200
        self.body = body
        self.raw_headers = list(raw_headers)  # a layer outside may add its own
        self.background = None


def _page_headers(etag: str, length: int | None = None) -> list[tuple[bytes, bytes]]:
    """The headers of a ready page (`length`: its body's) or, without one, of its 304. The
    browser may keep a ready page but must ask before showing it again (no-cache, not
    no-store): an unchanged article is then a 304 with no body and no render."""
    headers = [(b"cache-control", b"no-cache"), (b"etag", etag.encode("latin-1"))]
    if length is not None:
        headers += [(b"content-type", b"text/html; charset=utf-8"), (b"content-length", str(length).encode())]
    return headers


class RenderedPages:
    """The most recently used rendered pages, by key, each with the version of what it
    shows (the library's version, or for a page not kept by it its ETag) and its
    headers: at most `size` of them and `budget` bytes in all."""

    def __init__(self, size: int = PAGE_CACHE_SIZE, budget: int = PAGE_CACHE_BYTES) -> None:
        self.size, self.budget = size, budget
        self._pages: OrderedDict[Any, tuple[Hashable, bytes, list[tuple[bytes, bytes]]]] = OrderedDict()
        self._bytes = 0

    def get(self, key: Any, version: Hashable) -> KeptPage | None:
        """The answer kept under `key`, if it shows this version."""
        kept = self._pages.get(key)
        if kept is None or kept[0] != version:
            return None
        self._pages.move_to_end(key)
        return KeptPage(kept[1], kept[2])

    def put(self, key: Any, version: Hashable, etag: str, body: bytes) -> KeptPage:
        """Keep `body` under `key`, in place of any older version of it; its answer."""
        headers = _page_headers(etag, len(body))
        old = self._pages.pop(key, None)
        if old is not None:
            self._bytes -= len(old[1])
        if len(body) <= self.budget:
            self._pages[key] = (version, body, headers)
            self._bytes += len(body)
            while len(self._pages) > self.size or self._bytes > self.budget:
                _, (_, dropped, _) = self._pages.popitem(last=False)
                self._bytes -= len(dropped)
        return KeptPage(body, headers)

    def __len__(self) -> int:
        return len(self._pages)


def _rendered_pages(request: Request) -> RenderedPages:
    state = request.app.state
    try:
        pages: RenderedPages = state["pages"]
    except KeyError:
        pages = state["pages"] = RenderedPages()
    return pages


PageKey = tuple[int, str, str, bool]


def _page_key(reader: Reader, article_id: int, csrf: str, carry: str) -> PageKey:
    """What a ready page varies with besides the database: the article, the CSRF token
    its forms carry, the list its links keep, and whether the database is read-only.
    (The reader view's templates read no cookie and nothing else of the request.)"""
    return article_id, csrf, carry, reader.read_only


def _page_etag(key: PageKey, version: int) -> str:
    """The ETag of a page kept under `key` at the library's `version`. Python's own hash
    is enough (an ETag lives no longer than this process: _BOOT) and keeps the CSRF
    token out of the header."""
    return f'"{_BOOT}-{version}-{hash(key) & 0xFFFFFFFFFFFFFFFF:016x}"'


_ARTICLE_PATH = re.compile(r"/articles/([0-9]{1,18})")


async def kept_page(scope: Scope) -> Response | None:
    """The answer to a GET of a ready article whose page is kept and current: a 304 for
    the browser that kept it too, else the page kept here. None for anything else (not an
    article's page, nothing kept, something changed, opening it marks it read, no such
    article): `read` then answers as always. Asked before routing (see ReaderApp), inside
    the access layer: a kept page is one small read and a lookup, and Starlette's layers
    and router cost as much again."""
    found = _ARTICLE_PATH.fullmatch(scope["path"])
    if found is None or scope["method"] != "GET":
        return None
    article_id = int(found.group(1))
    query = scope["query_string"]
    f, carry = _list_of(QueryParams(query)) if query else (READING_LIST, "")
    if not Reader.changes_with_version(f):
        return None
    # by item, not attribute: State's attribute lookup goes through __getattr__ (3 µs, 13
    # for a missing name, against 0.3)
    state = scope["app"].state
    try:
        reader: Reader = state["reader"]
        pages: RenderedPages = state["pages"]
    except KeyError:
        return None  # not serving yet, or no page rendered yet
    if article_id > MAX_ID:
        return None
    headers = dict(scope["headers"])
    # Another site's link is not told apart here: an open that would mark it read goes the
    # whole way, where `read` tells; one that changes nothing is the same page for anyone.
    by: OpenedBy = "offline copy" if headers.get(OFFLINE_SAVE_HEADER.encode()) == b"save" else "person"
    try:
        version = await reader.kept_version(article_id, by=by)
    except ReaderError:
        return None  # no such article, a storage error: answered and explained the whole way
    if version is None:
        return None
    key = _page_key(reader, article_id, scope.get("reader.csrf", ""), carry)
    asked = headers.get(b"if-none-match")
    if asked is not None:
        etag = _page_etag(key, version)
        if _matches(asked, etag):
            return _not_modified(etag)
    return pages.get(key, version)


def _content_etag(article: Article, content: Content, csrf: str, through: dict[str, Any] | None = None,
                 read_only: bool = False) -> str:
    """Everything a ready article's page is rendered from, hashed: the ETag of a page
    opened from a list that cannot be kept by the library's version (see
    Reader.changes_with_version), so computed from the page's own read."""
    links = tuple((through or {}).items())  # the neighbours are Links, hashable with their titles
    fields = (tuple(vars(article).items()), content.cleaned_at, len(content.html), csrf, links, read_only)
    return f'"{_BOOT}-{hash(fields) & 0xFFFFFFFFFFFFFFFF:016x}"'


def _ready_page(request: Request, article: Article, content: Content, through: dict[str, Any],
                kept: tuple[PageKey, int] | None = None) -> Response:
    """A ready article's page: rendered, or the same page kept from before. `kept`: the
    page's key and the library's version it was read at, if its list allows keeping it
    by version; else it is kept by a hash of what it was rendered from."""
    csrf = request.scope.get("reader.csrf", "")
    read_only = reader_of(request).read_only
    version: Hashable
    if kept is not None:
        key: Any = kept[0]
        version = kept[1]
        etag = _page_etag(*kept)
    else:
        key = version = etag = _content_etag(article, content, csrf, through, read_only)
    header = request.headers.get("if-none-match")
    if _matches(header.encode("latin-1") if header is not None else None, etag):
        return _not_modified(etag)
    pages = _rendered_pages(request)
    answer = pages.get(key, version)
    if answer is not None:
        return answer
    body = env.get_template("article.html").render(request=request, csrf=csrf, read_only=read_only,
                                                   article=article, content=content, error=None, **through)
    return pages.put(key, version, etag, body.encode())


def _matches(header: bytes | None, etag: str) -> bool:
    """Whether the browser asks (If-None-Match) with this ETag: it kept this very page."""
    return header is not None and etag in _etags(header.decode("latin-1"))


def _not_modified(etag: str) -> Response:
    response = Response(status_code=304)
    response.raw_headers = _page_headers(etag)
    return response


def _etags(header: str) -> list[str]:
    """The entity tags of an If-None-Match header (weak ones compare equal, RFC 9110)."""
    return [tag.strip().removeprefix("W/") for tag in header.split(",")]


async def queue_page(request: Request) -> Response:
    """The whole line in service order: what is being cleaned, then what waits."""
    reader = reader_of(request)
    articles = await reader.line()
    return render(request, "queue.html", articles=articles, active=_pending(articles), here="/queue",
                  capacity=await reader.capacity(), lead=describe_wait(reader.settings.next_lead),
                  **await _nav(request))


async def feeds_page(request: Request) -> Response:
    """The library. After an OPML import, its report: the numbers, then each new feed whose
    first fetch failed, with the reason read from the feed itself (the URL carries only ids)."""
    reader = reader_of(request)
    feeds = await reader.feeds()
    failed = set(_ids(request.query_params.getlist("failed")))
    failures = [f for f in feeds if f.id in failed and f.error]
    return await _feeds_page(request, feeds=feeds, message=request.query_params.get("message"),
                             notice=_import_notice(request.query_params, reader.settings.refresh_interval > 0),
                             failures=failures)


async def subscribe(request: Request) -> Response:
    """Subscribe by a feed's URL or by a site's URL (its feed is discovered)."""
    form = await checked_form(request)
    given = form.get("url")
    try:
        await reader_of(request).subscribe(given)
    except Invalid as exc:
        return await _feeds_page(request, status=422, message=exc.message,
                                 url=given.strip() if isinstance(given, str) else "")
    return RedirectResponse("/feeds", status_code=303)


async def unsubscribe(request: Request) -> Response:
    """The first post asks (how many articles stay, how many go); only the confirming
    post, carrying confirm=yes, unsubscribes."""
    form = await checked_form(request)
    reader = reader_of(request)
    feed_id = request.path_params["id"]
    try:
        if form.get("confirm") != "yes":
            feed = await reader.feed(feed_id)
            kept, removed = await reader.unsubscribe_counts(feed_id)
            return render(request, "unsubscribe.html", feed=feed, kept=kept, removed=removed)
        await reader.unsubscribe(feed_id)
    except NotFound:
        pass  # gone already: the feeds page shows what is left
    return RedirectResponse("/feeds", status_code=303)


async def refresh_now(request: Request) -> Response:
    reader = reader_of(request)
    form = await checked_form(request)
    feed = form.get("feed")
    if feed:
        try:
            feed_id = parse_int(feed if isinstance(feed, str) else None, "feed")
        except Invalid:
            feed_id = None
        await reader.refresh_ids([feed_id] if feed_id is not None else [])
    else:
        await reader.refresh()
    return RedirectResponse(back_to(form), status_code=303)


async def stats_page(request: Request) -> Response:
    reader = reader_of(request)
    return render(request, "stats.html", stats=await reader.stats(), runs=await reader.latest_runs(20),
                  **await _nav(request))


async def login_page(request: Request) -> Response:
    return render(request, "login.html", next=back_to(request.query_params))


async def login(request: Request) -> Response:
    """Only reachable with READER_PASSWORD set (without it, nobody is ever sent here)."""
    password = reader_of(request).settings.password
    form = await checked_form(request)
    given = str(form.get("password") or "")
    if not password or not hmac.compare_digest(given.encode("utf-8", "replace"), password.encode()):
        return render(request, "login.html", status=401, next=back_to(form), message="wrong password")
    response = RedirectResponse(back_to(form), status_code=303)
    response.set_cookie(SESSION_COOKIE, start_session(request), httponly=True, samesite="lax",
                        secure=request.url.scheme == "https", max_age=400 * 86400)
    return response


async def logout(request: Request) -> Response:
    await checked_form(request)
    end_session(request)
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(SESSION_COOKIE)
    return response


def _host(url: str | None) -> str:
    try:
        return urlsplit(url or "").hostname or ""
    except ValueError:
        return ""


env.filters.update(highlight=snippet_html, host=_host)


def _truthy(value: str | None) -> bool:
    """A filter or toggle in a page's form or link: anything but a clear yes is no (a
    link is never refused for how it spells a filter)."""
    try:
        return parse_bool(value, "value")
    except Invalid:
        return False


async def reading_body(request: Request) -> Response:
    """The reader view's body alone: the page polls it while the article is being
    cleaned, and it stops polling (no hx-trigger) once the text or a failure is there.
    Another site's link to it starts nothing, as with the article's page."""
    by = opened_by(request)
    opened = await reader_of(request).reading_state(request.path_params["id"], wait=0.0, by=by)
    return render(request, "_reading_body.html", article=opened.article, content=opened.content,
                  error=opened.error, live=is_htmx(request), held=by == "another site")


async def _toggle(request: Request, field: str) -> Response:
    """POST /articles/{id}/read and /star: `value` on or off. htmx gets the card (or the
    reader view's tools); without JavaScript, a 303 back where the person was."""
    form = await checked_form(request)
    reader = reader_of(request)
    on = _truthy(str(form.get("value") or ""))
    change = reader.mark_read if field == "read" else reader.star
    article = await change(request.path_params["id"], on)
    if is_htmx(request) and form.get("view") == "article":
        return render(request, "_reading_tools.html", article=article)
    return await _card_or_back(request, article, form)


async def mark_read(request: Request) -> Response:
    return await _toggle(request, "read")


async def star(request: Request) -> Response:
    return await _toggle(request, "star")


# -- the library: feeds page, OPML, saving links ------------------------------------------

# More new feeds than this in one OPML upload are left to the background refresher
# instead of being fetched while the person waits for the page.
IMPORT_REFRESH_LIMIT = 20
_ORIGIN = re.compile(r"https?://[A-Za-z0-9_.\-\[\]:]+")


def bookmarklet(request: Request) -> str:
    """The one javascript: URL reader renders: dragged to the bookmarks bar, it runs on
    the page being read (not on reader's pages, whose CSP forbids it) and opens reader's
    /save confirmation for that page in a new tab. The origin is READER_PUBLIC_URL or the
    Host the access layer accepted (whatever port that is), checked again to be only an
    origin, so a forged Host header cannot put script into it.

    When that tab says it is ready (a message naming reader, from reader's origin), the
    bookmarklet sends it the page as the browser rendered it, so an article the server
    could not clean (a page that needs JavaScript, or refuses servers) can be cleaned from
    it. Nothing is sent anywhere else: the message goes to reader's origin only, and it is
    the person's press of the button on reader's own page that posts it (with the CSRF
    token, same-origin). Without a new tab (a blocked pop-up) the tab itself goes there."""
    origin = origin_of(request)
    if not _ORIGIN.fullmatch(origin):  # the port in use, not a fixed 8000
        settings = reader_of(request).settings
        host = f"[{settings.host}]" if ":" in settings.host else settings.host
        origin = f"http://{host}:{settings.port}"
    target = json.dumps(origin + "/save?url=")
    return ("javascript:(function(){var o=" + json.dumps(origin) + ",u=" + target
            + "+encodeURIComponent(location.href)+'&title='+encodeURIComponent(document.title),"
            "w=window.open(u+'&page=1');if(!w){location.href=u;return;}"
            "window.addEventListener('message',function(e){if(e.origin===o&&e.source===w&&e.data==='reader:ready')"
            "w.postMessage({reader:'page',url:location.href,html:document.documentElement.outerHTML},o);});})()")


def _import_notice(query: QueryParams, refresher_on: bool) -> str | None:
    """The result of an OPML import, rebuilt from numbers only (never text from the URL)."""
    try:
        added, existing, skipped, waiting = (int(query.get(k, "")) for k in
                                             ("imported", "existing", "skipped", "waiting"))
    except ValueError:
        return None
    notice = f"Imported {added} new feed{'s' if added != 1 else ''}, {existing} already subscribed"
    if skipped:
        notice += f", {skipped} skipped (not http or https URLs)"
    notice += "."
    if waiting:
        notice += f" {waiting} feeds will be fetched by the background refresh" + (
            " within a minute." if refresher_on else "; press “Refresh all now” to fetch them now.")
    return notice


def _folders(feeds: list[Feed]) -> list[tuple[str | None, list[Feed], int]]:
    """The feeds by folder, each folder with its unread count: the folders by name, then
    the feeds in none."""
    groups: dict[str | None, list[Feed]] = {}
    for feed in feeds:
        groups.setdefault(feed.folder, []).append(feed)
    names = sorted((k for k in groups if k is not None), key=str.lower)
    order: list[str | None] = [*names, None] if None in groups else list(names)
    return [(name, groups[name], sum(f.unread or 0 for f in groups[name])) for name in order]


async def _feeds_page(request: Request, status: int = 200, **context: Any) -> Response:
    reader = reader_of(request)
    context.setdefault("notice", None)
    if "feeds" not in context:
        context["feeds"] = await reader.feeds()
    return render(request, "feeds.html", status=status, bookmarklet=bookmarklet(request),
                  folders=_folders(context["feeds"]), **context, **await _nav(request))


async def _edit_feed(request: Request, field: str,
                     change: Callable[[Reader, Any, str], Awaitable[Any]]) -> Response:
    """One form field applied to one feed, back to the feeds page; a refused value shows
    there with the reason."""
    form = await checked_form(request)
    try:
        await change(reader_of(request), request.path_params["id"], str(form.get(field) or ""))
    except Invalid as exc:
        return await _feeds_page(request, status=422, message=exc.message)
    return RedirectResponse("/feeds", status_code=303)


async def set_folder(request: Request) -> Response:
    """POST /feeds/{id}/folder: put the feed in the folder typed (empty: in none)."""
    return await _edit_feed(request, "folder", Reader.set_folder)


async def rename_feed(request: Request) -> Response:
    """POST /feeds/{id}/rename: the feed's title as the person wants it."""
    return await _edit_feed(request, "title", Reader.rename_feed)


async def import_form(request: Request) -> Response:
    """An upload of any file reader imports, told apart by content. Another app's library
    is imported in the background, and the answer is its page, which follows the import
    to its report; nothing is fetched or queued. An OPML upload subscribes to every feed
    in it (with its folders) and fetches the new ones now only if there are a few,
    otherwise leaves them to the background refresher (feeds_due picks up feeds never
    refreshed) so the page answers at once."""
    reader = reader_of(request)
    form = await checked_form(request)
    upload = form.get("file") or form.get("opml")
    if upload is None or isinstance(upload, str):
        await form.close()
        return await _feeds_page(request, status=422, message="choose a file to import")
    try:
        limit = reader.settings.max_upload_bytes
        data = await upload.read(limit + 1)
    finally:
        await form.close()  # the spooled upload file
    if len(data) > limit:
        return await _feeds_page(request, status=422, message=f"the file is larger than {limit:,} bytes")
    name = upload.filename or "the file"
    try:
        kind = await asyncio.to_thread(detect_format, data, name)
    except ImportFileError as exc:
        return await _feeds_page(request, status=422, message=str(exc))
    if kind != "opml":
        job = reader.start_import(data, name)
        return RedirectResponse(f"/imports/{job.id}", status_code=303)
    try:
        result = await reader.import_opml(data, name)
    except Invalid as exc:
        return await _feeds_page(request, status=422, message=exc.message)
    waiting = 0
    failed: list[int] = []
    if len(result.added) <= IMPORT_REFRESH_LIMIT:
        failed = [r.feed_id for r in await reader.refresh_ids(result.added) if r.error is not None]
    else:
        waiting = len(result.added)
    query = urlencode([("imported", len(result.added)), ("existing", result.existing),
                       ("skipped", len(result.skipped)), ("waiting", waiting), *(("failed", i) for i in failed)])
    return RedirectResponse("/feeds?" + query, status_code=303)


async def import_page(request: Request) -> Response:
    """One web import: how far it got while it runs (the page reloads itself), then its
    report: new, already there, with their texts, and each skipped row with its reason."""
    job = reader_of(request).import_job(request.path_params["id"])
    return render(request, "import.html", job=job, **await _nav(request))


async def export_bookmarks_file(request: Request) -> Response:
    body = await reader_of(request).export_bookmarks()
    return Response(body, media_type="text/html; charset=utf-8",
                    headers={"content-disposition": 'attachment; filename="reader-library.html"'})


async def export_opml_file(request: Request) -> Response:
    body = await reader_of(request).export_opml()
    return Response(body, media_type="text/x-opml; charset=utf-8",
                    headers={"content-disposition": 'attachment; filename="reader-feeds.opml"'})


_SHARED_URL = re.compile(r"https?://\S+")


async def save_page(request: Request) -> Response:
    """The bookmarklet and the installed app's share target land here: a confirmation
    form, so a link elsewhere cannot save anything by itself (saving is a POST with the
    CSRF token). Apps that share a page often send its address inside `text`."""
    url = str(request.query_params.get("url") or "")
    if not url:
        found = _SHARED_URL.search(str(request.query_params.get("text") or "")[:MAX_TARGET_LENGTH])
        url = found.group(0) if found else ""
    title = str(request.query_params.get("title") or "")[:500]
    message = None
    if url:
        try:
            check_url(url)
        except Invalid as exc:
            message = exc.message
    return render(request, "save.html", status=422 if message else 200, url=url, title=title, message=message,
                  page=_truthy(request.query_params.get("page")) and not message,
                  max_page=reader_of(request).settings.max_page_bytes)


async def save_with_page(request: Request) -> Response:
    """POST /save/page?url=...: the page the bookmarklet sent, as the person's browser
    rendered it (the body, text/html in UTF-8, at most READER_MAX_PAGE_BYTES: the access
    layer cuts off a longer one with 413), posted by reader's own save page with the CSRF
    token in its header. The article at that address (saved now if there is none) is
    cleaned from it through the same claim as every other lane, and the answer is where
    to read it: JSON {"article", "location"}, or {"error"} with 422."""
    check_token(request)
    reader = reader_of(request)
    body = await request.body()
    try:
        article, _ = await reader.finish_with_page(request.query_params.get("url"), body,
                                                   request.query_params.get("title"))
    except ReaderError as exc:
        return JSONResponse({"error": exc.message}, status_code=exc.status)
    return JSONResponse({"article": article.id, "location": f"/articles/{article.id}"})


async def article_image(request: Request) -> Response:
    """An image stored with an article. Its address names its bytes (their sha256), so it
    never changes: cached for a year, immutable. The type was sniffed when it was stored,
    and nosniff (on every answer) keeps the browser to it."""
    image = await reader_of(request).image(request.path_params["id"], request.path_params["hash"])
    return Response(image.data, media_type=image.type,
                    headers={"Cache-Control": "public, max-age=31536000, immutable"})


async def save_link(request: Request) -> Response:
    """Save any link for later: an article without a feed. Saving is not a tap: nothing
    is queued or fetched until the person taps it."""
    reader = reader_of(request)
    form = await checked_form(request)
    title = str(form.get("title") or "")
    try:
        if form.get("queue") == "yes":  # "Save and queue": the person's tap on the confirmation page
            saved = await reader.save_and_queue(form.get("url"), title)
        else:
            saved = Saved(*await reader.save(form.get("url"), title))
    except Invalid as exc:
        if form.get("next"):
            return error_page(request, 422, exc.message)
        return render(request, "save.html", status=422, url=str(form.get("url") or ""), title=title[:500],
                      message=exc.message)
    if form.get("next"):
        return RedirectResponse(back_to(form), status_code=303)
    return render(request, "save.html", saved=saved.article, created=saved.created, queued=saved.queued,
                  url=saved.article.url, title=title[:500])


routes = [
    # first: a ready article's open is the request most worth answering fast, and the
    # router tries each route in turn (the others' paths cannot be an article's)
    Route("/articles/{id:rowid}", read, methods=["GET"]),
    Route("/login", login_page, methods=["GET"]),
    Route("/login", login, methods=["POST"]),
    Route("/logout", logout, methods=["POST"]),
    Route("/", browse, methods=["GET"]),
    Route("/articles/read", mark_many, methods=["POST"]),
    Route("/articles/read/undo", undo_mark, methods=["POST"]),
    Route("/articles/tags", tag_many, methods=["POST"]),
    Route("/articles/{id:rowid}/tags", set_tags, methods=["POST"]),
    Route("/articles/{id:rowid}/card", card, methods=["GET"]),
    Route("/articles/{id:rowid}/body", reading_body, methods=["GET"]),
    Route("/articles/{id:rowid}/queue", queue, methods=["POST"]),
    Route("/articles/{id:rowid}/unqueue", unqueue, methods=["POST"]),
    Route("/articles/{id:rowid}/read", mark_read, methods=["POST"]),
    Route("/articles/{id:rowid}/star", star, methods=["POST"]),
    Route("/live", live, methods=["GET"]),
    Route("/queue", queue_page, methods=["GET"]),
    Route("/feeds", feeds_page, methods=["GET"]),
    Route("/feeds", subscribe, methods=["POST"]),
    Route("/feeds/{id:rowid}/delete", unsubscribe, methods=["POST"]),
    Route("/feeds/{id:rowid}/rename", rename_feed, methods=["POST"]),
    Route("/feeds/{id:rowid}/folder", set_folder, methods=["POST"]),
    Route("/feeds/import", import_form, methods=["POST"]),
    Route("/imports/{id:rowid}", import_page, methods=["GET"]),
    Route("/library.html", export_bookmarks_file, methods=["GET"]),
    Route("/feeds.opml", export_opml_file, methods=["GET"]),
    Route("/refresh", refresh_now, methods=["POST"]),
    Route("/save", save_page, methods=["GET"]),
    Route("/save", save_link, methods=["POST"]),
    Route("/save/page", save_with_page, methods=["POST"]),
    Route("/articles/{id:rowid}/images/{hash}", article_image, methods=["GET"]),
    Route("/stats", stats_page, methods=["GET"]),
]


def _since(timestamp: float | None) -> str:
    """A headline's age as a person says it; past a month the date says more than "93 d"."""
    if not timestamp:
        return ""
    seconds = time.time() - timestamp
    if seconds >= 30 * 86400:
        return _date(timestamp)
    return _ago(timestamp)


def _exact(timestamp: float | None) -> str:
    if not timestamp:
        return ""
    return datetime.datetime.fromtimestamp(timestamp, datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")


def _iso(timestamp: float | None) -> str:
    if not timestamp:
        return ""
    return datetime.datetime.fromtimestamp(timestamp, datetime.UTC).strftime("%Y-%m-%dT%H:%MZ")


def _progress(fraction: float) -> str:
    """Where a person stopped in an article, as they would say it."""
    if fraction >= FINISHED:
        return "read to the end"
    if 0.45 <= fraction <= 0.55:
        return "half read"
    return f"{max(1, round(fraction * 100))}% read"


env.filters.update(since=_since, exact=_exact, iso=_iso, progress=_progress)


# -- presentation choices: list or cards, the first-run sentence dismissed -----------------

# Cookies rather than localStorage so the server renders the chosen layout in the first
# paint and the choice works without JavaScript. Only these values are ever set.
PREFS = {"view": ("list", "cards"), "intro": ("off",)}


async def set_pref(request: Request) -> Response:
    form = await checked_form(request)
    response = RedirectResponse(back_to(form), status_code=303)
    for name, allowed in PREFS.items():
        value = str(form.get(name) or "")
        if value in allowed:
            response.set_cookie(f"reader_{name}", value, max_age=400 * 86400, samesite="lax", path="/")
    return response


routes += [Route("/prefs", set_pref, methods=["POST"])]


# -- editions for e-readers ---------------------------------------------------------------

EPUB_TYPE = "application/epub+zip"
OPDS_TYPE = "application/atom+xml;profile=opds-catalog;kind=acquisition"


def _edition_filters(request: Request) -> Filters:
    params = request.query_params
    return Filters(feed_id=parse_int(params.get("feed"), "feed"), starred=parse_bool(params.get("starred"), "starred"))


def _download(data: bytes, filename: str, background: BackgroundTask | None = None) -> Response:
    # no-store: an edition is the list as it is now, and the next download must say so
    return Response(data, media_type=EPUB_TYPE, background=background, headers={
        "content-disposition": f'attachment; filename="{filename}"', "cache-control": "no-store"})


async def edition_epub(request: Request) -> Response:
    reader = reader_of(request)
    edition = await make_edition(reader, _edition_filters(request))
    background = None
    # HEAD (which Starlette answers for every GET route) downloads nothing: it marks nothing.
    # Nor does a download another site's page started: a GET that navigates passes the
    # access layer (it could be the person following a link), and any page a person
    # visited could send them here to empty their reading list.
    if reader.settings.edition_marks_read and edition.included and request.method == "GET" \
            and not from_another_site(request):
        # after the last byte went out, not before: a broken download marks nothing
        background = BackgroundTask(mark_read_after_download, reader, edition.included)
    return _download(edition.data, f"reader-{datetime.date.today().isoformat()}.epub", background)


async def article_epub(request: Request) -> Response:
    article_id = request.path_params["id"]
    book = await article_book(reader_of(request), article_id)
    return _download(book.data, f"reader-article-{article_id}.epub")


async def opds(request: Request) -> Response:
    body = await catalog(reader_of(request), origin_of(request), _edition_filters(request))
    return Response(body, media_type=OPDS_TYPE, headers={"cache-control": "no-store"})


routes += [
    Route("/edition.epub", edition_epub, methods=["GET"]),
    Route("/articles/{id:rowid}.epub", article_epub, methods=["GET"]),
    Route("/opds", opds, methods=["GET"]),
]


# -- the installable app: manifest, service worker, the offline page ----------------------

# The service worker sends this header (value "save") when it saves an article for
# offline reading: that fetch is no person opening it, so it does not mark it read.
OFFLINE_SAVE_HEADER = "x-reader-offline"


async def web_manifest(request: Request) -> Response:
    return Response(json.dumps(manifest()), media_type="application/manifest+json",
                    headers={"cache-control": "no-cache"})


async def service_worker_script(request: Request) -> Response:
    # no-cache: the browser asks every time whether a deploy changed it
    return Response(service_worker(), media_type="text/javascript", headers={"cache-control": "no-cache"})


async def offline_page(request: Request) -> Response:
    """What the service worker shows offline for what is not saved on the device (it keeps
    both versions of this page when it installs)."""
    what = "article" if request.query_params.get("what") == "article" else "page"
    return render(request, "offline.html", what=what)


routes += [
    Route("/manifest.webmanifest", web_manifest, methods=["GET"]),
    Route("/sw.js", service_worker_script, methods=["GET"]),
    Route("/offline", offline_page, methods=["GET"]),
]
