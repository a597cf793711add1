"""Editions for e-readers: the reading list as an EPUB 3 book, and an OPDS 1.2 catalog.

Pure functions over plain records: nothing here touches the database or the network, so
the web routes, the CLI and the tests all build the same bytes from the same data.

    epub     build_epub / assemble_epub: articles -> a valid EPUB 3 book (with an NCX)
    xhtml    sanitized article HTML -> well-formed XHTML for a chapter
    opds     build_opds: an Atom acquisition feed listing the edition and each article
"""

from .epub import Edition, EditionArticle, EditionImage, assemble_epub, build_epub, sniff_image_type
from .opds import CatalogEntry, build_opds

__all__ = [
    "CatalogEntry",
    "Edition",
    "EditionArticle",
    "EditionImage",
    "assemble_epub",
    "build_epub",
    "build_opds",
    "sniff_image_type",
]
