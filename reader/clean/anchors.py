"""Where a highlight sits in an article's text, and its marks in the article's HTML.

A highlight is kept as the W3C Web Annotation selectors describe one: its quote with
about CONTEXT characters on either side (TextQuote), and its start and end offsets in the
article's plain text (TextPosition, `contents.text`, which is plain_text(html)). Text
changes (a reclean, a better cleaner, a page updated on its site), so `locate` finds a
quote again: exactly with its context first, then approximately, scored on the quote's
likeness, its context and its nearness to the old place. What it cannot place with
confidence it does not place at all: a highlight painted over the wrong words is worse
than one listed apart.

Matching ignores whitespace altogether. The browser's DOM text of the article (what a
selection's quote and context are taken from) has no blank line between two paragraphs
where the plain text has one, and folds spaces differently; the letters are the same.

Pure functions of strings, no I/O: the store calls `locate` in the transaction that
writes a new text, and the reader view calls `paint`.
"""

from __future__ import annotations

import bisect
import difflib
import hashlib
import html as htmlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

CONTEXT = 32  # characters of context kept on each side of a quote
# An approximate match is trusted when the quote found is at least this like the quote
# kept, or nearly so with its context found around it too.
SIMILAR = 0.85
SIMILAR_WITH_CONTEXT = 0.72
# Two places scoring within this of each other: the highlight cannot tell them apart.
AMBIGUOUS = 0.02
# Exact occurrences weighed at most (a quote of one common word would have thousands).
MAX_OCCURRENCES = 2000
# Quotes longer than this are matched approximately by their head and their tail.
LONG_QUOTE = 800

_SPACE = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Anchor:
    """A place in a text: [start, end) and what surrounds it there."""

    start: int
    end: int
    quote: str
    prefix: str
    suffix: str
    exact: bool  # found as it was (whitespace aside), not approximately


def text_hash(text: str) -> str:
    """The hash a highlight keeps of the text its offsets are in."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def at(text: str, start: int, end: int, *, exact: bool = True) -> Anchor:
    return Anchor(start, end, text[start:end], text[max(0, start - CONTEXT):start], text[end:end + CONTEXT], exact)


class _Squeezed:
    """A text without its whitespace, and where each of its characters was."""

    def __init__(self, text: str) -> None:
        self.where = [i for i, c in enumerate(text) if not c.isspace()]
        self.text = "".join(text[i] for i in self.where)

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original [start, end) of squeezed [start, end) (end > start)."""
        return self.where[start], self.where[end - 1] + 1

    def index(self, offset: int) -> int:
        """The squeezed index of an original offset (the next character that is not a space)."""
        return bisect.bisect_left(self.where, offset)


def squeeze(text: str) -> str:
    return _SPACE.sub("", text)


def occurrences(text: str, quote: str, at_most: int = 1000) -> int:
    """How often the quote is in the text, whitespace aside (for a refusal's reason)."""
    body, wanted = squeeze(text), squeeze(quote)
    if not wanted:
        return 0
    count, i = 0, body.find(wanted)
    while i >= 0 and count < at_most:
        count, i = count + 1, body.find(wanted, i + 1)
    return count


def locate(text: str, quote: str, prefix: str = "", suffix: str = "", start: int | None = None,
           end: int | None = None) -> Anchor | None:
    """The place of a quote (with its context) in `text`, or None when it cannot be placed
    with confidence. Offsets alone (no quote) are taken as they are, if they fit the text;
    offsets with a quote are a hint: taken when the quote is there, else a place near them."""
    if not quote.strip():
        if start is None or end is None or not 0 <= start < end <= len(text) or not text[start:end].strip():
            return None
        return at(text, start, end)
    wanted = squeeze(quote)
    if start is not None and end is not None and 0 <= start < end <= len(text) \
            and squeeze(text[start:end]) == wanted:
        return at(text, start, end)
    body = _Squeezed(text)
    if not body.text:
        return None
    before, after = squeeze(prefix)[-CONTEXT:], squeeze(suffix)[:CONTEXT]
    near = body.index(start) if start is not None and 0 <= start <= len(text) else None
    found = _exact(body.text, wanted, before, after, near)
    if found is not None:
        s, e = body.span(*found)
        return at(text, s, e)
    found = _approximate(body.text, wanted, before, after, near)
    if found is None:
        return None
    s, e = body.span(*found)
    return at(text, s, e, exact=False)


def _context(text: str, start: int, end: int, before: str, after: str) -> float:
    """How much of the kept context is found around [start, end): 0 to 1 (1 with none kept)."""
    scores = []
    if before:
        have = text[max(0, start - len(before)):start]
        same = 0
        while same < min(len(have), len(before)) and have[-1 - same] == before[-1 - same]:
            same += 1
        scores.append(same / len(before))
    if after:
        have = text[end:end + len(after)]
        same = 0
        while same < min(len(have), len(after)) and have[same] == after[same]:
            same += 1
        scores.append(same / len(after))
    return sum(scores) / len(scores) if scores else 1.0


