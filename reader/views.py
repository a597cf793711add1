"""The HTML pages. Every action is a plain form (POST, then a 303 redirect) that works
without JavaScript; htmx adds partial swaps on top, and for an htmx request the same
template renders just the card."""

from __future__ import annotations

import datetime
import hmac
import time
from urllib.parse import urlencode

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from .api import MAX_ID, ApiError, LANES, add_waits, reader_of, tap, untap, valid_url
from .access import SESSION_COOKIE, checked_form, session_value
from .cleaning import ArticleFailed, UnknownArticle
from .extract import reading_minutes
from .line import describe_wait
from .feeds import refresh_feeds
from .sanitize import plain_text
from .store import STATES

from pathlib import Path

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"


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


env = Environment(
    loader=FileSystemLoader(TEMPLATES),
    autoescape=select_autoescape(["html"]),
    trim_blocks=True,
    lstrip_blocks=True,
)
env.filters.update(date=_date, ago=_ago, excerpt=_excerpt, minutes=reading_minutes, wait=describe_wait)


def render(request: Request, template: str, status: int = 200, **context) -> HTMLResponse:
    html = env.get_template(template).render(request=request, csrf=request.scope.get("reader.csrf", ""), **context)
    return HTMLResponse(html, status_code=status)


def is_htmx(request: Request) -> bool:
    return request.headers.get("hx-request") == "true"


def back_to(form, default: str = "/") -> str:
    """Where a no-JavaScript form returns to: a path on this site, nothing else."""
    target = str(form.get("next") or default)
    if not target.startswith("/") or target.startswith("//") or "\\" in target:
        return default
    return target


def error_page(request: Request, status: int, message: str) -> HTMLResponse:
    return render(request, "error.html", status=status, status_code=status, message=message)


async def browse(request: Request) -> Response:
    reader = reader_of(request)
    state = request.query_params.get("state") or None
    if state not in (None, *STATES):
        state = None
    try:
        before = int(request.query_params["before"]) if request.query_params.get("before") else None
        feed_id = int(request.query_params["feed"]) if request.query_params.get("feed") else None
    except ValueError:
        return error_page(request, 400, "before and feed must be numbers")
    # beyond SQLite's integer range the query would raise OverflowError (a 500)
    if any(n is not None and not 0 <= n <= MAX_ID for n in (before, feed_id)):
        return error_page(request, 400, "before and feed must be article and feed ids")
    size = reader.settings.page_size
    articles = await reader.store.list_articles(state=state, feed_id=feed_id, before=before, limit=size + 1)
    more = len(articles) > size
    articles = articles[:size]
    next_page = None
    if more:
        query = {k: v for k, v in (("state", state), ("feed", feed_id)) if v}
        next_page = "/?" + urlencode({**query, "before": articles[-1]["id"]})
    feeds = await reader.store.list_feeds(counts=False)  # the filter needs names, not counts
    await add_waits(reader, articles)
    return render(
        request, "browse.html", articles=articles, next_page=next_page, active=_pending(articles), state=state, feed_id=feed_id,
        feeds=feeds, states=STATES, here=request.url.path + ("?" + request.url.query if request.url.query else ""),
    )


def _pending(articles) -> bool:
    return any(a["state"] in ("queued", "cleaning") for a in articles)


async def card(request: Request) -> Response:
    reader = reader_of(request)
    article = await reader.store.get_article(request.path_params["id"])
    if article is None:
        return error_page(request, 404, "no such article")
    return render(request, "_card.html", article=(await add_waits(reader, [article]))[0])


async def live(request: Request) -> Response:
    """The batched poll: the current card of every id asked for, swapped in out of band,
    and the poller itself, which stays active while any of them is still pending."""
    reader = reader_of(request)
    try:
        ids = [int(i) for i in request.query_params.getlist("id")][:500]
    except ValueError:
        return error_page(request, 400, "id must be a number")
    articles = await add_waits(reader, await reader.store.list_articles(ids=ids, limit=500)) if ids else []
    return render(request, "_live_update.html", articles=articles, active=_pending(articles))


async def _card_or_back(request: Request, article_id: int, form) -> Response:
    """After a tap: the new card for htmx (and the poller switched on, out of band, so the
    card keeps moving), or back where the person was without JavaScript."""
    if is_htmx(request):
        reader = reader_of(request)
        article = (await add_waits(reader, [await reader.store.get_article(article_id)]))[0]
        return render(request, "_card_update.html", article=article, active=_pending([article]),
                      here=back_to(form))
    return RedirectResponse(back_to(form), status_code=303)


async def queue_tap(request: Request) -> Response:
    form = await checked_form(request)
    lane = str(form.get("lane") or "normal")
    article_id = request.path_params["id"]
    try:
        await tap(reader_of(request), article_id, lane if lane in LANES else "normal")
    except ApiError as exc:
        return error_page(request, exc.status, exc.message)
    return await _card_or_back(request, article_id, form)


