"""Boxes of other stories (a gallery's slides trafilatura takes for text, a teaser in an aside
readability keeps), and word counts in scripts written without spaces: small pages of our
own, cleaned with the workers' own clean_page."""

from __future__ import annotations

from reader.clean.boilerplate import word_count
from reader.clean import clean_page
from ..cleanerpages import PROSE, page


def clean(body: bytes) -> dict:
    return clean_page(body, "http://example.com/harbour", None)


def in_article(box: str) -> bytes:
    """The harbour page with box after the article's body, inside the article element:
    trafilatura reads it as part of the article, readability does not."""
    return page().replace(b"</article>", box.encode() + b"</article>")


def test_a_gallery_of_titled_slides_after_the_article_is_dropped():
    slides = "".join(
        f'<li><h2><span class="counter">{i}/6</span> Slide title number {i}</h2>'
        f"<p>The caption of slide {i} tells a different story from the article, about a company that "
        f"reported its results for the year and what the market made of them.</p></li>" for i in range(1, 7))
    pictures = "".join(f'<li><img src="/slide/{i}.jpg"></li>' for i in range(6))
    gallery = f'<div class="gallery"><ul class="slides">{pictures}</ul><ul class="legends">{slides}</ul></div>'
    text = clean(in_article(gallery))["text"]
    assert all(p in text for p in PROSE)
    assert "Slide title" not in text and "caption of slide" not in text


def test_a_list_in_the_text_whose_items_are_sentences_stays():
    items = "".join(f"<li>Step {i}: check the mooring lines of the boat at berth {i} before the tide turns "
                    f"tonight.</li>" for i in range(1, 5))
    text = clean(page(middle=f"<ul>{items}</ul>"))["text"]
    assert all(p in text for p in PROSE)
    assert all(f"mooring lines of the boat at berth {i}" in text for i in range(1, 5))


def test_words_in_chinese_and_japanese_count_by_length():
    assert word_count("The harbour is open again") == 5
    # one run of letters to a regular expression, but a sentence of about a dozen words
    assert word_count("风暴过后码头上堆满了被冲上岸的木板和渔具") == 10
    assert word_count("港の漁船が戻ってきた") == 5
    assert word_count("DeepMind的AI模型") == 4


CHINESE = ["港口的渔船在风暴过后陆续回到码头，渔民们开始检查船只的损坏情况并修补渔网。",
           "市政府宣布将在明年春天之前完成防波堤的加固工程，以保护港区免受冬季风暴的侵袭。",
           "当地居民表示，这次风暴是近十年来最强的一次，许多房屋的屋顶被大风掀翻。",
           "气象部门提醒市民，未来一周仍可能出现强风天气，出海作业需要格外注意安全。"]


def test_a_chinese_sentence_only_readability_kept_is_text_not_a_label():
    paras = [CHINESE[i % 4] + CHINESE[(i + 1) % 4] for i in range(8)]
    line = "<div><span>风暴过后码头上堆满了被冲上岸的木板和渔具需要几天时间才能清理干净</span></div>"
    body = "".join(f"<p>{p}</p>" for p in paras[:4]) + line + "".join(f"<p>{p}</p>" for p in paras[4:])
    html = f"""<!doctype html><html><head><meta charset="utf-8"><title>港口报告</title></head><body>
<main><article><h1>港口报告</h1><div class="body">{body}</div></article></main>
<footer><p>版权所有</p></footer></body></html>"""
    text = clean(html.encode())["text"]
    assert all(p in text for p in paras)
    assert "木板和渔具" in text


def test_a_teaser_in_an_aside_between_paragraphs_is_dropped():
    excerpt = ("It seems contradictory, but the harbour master loves both the old quay and the new marina, and he "
               "has told the council so at every meeting. Over the last few…")
    inset = f'<aside><p>{excerpt} <a href="/story/marina">Read more</a></p></aside>'
    text = clean(page(middle=inset))["text"]
    assert all(p in text for p in PROSE)
    assert "seems contradictory" not in text and "Read more" not in text


def test_a_picture_in_an_aside_stays():
    inset = ('<aside class="inset"><figure><img src="/pictures/quay.jpg" alt="The old quay">'
             "<figcaption>The old quay at low tide</figcaption></figure></aside>")
    html = clean(page(middle=inset))["html"]
    assert "quay.jpg" in html


VIDEO = '<div><iframe src="https://www.youtube.com/embed/harbour"></iframe></div>'
BASIN = PROSE[0].replace("Paragraph 0", "The outer basin")


