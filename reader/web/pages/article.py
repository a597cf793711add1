"""The reader view: an article opened (the direct lane, through Reader.open_page), the
body its page polls while the text is being cleaned, and the images stored with it. A
ready page kept from before is answered ahead of this, by reader/web/kept.py."""

from __future__ import annotations

from typing import Any

from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import Response

from ...core import ArticleFilter
from ...core.highlights import COLORS, shown
from ...records import ArticlePage
from ..forms import list_name, list_of, list_url
from ..kept import page_key, ready_page
from ..render import nav, render
from ..requests import is_htmx, opened_by, reader_of

_NO_ITEMS = (Markup(""), Markup(""))


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
    f, carry = list_of(request.query_params)
    by = opened_by(request)
    opened = await reader.open_page(article_id, f, by=by)
    page = opened.page
    assert page is not None
    # The page read with the article (its version, the nav's count) holds unless this open
    # changed it: the text came later, by a write, or the open marked the article read.
    count = page.reading_count if opened.unchanged else None
    key = None
    if opened.unchanged and reader.changes_with_version(f):
        key = page_key(reader, article_id, request.scope.get("reader.csrf", ""), carry)
    through = await _through(request, page, f, carry, count)
    if opened.content is not None and page.highlights:
        # the marks painted over the text, so reading them needs no JavaScript; with their
        # list items, kept from the last render with the same highlights and text
        marks = reader.marks.of(page, opened.content)
        through.update(highlights=marks.shown, highlight_items=(marks.placed, marks.detached))
        if marks.body is not None:
            through["marked_html"] = marks.body
    else:
        through.update(highlights=shown(page.highlights), highlight_items=_NO_ITEMS)
    # a page that says a write failed is this open's alone: rendered, never kept
    if opened.content is not None and opened.error is None and opened.unsaved is None:
        return ready_page(request, opened.article, opened.content, through,
                           (key, page.version) if key is not None else None)
    return render(request, "article.html", article=opened.article, content=opened.content, error=opened.error,
                  held=by == "another site", unsaved=opened.unsaved, **through)


async def _through(request: Request, page: ArticlePage, f: ArticleFilter, carry: str,
                   reading_count: int | None) -> dict[str, Any]:
    """Reading through: the previous and next article of the list this one was opened
    from (read with it), the parameter that keeps that list on their links, the
    article's notes and the nav's count (read now if `reading_count` is None). Its
    highlights are added by `read`."""
    back = list_url(f) if carry else "/"
    around = {"reading_count": reading_count} if reading_count is not None else await nav(request)
    # highlights and annotations brought from other apps; a tuple, so a page's version hashes it
    notes = tuple((n["text"], n["comment"], n["created_at"]) for n in page.notes)
    # the back link is named after where it goes: the list the article was opened from
    back_name = (list_name(f)[:1].upper() + list_name(f)[1:]) if carry else "headlines"
    return {"prev": page.prev, "next": page.next, "carry": carry, "back": back, "back_name": back_name,
            "list_name": list_name(f), "reading_list": f.is_reading_list,
            "colors": COLORS, "notes": notes, **around}


async def reading_body(request: Request) -> Response:
    """The reader view's body alone: the page polls it while the article is being
    cleaned, and it stops polling (no hx-trigger) once the text or a failure is there.
    Another site's link to it starts nothing, as with the article's page."""
    by = opened_by(request)
    opened = await reader_of(request).reading_state(request.path_params["id"], wait=0.0, by=by)
    return render(request, "_reading_body.html", article=opened.article, content=opened.content,
                  error=opened.error, live=is_htmx(request), held=by == "another site")


async def article_image(request: Request) -> Response:
    """An image stored with an article. Its address names its bytes (their sha256), so it
    never changes: cached for a year, immutable, by the person's browser alone (private: with
    a password it is theirs, and a shared cache must not hand it to whoever names it). The
    type was sniffed when it was stored, and nosniff (on every answer) keeps the browser to it."""
    image = await reader_of(request).image(request.path_params["id"], request.path_params["hash"])
    return Response(image.data, media_type=image.type,
                    headers={"Cache-Control": "private, max-age=31536000, immutable"})
