"""The taps on a card or in the reader view: queue (the one way into the line), unqueue,
read, star, done, tags, the bulk marks (read, done) with their undo; the card and the
batched poll that keep a page's cards moving; and the line's own page."""

from __future__ import annotations

from urllib.parse import urlencode

from starlette.datastructures import FormData, QueryParams
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from ...core import LANES, parse_filter
from ...core.waits import describe_wait
from ...records import Article, QueuedMany
from ..csrf import checked_form
from ..forms import back_to, chosen, ids_from, list_of, list_query, truthy
from ..render import any_pending, error_page, nav, render
from ..requests import is_htmx, reader_of


def _back_with(form: FormData, notice: dict[str, str | int]) -> Response:
    """Back where the form came from (forms.back_to), with a bulk act's notice in the query."""
    target = back_to(form)
    return RedirectResponse(target + ("&" if "?" in target else "?") + urlencode(notice), status_code=303)


def _stamp(form: FormData) -> float | None:
    """The undo's stamp a notice's form carries (a bulk read's or done's shared time)."""
    try:
        return float(str(form.get("stamp") or ""))
    except ValueError:
        return None


async def mark_many(request: Request) -> Response:
    """POST /articles/read: "mark these read" (ids, the cards on the page) or "mark all
    read" (the list's filter and until, the newest article when the page was shown). Back
    to the list with a notice whose undo restores exactly the articles changed."""
    form = await checked_form(request)
    reader = reader_of(request)
    ids, until = chosen(form)
    marked = await reader.mark_many(True, ids=ids, within=parse_filter(form), until=until)
    return _back_with(form, {"marked": len(marked.ids), "undo": repr(marked.stamp) if marked.stamp else ""})


def queued_notice(queued: QueuedMany) -> dict[str, str | int]:
    """The query a list's notice after a bulk queue is rebuilt from (browse._bulk_notice):
    numbers and the undo's token only."""
    notice: dict[str, str | int] = {"queued": len(queued.ids)}
    if queued.undo:
        notice["qundo"] = queued.undo
    if queued.estimate is not None:
        notice["qwait"] = round(queued.estimate)
    elif queued.capacity == 0:
        notice["qwait"] = "none"
    if queued.left:
        notice["qleft"] = queued.left
    return notice


async def queue_many(request: Request) -> Response:
    """POST /articles/queue: "queue these" (ids, the page's cards not queued or ready) or
    "queue all" (the list's filter and until, as mark_many): a person's one act for many
    taps. Back to the list with a notice: how many, when the last should be ready, an undo."""
    form = await checked_form(request)
    ids, until = chosen(form)
    queued = await reader_of(request).queue_many(ids=ids, within=parse_filter(form), until=until)
    return _back_with(form, queued_notice(queued))


async def undo_queue(request: Request) -> Response:
    """POST /articles/queue/undo: the articles of one bulk queue that have not started
    leave the line; back to the list, saying how many, and how many had started."""
    form = await checked_form(request)
    taken = await reader_of(request).undo_queue(str(form.get("undo") or ""))
    return _back_with(form, {"unqueued": len(taken.ids), "started": taken.started})


async def tag_many(request: Request) -> Response:
    """POST /articles/tags: add the tags typed (`tags`, separated by commas) to the cards
    on the page (ids) or to everything the list's filter matches up to `until`; back to
    the list, saying how many were tagged."""
    form = await checked_form(request)
    ids, until = chosen(form)
    tagged = await reader_of(request).tag_many(str(form.get("tags") or ""), ids=ids, within=parse_filter(form),
                                               until=until)
    return _back_with(form, {"tagged": tagged})


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
    stamp = _stamp(form)
    if stamp is None:
        return error_page(request, 422, "nothing to undo")
    return _back_with(form, {"restored": len(await reader_of(request).undo_read(stamp))})


