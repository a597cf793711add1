"""Sanitized article HTML turned into XHTML that an EPUB reading system accepts.

The input has already been through reader/sanitize.py, so it holds only allowlisted tags
and attributes; what is left to do is the XML side: a real namespace, no characters XML
forbids, every image pointing inside the book (or gone), and no link a reader cannot follow.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from urllib.parse import quote, urlsplit

import lxml.html
from lxml import etree

XHTML_NS = "http://www.w3.org/1999/xhtml"
EPUB_NS = "http://www.idpf.org/2007/ops"

# What sanitize.py lets through, minus attributes EPUB's HTML schema does not know
# (loading, decoding) or that only matter on the web (rel).
_KEEP_ATTRIBUTES: Mapping[str, frozenset[str]] = {
    "a": frozenset({"href", "title"}),
    "img": frozenset({"alt", "title", "width", "height"}),
    "td": frozenset({"colspan", "rowspan"}),
    "th": frozenset({"colspan", "rowspan", "scope"}),
    "time": frozenset({"datetime"}),
    "abbr": frozenset({"title"}),
    "ol": frozenset({"start"}),
}
_TAGS = frozenset({
    "a", "abbr", "b", "blockquote", "br", "caption", "cite", "code", "dd", "del", "details",
    "dfn", "div", "dl", "dt", "em", "figcaption", "figure", "h1", "h2", "h3", "h4", "h5",
    "h6", "hr", "i", "img", "ins", "kbd", "li", "mark", "ol", "p", "pre", "q", "s", "samp",
    "small", "span", "strong", "sub", "summary", "sup", "table", "tbody", "td", "tfoot",
    "th", "thead", "time", "tr", "u", "ul",
})
_INTEGER_ATTRIBUTES = frozenset({"width", "height", "colspan", "rowspan", "start"})
_LINK_SCHEMES = frozenset({"http", "https", "mailto"})
# Characters XML 1.0 cannot carry at all; lxml refuses them, so they are dropped first.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(value: str | None) -> str:
    """Text safe to put in an XML document."""
    return _NOT_XML.sub("", value or "")


def safe_href(value: str) -> str:
    """A link as a valid URI: browsers forgive spaces and raw non-ASCII in an href, EPUB
    checkers do not. Existing escapes and URI delimiters are kept as they are."""
    return quote(xml_text(value).strip(), safe=":/?#[]@!$&'()*+,;=%~")


def q(tag: str) -> str:
    return f"{{{XHTML_NS}}}{tag}"


def _append_text(parent: etree._Element, text: str | None) -> None:
    if not text:
        return
    text = xml_text(text)
    if len(parent):
        last = parent[-1]
        last.tail = (last.tail or "") + text
    else:
        parent.text = (parent.text or "") + text


def fragment_into(
    parent: etree._Element, fragment: str, image_href: Callable[[str], str | None]
) -> None:
    """Append the sanitized HTML `fragment` to `parent` as XHTML elements.

    image_href maps an <img src> to its path inside the book, or None when the image is
    not in the book: then the image becomes its alt text, because EPUB does not allow
    images from the network and a reader offline could not show them anyway."""
    if not fragment.strip():
        return
    source = lxml.html.fragment_fromstring(xml_text(fragment), create_parent="div")
    _append_text(parent, source.text)
    for child in source:
        _copy(child, parent, image_href)


def _copy(node: etree._Element, parent: etree._Element, image_href: Callable[[str], str | None]) -> None:
    tag = node.tag if isinstance(node.tag, str) else None
    if tag is None:  # a comment or processing instruction: only its tail is content
        _append_text(parent, node.tail)
        return
    tag = tag.lower()
    if tag not in _TAGS:
        # Unknown here means something sanitize.py would not emit; keep its text, not it.
        _append_text(parent, node.text)
        for child in node:
            _copy(child, parent, image_href)
        _append_text(parent, node.tail)
        return
    if tag == "img":
        href = image_href(node.get("src") or "")
        if href is None:
            _append_text(parent, node.get("alt"))
            _append_text(parent, node.tail)
            return
    element = etree.SubElement(parent, q(tag))
    for name in sorted(_KEEP_ATTRIBUTES.get(tag, ())):
        value = node.get(name)
        if value is None:
            continue
        value = xml_text(value).strip()
        if name in _INTEGER_ATTRIBUTES and not value.isdigit():
            continue
        if name == "href" and urlsplit(value).scheme.lower() not in _LINK_SCHEMES:
            # A fragment or relative link would point into a page that is not in the book.
            continue
        element.set(name, safe_href(value) if name == "href" else value)
    if tag == "img":
        element.set("src", href)
        element.set("alt", xml_text(node.get("alt") or ""))  # alt is required in XHTML
    _append_text(element, node.text)
    for child in node:
        _copy(child, element, image_href)
    _append_text(parent, node.tail)


def xhtml_document(title: str, *, lang: str, stylesheet: str | None = "style.css") -> tuple[etree._ElementTree, etree._Element]:
    """An empty XHTML5 document; returns it and its <body>."""
    root = etree.Element(q("html"), nsmap={None: XHTML_NS, "epub": EPUB_NS})
    root.set("{http://www.w3.org/XML/1998/namespace}lang", lang)
    root.set("lang", lang)
    head = etree.SubElement(root, q("head"))
    etree.SubElement(head, q("meta"), charset="utf-8")
    etree.SubElement(head, q("title")).text = xml_text(title) or "Untitled"
    if stylesheet:
        etree.SubElement(head, q("link"), rel="stylesheet", type="text/css", href=stylesheet)
    body = etree.SubElement(root, q("body"))
    return etree.ElementTree(root), body


def serialize(tree: etree._ElementTree) -> bytes:
    data: bytes = etree.tostring(tree, xml_declaration=True, encoding="utf-8", doctype="<!DOCTYPE html>")
    return data
