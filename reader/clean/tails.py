"""Bylines, date stamps and calls to follow or share at the edges of the article, taken out
of its body.

Both extractors keep some of these with the text they frame ("By Jane Doe", "Updated
5:27 am", "Follow us on Facebook"): they sit in the article's container, so no vote drops
them. They are not the article, and the reader view prints the author and the date from
the page's metadata already.

They are told apart by where they sit and how the page builds them more than by what they
say. Only a short block at an edge of the body is looked at: before its first paragraph of
prose or after its last one (a byline or a share prompt does not sit between two paragraphs
of the story, and a sentence there that mentions following or subscribing is the story's).
A page with no paragraph of prose is left alone: its short blocks are its content. Then one
of these must hold, for most of the block's text:

- the page marks it (its class, id, itemprop or rel, or those of a small box around it) as
  a byline, an author's box or a dateline, or as a share, social or follow element;
- it is a link to an author's page (rel="author", or an address under /author/);
- it is a <time>, or a date and time written in figures alone ("08.04.2015 12:46");
- it is a whole short line that opens as a byline does ("By", "Von", "Par", "Por" and two
  to six capitalized names, then maybe a date), as a date stamp does ("Updated",
  "Aktualisiert", "Publié", "Publicado" and a number within three words), or, after the
  text, as a call to follow or share does ("Follow us", "Folgen Sie uns", "Suivez-nous",
  "Síguenos", "Share this"), or a blog post's filing line does ("This entry was posted in ...
  and tagged ...", "Filed under", "Dieser Beitrag wurde ... abgelegt", "Publié dans"; up to
  FILED_WORDS, as it lists the categories, and never taken for the story's prose: on the
  dev sets it takes 4 such lines, none of the Mozilla set's pages, +3e-4 and +8e-4 on the
  trafilatura set's halves). The word lists are short and
  hold only what sites write as a whole line in English, German, French and Spanish; a line
  counts only when it starts so. A heading is never taken for one of these lines: it names
  a section.

Left out, because each cost the Mozilla set's check half on the development sets (its
expected text is Readability's, which keeps them): a class saying newsletter, subscribe or
sign-up, and a class saying date or time on a short line with a number (a post's "Tuesday
15 October 2019 by ..." line). A call to subscribe after the text ("Subscribe to ...", "Sign
up for ...", "Abonnieren Sie ...") was a rule here until it was retired by the issue's bar
(every rule pays off on both sets and both check halves): it gained the trafilatura set on
both halves (+3e-4, +4e-4) and cost the Mozilla check half 2e-4 (the one line Readability
keeps, a newsletter's promotion), so such a line stays in the text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection

from lxml import etree

from .blocks import WORD, drop, is_heading, linked_length, text_of, voting_units
from .standfirst import LEAD_MARK

__all__ = ["RULES", "drop_tails", "find_tails"]

# A paragraph of prose: this many words at least, and less than half of it in links. The
# edges of the body are what comes before the first one and after the last one.
PROSE_WORDS = 25
PROSE_LINKED = 0.5
# A block the page marks as a byline, an author's box or a share prompt is taken out up to
# this many words; one known by a link, a <time> or its words alone, up to LINE_WORDS.
MARKED_WORDS = 30
LINE_WORDS = 12
# A call to follow ("Follow us on Twitter, Facebook and ...") may run longer than a byline.
CALL_WORDS = 30
# ... and a post's filing line longer still: it lists the categories and tags.
FILED_WORDS = 60
# The marks, the time or the author's link must cover this share of the block's text.
COVER = 0.5
# A box around the block counts for the block's marks only when it holds this many words at
# most: the article's whole container may carry such a word among its many classes
# ("tag-social-media", "has-author").
BOX_WORDS = 60

RULES = ("marked", "marked_share", "author_link", "time", "stamp", "dated", "byline", "follow", "filed")

# What a class or id says of a byline or an author's box (rel="author" and itemprop="author"
# say it too) ...
_BYLINE_MARK = re.compile(r"(?:^|[^a-z])(?:by-?lines?|date-?lines?|authors?|autor|auteur)(?:[^a-z]|$)")
# ... and of a prompt to share or follow.
_SHARE_MARK = re.compile(r"(?:^|[^a-z])(?:share|sharing|social|follow)(?:[^a-z]|$)")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
# How a blog's template files a post under its categories, after the text (WordPress's
# "postmetadata" line and its translations): "This entry was posted in", "Filed under",
# "Dieser Beitrag wurde ... abgelegt", "Erstellt am ... und abgelegt unter", "Publié dans".
_FILED = re.compile(
    r"(?:this\s+(?:entry|post)\s+was\s+(?:posted|filed)|posted\s+in\b|filed\s+under\b"
    r"|(?:dieser|der)\s+(?:eintrag|beitrag|artikel)\s+wurde\b|veröffentlicht\s+in\b|abgelegt\s+unter\b"
    r"|erstellt\s+am\b.{0,60}\babgelegt\s+unter\b|cet\s+article\s+a\s+été\s+publié|publié\s+dans\b"
    r"|classé\s+dans\b|esta\s+entrada\s+fue\s+publicada|publicado\s+en\b|archivado\s+en\b)", re.I)
_AUTHOR_PAGE = re.compile(r"/(?:authors?|autor|auteur|autore)/", re.I)
# A block that is a date and maybe a time, in figures alone: 08.04.2015 12:46, 2019-02-15.
_STAMP = re.compile(r"\d{1,4}[./-]\d{1,2}[./-]\d{2,4},?(?:\s+\d{1,2}[:.h]\d{2}(?:\s*(?:uhr|h|am|pm))?)?", re.I)
_DATED = re.compile(
    r"(?:last\s+)?(?:updated|modified|published|posted|aktualisiert|veröffentlicht|stand(?=:)|erstellt"
    r"|publié|mis\s+à\s+jour|modifié|publicado|actualizado)(?:\s+(?:am|on|le|el))?\s*:?\s+(?:\S+\s+){0,2}\S*\d",
    re.I)
_BY = re.compile(
    r"(?:(?:written|posted|reported|text|words|edited|(?:medically\s+)?reviewed)\s+by|by|geschrieben\s+von"
    r"|text\s+von|von|publié\s+par|par|publicado\s+por|escrito\s+por|por)\s*:?\s+(?P<names>.+)", re.I)
# What may join the names of a byline: "and", commas, a "&".
_JOIN = re.compile(r"^(?:and|und|et|y|e|&|,)$", re.I)
# Where a byline's names end and its date or place begins.
_BY_END = re.compile(r"\s+[|•·–—/]\s+|\s+-\s+|\s+(?:on|am|le|el)\s+(?=\S*\d)")
_NETWORKS = r"(?:facebook|twitter|x|instagram|linkedin|youtube|tiktok|threads|mastodon|bluesky|telegram|whatsapp)"
# A call to follow or share: "Follow us", "Follow Jane Doe on Twitter", "Share this story".
_FOLLOW = re.compile(
    r"(?:like\s+this\s+(?:story|article|post)|share\s+(?:this|it)\b|follow\s+us\b"
    r"|(?-i:[Ff]ollow\s+(?:[A-Z@]\S*\s+){1,4})on\s+" + _NETWORKS +
    r"|folge?n?t?\s+(?:sie\s+)?uns\b|suivez[-\s]nous|s[ií]guenos)", re.I)


def drop_tails(article: etree._Element) -> None:
    """Remove the bylines, datelines and calls to action at the edges of the article's body."""
    for unit, _ in find_tails(article):
        drop(unit)


def find_tails(article: etree._Element, rules: Collection[str] = RULES) -> list[tuple[etree._Element, str]]:
    """The blocks drop_tails removes, each with the name of the rule that picked it."""
    units = list(voting_units(article))
    texts = [text_of(u) for u in units]
    words = [len(WORD.findall(t)) for t in texts]
    prose = [i for i, u in enumerate(units) if words[i] >= PROSE_WORDS and _body(u)
             and linked_length(u) < PROSE_LINKED * len(texts[i])
             and not ("filed" in rules and _filed(u, texts[i], words[i]))]  # long, and still not the story
    if not prose:
        return []  # no running text to frame: the short blocks are the page's content
    found = []
    for i, unit in enumerate(units):
        if prose[0] <= i <= prose[-1] or not words[i] or not _body(unit):
            continue
        rule = _rule(article, unit, texts[i], words[i], i > prose[-1], rules)
        if rule is not None:
            found.append((unit, rule))
    return found


def _body(unit: etree._Element) -> bool:
    """Whether a unit is the body's text: not the lead, a figure, a table or a picture."""
    return unit.get(LEAD_MARK) is None and unit.tag not in ("figure", "table") and unit.find(".//img") is None


def _rule(article: etree._Element, unit: etree._Element, text: str, words: int, tail: bool,
          rules: Collection[str]) -> str | None:
    if words <= MARKED_WORDS:
        if "marked" in rules and _marked_share(article, unit, len(text), _byline_mark) >= COVER:
            return "marked"
        if "marked_share" in rules and _marked_share(article, unit, len(text), _share_mark) >= COVER:
            return "marked_share"
    if words <= LINE_WORDS:
        if "author_link" in rules and _author_link_share(unit) >= COVER * len(text):
            return "author_link"
        if "time" in rules and sum(len(text_of(t)) for t in unit.iter("time")) >= COVER * len(text):
            return "time"
        if is_heading(unit):
            return None  # a heading names a section, whatever its words
        if "stamp" in rules and _STAMP.fullmatch(text):
            return "stamp"
        if "dated" in rules and _DATED.match(text):
            return "dated"
        if "byline" in rules and _byline(text):
            return "byline"
    if tail and words <= CALL_WORDS and "follow" in rules and not is_heading(unit) and _FOLLOW.match(text):
        return "follow"
    if tail and "filed" in rules and _filed(unit, text, words):
        return "filed"
    return None


