"""The lead paragraph (standfirst) beside the title, which both extractors leave out when
the body has a container of its own: small pages of our own, cleaned with clean_page. The
lead is shown (the HTML, as `<p class="lead">`) and named (`lead`), and is not the body
(`text`)."""

from __future__ import annotations

from reader.clean import clean_page
from reader.clean.sanitize import plain_text

from ..cleanerpages import PROSE, page


def clean(body: bytes) -> dict:
    return clean_page(body, "http://example.com/harbour", None)


def shown(body: bytes) -> str:
    """Everything the reader view shows as text: the lead, the body, the captions."""
    return plain_text(clean(body)["html"])


def split_page(header: str, *, body_title: str = "", title: str = "The harbour report") -> bytes:
    """A page whose header (title, lead, byline) sits apart from the body's container, as
    news sites build them: both extractors choose the body's container."""
    body = "".join(f"<p>{p}</p>" for p in PROSE)
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>The harbour report</title></head>
<body><div class="page"><div class="article-header"><h1>{title}</h1>{header}</div>
<div class="row"><div class="col-main"><div class="article-body">{body_title}{body}</div></div>
<div class="col-side"><p>Sidebar</p></div></div></div></body></html>""".encode()


LEAD = "The harbour reopens next spring after two years of works, and the fishing fleet will return to its old moorings."


def test_the_lead_paragraph_beside_the_title_is_put_back_above_the_body():
    byline = "<p>By Jane Doe, harbour correspondent, 3 May 2024, 12:30</p>"
    result = clean(split_page(f'<p class="standfirst">{LEAD}</p>{byline}'))
    text = plain_text(result["html"])
    assert LEAD in text
    assert text.index(LEAD) < text.index(PROSE[0])
    assert text.count(LEAD) == 1
    assert "Jane Doe" not in text
    assert all(p in text for p in PROSE)
    assert result["lead"] == LEAD
    assert f'<p class="lead">{LEAD}</p>' in result["html"]
    assert LEAD not in result["text"] and result["text"].startswith(PROSE[0])
    assert result["words"] == len(result["text"].split())  # reading time counts the body


def test_a_lead_the_page_carries_twice_is_put_back_once():
    # one copy for large screens, one for small ones, neither hidden by the page's markup
    twice = f'<p class="standfirst">{LEAD}</p><p class="standfirst standfirst--compact">{LEAD}</p>'
    result = clean(split_page(twice))
    assert result["lead"] == LEAD
    assert plain_text(result["html"]).count(LEAD) == 1


def test_a_paragraph_the_article_holds_further_down_is_not_its_lead():
    note = "Jane Doe has written about the harbour and its fishing fleet for the paper since the year 2009."
    more = [p.replace("report on the harbour", "second part of the report") for p in PROSE]
    body = "".join(f"<p>{p}</p>" for p in PROSE + more) + f"<p>{note}</p>"  # a long article: the note is far down
    page_ = f"""<!doctype html><html><head><meta charset="utf-8"><title>The harbour report</title></head>
<body><div class="page"><div class="article-header"><h1>The harbour report</h1><p class="author-note">{note}</p></div>
<div class="row"><div class="col-main"><div class="article-body">{body}</div></div></div></div></body></html>"""
    result = clean(page_.encode())
    assert result["lead"] is None
    assert plain_text(result["html"]).count(note) == 1


def test_a_lead_already_in_the_article_is_not_repeated():
    text = shown(page(header=f'<p class="standfirst">{LEAD}</p>'))
    assert text.count(LEAD) == 1


def test_teasers_of_other_stories_between_title_and_body_are_not_a_lead():
    teasers = "".join(f"<p>Teaser {i} of another story from the coast, told in a sentence or two to lure "
                      f"readers away.</p>" for i in range(4))
    text = clean(split_page(teasers))["text"]
    assert "Teaser 1 of another story" not in text
    assert all(p in text for p in PROSE)


def test_the_lead_goes_below_the_articles_own_title_which_the_view_prints_apart():
    html = clean(split_page(f'<p class="standfirst">{LEAD}</p>', body_title="<h1>The harbour report</h1>"))["html"]
    assert "The harbour report" not in html
    assert LEAD in html


def test_the_title_said_again_under_it_is_not_a_lead():
    title = "Will the harbour reopen before the fishing fleet loses another season at sea?"
    text = shown(split_page(f'<p class="share">{title}</p><p class="standfirst">{LEAD}</p>', title=title))
    assert title not in text
    assert LEAD in text
