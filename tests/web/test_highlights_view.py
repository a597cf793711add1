"""Highlights in the reader view, as the server paints them (no JavaScript needed to read
them): <mark>s in the text, a kept page that never shows stale marks, notes and tags as
text, and the detached ones listed with their quote."""

from __future__ import annotations

import re

from lxml import html as lxml_html

from ..helpers import subscribe_slugs


async def ready_article(quiet, pages) -> int:
    _, [article_id] = await subscribe_slugs(quiet, pages, ["one"])
    assert (await quiet.get(f"/api/articles/{article_id}/content")).status_code == 200
    return article_id


def marks(page: str) -> list[tuple[str, str]]:
    tree = lxml_html.document_fromstring(page)
    return [(m.get("data-hl"), m.text_content()) for m in tree.cssselect(".reading-body .body mark.hl")]


async def test_marks_are_painted_in_the_text_and_kept_pages_follow(quiet, pages):
    a = await ready_article(quiet, pages)
    first = (await quiet.get(f"/articles/{a}")).text
    assert marks(first) == [] and 'id="highlights"' in first
    quote = "Paragraph number 2 of Article one carries enough words"
    made = (await quiet.post(f"/api/articles/{a}/highlights",
                             json={"quote": quote, "note": "<img src=x onerror=alert(1)>", "tags": ["a&b"]})).json()
    page = (await quiet.get(f"/articles/{a}")).text  # the page kept before is not what is answered
    assert "".join(text for _, text in marks(page)) == quote
    assert {hl for hl, _ in marks(page)} == {str(made["id"])}
    assert f'id="hl-{made["id"]}"' in page and f'href="#hl-{made["id"]}"' in page
    # a note is text: escaped, never markup
    assert "<img src=x onerror" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "#a&amp;b" in page
    # changed, then deleted: each shows at once
    await quiet.patch(f"/api/highlights/{made['id']}", json={"color": "blue"})
    assert 'class="hl hl-blue"' in (await quiet.get(f"/articles/{a}")).text
    await quiet.delete(f"/api/highlights/{made['id']}")
    assert marks((await quiet.get(f"/articles/{a}")).text) == []


async def test_a_mark_across_paragraphs_is_a_mark_in_each(quiet, pages):
    a = await ready_article(quiet, pages)
    text = (await quiet.get(f"/api/articles/{a}/content")).json()["text"]
    start = text.index("full stop at its end.", text.index("Paragraph number 1"))
    end = text.index("Paragraph number 2") + len("Paragraph number 2")
    made = (await quiet.post(f"/api/articles/{a}/highlights", json={"start": start, "end": end})).json()
    page = (await quiet.get(f"/articles/{a}")).text
    found = marks(page)
    assert len(found) == 2 and all(hl == str(made["id"]) for hl, _ in found)
    assert found[0][1] == "full stop at its end." and found[1][1] == "Paragraph number 2"
    # each <mark> sits inside its paragraph
    assert re.search(r"<p>[^<]*<mark[^>]*>full stop at its end\.</mark></p>", page)


async def test_fifty_highlights_are_fifty_marks(quiet, pages):
    a = await ready_article(quiet, pages)
    text = (await quiet.get(f"/api/articles/{a}/content")).json()["text"]
    for i in range(50):
        start = i * len(text) // 60
        assert (await quiet.post(f"/api/articles/{a}/highlights", json={"start": start, "end": start + 12})).status_code == 200
    page = (await quiet.get(f"/articles/{a}")).text
    assert len({hl for hl, _ in marks(page)}) == 50
