"""The article's figures and their captions, put back after the vote.

readability-lxml's cleaning drops a `<figure>` it judges too short on text (a picture and
a one-line caption), and trafilatura in precision mode leaves captions out, so a caption
both dropped is lost to any vote. Yet a picture set between two paragraphs of the text is
the article's own: pages put their furniture (teasers, ads, share rows) beside the text or
after it, seldom as a captioned picture inside the running text.

So each figure of the page (a `<figure>`, or a `<figcaption>` standing on its own, which
some pages set right after the `<figure>` holding the image) whose nearest text before it
and after it are both in the cleaned article is put back between them, as a `<figure>`
with its pictures and its caption in a `<figcaption>`. A figure whose caption the article
already holds, or whose pictures it already shows, is left alone.

Last, `credits_into_captions` moves the few words a picture's figure says beside its
<figcaption> (a credit in a <span>, "© Getty Images" in a <p>, "Photo: ...", a slide's
counter) into the caption: they speak of the picture, and the caption is where the reader
view, the body text (`parts.py`: what reading time, search and highlights count) and the
API's figures look for what is said of a picture.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator

from lxml import etree

from .blocks import BLOCKS, LISTS, Block, Opinion, drop, text_of, triples, voting_units, words_of

# A caption longer than this is not a caption but a box of other content set as a figure.
CAPTION_MAX_WORDS = 80
# ... and one under this many words is a bare credit ("AP", "Foto: ABr"), not a caption.
CAPTION_MIN_WORDS = 3
# The most words a picture's figure may say beside its caption for them to be its credit; a
# figure that holds more, or a block of text (a quotation, code, a table, a list), holds text
# of its own and is left as the page has it.
CREDIT_WORDS = 20
_TEXT_INSIDE = ("blockquote", "pre", "table", "ul", "ol", "dl")
# How many elements to look through for the text on each side of a figure.
NEIGHBOUR_REACH = 200

# The text beside a figure is the nearest of these with words, or the nearest other block
# holding loose text of its own (a <div> of text with no <p>); loose text in an inline
# element is a phrase of the block around it, not a block.
_TEXT_TAGS = {"p", "h1", "h2", "h3", "h4", "h5", "h6", "li", "blockquote", "pre", "dd", "dt", "td", "th"}
_INLINE = {"a", "span", "em", "strong", "b", "i", "u", "small", "code", "sup", "sub", "abbr", "time", "label", "button"}
# Never the text beside a figure: code, markup the reader never sees as text, and the
# page's menus and forms (a script between two paragraphs says nothing of where they stand).
_NOT_TEXT = {"script", "style", "noscript", "template", "svg", "select", "option", "form", "nav"}
_SKIP = _NOT_TEXT | {"figure", "figcaption"}  # another figure is not text either
_PLAYERS = {"video", "audio", "iframe", "object", "embed"}


def restore_figures(tree: etree._Element, article: etree._Element) -> None:
    """Insert into article the page's figures that sit inside its text and that it lost.
    tree is the page as both extractors read it; it is not changed."""
    candidates = list(_figures(tree))
    if not candidates:
        return
    # the article's text, worked out for the first figure that could be put back: most
    # pages' figures are already in it, or are videos, credits or menus' pictures
    held: Opinion | None = None
    units: list[etree._Element] = []
    texts: list[str] = []
    holders: dict[tuple[str, ...], list[int]] = {}
    shown = {_source(img) for img in article.iter("img")}
    for figure, caption in candidates:
        words = _caption_text(caption) if caption is not None else ""
        block = Block(words)
        if len(block.words) > CAPTION_MAX_WORDS or 0 < len(block.words) < CAPTION_MIN_WORDS:
            continue  # a box of other content set as a figure; a bare credit ("AP", "Foto: ABr")
        pictures = [img for img in figure.iter("img") if _source(img)]
        if not block.words and not pictures:
            continue
        if any(_source(img) in shown for img in pictures):
            continue
        if not _shows_picture(figure):
            continue  # a video's or an embed's caption speaks of something the article cannot show
        if any(a.tag in _NOT_TEXT for a in figure.iterancestors()):
            continue  # in a menu, a form or a <noscript>: not among the article's text
        if held is None:
            units = list(voting_units(article))
            texts = [text_of(u) for u in units]
            held = Opinion(words_of(" ".join(texts)))
        if len(units) < 2:
            return  # a page of one block has no text on two sides of anything
        if block.words and held.holds(block):
            continue
        before = _neighbour(_preceding(figure))
        if before is None or not held.holds(before):
            continue
        after = _neighbour(_following(caption if caption is not None else figure))
        if after is None or not held.holds(after):
            continue
        if not holders:
            for i, text in enumerate(texts):
                for triple in triples(words_of(text)):
                    holders.setdefault(triple, []).append(i)
        anchor = _anchor(before, units, holders)
        if anchor is None:
            continue
        made = _figure(pictures, words)
        made.tail = anchor.tail
        anchor.tail = None
        anchor.addnext(made)
        shown.update(_source(img) for img in pictures)


# A class that names a caption or a picture's credit (wp-caption-text, image-caption,
# tr-caption, media-caption, photo-credit).
_CAPTION_MARK = re.compile(r"caption|credit", re.I)
# How far above a caption to look for the element that holds it and its picture.
CAPTION_REACH = 4


def as_figures(article: etree._Element) -> None:
    """Write the article's captioned pictures as <figure> with a <figcaption>, the way the
    reader view and `parts.py` tell a caption from the text. Pages set them in whatever
    their templates make (a WordPress `div.wp-caption` with a `p.wp-caption-text`, a
    Blogger table whose second row is the caption): an element the page's classes name a
    caption or a credit, in an element holding a picture and no words but the caption's."""
    for mark in list(article.iter()):
        if not _caption_mark(mark):
            continue
        if mark.getparent() is None or any(a.tag in ("figure", "figcaption") for a in mark.iterancestors()):
            continue  # in a figure already, or taken out with the one made before
        if not text_of(mark):
            continue
        holder = mark.getparent()
        for _ in range(CAPTION_REACH):
            if holder is None or holder is article:
                break
            if holder.find(".//img") is not None:
                break
            holder = holder.getparent()
        if holder is None or holder is article or holder.find(".//img") is None:
            continue
        # the caption and the credit beside it, each once (a credit inside the caption is its own)
        caption = " ".join(text for text in (text_of(el) for el in _outermost_marks(holder)) if text)
        if words_of(text_of(holder)) != words_of(caption):
            continue  # text of its own beside the picture: a block of the article, not a figure
        pictures = [img for img in holder.iter("img") if _source(img)]
        if not pictures:
            continue
        made = _figure(pictures, caption)
        made.tail = holder.tail
        parent = holder.getparent()
        if parent is not None:
            parent.replace(holder, made)


