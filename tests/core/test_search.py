"""Search: FTS5 over titles, feed summaries and cleaned text, from the browse page
(GET /?q=) and the API (GET /api/articles?q=). Ranked, with highlighted snippets that are
escaped text, never raw markup; whatever a person types gives results or a clear message,
never a 500; a cleaned article is searchable as soon as it is cached. Real SQLite, real
page servers, real extraction."""

from __future__ import annotations

import re

import pytest

from ..helpers import app_client, article_html, rss, wait_for

RSS = {"Content-Type": "application/rss+xml"}


def _date(i: int) -> str:
    return f"Mon, 0{i + 1} Nov 2026 10:00:00 GMT"


async def subscribe(client, pages, items) -> dict[str, int]:
    """items: (slug, title, summary, page html); returns slug -> article id."""
    feed_items = []
    for i, (slug, title, summary, page) in enumerate(items):
        link = pages.add(f"/{slug}.html", page)
        feed_items.append({"title": title, "link": link, "summary": summary, "date": _date(i)})
    url = pages.add("/feed.xml", rss(feed_items, title="Search feed"), headers=RSS)
    response = await client.post("/api/feeds", json={"url": url})
    assert response.status_code == 201, response.text
    listed = (await client.get("/api/articles", params={"limit": 500})).json()["items"]
    by_url = {a["url"]: a["id"] for a in listed}
    return {slug: by_url[pages.url(f"/{slug}.html")] for slug, *_ in items}


@pytest.fixture
async def library(quiet, pages):
    """Three articles about lighthouses: one says it in its title, one in its feed summary,
    one only in its cleaned text (opened, so it is cached); and one about nothing of it."""
    ids = await subscribe(quiet, pages, [
        ("title", "The lighthouse keepers of Brittany", "Stories from the coast.",
         article_html("Keepers", "marker-title")),
        ("summary", "Harbour notes", "A walk past the old lighthouse at dusk.",
         article_html("Harbour", "marker-summary")),
        ("body", "Coastal engineering", "Concrete, tides and patience.",
         article_html("Coastal", "The lighthouse foundations were poured at low tide")),
        ("other", "Gardening in clay", "Roots, worms and drainage.", article_html("Clay", "marker-other")),
    ])
    opened = await quiet.get(f"/articles/{ids['body']}")
    assert "foundations were poured" in opened.text  # cleaned and cached now
    return ids


async def test_api_search_ranks_a_title_match_above_summary_and_body_matches(quiet, library):
    response = await quiet.get("/api/articles", params={"q": "lighthouse"})
    assert response.status_code == 200
    items = response.json()["items"]
    assert [i["id"] for i in items][0] == library["title"]
    assert {i["id"] for i in items} == {library["title"], library["summary"], library["body"]}
    order = [i["id"] for i in items]
    assert order.index(library["title"]) < order.index(library["body"])
    for item in items:
        assert re.search(r"<mark>lighthouse</mark>", item["snippet"], re.I), item
        assert "\x02" not in item["snippet"] and "\x03" not in item["snippet"]
        assert {"read", "starred", "state"} <= item.keys()
    body = next(i for i in items if i["id"] == library["body"])
    assert "foundations were poured" in body["snippet"]  # the snippet comes from the cleaned text


async def test_the_browse_page_shows_ranked_results_with_marked_snippets(quiet, library):
    response = await quiet.get("/", params={"q": "lighthouse"})
    assert response.status_code == 200
    page = response.text
    ids = [int(i) for i in re.findall(r'id="card-(\d+)"', page)]
    assert ids[0] == library["title"] and set(ids) == {library["title"], library["summary"], library["body"]}
    snippets = re.findall(r'<p class="snippet">(.*?)</p>', page, re.S)
    assert len(snippets) == 3 and all(re.search(r"<mark>lighthouse</mark>", s, re.I) for s in snippets)
    assert 'value="lighthouse"' in page  # the search box keeps what was typed
    assert "Gardening" not in page


async def test_a_quoted_phrase_matches_only_the_phrase(quiet, library):
    items = (await quiet.get("/api/articles", params={"q": '"poured at low tide"'})).json()["items"]
    assert [i["id"] for i in items] == [library["body"]]
    none = (await quiet.get("/api/articles", params={"q": '"tide at low poured"'})).json()["items"]
    assert none == []


async def test_snippets_are_escaped_text_with_only_the_marks_as_markup(quiet, pages):
    ids = await subscribe(quiet, pages, [
        # a title whose text (not markup) is a tag around the word
        ("evil", "&amp;lt;b onmouseover=alert(1)&amp;gt;lighthouse&amp;lt;/b&amp;gt; &amp;amp; co",
         "&lt;script&gt;alert(2)&lt;/script&gt; lighthouse summary", article_html("Evil", "marker-evil")),
    ])
    item = (await quiet.get("/api/articles", params={"q": "lighthouse"})).json()["items"][0]
    assert item["id"] == ids["evil"]
    assert "<b" not in item["snippet"] and "<script" not in item["snippet"]
    assert "&lt;b onmouseover=alert(1)&gt;<mark>lighthouse</mark>&lt;/b&gt;" in item["snippet"]
    page = (await quiet.get("/", params={"q": "lighthouse"})).text
    assert "<b onmouseover" not in page and "<script>alert" not in page
    assert re.search(r"&lt;b onmouseover=alert\(1\)&gt;<mark>lighthouse</mark>&lt;/b&gt;", page)


