"""The import report, on its page and in the JSON API, says how many links were a feed's
article already (one card for both, schema v15)."""

from __future__ import annotations

from ..helpers import subscribe_slugs, wait_for


async def test_the_import_report_says_which_links_a_feed_had_brought(quiet, pages):
    _, (first, _) = await subscribe_slugs(quiet, pages, ["one", "two"])
    link = (await quiet.get(f"/api/articles/{first}")).json()["url"]
    csv = ("title,url,time_added,tags,status\n"
           f"One,{link}?utm_source=newsletter#top,1700000000,later,unread\n"
           "Else,https://example.org/else/,1700000060,,unread\n").encode()
    imported = await quiet.post("/feeds/import", files={"file": ("pocket.csv", csv)})
    job = imported.headers["location"].rsplit("/", 1)[1]

    async def finished() -> bool:
        return bool((await quiet.get(f"/api/imports/{job}")).json()["finished"])

    await wait_for(finished)
    report = (await quiet.get(f"/api/imports/{job}")).json()["report"]
    assert (report["new"], report["merged"], report["in_feeds"]) == (1, 1, 1)
    assert "1 new links, 1 already there (1 of them from your feeds)" in report["summary"]
    assert "1 already there (1 of them from your feeds)" in (await quiet.get(imported.headers["location"])).text
    assert len((await quiet.get("/api/articles")).json()["items"]) == 3
    assert (await quiet.get(f"/api/articles/{first}")).json()["tags"] == ["later"]
