"""RSS, Atom (feedparser) and JSON Feed (by hand: feedparser 6 does not read it) parsed
into headlines: pure CPU, run in the pool."""

from __future__ import annotations

import calendar
import hashlib
import json
import logging
from email.utils import parsedate_to_datetime
from datetime import datetime
from typing import Any
from urllib.parse import urljoin

import feedparser

from ..errors import Invalid
from ..urls import http_url
from ..clean.sanitize import clean_html, plain_text

log = logging.getLogger(__name__)

_JSON_TYPES = {"application/feed+json", "application/json"}


class FeedError(Invalid):
    """The body is not a feed we can read."""



def parse_feed(body: bytes, url: str, content_type: str) -> dict[str, Any]:
    """Parse a feed body into {title, site_url, entries}. Pure CPU; runs in the pool."""
    if content_type in _JSON_TYPES or body.lstrip()[:1] == b"{":
        return _parse_json_feed(body, url)
    parsed = feedparser.parse(body, response_headers={"content-location": url})
    reason = parsed.get("bozo_exception")
    if isinstance(reason, feedparser.NonXMLContentType):
        # We never hand feedparser the Content-Type header, so it flags *every* body with
        # "no Content-type specified". That says nothing about the body: treating it as a
        # fault made a valid feed with no items yet (a new blog, a feed that lists only
        # this week) fail with that message. Only real parse problems count.
        reason = None
    # `version` is "" unless feedparser recognised RSS or Atom: an HTML page is not a feed
    # (it used to be rejected only by the spurious content-type flag above).
    # .get, not attributes: for an empty body feedparser sets no "version" at all, and
    # `parsed.version` raised AttributeError ("could not read the feed (object has no
    # attribute 'version')") instead of saying it is not a feed.
    version = parsed.get("version")
    if not parsed.entries and (reason or not version or not parsed.feed.get("title")):
        if not reason and not version:
            raise FeedError("not a feed (neither RSS, Atom nor JSON Feed)")
        raise FeedError(f"not a feed ({short_reason(reason) if reason else 'no entries and no title'})")
    entries = []
    for entry in parsed.entries:
        link = _absolute(url, entry.get("link"))
        title = plain_text(entry.get("title") or "")
        if not link and not title:
            continue
        summary_html = entry.get("summary") or ""
        if not summary_html and entry.get("content"):
            summary_html = entry.content[0].get("value", "")
        stamp = entry.get("published_parsed") or entry.get("updated_parsed")
        entries.append(
            _entry(
                guid=entry.get("id") or link or title,
                url=link or url,
                title=title or link or url,  # one of the first two is there (checked above)
                summary=clean_html(summary_html, base_url=link or url),
                author=plain_text(entry.get("author") or "") or None,
                published=float(calendar.timegm(stamp)) if stamp else None,
                categories=[t.get("term") or t.get("label") or "" for t in entry.get("tags") or []
                            if isinstance(t, dict)],
            )
        )
    return {
        "title": plain_text(parsed.feed.get("title") or ""),
        "site_url": _absolute(url, parsed.feed.get("link")),
        "entries": entries,
    }


def _parse_json_feed(body: bytes, url: str) -> dict[str, Any]:
    """JSON Feed 1.0 and 1.1 (https://jsonfeed.org/version/1.1); feedparser does not read it."""
    try:
        document = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise FeedError(f"not a feed (invalid JSON: {short_reason(exc)})") from None
    if not isinstance(document, dict) or not str(document.get("version", "")).startswith(
        "https://jsonfeed.org/version/"
    ):
        raise FeedError("not a feed (JSON without a jsonfeed.org version)")
    items = document.get("items")
    if not isinstance(items, list):
        raise FeedError("not a feed (JSON Feed without items)")
    entries = []
    for item in items:
        if not isinstance(item, dict):
            continue
        link = _absolute(url, _text(item.get("url")) or _text(item.get("external_url")))
        title = plain_text(_text(item.get("title")))
        if not link and not title:
            continue
        summary = _text(item.get("content_html")) or _text(item.get("summary"))
        if not summary and item.get("content_text"):
            summary = "<p>" + _escape(_text(item["content_text"])) + "</p>"
        # JSON Feed 1.1 has an "authors" list, 1.0 one "author" object; anything else is ignored
        authors = item.get("authors")
        if not isinstance(authors, list):
            authors = [item["author"]] if isinstance(item.get("author"), dict) else []
        author = ", ".join(_text(a.get("name")) for a in authors if isinstance(a, dict) and a.get("name"))
        entries.append(
            _entry(
                guid=_text(item.get("id")) or link or title,
                url=link or url,
                title=title or link or url,  # one of the first two is there (checked above)
                summary=clean_html(summary, base_url=link or url),
                author=author or None,
                published=_iso_time(_text(item.get("date_published")) or _text(item.get("date_modified"))),
                categories=[_text(t) for t in item.get("tags") or [] if isinstance(t, str)],
            )
        )
    return {
        "title": plain_text(_text(document.get("title"))),
        "site_url": _absolute(url, _text(document.get("home_page_url"))),
        "entries": entries,
    }


# An entry's categories kept at most (each cut to 200 characters): what rules match on.
MAX_CATEGORIES = 50


def _entry(*, guid: str, url: str, title: str, summary: str, author: str | None,
           published: float | None, categories: list[str] | None = None) -> dict[str, Any]:
    if len(guid) > 500:  # some feeds use the whole content as id
        guid = "sha1:" + hashlib.sha1(guid.encode()).hexdigest()
    names = [" ".join(plain_text(c).split())[:200] for c in (categories or [])[:MAX_CATEGORIES]]
    return {"guid": guid, "url": url, "title": title[:500], "summary": summary,
            "summary_text": plain_text(summary), "author": author, "published": published,
            "categories": "\n".join(dict.fromkeys(n for n in names if n))}


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _absolute(base: str, link: str | None) -> str | None:
    if not link:
        return None
    try:
        resolved = urljoin(base, link.strip())
    except ValueError:
        # e.g. "http://[::1/x" (Invalid IPv6 URL): one bad link must cost only its own
        # entry's link, not raise and fail the whole feed.
        return None
    # The one URL check: http(s) in any case (urljoin keeps a link's own spelling of the
    # scheme), a host that can be fetched ("http: //x/" has an http scheme but no host);
    # javascript:, data: and the rest are refused.
    return http_url(resolved)


def _iso_time(value: str) -> float | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        try:
            return parsedate_to_datetime(value).timestamp()
        except (TypeError, ValueError):
            return None


def short_reason(exc: object) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text if len(text) <= 160 else text[:157] + "..."
