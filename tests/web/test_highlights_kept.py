"""The reader view keeps an article's marks and highlight list from its last render
(core/highlights.py's KeptMarks, by its highlights' version, schema v18, and its text's):
every change to a highlight, or to the text, shows on the next open, whoever made it."""

from __future__ import annotations

import sqlite3

from lxml import html as lxml_html

from ..loopback import article_html
from .test_highlights_view import marks, ready_article

QUOTE = "Paragraph number 2 of Article one carries enough words"


def listed(page: str) -> list[tuple[str, str, str]]:
    """The highlight list under the text: (id, note, tags) of each item."""
    tree = lxml_html.document_fromstring(page)
    return [(li.get("data-hl"), li.get("data-note"), li.get("data-tags"))
            for li in tree.cssselect("#highlight-list li.highlight-item")]


async def test_a_note_and_tags_changed_show_on_the_next_open(quiet, pages):
    """A note or tags change nothing painted in the text, only the list: it is made anew too."""
    a = await ready_article(quiet, pages)
    made = (await quiet.post(f"/api/articles/{a}/highlights", json={"quote": QUOTE, "note": "the first note"})).json()
    assert listed((await quiet.get(f"/articles/{a}")).text) == [(str(made["id"]), "the first note", "[]")]
    await quiet.patch(f"/api/highlights/{made['id']}", json={"note": "second"})
    page = (await quiet.get(f"/articles/{a}")).text
    assert listed(page) == [(str(made["id"]), "second", "[]")] and "the first note" not in page
    await quiet.patch(f"/api/highlights/{made['id']}", json={"tags": ["later"]})
    page = (await quiet.get(f"/articles/{a}")).text
    assert listed(page) == [(str(made["id"]), "second", '["later"]')] and "#later" in page
    assert "".join(text for _, text in marks(page)) == QUOTE


async def test_a_change_made_by_another_process_shows(quiet, pages, settings):
    """The database written by another process (a worker, an import, the CLI): what the page
    reads decides, not what this process did."""
    a = await ready_article(quiet, pages)
    made = (await quiet.post(f"/api/articles/{a}/highlights", json={"quote": QUOTE})).json()
    assert 'class="hl hl-yellow"' in (await quiet.get(f"/articles/{a}")).text
    with sqlite3.connect(settings.db) as other:
        other.execute("UPDATE highlights SET color = 'green', note = 'from elsewhere' WHERE id = ?", (made["id"],))
    other.close()
    page = (await quiet.get(f"/articles/{a}")).text
    assert 'class="hl hl-green"' in page and 'class="hl hl-yellow"' not in page
    assert listed(page) == [(str(made["id"]), "from elsewhere", "[]")]


async def test_a_new_text_with_the_highlight_in_the_same_place_is_painted_anew(quiet, pages):
    """The site changes its page after the highlight: placed again at the same offsets (its
    row as the page reads it unchanged), the marks are painted over the new text."""
    a = await ready_article(quiet, pages)
    made = (await quiet.post(f"/api/articles/{a}/highlights", json={"quote": QUOTE})).json()
    assert "number 13 of" not in (await quiet.get(f"/articles/{a}")).text
    pages.add("/one.html", article_html("Article one", "marker-one", paragraphs=14))
    assert (await quiet.post(f"/articles/{a}/refetch", follow_redirects=False)).status_code == 303
    [again] = (await quiet.get(f"/api/articles/{a}/highlights")).json()["items"]
    assert (again["start"], again["end"]) == (made["start"], made["end"]) and not again["detached"]
    page = (await quiet.get(f"/articles/{a}")).text
    assert "number 13 of" in page and "".join(text for _, text in marks(page)) == QUOTE
