"""What each part of a cleaned article is, read back out of its HTML: the lead (the dek
under the title), the figures with their captions, and the body a person reads.

The cleaner writes the lead as `<p class="lead">` (the one class the sanitizer keeps) and
every captioned picture as a `<figure>` with a `<figcaption>`, so the parts are in the
stored HTML itself and no column holds them twice: the cleaner's result and the article
API read them with the same function. The body is the text without the lead and the
captions (credits are part of a caption): what reading time and search count.
"""

from __future__ import annotations

from typing import TypedDict

import lxml.html
from lxml import etree

from .blocks import drop
from .sanitize import plain_text
from .standfirst import LEAD_CLASS


class Figure(TypedDict):
    """A picture of the article (its address as the HTML has it) and its caption."""

    src: str | None
    caption: str | None


class Parts(TypedDict):
    lead: str | None
    figures: list[Figure]
    body: str


def read_parts(html: str) -> Parts:
    """The lead, figures and body text of an article's cleaned HTML (an article cleaned
    before leads were marked shows its lead as the body's first paragraph, and has none)."""
    if "<figure" not in html and f'class="{LEAD_CLASS}"' not in html:
        return Parts(lead=None, figures=[], body=plain_text(html))
    root = lxml.html.fragment_fromstring(html, create_parent="div")
    leads = [el for el in root.iter("p") if el.get("class") == LEAD_CLASS]
    lead = "\n\n".join(text for text in (_text(el) for el in leads) if text) or None
    figures: list[Figure] = []
    for figure in root.iter("figure"):
        img = next((img for img in figure.iter("img") if img.get("src")), None)
        caption = figure.find(".//figcaption")
        figures.append(Figure(src=img.get("src") if img is not None else None,
                              caption=(_text(caption) or None) if caption is not None else None))
    for el in leads + list(root.iter("figcaption")):
        drop(el)  # its tail, the next block's text, stays
    body = plain_text(etree.tostring(root, encoding="unicode", method="html"))
    return Parts(lead=lead, figures=figures, body=body)


def _text(el: etree._Element) -> str:
    return plain_text(etree.tostring(el, encoding="unicode", method="html", with_tail=False))

