"""What the cleaner's vote keeps and drops, on small pages of our own: furniture inside the
article's container (a related-links box, a lone label) goes, text and pictures stay;
what the page hides is never the article, unless the page hides all of itself until its
scripts run."""

from __future__ import annotations

from reader.clean import clean_page

PROSE = [
    f"Paragraph {i} of the report on the harbour carries enough ordinary words to read as prose, "
    f"with clauses, commas and a full stop at the end of it."
    for i in range(8)
]


def page(inner_middle: str, *, wrapper: str = "<main><article>", close: str = "</article></main>") -> bytes:
    nav = "".join(f'<li><a href="/section/{i}">Section {i}</a></li>' for i in range(10))
    first = "".join(f"<p>{p}</p>" for p in PROSE[:4])
    second = "".join(f"<p>{p}</p>" for p in PROSE[4:])
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>The harbour report</title></head>
<body><header><nav><ul>{nav}</ul></nav></header>
{wrapper}<h1>The harbour report</h1>{first}{inner_middle}{second}{close}
<footer><p>Copyright footer text that should not be extracted.</p></footer></body></html>""".encode()


def clean(body: bytes) -> dict:
    return clean_page(body, "http://example.com/harbour", None)


def test_a_related_links_box_inside_the_article_is_dropped_and_the_text_around_it_kept():
    related = "".join(f'<p><a href="/story/{i}">Another story about boats number {i}</a></p>' for i in range(3))
    result = clean(page(f'<div><p>Read more:</p>{related}</div>'))
    text = result["text"]
    assert all(p in text for p in PROSE)
    assert "Another story about boats" not in text
    assert "Read more:" not in text


def test_a_paragraph_with_a_link_in_it_is_text_and_stays():
    linked = ('<p>The <a href="/harbour-master">harbour master</a> said the new quay would open in spring, '
              "after the dredging of the outer basin and the repair of the old sea wall.</p>")
    result = clean(page(linked))
    assert "said the new quay would open in spring" in result["text"]
    assert "harbour master" in result["text"]


def test_a_picture_with_a_short_caption_stays():
    figure = '<figure><img src="/quay.jpg" alt="The quay"><figcaption>The new quay</figcaption></figure>'
    result = clean(page(figure))
    assert "<figcaption>The new quay</figcaption>" in result["html"]


def test_what_the_page_hides_is_not_the_article():
    hidden = ('<div style="display: none"><p>Hidden teaser of a different story that the page never shows '
              "to anyone, long enough to be taken for prose by an extractor.</p></div>"
              '<div hidden><p>Another hidden block of words that nobody reading the page can see, also long '
              "enough to pass for a paragraph of the article.</p></div>")
    text = clean(page(hidden))["text"]
    assert all(p in text for p in PROSE)
    assert "Hidden teaser" not in text and "Another hidden block" not in text


def test_a_page_hidden_until_its_scripts_run_still_gives_its_article():
    body = page("", wrapper='<div id="app" style="visibility:hidden"><main><article>',
                close="</article></main></div>")
    text = clean(body)["text"]
    assert all(p in text for p in PROSE)


def test_a_phrase_inside_a_sentence_is_not_voted_on_apart_from_it():
    # trafilatura leaves <time> out; readability keeps the section's loose text with it in place
    section = ('<section>The pilot boats sailed on <time datetime="2024-05-12">12 May</time>, after the dredging '
               "of the outer basin was finished and the harbour master had signed the log.<p>The quay itself "
               "opened a week later, with a band, a ribbon and most of the town standing in the rain.</p></section>")
    text = clean(page(section))["text"]
    assert "The pilot boats sailed on 12 May, after the dredging" in text
    assert all(p in text for p in PROSE)


def test_a_short_linked_line_between_paragraphs_of_the_text_stays():
    aside = '<p><a href="/story/7">Related: the dredging of the outer basin</a></p>'
    text = clean(page(aside))["text"]
    assert "Related: the dredging of the outer basin" in text
    assert all(p in text for p in PROSE)


def test_a_leading_heading_that_is_not_the_title_is_kept():
    body = page("").replace(b"<title>", b'<meta property="og:title" content="The harbour report"><title>')
    body = body.replace(b"<h1>The harbour report</h1>", b"<h1>Tides and boats this week</h1>")
    result = clean(body)
    assert result["title"] == "The harbour report"
    assert "<h2>Tides and boats this week</h2>" in result["html"]


def test_a_leading_heading_that_is_the_title_is_left_to_the_view():
    body = page("").replace(b"<title>", b'<meta property="og:title" content="The harbour report | Harbour Times"><title>')
    result = clean(body)
    assert result["title"] == "The harbour report | Harbour Times"
    assert "The harbour report" not in result["text"]


def related_posts() -> str:
    return "".join(
        f'<div class="related-post"><p><a href="/story/{i}">Story {i}</a>: the council published its yearly survey '
        f"of the harbour trade, summarising answers from {i} hundred boat owners in every port along the coast and "
        f'their plans for the season.</p><p>March {i + 1}, 2016</p><p>In "News"</p></div>' for i in range(3))


def test_teasers_after_the_article_are_dropped_once_its_furniture_begins():
    body = page("", close=f"<h3>Like this:</h3><h3>Related</h3>{related_posts()}</article></main>")
    text = clean(body)["text"]
    assert all(p in text for p in PROSE)
    assert "yearly survey" not in text


def test_a_picture_below_the_teasers_does_not_make_them_part_of_the_article():
    picture = '<p><img src="/footer-banner.png" alt=""></p>'
    body = page("", close=f"<h3>Like this:</h3><h3>Related</h3>{related_posts()}{picture}</article></main>")
    text = clean(body)["text"]
    assert all(p in text for p in PROSE)
    assert "yearly survey" not in text


def test_a_list_only_trafilatura_kept_comes_back_as_one_list_of_its_own_kind():
    """readability drops a list whose items are mostly links; trafilatura keeps it and it is
    put back. Its items stay one list, numbered if it was, not a list per item."""
    items = "".join(f'<li>Step {i}: open <a href="/doc/{i}">the tide table for berth number {i} in the north'
                    f' basin</a> before the ships come in.</li>' for i in range(5))
    for kind in ("ul", "ol"):
        html = clean(page(f"<{kind}>{items}</{kind}>"))["html"]
        assert html.count("<li>") == 5
        assert html.count(f"<{kind}>") == 1, html
        assert html.index("Step 0") < html.index("Step 4") < html.index(PROSE[4][:30])
