"""How long a block is, in any script, and which blocks only trafilatura found are slides
or teasers of other stories rather than this article's text.

Word counts: the vote's thresholds ("a label is under eight words", "a trailing block is
kept from twenty") are measured in words, and Chinese and Japanese are written without
spaces between words, so a whole sentence of them is one run of letters, one "word" to a
regular expression, and a paragraph reads as a label. A run of those scripts counts as one
word per two characters (the usual length of a word in both), so a block weighs about the
same in every script.

Cards and teasers: trafilatura reads the whole page and sometimes takes a box of other
stories as text: a photo gallery's slides, "more stories", "other columns". How the box is
built gives it away, whatever it says:

- a list whose items each carry a heading: a writer's list is a list of phrases or
  sentences; a list of titled items is a list of cards (slides, teasers), laid out by the
  site's templates;
- a heading that is mostly a link: a heading in the text titles the section under it, one
  that links elsewhere is another article's headline, and the blurb under it (up to the
  next heading or the next block readability has too) is that article's teaser.

Section headings: a heading of a word or two that only readability kept is a label more
often than not ("Advertisement", "Like this:"), but a section heading is short too. A
heading introduces what follows it: when the next element on the page is an agreed
paragraph of prose, it is that paragraph's section heading. The label of an ad slot or a
share box is followed by the box (empty, or dropped as furniture), not by the text.

Controls: a button, a drop-down or a text box says what the page does ("Play video",
"Preview yellow theme", a video player's caption settings), never what the article says.
readability keeps whatever text its container holds, controls included; they are taken out
of its copy before the vote.

Asides: a block the page itself marks as an aside (inside an <aside> element) is an inset
beside the running text: a teaser of a related story, a "read more" box. When only
readability kept it, trafilatura's reading of the page left it out too, and the page's own
markup says it is not the text.
"""

from __future__ import annotations

import re

from lxml import etree

from collections.abc import Callable

from .blocks import drop, is_heading, linked_length, text_of


# Han ideographs (with the extension A block and the compatibility ones), hiragana and katakana.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
CJK_CHARS_PER_WORD = 2
_TOKEN = re.compile(rf"[{_CJK}]{{1,{CJK_CHARS_PER_WORD}}}|[^\W{_CJK}]+", re.UNICODE)

# The agreed block a short heading introduces has at least this many words.
SECTION_PROSE_WORDS = 10

# A heading is a headline when more than this share of its text is linked.
LINKED_HEADING = 0.5

# A list is a list of cards when at least this share of its items (two at least) hold a heading.
CARD_ITEMS = 0.5



def word_count(text: str) -> int:
    """The number of words in text, counting a run of Chinese or Japanese by its length."""
    return len(_TOKEN.findall(text))


def card(unit: etree._Element) -> bool:
    """Whether a block only trafilatura found (unit, in trafilatura's tree) is an item of a
    list of cards."""
    return unit.tag == "li" and _card_list(unit.getparent())


def without_teasers(units: list[etree._Element], held: Callable[[etree._Element], bool]) -> list[etree._Element]:
    """trafilatura's units (in reading order) less the headlines of other articles that only
    it found and the blurbs under them; held(unit) says whether readability has the unit."""
    kept: list[etree._Element] = []
    teaser = False
    for unit in units:
        heading = is_heading(unit)
        if not (teaser or heading):
            kept.append(unit)  # the common case, decided without reading the block
        elif not text_of(unit):
            kept.append(unit)  # an empty block (a thumbnail's link) neither ends a teaser nor is one
        elif held(unit):
            teaser = False
            kept.append(unit)
        elif heading:
            teaser = _headline(unit)
            if not teaser:
                kept.append(unit)
    return kept


def _headline(heading: etree._Element) -> bool:
    text = text_of(heading)
    linked = linked_length(heading)
    return linked > LINKED_HEADING * len(text)


_CONTROLS = ("button", "select", "textarea")


def drop_controls(root: etree._Element) -> None:
    """Remove the page's controls (buttons, drop-downs, text boxes) from root, keeping the
    text that follows each."""
    for control in list(root.iter(*_CONTROLS)):
        drop(control)


def heads_section(i: int, units: list[etree._Element], texts: list[str], agreed: list[bool]) -> bool:
    """Whether units[i] (texts[i] its text, agreed[i] whether both extractors kept it) is a
    heading directly followed on the page by the agreed prose it introduces (a picture or a
    video between them is part of what it introduces)."""
    heading = units[i]
    if not is_heading(heading) or not texts[i]:
        return False
    j = i + 1
    while j < len(units) and _bare_media(units[j], texts[j]):
        j += 1
    if j >= len(units) or not agreed[j] or word_count(texts[j]) < SECTION_PROSE_WORDS:
        return False
    following = units[j]
    after = heading.getnext()  # nothing else in between: no empty box, no widget
    while after is not None and after is not following and _bare_media(after, text_of(after)) \
            and not any(el is following for el in after.iterdescendants()):
        after = after.getnext()
    return after is not None and (after is following or any(el is following for el in after.iterdescendants()))


_MEDIA = ("img", "picture", "video", "iframe")


def _bare_media(unit: etree._Element, text: str) -> bool:
    """Whether an element is a picture or a video with no words of its own."""
    if text.strip():
        return False
    return unit.tag in _MEDIA or any(el.tag in _MEDIA for el in unit.iterdescendants())


def inset(unit: etree._Element) -> bool:
    """Whether a block sits in an element the page marks as an aside, and holds no picture
    (a figure set beside the text is still the article's)."""
    if unit.tag == "figure" or unit.find(".//img") is not None:
        return False
    return unit.tag == "aside" or any(a.tag == "aside" for a in unit.iterancestors())


def _card_list(items: etree._Element | None) -> bool:
    if items is None:
        return False
    entries = [li for li in items if li.tag == "li"]
    if len(entries) < 2:
        return False
    titled = sum(1 for li in entries
                 if any(is_heading(d) for d in li.iterdescendants()))
    return titled >= CARD_ITEMS * len(entries)