async def unqueue_tap(request: Request) -> Response:
    form = await checked_form(request)
    article_id = request.path_params["id"]
    try:
        await untap(reader_of(request), article_id)
    except ApiError as exc:
        return error_page(request, exc.status, exc.message)
    return await _card_or_back(request, article_id, form)


async def read(request: Request) -> Response:
    """The direct lane: cleaned text now, extracting it if nobody has."""
    reader = reader_of(request)
    article_id = request.path_params["id"]
    article, content = await reader.store.reading(article_id)
    if article is None:
        return error_page(request, 404, "no such article")
    if article["read_at"] is None:  # opening marks it read; later opens write nothing
        await reader.store.mark_read(article_id)
    error = None
    if content is not None:
        pass
    elif article["state"] == "failed":
        error = article["error"]  # a retry is a tap, not a side effect of opening
    else:
        try:
            content = await reader.cleaner.open(article_id)
        except ArticleFailed as exc:
            error = str(exc)
        except UnknownArticle:
            return error_page(request, 404, "no such article")
        article = await reader.store.get_article(article_id)
    return render(request, "article.html", article=article, content=content, error=error)


async def queue_page(request: Request) -> Response:
    """The whole line in service order: what is being cleaned, then what waits."""
    reader = reader_of(request)
    articles = await add_waits(reader, await reader.store.line())
    return render(request, "queue.html", articles=articles, active=_pending(articles), here="/queue",
                  capacity=await reader.store.capacity(), lead=describe_wait(reader.settings.next_lead))


async def feeds_page(request: Request) -> Response:
    reader = reader_of(request)
    return render(request, "feeds.html", feeds=await reader.store.list_feeds(),
                  message=request.query_params.get("message"))


async def subscribe(request: Request) -> Response:
    reader = reader_of(request)
    form = await checked_form(request)
    try:
        url = valid_url(form.get("url"))
    except ApiError as exc:
        return render(request, "feeds.html", status=422, feeds=await reader.store.list_feeds(),
                      message=exc.message, url=form.get("url") or "")
    feed_id, created = await reader.store.add_feed(url)
    if created:
        await refresh_feeds(reader.store, reader.client, reader.pool, [await reader.store.get_feed(feed_id)],
                            max_bytes=reader.settings.max_page_bytes, deadline=reader.settings.fetch_timeout)
    return RedirectResponse("/feeds", status_code=303)


async def unsubscribe(request: Request) -> Response:
    await checked_form(request)
    await reader_of(request).store.delete_feed(request.path_params["id"])
    return RedirectResponse("/feeds", status_code=303)


async def refresh_now(request: Request) -> Response:
    reader = reader_of(request)
    form = await checked_form(request)
    feeds = await reader.store.list_feeds()
    if form.get("feed"):
        feeds = [f for f in feeds if str(f["id"]) == str(form.get("feed"))]
    await refresh_feeds(reader.store, reader.client, reader.pool, feeds,
                        max_bytes=reader.settings.max_page_bytes, deadline=reader.settings.fetch_timeout)
    return RedirectResponse(back_to(form), status_code=303)


async def stats_page(request: Request) -> Response:
    reader = reader_of(request)
    return render(request, "stats.html", stats=await reader.store.stats(), runs=(await reader.store.runs())[-20:][::-1])


async def login_page(request: Request) -> Response:
    return render(request, "login.html", next=back_to(request.query_params))


async def login(request: Request) -> Response:
    """Only reachable with READER_PASSWORD set (without it, nobody is ever sent here)."""
    password = reader_of(request).settings.password
    form = await checked_form(request)
    given = str(form.get("password") or "")
    if not password or not hmac.compare_digest(given.encode(), password.encode()):
        return render(request, "login.html", status=401, next=back_to(form), message="wrong password")
    response = RedirectResponse(back_to(form), status_code=303)
    response.set_cookie(SESSION_COOKIE, session_value(password), httponly=True, samesite="lax",
                        secure=request.url.scheme == "https", max_age=400 * 86400)
    return response


async def logout(request: Request) -> Response:
    await checked_form(request)
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(SESSION_COOKIE)
    return response


routes = [
    Route("/login", login_page, methods=["GET"]),
    Route("/login", login, methods=["POST"]),
    Route("/logout", logout, methods=["POST"]),
    Route("/", browse, methods=["GET"]),
    Route("/articles/{id:rowid}", read, methods=["GET"]),
    Route("/articles/{id:rowid}/card", card, methods=["GET"]),
    Route("/articles/{id:rowid}/queue", queue_tap, methods=["POST"]),
    Route("/articles/{id:rowid}/unqueue", unqueue_tap, methods=["POST"]),
    Route("/live", live, methods=["GET"]),
    Route("/queue", queue_page, methods=["GET"]),
    Route("/feeds", feeds_page, methods=["GET"]),
    Route("/feeds", subscribe, methods=["POST"]),
    Route("/feeds/{id:rowid}/delete", unsubscribe, methods=["POST"]),
    Route("/refresh", refresh_now, methods=["POST"]),
    Route("/stats", stats_page, methods=["GET"]),
]
