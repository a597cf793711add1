"""Reading an EPUB back in the edition tests: the namespaces, every check an e-reader
relies on, a document's text, and the book opened by a second reader (EbookLib)."""

from __future__ import annotations

import io
import posixpath
import struct
import warnings
import zipfile
import zlib
from datetime import datetime
from pathlib import Path
from urllib.parse import urlsplit

from lxml import etree


NS = {
    "opf": "http://www.idpf.org/2007/opf",
    "dc": "http://purl.org/dc/elements/1.1/",
    "x": "http://www.w3.org/1999/xhtml",
    "epub": "http://www.idpf.org/2007/ops",
    "ncx": "http://www.daisy.org/z3986/2005/ncx/",
    "c": "urn:oasis:names:tc:opendocument:xmlns:container",
    "atom": "http://www.w3.org/2005/Atom",
}


def png(width: int = 2, height: int = 2) -> bytes:
    """A real PNG, built by hand so the test needs no image library."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\xc0\x40\x20" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def check_book(data: bytes) -> dict[str, object]:
    """Everything an e-reader relies on, asserted; returns the parsed parts for more checks."""
    book = zipfile.ZipFile(io.BytesIO(data))
    first = book.infolist()[0]
    assert first.filename == "mimetype"
    assert first.compress_type == zipfile.ZIP_STORED
    assert first.extra == b""
    assert book.read("mimetype") == b"application/epub+zip"
    assert data[30:38] == b"mimetype" and data[38:58] == b"application/epub+zip"  # readable by magic
    assert book.testzip() is None

    container = etree.fromstring(book.read("META-INF/container.xml"))
    opf_path = container.find("c:rootfiles/c:rootfile", NS).get("full-path")
    opf = etree.fromstring(book.read(opf_path))
    base = posixpath.dirname(opf_path)
    assert opf.get("version") == "3.0"
    uid_id = opf.get("unique-identifier")
    identifier = opf.find(f"opf:metadata/dc:identifier[@id='{uid_id}']", NS)
    assert identifier is not None and identifier.text
    modified = opf.find("opf:metadata/opf:meta[@property='dcterms:modified']", NS).text
    datetime.strptime(modified, "%Y-%m-%dT%H:%M:%SZ")
    assert opf.find("opf:metadata/dc:language", NS).text
    assert opf.find("opf:metadata/dc:title", NS).text

    manifest = {item.get("id"): item for item in opf.findall("opf:manifest/opf:item", NS)}
    names = set(book.namelist())
    paths = {posixpath.normpath(posixpath.join(base, item.get("href"))): item for item in manifest.values()}
    assert set(paths) <= names, "manifest lists files the book does not hold"
    assert names - set(paths) == {"mimetype", "META-INF/container.xml", opf_path}, "files missing from the manifest"
    spine = opf.find("opf:spine", NS)
    assert manifest[spine.get("toc")].get("media-type") == "application/x-dtbncx+xml"
    for itemref in spine.findall("opf:itemref", NS):
        assert manifest[itemref.get("idref")].get("media-type") == "application/xhtml+xml"
    navs = [item for item in manifest.values() if "nav" in (item.get("properties") or "").split()]
    assert len(navs) == 1

    documents: dict[str, etree._Element] = {}
    for path, item in paths.items():
        if item.get("media-type") == "application/xhtml+xml":
            documents[path] = etree.fromstring(book.read(path))  # well-formed XML or this raises
            assert documents[path].tag == "{http://www.w3.org/1999/xhtml}html"
        elif item.get("media-type").startswith("image/"):
            assert _sniff(book.read(path)) == item.get("media-type")

    def resolve(document: str, href: str) -> None:
        if urlsplit(href).scheme:
            assert urlsplit(href).scheme in ("http", "https", "mailto"), href
            return
        target = href.split("#")[0]
        assert target, f"a bare fragment link in {document}: {href}"
        assert posixpath.normpath(posixpath.join(posixpath.dirname(document), target)) in paths, (document, href)

    for path, document in documents.items():
        for element in document.iter("{*}a", "{*}link"):
            if element.get("href") is not None:
                resolve(path, element.get("href"))
        for image in document.iter("{*}img"):
            assert not urlsplit(image.get("src")).scheme, "images must be inside the book"
            resolve(path, image.get("src"))
            assert image.get("alt") is not None

    nav_path = posixpath.join(base, navs[0].get("href"))
    toc = documents[nav_path].find(".//x:nav[@epub:type='toc']", NS)
    assert toc is not None
    ncx_path = posixpath.join(base, manifest[spine.get("toc")].get("href"))
    ncx = etree.fromstring(book.read(ncx_path))
    assert ncx.find("ncx:head/ncx:meta[@name='dtb:uid']", NS).get("content") == identifier.text
    for content in ncx.iterfind(".//ncx:content", NS):
        resolve(ncx_path, content.get("src"))
    chapters = [posixpath.join(base, manifest[ref.get("idref")].get("href")) for ref in spine.findall("opf:itemref", NS)]
    return {"zip": book, "opf": opf, "documents": documents, "chapters": chapters, "toc": toc, "ncx": ncx,
            "identifier": identifier.text, "base": base}


def text_of(document: etree._Element) -> str:
    return " ".join("".join(document.itertext()).split())


def read_with_ebooklib(data: bytes, tmp_path: Path):
    from ebooklib import epub

    path = tmp_path / "book.epub"
    path.write_bytes(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # EbookLib warns about its own future defaults
        return epub.read_epub(str(path), {"ignore_ncx": False})


def _sniff(data: bytes) -> str:
    if data.startswith(b"\x89PNG"):
        return "image/png"
    if data.startswith(b"GIF8"):
        return "image/gif"
    return "image/jpeg" if data.startswith(b"\xff\xd8\xff") else "unknown"
