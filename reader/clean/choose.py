"""Choosing per page between whole candidates: the vote's article, trafilatura's article
alone (precision mode, as upstream.py runs it) and readability's alone.

Each extractor is right on pages where the other is wrong, and the vote inherits some of
both mistakes (a second article readability's container holds, a put-back block that is
another story's). Knowing the answer, the best of the three per page beats each of them by
far more than any rule has, so this module guesses, from what the three texts look like and
how far they agree, whether one of the other two beats the vote on this page.

The guess is two small logistic regressions (one per alternative to the vote) over the
features `features` computes from the three texts alone: no further extraction. Their
coefficients are constants below, fitted by benchmarks/choose_fit.py on both development
sets, each page weighted by how much the choice changes its score (a page where the two
score alike teaches nothing). The vote stays unless a model is confident (THRESHOLD).

Measured (benchmarks/choose_fit.py), it does not pay off, so it is off (ENABLED). Knowing
the answer, the best of the three per page scores 0.9830 on the Mozilla set and 0.9540 on
the trafilatura set against the vote's 0.9750 and 0.9393: less headroom than on pages
nobody tuned on, since the vote's rules were fitted to these. Models loose enough to move
dozens of pages gain a little in 5-fold cross-validation within a set (Mozilla +0.002,
trafilatura set +0.0005) but lose when trained on one set and scored on the other
(-0.003 to -0.014); the ones that transfer without loss move one or two pages. The
features tried (each text's own, their shingle agreement, and what one says that the other
lacks, where and in what kind of lines) tell the two sets' pages apart better than they
tell when an extractor alone is right.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from lxml import etree

from .blocks import REPEAT_MIN_WORDS, linked_length, pieces, words_of

# The chooser's off switch: with it off, the vote's article is always the one, and the
# pipeline keeps no copy of either extractor's article. Off: on the development sets no
# model moved enough pages to matter without losing on the other set (see the docstring).
ENABLED = False

CANDIDATES = ("vote", "trafilatura", "readability")
# A line of fewer words than this is a label, a byline or a link, seldom text.
SHORT_LINE_WORDS = 8
_PUNCTUATION = frozenset(".,;:!?")


class Text:
    """A candidate's text as the features see it: its lines (pieces at block edges), their
    words, its 4-word shingles, and the share of its characters inside links."""

    __slots__ = ("line_words", "lines", "link_density", "shingles", "words")

    def __init__(self, lines: list[str], linked: int):
        self.lines = lines
        self.line_words = [words_of(line) for line in lines]
        words = [w for line in self.line_words for w in line]
        self.words = len(words)
        self.shingles = set(zip(words, words[1:], words[2:], words[3:]))
        chars = sum(len(line) for line in lines)
        self.link_density = linked / chars if chars else 0.0

    @classmethod
    def of(cls, root: etree._Element | None) -> Text:
        if root is None:
            return cls([], 0)
        return cls(pieces(root), linked_length(root))


def _own(text: Text, name: str) -> dict[str, float]:
    """The features of one candidate's text alone."""
    lines = text.lines
    counted = [len(words) for words in text.line_words]
    keys = Counter(" ".join(words) for words in text.line_words if len(words) >= REPEAT_MIN_WORDS)
    chars = sum(len(line) for line in lines) or 1
    return {
        f"{name}_words": math.log1p(text.words),
        f"{name}_lines": math.log1p(len(lines)),
        f"{name}_short": sum(n < SHORT_LINE_WORDS for n in counted) / (len(lines) or 1),
        f"{name}_links": text.link_density,
        f"{name}_repeats": math.log1p(sum(n - 1 for n in keys.values())),
        f"{name}_punct": sum(ch in _PUNCTUATION for line in lines for ch in line) / chars * 10,
    }


