"""The sample export files of other apps (tests/fixtures/import) and a library read back
whole, for the moving-in tests over the CLI and the web."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from reader.store import Store


SAMPLES = Path(__file__).resolve().parent / "fixtures" / "import"


def zipped_dir(name: str) -> bytes:
    root = SAMPLES / name
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for p in sorted(root.rglob("*")):
            if p.is_file():
                archive.writestr(p.relative_to(root).as_posix(), p.read_bytes())
    return buffer.getvalue()


async def library(db: Path) -> dict[str, dict]:
    """Every article by URL, with its tags, notes, highlights and content."""
    async with await Store.open(db) as store:
        rows = await store.list_articles(limit=100_000)
        tags = await store.tags_of([r["id"] for r in rows])
        notes = await store.notes_for([r["id"] for r in rows])
        found = {}
        for r in rows:
            found[r["url"]] = {**r, "tags": set(tags.get(r["id"], [])), "notes": notes.get(r["id"], []),
                               "content": await store.get_content(r["id"]),
                               "highlights": await store.highlights_of(r["id"])}
        return found
