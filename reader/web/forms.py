"""What the pages' forms and links carry, read and written in one place: where a form
goes back to, the list an article was opened from (and the parameter that names it
again), a list's address and its filter links, the ids a bulk form or a poll names, and
a toggle's yes or no. Parsing the values themselves is the core's (reader/params.py,
core.parse_filter); this is their spelling in the pages' URLs and forms."""

from __future__ import annotations

import dataclasses
from typing import Any
from urllib.parse import urlencode

from starlette.datastructures import FormData, QueryParams

from ..core import (
    MAX_ID,
    READING_LIST,
    ArticleFilter,
    parse_bool,
    parse_filter,
    parse_int,
)
from ..errors import Invalid


def back_to(form: FormData | QueryParams, default: str = "/") -> str:
    """Where a no-JavaScript form returns to: a path on this site, nothing else."""
    target = str(form.get("next") or default)
    if not target.startswith("/") or target.startswith("//") or "\\" in target:
        return default
    return target


def list_url(f: ArticleFilter, **extra: Any) -> str:
    """The address of a list (and a page of it): the filter's parameters plus `extra`."""
    query = urlencode({**f.query(), **{k: v for k, v in extra.items() if v is not None}})
    return "/?" + query if query else "/"


def with_filter(f: ArticleFilter, **changes: Any) -> str:
    """The filter link that changes one filter and keeps the others (the search too)."""
    return list_url(dataclasses.replace(f, **changes))


def list_query(f: ArticleFilter) -> str:
    """What an article link carries so the reader view can read through the list it was
    opened from. No parameter at all means the reading list."""
    return "?" + urlencode({"list": urlencode(f.query())})


def list_of(params: QueryParams) -> tuple[ArticleFilter, str]:
    """The list an article was opened from (the reading list when none is named) and the
    parameter that names it again on the next article's link."""
    raw = params.get("list")
    if raw is None:
        return READING_LIST, ""
    return parse_filter(QueryParams(raw[:2000]), strict=False), "?" + urlencode({"list": raw[:2000]})


def list_name(f: ArticleFilter) -> str:
    if f.is_reading_list:
        return "ready to read"
    if f.q:
        return f"search: {f.q}"
    words = [w for w in (f.state, "unread" if f.unread else None, "starred" if f.starred else None,
                         f"tag {f.tag}" if f.tag else None, f"folder {f.folder}" if f.folder else None) if w]
    return " · ".join(words) or "headlines"


def ids_from(values: list[str], limit: int = 500) -> list[int]:
    """The ids of a page's pending cards as a form or a poll sends them; anything else is
    dropped (they only say which cards to refresh)."""
    return [int(v) for v in values[:limit] if v.isascii() and v.isdigit() and int(v) <= MAX_ID]


def chosen(form: FormData) -> tuple[list[int] | None, int | None]:
    """Which articles a bulk form means: the cards on the page (`ids`), or, without ids,
    the list's filter up to `until` (the newest article when the page was shown)."""
    if form.get("ids") is not None:
        try:
            return [int(i) for i in str(form.get("ids") or "").split(",") if i.strip()], None
        except ValueError:
            raise Invalid("ids must be article ids") from None
    return None, parse_int(str(form.get("until") or "") or None, "until", low=0)


def truthy(value: str | None) -> bool:
    """A filter or toggle in a page's form or link: anything but a clear yes is no (a
    link is never refused for how it spells a filter)."""
    try:
        return parse_bool(value, "value")
    except Invalid:
        return False
