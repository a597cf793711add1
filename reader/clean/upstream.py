"""Every call the cleaner makes into trafilatura's, htmldate's and readability-lxml's
internals, in one file: the one to read again on every upgrade of either library.

The cleaner does not go through their public `extract()` and `Document(html).summary()`
alone: it parses the page once for both, skips work whose result it throws away (the
content fingerprint, the metadata fields it never shows, readability's re-parse and
lxml Cleaner pass) and changes two of readability's heuristics. That reaches into
functions and names that neither library promises to keep, which is why pyproject pins
both to the minor versions tested here, and why tests/clean/test_upstream.py checks the
trafilatura body against `trafilatura.extract` and the readability subclass against
upstream readability.

What belongs here: a call into those libraries, and the settings and workarounds that
go with the call. The vote, the furniture rules and the sanitizer are the cleaner's
own and live beside this module.

The libraries are imported inside the functions that call them: the package is imported
by every process that hands pages to the pool, and only the pool processes (and
`reader clean`) clean; the serving process never pays their import time (about a
second) or their memory.
"""

from __future__ import annotations

import copy
import re
from html import unescape
from typing import Any, TypedDict

import lxml.html
from lxml import etree

from .blocks import is_heading


class PageMeta(TypedDict, total=False):
    """The four fields the reader view shows, as trafilatura cleans them (None or
    missing when the page does not say)."""

    title: str | None
    author: str | None
    date: str | None
    sitename: str | None


def decode(body: bytes, charset: str | None) -> str:
    """The page's text: in the charset the response named, else as trafilatura detects it."""
    if charset:
        try:
            return body.decode(charset, errors="replace")
        except LookupError:
            pass  # an unknown charset name: detect it from the bytes instead
    from trafilatura.utils import decode_file

    decoded = decode_file(body)
    return decoded if isinstance(decoded, str) else decoded.decode("utf-8", errors="replace")


def parse(markup: str) -> etree._Element | None:
    """The page parsed once, for both extractors (each works on its own copy).

    This is `trafilatura.utils.load_html` step for step (its repairs, its fallback to bytes,
    its refusal of what is not HTML) with one change: the parser. lxml.html's parser picks
    each element's Python class by its tag in Python code, called every time an element is
    touched from Python, half a million times on 80 pages (a tenth of the cleaner's time);
    `_parser` picks lxml.html's element class in C. The elements are the same HtmlElement
    (text_content, drop_tree, everything both extractors call) but for the form fields'
    classes, whose methods (a form's inputs, a field's value) neither calls."""
    from trafilatura.utils import is_dubious_html, repair_faulty_html

    parser = _parser()
    beginning = markup[:50].lower()
    dubious = is_dubious_html(beginning)
    markup = repair_faulty_html(markup, beginning)
    tree: etree._Element | None = None
    as_bytes = False
    try:
        tree = lxml.html.fromstring(markup, parser=parser)
    except ValueError:  # "Unicode strings with encoding declaration are not supported."
        tree, as_bytes = _parse_bytes(markup, parser), True
    except Exception:  # lxml refusing the markup outright
        tree = None
    if (tree is None or len(tree) < 1) and not as_bytes:
        tree = _parse_bytes(markup, parser)
    if tree is not None and dubious and len(tree) < 2:
        return None  # one block and no <html>: not a page
    return tree


def _parse_bytes(markup: str, parser: etree.HTMLParser) -> etree._Element | None:
    try:
        tree: etree._Element = lxml.html.fromstring(markup.encode("utf8", "surrogatepass"), parser=parser)
    except Exception:
        return None
    return tree


def _parser() -> etree.HTMLParser:
    """trafilatura's HTML parser (its settings: no ids collected, comments and processing
    instructions left out), with lxml.html's element classes looked up in C."""
    global _PARSER
    if _PARSER is None:
        _PARSER = _in_c(etree.HTMLParser(collect_ids=False, default_doctype=False, encoding="utf-8",
                                         remove_comments=True, remove_pis=True))
    return _PARSER


