"""Figures the vote loses are put back: a captioned picture set between two paragraphs of
the article is the article's own, even when readability's cleaning dropped it (its text
is short) and trafilatura left its caption out. A video's caption, a picture outside the
text and a bare credit are not."""

from __future__ import annotations

import re

from reader.clean import clean_page

STEPS = [
    "Dig the bed over in autumn, when the soil is still warm and the worms can work the compost in before the frost.",
    "Lay the stones along the edge of the bed so that the rain runs off the path and never pools against the wall.",
    "Sow the beans in two rows a hand apart, and water them every evening until the first true leaves have opened.",
    "Stake the tomatoes before they flower, tying each stem loosely so the wind can move it without snapping it.",
    "Mulch the rows with straw in midsummer to keep the roots cool and to stop the weeds from taking the light.",
    "Lift the potatoes on a dry morning and leave them on the soil for an hour so their skins can set before storage.",
]


def page(steps: str, after: str = "") -> bytes:
    nav = "".join(f'<li><a href="/section/{i}">Section {i}</a></li>' for i in range(10))
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>The harbour garden</title></head>
<body><header><nav><ul>{nav}</ul></nav></header>
<main><article><h1>The harbour garden</h1>{steps}</article>{after}</main>
<footer><p>Footer text of the site that should not be extracted.</p></footer></body></html>""".encode()


def step(i: int, text: str, figure: str) -> str:
    # the way how-to sites set a step: its text in one box, its picture beside it, and the
    # caption after the <figure> rather than inside it
    return f'<div class="step"><div class="content"><span><p>{text}</p></span></div>{figure}</div>'


def picture(i: int, caption: str) -> str:
    return (f'<figure class="thumb"><img src="/step{i}.jpg" alt="Step {i}"></figure>'
            f'<figcaption class="caption">{caption}</figcaption>')


def clean(body: bytes) -> dict:
    return clean_page(body, "http://example.com/garden", None)


def test_a_captioned_picture_between_two_paragraphs_comes_back_as_a_figure_with_its_caption():
    steps = "".join(step(i, text, picture(i, f"The bed after step {i + 1} (Jo Gardener)"))
                    for i, text in enumerate(STEPS))
    result = clean(page(steps))
    html = result["html"]
    assert all(text in result["text"] for text in STEPS)
    # every picture with text on both sides, in its place: after its own step, before the next
    for i in range(len(STEPS) - 1):
        figure = (f'<figure><img src="http://example.com/step{i}.jpg" alt="Step {i}"[^>]*>'
                  f"<figcaption>The bed after step {i + 1} \\(Jo Gardener\\)</figcaption></figure>")
        assert re.search(figure, html), i
        assert html.index(STEPS[i]) < html.index(f"step{i}.jpg") < html.index(STEPS[i + 1])
    assert html.count("<figure>") == len(STEPS) - 1  # each once


def test_a_videos_caption_is_not_put_back():
    video = ('<figure class="media"><div class="player" data-media-type="video"></div>'
             "<figcaption>Media caption The gardener explains how deep to sow the beans</figcaption></figure>")
    steps = "".join(step(i, text, video if i == 2 else "") for i, text in enumerate(STEPS))
    result = clean(page(steps))
    assert all(text in result["text"] for text in STEPS)
    assert "how deep to sow" not in result["text"]


def test_a_picture_outside_the_text_is_not_put_back():
    teaser = ('<aside class="more"><figure><img src="/other.jpg" alt="">'
              "<figcaption>Another garden we visited on the coast last summer</figcaption></figure>"
              '<p><a href="/other">Read about the coast garden</a></p></aside>')
    steps = "".join(step(i, text, "") for i, text in enumerate(STEPS))
    result = clean(page(steps, after=teaser))
    assert all(text in result["text"] for text in STEPS)
    assert "Another garden we visited" not in result["text"]
    assert "other.jpg" not in result["html"]


def test_a_bare_credit_is_not_a_caption_and_a_rights_mark_is_left_out_of_one():
    captions = {1: "(Foto: AP)",
                3: 'The stakes, tied loosely <span class="source">© Garden Agency</span>'}
    steps = "".join(step(i, text, picture(i, captions[i]) if i in captions else "")
                    for i, text in enumerate(STEPS))
    result = clean(page(steps))
    assert "Foto" not in result["text"]
    assert "<figcaption>The stakes, tied loosely</figcaption>" in result["html"]
    assert "Garden Agency" not in result["text"]



def test_a_credit_beside_a_pictures_caption_goes_into_the_caption_not_the_body():
    figures = ['<figure><img src="/wall.jpg"><span>© Jane Doe</span><figcaption>The new wall at low tide.'
               '</figcaption></figure>',
               '<figure><div><img src="/quay.jpg"><p>Photo: Harbour Office</p></div></figure>']
    steps = "".join(f"<p>{text}</p>{figures[i] if i < len(figures) else ''}" for i, text in enumerate(STEPS))
    result = clean(page(steps))
    assert all(text in result["text"] for text in STEPS)
    assert "Jane Doe" not in result["text"] and "Harbour Office" not in result["text"]  # what is read and counted
    assert [f["caption"] for f in result["figures"]] == ["The new wall at low tide. © Jane Doe",
                                                         "Photo: Harbour Office"]
    assert "<figcaption>The new wall at low tide. <small>© Jane Doe</small></figcaption>" in result["html"]


def test_a_figure_holding_text_of_its_own_keeps_it_in_the_body():
    code = '<figure><img src="/icon.png"><pre>make harbour</pre><figcaption>Listing 1</figcaption></figure>'
    long = " ".join(["The article's own words sit inside the page's figure, as some templates set them."] * 2)
    wrapped = f'<figure><img src="/boat.jpg"><p>{long}</p><figcaption>A boat</figcaption></figure>'
    steps = f"<p>{STEPS[0]}</p>{code}<p>{STEPS[1]}</p>{wrapped}" + "".join(f"<p>{t}</p>" for t in STEPS[2:])
    result = clean(page(steps))
    assert "make harbour" in result["text"] and long in result["text"]
    assert all(text in result["text"] for text in STEPS)
