"""No paragraph twice: the cleaner never says a paragraph more often than the page's
article does. Small pages of our own, one for each way a page came to be said twice: a
copy of the body for small screens, a second copy in another container, a table laid out
again for phones, a gallery whose slides each carry its caption, a lead the page carries
twice, and a block put back from trafilatura that readability's article already shows.
A refrain the author repeats stays."""

from __future__ import annotations

import lxml.html

from reader.clean import clean_page
from reader.clean.sanitize import plain_text
from reader.clean.vote import merge, parse_trafilatura

from ..cleanerpages import PROSE

NAV = "".join(f'<li><a href="/section/{i}">Section {i}</a></li>' for i in range(10))
BODY = "".join(f"<p>{p}</p>" for p in PROSE)


def page(main: str) -> bytes:
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>The harbour report</title></head>
<body><header><nav><ul>{NAV}</ul></nav></header><main>{main}</main>
<footer><p>Footer text of the site that should not be extracted.</p></footer></body></html>""".encode()


def clean(body: bytes) -> dict:
    return clean_page(body, "http://example.com/harbour", None)


def shown(result: dict) -> str:
    """All the text the reader view shows: the lead, the body, the captions."""
    return plain_text(result["html"])


def test_the_bodys_copy_for_small_screens_is_not_said_again():
    result = clean(page(f'<article><h1>The harbour report</h1><div class="story">{BODY}</div>'
                        f'<div class="story story--mobile">{BODY}</div></article>'))
    assert [shown(result).count(p) for p in PROSE] == [1] * len(PROSE)


def test_a_table_laid_out_again_for_phones_is_read_once():
    rows = [("Ferry to the island", "Every hour from six in the morning until ten at night"),
            ("Water taxi across the bay", "On request at the harbour office beside the fish market"),
            ("Night bus to the station", "Twice an hour from the harbour gate after midnight")]
    wide = "<table><tr><th>Service</th><th>When it runs</th></tr>" + "".join(
        f"<tr><td>{a}</td><td>{b}</td></tr>" for a, b in rows) + "</table>"
    # the phone's copy words its labels its own way: most of it, not all, is said elsewhere
    narrow = '<div class="visible-xs">' + "".join(
        f"<dl><dt>{a}</dt><dd>{b}</dd><dd>Timetable for {a.lower()}</dd></dl>" for a, b in rows) + "</div>"
    first = "".join(f"<p>{p}</p>" for p in PROSE[:4])
    rest = "".join(f"<p>{p}</p>" for p in PROSE[4:])
    result = clean(page(f"<article><h1>The harbour report</h1>{first}{wide}{narrow}{rest}</article>"))
    text = shown(result)
    assert all(text.count(b) == 1 for _, b in rows)
    assert all(p in text for p in PROSE)


def test_a_second_copy_of_the_body_in_another_container_is_dropped():
    # readability's container holds both copies, and they agree with trafilatura's text (which
    # holds each paragraph, once: the other copy is in a box it takes for furniture)
    result = clean(page(f'<article><h1>The harbour report</h1><div class="story">{BODY}</div>'
                        f'<div class="share-box">{BODY}</div></article>'))
    assert [shown(result).count(p) for p in PROSE] == [1] * len(PROSE)
    assert result["words"] == len(BODY.replace("<p>", " ").replace("</p>", " ").split())


def test_a_line_after_every_section_is_said_once_and_a_refrain_every_time():
    more = "Continue reading the main story"
    refrain = "I would prefer not to."
    sections = "".join(f'<p>{p}</p><p><a href="/more">{more}</a></p>' for p in PROSE[:4])
    talk = "".join(f"<p>{p}</p><p>{refrain}</p>" for p in PROSE[4:])
    result = clean(page(f"<article><h1>The harbour report</h1>{sections}<div>{talk}</div></article>"))
    text = shown(result)
    assert text.count(more) == 1
    assert text.count(refrain) == len(PROSE[4:])  # the author's, in the same run of text
    assert all(p in text for p in PROSE)


def test_a_galleries_caption_is_said_once_and_every_slide_keeps_its_picture():
    caption = "The fishing fleet back at its moorings after the works. Photo: Jo Harbour."
    slides = "".join(f'<div class="wp-caption"><img src="/fleet{i}.jpg" alt=""><p class="wp-caption-text">'
                     f"{caption}</p></div>" for i in range(4))
    first = "".join(f"<p>{p}</p>" for p in PROSE[:4])
    rest = "".join(f"<p>{p}</p>" for p in PROSE[4:])
    result = clean(page(f"<article><h1>The harbour report</h1>{first}{slides}{rest}</article>"))
    assert shown(result).count("fishing fleet back at its moorings") == 1
    assert all(f"/fleet{i}.jpg" in result["html"] for i in range(4))
    # each slide is a figure; the caption, said once, is its first's and not the body's
    assert [f["src"] for f in result["figures"]] == [f"http://example.com/fleet{i}.jpg" for i in range(4)]
    assert [f["caption"] for f in result["figures"]] == [caption, None, None, None]
    assert "moorings after the works" not in result["text"]
    assert all(p in result["text"] for p in PROSE)


def test_a_block_put_back_from_trafilatura_is_not_one_readabilitys_article_already_shows():
    kicker = "Interview with the harbour master and the mayor of the town"
    note = "Ferries run again from the spring, the harbour master says"
    # readability kept the kicker as loose text among the paragraphs (a phrase of the dateline
    # beside it, not a block it voted on), and the paragraphs of a layout table that
    # trafilatura read as one table
    readable = lxml.html.fragment_fromstring(
        f"<div><span>{kicker}</span><br>Wednesday, 1 November 2023{BODY}<p>{note}, and the fleet with them.</p></div>")
    traf = parse_trafilatura(
        f"<html><body><p>{kicker}</p>{BODY}<table><tr><td>{note}, and the fleet with them.</td>"
        f"<td>Home Archives About the paper</td></tr></table></body></html>")
    article = merge(readable, traf)
    text = plain_text(lxml.html.tostring(article, encoding="unicode"))
    assert text.count(kicker) == 1
    assert text.count(note) == 1
    assert "Home Archives" not in text


def test_a_list_item_put_back_with_its_sub_list_does_not_say_its_head_twice():
    head = "Extensions of the editor that are not packaged yet:"
    readable = lxml.html.fragment_fromstring(f"<div>{BODY}<ul><li>{head}</li></ul></div>")
    traf = parse_trafilatura(f"<html><body>{BODY}<ul><li>{head}<ul><li>the helm integration, not in the "
                             f"archive</li><li>a more direct jump list</li></ul></li></ul></body></html>")
    text = plain_text(lxml.html.tostring(merge(readable, traf), encoding="unicode"))
    assert text.count(head) == 1


def test_a_heading_set_under_each_tab_is_said_once():
    tabs = "".join(f'<li><a href="#tab-{i}">{label}</a><h2>Fish stew with saffron and fennel</h2></li>'
                   for i, label in enumerate(("Ingredients", "Nutrition", "Method", "Reviews")))
    result = clean(page(f"<article><h1>The harbour report</h1>{BODY}<ul class='tabs'>{tabs}</ul></article>"))
    assert shown(result).count("Fish stew with saffron") == 1
    assert all(p in shown(result) for p in PROSE)


def test_a_heading_said_again_over_a_second_section_stays():
    half = len(PROSE) // 2
    sections = "".join(f"<h2>What the tide tables say</h2>{''.join(f'<p>{p}</p>' for p in part)}"
                       for part in (PROSE[:half], PROSE[half:]))
    result = clean(page(f"<article><h1>The harbour report</h1>{sections}</article>"))
    assert shown(result).count("What the tide tables say") == 2
