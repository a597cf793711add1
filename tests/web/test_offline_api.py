"""Read anywhere, at the API and page level: the reading position, actions a device sends
with its own id (a replay is a no-op with the same answer, racing replays included), what
a device saves for offline reading, the manifest, the service worker script, the offline
page and the share target's confirmation. Real SQLite files, real pages on 127.0.0.1; the
browser side is in test_browser_offline.py."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import uuid


from reader import __version__
from reader.web.pwa import manifest, shell_version

from ..helpers import assert_strict_csp, subscribe_slugs


def key() -> str:
    return str(uuid.uuid4())


async def article(client, article_id: int) -> dict:
    return (await client.get(f"/api/articles/{article_id}")).json()


async def test_a_replayed_action_is_a_no_op_that_answers_the_same(quiet, pages):
    """Star, then unstar from elsewhere, then the star sent again (its answer was lost):
    without the device's id that replay would star the article again."""
    _, [a] = await subscribe_slugs(quiet, pages, ["one"])
    star = key()
    first = await quiet.post(f"/api/articles/{a}/star", headers={"Idempotency-Key": star})
    assert first.status_code == 200 and first.json()["starred"] is True
    assert (await quiet.delete(f"/api/articles/{a}/star")).json()["starred"] is False
    again = await quiet.post(f"/api/articles/{a}/star", headers={"Idempotency-Key": star})
    assert again.status_code == 200
    assert again.content == first.content  # the same answer, byte for byte
    assert (await article(quiet, a))["starred"] is False  # and nothing applied

    # read and unqueue the same way
    read = key()
    assert (await quiet.post(f"/api/articles/{a}/read", headers={"Idempotency-Key": read})).json()["read"] is True
    await quiet.delete(f"/api/articles/{a}/read")
    await quiet.post(f"/api/articles/{a}/read", headers={"Idempotency-Key": read})
    assert (await article(quiet, a))["read"] is False
    assert (await quiet.post(f"/api/articles/{a}/queue")).json()["state"] == "queued"
    unqueue = key()
    gone = await quiet.delete(f"/api/articles/{a}/queue", headers={"Idempotency-Key": unqueue})
    assert gone.json()["state"] == "new"
    await quiet.post(f"/api/articles/{a}/queue")  # a tap after it
    replay = await quiet.delete(f"/api/articles/{a}/queue", headers={"Idempotency-Key": unqueue})
    assert replay.content == gone.content
    assert (await article(quiet, a))["state"] == "queued"  # the later tap stands


async def test_racing_replays_apply_once(quiet, pages):
    """The same action sent 20 times at once (a flapping connection resending): one
    applies it, the others wait for its answer and give the same."""
    _, [a] = await subscribe_slugs(quiet, pages, ["one"])
    star = key()
    answers = await asyncio.gather(*(quiet.post(f"/api/articles/{a}/star", headers={"Idempotency-Key": star})
                                     for _ in range(20)))
    assert {r.status_code for r in answers} == {200}
    assert len({r.content for r in answers}) == 1
    store = quiet.app.state.reader._store  # type: ignore[attr-defined]
    with contextlib.closing(sqlite3.connect(store.path)) as db:
        assert db.execute("SELECT count(*) FROM actions").fetchone() == (1,)
    row = await store.action(star)
    assert row["action"] == f"POST /api/articles/{a}/star" and row["status"] == 200


async def test_action_ids_are_checked_and_refusals_remembered(quiet, pages):
    _, [a] = await subscribe_slugs(quiet, pages, ["one"])
    for bad in ("short", "x" * 101, "spaces are not ok", "é" * 10):
        response = await quiet.post(f"/api/articles/{a}/star", headers={"Idempotency-Key": bad.encode()})
        assert response.status_code == 422, bad
        assert "id" in response.json()["error"]
    used = key()
    await quiet.post(f"/api/articles/{a}/star", headers={"Idempotency-Key": used})
    other = await quiet.post(f"/api/articles/{a}/read", headers={"Idempotency-Key": used})
    assert other.status_code == 409 and "another action" in other.json()["error"]
    assert (await article(quiet, a))["read"] is False
    # a refusal is an answer too: the same 404 again, even once the id would exist
    missing = key()
    first = await quiet.post("/api/articles/999999/star", headers={"Idempotency-Key": missing})
    again = await quiet.post("/api/articles/999999/star", headers={"Idempotency-Key": missing})
    assert first.status_code == again.status_code == 404
    assert first.json() == again.json() == {"error": "no such article"}


