"""Site furniture that both extractors keep inside the article, taken out after their vote.

The vote in `cleaner` settles which blocks belong to the article's container. Some blocks
sit in that container on most sites and still are not the article, and both extractors
agree on them, so no vote can drop them. They are told apart by how they are built:

- a cross-reference: a short lead ("Read also:", "See also »") followed by a link to
  another article, the link being most of the block;
- a copyright or rights line (©, "all rights reserved"), short, outside a figure;
- another story's teaser: a text cut off with an ellipsis and then a link to read on
  ("... Wissenschaftler befürchten, dass die Kompl ... mehr", "Yet, the... more"): an
  article's own paragraph is never cut short to point elsewhere. Only those after the
  article's last paragraph go (a page of teasers, or one with its own text below them,
  keeps them: they may be what it is about), with the list they came in when nothing but
  its links is left (a category label above each);
- a heading that closes the article: a heading introduces what follows it, so one with
  nothing after it (once the furniture under it is gone) is the title of a box that was
  left out: "Related", "Comments", "Read more".
"""

from __future__ import annotations

import re

from lxml import etree

from .blocks import WORD, drop, is_heading, text_of, voting_units

# A cross-reference's lead: at most this many words before its link, ending in a colon
# or a pointing mark.
XREF_LEAD_WORDS = 4
# ... and its links make at least this share of the block's text, which is short.
XREF_LINKED = 0.5
XREF_MAX_WORDS = 40
# A rights line is shorter than this.
RIGHTS_MAX_WORDS = 40
# Closing headings are dropped only from an article with a block this long.
CLOSING_AFTER_WORDS = 20

# A teaser's link to the rest says at most this many words ("mehr", "read more", "weiter...").
TEASER_LINK_WORDS = 4
# Only the teasers after the article's last paragraph of its own, one of this many words,
# go: teasers with more text after them are what the page is made of (a press service's
# list of releases, its about box below them).
TEASER_PROSE_WORDS = 25

_LEAD_END = re.compile(r"[:»›>→]\s*$")
# A text cut off: an ellipsis at its end, as three dots, one character or in brackets.
_CUT_OFF = re.compile(r"(?:\.\.\.|…|\[…\]|\[\.\.\.\])$")
_RIGHTS = re.compile(r"©|\(c\)\s*\d{4}|\ball rights reserved\b", re.I)


def drop_furniture(article: etree._Element) -> None:
    """Remove the cross-references, rights lines and closing headings from the article."""
    units = list(voting_units(article))
    if len(units) < 2:
        return  # a page of one block is all article, whatever it looks like
    kept: list[etree._Element] = []
    for unit in units:
        if unit.tag in ("figure", "table") or unit.find(".//img") is not None:
            kept.append(unit)
            continue
        text = text_of(unit)
        words = len(WORD.findall(text))
        if _cross_reference(unit, text, words) or (words < RIGHTS_MAX_WORDS and _RIGHTS.search(text)):
            drop(unit)
        else:
            kept.append(unit)
    kept = _drop_closing_teasers(kept, article)
    _drop_closing_headings(kept)


def _drop_closing_teasers(units: list[etree._Element], article: etree._Element) -> list[etree._Element]:
    """Drop the teasers after the article's last paragraph of its own; the units left."""
    teasers = [_teaser(unit) for unit in units]
    prose = [i for i, unit in enumerate(units)
             if not teasers[i] and len(WORD.findall(text_of(unit))) >= TEASER_PROSE_WORDS]
    if not prose:
        return units  # a page of teasers: they are its content
    closing = [unit for i, unit in enumerate(units) if i > prose[-1] and teasers[i]]
    for unit in closing:
        _drop_teaser(unit, article)
    return [unit for unit in units if unit not in closing]


def _teaser(unit: etree._Element) -> bool:
    """Whether unit is another story's teaser: its text ends with a short link, and what
    comes before the link ends with an ellipsis."""
    links = [a for a in unit.iter("a") if text_of(a).strip()]
    if not links:
        return False
    text, link = text_of(unit).strip(), text_of(links[-1]).strip()
    if not text.endswith(link) or len(WORD.findall(link)) > TEASER_LINK_WORDS:
        return False
    before = text[: len(text) - len(link)].rstrip()
    return bool(WORD.search(before)) and bool(_CUT_OFF.search(before))


def _drop_teaser(unit: etree._Element, article: etree._Element) -> None:
    """Drop a teaser, and the box around it when nothing but links is left in it."""
    box = unit.getparent()
    drop(unit)
    while box is not None and box is not article and box.getparent() is not None:
        text = text_of(box)
        if WORD.search(text) and sum(len(text_of(a)) for a in box.iter("a")) < len(text.strip()):
            break
        up = box.getparent()
        drop(box)
        box = up


def _cross_reference(unit: etree._Element, text: str, words: int) -> bool:
    if words >= XREF_MAX_WORDS or unit.find(".//a") is None:
        return False
    links = [a for a in unit.iter("a") if text_of(a).strip()]
    if not links:
        return False
    linked = sum(len(text_of(a)) for a in links)
    if linked < XREF_LINKED * len(text):
        return False
    lead = _lead(unit, links[0])
    # a lead with a number is a date or a count: a dated list of links is the article's
    return len(WORD.findall(lead)) <= XREF_LEAD_WORDS and bool(WORD.search(lead)) and \
        not any(c.isdigit() for c in lead) and bool(_LEAD_END.search(lead))


def _lead(unit: etree._Element, first_link: etree._Element) -> str:
    """The text of unit before its first link."""
    parts: list[str] = []

    def walk(el: etree._Element) -> bool:
        if el is first_link:
            return True
        if isinstance(el.tag, str):  # not a comment's text
            parts.append(el.text or "")
        for child in el:
            if walk(child):
                return True
            parts.append(child.tail or "")
        return False

    walk(unit)
    return " ".join(" ".join(parts).split())


def _drop_closing_headings(units: list[etree._Element]) -> None:
    """Drop the headings that end the article (units, in reading order)."""
    # Only in an article that has running text before them: on a page that is a heading
    # and a picture, the heading is the text.
    if not any(len(WORD.findall(text_of(u))) >= CLOSING_AFTER_WORDS for u in units[:-1]):
        return
    units = list(units)
    while len(units) > 1:
        last = units[-1]
        if is_heading(last) and last.find(".//img") is None:
            drop(last)
            units.pop()
        elif not WORD.search(text_of(last)) and last.find(".//img") is None and last.tag != "hr":
            units.pop()  # an empty block after the heading does not count as its section
        else:
            break
