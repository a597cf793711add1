"""The cleaner's title, author, date and site name: it finds them itself (skipping what
trafilatura's metadata pass also looks for and reader never shows), and they must stay
what trafilatura's own pass finds, on pages that carry them in each of the usual places."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from readability.readability import clean as readability_clean
from trafilatura.metadata import extract_metadata
from trafilatura.settings import set_date_params

from reader.clean import clean_page
from reader.clean.upstream import clean_length as _clean_length

PROSE = "".join(
    f"<p>Paragraph {i} of the piece on the river barges has enough plain words to read as prose, "
    f"with a clause or two and a full stop.</p>"
    for i in range(8)
)

JSON_LD = """<!doctype html><html><head><meta charset="utf-8"><title>Barges return | The River Post</title>
<script type="application/ld+json">{"@context": "https://schema.org", "@type": "NewsArticle",
"headline": "Barges return to the river", "datePublished": "2025-03-04T08:00:00Z",
"author": {"@type": "Person", "name": "Jane Waters"},
"publisher": {"@type": "Organization", "name": "The River Post"}}</script></head>
<body><nav><a href="/">Home</a></nav><article><h1>Barges return to the river</h1>PROSE</article></body></html>"""

OPEN_GRAPH = """<!doctype html><html><head><meta charset="utf-8"><title>Untitled</title>
<meta property="og:title" content="The lock keeper's year"><meta property="og:site_name" content="canalnews">
<meta name="author" content="Tom"><meta property="article:published_time" content="2024-11-20">
</head><body><article><h1>The lock keeper's year</h1>
<div class="byline">By <span class="author">Maria Lockwood</span></div>PROSE</article></body></html>"""

BARE = """<!doctype html><html><head><meta charset="utf-8"><title>Notes on towpaths &amp; bridges</title></head>
<body><main><h1>Notes on towpaths &amp; bridges</h1>PROSE</main></body></html>"""

PAGES = {
    "json-ld": (JSON_LD, "https://riverpost.example/2025/03/04/barges-return"),
    "open-graph": (OPEN_GRAPH, "https://www.canalnews.example/lock-keeper"),
    "bare": (BARE, "https://towpaths.example/2023/06/14/notes.html"),
}


def clean(name: str) -> dict:
    markup, url = PAGES[name]
    return clean_page(markup.replace("PROSE", PROSE).encode(), url, "utf-8")


@pytest.mark.parametrize("name", PAGES)
def test_the_fields_are_the_ones_trafilaturas_own_metadata_pass_finds(name: str) -> None:
    markup, url = PAGES[name]
    theirs = extract_metadata(markup.replace("PROSE", PROSE), url, set_date_params(extensive=False))
    ours = clean(name)
    assert (ours["title"], ours["author"], ours["published"], ours["site"]) == \
        (theirs.title, theirs.author, theirs.date, theirs.sitename)


def test_json_ld_gives_all_four() -> None:
    result = clean("json-ld")
    assert result["title"] == "Barges return to the river"
    assert result["author"] == "Jane Waters"
    assert result["published"] == "2025-03-04"
    assert result["site"] == "The River Post"


def test_open_graph_and_a_byline() -> None:
    result = clean("open-graph")
    assert result["title"] == "The lock keeper's year"
    assert result["author"] == "Maria Lockwood"  # the one-word meta author is passed over for the byline
    assert result["published"] == "2024-11-20"
    assert result["site"] == "Canalnews"


def test_a_page_with_only_its_title_and_a_dated_url() -> None:
    result = clean("bare")
    assert result["title"] == "Notes on towpaths & bridges"
    assert result["author"] is None
    assert result["published"] == "2023-06-14"  # from the URL
    assert result["site"] == "towpaths.example"


@given(st.text(alphabet=st.sampled_from([" ", "\n", "\t", "\r", "\xa0", "\u2028", "\x0b", "a", "b"]), max_size=600))
def test_the_cheap_length_is_readabilitys_length(text: str) -> None:
    assert _clean_length(text) == len(readability_clean(text))


@pytest.mark.parametrize("run", [254, 255, 256, 400])
def test_the_cheap_length_on_long_runs_of_space(run: int) -> None:
    for space in (" ", "\xa0", "\r", " \xa0"):
        text = f"a{space * run}b"
        assert _clean_length(text) == len(readability_clean(text))
