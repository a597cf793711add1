"""The lists as pages: how much a page of headlines weighs (bytes, not time: speed is
benchmarks/list_pages.py's), that every count over a list counts that list, what a
reading-list row says, and the feed filter's choice. Real SQLite files, real page servers."""

from __future__ import annotations

import html
import re

from ..helpers import app_client, card_ids, published, rss

RSS = {"Content-Type": "application/rss+xml"}
CARD = re.compile(r'<article class="card\b.*?</article>', re.DOTALL)
UNREAD_LINK = re.compile(r'<a href="([^"]*)" (?:aria-current="page")?>unread(?: <span class="count">([^<]+)</span>)?</a>')
# Headlines as long as real ones, with the feed's summary a card leaves out of a row.
WORDS = ("reading queue server thread careful notebook rhythm publisher evening honest column "
         "design practical morning library worker").split()


def _title(i: int) -> str:
    return " ".join(WORDS[(i * 7 + k) % len(WORDS)] for k in range(9)).capitalize() + f" #{i}"


def _feed(pages, name: str, n: int, path: str, first: int = 0) -> str:
    items = [{"title": _title(first + i), "link": pages.add_article(f"{name}-{i}"), "date": published(i),
              "summary": f"What {_title(first + i).lower()} is about, in a sentence or two from the feed."}
             for i in range(n)]
    return pages.add(path, rss(items, title=f"{name.capitalize()}: notes on software and reading"), headers=RSS)


async def _subscribe(client, pages, name: str, n: int, first: int = 0) -> tuple[int, list[int]]:
    answer = await client.post("/api/feeds", json={"url": _feed(pages, name, n, f"/{name}.xml", first)})
    assert answer.status_code == 201, answer.text
    feed_id = answer.json()["id"]
    items = (await client.get("/api/articles", params={"feed": feed_id, "limit": 500})).json()["items"]
    return feed_id, [i["id"] for i in items]


async def test_a_page_of_50_headlines_is_under_60_kb_and_each_row_under_1_2_kb(settings, pages):
    """The menu behind each row's ⋯ is the page's one template, not a copy of its forms in
    every row (3.5 KB a row before): 50 rows of every kind, tagged, starred, queued (with
    and without a lane), failed and ready, with the feed filter of 12 feeds."""
    async with app_client(settings.replace(serve_workers=0)) as client:
        _, ids = await _subscribe(client, pages, "main", 60)
        for n in range(11):
            await _subscribe(client, pages, f"other{n}", 1, first=100 + n)
        for i in ids[:6]:
            await client.post(f"/api/articles/{i}/queue", json={"lane": "next" if i % 2 else "normal"})
        for i in ids[6:12]:
            await client.post(f"/api/articles/{i}/star")
            await client.post(f"/api/articles/{i}/tags", json={"tags": ["later", "software"]})
        pages.add("/main-47.html", "gone", status=410)  # ids are newest first: item 47 is ids[12]
        for i in ids[12:14]:  # failed (the page is gone, which its card says) and ready
            await client.get(f"/articles/{i}")
        assert [(await client.get(f"/api/articles/{i}")).json()["state"] for i in ids[12:14]] == ["failed", "ready"]
        response = await client.get("/")
    assert response.status_code == 200
    page = response.content
    rows = CARD.findall(response.text)
    assert len(rows) == 50
    assert len(page) < 60_000, f"{len(page)} bytes"
    sizes = sorted(len(r.encode()) for r in rows)
    assert sizes[-1] < 1_200, sizes[-5:]
    # and the menu is there once, not once a row
    assert response.text.count('<template id="row-menu">') == 1 and response.text.count("Save tags") == 1