@pytest.mark.parametrize("text", [
    '"', '""', '"unbalanced', "lighthouse\"", "*", "light*", "^lighthouse", "NEAR(", "NEAR(lighthouse tide, 3)",
    "lighthouse AND", "AND", "OR NOT", "-", "-lighthouse", "((", "lighthouse)", "!!!", "?", "title:lighthouse",
    "{title}: x", "\\", "'", "'; DROP TABLE articles; --", "a" * 600, "ü∂ƒ©", "🙂 lighthouse",
])
async def test_special_characters_give_results_or_a_clear_message_never_a_500(quiet, library, text):
    page = await quiet.get("/", params={"q": text})
    assert page.status_code == 200, page.text
    assert 'role="status"' in page.text or 'class="snippet"' in page.text  # a message, or results
    api = await quiet.get("/api/articles", params={"q": text})
    assert api.status_code in (200, 422), api.text
    body = api.json()
    if api.status_code == 422:
        assert "q" in body["error"]
    else:
        assert isinstance(body["items"], list)
    # the library is untouched whatever was typed
    assert len((await quiet.get("/api/articles")).json()["items"]) == 4


async def test_only_punctuation_says_there_is_nothing_to_search_for(quiet, library):
    page = (await quiet.get("/", params={"q": "?!*"})).text
    assert "Nothing to search for" in page
    api = await quiet.get("/api/articles", params={"q": "?!*"})
    assert api.status_code == 422 and "nothing to search for" in api.json()["error"]


async def test_no_match_says_so(quiet, library):
    page = (await quiet.get("/", params={"q": "zeppelin"})).text
    assert "No articles match “zeppelin”" in page
    assert (await quiet.get("/api/articles", params={"q": "zeppelin"})).json() == {"items": []}


async def test_a_cleaned_article_is_searchable_as_soon_as_it_is_cached(settings, pages):
    """The trigger on `contents` indexes the text in the same transaction that stores it:
    the moment the API says ready, search finds words only the page body has."""
    async with app_client(settings) as client:  # with the in-process worker
        ids = await subscribe(client, pages, [
            ("deep", "A plain headline", "A plain summary.", article_html("Deep", "quixotic-periwinkle-marker")),
        ])
        before = (await client.get("/api/articles", params={"q": "periwinkle"})).json()["items"]
        assert before == []  # not cleaned yet: the feed never said it
        assert (await client.post(f"/api/articles/{ids['deep']}/queue")).status_code == 200

        async def ready():
            return (await client.get(f"/api/articles/{ids['deep']}")).json()["state"] == "ready"

        await wait_for(ready, timeout=30)
        found = (await client.get("/api/articles", params={"q": "periwinkle"})).json()["items"]
        assert [f["id"] for f in found] == [ids["deep"]]
        assert "<mark>" in found[0]["snippet"] and "periwinkle" in found[0]["snippet"]


async def test_search_results_page_by_offset(settings, pages):
    async with app_client(settings.replace(serve_workers=0, page_size=2)) as client:
        await subscribe(client, pages, [
            (f"s{i}", f"Lighthouse number {i}", "", article_html(f"S{i}", f"marker-{i}")) for i in range(5)
        ])
        seen = []
        url = "/?q=lighthouse"
        while url:
            page = (await client.get(url)).text
            seen += re.findall(r'id="card-(\d+)"', page)
            more = re.search(r'<a href="([^"]+)" rel="next">More results</a>', page)
            url = more.group(1).replace("&amp;", "&") if more else None
        assert len(seen) == 5 and len(set(seen)) == 5
        api = (await client.get("/api/articles", params={"q": "lighthouse", "limit": 2, "offset": 4})).json()
        assert len(api["items"]) == 1
        bad = await client.get("/api/articles", params={"q": "lighthouse", "offset": -1})
        assert bad.status_code == 422
        assert (await client.get("/", params={"q": "lighthouse", "offset": "x"})).status_code == 400


async def test_words_a_page_marks_with_soft_hyphens_are_found_by_their_letters(quiet, pages):
    """A page that marks where its long words may break (&shy;, common on German sites) or
    puts a zero-width space inside one: the words are found as a person types them, in the
    body, the title and the summary, and a term pasted with the marks finds them too."""
    ids = await subscribe(quiet, pages, [
        ("wine", "Der St. Mag&#173;da&#173;le&#173;ner", "Ein Rot&#173;wein aus Bo&#173;zen.",
         article_html("Wein", "Die Win&shy;zer ober&shy;halb Bozens keltern den Ver&#8203;nat&shy;sch seit langem")),
        ("other", "Gardening in clay", "Roots, worms and drainage.", article_html("Clay", "marker-other")),
    ])
    opened = await quiet.get(f"/articles/{ids['wine']}")
    assert opened.status_code == 200 and "ober\u00adhalb" in opened.text  # the page keeps its marks
    for typed in ("Winzer oberhalb", "Vernatsch", "Magdalener", "Rotwein Bozen", "Win\u00adzer", '"Winzer oberhalb"'):
        found = (await quiet.get("/api/articles", params={"q": typed})).json()["items"]
        assert [item["id"] for item in found] == [ids["wine"]], typed