async def test_position_saved_newest_wins_shown_on_the_card(quiet, pages):
    _, [a, b] = await subscribe_slugs(quiet, pages, ["one", "two"])
    assert (await article(quiet, a))["read_position"] is None
    response = await quiet.put(f"/api/articles/{a}/position", json={"position": 0.5, "at": 1000.0})
    assert response.status_code == 200 and response.json()["read_position"] == 0.5
    # a place reached earlier (an offline phone syncing late) does not move it back
    late = await quiet.put(f"/api/articles/{a}/position", json={"position": 0.1, "at": 999.0})
    assert late.status_code == 200 and late.json()["read_position"] == 0.5
    # a clock in the future counts as now: a later place still wins over it
    await quiet.put(f"/api/articles/{b}/position", json={"position": 0.2, "at": 4e12})
    assert (await quiet.put(f"/api/articles/{b}/position", json={"position": 0.3})).json()["read_position"] == 0.3
    for bad in ({"position": 1.5}, {"position": -0.1}, {"position": "half"}, {"position": True}, {},
                {"position": 0.5, "at": "yesterday"}, {"position": 0.5, "at": float("inf")}):
        refused = await quiet.put(f"/api/articles/{a}/position", content=json.dumps(bad))
        assert refused.status_code == 422, bad
    assert (await quiet.put("/api/articles/999999/position", json={"position": 0.5})).status_code == 404
    assert (await quiet.put(f"/api/articles/{a}/position", content=b"{")).status_code == 400
    # with an id, a replay does nothing either
    once = key()
    await quiet.put(f"/api/articles/{a}/position", json={"position": 0.6}, headers={"Idempotency-Key": once})
    await quiet.put(f"/api/articles/{a}/position", json={"position": 0.7})
    await quiet.put(f"/api/articles/{a}/position", json={"position": 0.6}, headers={"Idempotency-Key": once})
    assert (await article(quiet, a))["read_position"] == 0.7
    page = (await quiet.get("/")).text
    assert "70% read" in page
    await quiet.put(f"/api/articles/{a}/position", json={"position": 0.5})
    assert "half read" in (await quiet.get("/")).text
    opened = (await quiet.get(f"/articles/{a}")).text
    assert 'data-position="0.5"' in opened


async def test_offline_list_is_the_reading_list_with_same_origin_images_within_budget(settings, pages):
    from ..helpers import app_client

    from reader.resources import static_dir

    # the article's picture, stored with it when it is cleaned and served by reader
    picture = pages.add("/picture.png", (static_dir() / "icons" / "icon-192.png").read_bytes(), content_type="image/png")
    image_page = pages.add("/pictured.html", f"""<!doctype html><html><head><title>Pictured</title></head><body>
<article><h1>Pictured</h1>{''.join(f'<p>Paragraph {i} of a pictured article with enough words to be prose.</p>' for i in range(8))}
<figure><img src="{picture}" alt="our icon" width="192" height="192"></figure>
<figure><img src="https://elsewhere.example/photo.jpg" alt="another site's"></figure>
{''.join(f'<p>More paragraph {i} of the pictured article, long enough to be kept.</p>' for i in range(8))}
</article></body></html>""")
    async with app_client(settings.replace(serve_workers=0, extract_processes=0)) as client:
        _, [a, b, c] = await subscribe_slugs(client, pages, ["one", "two", "three"])
        saved = await client.post("/api/articles", json={"url": image_page})
        pictured = saved.json()["id"]
        for article_id in (b, pictured, a, c):  # tap order
            await client.post(f"/api/articles/{article_id}/queue")
            assert (await client.get(f"/api/articles/{article_id}/content")).status_code == 200
        await client.post(f"/api/articles/{c}/done")  # done: off the reading list
        listed = await client.get("/api/offline")
        assert listed.headers["cache-control"] == "no-store"
        body = listed.json()
        assert body["budget"] == settings.offline_max_bytes
        assert [x["id"] for x in body["articles"]] == [b, pictured, a]
        assert body["articles"][0]["page"] == f"/articles/{b}"
        by_id = {x["id"]: x for x in body["articles"]}
        [image] = by_id[pictured]["images"]  # reader's copy; not the other site's
        assert image.startswith(f"/articles/{pictured}/images/")
        assert (await client.get(image)).content == (static_dir() / "icons" / "icon-192.png").read_bytes()
        assert by_id[a]["images"] == []
        assert all(x["bytes"] > 0 for x in body["articles"])
        assert "/?state=ready&unread=1" in body["pages"]
        # the worker's saving fetch does not mark the article read; a person's open does
        await client.get(f"/articles/{b}", headers={"X-Reader-Offline": "save"})
        assert (await article(client, b))["read"] is False
        await client.get(f"/articles/{b}")
        assert (await article(client, b))["read"] is True
        await client.post(f"/api/articles/{b}/done")  # read is not done: done takes it off the list
    small = sum(x["bytes"] for x in body["articles"][:1])
    async with app_client(settings.replace(serve_workers=0, extract_processes=0, offline_max_bytes=small)) as client:
        assert [x["id"] for x in (await client.get("/api/offline")).json()["articles"]] == [pictured]


