"""The browser's second chance without a browser: the core given a page the person's
browser rendered, for an article whose own fetch failed. What matters here is which
article the page finishes when the browser's address bar spells the link differently
(tests/browser/test_browser_second_chance.py drives the real bookmarklet)."""

from __future__ import annotations

import pytest

from reader.core import running
from reader.errors import ExtractionFailed

from ..helpers import article_html


async def test_a_page_finishes_the_failed_article_its_address_is_a_spelling_of(settings, pages):
    """The address bar keeps a fragment, gains tracking parameters, spells the scheme in
    capitals: still the same link, so that article is cleaned from the page and none is
    added. An address that is another page (another query) is a new saved link."""
    pages.add("/story.html?id=7", "gone", status=410)
    link = pages.url("/story.html?id=7")
    async with running(settings, worker=False) as reader:
        saved, _ = await reader.save(link)
        with pytest.raises(ExtractionFailed):
            await reader.open(saved.id)
        assert (await reader.article(saved.id)).state == "failed"
        spelled = "HTTP://" + link.removeprefix("http://").replace("?id=7", "?utm_source=feed&id=7#comments")
        article, content = await reader.finish_with_page(spelled, article_html("Story", "browser-rendered").encode())
        assert article.id == saved.id and article.state == "ready"
        assert "browser-rendered" in content.text
        other, _ = await reader.finish_with_page(link.replace("id=7", "id=8"), article_html("Another", "another").encode())
        assert other.id != saved.id and other.url.endswith("?id=8")
    assert pages.hits["/story.html?id=7"] == 1
