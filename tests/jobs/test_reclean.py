"""The raw page kept, and `reader reclean`: an article cleaned again from what was
fetched, with no page fetched a second time (a loopback server counts the hits), through
the same claim, recorded in the ledger as its own kind of run."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess

from reader.core import running

from .. import commands
from ..helpers import app_client
from ..pictures import image_srcs, page_with, png


def cli(settings, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "READER_ALLOW_PRIVATE_URLS": "1", "READER_DB": str(settings.db),
           "READER_EXTRACT_PROCESSES": "0"}
    done = commands.run(args, env=env)
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(), done.stderr.decode())


async def _cleaned(settings, pages, slug: str, body: str) -> int:
    link = pages.add(f"/{slug}.html", body)
    async with app_client(settings.replace(serve_workers=0, extract_processes=0)) as client:
        article_id = int((await client.post("/api/articles", json={"url": link})).json()["id"])
        await client.get(f"/api/articles/{article_id}/content")
    return article_id


async def test_reclean_cleans_again_from_the_stored_page_and_fetches_nothing(settings, pages):
    pages.add("/img/a.png", png(1), headers={"Content-Type": "image/png"})
    pages.add("/img/b.png", png(2), headers={"Content-Type": "image/png"})
    images = '<figure><img src="/img/a.png" alt="A"></figure><figure><img src="/img/b.png" alt="B"></figure>'
    article_id = await _cleaned(settings, pages, "kept", page_with(images))
    async with running(settings, worker=False) as reader:
        before = await reader._store.get_content(article_id)
        assert len(image_srcs(before["html"])) == 2
    # the site changes its page: a fetch would now see other words
    pages.add("/kept.html", page_with(images, "Changed since"))

    done = cli(settings, "reclean", str(article_id))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"article {article_id}: recleaned"
    assert pages.hits["/kept.html"] == 1 and pages.hits["/img/a.png"] == 1 and pages.hits["/img/b.png"] == 1

    async with running(settings, worker=False) as reader:
        after = await reader._store.get_content(article_id)
        runs = await reader._store.runs(article_id)
        kinds = await reader._store.stats_by_kind()
        images_kept = await reader._store.images_of(article_id)
        found = await reader.search("Changed")
    assert after["cleaned_at"] > before["cleaned_at"]
    assert "Changed since" not in after["html"] and image_srcs(after["html"]) == image_srcs(before["html"])
    assert not found  # the search index follows the stored text
    assert len(images_kept) == 2
    assert [(r["kind"], r["outcome"]) for r in runs] == [("fetch", "cached"), ("reclean", "cached")]
    assert runs[1]["bytes"] == 0  # nothing came in from the network
    for counts in kinds.values():
        assert counts["started"] == counts["cached"] + counts["failed"] + counts["abandoned"] + counts["running"]
    assert kinds["reclean"]["started"] == 1 and kinds["fetch"]["started"] == 1

    shown = cli(settings, "stats")
    assert shown.returncode == 0, shown.stderr
    stats = json.loads(shown.stdout)
    assert stats["kinds"]["reclean"]["cached"] == 1 and stats["started"] == 2


async def test_a_page_the_cleaner_could_not_clean_is_kept_and_reclean_failed_tries_it_without_a_fetch(settings, pages):
    empty = "<!doctype html><html><head><title>Nothing</title></head><body><div></div></body></html>"
    article_id = await _cleaned(settings, pages, "empty", empty)
    other = await _cleaned(settings, pages, "fine", page_with(""))
    async with running(settings, worker=False) as reader:
        assert (await reader.article(article_id)).state == "failed"
        assert await reader.reclean_ids(failed=True) == [article_id]
        assert await reader.reclean_ids() == [article_id, other]

    done = cli(settings, "reclean", "--failed")
    assert done.returncode == 1
    assert done.stdout.startswith(f"article {article_id}: failed: ")
    assert pages.hits["/empty.html"] == 1

    async with running(settings, worker=False) as reader:
        runs = await reader._store.runs(article_id)
        article = await reader.article(article_id)
    assert [(r["kind"], r["outcome"]) for r in runs] == [("fetch", "failed"), ("reclean", "failed")]
    assert article.state == "failed" and article.error


async def test_an_article_with_no_stored_page_is_skipped_and_unknown_ids_are_said_so(settings, pages):
    async with app_client(settings.replace(serve_workers=0, extract_processes=0)) as client:
        article_id = int((await client.post("/api/articles", json={"url": pages.url("/never.html")})).json()["id"])
    done = cli(settings, "reclean", str(article_id), "999")
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"article {article_id}: skipped: no stored page")
    assert lines[1] == "article 999: skipped: no such article"
    assert pages.hits["/never.html"] == 0


async def test_raw_pages_past_the_budget_are_dropped_oldest_first(settings, pages):
    ids = [await _cleaned(settings, pages, f"p{i}", page_with("", f"Page {i}")) for i in range(4)]
    async with running(settings, worker=False) as reader:
        sizes = [(await reader._store.raw_page(i)).size for i in ids]
    budget = sizes[0] + sizes[1] + sizes[2] // 2  # room for two pages and a half
    tight = settings.replace(raw_pages_bytes=budget)
    await _cleaned(tight, pages, "p4", page_with("", "Page 4"))
    async with running(tight, worker=False) as reader:
        kept = [i for i in [*ids, ids[-1] + 1] if await reader._store.raw_page(i) is not None]
        totals = await reader._store.media_totals()
    assert kept == [ids[-1], ids[-1] + 1]
    assert totals["raw_page_bytes"] <= budget


async def test_an_article_cleaned_before_images_were_kept_gets_them_from_reclean_all(settings, pages):
    pages.add("/img/old.png", png(7), headers={"Content-Type": "image/png"})
    link = pages.add_article("old")
    picture = pages.url("/img/old.png")
    async with running(settings, worker=False) as reader:
        # what an earlier reader stored: remote image addresses, no raw page, no images
        article_id, _ = await reader._store.save_link(link)
        run = await reader._store.claim(article_id, "earlier-reader", 30)
        html = f'<p>Text kept from before.</p><figure><img src="{picture}" alt="Old"></figure>'
        await reader._store.store_cleaned(run, {"title": "Old", "author": None, "published": None, "html": html,
                                               "text": "Text kept from before.", "words": 4})
    done = cli(settings, "reclean", "--all")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"article {article_id}: recleaned"
    async with running(settings, worker=False) as reader:
        content = await reader._store.get_content(article_id)
    assert image_srcs(content["html"]) == [f"/articles/{article_id}/images/{hashlib.sha256(png(7)).hexdigest()}"]
    assert "Text kept from before." in content["html"]
    assert pages.hits["/old.html"] == 0 and pages.hits["/img/old.png"] == 1
