"""The seam to trafilatura and readability-lxml (reader/clean/upstream.py) against the
libraries' public entry points: it reaches into their internals, so an upgrade that moves
them shows here first, as a failing test, rather than as a quiet drop in quality.
"""

from __future__ import annotations

import json
import lzma
import subprocess
import sys

import lxml.html
import pytest
import trafilatura
from readability import Document

from reader.clean import upstream

from .golden import PAGES, pages

# News, Chinese, documentation with code, tables and references, German news.
TRAFILATURA_PAGES = ["mozilla-ars-1", "mozilla-qq", "trafilatura-docs.docker.com.install", "mozilla-wikipedia",
                     "trafilatura-tagesschau.de.rheinmetall"]
# Pages with neither a heading made of links nor a link whose class readability takes for
# a sidebar's: the two places where the subclass means to differ.
READABILITY_PAGES = ["mozilla-keep-images", "trafilatura-docs.docker.com.install", "mozilla-mathjax"]


def markup_of(name: str) -> str:
    return upstream.decode(lzma.decompress((PAGES / f"{name}.html.xz").read_bytes()), None)


ODD_MARKUP = [
    '<?xml version="1.0" encoding="utf-8"?><html><body><p>Declared as XML, given as text</p></body></html>',
    "<!DOCTYPE html>\n<html/>\n<body><p>A self-closing html tag</p></body>",
    "<p>One paragraph and no html tag</p>",
    "<div><p>Two blocks</p><p>and no html tag</p></div><p>after</p>",
    "plain text, no markup at all",
    "<html><body>\x00\x08 control characters \x0b in the text</body></html>",
    "<html><!-- a comment --><body><?pi x?><form><input value=a><select><option>b</select></form></body></html>",
]


@pytest.mark.parametrize("markup", [*ODD_MARKUP, *(markup_of(name) for name in TRAFILATURA_PAGES)])
def test_the_page_is_parsed_as_trafilatura_parses_it(markup: str):
    from trafilatura.utils import load_html

    ours, theirs = upstream.parse(markup), load_html(markup)
    assert (ours is None) == (theirs is None)
    if ours is not None:
        assert lxml.html.tostring(ours) == lxml.html.tostring(theirs)
        assert all(isinstance(el, lxml.html.HtmlMixin) for el in ours.iter())  # text_content, drop_tree


@pytest.mark.parametrize("name", TRAFILATURA_PAGES)
def test_the_trafilatura_body_is_what_trafilatura_extract_gives_with_the_same_settings(name: str):
    markup, url = markup_of(name), pages()[name]["url"]
    tree = upstream.parse(markup)
    assert tree is not None
    ours, meta = upstream.trafilatura_article(tree, url)
    theirs = trafilatura.extract(markup, url=url, output_format="html", include_images=False, include_links=True,
                                 include_tables=True, include_comments=False, favor_precision=True)
    assert ours is not None and meta.get("title")
    assert ours == theirs


@pytest.mark.parametrize("name", READABILITY_PAGES)
def test_the_readability_subclass_gives_upstream_readabilitys_article(name: str):
    markup = markup_of(name)
    tree = upstream.parse(markup)
    assert tree is not None
    ours = upstream.readability_article(tree)
    theirs = lxml.html.fragment_fromstring(Document(markup).summary(html_partial=True), create_parent="div")
    assert ours is not None and len(ours.text_content().split()) > 100
    assert lxml.html.tostring(ours, encoding="unicode") == lxml.html.tostring(theirs, encoding="unicode")


def test_the_serving_process_imports_none_of_the_extractors():
    """trafilatura, htmldate and readability take about a second to import and much memory:
    only the pool's processes and `reader clean` load them."""
    code = ("import sys, json; import reader.web.app, reader.cli, reader.core, reader.clean, reader.jobs.cleaning;"
            " print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in"
            " ('trafilatura', 'htmldate', 'readability', 'justext', 'courlan'))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == []
