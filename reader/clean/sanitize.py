"""The one cleaner for every piece of HTML that comes from outside: extracted article
bodies and feed summaries alike. What comes out is inert: no scripts, no event
handlers, no styles, links only to http, https and mailto, every relative link made
absolute against the page it came from."""

from __future__ import annotations

import html
import re
from urllib.parse import urljoin, urlsplit

import nh3

_TAGS = {
    "a", "abbr", "b", "blockquote", "br", "caption", "cite", "code", "dd", "del", "details",
    "dfn", "div", "dl", "dt", "em", "figcaption", "figure", "h1", "h2", "h3", "h4", "h5",
    "h6", "hr", "i", "img", "ins", "kbd", "li", "mark", "ol", "p", "pre", "q", "s", "samp",
    "small", "span", "strong", "sub", "summary", "sup", "table", "tbody", "td", "tfoot",
    "th", "thead", "time", "tr", "u", "ul",
}
_ATTRIBUTES = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title", "width", "height"},
    "td": {"colspan", "rowspan"},
    "th": {"colspan", "rowspan", "scope"},
    "time": {"datetime"},
    "abbr": {"title"},
    "ol": {"start"},
    "p": {"class"},
}
# The one class kept: the cleaner's mark on an article's lead (standfirst.LEAD_CLASS), which
# says what the paragraph is (parts.py reads it back); any other class is the page's own.
_LEAD = ("p", "class", "lead")
_SCHEMES = {"http", "https", "mailto"}
_URL_ATTRIBUTES = {("a", "href"), ("img", "src")}
# nh3 writes the attributes it sets on <img> from a Rust hash map, so their order, and where
# they land among the others (when it drops one, such as a relative src with no base),
# changes from one call to the next: the same page cleaned twice (an export imported back,
# a re-cleaning) gave different HTML. One order, at the tag's end, always. An attribute
# value is always double-quoted with its own quotes escaped, and "<img" in text is "&lt;img".
_IMG_TAG = re.compile(r'<img((?:\s+[^\s"=/>]+(?:="[^"]*")?)*)\s*(/?)>')
_SET_ATTRIBUTES = re.compile(r'\s+(?:loading="lazy"|decoding="async")(?=\s|$)')


def _one_order(tag: re.Match[str]) -> str:
    """An <img> tag with the two attributes nh3 sets moved to its end, in one order."""
    return f'<img{_SET_ATTRIBUTES.sub("", tag.group(1))} loading="lazy" decoding="async"{tag.group(2)}>'


def valid_text(text: str) -> str:
    """The text with lone surrogates (JSON can spell them, UTF-8 cannot hold them) replaced
    by "?": neither the sanitizer nor SQLite can take them."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


def clean_html(fragment: str, base_url: str | None = None) -> str:
    """Sanitize outside HTML; relative links resolve against base_url."""

    def absolute(tag: str, attribute: str, value: str) -> str | None:
        if attribute == "class":
            return value if (tag, attribute, value) == _LEAD else None
        if (tag, attribute) not in _URL_ATTRIBUTES:
            return value
        try:
            url = urljoin(base_url, value.strip()) if base_url else value.strip()
            scheme = urlsplit(url).scheme.lower()
        except ValueError:  # "http://[::1": no link at all, rather than no page
            return None
        return url if scheme in _SCHEMES else None

    cleaned = nh3.clean(
        valid_text(fragment),
        tags=_TAGS,
        attributes=_ATTRIBUTES,
        url_schemes=_SCHEMES,
        attribute_filter=absolute,
        link_rel="noopener noreferrer nofollow",
        set_tag_attribute_values={"img": {"loading": "lazy", "decoding": "async"}},
        strip_comments=True,
    )
    return _IMG_TAG.sub(_one_order, cleaned).strip()


_TAG = re.compile(r"<[^>]*>")
# Where one block of text ends and the next begins: these tags mark a paragraph break in
# plain text (a <br> a line break), so "units.</p><p>The" never reads "units.The".
_BLOCK_EDGE = re.compile(
    r"</?(?:p|div|h[1-6]|li|ul|ol|dl|dt|dd|pre|blockquote|table|thead|tbody|tfoot|tr|figure|figcaption"
    r"|caption|details|summary|hr|section|article|header|footer|aside|main|nav)\b[^>]*>",
    re.IGNORECASE,
)
_CELL_EDGE = re.compile(r"</?t[dh]\b[^>]*>", re.IGNORECASE)
_LINE_BREAK = re.compile(r"<br\b[^>]*>", re.IGNORECASE)
_SPACE = re.compile(r"[^\S\n]+")
_ANY_SPACE = re.compile(r"\s+")
_PRE = re.compile(r"(<pre\b.*?</pre>)", re.IGNORECASE | re.DOTALL)
_BLANK_LINES = re.compile(r"\n\s*\n\s*")


def plain_text(fragment: str) -> str:
    """Text of HTML for titles, excerpts and search: tags dropped, entities decoded, spaces
    folded, blocks kept apart by a blank line. The result is text, to be escaped wherever
    it is shown."""
    marked = nh3.clean(valid_text(fragment), tags=_TAGS, attributes={}, strip_comments=True)
    # Line breaks in the source are just spaces, except in preformatted text.
    marked = "".join(part if i % 2 else _ANY_SPACE.sub(" ", part) for i, part in enumerate(_PRE.split(marked)))
    marked = _LINE_BREAK.sub("\n", _BLOCK_EDGE.sub("\n\n", _CELL_EDGE.sub(" ", marked)))
    text = html.unescape(_TAG.sub("", marked))
    lines = (_SPACE.sub(" ", line).strip() for line in text.split("\n"))
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()
