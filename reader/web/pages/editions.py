"""Editions for e-readers: the reading list as one EPUB, one article as an EPUB, and the
OPDS catalog (reader/core/editions.py makes them; this chooses the filters and delivers)."""

from __future__ import annotations

import datetime

from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import Response

from ...core import parse_bool, parse_int
from ...core.editions import (
    Filters,
    article_book,
    catalog,
    download_marks_read,
    make_edition,
    mark_read_after_download,
)
from ..access import origin_of
from ..requests import opened_by, reader_of

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
    """The reading list as one book. Asked for by another site's link (a GET that navigates
    passes the access layer: it could be the person following a link), the core makes it
    from what is stored, fetching nothing and marking nothing. An e-reader app sends no
    Sec-Fetch-Site, so it is the person."""
    reader = reader_of(request)
    by = opened_by(request)
    edition = await make_edition(reader, _edition_filters(request), by=by)
    background = None
    # HEAD (which Starlette answers for every GET route) downloads nothing: it marks nothing.
    if request.method == "GET" and download_marks_read(reader, edition, by):
        # after the last byte went out, not before: a broken download marks nothing
        background = BackgroundTask(mark_read_after_download, reader, edition.included)
    return _download(edition.data, f"reader-{datetime.date.today().isoformat()}.epub", background)


async def article_epub(request: Request) -> Response:
    article_id = request.path_params["id"]
    book = await article_book(reader_of(request), article_id, by=opened_by(request))
    return _download(book.data, f"reader-article-{article_id}.epub")


async def opds(request: Request) -> Response:
    body = await catalog(reader_of(request), origin_of(request), _edition_filters(request))
    return Response(body, media_type=OPDS_TYPE, headers={"cache-control": "no-store"})
