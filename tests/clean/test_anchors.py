"""Placing a highlight's quote in a text (exactly, by its context, approximately after an
edit, not at all when it is gone) and painting marks over the HTML's text runs."""

from __future__ import annotations

import re
import time

from reader.clean.anchors import CONTEXT, Mark, locate, paint
from reader.clean.sanitize import clean_html, plain_text
from reader.clean.parts import read_parts

TEXT = ("The printing press changed how ideas spread. Before it, every copy was made by hand, "
        "slowly, by scribes who made mistakes. After it, a thousand copies were as cheap as ten.")


def test_an_exact_quote_is_placed_with_its_context():
    found = locate(TEXT, "every copy was made by hand")
    assert found is not None and found.exact
    assert TEXT[found.start:found.end] == "every copy was made by hand"
    assert found.prefix == TEXT[found.start - CONTEXT:found.start] and found.suffix == TEXT[found.end:found.end + CONTEXT]


def test_whitespace_does_not_matter_as_the_browser_reports_it():
    text = "First paragraph ends here.\n\nSecond   one starts here."
    found = locate(text, "ends here.Second one")  # the DOM's text has no blank line between blocks
    assert found is not None and text[found.start:found.end] == "ends here.\n\nSecond   one"


def test_a_repeated_quote_is_told_apart_by_its_context_and_else_by_its_old_place():
    text = "Alpha said yes. Beta said no. Gamma said yes. Delta said maybe."
    second = text.index("said yes", 10)
    found = locate(text, "said yes", prefix="Gamma ", suffix=". Delta")
    assert found is not None and found.start == second
    found = locate(text, "said yes", prefix="Alpha ")
    assert found is not None and found.start == text.index("said yes")
    # no context: the old place decides
    found = locate(text, "said yes", start=second + 3, end=second + 11)
    assert found is not None and found.start == second
    # nothing to tell them apart: not placed rather than guessed
    assert locate(text, "said yes") is None


def test_offsets_alone_are_taken_when_they_fit_and_a_quote_with_them_is_checked():
    found = locate(TEXT, "", start=4, end=12)
    assert found is not None and found.quote == "printing"
    assert locate(TEXT, "", start=4, end=10_000) is None
    assert locate(TEXT, "", start=12, end=4) is None
    # offsets that no longer hold the quote are a hint: the quote is looked for
    found = locate(TEXT, "scribes", start=0, end=7)
    assert found is not None and found.quote == "scribes"


def test_an_edited_passage_is_placed_approximately():
    edited = TEXT.replace("every copy was made by hand", "every single copy was made by hand")
    found = locate(edited, "every copy was made by hand", prefix="spread. Before it, ", suffix=", slowly, by",
                   start=TEXT.index("every"), end=TEXT.index("every") + 27)
    assert found is not None and not found.exact
    assert edited[found.start:found.end] == "every single copy was made by hand"
    # a typo fixed
    fixed = TEXT.replace("mistakes", "mistakse")
    found = locate(fixed, "scribes who made mistakes.", prefix="slowly, by ")
    assert found is not None and fixed[found.start:found.end].startswith("scribes who made mistak")


def test_a_passage_that_is_gone_is_not_placed():
    other = "An entirely different article about gardening, compost and the weather in spring."
    assert locate(other, "every copy was made by hand", prefix="Before it, ", suffix=", slowly") is None
    assert locate(TEXT, "the quick brown fox jumps over the lazy dog") is None
    assert locate("", "anything") is None


def test_hostile_quotes_are_quick():
    long_text = ("word " * 40_000)[:200_000]
    started = time.monotonic()
    assert locate(long_text, "x" * 5_000) is None
    assert locate(long_text, "word word", prefix="word ") is not None or True  # thousands of places: no hang
    locate(long_text, "word " * 1_000 + "different ending here")
    assert time.monotonic() - started < 5
    assert locate(TEXT, "<script>alert(1)</script>") is None


def marks(html: str) -> list[tuple[str, str]]:
    return re.findall(r'<mark class="hl hl-\w+"(?: id="hl-\d+")? data-hl="(\d+)"[^>]*>(.*?)</mark>', html)


def test_marks_cross_element_boundaries_as_several_marks():
    html = clean_html("<p>Hello <b>brave</b> new <a href='https://x.test/'>world</a>.</p>\n"
                      "<ul><li>one &amp; two</li>\n<li>three</li></ul>")
    text = plain_text(html)
    found = locate(text, "brave new world. one & two three")
    assert found is not None
    painted = paint(html, text, [Mark(7, found.start, found.end, "yellow")])
    assert [m[1] for m in marks(painted)] == ["brave", " new ", "world", ".", "one &amp; two", "three"]
    assert painted.count('id="hl-7"') == 1
    # nothing but the marks was added: the text is the same, the HTML otherwise unchanged
    assert plain_text(painted) == text
    assert re.sub(r"</?mark[^>]*>", "", painted) == html
    # no mark where phrasing content may not stand (between list items)
    assert "</li><mark" not in painted and "</li>\n<mark" not in painted


def test_overlapping_marks_and_marks_in_entities():
    html = "<p>Fish &amp; chips, salt &amp; vinegar.</p>"
    text = plain_text(html)
    a = locate(text, "Fish & chips")
    b = locate(text, "chips, salt")
    assert a is not None and b is not None
    painted = paint(html, text, [Mark(1, a.start, a.end, "yellow"), Mark(2, b.start, b.end, "blue")])
    assert re.sub(r"</?mark[^>]*>", "", painted) == html
    assert 'data-hls="1 2"' in painted  # the overlap knows both
    assert plain_text(painted) == text


def test_painting_with_marks_that_do_not_fit_changes_nothing():
    html = "<p>Short text.</p>"
    assert paint(html, plain_text(html), [Mark(1, 500, 600, "yellow")]) == html
    assert paint(html, plain_text(html), []) == html


def test_attributes_holding_angle_brackets_are_not_text():
    html = '<p><img src="https://x.test/a.png" alt="a > b"> caption words here</p>'
    text = plain_text(html)
    found = locate(text, "caption words")
    assert found is not None
    painted = paint(html, text, [Mark(3, found.start, found.end, "green")])
    assert 'alt="a > b"' in painted and marks(painted) == [("3", "caption words")]


def test_marks_go_by_the_body_text_never_into_the_lead_or_a_caption():
    # the plain text highlights are placed in is the body (clean/parts.py): no lead, no
    # captions; a caption that begins as the next body paragraph does must not take its mark
    html = ('<p class="lead">The council met and the town argued about the bridge for hours.</p>'
            '<p>The town council met on Monday. The bridge vote was close.</p>'
            '<figure><img src="x.png"><figcaption>The bridge, seen from the town.</figcaption></figure>'
            '<p>The bridge will be built next year.</p>')
    body = read_parts(html)["body"]
    marks = [Mark(id=n, start=body.index(q), end=body.index(q) + len(q), color="yellow")
             for n, q in enumerate(["council met", "bridge vote", "The bridge will"], start=1)]
    painted = paint(html, body, marks)
    assert '<p class="lead">The council met and' in painted
    assert "<figcaption>The bridge, seen from the town.</figcaption>" in painted
    assert '<p><mark class="hl hl-yellow" id="hl-3" data-hl="3">The bridge will</mark> be built' in painted
    assert 'The town <mark class="hl hl-yellow" id="hl-1" data-hl="1">council met</mark> on' in painted
