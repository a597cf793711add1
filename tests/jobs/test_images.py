"""Images kept with the article: fetched once inside the claimed run, through the guarded
client, sniffed, capped, stored, and served from reader; the article reads fully with its
origin gone. A loopback server counts every hit."""

from __future__ import annotations

import asyncio
import hashlib
import struct

from reader.core import running

from ..helpers import app_client, rss, worker_process
from ..pictures import image_srcs, page_with, png


GIF = b"GIF89a\x01\x00\x01\x00\x00\x00\x00;"
WEBP = b"RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00/\x00\x00\x00\x10\x07\x10\x11\x11\x88\x88\xfe\x07\x00"
AVIF = struct.pack(">I", 28) + b"ftypmif1\x00\x00\x00\x00mif1avifmiaf" + b"\x00" * 40
SVG = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'
OCTETS = {"Content-Type": "application/octet-stream"}



async def _article(client, pages, slug: str, images: str) -> int:
    link = pages.add(f"/{slug}.html", page_with(images))
    response = await client.post("/api/articles", json={"url": link})
    assert response.status_code in (200, 201), response.text
    return int(response.json()["id"])


async def test_images_are_stored_with_the_article_and_served_from_reader(settings, pages):
    pages.add("/img/a.png", png(1), headers=OCTETS)  # the server's type is never believed
    pages.add("/img/b.gif", GIF, headers={"Content-Type": "image/gif"})
    pages.add("/img/c.webp", WEBP, headers=OCTETS)
    pages.add("/img/d.avif", AVIF, headers=OCTETS)
    images = """<figure><img src="/img/a.png" alt="A chart"><figcaption>Figure one</figcaption></figure>
<p>Words around a picture <img src="/img/b.gif" alt="an icon"> that sits inline in a sentence of fair length.</p>
<figure><img src="/img/c.webp" alt="Third"></figure><figure><img src="/img/d.avif" alt="Fourth"></figure>"""
    async with app_client(settings.replace(serve_workers=0, extract_processes=0)) as client:
        article_id = await _article(client, pages, "pics", images)
        content = (await client.get(f"/api/articles/{article_id}/content")).json()
        srcs = image_srcs(content["html"])
        assert len(srcs) == 4 and all(s.startswith(f"/articles/{article_id}/images/") for s in srcs)
        assert pages.base not in content["html"]  # nothing points at the origin any more
        served = {}
        for src in srcs:
            response = await client.get(src)
            assert response.status_code == 200
            assert response.headers["cache-control"] == "private, max-age=31536000, immutable"
            assert response.headers["x-content-type-options"] == "nosniff"
            assert src.rsplit("/", 1)[1] == hashlib.sha256(response.content).hexdigest()
            served[response.headers["content-type"]] = response.content
        assert served == {"image/png": png(1), "image/gif": GIF, "image/webp": WEBP, "image/avif": AVIF}
        page = await client.get(f"/articles/{article_id}")
        assert "img-src 'self' data:;" in page.headers["content-security-policy"]
        assert all(f'src="{src}"' in page.text for src in srcs)
    async with running(settings) as reader:
        [run] = await reader._store.runs(article_id)
        page_bytes = len(page_with(images).encode())
        assert run["bytes"] == page_bytes + len(png(1)) + len(GIF) + len(WEBP) + len(AVIF)
        assert (await reader.stats())["kinds"]["fetch"]["bytes"] == run["bytes"]
    assert all(pages.hits[p] == 1 for p in ("/img/a.png", "/img/b.gif", "/img/c.webp", "/img/d.avif"))


async def test_a_cleaned_article_reads_fully_with_its_origin_stopped(settings, pages):
    pages.add("/img/a.png", png(2), headers={"Content-Type": "image/png"})
    async with app_client(settings.replace(serve_workers=0, extract_processes=0)) as client:
        article_id = await _article(client, pages, "offline", '<figure><img src="/img/a.png" alt="A"></figure>')
        assert (await client.get(f"/api/articles/{article_id}/content")).status_code == 200
        pages.stop()
        page = await client.get(f"/articles/{article_id}")
        assert page.status_code == 200 and "Paragraph number 7" in page.text
        srcs = image_srcs(page.text)
        assert srcs and all(s.startswith("/articles/") for s in srcs)
        for src in srcs:
            image = await client.get(src)
            assert image.status_code == 200 and image.content == png(2)
        missing = await client.get(f"/articles/{article_id}/images/{'0' * 64}")
        assert missing.status_code == 404
        odd = await client.get(f"/articles/{article_id}/images/..%2F..%2Fetc")
        assert odd.status_code == 404


async def test_svg_and_html_named_png_are_refused_and_a_lost_image_leaves_its_alt_text(settings, pages):
    pages.add("/img/evil.svg", SVG, headers={"Content-Type": "image/svg+xml"})
    pages.add("/img/fake.png", b"<!doctype html><html><body>not an image</body></html>",
              headers={"Content-Type": "image/png"})
    pages.add("/img/real.png", png(3), headers={"Content-Type": "image/png"})
    images = """<figure><img src="/img/evil.svg" alt="Vector drawing"></figure>
<figure><img src="/img/fake.png" alt="Disguised"><figcaption>Kept caption</figcaption></figure>
<p>A sentence holding <img src="/img/gone.png" alt="a lost icon"> inline, long enough to be kept as text.</p>
<figure><img src="/img/real.png" alt="Real"></figure>"""
    async with app_client(settings.replace(serve_workers=0, extract_processes=0)) as client:
        article_id = await _article(client, pages, "hostile", images)
        html = (await client.get(f"/api/articles/{article_id}/content")).json()["html"]
    srcs = image_srcs(html)
    assert srcs == [f"/articles/{article_id}/images/{hashlib.sha256(png(3)).hexdigest()}"]
    assert "<figcaption>Vector drawing</figcaption>" in html  # an image lost: its alt is the caption
    assert "Kept caption" in html and "Disguised" not in html  # a caption there already stays alone
    assert "<em>a lost icon</em>" in html  # inline, the alt text stays inline
    assert "svg" not in html.lower() and "fake.png" not in html
    assert pages.hits["/img/evil.svg"] == 1 and pages.hits["/img/fake.png"] == 1