def html_parser() -> etree.HTMLParser:
    """lxml.html's own parser (its default settings), with its element classes looked up
    in C: for the HTML the two extractors write, which the cleaner reads again."""
    global _HTML_PARSER
    if _HTML_PARSER is None:
        _HTML_PARSER = _in_c(etree.HTMLParser())
    return _HTML_PARSER


def _in_c(parser: etree.HTMLParser) -> etree.HTMLParser:
    parser.set_element_class_lookup(etree.ElementDefaultClassLookup(
        element=lxml.html.HtmlElement, comment=lxml.html.HtmlComment, pi=lxml.html.HtmlProcessingInstruction,
        entity=lxml.html.HtmlEntity))
    return parser


_PARSER: etree.HTMLParser | None = None
_HTML_PARSER: etree.HTMLParser | None = None


def trafilatura_article(tree: etree._Element, url: str) -> tuple[str | None, PageMeta]:
    """trafilatura's article as HTML, and the page's title, author, date and site name.

    This is what `trafilatura.extract_with_metadata` returns, less two costs that buy us
    nothing: the content fingerprint it computes for every non-text output, and the
    categories, tags, licence and the like that its metadata pass also looks for. The
    HTML is what `trafilatura.extract` returns with the same settings (a test holds it)."""
    from trafilatura.core import bare_extraction, determine_returnstring
    from trafilatura.settings import Document, Extractor, set_date_params

    # The date from the page's markup (meta tags, JSON-LD, <time>, the URL) only: guessing
    # it from the running text costs more than the whole extraction and mostly finds
    # copyright years.
    date_params = set_date_params(extensive=False)
    options = Extractor(
        # Images come from readability's copy of the article, which keeps their figures
        # and captions; in trafilatura's they only blur its vote.
        output_format="html", images=False, links=True, tables=True, comments=False, precision=True,
        url=url, date_params=date_params,
    )
    try:
        document = bare_extraction(tree, options=options)  # works on its own copy of the tree
        if not isinstance(document, Document):
            return None, {}
        text = determine_returnstring(document, options)
        meta = _metadata(tree, url, date_params)
    except Exception:  # a third-party parser choking on hostile markup is "no opinion"
        return None, {}
    return (text or None), meta


def _metadata(tree: etree._Element, url: str, date_params: dict[str, Any]) -> PageMeta:
    """The four fields we show, found the way trafilatura's metadata pass finds them (meta
    tags, then JSON-LD, then the page's own headings and bylines; the date by htmldate),
    and cleaned up as it cleans them. None of these steps edits the tree."""
    from htmldate import find_date
    from trafilatura.metadata import (META_URL, examine_meta, extract_author, extract_meta_json, extract_sitename,
                                      extract_title, extract_url)
    from trafilatura.utils import line_processing

    found = examine_meta(tree)
    if found.author and " " not in found.author:
        found.author = None  # a lone handle or first name is rarely the byline
    try:
        found = extract_meta_json(tree, found)
    except Exception:  # its JSON-LD reader has bugs of its own; the meta tags still stand
        pass
    if not found.title:
        found.title = extract_title(tree)
    if not found.author:
        found.author = extract_author(tree)
    page_url = found.url or extract_url(tree, url)
    date = find_date(tree, **{**date_params, "url": page_url})
    site = found.sitename or extract_sitename(tree)
    if site:
        site = site.lstrip("@")
        if site and "." not in site and not site[0].isupper():
            site = site.title()
    elif page_url:
        match = META_URL.match(page_url)
        if match:
            site = match[1]

    def tidy(value: Any) -> Any:
        if not isinstance(value, str):
            return value
        if len(value) > 10000:
            value = value[:9999] + "…"
        return line_processing(unescape(value))

    return {"title": tidy(found.title), "author": tidy(found.author), "date": tidy(date), "sitename": tidy(site)}


