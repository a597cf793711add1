"""Saving a link: the confirmation the bookmarklet and the installed app's share target
open (a GET saves nothing), the form that saves (and maybe queues), and the page a
browser sends for an article the server could not clean."""

from __future__ import annotations

import re

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from ...core import Saved
from ...errors import Invalid, ReaderError
from ...urls import check_url
from ..access import MAX_TARGET_LENGTH
from ..csrf import check_token, checked_form
from ..forms import back_to, truthy
from ..render import error_page, render
from ..requests import reader_of

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
                  page=truthy(request.query_params.get("page")) and not message,
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
