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
import functools
import hashlib
import html as htmlib
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

CONTEXT = 32  # characters of context kept on each side of a quote
# Characters of context weighed when given (the browser sends more than is kept, so that
# a quote repeated with the same 32 characters around it is still told apart).
MAX_CONTEXT = 128
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

_WORD = re.compile(r"\S+")
_LETTER = re.compile(r"\S")


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


class Squeezed:
    """A text without its whitespace, and the way back to where each of its characters
    was: the squeezed length before each block of BLOCK characters, so that no list of
    every character (or word) is made, which cost more than the search itself."""

    BLOCK = 256

    def __init__(self, text: str) -> None:
        self.raw = text
        self.text = squeeze(text)
        self.before = [0]
        for block in range(0, len(text), self.BLOCK):
            self.before.append(self.before[-1] + len(squeeze(text[block:block + self.BLOCK])))

    def pos(self, q: int) -> int:
        """The original offset of squeezed character q (0 <= q < len(self.text))."""
        block = bisect.bisect_right(self.before, q) - 1
        start = block * self.BLOCK
        need = q - self.before[block]
        for word in _WORD.finditer(self.raw, start, start + self.BLOCK):
            size = word.end() - word.start()
            if need < size:
                return word.start() + need
            need -= size
        raise IndexError(q)

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original [start, end) of squeezed [start, end) (end > start)."""
        return self.pos(start), self.pos(end - 1) + 1

    def index(self, offset: int) -> int:
        """The squeezed index of an original offset: of its character, or of the next one
        that is not a space."""
        offset = max(0, min(offset, len(self.raw)))
        block = offset // self.BLOCK
        return self.before[block] + len(squeeze(self.raw[block * self.BLOCK:offset]))


def squeeze(text: str) -> str:
    """The text without its whitespace (str.split's, as _WORD's: Unicode's)."""
    return "".join(text.split())


def occurrences(text: str, quote: str, at_most: int = 1000) -> int:
    """How often the quote is in the text, whitespace aside (for a refusal's reason)."""
    body, wanted = squeeze(text), squeeze(quote)
    if not wanted:
        return 0
    count, i = 0, body.find(wanted)
    while i >= 0 and count < at_most:
        count, i = count + 1, body.find(wanted, i + 1)
    return count


def locate(text: str | Squeezed, quote: str, prefix: str = "", suffix: str = "", start: int | None = None,
           end: int | None = None) -> Anchor | None:
    """The place of a quote (with its context) in `text`, or None when it cannot be placed
    with confidence. Offsets alone (no quote) are taken as they are, if they fit the text;
    offsets with a quote are a hint: taken when the quote is there, else a place near them.
    Placing many quotes in one text: give it as Squeezed(text), made once."""
    body = text if isinstance(text, Squeezed) else None
    text = body.raw if body is not None else str(text)
    if not quote.strip():
        if start is None or end is None or not 0 <= start < end <= len(text) or not text[start:end].strip():
            return None
        return at(text, start, end)
    wanted = squeeze(quote)
    if start is not None and end is not None and 0 <= start < end <= len(text) \
            and squeeze(text[start:end]) == wanted:
        return at(text, start, end)
    if body is None:
        body = Squeezed(text)
    if not body.text:
        return None
    before, after = squeeze(prefix)[-MAX_CONTEXT:], squeeze(suffix)[:MAX_CONTEXT]
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


_LEAD_OPEN = re.compile(r"<p\s[^>]*class=[\"']?lead\b", re.IGNORECASE)
_CAPTION_OPEN = re.compile(r"<figcaption[\s>]", re.IGNORECASE)


def _outside_body(tag: str, inside: str | None) -> str | None:
    """After `tag`: the closing tag that ends the lead or caption we are in (None: in the
    body). Neither nests in itself, so the first closing tag of its name ends it."""
    if inside is not None:
        return None if tag.lower().startswith(inside) else inside
    if _LEAD_OPEN.match(tag):
        return "</p"
    if _CAPTION_OPEN.match(tag):
        return "</figcaption"
    return None


class _Html:
    """The HTML cut into tags and text runs (even indexes of `parts`), the text its runs
    decode to (entities decoded), and the way back from that text to each run's source."""

    def __init__(self, fragment: str) -> None:
        self.parts: list[str] = []
        last = 0
        for match in _TAG.finditer(fragment):
            self.parts += [fragment[last:match.start()], match.group()]
            last = match.end()
        self.parts.append(fragment[last:])
        decoded: list[str] = []
        self.run_starts: list[int] = []  # where each run's text starts in self.text
        self.maps: dict[int, list[int]] = {}  # for runs with entities: source offset per character (and the end)
        at = 0
        outside: str | None = None  # the closing tag of a part that is not the body, while inside it
        for index in range(0, len(self.parts), 2):
            run = self.parts[index]
            self.run_starts.append(at)
            if index:
                outside = _outside_body(self.parts[index - 1], outside)
            if outside is not None:
                # the lead and the captions are not in the body text highlights are
                # placed in (clean/parts.py): their runs hold no text here, so no mark
                # lands in them and the body's offsets line up with the plain text's
                self.parts[index] = run
                decoded.append("")
                continue
            if "&" in run:
                chars: list[str] = []
                offsets: list[int] = []
                i = 0
                for entity in _ENTITY.finditer(run):
                    chars.append(run[i:entity.start()])
                    offsets += range(i, entity.start())
                    text = htmlib.unescape(entity.group())
                    chars.append(text)
                    offsets += [entity.start()] * len(text)
                    i = entity.end()
                chars.append(run[i:])
                offsets += range(i, len(run))
                text = "".join(chars)
                self.maps[index // 2] = [*offsets, len(run)]
            else:
                text = run
            decoded.append(text)
            at += len(text)
        self.run_starts.append(at)
        self.text = "".join(decoded)

    def source(self, run: int, offset: int) -> int:
        """The source offset in run `run` (counted in runs) of its text's offset."""
        found = self.maps.get(run)
        return found[offset] if found is not None else offset


def _squeezed_map(plain: Squeezed, dom: Squeezed) -> list[int] | None:
    """None when the two texts have the same letters (the usual case: the plain text is
    made from this HTML); else, for each squeezed letter of the plain text, the index of
    the same letter in the HTML's (-1 where it has none), aligned greedily."""
    if plain.text == dom.text:
        return None
    mapped = [-1] * len(plain.text)
    j = 0
    for i, c in enumerate(plain.text):
        k = dom.text.find(c, j, j + _LOOKAHEAD)
        if k >= 0:
            mapped[i] = k
            j = k + 1
    return mapped


def _letters_in(text: str, start: int, end: int, plain_spaces: bool) -> int:
    """How many letters (characters other than whitespace) text[start:end] has. With
    `plain_spaces` (its only whitespace is spaces and newlines) they are counted in place,
    without a copy of the slice or of its words."""
    if plain_spaces:
        end = min(end, len(text))
        return max(0, end - start) - text.count(" ", start, end) - text.count("\n", start, end)
    return len(squeeze(text[start:end]))


def _letters_before(text: str, offsets: Sequence[int], plain_spaces: bool) -> list[int]:
    """How many letters `text` has before each of these offsets (ascending), counted in
    one pass."""
    out, at, count = [], 0, 0
    for offset in offsets:
        count += _letters_in(text, at, offset, plain_spaces)
        at = offset
        out.append(count)
    return out


def _letter_offsets(text: str, letters: Sequence[int], plain_spaces: bool) -> list[int]:
    """The offset in `text` of each of these letters (ascending squeezed indexes, each
    within the text), found in one pass: a step takes in as many characters as letters
    are still to pass, so it never passes the letter sought, and the few steps left are
    over the spaces it took in."""
    out, at, count = [], 0, 0  # count: the letters in text[:at]
    for q in letters:
        need = q - count
        while need > 0:
            if at >= len(text):
                raise IndexError(q)
            got = _letters_in(text, at, at + need, plain_spaces)
            at, count, need = min(at + need, len(text)), count + got, need - got
        found = _LETTER.search(text, at)
        assert found is not None  # q is a letter of the text
        at = found.start()
        out.append(at)
    return out


@dataclass(frozen=True, slots=True)
class _Canvas:
    html: _Html
    same: bool  # the HTML's text has the plain text's letters
    plain_spaces: tuple[bool, bool]  # the plain text's and the HTML's: no whitespace but spaces and newlines


def _plain_spaces(text: str, squeezed: str) -> bool:
    return len(squeezed) == len(text) - text.count(" ") - text.count("\n")


@functools.lru_cache(maxsize=16)
def _canvas(fragment: str, plain: str) -> _Canvas:
    """The HTML cut into its text runs, whether its text has the plain text's letters (the
    usual case: the plain text is made from this HTML), and whether letters can be counted
    in each by counting spaces. Kept for the next painting of the same text (a highlight
    made or changed paints its article again): they were a quarter of a painting."""
    html = _Html(fragment)
    ours, theirs = squeeze(plain), squeeze(html.text)
    return _Canvas(html, ours == theirs, (_plain_spaces(plain, ours), _plain_spaces(html.text, theirs)))


def _by_letters(plain: str, dom: str, marks: Sequence[Mark],
                plain_spaces: tuple[bool, bool]) -> list[tuple[int, int, Mark]]:
    """The marks' [start, end) in the HTML's text `dom`, which has the plain text's
    letters. Every offset is found in one pass over each text, where finding each on its
    own (Squeezed) cost more than the rest of painting."""
    ends = sorted({o for m in marks for o in (max(0, min(m.start, len(plain))), max(0, min(m.end, len(plain))))})
    letters = dict(zip(ends, _letters_before(plain, ends, plain_spaces[0]), strict=True))
    wanted: list[tuple[int, int, Mark]] = []
    for mark in marks:
        qs = letters[max(0, min(mark.start, len(plain)))]
        qe = letters[max(0, min(mark.end, len(plain)))]
        if qe > qs:
            wanted.append((qs, qe, mark))
    places = sorted({q for qs, qe, _ in wanted for q in (qs, qe - 1)})
    found = dict(zip(places, _letter_offsets(dom, places, plain_spaces[1]), strict=True))
    return [(found[qs], found[qe - 1] + 1, mark) for qs, qe, mark in wanted]


def _aligned(plain: str, dom: str, marks: Sequence[Mark]) -> list[tuple[int, int, Mark]]:
    """The marks' [start, end) in the HTML's text when its letters differ from the plain
    text's: each letter of theirs found in it as `_squeezed_map` aligns them."""
    ours, theirs = Squeezed(plain), Squeezed(dom)
    mapped = _squeezed_map(ours, theirs)
    spans: list[tuple[int, int, Mark]] = []
    for mark in marks:
        qs, qe = ours.index(max(0, mark.start)), ours.index(min(len(plain), mark.end))
        if mapped is not None:
            inside = [k for k in mapped[qs:qe] if k >= 0]
            if not inside:
                continue
            qs, qe = inside[0], inside[-1] + 1
        if qe <= qs or qe > len(theirs.text):
            continue
        spans.append((theirs.pos(qs), theirs.pos(qe - 1) + 1, mark))
    return spans


def paint(fragment: str, plain: str, marks: Sequence[Mark]) -> str:
    """The HTML with each mark's plain-text span wrapped in <mark class="hl" data-hl=ID>.
    A span crossing elements becomes a <mark> in each text run it touches; runs of
    whitespace alone (between blocks, where a <mark> would not be valid) are left as they
    are. Where marks overlap, the one that starts later is on top. The first <mark> of
    each highlight has id="hl-ID", which a link to it scrolls to."""
    if not marks:
        return fragment
    canvas = _canvas(fragment, plain)
    html = canvas.html
    ordered = sorted(marks, key=lambda m: (m.start, m.id))
    spans = (_by_letters(plain, html.text, ordered, canvas.plain_spaces) if canvas.same
             else _aligned(plain, html.text, ordered))
    parts = list(html.parts)  # the kept cut stays as it is
    # Elementary stretches: between two consecutive ends of spans (or of text runs), the
    # same marks cover, swept from left to right.
    events = sorted({e for s, t, _ in spans for e in (s, t)})
    pieces: dict[int, list[tuple[int, int, list[Mark]]]] = {}  # run -> (start, end in its text, marks)
    pending = sorted(spans, key=lambda span: span[0])
    active: list[tuple[int, int, Mark]] = []
    taken = 0
    for left, right in itertools.pairwise(events):
        while taken < len(pending) and pending[taken][0] <= left:
            active.append(pending[taken])
            taken += 1
        active = [span for span in active if span[1] > left]
        if not active:
            continue
        over = sorted((span[2] for span in active), key=lambda m: (m.start, m.id))
        first = bisect.bisect_right(html.run_starts, left) - 1
        for run in range(first, len(html.run_starts) - 1):
            base, end = html.run_starts[run], html.run_starts[run + 1]
            if base >= right:
                break
            a, z = max(left, base), min(right, end)
            if z > a and html.text[a:z].strip():
                pieces.setdefault(run, []).append((a - base, z - base, over))
    named: set[int] = set()
    for run, found in pieces.items():
        source = parts[2 * run]
        out, pos = [], 0
        for left, right, over in found:
            s, e = html.source(run, left), html.source(run, right)
            top = over[-1]
            anchor = "" if top.id in named else f' id="hl-{top.id}"'
            named.add(top.id)
            both = f' data-hls="{" ".join(str(m.id) for m in over)}"' if len(over) > 1 else ""
            out += [source[pos:s], f'<mark class="hl hl-{top.color}"{anchor} data-hl="{top.id}"{both}>',
                    source[s:e], "</mark>"]
            pos = e
        out.append(source[pos:])
        parts[2 * run] = "".join(out)
    return "".join(parts)