def credits_into_captions(article: etree._Element) -> None:
    """Move what each picture's figure says beside its caption into the caption (made when
    the figure has none), after the caption's own words."""
    for figure in list(article.iter("figure")):
        if figure.find(".//img") is None or any(figure.find(f".//{tag}") is not None for tag in _TEXT_INSIDE):
            continue
        caption = figure.find(".//figcaption")
        loose = " ".join("".join(_loose(figure, caption)).split())
        words = words_of(loose)
        if not words or len(words) > CREDIT_WORDS:
            continue
        _clear_loose(figure, caption)
        if caption is None:
            caption = etree.SubElement(figure, "figcaption")
        if " ".join(words) in " ".join(words_of(text_of(caption))):
            continue  # the caption says it already
        credit = etree.SubElement(caption, "small")
        credit.text = loose
        if len(caption) > 1 or (caption.text or "").strip():
            previous = credit.getprevious()
            if previous is None:
                caption.text = (caption.text or "").rstrip() + " "
            else:
                previous.tail = (previous.tail or "").rstrip() + " "


def _loose(el: etree._Element, caption: etree._Element | None) -> Iterator[str]:
    """The text of el outside caption, in order."""
    if isinstance(el.tag, str):
        yield el.text or ""
    for child in el:
        if child is not caption:
            yield " "
            yield from _loose(child, caption)
            yield " "
        yield child.tail or ""


def _clear_loose(el: etree._Element, caption: etree._Element | None) -> None:
    """Take the text outside caption out of el, and the elements it leaves empty."""
    el.text = None
    for child in list(el):
        child.tail = None
        if child is caption:
            continue
        if not isinstance(child.tag, str):
            el.remove(child)  # a comment
            continue
        _clear_loose(child, caption)
        if child.find(".//img") is None and child.tag != "img" and (caption is None or caption not in child.iter()):
            el.remove(child)


def _outermost_marks(holder: etree._Element) -> Iterator[etree._Element]:
    """The elements under holder named captions, not those inside one of them."""
    stack = list(reversed(holder))
    while stack:
        el = stack.pop()
        if _caption_mark(el):
            yield el
        elif isinstance(el.tag, str):
            stack.extend(reversed(el))


def _caption_mark(el: etree._Element) -> bool:
    """Whether the page's classes name el a caption (or a credit) with no picture in it."""
    return isinstance(el.tag, str) and el.tag not in ("figure", "figcaption") \
        and bool(_CAPTION_MARK.search(el.get("class") or "")) and el.find(".//img") is None


