"""How a page is drawn: the one Jinja environment with every filter the templates use,
`render()` (which adds what every page shows: the CSRF token, whether the database is
read-only, the poll interval), the nav's count, and the error page. Templates live in
reader/templates; nothing here reads a request's parameters or changes anything."""

from __future__ import annotations

import datetime
import functools
import time
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlencode, urlsplit

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup, escape
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


@functools.lru_cache(maxsize=4096)
def _minute(minute: int) -> tuple[str, str]:
    """The UTC day and clock of a minute since the epoch (kept: a list shows the same 50)."""
    d = datetime.datetime.fromtimestamp(minute * 60, datetime.UTC)
    return f"{d.year:04d}-{d.month:02d}-{d.day:02d}", f"{d.hour:02d}:{d.minute:02d}"


def _time_tag(timestamp: float) -> str:
    """A headline's <time> (markup): its age as a person says it (past a month the date
    says more than "93 d ago") and the machine date, from one datetime where three filters
    made three. The exact time on hover (title) is static/app.js's to add: it is in the
    datetime already."""
    day, clock = _minute(int(timestamp // 60))
    said = day if time.time() - timestamp >= 30 * 86400 else _ago(timestamp)
    return f'<time datetime="{day}T{clock}Z">{said}</time>'


def _site(url: str | None) -> str:
    """The site an article is from, as its address names it (without the "www.")."""
    host = _host(url)
    return host[4:] if host.startswith("www.") else host


def _host(url: str | None) -> str:
    try:
        return urlsplit(url or "").hostname or ""
    except ValueError:
        return ""


# -- a list's cards ------------------------------------------------------------------
# The one piece of markup a list page repeats 50 times, drawn here rather than in Jinja
# (templates/_card.html hands its cards to `cards` and says what a card holds and why).
# As a template a card cost about 25 µs (a few dozen escapes, attribute lookups and pieces
# appended each: 50 cards were two thirds of the headlines' render); written with each
# value escaped once and the rest plain strings, it is about a third of that
# (benchmarks/list_pages.py).

def _text(value: str) -> str:
    """Text escaped for HTML, as markupsafe escapes it (the same five characters and
    entities) at a third of its cost: no Markup object made for each value."""
    return (value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&#34;")
            .replace("'", "&#39;"))


_STARRED = '<span class="star-mark" title="starred">★<span class="visually-hidden"> starred ·</span></span> '
_UNREAD = '<span class="unread-mark"><span class="visually-hidden">unread ·</span></span>'
_BROWSER = ('<span class="browser-hint">cleaning failed: this site needs your browser; open it and press '
            '<em>Save to reader</em></span>')


def _status(a: Article) -> str:
    """Where the article stands, in words (markup: escaped): nothing for one never tapped."""
    if a.state == "queued":
        said = f"#{a.position} in line" + (" (queue first)" if a.lane == "next" else "")
        if a.wait is not None:
            said += f" · ready in {describe_wait(a.wait)}"
        elif a.capacity == 0:
            said += " · no worker is running"
        return said
    if a.state == "failed":
        return _text(f"failed: {a.error}")
    if a.state == "ready":  # ready, and whether the text may be only the article's start (clean/partial.py)
        return ("done" if a.done else "ready") + (" · may be only the start" if a.partial else "")
    return "cleaning…" if a.state == "cleaning" else ""


def _facts(a: Article, reading_list: bool) -> str:
    """A card's line of facts (markup): starred, unread, its source, tags, age, reading
    time, progress, status and a failure's advice. The reading list names the site an
    article is from and leaves out its age (it is in tap order); the others, the feed."""
    parts = [_STARRED if a.starred_at else "", "" if a.read_at else _UNREAD,
             _text((_site(a.url) if reading_list else "") or a.feed_title or "saved")]
    if a.also_in:  # one story, several feeds: one card (store/feeds.py)
        parts.append(f' <span class="also-in">· also in {_text(", ".join(a.also_in))}</span>')
    for tag in a.tags:
        parts.append(f' · <a class="tag" href="/?{_text(urlencode({"tag": tag}))}">#{_text(tag)}</a>')
    if a.published and not reading_list:
        parts.append(" · " + _time_tag(a.published))
    if a.words:
        parts.append(f" · {reading_minutes(a.words)} min")
    if a.highlights:
        parts.append(f" · {a.highlights} highlight{'s' if a.highlights != 1 else ''}")
    if a.read_position:
        parts.append(f' · <span class="progress">{_progress(a.read_position)}</span>')
    if a.state != "new" and not (reading_list and a.state == "ready" and not a.partial):
        parts.append(f' · <span class="status" role="status">{_status(a)}</span>')
    if a.state == "failed":
        # What the failure's reason advises (core/failures.py): the person's browser (the
        # bookmarklet) only for what a browser can get past; a page that is gone or a
        # site that cannot be reached says so and sends nobody to open it.
        advice = advice_for(a.error)
        if advice.browser:
            parts.append(_BROWSER)
        elif advice.says:
            parts.append(f'<span class="advice advice-{_text(advice.remedy)}">{_text(advice.says)}</span>')
    return "".join(parts)


def cards(articles: Sequence[Article], *, compact: bool = True, reading_list: bool = False, list_param: str = "",
          here: str = "/", csrf: str = "", oob: bool = False, lanes: bool = False) -> Markup:
    """These articles' cards, one after the other: rows (`compact`) or the roomier cards
    with the feed's summary. `reading_list`: the reading list's own facts; `list_param`:
    what their links carry to read through the list; `here` and `csrf`: what an unqueue
    form sends; `oob`: swapped in out of band (htmx); `lanes`: a waiting card's lane move
    beside its unqueue (the line's own page: there it is the point, and works without
    JavaScript, a button of the page's one form with its lane)."""
    layout = "row" if compact else "roomy"
    swap = ' hx-swap-oob="true"' if oob else ""
    back = f'<input type="hidden" name="csrf" value="{_text(csrf)}"><input type="hidden" name="next" value="{_text(here)}">'
    carried = _text(list_param)
    out = []
    for a in articles:
        i, state = a.id, a.state
        link = f"/articles/{i}{carried}"
        flags = (" data-done" if a.done else "") + (" data-starred" if a.starred_at else "")
        pending = f'<input type="hidden" class="pending-id" name="id" value="{i}">' if state in ("queued", "cleaning") else ""
        if a.snippet:
            extra = f'<p class="snippet">{snippet_html(a.snippet)}</p>\n'
        elif a.summary and not compact:
            extra = f'<p class="summary">{_text(_excerpt(a.summary))}</p>\n'
        else:
            extra = ""
        if state in ("new", "failed"):
            main = (f'<button form="tap" formaction="/articles/{i}/queue" hx-post="/articles/{i}/queue" data-key="q">'
                    f'{"retry" if state == "failed" else "queue"}</button>')
        elif state == "queued":
            main = (f'<form method="post" action="/articles/{i}/unqueue" hx-post="/articles/{i}/unqueue">{back}'
                    '<button>unqueue</button></form>')
            if lanes:
                lane, said, key = ("normal", "back in line", "") if a.lane == "next" else ("next", "queue first",
                                                                                         ' data-key="n"')
                main += (f'<button form="tap" formaction="/articles/{i}/queue" hx-post="/articles/{i}/queue" name="lane"'
                         f' value="{lane}" hx-vals=\'{{"lane": "{lane}"}}\'{key}>{said}</button>')
        elif state == "ready":
            main = f'<a class="button" href="{link}">read</a>'
        else:
            main = ""
        out.append(
            f'<article class="card {layout} state-{state}{" lane-next" if a.lane == "next" else ""}" id="card-{i}"'
            f' data-read="{"yes" if a.read_at else "no"}"{flags} data-url="{_text(a.url)}"{swap}>\n{pending}'
            f'<h2 id="title-{i}"><a href="{link}">{_text(a.title)}</a></h2>\n'
            f'<p class="meta">{_facts(a, reading_list)}</p>\n{extra}'
            f'<div class="actions">{main}<button class="more-toggle">⋯</button></div>\n</article>\n')
    return Markup("".join(out))


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
env.globals.update(cards=cards)


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