def _nearness(text: str, start: int, near: int | None) -> float:
    return 1.0 if near is None else 1.0 - abs(start - near) / max(1, len(text))


def _best(scored: list[tuple[float, int, int]]) -> tuple[int, int] | None:
    """The best-scored place, unless another place scores as well."""
    scored.sort(reverse=True)
    if len(scored) > 1 and scored[0][0] - scored[1][0] < AMBIGUOUS and abs(scored[0][1] - scored[1][1]) > 0:
        return None
    return scored[0][1], scored[0][2]


def _exact(text: str, quote: str, before: str, after: str, near: int | None) -> tuple[int, int] | None:
    places: list[int] = []
    i = text.find(quote)
    while i >= 0 and len(places) < MAX_OCCURRENCES:
        places.append(i)
        i = text.find(quote, i + 1)
    if not places:
        return None
    if len(places) == 1:
        return places[0], places[0] + len(quote)
    # Context decides; the old place only breaks a tie between equal contexts.
    scored = [(_context(text, p, p + len(quote), before, after) + 0.01 * _nearness(text, p, near),
               p, p + len(quote)) for p in places]
    if not before and not after and near is None:
        return None  # a repeated quote and nothing to tell its places apart
    return _best(scored)


def _approximate(text: str, quote: str, before: str, after: str, near: int | None) -> tuple[int, int] | None:
    if len(quote) > LONG_QUOTE:
        return _approximate_long(text, quote, before, after, near)
    candidates = _candidates(text, quote, before, after)
    scored = []
    for centre in candidates:
        placed = _refine(text, quote, centre)
        if placed is None:
            continue
        s, e, likeness = placed
        context = _context(text, s, e, before, after)
        if likeness >= SIMILAR or (likeness >= SIMILAR_WITH_CONTEXT and context >= 0.6):
            scored.append((0.6 * likeness + 0.3 * context + 0.1 * _nearness(text, s, near), s, e))
    return _best(_distinct(scored)) if scored else None


def _approximate_long(text: str, quote: str, before: str, after: str, near: int | None) -> tuple[int, int] | None:
    """A long quote by its head and its tail, each placed on its own (a character-level
    comparison of two 5,000-character strings takes seconds)."""
    part = LONG_QUOTE // 2
    head = _approximate(text, quote[:part], before, "", near)
    tail = _approximate(text, quote[-part:], "", after, None if near is None else near + len(quote) - part)
    if head is None or tail is None:
        return None
    s, e = head[0], tail[1]
    if not 0.7 * len(quote) <= e - s <= 1.3 * len(quote):
        return None
    return s, e


def _distinct(scored: list[tuple[float, int, int]]) -> list[tuple[float, int, int]]:
    """One score per place (two candidates often refine to the same place)."""
    best: dict[tuple[int, int], float] = {}
    for score, s, e in scored:
        best[(s, e)] = max(score, best.get((s, e), 0.0))
    return [(score, s, e) for (s, e), score in best.items()]