def test_a_short_section_heading_over_its_paragraph_stays():
    # after a video trafilatura ends the article early and drops the heading; readability keeps it
    section = f"{VIDEO}<h2>Outer basin</h2><div>{BASIN}</div>"
    text = clean(page(end=section))["text"]
    assert "Outer basin" in text and "The outer basin" in text


def test_the_label_of_an_ad_slot_before_a_paragraph_is_dropped():
    slot = f'{VIDEO}<h3>Advertisement</h3><ins class="adsbygoogle" data-ad-slot="1"></ins><div>{BASIN}</div>'
    text = clean(page(end=slot))["text"]
    assert "The outer basin" in text
    assert "Advertisement" not in text


def test_buttons_and_drop_downs_in_the_article_are_dropped():
    buttons = "".join(f'<button type="button">Preview the {c} theme of the harbour map</button>'
                      for c in ("yellow", "green", "blue", "red"))
    choices = "".join(f"<option>{c}</option>" for c in ("White", "Black", "Red", "Green", "Blue", "Yellow"))
    controls = (f'<p class="thumbs">{buttons}</p>'
                f'<div class="settings"><p>Caption colour <select>{choices}</select> and more settings for the '
                f"captions of the harbour video are to be found here below</p></div>")
    text = clean(page(middle=controls))["text"]
    assert all(p in text for p in PROSE)
    assert "theme of the harbour map" not in text and "White" not in text


def test_other_articles_headlines_and_blurbs_after_the_article_are_dropped():
    columns = [("Editorial", "The quay deserves better",
                "THE harbour board has put off the repairs of the old quay for a third year."),
               ("Tides", "Why the channel keeps silting up",
                "JANE DOE The dredgers were out again this spring, and again it filled in."),
               ("Ferries", "A timetable nobody can read",
                "JOHN ROE Whoever designed the new timetable never waited on the pier.")]
    stories = "".join(
        f'<div class="story-block"><h4><strong class="kicker">{kicker}</strong> '
        f'<a href="/opinion/{i}">{headline}</a></h4>'
        f'<p class="standfirst">{blurb}</p></div>'
        for i, (kicker, headline, blurb) in enumerate(columns))
    box = f'<div class="group"><h2>Other Opinion Columns</h2>{stories}</div>'
    text = clean(in_article(box))["text"]
    assert all(p in text for p in PROSE)
    assert "quay deserves better" not in text and "repairs of the old quay" not in text


TEASERS = [("News", "/news/1", "The harbour board voted on Tuesday to lease the old fish hall to a group of "
            "boat builders, who plan to open a workshop there next spring and take on two appr"),
           ("Science", "/news/2", "Divers mapping the wreck off the north pier found a second hull under the "
            "first one, which the museum now thinks is older than the town itself and dates"),
           ("Firms", "/firms/3", "A ferry company from the islands has bought the last shipyard in the town "
            "and says it will keep all forty people who work there for at least the next")]


def teaser_list(more: str = "more", ellipsis: str = " ...") -> str:
    """Other stories' teasers, each under its section's label, in the article's container
    (both extractors keep them)."""
    return "<ul>" + "".join(
        f'<li><a href="/{label.lower()}">{label}</a><p>{blurb}{ellipsis} <a href="{href}">{more}</a></p></li>'
        for label, href, blurb in TEASERS) + "</ul>"


def test_other_stories_teasers_cut_off_after_the_article_are_dropped_with_their_list():
    for more, ellipsis in (("more", " ..."), ("mehr", "…"), ("Read more", " […]")):
        text = clean(page(end=teaser_list(more, ellipsis)))["text"]
        assert all(p in text for p in PROSE)
        assert not any(blurb[:40] in text for _, _, blurb in TEASERS), more
        assert "Science" not in text and "Firms" not in text  # the labels left alone in the list go too


def test_a_teaser_not_cut_off_is_a_paragraph_and_stays():
    text = clean(page(end=teaser_list(ellipsis=".")))["text"]
    assert all(blurb[:40] in text for _, _, blurb in TEASERS)


def test_a_page_of_teasers_keeps_them():
    body = f"""<!doctype html><html><head><meta charset="utf-8"><title>Harbour news</title></head>
<body><main><h1>Harbour news</h1>{teaser_list()}</main></body></html>""".encode()
    text = clean(body)["text"]
    assert all(blurb[:40] in text for _, _, blurb in TEASERS)


def test_teasers_with_the_pages_own_text_after_them_stay():
    about = ("<p>The harbour press service has sent the releases of the port's firms, clubs and offices to "
             "newspapers and radio stations along the coast since the year the new pier was built.</p>")
    text = clean(page(end=teaser_list() + about))["text"]
    assert all(blurb[:40] in text for _, _, blurb in TEASERS)
