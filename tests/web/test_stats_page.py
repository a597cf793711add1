"""The stats page speaks to a person first: the line now, what is ready to read, the last
week's cleanings and reads, with the ledger under Details (issue 21, item 8)."""

from __future__ import annotations

import re

from ..helpers import subscribe_slugs


def summary(page: str) -> str:
    found = re.search(r'<ul class="summary">(.*?)</ul>', page, re.DOTALL)
    assert found, "no summary"
    return " ".join(re.sub(r"<[^>]+>", "", found.group(1)).split())


async def test_the_summary_counts_the_line_the_reading_list_and_the_week(quiet, pages):
    _, [one, two, three] = await subscribe_slugs(quiet, pages, ["one", "two", "three"])
    assert (await quiet.post(f"/api/articles/{one}/queue", json={})).status_code == 200
    assert (await quiet.post(f"/api/articles/{two}/read")).status_code == 200
    page = (await quiet.get("/stats")).text
    said = summary(page)
    assert "In line now: 1 (the queue)" in said, said
    assert "Ready to read: 0" in said, said
    assert "In the last 7 days: 0 cleaned, 1 read" in said, said
    assert re.search(r"<details class=\"ledger\">\s*<summary>Details", page)

    assert (await quiet.get(f"/api/articles/{three}/content")).status_code == 200  # cleaned now
    said = summary((await quiet.get("/stats")).text)
    assert "Ready to read: 1" in said and "1 cleaned" in said, said
