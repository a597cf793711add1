"""The headlines: the lists (a state, a feed, a tag or folder, unread, starred), a
search, one page of either, and the notice after a bulk action."""

from __future__ import annotations

import dataclasses
import functools
from typing import Any
from urllib.parse import urlencode

from markupsafe import Markup
from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import Response

from ...core import STATES, UNREAD_CAP, parse_filter, parse_list_page
from ...core.waits import describe_wait
from ...errors import Invalid
from ...records import Article, FeedChoice
from ..forms import list_name, list_query, list_url, with_filter
from ..render import any_pending, render
from ..requests import reader_of

# Query parameters a page reads once, for its notice, and never passes on in its links.
_NOTICE_PARAMS = ("marked", "undo", "restored", "tagged", "done", "back", "queued", "qundo", "qwait", "qleft",
                  "unqueued", "started")


@functools.lru_cache(maxsize=32)
def _feed_options(feeds: tuple[FeedChoice, ...], chosen: int | None) -> Markup:
    """The feed filter's options, drawn once while the feeds stay the same (the core hands
    out the same tuple then): with 200 feeds they were a fifth of the page's render. No
    count in them (the unread link counts the list chosen); </option> and a number's quotes
    are optional, and were 2 KB of the page."""
    return Markup("").join(Markup('<option value={}{}>{}\n').format(f.id, Markup(" selected") if f.id == chosen else "",
                                                                   f.name) for f in feeds)


def _bulk_notice(params: QueryParams) -> dict[str, Any] | None:
    """The notice after a bulk read, done or queue (with its undo) or an undo, rebuilt from numbers only."""
    try:
        for kind in ("marked", "done"):
            if params.get(kind) is not None:
                stamp = float(params.get("undo") or "nan")
                return {kind: int(params[kind]), "stamp": repr(stamp) if stamp == stamp else None}
        if params.get("restored") is not None:
            return {"restored": int(params["restored"])}
        if params.get("back") is not None:
            return {"back": int(params["back"])}
        if params.get("tagged") is not None:
            return {"tagged": int(params["tagged"])}
        if params.get("queued") is not None:
            wait = params.get("qwait")
            undo = params.get("qundo") or ""
            return {"queued": int(params["queued"]), "left": int(params.get("qleft") or 0),
                    "wait": describe_wait(float(wait)) if wait and wait != "none" else None,
                    "no_worker": wait == "none", "qundo": repr(float(undo)) if undo else None}
        if params.get("unqueued") is not None:
            return {"unqueued": int(params["unqueued"]), "started": int(params.get("started") or 0)}
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
    in_highlights = 0
    articles: list[Article] = []
    if text:
        try:
            articles = await reader.listing(f, limit=size + 1, offset=offset)
        except Invalid as exc:
            message = exc.message[:1].upper() + exc.message[1:] + "."
        else:
            if not articles and offset == 0:
                message = f"No articles match “{text}”."
            if offset == 0:  # notes and quotes are the highlights page's to search: point there
                in_highlights = await reader.highlights_matching(text)
    else:
        articles = await reader.listing(f, before=before, limit=size + 1)
    more = len(articles) > size
    articles = articles[:size]
    next_page = None
    if more and text:
        next_page = list_url(f, offset=offset + size)
    elif more:
        next_page = list_url(f, before=articles[-1].id)
    facts = await reader.list_facts()  # the feed filter, the nav's count, the bulk bound: one read
    unread_count = await reader.unread_in(f, facts)
    kept = [(k, v) for k, v in params.multi_items() if k not in _NOTICE_PARAMS]
    here = request.url.path + ("?" + urlencode(kept) if kept else "")
    compact = request.cookies.get("reader_view") != "cards"
    return render(
        request, "browse.html", articles=articles, next_page=next_page, active=any_pending(articles), state=f.state,
        feed_id=feed_id, unread=f.unread, starred=f.starred, query=text, message=message, offset=offset,
        feeds=facts.feeds, feed_options=_feed_options(facts.feeds, feed_id), states=STATES, here=here, filter=f,
        with_filter=with_filter, list_param=list_query(f), unread_count=_count(unread_count),
        reading_list=f.is_reading_list, compact=compact,
        unread_ids=",".join(str(a.id) for a in articles if a.read_at is None),
        not_done_ids=",".join(str(a.id) for a in articles if not a.done),
        queue_ids=",".join(str(a.id) for a in articles if a.state in ("new", "failed")),
        page_ids=",".join(str(a.id) for a in articles), newest=facts.newest,
        bulk=_bulk_notice(params), list_name=list_name(f), reading_count=facts.reading,
        in_highlights=in_highlights, highlights_url="/highlights?" + urlencode({"q": text or ""}),
    )


def _count(n: int | None) -> str | None:
    """A count as a filter shows it: past the cap it counts to, "999+"."""
    if n is None:
        return None
    return f"{UNREAD_CAP}+" if n > UNREAD_CAP else str(n)