def _figures(tree: etree._Element) -> Iterator[tuple[etree._Element, etree._Element | None]]:
    """The page's figures, each with its caption element (None when it has none)."""
    for figure in tree.iter("figure"):
        if any(a.tag == "figure" for a in figure.iterancestors()):
            continue
        caption = figure.find(".//figcaption")
        if caption is None:
            following = figure.getnext()
            if following is not None and following.tag == "figcaption":
                caption = following
        yield figure, caption
    for caption in tree.iter("figcaption"):
        if any(a.tag == "figure" for a in caption.iterancestors()):
            continue
        previous = caption.getprevious()
        if previous is not None and previous.tag == "figure":
            continue  # taken with that figure
        yield caption, caption


def _caption_text(caption: etree._Element) -> str:
    """The caption's words, less a rights mark set apart in it ("© Agency"): that credits
    the picture's owner, as the site's rights line credits the site's."""
    if not any(_rights_mark(el) for el in caption.iterdescendants()):
        return text_of(caption)
    caption = copy.deepcopy(caption)
    for el in [el for el in caption.iterdescendants() if _rights_mark(el)]:
        drop(el)
    return text_of(caption)


def _rights_mark(el: etree._Element) -> bool:
    return isinstance(el.tag, str) and (el.text or "").lstrip().startswith("©")


def _shows_picture(figure: etree._Element) -> bool:
    """Whether a figure is a picture (an image, or a lazy one marked as an image object)
    rather than a video player or an embed."""
    parent = figure.getparent() if figure.tag == "figcaption" else None
    scope = parent if parent is not None else figure
    picture = False
    for el in scope.iter():
        if not isinstance(el.tag, str):
            continue
        if el.tag in _PLAYERS or any("video" in value.lower() for value in el.attrib.values()):
            return False
        if el.tag in ("img", "picture") or "ImageObject" in (el.get("itemtype") or ""):
            picture = True
    return picture


def _source(img: etree._Element) -> str | None:
    """The image's address: its src, or where a lazy-loading page keeps the real one."""
    for name in ("src", "data-src", "data-original", "data-lazy-src"):
        value = (img.get(name) or "").strip()
        if value and not value.startswith("data:"):
            return value
    return None


def _figure(pictures: list[etree._Element], caption: str) -> etree._Element:
    made = etree.Element("figure")
    for img in pictures:
        picture = etree.SubElement(made, "img", src=_source(img) or "")
        for name in ("alt", "width", "height"):
            value = img.get(name)
            if value:
                picture.set(name, value)
    if caption:
        etree.SubElement(made, "figcaption").text = caption
    return made


def _neighbour(elements: Iterator[etree._Element]) -> Block | None:
    """The first block of text among elements (nearest first), or None within reach."""
    for i, el in enumerate(elements):
        if i > NEIGHBOUR_REACH:
            return None
        if el.tag in _TEXT_TAGS or (el.text and el.text.strip() and el.tag not in _INLINE):
            if any(isinstance(child.tag, str) and child.tag in BLOCKS for child in el):
                continue  # its inner blocks come on their own: the nearest one is the neighbour
            block = Block(text_of(el))
            if block.words:
                return block
    return None


def _preceding(start: etree._Element) -> Iterator[etree._Element]:
    """The elements before start, nearest first (its ancestors excluded, and what never
    counts as text left out whole)."""
    node: etree._Element | None = start
    while node is not None:
        for sibling in node.itersiblings(preceding=True):
            # an element comes after all its descendants, the last first: lazily, as a
            # page's header can be most of it and the text is usually a few elements away
            stack: list[tuple[etree._Element, bool]] = [(sibling, False)]
            while stack:
                el, seen = stack.pop()
                if seen:
                    yield el
                elif isinstance(el.tag, str) and el.tag not in _SKIP:
                    stack.append((el, True))
                    stack.extend((child, False) for child in el)
        node = node.getparent()


def _following(start: etree._Element) -> Iterator[etree._Element]:
    """The elements after start in document order (its own descendants excluded, and what
    never counts as text left out whole)."""
    node: etree._Element | None = start
    while node is not None:
        for sibling in node.itersiblings():
            stack = [sibling]
            while stack:
                el = stack.pop()
                if isinstance(el.tag, str) and el.tag not in _SKIP:
                    yield el
                    stack.extend(reversed(el))
        node = node.getparent()


def _anchor(block: Block, units: list[etree._Element],
            holders: dict[tuple[str, ...], list[int]]) -> etree._Element | None:
    """The article's unit that holds block, the text just before the figure (the one
    sharing most of its word triples: a phrase can recur across paragraphs); the figure
    goes right after it, or after its whole list if it is a list item."""
    shared: dict[int, int] = {}
    for triple in block.triples:
        for i in holders.get(triple, ()):
            shared[i] = shared.get(i, 0) + 1
    if not shared:
        return None
    unit = units[min(shared, key=lambda i: (-shared[i], i))]
    parent = unit.getparent()
    while parent is not None and parent.tag in LISTS:
        unit, parent = parent, parent.getparent()
    return unit
