"""The headlines: the lists (a state, a feed, a tag or folder, unread, starred), a
search, one page of either, and the notice after a bulk action."""

from __future__ import annotations

import dataclasses
from typing import Any
from urllib.parse import urlencode

from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import Response

from ...core import STATES, parse_filter, parse_list_page
from ...core.waits import describe_wait
from ...errors import Invalid
from ...records import Article
from ..forms import list_name, list_query, list_url, with_filter
from ..render import any_pending, nav, render
from ..requests import reader_of

# Query parameters a page reads once, for its notice, and never passes on in its links.
_NOTICE_PARAMS = ("marked", "undo", "restored", "tagged", "done", "back", "queued", "qundo", "qwait", "qleft",
                  "unqueued", "started")


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
        next_page = list_url(f, offset=offset + size)
    elif more:
        next_page = list_url(f, before=articles[-1].id)
    feeds = await reader.feeds(counts=False)  # the filter needs names; the unread counts come apart
    counts = await reader.unread_counts()
    kept = [(k, v) for k, v in params.multi_items() if k not in _NOTICE_PARAMS]
    here = request.url.path + ("?" + urlencode(kept) if kept else "")
    return render(
        request, "browse.html", articles=articles, next_page=next_page, active=any_pending(articles), state=f.state,
        feed_id=feed_id, unread=f.unread, starred=f.starred, query=text, message=message, offset=offset,
        feeds=feeds, states=STATES, here=here, filter=f, with_filter=with_filter, list_param=list_query(f),
        unread_counts=counts, unread_total=await reader.unread_total(), reading_list=f.is_reading_list,
        unread_ids=",".join(str(a.id) for a in articles if a.read_at is None),
        not_done_ids=",".join(str(a.id) for a in articles if not a.done),
        page_ids=",".join(str(a.id) for a in articles), newest=await reader.newest_id(),
        queue_ids=",".join(str(a.id) for a in articles if a.state in ("new", "failed")),
        bulk=_bulk_notice(params), list_name=list_name(f), **await nav(request),
    )