async def test_each_unread_count_counts_the_list_it_leads_to(settings, pages):
    """"unread 286" over a list of 23 said the library's count over a filtered list. The
    count beside `unread` is what the unread list within the other filters holds, the list
    its link opens: for a feed, a folder, a state (the ready one: the reading list), a tag,
    starred and their mixes; a search shows none (it is ranked, not counted)."""
    async with app_client(settings.replace(serve_workers=0, page_size=200)) as client:
        one, a = await _subscribe(client, pages, "one", 8)
        two, b = await _subscribe(client, pages, "two", 5, first=20)
        three, c = await _subscribe(client, pages, "three", 3, first=40)
        await client.patch(f"/api/feeds/{one}", json={"folder": "Tech"})
        await client.patch(f"/api/feeds/{three}", json={"folder": "Tech"})
        await client.post("/api/articles", json={"url": pages.url("/saved.html"), "title": "Saved by hand"})
        for i in (a[0], a[1], b[0]):  # ready, and read (opened)
            assert (await client.get(f"/articles/{i}")).status_code == 200
        for i in (a[2], b[1]):  # ready, not read: on the reading list
            assert (await client.get(f"/api/articles/{i}/content")).status_code == 200
        await client.post(f"/api/articles/{a[3]}/star")
        await client.post(f"/api/articles/{a[4]}/star")
        await client.post(f"/api/articles/{a[4]}/read")
        await client.post(f"/api/articles/{c[0]}/tags", json={"tags": ["deep"]})
        await client.post(f"/api/articles/{b[2]}/tags", json={"tags": ["deep"]})

        lists = ["/", f"/?feed={one}", f"/?feed={two}", "/?folder=Tech", "/?state=ready", "/?state=new",
                 "/?starred=1", "/?tag=deep", f"/?folder=Tech&starred=1", f"/?feed={two}&folder=Tech",
                 "/?state=ready&unread=1", f"/?feed={one}&unread=1", "/?unread=1&tag=deep"]
        counts = {}
        for path in lists:
            page = (await client.get(path)).text
            link = UNREAD_LINK.search(page)
            assert link and link.group(2) is not None, path
            target = html.unescape(link.group(1))
            if "unread=1" in path:  # the link takes the filter off: the count is of this list
                target = path
            listed = card_ids((await client.get(target)).text)
            counts[path] = int(link.group(2))
            assert counts[path] == len(listed), (path, target, counts[path], len(listed))
        # what they are, so that no count is right by accident
        assert counts["/"] == 8 + 5 + 3 + 1 - 4  # every unread one, the saved link too
        assert counts["/?state=ready"] == counts["/?state=ready&unread=1"] == 2  # the reading list
        assert counts[f"/?feed={two}&folder=Tech"] == 0 and counts["/?folder=Tech"] == 8 - 3 + 3
        assert counts["/?starred=1"] == 1 and counts["/?tag=deep"] == 2
        search = (await client.get("/?q=Saved")).text
        assert UNREAD_LINK.search(search).group(2) is None


async def test_reading_list_rows_say_site_reading_time_and_progress(settings, pages):
    async with app_client(settings.replace(serve_workers=0)) as client:
        _, ids = await _subscribe(client, pages, "read", 3)
        for i in ids[:2]:
            assert (await client.get(f"/api/articles/{i}/content")).status_code == 200
        words = (await client.get(f"/api/articles/{ids[0]}/content")).json()["words"]
        await client.get(f"/articles/{ids[0]}")  # opened, and left part-way
        await client.put(f"/api/articles/{ids[0]}/position", json={"position": 0.4})
        page = (await client.get("/", params={"state": "ready", "unread": "1"})).text
    assert card_ids(page) == [ids[1], ids[0]] or card_ids(page) == [ids[0], ids[1]]
    rows = {int(re.search(r'id="card-(\d+)"', r).group(1)): r for r in CARD.findall(page)}
    minutes = max(1, round(words / 230))
    meta = re.search(r'<p class="meta">(.*?)</p>', rows[ids[0]]).group(1)
    text = html.unescape(re.sub(r"<[^>]+>", "", meta))
    # the site (not the feed), how long it takes, how far the person got; no age, no "ready"
    assert text == f"127.0.0.1 · {minutes} min · 40% read", text
    other = html.unescape(re.sub(r"<[^>]+>", "", re.search(r'<p class="meta">(.*?)</p>', rows[ids[1]]).group(1)))
    assert other.startswith("unread ·127.0.0.1 · ") and other.endswith(" min"), other


async def test_the_feed_filter_applies_at_once_and_keeps_show_for_no_javascript(settings, pages):
    async with app_client(settings.replace(serve_workers=0)) as client:
        one, _ = await _subscribe(client, pages, "one", 2)
        page = (await client.get("/", params={"unread": "1"})).text
    form = re.search(r'<form class="feed-filter".*?</form>', page, re.DOTALL).group(0)
    assert '<select id="feed-select" name="feed" data-applies>' in form  # static/app.js submits a choice
    assert '<button type="submit" class="secondary" data-without-js>Show</button>' in form  # hidden with a script
    assert '<input type="hidden" name="unread" value="1">' in form  # the other filters stay
    assert f"<option value={one}>One: notes on software and reading\n" in form


async def test_the_feed_filter_lists_the_feeds_in_the_library_pages_order(settings, pages):
    """By name as SQLite's lower() folds it (ASCII letters only), ties by id: the filter
    sorts what one statement reads in no order, as the library page's ORDER BY does."""
    names = ["beta", "Alpha", "Ábc", "zed", "Zebra", "alpha"]
    async with app_client(settings.replace(serve_workers=0)) as client:
        for n, name in enumerate(names):
            feed = pages.add(f"/named{n}.xml", rss([{"title": f"Item {n}", "link": pages.add_article(f"named{n}"),
                                                     "date": published(n)}], title=name), headers=RSS)
            assert (await client.post("/api/feeds", json={"url": feed})).status_code == 201
        library = [f["id"] for f in (await client.get("/api/feeds")).json()["feeds"]]
        page = (await client.get("/")).text
    chosen = [int(i) for i in re.findall(r"<option value=(\d+)>", page)]
    assert chosen == library
    assert re.findall(r"<option value=\d+>([^\n]+)", page) == ["Alpha", "alpha", "beta", "Zebra", "zed", "Ábc"]
