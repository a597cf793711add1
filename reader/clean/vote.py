"""The vote: readability's container is the base, trafilatura's text the second opinion,
and each block of readability's copy is kept or dropped by what trafilatura found (the
rules are in pipeline.py's docstring). Blocks only trafilatura found are put back where
it had them.

Only lxml trees in and out: the two extractors are called in upstream.py, and what the
vote leaves is tidied by furniture.py, figures.py and standfirst.py.
"""

from __future__ import annotations

import copy

import lxml.html
from lxml import etree

from .blocks import (REPEAT_MIN_WORDS, Block, Opinion, drop, is_heading, linked_length, pieces, text_of,
                     triples_in_order, voting_units, words_of)
from .boilerplate import card, heads_section, inset, without_teasers, word_count
from .upstream import html_parser

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


def merge(readable: etree._Element | None, traf_root: etree._Element | None) -> etree._Element:
    """readability's article with the vote taken on its blocks, and trafilatura's blocks
    (`parse_trafilatura`'s tree) put back; trafilatura's article alone when readability
    found none, or when the two agree on no block with words (readability picked the wrong
    container)."""
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
    _put_back(readable, kept, list(voting_units(traf_root)))
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


def _put_back(readable: etree._Element, kept: list[tuple[etree._Element, Block]],
              traf_units: list[etree._Element]) -> None:
    """Insert the blocks only trafilatura found, each after the readability block that
    holds the trafilatura block before it. "Only trafilatura found" is asked of all the
    text readability's article still holds, not just of the blocks voted on: loose text in
    a <div> beside them is not a voting unit but is shown all the same. Nor is a block put
    back that repeats a paragraph the article holds (trafilatura's table of a page whose
    cells readability kept as paragraphs, a list item with its sub-list): it would say
    that paragraph twice."""
    if not kept:
        return
    read_opinion = Opinion(words_of(text_of(readable)))
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
        if _repeats(unit, read_opinion):
            continue
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


def _repeats(unit: etree._Element, held: Opinion) -> bool:
    """Whether a block holds a paragraph (a piece between block edges, of a few words at
    least) that the article already holds whole."""
    for piece in pieces(unit):
        words = words_of(piece)
        if len(words) >= REPEAT_MIN_WORDS and f" {' '.join(words)} " in held.flat:
            return True
    return False


def parse_trafilatura(traf_html: str) -> etree._Element | None:
    """trafilatura's HTML as a tree, its code written back the way pages write it; None
    when it holds no text."""
    try:
        root = lxml.html.fromstring(traf_html, parser=html_parser())
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
