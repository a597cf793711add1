"""The article cleaner: a page's bytes in, the article's sanitized HTML, plain text and
metadata out.

Two extractors read every page and vote on its text blocks. trafilatura is good at
telling an article from the site's furniture on pages of every shape; readability-lxml
finds the article's container more completely and keeps its markup as written (figures,
inline code, numbered lists with their start, code blocks). So readability's container is
the base, and trafilatura's text is the second opinion:

- a block both found is kept;
- a block only readability found is kept when it sits inside the agreed article and reads
  as text (not a short block mostly of links, not a label of under eight words or a
  heading of under five unless the agreed paragraph it introduces comes right after it,
  or after only a picture or a video; pictures always do), or when it is a single line between two agreed paragraphs
  ("Related: ...", a one-line aside), but never when the page marks it as an aside (an
  <aside> inset: "read more" teasers); after the last agreed block with words it
  is kept only when it is long, and not at all once two short ones in a row have shown
  that the page's furniture has begun (short trailing blocks are bylines, share prompts,
  "posted in" lines and related links far more often than text, and the teasers after
  them are other stories);
- a block only trafilatura found (often a table, which readability's cleaning drops) is
  put back where trafilatura had it, after the last agreed block before it, when it has a
  few words at least and is not another story's: an item of a list of titled cards (a
  gallery's slides), or a headline that links elsewhere and the blurb under it;
- when the two do not agree on anything, readability picked the wrong container and
  trafilatura's article stands alone.

Votes are taken on blocks: a link, a formula or a date inside a sentence goes with the
sentence. Their lengths are counted in words, a run of Chinese or Japanese (written without
spaces) by its length, and buttons, drop-downs and text boxes are taken out of
readability's copy first (`boilerplate.py` holds these rules). Readability never takes a
link out as an unlikely container, whatever its class ("popup" note links inside sentences):
that would cut words out of the agreed paragraph around it. Nor does it drop a heading for
its links (a heading that links to the product it reviews is still the section's), and the
"VIDEO" it writes into a video's frame is taken out again. The article's leading
heading is left out only when it is the title (the view prints that); a first heading that
says something else is kept.

After the vote, `furniture.drop_furniture` takes out what both kept that is still not the
article (a "Read also: <link>" cross-reference, a rights line, a heading with nothing
after it), `figures.restore_figures` puts back the captioned pictures both dropped that
sit between two blocks of the article's text (readability's cleaning drops a figure whose
text is short, and trafilatura leaves captions out), and `standfirst.restore_lead` puts
back the lead paragraph that sits beside the title, outside the container both chose for
the body.

Before either reads the page, what the page hides (hidden, display: none, visibility:
hidden) is taken out of the one shared parse, unless it is most of the page.

Everything is a plain function of bytes so it runs in the worker processes of
`extract.CpuPool`; `reader clean` calls the very same `clean_page`. Images stay as
`<img>` elements with absolute URLs, and the page's bytes are all this needs, so storing
images or re-cleaning a stored raw page can wrap this function later.
"""

from __future__ import annotations

import copy
import json
import re
from html import unescape
from pathlib import Path
from typing import Any

import lxml.html
from lxml import etree

from .blocks import (
    WORD,
    Block,
    Opinion,
    drop,
    is_heading,
    linked_length,
    text_of,
    triples_in_order,
    voting_units,
    words_of,
)
from .boilerplate import card, drop_controls, heads_section, inset, without_teasers, word_count
from ..fetch import FetchError
from .figures import restore_figures
from .furniture import drop_furniture
from .sanitize import clean_html, plain_text
from .standfirst import restore_lead

# trafilatura, htmldate and readability are imported inside the functions that call them:
# this module is imported by every process that hands pages to the pool, and only the pool
# processes (and `reader clean`) clean; the serving process never pays their import time
# (about a second) or their memory.


class ExtractError(FetchError):
    """The page arrived but holds nothing we can show as an article."""


# A trailing block only readability saw is kept only above this many words.
TRAILING_MIN_WORDS = 20
# This many short blocks in a row after the article's last agreed block end it.
TRAILING_END_RUN = 2
# A block only readability found, shorter than LINKY_MAX_WORDS words and with more than
# LINKY of its text in links, is a list of links; one under SHORT_WORDS words is a label.
LINKY = 0.3
LINKY_MAX_WORDS = 40
SHORT_WORDS = 5
# ... and a block other than a heading is a label (a date line, "Share this", a rating)
# under SHORT_TEXT_WORDS words: a section title is short, a paragraph seldom is.
SHORT_TEXT_WORDS = 8
# An agreed block this long is prose: a block only readability kept between two of them
# is part of the running text.
SANDWICH_PROSE_WORDS = 10
# A block only trafilatura found is put back only from this many words.
PUT_BACK_MIN_WORDS = 5

