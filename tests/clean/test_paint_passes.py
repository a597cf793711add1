"""Painting finds every mark's place in one pass over each text, and keeps the HTML's cut
for the next painting of the same text: both must leave each painting as if it were the
first (reader/clean/anchors.py)."""

from __future__ import annotations

import re

from reader.clean.anchors import Mark, paint
from reader.clean.sanitize import plain_text

HTML = ("<h2>On &amp; off</h2>\n<p>The first   paragraph, with <em>a word</em> in it.</p><p>The second"
        " one&#8212;and its end.</p>\n\n<ul><li>one</li><li>two &lt;three&gt;</li></ul>")


def marked(painted: str) -> list[tuple[str, str]]:
    return re.findall(r'<mark class="hl hl-\w+"(?: id="hl-\d+")? data-hl="(\d+)"[^>]*>(.*?)</mark>', painted)


def test_each_mark_is_found_by_its_letters_across_spaces_blocks_and_entities():
    text = plain_text(HTML)  # blank lines between blocks where the HTML has none, spaces folded
    assert "\n\nThe second" in text and "first paragraph" in text
    wanted = {1: "On & off", 2: "first paragraph", 3: "a word", 4: "second one—and", 5: "two <three>"}
    marks = [Mark(i, text.index(quote), text.index(quote) + len(quote), "yellow") for i, quote in wanted.items()]
    painted = paint(HTML, text, marks)
    assert marked(painted) == [("1", "On &amp; off"), ("2", "first   paragraph"), ("3", "a word"),
                               ("4", "second one&#8212;and"), ("5", "two &lt;three&gt;")]
    # one across two paragraphs: a mark in each, none over the space between them
    start, end = text.index("its end"), text.index("one\n")
    assert marked(paint(HTML, text, [Mark(9, start, end + 3, "blue")])) == [("9", "its end."), ("9", "one")]


def test_painting_the_same_text_again_starts_from_the_unpainted_html():
    text = plain_text(HTML)
    first = paint(HTML, text, [Mark(1, text.index("first"), text.index("first") + 5, "yellow")])
    second = paint(HTML, text, [Mark(2, text.index("second"), text.index("second") + 6, "green")])
    assert marked(first) == [("1", "first")]
    assert marked(second) == [("2", "second")]  # the first painting's mark is not in it
    assert paint(HTML, text, []) == HTML


def test_other_spaces_are_counted_as_spaces_too():
    """No-break spaces and tabs (letters are then counted by str.split, not by counting
    spaces and newlines)."""
    html = "<p>Before\u00a0the\tmark, then after it.</p><p>Next&nbsp;one.</p>"
    text = plain_text(html)
    assert "\u00a0" not in text  # folded in the plain text, kept in the HTML's text runs
    marks = [Mark(1, text.index("the"), text.index("mark") + 4, "yellow"),
             Mark(2, text.index("Next"), text.index("one.") + 4, "blue")]
    assert marked(paint(html, text, marks)) == [("1", "the\tmark"), ("2", "Next&nbsp;one.")]
