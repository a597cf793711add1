"""Imported only by the extraction pool's fork server (its preload list), for the side
effect: one small page is cleaned and one small feed parsed there, before any pool
process is forked from it.

trafilatura, lxml and feedparser set up much of their state lazily, on their first
call: about 0.25 s of CPU that every new pool process otherwise pays on its first
article. Done once in the server, every process forked from it, including the ones that
replace a killed pool, starts with it done. A failure here only costs that time back:
it must never stop the server from starting."""

from __future__ import annotations

import logging

from ..clean import clean_page
from ..feeds.parse import parse_feed

_PARAGRAPH = ("<p>A paragraph of ordinary prose, long enough for an extractor to take it for the text"
              " of an article, with clauses, commas and a full stop at its end.</p>")
_PAGE = (f"<!doctype html><html><head><title>Warming up</title></head><body><nav><a href='/'>Home</a></nav>"
         f"<article><h1>Warming up</h1>{_PARAGRAPH * 6}</article><footer>Footer</footer></body></html>").encode()
_FEED = (b'<?xml version="1.0"?><rss version="2.0"><channel><title>Warming up</title>'
         b"<link>http://warm.invalid/</link><description>d</description><item><title>One</title>"
         b"<link>http://warm.invalid/1</link><pubDate>Mon, 02 Nov 2026 10:00:00 GMT</pubDate></item></channel></rss>")


def warm_up() -> None:
    try:
        clean_page(_PAGE, "http://warm.invalid/page", "utf-8")
        parse_feed(_FEED, "http://warm.invalid/feed.xml", "application/rss+xml")
    except Exception:  # noqa: BLE001 - see the module docstring
        logging.getLogger(__name__).debug("warming up the extraction pool failed", exc_info=True)


warm_up()
