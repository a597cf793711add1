"""No paragraph twice: the last step before the article's HTML is written.

The steps before it each take care not to say a block twice (the vote puts back only what
the article does not hold, the lead and the figures are put back only when missing, a
page's copy for small screens is taken out before either extractor reads it). This is the
guard behind them, for what a page itself repeats inside the container readability picks:
a section set twice under two names, a call to action after every second paragraph, the
same caption under each slide of a gallery, a "Continue reading" after every section.

A paragraph (a block of text with no block inside it; a table's cells and the captions
are not paragraphs) of a few words at least (blocks.REPEAT_MIN_WORDS) is said once in
each part of the page: a copy under another parent goes unless trafilatura's text (one
copy of the article) holds it as often. Beside its first copy, under the same parent, it
stays when it is a sentence (a refrain, a template's filler text) or as often as
trafilatura says it (two footnotes citing the same page); there, a line that is no
sentence, said after every section, is the page's furniture.
A caption said again under the next picture, with no text between them, goes, its
picture stays: the slides of a gallery each carry the gallery's caption. A heading said
again with no paragraph between its copies goes, whatever its length and trafilatura's
count: it heads nothing (a tab strip that sets the page's title under each tab). Paragraphs and
captions are compared by their words, in lower case.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from lxml import etree

from .blocks import BLOCKS, REPEAT_MIN_WORDS, drop, is_heading, text_of, voting_units, words_of
from .standfirst import SENTENCE_END

_NOT_PARAGRAPHS = {"table", "figcaption", "br", "hr"}


def paragraph_counts(root: etree._Element) -> Counter[str]:
    """How often each paragraph (its words, in lower case) occurs in root."""
    return Counter(_key(block) for block in paragraphs(root))


def drop_repeats(article: etree._Element, source: Counter[str]) -> None:
    """Remove from article the copies of its paragraphs it says in more than one place or,
    beside each other, more often than source (trafilatura's `paragraph_counts`) does unless
    they are sentences; and the captions a gallery's slides repeat."""
    kept: dict[str, list[etree._Element | None]] = {}  # each paragraph's copies so far: their parents
    previous = ""  # the words of the paragraph before, as kept
    for block in list(paragraphs(article)):
        text = "".join(block.itertext())
        key = " ".join(words_of(text))
        if is_heading(block) and key and key == previous:
            drop(block)  # a heading said again with no text between: it heads nothing new
            continue
        if key:
            previous = key
        if key.count(" ") + 1 < REPEAT_MIN_WORDS:
            continue
        parents = kept.setdefault(key, [])
        parent = block.getparent()
        # a copy in another part of the page is the page's (a second copy of the body, a call to
        # action set twice) unless trafilatura's one copy of the article says it as often; said
        # again beside its first copy, in the same run of text, it is the author's when it is a
        # sentence (a refrain, a template's filler text) or when trafilatura says it as often
        # (two notes citing one book), and otherwise a line the page sets after every section
        # ("Continue reading the main story")
        if parents and ((parent not in parents and len(parents) >= max(1, source[key]))
                        or (not SENTENCE_END.search(text) and parents.count(parent) >= source[key])):
            drop(block)
        else:
            parents.append(parent)
    caption: str | None = None  # the last figure's caption, until text comes between
    for unit in list(voting_units(article)):
        if unit.tag == "figure" or unit.find(".//img") is not None:
            caption = _slide(unit, caption)
        elif text_of(unit):
            caption = None


def paragraphs(article: etree._Element) -> Iterator[etree._Element]:
    """The article's paragraphs, in reading order: the blocks with text and no block inside
    them, a caption and a table's cells left out (a table repeats its labels, row after row)."""
    elements = [el for el in article.iter() if isinstance(el.tag, str)]
    inner: set[etree._Element] = set()  # the elements holding a block
    for el in reversed(elements):
        if el.tag in BLOCKS and el.tag != "br":
            parent = el.getparent()
            while parent is not None and parent not in inner:
                inner.add(parent)
                parent = parent.getparent()
    outside: set[etree._Element] = set()  # inside a table or a caption
    for el in elements:
        parent = el.getparent()
        if el.tag in _NOT_PARAGRAPHS or (parent is not None and parent in outside):
            outside.add(el)
        elif el.tag in BLOCKS and el not in inner:
            yield el


def _key(block: etree._Element) -> str:
    """A paragraph's words, in lower case (a paragraph holds no block: its text is one run)."""
    return " ".join(words_of("".join(block.itertext())))


def _slide(unit: etree._Element, previous: str | None) -> str | None:
    """Drop the caption of a picture (unit) when it says what the picture right before it
    said: a gallery's slides, each set with the gallery's caption. Returns the caption that
    the next picture is compared with."""
    for figcaption in list(unit.iter("figcaption")):
        key = " ".join(words_of(text_of(figcaption)))
        if key and key == previous:
            drop(figcaption)
        elif key:
            previous = key
    return previous