def readability_article(tree: etree._Element) -> etree._Element | None:
    """readability-lxml's article (`summary(html_partial=True)`) as a <div>, or None when
    it cannot read the page."""
    try:
        summary = _Readability(tree).summary(html_partial=True)
        root: etree._Element = lxml.html.fragment_fromstring(summary, create_parent="div", parser=html_parser())
    except Exception:  # readability raises on pages it cannot parse; trafilatura may still cope
        return None
    return root


def _readability_class() -> type:
    from readability import Document

    # readability-lxml ships no type information: Document is Any to mypy, and --strict
    # refuses a subclass of Any (the project's own settings allow it, hence unused-ignore).
    class Readability(Document):  # type: ignore[misc, unused-ignore]
        """readability-lxml on the tree already parsed. Its own parse step re-parses the
        markup and runs a full lxml Cleaner (javascript links, style attributes) on every
        retry; the sanitizer does that job later, so only what changes which text it
        picks is kept here: scripts and styles (hidden elements are gone already)."""

        def _parse(self, input: etree._Element) -> etree._Element:
            doc = copy.deepcopy(input)  # summary() edits the tree, and may start over
            etree.strip_elements(doc, "script", "style", "link", etree.Comment, etree.ProcessingInstruction,
                                 with_tail=False)
            self.encoding = "utf-8"
            return doc

        def get_link_density(self, elem: etree._Element) -> float:
            # readability's own, with the cheap length below: it runs for every candidate
            # and every link in it.
            if is_heading(elem):
                return 0.0  # Readability.js judges a heading by its class alone: a linked heading stays
            linked = sum(clean_length(link.text_content() or "") for link in elem.findall(".//a"))
            return float(linked) / max(clean_length(elem.text_content() or ""), 1)

        def remove_unlikely_candidates(self) -> None:
            # readability's own, but a link is never taken out: its class or id names how it
            # behaves ("popup": a note shown on click), not a sidebar, and taking it out cuts
            # words out of the sentence around it. Readability.js spares links the same way.
            from readability.readability import REGEXES

            # only what has a class or an id can be unlikely (the rest is most of the page)
            for elem in self.html.xpath(".//*[@class or @id]"):
                if elem.tag in ("a", "html", "body"):
                    continue
                marks = f"{elem.get('class', '')} {elem.get('id', '')}"
                if (len(marks) >= 2 and REGEXES["unlikelyCandidatesRe"].search(marks)
                        and not REGEXES["okMaybeItsACandidateRe"].search(marks)
                        and not elem.xpath("ancestor-or-self::pre | ancestor-or-self::code")
                        and not elem.xpath("descendant-or-self::main | descendant-or-self::article"
                                           " | descendant-or-self::math")):
                    elem.drop_tree()

    return Readability


_SPECIAL_SPACE = re.compile(r"\s{2,}|[^\S ]")  # a run of space that is not one plain " "
_TAB_SPACE = re.compile(r"\t|[ \t]{2,}")


def clean_length(text: str) -> int:
    """len(readability.readability.clean(text)), which runs three regex substitutions over
    every text it measures (a long run of space becomes 255 spaces, a run holding a line
    break one line break, then a tab or a run of spaces and tabs one space; then strip).
    Each substitution stays inside one run of white space, so the length changes only
    where a run is other than a single space: those runs are counted here, and no text is
    built (readability measures every candidate and every link in it, the page's text over
    and over)."""
    stripped = text.strip()  # the ends' runs go whole, whatever the substitutions made of them
    length = len(stripped)
    for match in _SPECIAL_SPACE.finditer(stripped):
        run = match.group()
        if len(run) >= 255 or "\n" in run:
            length += 1 - len(run)  # one space (255 of them, then one) or one line break
        else:
            length += len(_TAB_SPACE.sub(" ", run)) - len(run)
    return length


def _Readability(tree: etree._Element) -> Any:
    global _READABILITY
    if _READABILITY is None:
        _READABILITY = _readability_class()
    return _READABILITY(tree)


# Built on first use, so that importing this module does not import readability.
_READABILITY: type | None = None
