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
}
_SCHEMES = {"http", "https", "mailto"}
_URL_ATTRIBUTES = {("a", "href"), ("img", "src")}


def clean_html(fragment: str, base_url: str | None = None) -> str:
    """Sanitize outside HTML; relative links resolve against base_url."""

    def absolute(tag: str, attribute: str, value: str) -> str | None:
        if (tag, attribute) not in _URL_ATTRIBUTES:
            return value
        url = urljoin(base_url, value.strip()) if base_url else value.strip()
        scheme = urlsplit(url).scheme.lower()
        return url if scheme in _SCHEMES else None

    return nh3.clean(
        fragment,
        tags=_TAGS,
        attributes=_ATTRIBUTES,
        url_schemes=_SCHEMES,
        attribute_filter=absolute,
        link_rel="noopener noreferrer nofollow",
        set_tag_attribute_values={"img": {"loading": "lazy", "decoding": "async"}},
        strip_comments=True,
    ).strip()


_TAG = re.compile(r"<[^>]*>")
_SPACE = re.compile(r"\s+")


def plain_text(fragment: str) -> str:
    """Text of HTML for titles and excerpts: tags dropped, entities decoded, spaces folded.
    The result is text, to be escaped wherever it is shown."""
    return _SPACE.sub(" ", html.unescape(_TAG.sub(" ", nh3.clean(fragment, tags=set())))).strip()