# Share of the leading heading's words that must be in the page's title for it to be the title.
TITLE_WORDS = 0.75



def clean_page(body: bytes, url: str, charset: str | None) -> dict[str, Any]:
    """Clean one page. Pure CPU; raises ExtractError when there is no article."""
    markup = _decode(body, charset)
    if not markup.strip():
        raise ExtractError("no readable text found on the page")
    tree = _parse(markup)
    if tree is None:
        raise ExtractError("no readable text found on the page")
    _drop_hidden(tree)
    traf_html, meta = _trafilatura(tree, url)
    readable = _readability(tree)
    if traf_html is None and readable is None:
        raise ExtractError("no readable text found on the page")
    article = _merge(readable, traf_html)
    drop_furniture(article)
    restore_figures(tree, article)
    restore_lead(tree, article)
    title = plain_text(meta.get("title") or "") or None
    html = _finish(article, title, url)
    text = plain_text(html)
    words = len(text.split())
    if words == 0:
        raise ExtractError("no readable text found on the page")
    return {
        "title": title,
        "author": plain_text(meta.get("author") or "") or None,
        "published": meta.get("date") or None,
        "site": plain_text(meta.get("sitename") or "") or None,
        "html": html,
        "text": text,
        "words": words,
    }


def clean_file(path: str | Path, url: str | None = None) -> dict[str, Any]:
    """Clean a saved HTML file exactly as a fetched page is cleaned (for `reader clean`).
    Links resolve against url, or against the file itself."""
    path = Path(path)
    body = path.read_bytes()
    return clean_page(body, url or path.resolve().as_uri(), None)


def _decode(body: bytes, charset: str | None) -> str:
    if charset:
        try:
            return body.decode(charset, errors="replace")
        except LookupError:
            pass  # an unknown charset name: detect it from the bytes instead
    from trafilatura.utils import decode_file

    decoded = decode_file(body)
    return decoded if isinstance(decoded, str) else decoded.decode("utf-8", errors="replace")


def _parse(markup: str) -> etree._Element | None:
    """The page parsed once, for both extractors (each works on its own copy)."""
    from trafilatura.utils import load_html

    try:
        return load_html(markup)
    except Exception:  # lxml refusing the markup outright
        return None


_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)


def _drop_hidden(tree: etree._Element) -> None:
    """Remove what the page never shows, before either extractor reads it: trafilatura
    would otherwise take a hidden menu, a collapsed "more stories" box or a second copy of
    the text as part of the article. A page that hides most of itself until its scripts
    run (a hidden body or app wrapper, most of its text) keeps that part: it is the page."""
    hidden = tree.xpath("//*[@hidden] | //*[@aria-hidden='true'][not(.//p)]")
    hidden += [elem for elem in tree.xpath("//*[@style]") if _HIDDEN_STYLE.search(elem.get("style") or "")]
    if not hidden:
        return
    total = len(tree.text_content())
    for elem in hidden:
        if elem.getparent() is None or elem.tag in ("html", "body") or len(elem.text_content()) > total * 3 / 4:
            continue
        elem.drop_tree()


def _trafilatura(tree: etree._Element, url: str) -> tuple[str | None, dict[str, Any]]:
    """trafilatura's article as HTML, and the page's title, author, date and site name.

    This is what `trafilatura.extract_with_metadata` returns, less two costs that buy us
    nothing: the content fingerprint it computes for every non-text output, and the
    categories, tags, licence and the like that its metadata pass also looks for."""
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


def _metadata(tree: etree._Element, url: str, date_params: dict[str, Any]) -> dict[str, Any]:
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


def _readability(tree: etree._Element) -> etree._Element | None:
    try:
        summary = _Readability(tree).summary(html_partial=True)
        root = lxml.html.fragment_fromstring(summary, create_parent="div")
    except Exception:  # readability raises on pages it cannot parse; trafilatura may still cope
        return None
    return _tidy_readable(root)


def _tidy_readable(root: etree._Element) -> etree._Element | None:
    """readability's article made ready for the vote; None when it holds no text."""
    drop_controls(root)
    for frame in root.iter("iframe"):
        # readability writes "VIDEO" into a video's frame so that its serializer keeps the
        # element; a browser never shows a frame's text, so it is not the page's
        frame.text = None
    return root if text_of(root).strip() else None


def _readability_class() -> type:
    from readability import Document

    class Readability(Document):
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
            linked = sum(_clean_length(link.text_content() or "") for link in elem.findall(".//a"))
            return float(linked) / max(_clean_length(elem.text_content() or ""), 1)

        def remove_unlikely_candidates(self) -> None:
            # readability's own, but a link is never taken out: its class or id names how it
            # behaves ("popup": a note shown on click), not a sidebar, and taking it out cuts
            # words out of the sentence around it. Readability.js spares links the same way.
            from readability.readability import REGEXES

            for elem in self.html.findall(".//*"):
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


