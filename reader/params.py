"""Reading numbers and yes/no out of what people and programs send: query strings,
forms, JSON, environment variables. One parser for each, with the caps every interface
shares."""

from __future__ import annotations


from .errors import Invalid
from .clean.sanitize import plain_text

# SQLite integers are signed 64-bit: a larger id made the driver raise OverflowError.
MAX_ID = 2**63 - 1
MAX_LIMIT = 500
# Deep search pages cost what skipping their offset costs; nobody reads past this.
SEARCH_MAX_OFFSET = 10_000
MAX_TITLE = 500

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("", "0", "false", "no", "off")


def parse_bool(value: object, name: str) -> bool:
    """A yes/no from a query string, a form or JSON; missing is no."""
    if value is None or isinstance(value, bool):
        return bool(value)
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise Invalid(f"{name} must be 1 or 0")


def parse_int(value: object, name: str, default: int | None = None, *, low: int = 1, high: int = MAX_ID) -> int | None:
    """A whole number within [low, high] from a query string, a form or JSON; missing
    (None or "") is `default`."""
    if value is None or value == "":
        return default
    # JSON's 1e400 is an infinite float (int() raises OverflowError: a 500), and 1.5 would
    # quietly become 1: a float counts only when it is whole and finite.
    if isinstance(value, bool) or not isinstance(value, (int, float, str)) or (
            isinstance(value, float) and not value.is_integer()):
        raise Invalid(f"{name} must be an integer")
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError):
        raise Invalid(f"{name} must be an integer") from None
    if not low <= number <= high:
        raise Invalid(f"{name} must be between {low} and {high}")
    return number


def parse_title(value: object, name: str = "title") -> str | None:
    """A title as plain text, cut to MAX_TITLE characters; None when empty. Lone
    surrogates (which UTF-8, hence SQLite, cannot store) are replaced."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise Invalid(f"{name} must be a string")
    text = value.encode("utf-8", "replace").decode("utf-8")
    return plain_text(text)[:MAX_TITLE] or None
