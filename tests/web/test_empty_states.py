"""Every list says what it would hold when it holds nothing, and how something gets there:
the empty reading list does not say "No headlines here yet" while the library is full of
them (issue 21: labels and empty states that mislead)."""

from __future__ import annotations

import re

import pytest

from ..helpers import subscribe_slugs


def empty_state(page: str) -> str | None:
    found = re.search(r'<p class="empty">(.*?)</p>', page, re.DOTALL)
    return " ".join(re.sub(r"<[^>]+>", "", found.group(1)).split()) if found else None


@pytest.mark.parametrize(("query", "says"), [
    ("?state=ready&unread=1", "Nothing to read yet. Tap queue on a headline"),
    ("?state=queued", "Nothing waits in line."),
    ("?state=cleaning", "Nothing is being cleaned right now."),
    ("?state=failed", "No article failed to clean."),
    ("?starred=1", "Nothing starred. Star a headline"),
    ("?tag=later", "No article has the tag #later."),
])
async def test_each_empty_list_says_what_it_would_hold(quiet, pages, query, says):
    await subscribe_slugs(quiet, pages, ["one", "two"])
    page = (await quiet.get("/" + query)).text
    said = empty_state(page)
    assert said is not None and said.startswith(says), said
    assert "No headlines here yet" not in page


async def test_a_list_with_headlines_has_no_empty_state_and_everything_read_says_so(quiet, pages):
    _, ids = await subscribe_slugs(quiet, pages, ["one", "two"])
    assert empty_state((await quiet.get("/")).text) is None
    for article_id in ids:
        assert (await quiet.post(f"/api/articles/{article_id}/read")).status_code == 200
    assert empty_state((await quiet.get("/?unread=1")).text) == "Everything here is read."
    assert empty_state((await quiet.get("/?state=new")).text) is None  # read is not tapped: still new