_LONG_SPACE = re.compile(r"\s{255,}")
_NEWLINE_SPACE = re.compile(r"\s*\n\s*")
_TAB_SPACE = re.compile(r"\t|[ \t]{2,}")


def _clean_length(text: str) -> int:
    """len(readability.readability.clean(text)), which runs three regex substitutions on
    every text it measures. Text with no line break, tab or double space (most link texts)
    comes out of them unchanged, so only its ends need trimming."""
    if "\n" in text or "\t" in text or "  " in text or (len(text) >= 255 and _LONG_SPACE.search(text)):
        text = _LONG_SPACE.sub(" " * 255, text)
        text = _NEWLINE_SPACE.sub("\n", text)
        text = _TAB_SPACE.sub(" ", text)
    return len(text.strip())


def _Readability(tree: etree._Element) -> Any:
    global _READABILITY
    if _READABILITY is None:
        _READABILITY = _readability_class()
    return _READABILITY(tree)


_READABILITY: type | None = None


def _merge(readable: etree._Element | None, traf_html: str | None) -> etree._Element:
    traf_root = _parse_trafilatura(traf_html) if traf_html else None
    if readable is None:
        assert traf_root is not None
        return traf_root
    if traf_root is None:
        return readable
    traf_opinion = Opinion(words_of(text_of(traf_root)))
    read_units = list(voting_units(readable))
    blocks = [Block(text_of(u)) for u in read_units]
    texts = [b.text for b in blocks]
    agreed = [traf_opinion.holds(b) for b in blocks]
    if not any(a and b.words for a, b in zip(agreed, blocks)):
        return traf_root
    # an empty block (a picture, a rule) agrees with anything, so it cannot mark where the
    # article ends: the related-stories box often has one below it
    last = max(i for i, a in enumerate(agreed) if a and blocks[i].words)
    kept: list[tuple[etree._Element, Block]] = []
    for i, (unit, block, agree) in enumerate(zip(read_units[:last + 1], blocks, agreed)):
        # an inset the page marks as beside the text ("read more" teasers) is not the text,
        # wherever it sits
        if agree or (not inset(unit) and (_reads_as_text(unit, block.text) or _between_agreed(i, blocks, agreed)
                                          or heads_section(i, read_units, texts, agreed))):
            kept.append((unit, block))
        else:
            drop(unit)
    kept += _trailing(read_units[last + 1:], blocks[last + 1:])
    _put_back(kept, list(voting_units(traf_root)))
    return readable


def _trailing(units: list[etree._Element], blocks: list[Block]) -> list[tuple[etree._Element, Block]]:
    """The blocks only readability found after the last agreed one: long ones are kept, until
    two short ones in a row ("Like this:", "Related", a date, a "Filed under" line) show that
    the article is over and its furniture has begun; whatever follows them goes too, however
    long (teasers of other stories)."""
    kept: list[tuple[etree._Element, Block]] = []
    short_run = 0
    for unit, block in zip(units, blocks):
        if short_run < TRAILING_END_RUN and word_count(block.text) > TRAILING_MIN_WORDS:
            kept.append((unit, block))
            short_run = 0
            continue
        if block.words:
            short_run += 1
        drop(unit)
    return kept


def _between_agreed(i: int, blocks: list[Block], agreed: list[bool]) -> bool:
    """Whether block i sits between two agreed paragraphs of prose. A related-stories box or
    a row of tags comes in a run of its own, at an edge of the text or beside other
    furniture; a single short line in the middle of the running text ("Related: ...", a
    one-line aside) is part of how the author wrote it."""
    def prose(j: int) -> bool:
        return 0 <= j < len(blocks) and agreed[j] and word_count(blocks[j].text) >= SANDWICH_PROSE_WORDS

    return bool(blocks[i].words) and prose(i - 1) and prose(i + 1)


def _reads_as_text(unit: etree._Element, text: str) -> bool:
    """Whether a block only readability kept reads as the article's text rather than the
    furniture inside its container: a short block mostly of links (related stories, tags)
    or of a word or two (labels, "Share", a date) is furniture."""
    if unit.tag == "figure" or unit.find(".//img") is not None:
        return True  # a picture and its caption: few words, but the article's own
    words = word_count(text)
    if words < LINKY_MAX_WORDS:
        linked = linked_length(unit)
        if linked > LINKY * len(text):
            return False
    return words >= (SHORT_WORDS if is_heading(unit) else SHORT_TEXT_WORDS)


