"""The highlights page: every highlight, newest first, narrowed by a tag, an article, a
feed or words in the quote, note or tags; each links to its place in its article."""

from __future__ import annotations

from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from ...core import parse_int
from ...errors import ExtractionFailed
from ..csrf import checked_form
from ..render import nav, render
from ..requests import reader_of

PAGE = 50


async def highlights_page(request: Request) -> Response:
    reader = reader_of(request)
    params = request.query_params
    article_id = parse_int(params.get("article"), "article")
    feed_id = parse_int(params.get("feed"), "feed")
    tag = (params.get("tag") or "").strip() or None
    text = (params.get("q") or "").strip() or None
    rows, following = await reader.list_highlights(article_id=article_id, feed_id=feed_id, tag=tag, text=text,
                                                   before=params.get("before"), limit=PAGE)
    kept = {name: value for name, value in (("tag", tag), ("q", text), ("feed", feed_id), ("article", article_id))
            if value is not None}
    older = f"/highlights?{urlencode({**kept, 'before': following})}" if following else None
    article_title = None
    if article_id is not None:
        article_title = (await reader.article(article_id)).title
    return render(request, "highlights.html", rows=rows, older=older, tag=tag, text=text or "", feed_id=feed_id,
                  article_id=article_id, article_title=article_title, tags=await reader.highlight_tags(),
                  feeds=await reader.feeds(counts=False), filtered=bool(kept), **await nav(request))


async def highlights_zip(request: Request) -> Response:
    """Every highlight as Markdown, a file per article, in a ZIP (for Obsidian and the like)."""
    body = await reader_of(request).highlights_zip(str(request.base_url))
    return Response(body, media_type="application/zip",
                    headers={"content-disposition": 'attachment; filename="reader-highlights.zip"'})


async def highlights_csv(request: Request) -> Response:
    """Every highlight as Readwise's CSV."""
    body = await reader_of(request).highlights_readwise()
    return Response(body.encode("utf-8"), media_type="text/csv; charset=utf-8",
                    headers={"content-disposition": 'attachment; filename="reader-highlights-readwise.csv"'})


async def fetch_again(request: Request) -> Response:
    """POST /articles/{id}/refetch: the person asks for the page anew (the site changed
    it). Cleaned through the same claim as every other cleaning; its text replaces the old
    one and its highlights are placed again, those no longer found listed as detached. A
    page that cannot be fetched or cleaned leaves the text as it was, and says why."""
    await checked_form(request)
    article_id = request.path_params["id"]
    outcome, error = await reader_of(request).reclean(article_id, refetch=True)
    if outcome != "cached":
        raise ExtractionFailed(f"fetching the page again failed ({error or outcome}); the article keeps its text")
    return RedirectResponse(f"/articles/{article_id}#highlights", status_code=303)