async def test_manifest_worker_and_offline_page(quiet):
    response = await quiet.get("/manifest.webmanifest")
    assert response.status_code == 200 and response.headers["content-type"] == "application/manifest+json"
    data = response.json()
    assert data == manifest()
    assert data["display"] == "standalone" and data["start_url"] == "/?state=ready&unread=1" and data["scope"] == "/"
    assert {i["sizes"] for i in data["icons"]} == {"192x192", "512x512"}
    for icon in data["icons"]:
        png = await quiet.get(icon["src"])
        assert png.status_code == 200 and png.content.startswith(b"\x89PNG")
        size = int(icon["sizes"].split("x")[0])
        assert int.from_bytes(png.content[16:20], "big") == int.from_bytes(png.content[20:24], "big") == size
    assert data["share_target"]["action"] == "/save"
    page = (await quiet.get("/")).text
    assert '<link rel="manifest" href="/manifest.webmanifest">' in page

    worker = await quiet.get("/sw.js")
    assert worker.status_code == 200 and worker.headers["content-type"].startswith("text/javascript")
    assert worker.headers["cache-control"] == "no-cache"
    assert f'const VERSION = "{shell_version()}";' in worker.text and shell_version().startswith(__version__ + "-")
    assert "__READER_VERSION__" not in worker.text
    csp = worker.headers["content-security-policy"]
    assert "worker-src 'self'" in csp and "manifest-src 'self'" in csp
    assert_strict_csp(worker)
    # every file of the shell is served
    shell = worker.text.split("const SHELL = [", 1)[1].split("];", 1)[0]
    for path in [p.strip().strip('",') for p in shell.split() if p.strip().startswith('"')]:
        assert (await quiet.get(path)).status_code == 200, path

    for what, text in (("article", "this article is not saved"), ("page", "this page is not saved")):
        offline = await quiet.get("/offline", params={"what": what})
        assert offline.status_code == 200 and text in offline.text


async def test_share_target_lands_on_the_confirmation_and_save_and_queue_is_a_tap(quiet, pages):
    url = pages.add_article("shared")
    # Android puts the link inside the shared text
    confirm = await quiet.get("/save", params={"title": "Shared page", "text": f"Look at this: {url} (via an app)"})
    assert confirm.status_code == 200
    assert f'value="{url}"' in confirm.text and "Save and queue" in confirm.text
    assert (await quiet.get("/api/articles", params={"limit": 5})).json()["items"] == []  # nothing saved yet
    saved = await quiet.post("/save", data={"url": url, "title": "Shared page", "queue": "yes"})
    assert saved.status_code == 200 and "Saved and queued" in saved.text
    [item] = (await quiet.get("/api/articles")).json()["items"]
    assert item["url"] == url and item["state"] == "queued"
    # plain Save queues nothing
    other = pages.add_article("other")
    await quiet.post("/save", data={"url": other})
    states = {i["url"]: i["state"] for i in (await quiet.get("/api/articles")).json()["items"]}
    assert states[other] == "new"


async def test_manifest_is_open_without_login_and_the_rest_is_not(settings):
    from ..helpers import app_client

    async with app_client(settings.replace(password="a long enough password", serve_workers=0),
                          csrf=False) as bare:
        assert (await bare.get("/manifest.webmanifest")).status_code == 200
        assert (await bare.get("/api/offline")).status_code == 401
        assert (await bare.get("/sw.js")).status_code == 303


async def test_an_action_cut_off_while_applied_is_applied_by_its_replay(quiet, pages, settings):
    """The process died between claiming an action and answering it: its row stays
    unanswered. Once that is older than a claim could be, the replay applies it."""
    import sqlite3

    from reader.store.devices import ACTION_STALE

    _, [a] = await subscribe_slugs(quiet, pages, ["one"])
    store = quiet.app.state.reader._store  # type: ignore[attr-defined]
    cut = key()
    assert await store.begin_action(cut, f"POST /api/articles/{a}/star") is None  # claimed, never finished
    with sqlite3.connect(settings.db) as db:
        db.execute("UPDATE actions SET at = at - ? WHERE key = ?", (ACTION_STALE + 1, cut))
    replay = await quiet.post(f"/api/articles/{a}/star", headers={"Idempotency-Key": cut})
    assert replay.status_code == 200 and replay.json()["starred"] is True
    assert (await store.action(cut))["status"] == 200
