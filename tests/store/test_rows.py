"""The store's typed reads return rows of exactly the keys and value types their TypedDicts
(reader/store/rows.py) declare: mypy trusts those declarations at every caller, and only
a real read can show they still match the SQL behind them."""

from __future__ import annotations

import types
import typing
import zlib
from typing import Any, Union

from reader.records import RawPage, StoredImage
from reader.store import ImportLink, Store
from reader.store.rows import (ClaimRow, FeedRow, MediaTotals, NoteRow, OfflineRow, RunCounts, TimingRow,
                               WaitingRow, WorkRow)

CONTENT = {"title": None, "author": None, "published": None, "html": "<p>Body</p>", "text": "Body", "words": 1}


def assert_shape(row: Any, shape: type) -> None:
    """The row has the TypedDict's keys, no more, and each value one of its types (an int
    passes for a float, as it does for mypy)."""
    hints = typing.get_type_hints(shape)
    assert set(row) == set(hints), f"{shape.__name__}: {sorted(row)} != {sorted(hints)}"
    for key, hint in hints.items():
        allowed = typing.get_args(hint) if typing.get_origin(hint) in (Union, types.UnionType) else (hint,)
        if float in allowed:
            allowed = (*allowed, int)
        assert isinstance(row[key], allowed), f"{shape.__name__}[{key!r}] = {row[key]!r}, not {hint}"


async def test_each_typed_read_has_the_keys_and_types_it_declares(tmp_path):
    async with await Store.open(tmp_path / "reader.db") as store:
        feed_id, _ = await store.add_feed("http://feeds.test/a.xml", "A")
        await store.store_feed_entries(
            feed_id, title="A", site_url="http://feeds.test/", etag='"e1"', last_modified=None,
            entries=[{"guid": g, "url": f"http://feeds.test/{g}", "title": g.title(), "summary": "",
                      "author": None, "published": float(n)} for n, g in enumerate(("one", "two", "three"))])
        ids = {a["guid"]: a["id"] for a in await store.list_articles()}
        for guid in ("one", "two", "three"):
            assert await store.queue(ids[guid])

        cleaned = await store.take_next("worker-1", 60)
        assert cleaned is not None and cleaned.article_id == ids["one"]
        await store.store_cleaned(cleaned, CONTENT, [StoredImage("ab" * 32, "http://feeds.test/i.png", "image/png", b"png")],
                                  RawPage("http://feeds.test/one", "utf-8", zlib.compress(b"<p>Body</p>")), 100)
        cleaning = await store.take_next("worker-1", 60)
        assert cleaning is not None and cleaning.article_id == ids["two"]

        await store.import_links([ImportLink(
            url="http://saved.test/x", key="http://saved.test/x", title="X", tags=set(), added_at=None, read=False,
            starred=False, author=None, published=None, summary="", summary_text="", content=None,
            notes=[("a highlight", None, None), ("another", "and why", 1_700_000_000.0)])], "a test", {})
        [saved] = [a["id"] for a in await store.list_articles() if a["url"] == "http://saved.test/x"]

        feed = await store.feed_by_url("http://feeds.test/a.xml")
        assert_shape(feed, FeedRow)

        [waiting] = await store.waiting()
        assert waiting["article_id"] == ids["three"] and waiting["position"] == 1
        assert_shape(waiting, WaitingRow)

        assert_shape(await store.claim_holder(ids["two"]), ClaimRow)

        work = await store.work_in_line()
        assert [(w["article_id"], bool(w["cleaning"])) for w in work] == [(ids["two"], True), (ids["three"], False)]
        for row in work:
            assert_shape(row, WorkRow)

        [timing] = await store.recent_timings()
        assert_shape(timing, TimingRow)

        stats = await store.stats()
        assert (stats["started"], stats["cached"], stats["running"], stats["queued"]) == (2, 1, 1, 2)
        assert_shape(stats, RunCounts)

        totals = await store.media_totals()
        assert (totals["images"], totals["raw_pages"]) == (1, 1)
        assert_shape(totals, MediaTotals)

        notes = await store.notes_for([saved, ids["one"]])
        assert list(notes) == [saved] and [n["text"] for n in notes[saved]] == ["a highlight", "another"]
        for note in notes[saved]:
            assert_shape(note, NoteRow)

        [offline] = await store.reading_list_contents(10)
        assert offline["id"] == ids["one"] and offline["bytes"] == len(CONTENT["html"])
        assert_shape(offline, OfflineRow)
