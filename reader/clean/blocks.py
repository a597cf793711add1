"""The blocks an article is made of, as the cleaner and its later steps (furniture.py,
standfirst.py) see them: the voting units of a tree, a unit's text with its block edges
kept, its words and word triples, one extractor's text asked whether it holds a block,
and removing a unit without losing the text after it.

One module for all of them, so the steps after the vote read blocks exactly as the vote
did and none of them imports the cleaner back.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from lxml import etree


# Share of a block's word triples the other extractor must also have for the block to count
# as agreed.
AGREE = 0.5

# A paragraph of this many words or more is never said twice where the page says it once
# (shorter ones, "Read more", a price, a table's "Yes", recur in any text).
REPEAT_MIN_WORDS = 4

# The units votes are taken on: the outermost of these elements. A table, a figure or a
# quote is voted on whole, so it is never torn apart.
UNITS = {"p", "h1", "h2", "h3", "h4", "h5", "h6", "li", "pre", "blockquote", "table", "figure",
         "dt", "dd", "ul", "ol", "dl", "figcaption"}
LISTS = {"ul", "ol", "dl"}
BLOCKS = UNITS | {"div", "section", "article", "main", "header", "footer", "aside", "body", "html",
                  "tr", "td", "th", "thead", "tbody", "details", "summary", "hr", "br", "form", "nav"}
WORD = re.compile(r"\w+", re.UNICODE)
HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})


def is_heading(element: etree._Element) -> bool:
    return element.tag in HEADINGS  # a comment's tag is a function, never in the set


def linked_length(element: etree._Element) -> int:
    """Characters of the element's text inside links (a block's link density's numerator)."""
    return sum(len(text_of(a)) for a in element.iter("a"))


def text_of(element: etree._Element) -> str:
    """Text of an element with a space at every block edge, so blocks never run together."""
    return " ".join(_text(element, " ").split())


def pieces(element: etree._Element) -> list[str]:
    """The element's text cut at every block edge: its paragraphs, a table's cells, a list's
    items, each with its spaces folded."""
    # NUL marks the edges: XML text never holds one, while a line break is only a space
    return [folded for piece in _text(element, "\0").split("\0") if (folded := " ".join(piece.split()))]


def _text(element: etree._Element, edge: str) -> str:
    parts: list[str] = []

    def walk(el: etree._Element) -> None:
        block = isinstance(el.tag, str) and el.tag in BLOCKS
        if isinstance(el.tag, str):
            if block:
                parts.append(edge)
            if el.text:
                parts.append(el.text)
            for child in el:
                walk(child)
            if block:
                parts.append(edge)
        if el.tail:
            parts.append(el.tail)

    parts.append(element.text or "")
    for child in element:
        walk(child)
    return "".join(parts)


def words_of(text: str) -> list[str]:
    return WORD.findall(text.lower())


def triples(words: list[str]) -> set[tuple[str, ...]]:
    if len(words) < 3:
        return {tuple(words)} if words else set()
    return set(zip(words, words[1:], words[2:]))


def triples_in_order(words: list[str]) -> list[tuple[str, ...]]:
    """The triples of `triples`, each where it first occurs in the text."""
    if len(words) < 3:
        return [tuple(words)] if words else []
    return list(zip(words, words[1:], words[2:]))


class Block:
    """A unit's text, its words and word triples, worked out once: the vote asks about
    each block more than once."""

    __slots__ = ("text", "words", "triples")

    def __init__(self, text: str):
        self.text = text
        self.words = words_of(text)
        self.triples = triples(self.words)


class Opinion:
    """One extractor's text, to ask whether it also holds a block."""

    def __init__(self, words: list[str]):
        self.triples = triples(words)
        self.flat = " " + " ".join(words) + " "

    def holds(self, block: Block) -> bool:
        if not block.words:
            return True  # an image or a rule: no words to disagree on
        if len(block.words) < 3:
            return f" {' '.join(block.words)} " in self.flat
        mine = block.triples
        return len(mine & self.triples) >= AGREE * len(mine)


def voting_units(root: etree._Element) -> Iterator[etree._Element]:
    """The outermost voting units under root, in document order. A list is split into its
    items unless it is short enough to be one thought; a div holding loose text is a unit."""
    for child in root:
        if not isinstance(child.tag, str):
            continue
        if child.tag in LISTS:
            yield from (item for item in child if isinstance(item.tag, str))
        elif child.tag in UNITS:
            yield child
        elif any(isinstance(d.tag, str) and d.tag in UNITS for d in child.iterdescendants()):
            yield from voting_units(child)
        elif text_of(child).strip() and not _inside_sentence(child, root):
            yield child


def _inside_sentence(child: etree._Element, parent: etree._Element) -> bool:
    """Whether an element is a phrase of its parent's own running text (a link, a formula, an
    emphasis between loose words) rather than a block beside it: voting on it alone would
    tear the sentence apart, so it goes with the text around it."""
    if child.tag in BLOCKS:
        return False
    if parent.text and parent.text.strip():
        return True
    return any(sibling.tail and sibling.tail.strip() for sibling in parent)


def drop(element: etree._Element) -> None:
    """Remove an element but keep its tail text in place."""
    parent = element.getparent()
    if parent is None:
        return
    tail = element.tail
    if tail and tail.strip():
        previous = element.getprevious()
        if previous is not None:
            previous.tail = (previous.tail or "") + tail
        else:
            parent.text = (parent.text or "") + tail
    parent.remove(element)
    if parent.tag in LISTS and not len(parent):
        drop(parent)
