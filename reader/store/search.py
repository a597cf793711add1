"""What a person types into the search box, made into a safe FTS5 query."""

from __future__ import annotations

import re


def fts_query(text: str) -> str:
    """Turn what a person typed into a safe FTS5 query: "quoted phrases" stay phrases,
    every other word must appear, and no character can be FTS5 syntax. Empty if nothing
    searchable is left."""
    terms = []
    for phrase, word in re.findall(r'"([^"]*)"|(\S+)', text):
        term = (phrase or word).replace('"', " ").strip()
        if re.search(r"\w", term):
            terms.append('"' + term + '"')
    return " ".join(terms)
