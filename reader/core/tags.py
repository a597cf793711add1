"""Tag names as a person types them, for articles and highlights alike."""

from __future__ import annotations

from ..clean.sanitize import valid_text
from ..errors import Invalid

MAX_TAG = 100  # characters in one tag's name
MAX_TAGS = 100  # tags on one article


def parse_tags(value: object, *, limit: int = MAX_TAGS, on: str = "an article") -> list[str]:
    """Tags from a list of names or one comma-separated string: spaces folded, empty
    ones dropped, duplicates (in any case) once; at most `limit` of them on `on`."""
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise Invalid("tags must be a list of names (or names separated by commas)")
    seen: dict[str, str] = {}
    for raw in value:
        name = " ".join(valid_text(raw).split())  # a lone surrogate (JSON can spell one) becomes "?"
        if len(name) > MAX_TAG:
            raise Invalid(f"a tag is at most {MAX_TAG} characters")
        if name:
            seen.setdefault(name.lower(), name)
    if len(seen) > limit:
        raise Invalid(f"at most {limit} tags on {on}")
    return list(seen.values())