def _filed(unit: etree._Element, text: str, words: int) -> bool:
    """Whether a block is a blog post's filing line ("This entry was posted in ... and tagged
    ...", "Der Beitrag wurde am ... veröffentlicht und unter ... abgelegt")."""
    return words <= FILED_WORDS and not is_heading(unit) and bool(_FILED.match(text))


def _marks_of(el: etree._Element) -> str:
    """An element's class and id, camelCase split into parts, in lower case."""
    return _CAMEL.sub("-", f"{el.get('class') or ''} {el.get('id') or ''}").lower()


def _byline_mark(el: etree._Element) -> bool:
    if el.get("rel", "").lower() == "author" or "author" in el.get("itemprop", "").lower():
        return True
    return bool(_BYLINE_MARK.search(_marks_of(el)))


def _share_mark(el: etree._Element) -> bool:
    return bool(_SHARE_MARK.search(_marks_of(el)))


def _marked_share(article: etree._Element, unit: etree._Element, length: int,
                  marks: Callable[[etree._Element], bool]) -> float:
    """Share of the unit's text that sits in elements the page marks (`marks`): all of it
    when the unit or a small box around it is marked."""
    for el in [unit, *unit.iterancestors()]:
        if el is article:
            break
        if marks(el):
            # measured only once marked (the cheap test first): a box further out holds all
            # the text of the one inside it, so once one is too big every outer one is too
            if el is unit or len(WORD.findall(text_of(el))) <= BOX_WORDS:
                return 1.0
            break
    if not length:
        return 0.0
    return _marked_length(unit, marks) / length


def _marked_length(el: etree._Element, marks: Callable[[etree._Element], bool]) -> int:
    """Characters of text inside the outermost marked elements under el."""
    total = 0
    for child in el:
        if isinstance(child.tag, str):
            total += len(text_of(child)) if marks(child) else _marked_length(child, marks)
    return total


def _author_link_share(unit: etree._Element) -> int:
    return sum(len(text_of(a)) for a in unit.iter("a")
               if a.get("rel", "").lower() == "author" or _AUTHOR_PAGE.search(a.get("href") or ""))


def _byline(text: str) -> bool:
    """Whether a short line is "By" and names (then maybe a date or a place)."""
    match = _BY.fullmatch(text)
    if match is None:
        return False
    names = _BY_END.split(match["names"], maxsplit=1)[0]
    tokens = re.findall(r"[^\s,]+|,", names)
    named = [t for t in tokens if not _JOIN.match(t)]
    return 2 <= len(named) <= 6 and all(_name(t) for t in named)


def _name(token: str) -> bool:
    """A word of a name: capitalized, and not the end of a sentence unless an initial ("J.")."""
    return token[0].isupper() and (not token.endswith((".", "?", "!")) or len(token) <= 3)
