"""A failed article advises what can help. A 404 said "this site needs your browser; open
it and press Save to reader": a person opened a dead page and pressed a button that could
not work. Gone pages and sites that cannot be reached say so and offer no browser step;
only what a browser gets past (challenges, rate limits on non-browsers, pages built by
scripts or behind a wall) offers the bookmarklet's second chance.

Each case through a real loopback server (or a real refused port, a real unresolvable
name), the app's own fetch and its pages: the card on the failed list and the reader view.
"""

from __future__ import annotations

import socket

import pytest

from reader.core.failures import advice_for

from ..helpers import app_client
from ..loopback import article_html

BROWSER_STEP = "open it and press <em>Save to reader</em>"


def _refused_url() -> str:
    """A loopback port nothing listens on: connecting is refused at once."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/story.html"


def _url(pages, case: str) -> str:
    if case == "refused":
        return _refused_url()
    if case == "no such host":
        return "http://nowhere.invalid/story.html"  # .invalid never resolves (RFC 6761)
    if case == "script-only":
        return pages.add("/app.html", "<!doctype html><html><body><div id=root></div>"
                                      "<script src=/app.js></script></body></html>")
    status = int(case)
    return pages.add(f"/{status}.html", article_html("Behind", "text the server never gets"), status=status)


CASES = {
    # case: (what the reason starts with, what the advice says, whether the browser is offered)
    "404": ("the site answered HTTP 404", "the page is gone", False),
    "410": ("the site answered HTTP 410", "the page is gone", False),
    "refused": ("could not connect to 127.0.0.1", "the site cannot be reached", False),
    "no such host": ("host not found: nowhere.invalid", "the site cannot be reached", False),
    "403": ("the site answered HTTP 403", "this site needs your browser", True),
    "429": ("the site answered HTTP 429", "this site needs your browser", True),
    "script-only": ("no readable text found", "this site needs your browser", True),
}


@pytest.mark.parametrize("case", list(CASES))
async def test_the_advice_on_a_failed_article_fits_its_failure(settings, pages, case):
    reason, says, browser = CASES[case]
    async with app_client(settings.replace(serve_workers=0, extract_processes=0, fetch_retries=1)) as client:
        article_id = int((await client.post("/api/articles", json={"url": _url(pages, case)})).json()["id"])
        assert (await client.get(f"/api/articles/{article_id}/content")).status_code == 502
        article = (await client.get(f"/api/articles/{article_id}")).json()
        card = (await client.get("/", params={"state": "failed"})).text
        view = (await client.get(f"/articles/{article_id}")).text
    assert article["state"] == "failed" and article["error"].startswith(reason), article["error"]
    assert advice_for(article["error"]).browser is browser
    assert f"failed: {article['error']}" in card
    assert says in card
    if browser:
        assert BROWSER_STEP in card and "Save to reader" in view
    else:  # no browser step anywhere, and still a way to try again
        assert says.capitalize() in view
        assert "needs your browser" not in card and "Save to reader" not in card
        assert "Save to reader" not in view and "need your browser" not in view
        assert f'action="/articles/{article_id}/queue"' in view


@pytest.mark.parametrize("reason, remedy", [
    ("the site answered HTTP 404 Not Found", "gone"),
    ("the site answered HTTP 410 Gone", "gone"),
    ("host not found: example.invalid (tried 3 times)", "unreachable"),
    ("could not connect to example.org (tried 3 times)", "unreachable"),
    ("the site answered HTTP 401 Unauthorized", "browser"),
    ("the site answered HTTP 403 Forbidden", "browser"),
    ("the site answered HTTP 429 Too Many Requests (tried 3 times)", "browser"),
    ("the site answered HTTP 503 Service Unavailable (tried 3 times)", "browser"),  # challenge pages answer 503
    ("no readable text found on the page", "browser"),
    ("more than 20 redirects", "browser"),
    ("the response could not be decoded (unsupported encoding 'br')", "browser"),
    ("blocked: 10.0.0.7 is a private address (set READER_ALLOW_PRIVATE_URLS to allow)", "browser"),
    ("the site answered HTTP 500 Internal Server Error (tried 3 times)", "later"),
    ("timed out after 20 s (tried 3 times)", "later"),
    ("fetch failed: the connection was reset by the site (tried 3 times)", "later"),
    ("internal error while cleaning (KeyError)", "later"),
    ("the site answered HTTP 400 Bad Request", "none"),
    ("not an HTML page (application/pdf)", "none"),
    ("page is larger than 10 MB", "none"),
    ("blocked: only http and https URLs are fetched, not javascript:", "none"),
    ("cleaning this page made the extraction processes die 3 times; it is not tried again by itself", "none"),
    ("a reason written by some later cleaner", "browser"),  # unknown: the old advice stands
])
def test_every_reason_has_one_remedy(reason, remedy):
    advice = advice_for(reason)
    assert advice.remedy == remedy
    assert advice.browser is (remedy == "browser")
    assert (advice.says == "") is (remedy == "none")
