"""The article's lead paragraph (standfirst, teaser, abstract), put back above its body.

News and magazine pages set the title, then a sentence or two that sums the article up,
then the body. The lead usually sits in the article's header beside the title, not in the
container that holds the body, so both extractors, choosing that container, leave it out.
It is found by reading the page from the title heading to the first block of the cleaned
article: a block or two of real sentences in between is the lead. Anything else there is
short (bylines, dates, share buttons), a link, a caption or a menu, and stays out.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from lxml import etree

from .blocks import BLOCKS, WORD, Block, Opinion, is_heading, text_of, voting_units, words_of

# A lead block has at least this many words.
LEAD_MIN_WORDS = 10
# More candidate blocks than this between the title and the body is not a lead but some
# other content (teasers of other articles, a table of contents): nothing is put back.
LEAD_MAX_BLOCKS = 2
# Bounds on the work, not rules of what a lead is (the audit found neither changes a score):
# the blocks after the title looked at before giving up, and the article's first blocks the
# page is compared with (the body starts among them, and a lead is not repeated further
# down). Without them a page whose body never matches is walked to its end, block by block,
# against the whole article.
LEAD_WINDOW = 40
OPENING_BLOCKS = 12

# The class that marks the lead in the cleaned HTML (the one class the sanitizer keeps):
# `parts.py` reads it back out of a stored article. While the cleaner works, the page's own
# classes are still on its elements (a page may call any paragraph "lead"), so the steps
# mark the lead with LEAD_MARK, which the pipeline turns into the class at the end.
LEAD_CLASS = "lead"
LEAD_MARK = "data-reader-lead"

# How a sentence ends: a stop, a question or exclamation mark, then any closing quotes.
SENTENCE_END = re.compile(r"[.!?…](?:[\"'”’»)\]]*)\s*$")
_SKIP = {"a", "nav", "aside", "footer", "figure", "figcaption", "form", "button", "ul", "ol", "li", "dl",
         "table", "time", "address", "label", "select", "noscript", "script", "style", "template", "h1"}
_TEXT_BLOCKS = {"p", "div", "section", "header", "h2", "h3", "h4", "h5", "h6", "blockquote", "span", "article"}


def restore_lead(tree: etree._Element, article: etree._Element) -> None:
    """Insert the page's lead paragraph at the top of article when the extractors left it
    out. tree is the page as both extractors read it; it is not changed."""
    units = list(voting_units(article))
    if not units:
        return
    titles = [h for h in tree.iter("h1") if WORD.search(text_of(h))]
    if not titles:
        return
    held = Opinion(words_of(" ".join(text_of(u) for u in units[:OPENING_BLOCKS])))
    title = Opinion(words_of(text_of(titles[0])))
    found: list[etree._Element] = []
    seen = 0
    for el in _after(titles[0]):
        if el.tag not in _TEXT_BLOCKS or _inside_skipped(el):
            continue
        if any(isinstance(d.tag, str) and d.tag in BLOCKS and d.tag != "br" for d in el.iterdescendants()):
            continue  # only the innermost blocks: their text is read once
        text = text_of(el)
        block = Block(text)
        if not block.words:
            continue
        seen += 1
        if seen > LEAD_WINDOW:
            return
        if held.holds(block):
            if len(block.words) >= 5:
                break  # the body starts here
            continue
        if title.holds(block):
            continue  # the title again (a share box, a breadcrumb): not a lead
        if len(block.words) < LEAD_MIN_WORDS or not SENTENCE_END.search(text):
            continue  # a lead is written in sentences; a byline or dateline is not
        if el.find(".//script") is not None or el.find(".//style") is not None:
            continue
        found.append(el)
        if len(found) > LEAD_MAX_BLOCKS:
            return
    else:
        return  # the body never came after this title: the title is not the article's
    # below the article's own copy of the title, if it opens with one, above all else
    first = units[0]
    if len(units) > 1 and is_heading(first) and (first.tag == "h1" or title.holds(Block(text_of(first)))):
        first = units[1]
    # a lead the article holds further down (an author's note set at the top and at the end)
    # is not a lead, and a page that carries its lead twice (one per screen size) gives one
    whole = Opinion(words_of(text_of(article)))
    texts: list[str] = []
    for el in found:
        text = text_of(el)
        if whole.holds(Block(text)) or any(words_of(text) == words_of(other) for other in texts):
            continue
        texts.append(text)
        lead = etree.Element("p", {LEAD_MARK: ""})
        lead.text = text
        first.addprevious(lead)


def _after(start: etree._Element) -> Iterator[etree._Element]:
    """The elements after start in document order (its own descendants excluded)."""
    el: etree._Element | None = start
    while el is not None:
        following = el.getnext()
        while following is not None:
            yield from (d for d in following.iter() if isinstance(d.tag, str))
            following = following.getnext()
        el = el.getparent()


def _inside_skipped(el: etree._Element) -> bool:
    node: etree._Element | None = el
    while node is not None and node.tag not in ("body", "html"):
        if node.tag in _SKIP:
            return True
        node = node.getparent()
    return False
