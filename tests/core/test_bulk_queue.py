"""Queueing in bulk, one act of a person for many taps: by ids or by a list's filter up to
the newest article shown, the oldest first in the normal lane, capped, with the time until
the last is ready (the cards' own estimator) and an undo that takes back only what has not
started. Through the JSON API against a real SQLite file; a worker's claim is taken
through the store's own take, as a worker process takes it."""

from __future__ import annotations

from ..helpers import app_client, subscribe_slugs, wait_for

SLUGS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"]


def pocket_csv(rows: list[tuple[str, bool]], start: float = 1_700_000_000) -> bytes:
    """A Pocket export: (url, unread) rows, each added a minute after the one before."""
    lines = ["title,url,time_added,tags,status"]
    lines += [f"Link {i},{url},{int(start) + 60 * i},,{'unread' if unread else 'archive'}"
              for i, (url, unread) in enumerate(rows)]
    return ("\n".join(lines) + "\n").encode()


async def line_ids(client) -> list[int]:
    return [item["id"] for item in (await client.get("/api/queue")).json()["items"]]


async def states(client, ids: list[int]) -> list[str]:
    return [(await client.get(f"/api/articles/{i}")).json()["state"] for i in ids]


async def test_queue_these_by_ids_queues_the_new_ones_oldest_first_and_counts_only_them(quiet, pages):
    _, (a, b, c, d, e, f) = await subscribe_slugs(quiet, pages, SLUGS)  # a the oldest, f the newest
    assert (await quiet.post(f"/api/articles/{d}/queue", json={})).status_code == 200  # in line already
    assert (await quiet.get(f"/api/articles/{b}/content")).status_code == 200  # ready already

    answer = await quiet.post("/api/articles/queue", json={"ids": [f, e, d, c, b]})  # as the page lists them
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["queued"] == 3 and body["ids"] == [c, e, f]  # the oldest first; d and b not counted
    assert body["left"] == 0 and body["limit"] == 500 and isinstance(body["undo"], str)
    assert body["estimate_seconds"] is None  # no worker runs: nothing honest to promise
    assert await line_ids(quiet) == [d, c, e, f]  # behind the earlier tap, in the batch's order
    items = {i["id"]: i for i in (await quiet.get("/api/queue")).json()["items"]}
    assert {items[i]["lane"] for i in (c, e, f)} == {"normal"}
    assert await states(quiet, [a]) == ["new"]  # not named: untouched

    again = (await quiet.post("/api/articles/queue", json={"ids": [f, e, d, c, b]})).json()
    assert again["queued"] == 0 and again["ids"] == [] and again["undo"] is None


async def test_queue_all_takes_the_filter_up_to_until_and_leaves_newer_articles_alone(quiet, pages):
    feed_id, (a, b, c, d, e, f) = await subscribe_slugs(quiet, pages, SLUGS)
    _, (x,) = await subscribe_slugs(quiet, pages, ["other"], path="/other.xml", title="Other")
    await quiet.post(f"/api/articles/{b}/read")
    until = max(a, b, c, d, e, f)
    # an article that arrives after the page was shown has a higher id: a saved link
    late = (await quiet.post("/api/articles", json={"url": pages.add_article("late")})).json()["id"]
    assert late > until

    body = (await quiet.post("/api/articles/queue",
                             json={"filter": {"feed": feed_id, "unread": 1}, "until": until})).json()
    assert body["ids"] == [a, c, d, e, f]  # unread ones of the feed, the oldest first; b was read
    assert await states(quiet, [b, x, late]) == ["new", "new", "new"]
    # the filter's parameters at the top level, as POST /api/articles/read takes them
    body = (await quiet.post("/api/articles/queue", json={"unread": 1, "until": late})).json()
    assert body["ids"] == sorted([x, late], key=lambda i: i == late)  # x is older than the late link
    assert await states(quiet, [b]) == ["new"]