def _put_back(kept: list[tuple[etree._Element, Block]], traf_units: list[etree._Element]) -> None:
    """Insert the blocks only trafilatura found, each after the readability block that
    holds the trafilatura block before it."""
    if not kept:
        return
    read_opinion = Opinion([word for _, block in kept for word in block.words])
    traf_units = without_teasers(traf_units, lambda unit: read_opinion.holds(Block(text_of(unit))))
    first_triple: dict[tuple[str, ...], etree._Element] = {}
    for unit, block in kept:
        for triple in block.triples:
            first_triple.setdefault(triple, unit)
    anchor: etree._Element | None = None
    items: etree._Element | None = None  # the list put back last, which the next items join
    for unit in traf_units:
        block = Block(text_of(unit))
        if read_opinion.holds(block):
            # in reading order: a set's order changes with each process's hash seed, and
            # then so would where the next block is put back
            for triple in triples_in_order(block.words):
                if triple in first_triple:
                    anchor = first_triple[triple]
                    break
            continue
        if word_count(block.text) < PUT_BACK_MIN_WORDS:
            continue  # a label, a date, a lone link: furniture far more often than text
        if card(unit):
            continue  # a gallery's slide, a teaser of another story
        extra = copy.deepcopy(unit)
        extra.tail = None
        if extra.tag == "li":  # an item out of its list would lose its bullet or number
            parent = unit.getparent()
            kind = parent.tag if parent is not None and parent.tag in ("ul", "ol") else "ul"
            if anchor is items and items is not None and items.tag == kind:
                items.append(extra)  # the next item of the list just put back: one list
                continue
            items = etree.Element(kind)
            items.append(extra)
            extra = items
        if anchor is None:
            kept[0][0].addprevious(extra)
        else:
            anchor.addnext(extra)
        anchor = extra


def _parse_trafilatura(traf_html: str) -> etree._Element | None:
    try:
        root = lxml.html.fromstring(traf_html)
    except (etree.ParserError, ValueError):
        return None
    body = root.find("body")
    root = body if body is not None else root
    root.tag = "div"
    # trafilatura writes inline code as <pre> (splitting the sentence) and a code block
    # as <pre><pre>; put both back the way pages write them.
    for pre in list(root.iter("pre")):
        parent = pre.getparent()
        if parent is not None and parent.tag == "pre":
            pre.tag = "code"
        elif parent is not None and parent.tag in {"p", "li", "td", "th", "blockquote", "h1", "h2", "h3", "h4"} \
                and "\n" not in (pre.text_content() or ""):
            pre.tag = "code"
    return root if text_of(root).strip() else None


def _finish(article: etree._Element, title: str | None, url: str) -> str:
    """The article's HTML for the reader view: its own title heading removed (the view
    prints the title), headings shifted to start at h2, sanitized."""
    _flatten_math(article)
    headings = [el for el in article.iter() if is_heading(el)]
    units = list(voting_units(article))
    if headings and units and units[0] is headings[0]:
        if _is_title(headings[0], title):
            drop(headings.pop(0))
    if headings:
        shift = 2 - min(int(h.tag[1]) for h in headings)
        for h in headings:
            h.tag = f"h{min(6, max(2, int(h.tag[1]) + shift))}"
    html = etree.tostring(article, encoding="unicode", method="html")
    return clean_html(html, base_url=url)


def _flatten_math(article: etree._Element) -> None:
    """MathML becomes its plain text: the sanitizer drops foreign markup whole, and
    "a ≠ 0" reads better than a hole in the sentence."""
    for math in list(article.iter("math")):
        text = math.get("alttext") or " ".join(" ".join(math.itertext()).split())
        span = etree.Element("span")
        span.text = text
        span.tail = math.tail
        parent = math.getparent()
        if parent is not None:
            parent.replace(math, span)


def _is_title(heading: etree._Element, title: str | None) -> bool:
    """Whether the article's leading heading is its title, which the view prints already.
    Most of its words must be the title's (a page title often adds the site's name); a
    first heading that says something else ("Lorem", a section's name, a kicker) is text
    the reader would otherwise never see. With no title known, an h1 is taken for it."""
    if title is None:
        return bool(heading.tag == "h1")
    mine = WORD.findall(text_of(heading).lower())
    theirs = set(WORD.findall(title.lower()))
    return bool(mine) and sum(word in theirs for word in mine) >= TITLE_WORDS * len(mine)


def as_json_line(path: str, result: dict[str, Any] | None, error: str | None = None) -> str:
    """One line of `reader clean --json`. ASCII only: raw U+2028, U+0085 and the like in
    page text would count as line breaks to readers that split on every Unicode one."""
    if error is not None:
        return json.dumps({"file": path, "error": error})
    assert result is not None
    keys = ("title", "author", "published", "site", "text", "html", "words")
    return json.dumps({"file": path, **{k: result.get(k) for k in keys}})