async def done_many(request: Request) -> Response:
    """POST /articles/done: "mark these done" on the reading list (ids, the cards on the
    page), or everything the list's filter matches up to `until`. Back to the list with a
    notice whose undo puts exactly those articles back, each in its place."""
    form = await checked_form(request)
    ids, until = chosen(form)
    marked = await reader_of(request).done_many(True, ids=ids, within=parse_filter(form), until=until)
    return _back_with(form, {"done": len(marked.ids), "undo": repr(marked.stamp) if marked.stamp else ""})


async def undo_done(request: Request) -> Response:
    """POST /articles/done/undo: the articles one bulk done changed are back on the list."""
    form = await checked_form(request)
    stamp = _stamp(form)
    if stamp is None:
        return error_page(request, 422, "nothing to undo")
    return _back_with(form, {"back": len(await reader_of(request).undo_done(stamp))})


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
    listed, list_param = list_of(request.query_params)  # the page's list, named again on its cards
    reading_list = "list" in request.query_params and listed.is_reading_list  # its cards say so too
    return render(request, "_live_update.html", articles=articles, active=any_pending(articles), list_param=list_param,
                  reading_list=reading_list, lanes=truthy(request.query_params.get("lanes") or ""))


async def _card_or_back(request: Request, article: Article, form: FormData) -> Response:
    """After a tap: the new card for htmx, with the page's other pending cards (their ids
    come with the tap) read in the same statement and swapped in out of band, so every
    position on the page comes from one read; and the poller switched on, so the cards
    keep moving. Without JavaScript, back where the person was."""
    if is_htmx(request):
        here = back_to(form)
        # the swapped card's link keeps naming the list the page shows, for reading through
        path, _, query = here.partition("?")
        shown = parse_filter(QueryParams(query), strict=False) if path == "/" else None
        listed = list_query(shown) if shown is not None else None
        others = [i for i in ids_from([str(v) for v in form.getlist("id")]) if i != article.id]
        fresh = await reader_of(request).articles(ids=[article.id, *others], limit=len(others) + 1)
        article = next((a for a in fresh if a.id == article.id), article)
        rest = [a for a in fresh if a.id != article.id]
        return render(request, "_card_update.html", article=article, others=rest,
                      active=any_pending([article, *rest]), here=here, list_param=listed or "",
                      reading_list=shown is not None and shown.is_reading_list, lanes=path == "/queue")
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


async def _toggle(request: Request, field: str) -> Response:
    """POST /articles/{id}/read and /star: `value` on or off. htmx gets the card (or the
    reader view's tools); without JavaScript, a 303 back where the person was."""
    form = await checked_form(request)
    reader = reader_of(request)
    on = truthy(str(form.get("value") or ""))
    change = reader.mark_read if field == "read" else reader.star
    article = await change(request.path_params["id"], on)
    if is_htmx(request) and form.get("view") == "article":
        return render(request, "_reading_tools.html", article=article)
    return await _card_or_back(request, article, form)


async def mark_read(request: Request) -> Response:
    return await _toggle(request, "read")


async def star(request: Request) -> Response:
    return await _toggle(request, "star")


async def mark_done(request: Request) -> Response:
    """POST /articles/{id}/done: done with it (off the reading list), or with `done=0` not
    done (back on it, in its place). htmx gets the card or the reader view's tools; without
    JavaScript, a 303 back where the person was."""
    form = await checked_form(request)
    done = truthy(str(form.get("done") if form.get("done") is not None else "1"))
    article = await reader_of(request).mark_done(request.path_params["id"], done)
    if is_htmx(request) and form.get("view") == "article":
        return render(request, "_reading_tools.html", article=article)
    return await _card_or_back(request, article, form)


async def queue_page(request: Request) -> Response:
    """The whole line in service order: what is being cleaned, then what waits."""
    reader = reader_of(request)
    articles = await reader.line()
    return render(request, "queue.html", articles=articles, active=any_pending(articles), here="/queue",
                  capacity=await reader.capacity(), lead=describe_wait(reader.settings.next_lead),
                  **await nav(request))