async def test_the_caps_on_images_hold(settings, pages):
    for i in range(4):
        pages.add(f"/img/{i}.png", png(10 + i, padding=1000), headers={"Content-Type": "image/png"})
    pages.add("/img/huge.png", png(20, padding=50_000), headers={"Content-Type": "image/png"})
    one = len(png(10, padding=1000))
    capped = settings.replace(serve_workers=0, extract_processes=0, image_max_bytes=20_000,
                              images_per_article=4, article_image_bytes=2 * one + 10)
    images = "".join(f'<figure><img src="/img/{name}.png" alt="image {name}"></figure>'
                     for name in ("huge", "0", "1", "2", "3"))
    async with app_client(capped) as client:
        article_id = await _article(client, pages, "many", images)
        html = (await client.get(f"/api/articles/{article_id}/content")).json()["html"]
    kept = image_srcs(html)
    # huge is over the per-image cap; 0 and 1 fill the article's budget; 2 does not fit it;
    # 3 is past the count of images per article and never fetched
    assert kept == [f"/articles/{article_id}/images/{hashlib.sha256(png(10 + i, padding=1000)).hexdigest()}"
                    for i in (0, 1)]
    assert "<figcaption>image huge</figcaption>" in html and "<figcaption>image 2</figcaption>" in html
    assert pages.hits["/img/3.png"] == 0
    async with running(capped) as reader:
        assert (await reader._store.media_totals())["image_bytes"] == 2 * one


async def test_opens_a_worker_and_a_worker_process_race_and_each_image_is_fetched_once(settings, pages):
    for i in range(3):
        pages.add(f"/img/{i}.png", png(30 + i), headers={"Content-Type": "image/png"}, delay=0.2)
    images = "".join(f'<figure><img src="/img/{i}.png" alt="picture {i}"></figure>' for i in range(3))
    link = pages.add("/raced.html", page_with(images, "Raced"), delay=0.3)
    feed = pages.add("/feed.xml", rss([{"title": "Raced", "link": link}]), headers={"Content-Type": "application/rss+xml"})
    async with running(settings) as reader:
        feed_id, _ = await reader._store.add_feed(feed)
        await reader.refresh()
        [article] = await reader._store.list_articles(feed_id=feed_id)
        article_id = article["id"]
        with worker_process(settings):
            async with app_client(settings.replace(serve_workers=0)) as client:
                opens = [client.get(f"/api/articles/{article_id}/content") for _ in range(20)]
                tap = client.post(f"/api/articles/{article_id}/queue")
                responses = await asyncio.gather(tap, *opens)
                reader._worker.wake()
        assert all(r.status_code == 200 for r in responses[1:])
        assert len({r.json()["html"] for r in responses[1:]}) == 1
        assert len(image_srcs(responses[1].json()["html"])) == 3
        runs = await reader._store.runs(article_id)
        assert [r["outcome"] for r in runs] == ["cached"]
        assert len(await reader._store.images_of(article_id)) == 3
    assert pages.hits["/raced.html"] == 1
    assert [pages.hits[f"/img/{i}.png"] for i in range(3)] == [1, 1, 1]


async def test_a_slow_image_host_is_cut_off_at_the_deadline_and_the_article_is_still_cleaned(settings, pages):
    pages.add("/img/slow.png", png(40), headers={"Content-Type": "image/png"}, delay=5.0)
    pages.add("/img/fast.png", png(41), headers={"Content-Type": "image/png"})
    images = '<figure><img src="/img/slow.png" alt="Slow"></figure><figure><img src="/img/fast.png" alt="Fast"></figure>'
    async with app_client(settings.replace(serve_workers=0, extract_processes=0, image_deadline=0.5)) as client:
        article_id = await _article(client, pages, "slow", images)
        html = (await client.get(f"/api/articles/{article_id}/content")).json()["html"]
    assert image_srcs(html) == [f"/articles/{article_id}/images/{hashlib.sha256(png(41)).hexdigest()}"]
    assert "<figcaption>Slow</figcaption>" in html


async def test_an_export_names_stored_images_by_their_source_and_reclean_stores_them_after_import(settings, pages,
                                                                                                tmp_path):
    from reader.core.exports import export, import_files

    pages.add("/img/a.png", png(50), headers={"Content-Type": "image/png"})
    async with app_client(settings.replace(serve_workers=0, extract_processes=0)) as client:
        article_id = await _article(client, pages, "exported", '<figure><img src="/img/a.png" alt="A"></figure>')
        await client.get(f"/api/articles/{article_id}/content")
    async with running(settings, worker=False) as reader:
        [written] = await export(reader._store, tmp_path / "out.json")
    text = written.read_text()
    assert pages.url("/img/a.png") in text and "/images/" not in text
    elsewhere = settings.replace(db=tmp_path / "other.db", extract_processes=0)
    async with running(elsewhere, worker=False) as reader:
        await import_files(reader._store, [written])
        [item] = await reader._store.list_articles()
        assert await reader.reclean(item["id"]) == ("cached", None)
        html = (await reader._store.get_content(item["id"]))["html"]
    assert image_srcs(html) == [f"/articles/{item['id']}/images/{hashlib.sha256(png(50)).hexdigest()}"]
    assert pages.hits["/exported.html"] == 1 and pages.hits["/img/a.png"] == 2