async def test_undo_takes_back_only_what_has_not_started(quiet, pages):
    _, ids = await subscribe_slugs(quiet, pages, SLUGS[:4])
    store = quiet.app.state.reader._store
    batch = (await quiet.post("/api/articles/queue", json={"ids": ids[:3]})).json()
    assert batch["ids"] == ids[:3]
    assert (await quiet.post(f"/api/articles/{ids[3]}/queue", json={})).status_code == 200  # a tap of its own
    # the race: a worker takes the first of the batch, as a worker process takes it; the
    # undo comes after its claim
    run = await store.take_next("worker", ttl=60.0)
    assert run is not None and run.article_id == ids[0]

    undone = await quiet.post("/api/articles/queue/undo", json={"undo": batch["undo"]})
    assert undone.status_code == 200, undone.text
    assert undone.json() == {"unqueued": 2, "ids": ids[1:3], "started": 1}
    assert await states(quiet, ids) == ["cleaning", "new", "new", "queued"]  # the other tap untouched
    assert await line_ids(quiet) == [ids[3]]  # waiting (the one being cleaned is not)

    # the two taken back are as before the act: their first tap forgotten, so a later tap
    # gives them their place in the reading order
    tapped = await store._all("SELECT tapped_at FROM articles WHERE id IN (?, ?) ORDER BY id", ids[1:3])
    assert [r["tapped_at"] for r in tapped] == [None, None]
    # a claim given back without a result (the worker stopped): waiting again, not started
    await store.release(run)
    again = (await quiet.post("/api/articles/queue/undo", json={"undo": batch["undo"]})).json()
    assert again == {"unqueued": 1, "ids": [ids[0]], "started": 0}
    assert await line_ids(quiet) == [ids[3]]


async def test_the_reading_list_has_a_batch_oldest_first_as_the_line_does(quiet, pages):
    # a Pocket export lists the newest first, so the links are stored newest first (their
    # ids run against their age): a batch tapped at one instant must still read oldest first
    urls = [pages.add_article(slug) for slug in ("one", "two", "three")]  # one the oldest
    rows = "".join(f"Link {slug},{url},{1_700_000_000 + 60 * i},,unread\n"
                   for i, (slug, url) in reversed(list(enumerate(zip(("one", "two", "three"), urls)))))
    imported = await quiet.post("/feeds/import", files={"file": ("pocket.csv", f"title,url,time_added,tags,status\n{rows}")})
    job = imported.headers["location"].rsplit("/", 1)[1]
    await wait_for(lambda: _finished(quiet, job))
    queued = (await quiet.post(f"/api/imports/{job}/queue")).json()
    by_url = {i["url"]: i["id"] for i in (await quiet.get("/api/articles")).json()["items"]}
    oldest_first = [by_url[url] for url in urls]
    assert queued["ids"] == oldest_first and oldest_first == sorted(oldest_first, reverse=True)
    assert await line_ids(quiet) == oldest_first
    for article_id in reversed(oldest_first):  # cleaned newest first: the cleaning order does not count
        assert (await quiet.get(f"/api/articles/{article_id}/content")).status_code == 200
    ready = [i["id"] for i in (await quiet.get("/api/articles", params={"state": "ready"})).json()["items"]]
    assert ready == oldest_first


async def test_undo_refuses_what_is_not_a_token(quiet):
    for token in ("", "soon", "nan", "-1", True, None, [1]):
        answer = await quiet.post("/api/articles/queue/undo", json={"undo": token})
        assert answer.status_code == 422, token
        assert "token" in answer.json()["error"]
    assert (await quiet.post("/api/articles/queue/undo", json={})).status_code == 422


async def test_the_estimate_is_for_the_last_of_the_batch_and_grows_with_it(settings, pages):
    async with app_client(settings.replace(serve_workers=0, extract_processes=0)) as client:
        _, ids = await subscribe_slugs(client, pages, SLUGS)
        store = client.app.state.reader._store
        await store.worker_alive("elsewhere", 1, 60.0)  # a worker process with one slot, not this app's
        two = (await client.post("/api/articles/queue", json={"ids": ids[:2]})).json()
        assert (await client.post("/api/articles/queue/undo", json={"undo": two["undo"]})).json()["unqueued"] == 2
        six = (await client.post("/api/articles/queue", json={"ids": ids})).json()
        # one site, one slot, the first guess for each (no history yet): they wait in single file
        assert two["estimate_seconds"] == 2 * 5.0
        assert six["estimate_seconds"] == 6 * 5.0
        # the same number the last card shows
        last = (await client.get(f"/api/articles/{six['ids'][-1]}")).json()
        assert abs(last["wait_seconds"] - six["estimate_seconds"]) < 1.0


async def test_a_bulk_queue_is_capped_and_says_how_many_it_left(quiet):
    urls = [(f"https://example.org/cap/{i}", True) for i in range(520)]
    imported = await quiet.post("/feeds/import", files={"file": ("pocket.csv", pocket_csv(urls))})
    assert imported.status_code == 303
    job = imported.headers["location"].rsplit("/", 1)[1]
    await wait_for(lambda: _finished(quiet, job))
    newest = (await quiet.get("/api/articles", params={"limit": 1})).json()["items"][0]["id"]
    first = (await quiet.post("/api/articles/queue", json={"until": newest})).json()
    assert first["queued"] == 500 and first["matched"] == 520 and first["left"] == 20
    second = (await quiet.post("/api/articles/queue", json={"until": newest})).json()
    assert second["queued"] == 20 and second["left"] == 0
    assert min(second["ids"]) > max(first["ids"])  # the oldest went first, the rest follow in order
    assert len(await line_ids(quiet)) == 520


