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
the body. Then `tails.drop_tails` takes out the bylines, date stamps and calls to follow
or share that frame the body at its edges (before its first paragraph of prose or after its
last), known by the page's own marks (class, rel, itemprop) or by a short whole line that
opens as they do.

Last, the chooser (`choose.py`) decides per page between three whole candidates: the vote's
article, trafilatura's alone and readability's alone. Rules tuned block by block fitted the
pages they were tuned on and carried over poorly; yet on most pages where the vote loses,
one extractor alone had it right as a whole (the vote kept a second article readability's
container held, or put back another story's block). The chooser reads only the three
texts the pipeline already has (no further extraction): each one's length, lines, share of
short lines, link density, repeated lines and punctuation, and how much of each one's
4-word shingles the others hold. Two small logistic regressions, fitted on both
development sets by benchmarks/choose_fit.py with k-fold cross-validation and checked for
transfer (fitted on one set, scored on the other), each say how likely its extractor
alone beats the vote; the vote stays unless one is confident. Its coefficients are
constants in `choose.py`, and `choose.ENABLED` turns it on: it is off, because on the
development sets no model gained without losing when fitted on one set and scored on the
other (`choose.py` has the numbers), so a page's article is the vote's.

Before either reads the page, what the page hides (hidden, display: none, visibility:
hidden) is taken out of the one shared parse, unless it is most of the page.

The two extractors are called in `upstream.py` (every call into their internals is
there), and the vote is `vote.merge`; this module runs the steps in order.

Everything is a plain function of bytes so it runs in the worker processes of
`reader.pool.CpuPool`; `reader clean` calls the very same `clean_page`. Images stay as
`<img>` elements with absolute URLs, and the page's bytes are all this needs, so storing
images or re-cleaning a stored raw page can wrap this function later.
"""

from __future__ import annotations

import copy
import json
import re
from collections import Counter
from pathlib import Path
from typing import TypedDict

from lxml import etree

from ..errors import ExtractionFailed
from . import upstream
from .blocks import WORD, drop, is_heading, linked_length, pieces, text_of, voting_units
from .boilerplate import drop_controls
from .choose import CANDIDATES, Text, choose, choose_enabled, features
from .figures import as_figures, credits_into_captions, restore_figures
from .furniture import drop_furniture
from .parts import Figure, read_parts
from .partial import stops_short
from .repeats import drop_repeats, paragraph_counts
from .sanitize import clean_html, plain_text
from .standfirst import LEAD_CLASS, LEAD_MARK, restore_lead
from .tails import drop_tails
from .vote import merge, parse_trafilatura


class ExtractError(ExtractionFailed):
    """The page arrived but holds nothing we can show as an article."""


# Share of the leading heading's words that must be in the page's title for it to be the title.
TITLE_WORDS = 0.75


class CleanedPage(TypedDict):
    """What the cleaner makes of one page: the record the workers store, `reader clean`
    prints and the pool hands back across processes (a plain dict, so it pickles as one)."""

    title: str | None
    author: str | None
    published: str | None  # as the page's metadata says it (ISO 8601 when htmldate found it)
    site: str | None
    html: str  # sanitized, headings from h2, the title heading removed; the lead as <p class="lead">
    text: str  # the body's plain text, a blank line between blocks: no lead, no captions
    words: int  # the body's (reading time, search)
    lead: str | None  # the dek under the title, as the HTML has it
    figures: list[Figure]  # each picture and its caption, in order
    partial: str | None  # why the text may be only the article's start (partial.py); None: whole


def clean_page(body: bytes, url: str, charset: str | None) -> CleanedPage:
    """Clean one page. Pure CPU; raises ExtractError when there is no article."""
    meta, candidates, tree = _candidates(body, url, charset, alone=choose_enabled())
    name = "vote"
    if len(candidates) > 1:
        name = choose(features(*(Text.of(candidates.get(c)) for c in CANDIDATES)))
    return _page(meta, candidates[name], url, tree)


def clean_candidates(body: bytes, url: str,
                     charset: str | None) -> tuple[dict[str, CleanedPage], dict[str, tuple[list[str], int]]]:
    """Each whole candidate cleaned (the vote's, and trafilatura's and readability's alone when
    both found an article) and what the chooser reads of each (its lines and the characters
    inside its links, `choose.Text`): what benchmarks/choose_fit.py fits the chooser on.
    Raises ExtractError as clean_page does."""
    meta, candidates, tree = _candidates(body, url, charset, alone=True)
    read = {}
    for name, root in candidates.items():
        text = Text.of(root)
        read[name] = (text.lines, linked_length(root))
    cleaned = {}
    for name, root in candidates.items():
        try:
            cleaned[name] = _page(meta, root, url, tree)
        except ExtractError:
            if name == "vote":
                raise
    return cleaned, read


def _candidates(body: bytes, url: str, charset: str | None,
                alone: bool) -> tuple[upstream.PageMeta, dict[str, etree._Element], etree._Element]:
    """The page's metadata, its article's candidates (the vote's, and with alone, when both
    extractors found an article, each extractor's article alone) and the page's tree as the
    cleaning left it (what clean/partial.py reads for a paywall's marks)."""
    markup = upstream.decode(body, charset)
    if not markup.strip():
        raise ExtractError("no readable text found on the page")
    tree = upstream.parse(markup)
    if tree is None:
        raise ExtractError("no readable text found on the page")
    _drop_hidden(tree)
    _drop_screen_copies(tree)
    traf_html, meta = upstream.trafilatura_article(tree, url)
    readable = _tidy_readable(upstream.readability_article(tree))
    traf_root = parse_trafilatura(traf_html) if traf_html else None
    if traf_root is None and readable is None:
        raise ExtractError("no readable text found on the page")
    candidates: dict[str, etree._Element] = {}
    if alone and traf_root is not None and readable is not None:
        # the vote edits both trees; the candidates alone are their copies as found
        candidates["trafilatura"] = copy.deepcopy(traf_root)
        candidates["readability"] = copy.deepcopy(readable)
    # how often trafilatura's one copy of the article says each paragraph, before the vote
    # borrows its blocks
    source = paragraph_counts(traf_root) if traf_root is not None else Counter[str]()
    article = merge(readable, traf_root)
    drop_furniture(article)
    as_figures(article)
    restore_figures(tree, article)
    restore_lead(tree, article)
    drop_repeats(article, source)
    drop_tails(article)
    candidates["vote"] = article
    return meta, candidates, tree


def _page(meta: upstream.PageMeta, article: etree._Element, url: str, tree: etree._Element) -> CleanedPage:
    """The record of one candidate article (`tree`: the page, for the marks that it stops short)."""
    title = plain_text(meta.get("title") or "") or None
    html = _finish(article, title, url)
    parts = read_parts(html)
    # a page whose only words are its dek or its captions (a photo and what it shows) is read for them
    text = parts["body"] if WORD.search(parts["body"]) else plain_text(html)
    words = len(text.split())
    if words == 0:
        raise ExtractError("no readable text found on the page")
    return CleanedPage(
        title=title,
        author=plain_text(meta.get("author") or "") or None,
        published=meta.get("date") or None,
        site=plain_text(meta.get("sitename") or "") or None,
        html=html,
        text=text,
        words=words,
        lead=parts["lead"],
        figures=parts["figures"],
        partial=stops_short(tree, text, words),
    )


def clean_file(path: str | Path, url: str | None = None) -> CleanedPage:
    """Clean a saved HTML file exactly as a fetched page is cleaned (for `reader clean`).
    Links resolve against url, or against the file itself."""
    path = Path(path)
    body = path.read_bytes()
    return clean_page(body, url or path.resolve().as_uri(), None)


_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)


def _drop_hidden(tree: etree._Element) -> None:
    """Remove what the page never shows, before either extractor reads it: trafilatura
    would otherwise take a hidden menu, a collapsed "more stories" box or a second copy of
    the text as part of the article. A page that hides most of itself until its scripts
    run (a hidden body or app wrapper, most of its text) keeps that part: it is the page."""
    hidden = tree.xpath("//*[@hidden] | //*[@aria-hidden='true']")
    hidden += [elem for elem in tree.xpath("//*[@style]") if _HIDDEN_STYLE.search(elem.get("style") or "")]
    if not hidden:
        return
    total = len(tree.text_content())
    for elem in hidden:
        if elem.getparent() is None or elem.tag in ("html", "body") or len(elem.text_content()) > total * 3 / 4:
            continue
        elem.drop_tree()


# What a class or id says to show on small screens only: Bootstrap's visible-xs, hidden-md
# and d-md-none, Tailwind's md:hidden, Foundation's show-for-small-only, and a "mobile" copy
# (usp-mobile, tb--mobile, mobile-only; not nomobile, no-mobile or hide-mobile).
_SMALL_SCREEN = re.compile(
    r"visible-(?:xs|sm)(?:-\w+)?|hidden-(?:md|lg|xl)|d-(?:md|lg|xl)-none|(?:md|lg|xl):hidden"
    r"|show-for-small(?:-only)?|hide-for-(?:medium|large)(?:-up)?|(?:^|.*[-_])mobile(?:[-_].*|$)", re.I)
# ... and the elements that might say so, found in C by the parts of those marks (an id
# says "mobile" at most); `_for_small_screens` reads their marks.
_MAYBE_SMALL = ("//*[contains(@class, 'visible-') or contains(@class, 'hidden') or contains(@class, '-none')"
                " or contains(@class, '-for-') or contains(@class, 'mobile') or contains(@id, 'mobile')]")
_NOT_SMALL = re.compile(r"(?:^|[-_])(?:no|not|non|hide|hidden)[-_]mobile", re.I)
# A copy with less text than this (in letters, spaces left out) is not worth looking for
# twice, nor is a piece of it shorter than COPY_PIECE_CHARS ("Yes", a price, an icon's label).
SCREEN_COPY_MIN_CHARS = 20
COPY_PIECE_CHARS = 12
# ... and a copy is one when the page holds most of its text elsewhere (a phone's copy of a
# table words its labels its own way).
COPY_SHARE = 2 / 3


def _drop_screen_copies(tree: etree._Element) -> None:
    """Remove the copies a page carries for small screens of what it also shows on large ones
    (a product table, a header, a whole section set twice, one copy per screen size): a
    browser shows one of them, the extractors read both, and the article would say it all
    twice. Only a copy most of whose pieces of text (paragraphs, table cells) the page also
    holds elsewhere goes, however it lays them out (a wide table is often a list of small
    ones on a phone): a part marked for small screens with text of its own is the page's
    only copy of that text."""
    maybe = tree.xpath(_MAYBE_SMALL)
    marked = [el for el in maybe if el.tag not in ("html", "body") and _for_small_screens(el)]
    if not marked:
        return
    page = _squeezed(tree.text_content())
    gone: set[etree._Element] = set()
    taken: dict[str, int] = {}
    for el in marked:
        if any(a in gone for a in el.iterancestors()):
            continue
        if len(_squeezed(el.text_content())) < SCREEN_COPY_MIN_CHARS:
            continue
        parts = [part for part in map(_squeezed, pieces(el)) if len(part) >= COPY_PIECE_CHARS]
        copied = sum(len(part) for part in parts if page.count(part) - taken.get(part, 0) >= 2)
        if not parts or copied < COPY_SHARE * sum(map(len, parts)):
            continue
        for part in parts:
            taken[part] = taken.get(part, 0) + 1
        gone.add(el)
        el.drop_tree()


def _for_small_screens(el: etree._Element) -> bool:
    marks = f"{el.get('class') or ''} {el.get('id') or ''}".split()
    return any(_SMALL_SCREEN.fullmatch(mark) and not _NOT_SMALL.search(mark) for mark in marks)


def _squeezed(text: str) -> str:
    """Text without its spaces, folded in case: two copies of a block are laid out apart."""
    return "".join(text.split()).casefold()


def _tidy_readable(root: etree._Element | None) -> etree._Element | None:
    """readability's article made ready for the vote; None when it holds no text."""
    if root is None:
        return None
    drop_controls(root)
    for frame in root.iter("iframe"):
        # readability writes "VIDEO" into a video's frame so that its serializer keeps the
        # element; a browser never shows a frame's text, so it is not the page's
        frame.text = None
    return root if text_of(root).strip() else None


def _finish(article: etree._Element, title: str | None, url: str) -> str:
    """The article's HTML for the reader view: its own title heading removed (the view
    prints the title), headings shifted to start at h2, the lead marked, a picture's credit
    in its caption, sanitized."""
    _flatten_math(article)
    credits_into_captions(article)
    headings = [el for el in article.iter() if is_heading(el)]
    units = list(voting_units(article))
    if headings and units and units[0] is headings[0]:
        if _is_title(headings[0], title):
            drop(headings.pop(0))
    if headings:
        shift = 2 - min(int(h.tag[1]) for h in headings)
        for h in headings:
            h.tag = f"h{min(6, max(2, int(h.tag[1]) + shift))}"
    for el in article.iter():
        if not isinstance(el.tag, str):
            continue
        # the page's classes go (the sanitizer would drop them); the lead's mark becomes its class
        el.attrib.pop("class", None)
        if el.attrib.pop(LEAD_MARK, None) is not None:
            el.set("class", LEAD_CLASS)
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


def as_json_line(path: str, result: CleanedPage | None, error: str | None = None) -> str:
    """One line of `reader clean --json`. ASCII only: raw U+2028, U+0085 and the like in
    page text would count as line breaks to readers that split on every Unicode one."""
    if error is not None:
        return json.dumps({"file": path, "error": error})
    assert result is not None
    keys = ("title", "author", "published", "site", "lead", "text", "figures", "html", "words", "partial")
    return json.dumps({"file": path, **{k: result.get(k) for k in keys}})
