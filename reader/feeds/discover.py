"""Subscribe by a feed's URL or by a site's URL.

A person pastes what they have: the feed itself, or the site's front page. One fetch
decides which it is. A feed is stored from that same response (no second fetch); an
HTML page is searched for `<link rel="alternate" type="application/rss+xml | atom+xml |
feed+json">` and the first feed it names is subscribed. A page that names none is an
error the person sees (422 in the API): nothing is subscribed.

Nothing is saved unless a feed was read: a URL that cannot be fetched (404, timeout, a
private address), that answers with something that is not a feed, or whose announced
feed cannot be read is refused with one plain sentence saying why (NotSubscribed), and
the person decides whether to try again. A feed already subscribed that fails later
keeps its error on the feeds page instead (feeds.py).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from html.parser import HTMLParser
from urllib.parse import urljoin

import httpx

from ..errors import Invalid
from ..pool import CpuPool
from .refresh import FEED_ACCEPT, decide, load_rules, refresh_feeds
from .parse import FeedError, parse_feed
from ..fetch import FetchError, fetch, is_html
from ..store import Store
from ..urls import http_url

log = logging.getLogger(__name__)

FEED_TYPES = ("application/rss+xml", "application/atom+xml", "application/feed+json", "application/json")


class NoFeedFound(Invalid):
    """The URL answered with a web page that links to no feed."""


class NotSubscribed(Invalid):
    """The URL could not be read as a feed: nothing was saved. The message is one sentence."""


def _refusal(url: str, reason: str) -> NotSubscribed:
    # Fetch errors are written for a card ("blocked: …"); here they follow "not subscribed".
    reason = reason.removeprefix("blocked: ").rstrip(".")
    return NotSubscribed(f"{url} was not subscribed: {reason}.")


@dataclass
class Subscription:
    feed_id: int
    created: bool
    url: str  # the feed's URL: the one given, or the one discovered from the page
    discovered: bool = False


class _AlternateLinks(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.base: str | None = None
        self.links: list[tuple[str, str]] = []  # (href, type)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {k.lower(): (v or "") for k, v in attrs}
        if tag == "base" and self.base is None and attributes.get("href"):
            self.base = attributes["href"].strip()
        elif tag == "link":
            rel = attributes.get("rel", "").lower().split()
            kind = attributes.get("type", "").split(";")[0].strip().lower()
            href = attributes.get("href", "").strip()
            if "alternate" in rel and kind in FEED_TYPES and href:
                self.links.append((href, kind))

    handle_startendtag = handle_starttag


def feed_links(body: bytes, page_url: str, charset: str | None = None) -> list[str]:
    """The feeds an HTML page announces, absolute, in page order, without duplicates.
    Relative hrefs resolve against the page's <base href> if it has one, else its URL.
    Pure CPU: runs in the extraction pool."""
    text = body.decode(charset or "utf-8", errors="replace")
    parser = _AlternateLinks()
    try:
        parser.feed(text)
        parser.close()
    except Exception:  # html.parser is lenient; whatever it read before giving up counts
        pass
    base = page_url
    if parser.base:
        base = http_url(urljoin(page_url, parser.base)) or page_url
    # application/json is only a feed type when nothing better is announced
    ranked = sorted(parser.links, key=lambda link: link[1] == "application/json")
    found: list[str] = []
    for href, _ in ranked:
        url = http_url(_join(base, href))
        if url and url not in found:
            found.append(url)
    return found


def _join(base: str, href: str) -> str | None:
    try:
        return urljoin(base, href)
    except ValueError:
        return None


async def subscribe(
    store: Store, client: httpx.AsyncClient, pool: CpuPool, url: str, *, max_bytes: int, deadline: float,
) -> Subscription:
    """Subscribe to `url`, a feed or a page announcing one. Already subscribed: nothing is
    fetched. Raises NoFeedFound for a page that announces no feed."""
    existing = await store.feed_by_url(url)
    if existing is not None:
        return Subscription(existing["id"], False, url)
    try:
        response = await fetch(client, url, max_bytes=max_bytes, deadline=deadline, accept=FEED_ACCEPT)
    except FetchError as exc:
        raise _refusal(url, str(exc)) from None
    try:
        parsed = await pool.run(parse_feed, response.body, response.url, response.content_type)
    except FeedError as exc:
        if not is_html(response.content_type, response.body):
            raise _refusal(url, f"it is not a feed ({exc})") from None
        found = await pool.run(feed_links, response.body, response.url, response.charset)
        if not found:
            raise NoFeedFound(
                f"no feed found at {url}: the page links to no RSS, Atom or JSON feed"
                " (paste the feed's own URL instead)"
            ) from None
        return await _subscribe_discovered(store, client, pool, found[0], max_bytes=max_bytes, deadline=deadline)
    except Exception as exc:  # a bug in a parser: refused with the reason, logged for us
        log.exception("reading %s failed", url)
        raise _refusal(url, f"could not read the feed ({str(exc).strip() or type(exc).__name__})") from None
    feed_id, created = await store.add_feed(url)
    if created:
        decide(await load_rules(store), parsed["entries"], feed_id, None)
        await store.store_feed_entries(
            feed_id, title=parsed["title"], site_url=parsed["site_url"], etag=response.headers.get("etag"),
            last_modified=response.headers.get("last-modified"), entries=parsed["entries"],
        )
    return Subscription(feed_id, created, url)


async def _subscribe_discovered(
    store: Store, client: httpx.AsyncClient, pool: CpuPool, feed_url: str, *, max_bytes: int, deadline: float,
) -> Subscription:
    feed_id, created = await store.add_feed(feed_url)
    if created:
        feed = await store.get_feed(feed_id)
        if feed is not None:  # None: unsubscribed again meanwhile, nothing to fetch
            [result] = await refresh_feeds(store, client, pool, [feed], max_bytes=max_bytes, deadline=deadline)
            if result.error is not None:  # the page's feed does not work: keep nothing
                await store.delete_feed(feed_id)
                raise _refusal(feed_url, result.error)
    return Subscription(feed_id, created, feed_url, discovered=True)
