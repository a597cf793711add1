"""Furniture the extractors keep inside the article (cross-references, rights lines,
headings that close the article, short labels): small pages of our own, cleaned with the
workers' own clean_page."""

from __future__ import annotations

from reader.clean import clean_page
from ..cleanerpages import PROSE, page


def clean(body: bytes) -> dict:
    return clean_page(body, "http://example.com/harbour", None)


def test_a_cross_reference_between_paragraphs_is_dropped():
    xref = '<p>Read also: <a href="/story/fleet">The fishing fleet is back in the harbour after the storm</a></p>'
    text = clean(page(xref))["text"]
    assert all(p in text for p in PROSE)
    assert "Read also" not in text and "fishing fleet is back" not in text


def test_a_dated_list_of_links_is_the_article_and_stays():
    dated = "".join(f'<p>{day} May 2024: <a href="/press/{day}">Coverage of the harbour works in the '
                    f'evening paper, part {day}</a></p>' for day in (3, 4, 5))
    text = clean(page(dated))["text"]
    assert "Coverage of the harbour works in the evening paper, part 4" in text


def test_a_link_inside_a_sentence_is_not_a_cross_reference():
    linked = ('<p>As <a href="/story/fleet">the fleet report said last week</a>, the quay needs repairs '
              "before the winter storms arrive at the coast.</p>")
    text = clean(page(linked))["text"]
    assert "the quay needs repairs" in text and "the fleet report said last week" in text


def test_a_rights_line_at_the_end_of_the_article_is_dropped():
    rights = "<p>© 2024 The Harbour Gazette. All rights reserved. Reprint only with permission.</p>"
    text = clean(page(end=rights))["text"]
    assert all(p in text for p in PROSE)
    assert "All rights reserved" not in text


def test_a_heading_with_nothing_after_it_is_dropped():
    closing = ('<h2>More from the harbour desk</h2>'
               '<p>Read also: <a href="/story/fleet">The fishing fleet is back in the harbour after the storm</a></p>')
    result = clean(page(end=closing))
    assert all(p in result["text"] for p in PROSE)
    assert "More from the harbour desk" not in result["text"]


def test_a_heading_over_its_section_stays():
    section = "<h2>The outer basin</h2><p>" + PROSE[0].replace("Paragraph 0", "The basin") + "</p>"
    text = clean(page(end=section))["text"]
    assert "The outer basin" in text


def test_a_short_label_only_readability_kept_is_dropped():
    labels = ('<div class="rating"><span>No ratings yet for this post</span></div>'
              '<div class="meta"><span>Updated on Monday, 3 May 2024</span></div>')
    text = clean(page(labels))["text"]
    assert all(p in text for p in PROSE)
    assert "No ratings yet" not in text and "Updated on Monday" not in text
