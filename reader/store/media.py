"""What an article's cleaning stands on: its stored images and its raw page."""

from __future__ import annotations

from typing import cast

from ..records import RawPage, StoredImage
from .base import StoreBase
from .rows import MediaTotals
from .schema import url_key


class MediaStore(StoreBase):

    async def image(self, article_id: int, digest: str) -> StoredImage | None:
        row = await self._one("SELECT hash, source, type, data FROM images WHERE article_id = ? AND hash = ?",
                              (article_id, digest))
        return None if row is None else StoredImage(**row)

    async def images_of(self, article_id: int) -> list[StoredImage]:
        """Every image stored with an article: a reclean reuses them by source URL."""
        rows = await self._all("SELECT hash, source, type, data FROM images WHERE article_id = ? ORDER BY rowid",
                               (article_id,))
        return [StoredImage(**row) for row in rows]

    async def image_sources(self) -> dict[tuple[int, str], str]:
        """(article id, hash) -> the URL each stored image came from (no image data): an
        export names images by their sources, since its article ids mean nothing elsewhere."""
        rows = await self._all("SELECT article_id, hash, source FROM images")
        return {(int(row["article_id"]), row["hash"]): row["source"] for row in rows}

    async def raw_page(self, article_id: int) -> RawPage | None:
        row = await self._one("SELECT url, charset, data FROM pages WHERE article_id = ?", (article_id,))
        return None if row is None else RawPage(**row)

    async def reclean_ids(self, *, failed: bool) -> list[int]:
        """Articles a reclean can work on, oldest first: those with a raw page or a text,
        and with `failed` only those whose cleaning failed (with a raw page, no text)."""
        if failed:
            sql = ("SELECT p.article_id FROM pages p JOIN articles a ON a.id = p.article_id"
                   " WHERE a.error IS NOT NULL AND NOT EXISTS (SELECT 1 FROM contents c WHERE c.article_id = a.id)"
                   " ORDER BY p.article_id")
        else:  # with a raw page, or cleaned (before raw pages were kept: its images are stored)
            sql = ("SELECT article_id FROM pages UNION SELECT article_id FROM contents ORDER BY article_id")
        return [int(row["article_id"]) for row in await self._all(sql)]

    async def media_totals(self) -> MediaTotals:
        """How much the stored images and raw pages take (bytes), for /stats."""
        row = await self._one(
            "SELECT (SELECT coalesce(sum(length(data)), 0) FROM images) AS image_bytes,"
            " (SELECT count(*) FROM images) AS images,"
            " (SELECT coalesce(sum(size), 0) FROM pages) AS raw_page_bytes,"
            " (SELECT count(*) FROM pages) AS raw_pages"
        )
        assert row is not None
        return cast(MediaTotals, row)

    async def article_for(self, url: str) -> int | None:
        """The article at this address that a page sent by the browser finishes, the same
        link in any spelling (the address bar keeps a fragment or gains tracking
        parameters, a host in capitals; articles.url_key), the very address first: one
        with no text yet (failed ones first, then the newest), else one that has its text."""
        row = await self._one(
            "SELECT a.id FROM articles a WHERE a.url_key = ?"
            " ORDER BY a.url != ?, EXISTS (SELECT 1 FROM contents c WHERE c.article_id = a.id), a.error IS NULL,"
            " a.id DESC LIMIT 1",
            (url_key(url), url),
        )
        return None if row is None else int(row["id"])