def _apart(a: Text, b: Text, name: str) -> dict[str, float]:
    """What a says that b does not, line by line: the share of a's words in lines most of
    whose shingles b lacks, how short and how punctuated those lines are, and where in a
    they sit (0 at its start, 1 at its end). A vote longer than trafilatura by a second
    article ends in long lines of prose trafilatura lacks; by a figure's caption, in the
    middle, by one short line."""
    apart_words = 0
    short = punct = chars = 0
    where = 0.0
    n = 0
    for i, words in enumerate(a.line_words):
        grams = list(zip(words, words[1:], words[2:], words[3:]))
        if not grams or sum(g in b.shingles for g in grams) * 2 >= len(grams):
            continue
        n += 1
        apart_words += len(words)
        short += len(words) < SHORT_LINE_WORDS
        line = a.lines[i]
        punct += sum(ch in _PUNCTUATION for ch in line)
        chars += len(line)
        where += i / max(1, len(a.lines) - 1)
    return {
        f"{name}_share": apart_words / (a.words or 1),
        f"{name}_short": short / n if n else 0.0,
        f"{name}_punct": punct / chars * 10 if chars else 0.0,
        f"{name}_where": where / n if n else 0.5,
    }


def _held(a: Text, b: Text) -> float:
    """Share of a's shingles that b also holds (1 when a has none: nothing to disagree on)."""
    return len(a.shingles & b.shingles) / len(a.shingles) if a.shingles else 1.0


def features(vote: Text, traf: Text, read: Text) -> dict[str, float]:
    """What the chooser knows of a page: each text's own features and their agreement."""
    found = {**_own(vote, "v"), **_own(traf, "t"), **_own(read, "r"),
             **_apart(vote, traf, "v_not_t"), **_apart(traf, vote, "t_not_v"),
             **_apart(vote, read, "v_not_r"), **_apart(read, vote, "r_not_v")}
    found.update({
        "v_in_t": _held(vote, traf), "t_in_v": _held(traf, vote),
        "r_in_t": _held(read, traf), "t_in_r": _held(traf, read),
        "v_in_r": _held(vote, read), "r_in_v": _held(read, vote),
        "t_over_v": found["t_words"] - found["v_words"],
        "r_over_v": found["r_words"] - found["v_words"],
    })
    return found


# The features the models read (of those `features` computes, the ones that carried over
# best between the sets in benchmarks/choose_fit.py).
FEATURES = ("v_in_t", "t_in_v", "r_in_v", "v_in_r", "t_over_v", "r_over_v", "v_links", "t_links", "r_links",
            "v_short", "t_short", "r_short", "v_repeats", "t_repeats", "r_repeats")


def probability(found: dict[str, float], model: Sequence[float]) -> float:
    """A logistic model's probability: model is its intercept, then one weight per FEATURES,
    applied to the features scaled by MEANS and SCALES."""
    z = model[0] + sum(w * (found[name] - m) / s
                       for w, name, m, s in zip(model[1:], FEATURES, MEANS, SCALES))
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


def choose_enabled() -> bool:
    """Whether the chooser runs (the pipeline then keeps each extractor's article alone)."""
    return ENABLED


def choose(found: dict[str, float]) -> str:
    """The candidate to use: an alternative only when its model is confident it beats the vote."""
    if not ENABLED:
        return "vote"
    best, odds = "vote", THRESHOLD
    for name, model in (("trafilatura", TRAFILATURA), ("readability", READABILITY)):
        p = probability(found, model)
        if p > odds:
            best, odds = name, p
    return best


# Fitted by benchmarks/choose_fit.py on both sets (L2 10, pages whose candidates score
# within 0.005 F1 of the vote's left out), and the probability it takes to leave the vote.
THRESHOLD = 0.8
MEANS: tuple[float, ...] = (0.948569, 0.981751, 0.941402, 0.912477, -0.048863, -0.096993, 0.025817, 0.028022,
                            0.030712, 0.251724, 0.265518, 0.281038, 0.112229, 0.106975, 0.134047)
SCALES: tuple[float, ...] = (0.101445, 0.058985, 0.188624, 0.215805, 0.234404, 0.469591, 0.057241, 0.057243,
                             0.06684, 0.230453, 0.241048, 0.238457, 0.420077, 0.440141, 0.480841)
TRAFILATURA: tuple[float, ...] = (-1.028595, 0.107215, 0.061053, -0.019505, 0.04713, 0.202627, 0.018156, 0.181676,
                                  0.023098, 0.023531, -0.052239, -0.092946, -0.001648, -0.011584, 0.157528, 0.082743)
READABILITY: tuple[float, ...] = (-2.41681, 0.049658, 0.112621, -0.066101, 0.076518, 0.001966, 0.178899,
                                  -0.066256, -0.057733, 0.145331, -0.092586, -0.124136, 0.21213, 0.015231, 0.046383,
                                  -0.106113)
