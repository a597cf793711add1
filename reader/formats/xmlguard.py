"""The one hardened way reader reads XML it did not write (OPML, flat or with folders),
and the characters XML cannot carry, which what reader writes leaves out.

expat reads the bytes itself (it sees through any encoding a file declares), with a
handler on every declaration that raises before anything is expanded: OPML never needs a
DOCTYPE or an entity, and entity expansion ("billion laughs") and external entities are
how XML files attack their readers. No tree is built here; callers give element handlers."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any
from xml.parsers import expat

# Characters XML 1.0 cannot carry at all, escaped or not (control characters, lone
# surrogates, U+FFFE and U+FFFF). ElementTree writes them as they are, and a title holding
# one (a feed's, or one typed in) made reader's own OPML export a file nothing could read.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_chars(text: str) -> str:
    """`text` without the characters XML cannot carry."""
    return _NOT_XML.sub("", text)

REFUSED = ("refused: the file declares a DOCTYPE or entities, which OPML never needs"
           " (entity expansion is a known attack on XML readers)")


class Declared(Exception):
    """The file declared a DOCTYPE or an entity: refused, nothing expanded."""


def _refuse(*_args: Any) -> Any:  # stands in for handlers of every signature: it raises
    raise Declared(REFUSED)


def read_guarded(
    data: bytes,
    start: Callable[[str, dict[str, str]], None] | None = None,
    end: Callable[[str], None] | None = None,
) -> None:
    """Parse the whole document, calling `start(tag, attributes)` and `end(tag)` per element.
    Raises Declared, expat.ExpatError (not well-formed), LookupError (an encoding Python
    has no codec for) or RecursionError; whatever the handlers raise passes through."""
    parser = expat.ParserCreate()
    parser.StartDoctypeDeclHandler = _refuse
    parser.EntityDeclHandler = _refuse
    parser.UnparsedEntityDeclHandler = _refuse
    parser.ExternalEntityRefHandler = _refuse
    if start is not None:
        parser.StartElementHandler = start
    if end is not None:
        parser.EndElementHandler = end
    parser.Parse(data, True)
