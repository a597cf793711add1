"""Whether a cleaned article's text may be only its start: a teaser the site shows to
visitors who do not pay or sign in, stored as if it were the article.

The page says so itself, in four ways, read here (`stops_short`) on the page as the cleaner
left it (what the page hides by its style is gone):

- schema.org's `isAccessibleForFree: false` in its JSON-LD (or microdata), on the
  article or on a part of it (`hasPart`): how sites tell search engines which text is
  for subscribers (not when the product it is part of is a meter's, "site:metered").
  Unless the page carries the part it marks (Google's `cssSelector` names it) and the
  cleaned text holds it: then the page was served whole;
- `<meta property="article:content_tier" content="locked">` ("metered" is no mark: a
  metered page is served whole, and its meter runs in the browser);
- a paywall's box that the page shows: a class or id such as "paywall", "regwall",
  Piano's "tp-modal", "subscriber-only", "premium-content", "meteredContent" (a hidden
  one is a meter's "no free articles left", opened by the page's scripts when it runs out);
- a teaser's words near the end of the body ("Subscribe to continue reading", "Already a
  subscriber?", in a few languages): in the body's last lines or in the text the page
  shows right after them, where the paywall box stands.

Each counts only for a body under SHORT_WORDS, and none when the site marks the page as
free: a teaser is a few paragraphs, and pages that are whole carry all four (a site that
marks its subscribers' articles serves them whole to search engines, as reader's fetch is
served on the New York Times, The Intercept or Clarín among the dev pages; a template has
its paywall box on every page; a newsletter box ends many full articles). On the 1,014
dev pages (/work/shared/extraction-dev) this marks 9: 7 whose text does stop short (6
teasers, and a page whose whole text is hidden), 2 that look whole (metered sites whose
boxes say "to continue reading" or mark the article for subscribers).

The fifth sign is not on the page: a body much shorter than the feed's own summary (which
is often the whole article) stopped early. The worker knows the summary and asks
`shorter_than_summary` (reader/jobs/cleaning.py).

Each check returns the reason in words for the reader view ("This may be only the
start: <reason>"), or None when nothing says the text stops short.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from lxml import etree

from .blocks import WORD

# A body of this many words or more is taken as whole whatever the page says: teasers run
# 50 to 300 words.
SHORT_WORDS = 400
# The feed's summary says the body stopped short when the body has under this share of its
# words, and the summary is long enough to be more than a blurb.
SUMMARY_SHARE = 0.6
SUMMARY_MIN_WORDS = 80
# Share of the words of the parts the site marks as locked that the cleaned text must hold
# for the page to count as served whole.
CARRIED_SHARE = 0.8
# How far (in characters of the page's text) after the body's last words a teaser's words
# still belong to the article's end, and how much of the body's own end is read for them
# (at most AFTER_BODY_CHARS).
AFTER_BODY_CHARS = 1500
BODY_TAIL_CHARS = 600

FOR_SUBSCRIBERS = "the site marks it for subscribers"
PAYWALL = "the page has a paywall"
SHORTER_THAN_SUMMARY = "the text is shorter than the feed's summary"

# Words a paywall's box says, lower case, as a reader would see them quoted. Not a meter's
# "you have reached your limit of free articles": reader's fetch never runs a meter out, so
# that box is the page's template.
TEASER_PHRASES = (
    "subscribe to continue reading", "subscribe to keep reading", "subscribe to read the full",
    "subscribe to read more", "subscribe now to continue", "subscribe to unlock",
    "this article is for subscribers", "this article is only available to subscribers",
    "this content is only available to subscribers", "this content is for subscribers",
    "available to subscribers only", "available exclusively to subscribers", "for subscribers only",
    "to continue reading", "to keep reading", "to read the full article", "to read the full story",
    "sign in to read", "log in to read", "sign in to continue", "log in to continue",
    "register to continue reading", "create a free account to continue", "already a subscriber?",
    "already have an account? sign in to", "unlock this article", "become a subscriber to read",
    # German
    "bereits abonnent?", "schon abonnent?", "jetzt weiterlesen mit", "weiterlesen mit",
    "nur für abonnenten", "exklusiv für abonnenten", "um den artikel weiterzulesen", "mit einem abo weiterlesen",
    # French
    "déjà abonné ?", "déjà abonné?", "réservé aux abonnés", "abonnez-vous pour lire", "pour lire la suite",
    # Spanish
    "ya eres suscriptor", "ya soy suscriptor", "exclusivo para suscriptores", "suscríbete para seguir leyendo",
    "para seguir leyendo", "para continuar leyendo",
    # Italian, Portuguese, Dutch
    "sei già abbonato", "riservato agli abbonati", "per continuare a leggere",
    "já é assinante", "exclusivo para assinantes", "para continuar lendo", "assine para continuar",
    "al abonnee?", "alleen voor abonnees", "lees verder met",
)
_TEASER = re.compile("|".join(re.escape(p) for p in sorted(TEASER_PHRASES, key=len, reverse=True)))
# The page's text, without its scripts' and styles'.
_TEXTS = "//text()[not(parent::script or parent::style)]"

# A class or id token that names a paywall's box; "paywall" and "regwall" anywhere in it
# (articlePaywall), the others as a token or a dash-separated part of one. Not one that says
# the wall is off (no-paywall, paywall-free), nor one of a control or a label about a wall
# (btn-paywall, a "subscriber-only" tag on another story's link, the wall's settings).
_WALL = re.compile(
    r"[\w-]*(?:pay-?wall|reg-?wall)[\w-]*"
    r"|(?:[\w-]*[-_])?(?:registration-?wall|subscribers?-?only|premium-?content|metered-?content"
    r"|tp-modal|tp-backdrop|tp-container)(?:[-_][\w-]*)?", re.IGNORECASE)
_WALL_OFF = re.compile(r"(?:^|[-_])(?:no|not|non|without|free|off|disabled|btn|button|link|icon|tag|label|badge"
                       r"|indicator|trigger|settings|js)(?:[-_]|$)|^no(?=pay|reg)|wall(?:less|free)", re.IGNORECASE)
# ... and a part of such a name that any of them holds.
_WALL_NAMES = re.compile(r"wall|subscri|premium|metered|tp-", re.IGNORECASE)
# Elements that show nothing, and the marks of a box the page hides until its scripts open it
# (a meter's "no free articles left this month", shown only once the meter runs out).
_SHOWS_NOTHING = {"script", "style", "link", "meta", "noscript", "template", "input"}
_HIDES = re.compile(r"(?:^|\s)(?:hidden|hide|d-none|is-hidden)(?:\s|$)|display\s*:\s*none", re.IGNORECASE)


def stops_short(tree: etree._Element, body: str, words: int) -> str | None:
    """Why the cleaned body (its plain text and word count) may be only the start of the
    article, or None. The page is read as the cleaner left it (what its style hides is
    gone), and only for a short body: on the long articles most pages are, this costs nothing."""
    if words >= SHORT_WORDS:
        return None
    locked, free, selectors = _structured(tree)
    if free:
        return None
    if locked:
        parts = tuple(text for text in (_selected_text(tree, s) for s in selectors) if text)
        return None if _carried(parts, body) else FOR_SUBSCRIBERS
    # "metered" is no mark: a metered page is served whole and its meter runs in the browser
    if any((meta.get("property") or meta.get("name") or "").lower() == "article:content_tier"
           and (meta.get("content") or "").strip().lower() == "locked" for meta in tree.iter("meta")):
        return FOR_SUBSCRIBERS
    phrase = _teaser_words(tree, body)
    if phrase:
        return f"the page says “{phrase}”"
    # the elements are looked at one by one only on a page where some class or id holds a part
    # of such a name (the names are read out as plain strings in one go: each element lxml.html
    # makes in Python costs more)
    names = " ".join(tree.xpath("//@class | //@id", smart_strings=False))
    if _WALL_NAMES.search(names) and any(_is_wall(el) for el in tree.xpath("//*[@class or @id]")):
        return PAYWALL
    return None


def shorter_than_summary(words: int, summary_text: str) -> str | None:
    """Why a body of `words` words stops short of the feed's summary, or None: a feed that
    gives the whole article (or most of it) in its summary, and a body well short of it."""
    summary_words = len(summary_text.split())
    if summary_words >= SUMMARY_MIN_WORDS and words < SUMMARY_SHARE * summary_words:
        return SHORTER_THAN_SUMMARY
    return None


def _structured(tree: etree._Element) -> tuple[bool, bool, list[str]]:
    """Whether the page's schema.org data marks the article, or a part of it, as not free,
    whether it marks anything as free, and the CSS selectors of the parts it marks not free."""
    locked = free = metered = False
    selectors: list[str] = []
    for script in tree.iter("script"):
        if (script.get("type") or "").strip().lower() != "application/ld+json" or not script.text:
            continue
        try:
            data = json.loads(script.text)
        except (ValueError, RecursionError):  # not JSON, or nested past what the parser goes
            continue
        for item in _objects(data):
            product = item.get("productID")
            if isinstance(product, str) and product.lower().endswith(":metered"):
                metered = True  # the product the article is part of is a meter's (elcomercio:metered)
            if _is_false(item.get("isAccessibleForFree")):
                locked = True
                selector = item.get("cssSelector")
                if isinstance(selector, str):
                    selectors.append(selector)
            elif _is_true(item.get("isAccessibleForFree")):
                free = True
    for el in tree.xpath("//*[@itemprop='isAccessibleForFree']"):
        locked = locked or _is_false(el.get("content"))
        free = free or _is_true(el.get("content"))
    return locked and not metered, free, selectors


def _objects(data: Any) -> Iterator[dict[str, Any]]:
    """Every object in a JSON-LD document (@graph, hasPart and lists included), walked
    with a stack of its own (a hostile page nests deep)."""
    stack = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            yield value
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)


def _is_false(value: Any) -> bool:
    return value is False or (isinstance(value, str) and value.strip().lower() in ("false", "http://schema.org/false"))


def _is_true(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.strip().lower() in ("true", "http://schema.org/true"))


_SIMPLE_SELECTOR = re.compile(r"([a-zA-Z][\w-]*)?((?:[.#][\w-]+)+)")


def _selected_text(tree: etree._Element, selectors: str) -> str:
    """The text of the elements a simple CSS selector list names (".paywall, #body",
    "div.story"); empty for one it does not name or this reader cannot read."""
    texts: list[str] = []
    for selector in selectors.split(","):
        match = _SIMPLE_SELECTOR.fullmatch(selector.strip())
        if match is None:
            continue
        tag, marks = match.group(1) or "*", match.group(2)
        tests = []
        for kind, name in re.findall(r"([.#])([\w-]+)", marks):
            if kind == "#":
                tests.append(f"@id='{name}'")
            else:
                tests.append(f"contains(concat(' ', normalize-space(@class), ' '), ' {name} ')")
        for el in tree.xpath(f"//{tag}[{' and '.join(tests)}]"):
            texts.append(" ".join(str(t) for t in el.xpath(".//text()[not(ancestor::script or ancestor::style)]")))
    return " ".join(" ".join(texts).split())


def _carried(parts: tuple[str, ...], body: str) -> bool:
    """Whether the cleaned body holds the text of the parts the site marks locked: then the
    page was served with them (to a search engine, a subscriber's browser)."""
    wanted = [w.lower() for part in parts for w in WORD.findall(part)]
    if len(wanted) < 20:  # no part named, or an empty box the page's scripts fill
        return False
    have = {w.lower() for w in WORD.findall(body)}
    return sum(w in have for w in wanted) >= CARRIED_SHARE * len(wanted)


def _hidden(el: etree._Element) -> bool:
    """Whether the page shows nothing of the element until its scripts do."""
    return (el.tag in _SHOWS_NOTHING or el.get("hidden") is not None
            or bool(_HIDES.search(el.get("class") or "") or _HIDES.search(el.get("style") or "")))


def _shown_text(root: etree._Element) -> str:
    """The text the page shows, in order (a meter's hidden box says "to continue reading"
    on pages that are whole). Walked with a stack of its own: a hostile page nests deeper
    than Python's recursion goes."""
    into: list[str] = []
    stack: list[tuple[etree._Element, bool]] = [(root, False)]
    while stack:
        el, tail_only = stack.pop()
        if not tail_only and isinstance(el.tag, str) and not _hidden(el):
            if el.text:
                into.append(el.text)
            stack.append((el, True))  # its tail, after its children
            stack.extend((child, False) for child in reversed(el))
        elif el.tail:
            into.append(el.tail)
    return " ".join(" ".join(into).split())


def _is_wall(el: etree._Element) -> bool:
    names = f"{el.get('class') or ''} {el.get('id') or ''}"
    if not _WALL_NAMES.search(names):
        return False
    if not any(_WALL.fullmatch(token) and not _WALL_OFF.search(token) for token in names.split()):
        return False
    return not _hidden(el)


def _teaser_words(tree: etree._Element, body: str) -> str | None:
    """A teaser's words at the end of the body, as the page writes them: in its last lines,
    or in the text the page shows just after them (the box that stands where the rest of
    the text would)."""
    folded = " ".join(body.split())
    found = _as_written(folded[-BODY_TAIL_CHARS:], 0)
    if found:
        return found
    # The text the page shows is walked for in Python (a meter's box hidden by its class says
    # "to continue reading" on pages that are whole) only when the page's text holds a teaser's
    # words at all, read out by lxml in one go: few pages do, and a test of `in` for each
    # phrase is many times faster than one search for them all.
    everything = " ".join(" ".join(tree.xpath(_TEXTS, smart_strings=False)).split()).lower()
    if not any(phrase in everything for phrase in TEASER_PHRASES):
        return None
    page = _shown_text(tree)
    end = _body_end(page.lower(), folded.lower())
    return _as_written(page, end) if end is not None else None


def _as_written(text: str, start: int) -> str | None:
    """The first teaser's words in text[start:start + AFTER_BODY_CHARS], in the text's own case."""
    window = text[start:start + AFTER_BODY_CHARS]
    lower = window.lower()
    found = _TEASER.search(lower)
    if found is None:
        return None
    # lower case is as long as the text but for a few letters (İ): then the phrase as listed
    return window[found.start():found.end()] if len(lower) == len(window) else found.group(0)


def _body_end(page: str, body: str) -> int | None:
    """Where the body's last words end in the page's text, or None when they are not
    found there as they are (the cleaner joined or mended them)."""
    for size in (80, 40, 20):
        tail = body[-size:].strip()
        if len(tail) < 12:
            return None
        at = page.rfind(tail)
        if at >= 0:
            return at + len(tail)
    return None