def _candidates(text: str, quote: str, before: str, after: str) -> list[int]:
    """Where the quote may start: pieces of it (and of its context) found exactly vote for
    a start, and the starts most voted for, gathered by nearness, are tried."""
    n = len(quote)
    size = max(4, min(16, n // 4))
    votes: list[int] = []
    if n >= size:
        steps = max(1, (n - size) // 15)
        for offset in range(0, n - size + 1, steps):
            piece = quote[offset:offset + size]
            i, count = text.find(piece), 0
            while i >= 0 and count < 50:
                votes.append(i - offset)
                i, count = text.find(piece, i + 1), count + 1
    for piece, shift in ((before[-size:], size), (after[:size], -n)):
        if len(piece) == size:
            i, count = text.find(piece), 0
            while i >= 0 and count < 50:
                votes.append(i + shift)
                i, count = text.find(piece, i + 1), count + 1
    if not votes:
        return []
    votes.sort()
    spread = n // 3 + 8
    groups: list[list[int]] = [[votes[0]]]
    for vote in votes[1:]:
        if vote - groups[-1][-1] <= spread:
            groups[-1].append(vote)
        else:
            groups.append([vote])
    groups.sort(key=len, reverse=True)
    return [group[len(group) // 2] for group in groups[:6]]


def _refine(text: str, quote: str, centre: int) -> tuple[int, int, float] | None:
    """The quote's best place in a window around `centre`, and how like the quote it is."""
    n = len(quote)
    lo = max(0, centre - n // 4 - 8)
    window = text[lo:centre + n + n // 4 + 8]
    blocks = [b for b in difflib.SequenceMatcher(None, quote, window, autojunk=False).get_matching_blocks()
              if b.size >= 3]
    if not blocks:
        return None
    first, last = blocks[0], blocks[-1]
    s = lo + max(0, first.b - min(first.a, 3))  # an edit at the very start: up to 3 characters taken in
    e = lo + min(len(window), last.b + last.size + min(n - last.a - last.size, 3))
    if e <= s:
        return None
    likeness = difflib.SequenceMatcher(None, quote, text[s:e], autojunk=False).ratio()
    return s, e, likeness


# -- marks in the HTML ---------------------------------------------------------------------

# A tag of the sanitizer's output, whose attribute values are double-quoted (and may hold >).
_TAG = re.compile(r"<(?:[^>\"']|\"[^\"]*\"|'[^']*')*>")
_ENTITY = re.compile(r"&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);?")
# How far the alignment looks for a letter of the plain text in the HTML's text before it
# gives that letter up (texts that do not quite agree: marks less exact, never misplaced).
_LOOKAHEAD = 200


@dataclass(frozen=True, slots=True)
class Mark:
    id: int
    start: int  # in the plain text
    end: int
    color: str


def _html_text(fragment: str) -> tuple[list[str], str, list[tuple[int, int, int]]]:
    """The HTML cut into tags and text runs, the text its runs decode to, and for each
    character of that text (run index, start, end) in its run's source."""
    parts: list[str] = []
    chars: list[str] = []
    where: list[tuple[int, int, int]] = []
    last = 0
    for match in _TAG.finditer(fragment):
        parts.append(fragment[last:match.start()])
        parts.append(match.group())
        last = match.end()
    parts.append(fragment[last:])
    for index in range(0, len(parts), 2):
        run = parts[index]
        i = 0
        while i < len(run):
            if run[i] == "&" and (entity := _ENTITY.match(run, i)):
                decoded = htmlib.unescape(entity.group())
                for c in decoded:
                    chars.append(c)
                    where.append((index, i, entity.end()))
                i = entity.end()
            else:
                chars.append(run[i])
                where.append((index, i, i + 1))
                i += 1
    return parts, "".join(chars), where


def _align(plain: str, dom: str) -> list[int]:
    """For each character of the plain text, the index of the same character in the HTML's
    text (-1 for whitespace and for a letter the HTML's text does not have)."""
    mapped = [-1] * len(plain)
    j = 0
    for i, c in enumerate(plain):
        if c.isspace():
            continue
        k = j
        while k < len(dom) and k - j < _LOOKAHEAD and (dom[k] != c):
            k += 1
        if k < len(dom) and dom[k] == c:
            mapped[i] = k
            j = k + 1
    return mapped


def paint(fragment: str, plain: str, marks: Sequence[Mark]) -> str:
    """The HTML with each mark's plain-text span wrapped in <mark class="hl" data-hl=ID>.
    A span crossing elements becomes a <mark> in each text run it touches; runs of
    whitespace alone (between blocks, where a <mark> would not be valid) are left as they
    are. Where marks overlap, the one that starts later is on top. The first <mark> of
    each highlight has id="hl-ID", which a link to it scrolls to."""
    if not marks:
        return fragment
    parts, dom, where = _html_text(fragment)
    mapped = _align(plain, dom)
    cover: list[list[Mark]] = [[] for _ in dom]
    for mark in sorted(marks, key=lambda m: (m.start, m.id)):
        inside = [k for k in mapped[max(0, mark.start):min(len(plain), mark.end)] if k >= 0]
        if not inside:
            continue
        for k in range(inside[0], inside[-1] + 1):
            cover[k].append(mark)
    # Per text run with a mark: its characters, split where what covers them changes.
    by_run: dict[int, list[int]] = {}
    for k, (run, _, _) in enumerate(where):
        by_run.setdefault(run, []).append(k)
    named: set[int] = set()
    for run, ks in by_run.items():
        if any(cover[k] for k in ks):
            parts[run] = _paint_run(parts[run], ks, where, cover, dom, named)
    return "".join(parts)


def _paint_run(source: str, ks: list[int], where: list[tuple[int, int, int]], cover: list[list[Mark]], dom: str,
               named: set[int]) -> str:
    """One text run's source with its covered characters wrapped, a <mark> per stretch
    that the same marks cover. `named`: the highlights whose first mark was written."""
    out: list[str] = []
    pos = 0
    stretches: list[list[int]] = []
    for k in ks:
        if cover[k] and stretches and stretches[-1] and cover[stretches[-1][-1]] == cover[k] \
                and stretches[-1][-1] == k - 1:
            stretches[-1].append(k)
        elif cover[k]:
            stretches.append([k])
    for stretch in stretches:
        s, e = where[stretch[0]][1], where[stretch[-1]][2]
        piece = source[s:e]
        out.append(source[pos:s])
        if all(dom[k].isspace() for k in stretch):
            out.append(piece)
        else:
            over = cover[stretch[0]]
            top = over[-1]
            anchor = "" if top.id in named else f' id="hl-{top.id}"'
            named.add(top.id)
            both = f' data-hls="{" ".join(str(m.id) for m in over)}"' if len(over) > 1 else ""
            out.append(f'<mark class="hl hl-{top.color}"{anchor} data-hl="{top.id}"{both}>{piece}</mark>')
        pos = e
    out.append(source[pos:])
    return "".join(out)
