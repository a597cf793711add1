"""Pages kept from before: a ready article's page, rendered once and answered again while
the library has not changed (RenderedPages, KeptPage), its ETag and the 304 for a
browser that kept it too, and `kept_page`, which the app asks before routing."""

from __future__ import annotations

import re
import secrets
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any

from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Scope

from ..core import MAX_ID, READING_LIST, OpenedBy, Reader
from ..errors import ReaderError
from ..records import Article, Content
from .forms import list_of
from .render import env, logs_in
from .requests import OFFLINE_SAVE_HEADER, reader_of

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


def page_key(reader: Reader, article_id: int, csrf: str, carry: str) -> PageKey:
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
    f, carry = list_of(QueryParams(query)) if query else (READING_LIST, "")
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
    key = page_key(reader, article_id, scope.get("reader.csrf", ""), carry)
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


def ready_page(request: Request, article: Article, content: Content, through: dict[str, Any],
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
                                                   logs_in=logs_in(reader_of(request)),
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