async def _finished(client, job: str) -> bool:
    return (await client.get(f"/api/imports/{job}")).json()["finished"]


async def test_an_import_queues_nothing_and_its_queue_takes_exactly_its_unread_links(quiet, pages):
    # before the import: a saved unread link the file also has (merged), and one it has not
    kept = (await quiet.post("/api/articles", json={"url": "https://example.org/merged"})).json()["id"]
    other = (await quiet.post("/api/articles", json={"url": "https://example.org/not-in-the-file"})).json()["id"]
    rows = [("https://example.org/merged", True), ("https://example.org/read", False),
            ("https://example.org/u1", True), ("https://example.org/u2", True), ("https://example.org/u3", True)]
    imported = await quiet.post("/feeds/import", files={"file": ("pocket.csv", pocket_csv(rows))})
    job = imported.headers["location"].rsplit("/", 1)[1]
    await wait_for(lambda: _finished(quiet, job))
    assert await line_ids(quiet) == []  # the import queued nothing by itself

    report = (await quiet.get(f"/api/imports/{job}")).json()
    assert report["finished"] and report["error"] is None
    assert report["report"]["format"] == "pocket-csv"
    assert (report["report"]["new"], report["report"]["merged"], report["report"]["unqueued"]) == (4, 1, 4)
    page = (await quiet.get(f"/imports/{job}")).text
    assert "Queue the 4 unread links" in page

    queued = (await quiet.post(f"/api/imports/{job}/queue")).json()
    assert queued["queued"] == 4 and kept in queued["ids"] and other not in queued["ids"]
    by_url = {i["url"]: i for i in (await quiet.get("/api/articles", params={"limit": 50})).json()["items"]}
    assert by_url["https://example.org/read"]["state"] == "new"
    assert [by_url[f"https://example.org/{s}"]["state"] for s in ("merged", "u1", "u2", "u3")] == ["queued"] * 4
    assert queued["ids"] == [by_url[f"https://example.org/{s}"]["id"] for s in ("merged", "u1", "u2", "u3")]
    # nothing left to offer: the report's button is gone
    assert (await quiet.get(f"/api/imports/{job}")).json()["report"]["unqueued"] == 0
    assert "unread link" not in (await quiet.get(f"/imports/{job}")).text


async def test_the_api_answers_bad_requests_with_a_message(quiet):
    cases = [
        (b"not json", 400), (b"[1, 2]", 400),
        (b'{"ids": "1,2"}', 422), (b'{"ids": ["x"]}', 422), (b'{"ids": [1.5]}', 422), (b'{"ids": [-1]}', 422),
        (b'{"filter": [1], "until": 3}', 422), (b'{"filter": {"state": "soon"}, "until": 3}', 422),
        (b'{"until": "later"}', 422), (b"{}", 422),
    ]
    for body, status in cases:
        answer = await quiet.post("/api/articles/queue", content=body, headers={"content-type": "application/json"})
        assert answer.status_code == status, (body, answer.text)
        assert answer.json()["error"], body
    unknown = await quiet.get("/api/imports/99")
    assert unknown.status_code == 404 and "no such import" in unknown.json()["error"]
    assert (await quiet.post("/api/imports/99/queue")).status_code == 404
    assert (await quiet.post("/api/imports/99/queue")).json()["error"]


async def test_nothing_but_a_persons_act_calls_queue_many():
    """The rule, read from the code: queue_many is called by the pages' and the API's
    handlers of a person's request, and by nothing else (no refresh, import, job or rule)."""
    import ast
    from pathlib import Path

    import reader

    root = Path(reader.__file__).parent
    callers = set()
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in ("queue_many", "queue_import", "_queue_selection"):
                callers.add(path.relative_to(root).as_posix())
    # the route table names the handlers; the handlers and the core call it
    assert callers == {"core/reader.py", "web/routes.py", "web/pages/taps.py", "web/pages/library.py",
                       "web/api/articles.py", "web/api/imports.py"}
    source = (root / "core/reader.py").read_text(encoding="utf-8")
    # inside the core only the two public acts reach the store's queue_many
    assert source.count("self._queue_selection(") == 2 and source.count("self._store.queue_many(") == 1
