"""The one hardened way reader reads XML it did not write (OPML, flat or with folders),
and the characters XML cannot carry, which what reader writes leaves out.

expat reads the bytes, with a handler on every declaration that raises before anything is
expanded: OPML never needs a DOCTYPE or an entity, and entity expansion ("billion
laughs") and external entities are how XML files attack their readers. No tree is built
here; callers give element handlers.

expat reads UTF-8, UTF-16, ISO-8859-1 and ASCII itself, and single-byte encodings through
Python's codecs; a multi-byte one (Shift_JIS, EUC-JP, GB2312, Big5, UTF-7, which Japanese
and Chinese feed readers write) it refuses with a ValueError. utf8_document decodes those
with Python's codec first and hands expat UTF-8, so the declarations are looked for in
what the file says once decoded (a DOCTYPE spelled in UTF-7 is still a DOCTYPE)."""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable
from typing import Any
from xml.parsers import expat

from ..clean.sanitize import valid_text

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


class Undecodable(Exception):
    """The file's bytes are not text in the encoding it declares; the message says where."""


# The encodings expat reads without help, by the only names it knows them by (it hands
# any other name, "utf8" or "latin1" included, to Python's codecs, single-byte ones only)
_EXPAT_READS = frozenset({"utf-8", "utf-16", "iso-8859-1", "us-ascii"})
# The XML declaration, which must open the document; an encoding name is ASCII (XML 1.0, 4.3.3)
_DECLARED = re.compile(rb"""<\?xml\s[^>]*?\bencoding\s*=\s*(["'])([A-Za-z][A-Za-z0-9._-]*)\1""")
_DECLARATION = re.compile(r"""(\A<\?xml\s[^>]*?\bencoding\s*=\s*)(["'])[^"']*\2""")


def utf8_document(data: bytes) -> bytes:
    """The document as expat can read it: the same bytes when expat reads their encoding
    itself, else decoded by the codec the declaration names (or UTF-32, told by its first
    bytes) and written as UTF-8 with the declaration saying so. A lone surrogate that
    decoding made (UTF-7 can spell one) is replaced as the API replaces it.
    Raises LookupError (an encoding Python has no codec for) or Undecodable."""
    if data.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        encoding = "utf-32"  # the codec reads the mark and drops it
    elif data[:4] in (b"<\0\0\0", b"\0\0\0<"):
        encoding = "utf-32-le" if data[0] else "utf-32-be"
    elif data.startswith((codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data  # expat reads these, and a byte order mark outranks a declaration
    else:
        declared = _DECLARED.match(data[:1024])
        if declared is None:
            return data  # no declaration: UTF-8, or UTF-16 that expat tells by its first bytes
        encoding = declared.group(2).decode("ascii")
        if encoding.lower() in _EXPAT_READS:
            return data
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise Undecodable(f"it declares encoding {encoding!r}, but byte {exc.object[exc.start]:#04x}"
                          f" at offset {exc.start} is not {encoding} text") from None
    except UnicodeError as exc:  # a codec that refuses in its own way (idna, "undefined")
        raise Undecodable(f"it declares encoding {encoding!r}, which cannot read it: {exc}") from None
    text = _DECLARATION.sub(r'\1"utf-8"', valid_text(text), count=1)
    return text.encode("utf-8")


def _refuse(*_args: Any) -> Any:  # stands in for handlers of every signature: it raises
    raise Declared(REFUSED)


def read_guarded(
    data: bytes,
    start: Callable[[str, dict[str, str]], None] | None = None,
    end: Callable[[str], None] | None = None,
) -> None:
    """Parse the whole document, calling `start(tag, attributes)` and `end(tag)` per element.
    Raises Declared, expat.ExpatError (not well-formed), LookupError (an encoding Python
    has no codec for), Undecodable or RecursionError; whatever the handlers raise passes
    through."""
    data = utf8_document(data)
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
