"""The tags page (/tags): every tag with its count, sorted by name in any case, each a link
to the headlines filtered by it, whose length is the count; an empty state; a hostile tag's
name shown as text."""

from __future__ import annotations

import html
import re

from ..helpers import subscribe_slugs

HOSTILE = '<script>alert("tag")</script>'
ROW = re.compile(r'<li><a class="tag-name" href="([^"]+)">#(.*?)</a> <span class="count">(\d+) articles?</span></li>')


def rows(page: str) -> list[tuple[str, str, int]]:
    """(name, link, count) of each tag on the page, in its order."""
    return [(html.unescape(name), html.unescape(link), int(count)) for link, name, count in ROW.findall(page)]


async def test_no_tags_yet_says_where_tags_come_from(quiet, pages):
    await subscribe_slugs(quiet, pages, ["one"])
    answer = await quiet.get("/tags")
    assert answer.status_code == 200
    assert rows(answer.text) == []
    found = re.search(r'<p class="empty">(.*?)</p>', answer.text, re.DOTALL)
    assert found and found.group(1).startswith("No tags yet."), answer.text
    assert '<a href="/tags">Tags</a>' in (await quiet.get("/")).text  # the footer, on every page


async def test_every_tag_with_the_length_of_its_list_sorted_by_name(quiet, pages):
    _, (a, b, c, d) = await subscribe_slugs(quiet, pages, ["a", "b", "c", "d"])
    for article_id, tags in ((a, ["work", "Later"]), (b, ["work", "zebra crossing"]), (c, ["work", HOSTILE, "a & b"]),
                             (d, ["later"])):  # the same tag in another case
        assert (await quiet.post(f"/api/articles/{article_id}/tags", json={"tags": tags})).status_code == 200
    answer = await quiet.get("/tags")
    assert answer.status_code == 200
    assert rows(answer.text) == [
        (HOSTILE, "/?tag=%3Cscript%3Ealert%28%22tag%22%29%3C%2Fscript%3E", 1),
        ("a & b", "/?tag=a+%26+b", 1),
        ("Later", "/?tag=Later", 2),
        ("work", "/?tag=work", 3),
        ("zebra crossing", "/?tag=zebra+crossing", 1),
    ]
    for _, link, count in rows(answer.text):
        listed = (await quiet.get(link)).text
        assert listed.count('<article class="card') == count, link
    # the hostile name is text: escaped on the tags page and in the list it leads to
    assert HOSTILE not in answer.text and "#&lt;script&gt;alert(&#34;tag&#34;)&lt;/script&gt;" in answer.text
    assert HOSTILE not in (await quiet.get(rows(answer.text)[0][1])).text
    # an article's tags link to their lists, and to this page
    view = (await quiet.get(f"/articles/{c}")).text
    assert 'href="/?tag=work">#work</a>' in view and '<a class="tap" href="/tags">All tags</a>' in view


async def test_a_tag_that_is_gone_leaves_the_page(quiet, pages):
    _, (a,) = await subscribe_slugs(quiet, pages, ["a"])
    assert (await quiet.post(f"/api/articles/{a}/tags", json={"tags": ["once"]})).status_code == 200
    assert [name for name, _, _ in rows((await quiet.get("/tags")).text)] == ["once"]
    assert (await quiet.post(f"/api/articles/{a}/tags", json={"tags": []})).status_code == 200
    assert rows((await quiet.get("/tags")).text) == []
