"""What a person types into the search box, made into a safe FTS5 query."""

from __future__ import annotations

import re

# What the search indexes leave out of every text (store/schema.py, version 24), by code
# point: the soft hyphen, the zero-width space, the word joiner and the zero-width no-break
# space. A term pasted from a page that marks its words' breaks is looked up without them too.
INVISIBLE_CODES = (0xAD, 0x200B, 0x2060, 0xFEFF)
_INVISIBLE = dict.fromkeys(INVISIBLE_CODES)

# The most a search may ask for. FTS5's cost grows with the square of the terms (800
# copies of "a" took 24.7 s), and nobody types more than a few words: past these, the
# search is refused with a message rather than run.
MAX_SEARCH_TERMS = 32
MAX_SEARCH_CHARS = 500


def fts_terms(text: str) -> list[str]:
    """The distinct terms of what a person typed, each a quoted FTS5 string: "quoted
    phrases" stay phrases, every other word is one term, and no character can be FTS5
    syntax. A term typed twice counts once (it changes nothing in what matches)."""
    terms: dict[str, None] = {}
    for phrase, word in re.findall(r'"([^"]*)"|(\S+)', text.translate(_INVISIBLE)):
        term = " ".join((phrase or word).replace('"', " ").split())
        if re.search(r"\w", term):
            terms.setdefault('"' + term.lower() + '"')
    return list(terms)


def fts_query(text: str) -> str:
    """A safe FTS5 query for what a person typed: every term must appear. Empty if
    nothing searchable is left."""
    return " ".join(fts_terms(text))
