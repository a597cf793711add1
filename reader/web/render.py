"""How a page is drawn: the one Jinja environment with every filter the templates use,
`render()` (which adds what every page shows: the CSRF token, whether the database is
read-only, the poll interval), the nav's count, and the error page. Templates live in
reader/templates; nothing here reads a request's parameters or changes anything."""

from __future__ import annotations

import datetime
import time
from typing import Any
from urllib.parse import urlsplit

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse

from ..clean.images import without_images
from ..clean.sanitize import plain_text
from ..core import snippet_html
from ..core.failures import advice_for
from ..core.highlights import list_item
from ..core.waits import describe_wait
from ..records import FINISHED, Article
from ..resources import templates_dir
from ..settings import Settings
from .requests import reader_of

TEMPLATES = templates_dir()


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


WORDS_PER_MINUTE = 230


def reading_minutes(words: int) -> int:
    return max(1, round(words / WORDS_PER_MINUTE))


def _since(timestamp: float | None) -> str:
    """A headline's age as a person says it; past a month the date says more than "93 d"."""
    if not timestamp:
        return ""
    seconds = time.time() - timestamp
    if seconds >= 30 * 86400:
        return _date(timestamp)
    return _ago(timestamp)


def _exact(timestamp: float | None) -> str:
    if not timestamp:
        return ""
    return datetime.datetime.fromtimestamp(timestamp, datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")


def _iso(timestamp: float | None) -> str:
    if not timestamp:
        return ""
    return datetime.datetime.fromtimestamp(timestamp, datetime.UTC).strftime("%Y-%m-%dT%H:%MZ")


def _progress(fraction: float) -> str:
    """Where a person stopped in an article, as they would say it."""
    if fraction >= FINISHED:
        return "read to the end"
    if 0.45 <= fraction <= 0.55:
        return "half read"
    return f"{max(1, round(fraction * 100))}% read"


def _host(url: str | None) -> str:
    try:
        return urlsplit(url or "").hostname or ""
    except ValueError:
        return ""


env = Environment(
    loader=FileSystemLoader(TEMPLATES),
    autoescape=select_autoescape(["html"]),
    trim_blocks=True,
    lstrip_blocks=True,
    auto_reload=False,  # templates ship with the code: no stat() of every file on every render
)
env.filters.update(date=_date, ago=_ago, since=_since, exact=_exact, iso=_iso, excerpt=_excerpt,
                   minutes=reading_minutes, wait=describe_wait, progress=_progress, host=_host,
                   highlight=snippet_html, without_images=without_images, advice=advice_for,
                   highlight_item=list_item)


def render(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    reader = getattr(request.app.state, "reader", None)
    read_only = reader is not None and reader.read_only
    # How often a page with something still being cleaned asks again (htmx's "every Ns").
    poll = reader.settings.poll_interval if reader is not None else Settings.poll_interval
    html = env.get_template(template).render(request=request, csrf=request.scope.get("reader.csrf", ""),
                                             read_only=read_only, poll=f"{poll:g}s",
                                             logs_in=logs_in(reader), **context)
    # Card states change by the second: Back must show the line as it is now, not a copy
    # the browser kept from before.
    return HTMLResponse(html, status_code=status, headers={"Cache-Control": "no-store"})


def logs_in(reader: Any) -> bool:
    """Whether pages offer to log out: only with a password (without one nobody logs in)."""
    return reader is not None and bool(reader.settings.password)


def error_page(request: Request, status: int, message: str) -> HTMLResponse:
    return render(request, "error.html", status=status, status_code=status, message=message)


async def nav(request: Request) -> dict[str, Any]:
    """What the main nav shows on every full page: the reading list's length."""
    return {"reading_count": await reader_of(request).reading_count()}


def any_pending(articles: list[Article]) -> bool:
    return any(a.state in ("queued", "cleaning") for a in articles)
