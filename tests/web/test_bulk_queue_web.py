"""Queue these, through the pages as a browser without JavaScript posts them: the list's
buttons beside Mark these read, the notice with its estimate and its undo, the import
report's "Queue the N unread links", and every one of these writes refused without the
page's CSRF token or from another site."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

from reader.web.csrf import CSRF_COOKIE

from ..helpers import app_client, state_of, subscribe_slugs, wait_for

SLUGS = ["alpha", "beta", "gamma", "delta"]


def forms_to(page: str, action: str) -> list[dict[str, str]]:
    """The hidden fields of every form on the page that posts to `action`."""
    found = []
    for form in re.findall(r"<form\b.*?</form>", page, re.DOTALL):
        if f'action="{action}"' in form:
            found.append(dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', form)))
    return found


def notice(page: str) -> str:
    found = re.search(r'<div class="notice bulk-notice" role="status">(.*?)</div>', page, re.DOTALL)
    assert found, "no bulk notice on the page"
    return " ".join(re.sub(r"<[^>]+>", " ", found.group(1)).split())


async def test_queue_these_from_the_list_then_undo_it(quiet, pages):
    _, (a, b, c, d) = await subscribe_slugs(quiet, pages, SLUGS)
    await quiet.post(f"/api/articles/{b}/queue")  # in line already: not one of "these"
    page = (await quiet.get("/")).text
    these, everything = forms_to(page, "/articles/queue")
    assert "Queue these" in page and "Queue all" in page
    assert sorted(map(int, these["ids"].split(","))) == [a, c, d] and "until" not in these
    assert "ids" not in everything and int(everything["until"]) == max(a, b, c, d)

    queued = await quiet.post("/articles/queue", data=these)
    assert queued.status_code == 303
    query = parse_qs(urlsplit(queued.headers["location"]).query)
    assert query["queued"] == ["3"] and query["qwait"] == ["none"]  # no worker runs in this app
    shown = (await quiet.get(queued.headers["location"])).text
    assert notice(shown).startswith("Queued 3 · no worker is running")
    assert [await state_of(quiet, i) for i in (a, b, c, d)] == ["queued"] * 4
    assert "Queue these" not in shown  # nothing on the page is left to queue

    [undo] = forms_to(shown, "/articles/queue/undo")
    assert undo["undo"] == query["qundo"][0] and undo["next"] == "/"
    undone = await quiet.post("/articles/queue/undo", data=undo)
    assert undone.status_code == 303 and "unqueued=3" in undone.headers["location"]
    assert notice((await quiet.get(undone.headers["location"])).text) == "Took 3 articles back out of the line."
    assert [await state_of(quiet, i) for i in (a, b, c, d)] == ["new", "queued", "new", "new"]
    assert (await quiet.post("/articles/queue/undo", data={"undo": "soon"})).status_code == 422


async def test_the_notice_says_when_all_will_be_ready_and_when_nothing_was_left(settings, pages):
    async with app_client(settings.replace(serve_workers=0, extract_processes=0)) as client:
        _, ids = await subscribe_slugs(client, pages, SLUGS)
        await client.app.state.reader._store.worker_alive("elsewhere", 1, 60.0)  # one slot, another process
        page = (await client.get("/?unread=1")).text
        [_, everything] = forms_to(page, "/articles/queue")
        assert everything["unread"] == "1" and everything["next"] == "/?unread=1"
        queued = await client.post("/articles/queue", data=everything)
        # four of one site on one slot, 5 s each at the first guess: the last in 20 s
        assert notice((await client.get(queued.headers["location"])).text).startswith(
            "Queued 4 · all ready in about 20 s")
        again = await client.post("/articles/queue", data=everything)
        assert notice((await client.get(again.headers["location"])).text).startswith("Nothing to queue")


async def test_the_ready_list_offers_no_queue_all(quiet, pages):
    await subscribe_slugs(quiet, pages, SLUGS[:1])
    assert "Queue all" not in (await quiet.get("/?state=queued")).text
    assert "Queue all" in (await quiet.get("/?state=new")).text


async def test_the_import_report_queues_exactly_the_imports_unread_links(quiet):
    before = (await quiet.post("/api/articles", json={"url": "https://example.org/before"})).json()["id"]
    csv = ("title,url,time_added,tags,status\n"
           "A,https://example.org/a,1700000000,,unread\n"
           "B,https://example.org/b,1700000060,,archive\n"
           "C,https://example.org/c,1700000120,,unread\n").encode()
    imported = await quiet.post("/feeds/import", files={"file": ("pocket.csv", csv)})
    report_url = imported.headers["location"]

    async def finished() -> bool:
        return "Importing" in (page := (await quiet.get(report_url)).text) and "Done (" in page

    await wait_for(finished)
    page = (await quiet.get(report_url)).text
    assert "No link was fetched or queued" in page  # the import did not queue, it offers to
    [fields] = forms_to(page, report_url + "/queue")
    assert "Queue the 2 unread links" in page
    pressed = await quiet.post(report_url + "/queue", data=fields)
    assert pressed.status_code == 303
    target = pressed.headers["location"]
    assert target.startswith("/?state=queued&queued=2")
    listed = (await quiet.get(target)).text
    assert notice(listed).startswith("Queued 2")
    by_url = {i["url"]: i for i in (await quiet.get("/api/articles")).json()["items"]}
    assert {u: i["state"] for u, i in by_url.items()} == {
        "https://example.org/before": "new", "https://example.org/a": "queued",
        "https://example.org/b": "new", "https://example.org/c": "queued"}
    assert await state_of(quiet, before) == "new"
    assert "unread link" not in (await quiet.get(report_url)).text  # nothing left to offer


async def test_bulk_queue_writes_are_refused_without_the_token_or_from_another_site(settings, pages):
    async with app_client(settings.replace(serve_workers=0, extract_processes=0), csrf=False) as bare:
        _, ids = await subscribe_slugs(bare, pages, SLUGS[:2])
        await bare.get("/")  # the browser has the token cookie; a forged form lacks the token
        csv = b"title,url,time_added,tags,status\nA,https://example.org/a,1700000000,,unread\n"
        token = bare.cookies.get(CSRF_COOKIE)
        imported = await bare.post("/feeds/import", files={"file": ("pocket.csv", csv)}, data={"csrf": token})
        job = imported.headers["location"]
        await wait_for(lambda: _finished(bare, job))
        for path, data in (("/articles/queue", {"ids": ",".join(map(str, ids))}),
                           ("/articles/queue", {"until": str(max(ids))}),
                           ("/articles/queue/undo", {"undo": "1.5"}),
                           (job + "/queue", {})):
            assert (await bare.post(path, data=data)).status_code == 403, path
            assert (await bare.post(path, data={**data, "csrf": "x" * 43})).status_code == 403, path
        cross = {"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}
        for path in ("/api/articles/queue", "/api/imports/1/queue", "/api/articles/queue/undo"):
            refused = await bare.post(path, json={"ids": ids, "undo": "1.5"}, headers=cross)
            assert refused.status_code == 403, path
        assert [await state_of(bare, i) for i in ids] == ["new", "new"]
        assert (await bare.get("/api/queue")).json()["items"] == []


async def _finished(client, report_url: str) -> bool:
    job = report_url.rsplit("/", 1)[1]
    return (await client.get(f"/api/imports/{job}")).json()["finished"]
