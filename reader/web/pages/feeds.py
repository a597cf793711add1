"""The feeds page: the library of subscriptions by folder, subscribing by a feed's or a
site's URL, unsubscribing (asked first), renaming, folders, refreshing now, the report
of an OPML import, and the bookmarklet it offers."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from ...core import Reader, parse_int
from ...errors import Invalid, NotFound
from ...records import Feed
from ..access import origin_of
from ..csrf import checked_form
from ..forms import back_to, ids_from
from ..render import nav, render
from ..requests import reader_of


async def feeds_page(request: Request) -> Response:
    """The library. After an OPML import, its report: the numbers, then each new feed whose
    first fetch failed, with the reason read from the feed itself (the URL carries only ids)."""
    reader = reader_of(request)
    feeds = await reader.feeds()
    failed = set(ids_from(request.query_params.getlist("failed")))
    failures = [f for f in feeds if f.id in failed and f.error]
    return await render_feeds(request, feeds=feeds, message=request.query_params.get("message"),
                             notice=_import_notice(request.query_params, reader.settings.refresh_interval > 0),
                             failures=failures)


async def subscribe(request: Request) -> Response:
    """Subscribe by a feed's URL or by a site's URL (its feed is discovered)."""
    form = await checked_form(request)
    given = form.get("url")
    try:
        await reader_of(request).subscribe(given)
    except Invalid as exc:
        return await render_feeds(request, status=422, message=exc.message,
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


def _folders(feeds: list[Feed], unread: dict[str, int]) -> list[tuple[str | None, list[Feed], int]]:
    """The feeds by folder, each folder with its unread count (`unread`: a story two of its
    feeds carry counts once): the folders by name, then the feeds in none."""
    groups: dict[str | None, list[Feed]] = {}
    for feed in feeds:
        groups.setdefault(feed.folder, []).append(feed)
    names = sorted((k for k in groups if k is not None), key=str.lower)
    order: list[str | None] = [*names, None] if None in groups else list(names)
    return [(name, groups[name], unread.get(name, 0) if name is not None else sum(f.unread or 0 for f in groups[name]))
            for name in order]


async def render_feeds(request: Request, status: int = 200, **context: Any) -> Response:
    reader = reader_of(request)
    context.setdefault("notice", None)
    if "feeds" not in context:
        context["feeds"] = await reader.feeds()
    return render(request, "feeds.html", status=status, bookmarklet=bookmarklet(request),
                  folders=_folders(context["feeds"], await reader.unread_per_folder()), now=time.time(), **context, **await nav(request))


async def _edit_feed(request: Request, field: str,
                     change: Callable[[Reader, Any, str], Awaitable[Any]]) -> Response:
    """One form field applied to one feed, back to the feeds page; a refused value shows
    there with the reason."""
    form = await checked_form(request)
    try:
        await change(reader_of(request), request.path_params["id"], str(form.get(field) or ""))
    except Invalid as exc:
        return await render_feeds(request, status=422, message=exc.message)
    return RedirectResponse("/feeds", status_code=303)


async def set_folder(request: Request) -> Response:
    """POST /feeds/{id}/folder: put the feed in the folder typed (empty: in none)."""
    return await _edit_feed(request, "folder", Reader.set_folder)


async def rename_feed(request: Request) -> Response:
    """POST /feeds/{id}/rename: the feed's title as the person wants it."""
    return await _edit_feed(request, "title", Reader.rename_feed)
