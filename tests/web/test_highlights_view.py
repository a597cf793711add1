"""Highlights in the reader view, as the server paints them (no JavaScript needed to read
them): <mark>s in the text, a kept page that never shows stale marks, notes and tags as
text, and the detached ones listed with their quote."""

from __future__ import annotations

import re

from lxml import html as lxml_html

from ..helpers import subscribe_slugs


async def ready_article(quiet, pages) -> int:
    _, [article_id] = await subscribe_slugs(quiet, pages, ["one"])
    assert (await quiet.get(f"/api/articles/{article_id}/content")).status_code == 200
    return article_id


def marks(page: str) -> list[tuple[str, str]]:
    tree = lxml_html.document_fromstring(page)
    return [(m.get("data-hl"), m.text_content()) for m in tree.cssselect(".reading-body .body mark.hl")]


async def test_marks_are_painted_in_the_text_and_kept_pages_follow(quiet, pages):
    a = await ready_article(quiet, pages)
    first = (await quiet.get(f"/articles/{a}")).text
    assert marks(first) == [] and 'id="highlights"' in first
    quote = "Paragraph number 2 of Article one carries enough words"
    made = (await quiet.post(f"/api/articles/{a}/highlights",
                             json={"quote": quote, "note": "<img src=x onerror=alert(1)>", "tags": ["a&b"]})).json()
    page = (await quiet.get(f"/articles/{a}")).text  # the page kept before is not what is answered
    assert "".join(text for _, text in marks(page)) == quote
    assert {hl for hl, _ in marks(page)} == {str(made["id"])}
    assert f'id="hl-{made["id"]}"' in page and f'href="#hl-{made["id"]}"' in page
    # a note is text: escaped, never markup
    assert "<img src=x onerror" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "#a&amp;b" in page
    # changed, then deleted: each shows at once
    await quiet.patch(f"/api/highlights/{made['id']}", json={"color": "blue"})
    assert 'class="hl hl-blue"' in (await quiet.get(f"/articles/{a}")).text
    await quiet.delete(f"/api/highlights/{made['id']}")
    assert marks((await quiet.get(f"/articles/{a}")).text) == []


async def test_a_mark_across_paragraphs_is_a_mark_in_each(quiet, pages):
    a = await ready_article(quiet, pages)
    text = (await quiet.get(f"/api/articles/{a}/content")).json()["text"]
    start = text.index("full stop at its end.", text.index("Paragraph number 1"))
    end = text.index("Paragraph number 2") + len("Paragraph number 2")
    made = (await quiet.post(f"/api/articles/{a}/highlights", json={"start": start, "end": end})).json()
    page = (await quiet.get(f"/articles/{a}")).text
    found = marks(page)
    assert len(found) == 2 and all(hl == str(made["id"]) for hl, _ in found)
    assert found[0][1] == "full stop at its end." and found[1][1] == "Paragraph number 2"
    # each <mark> sits inside its paragraph
    assert re.search(r"<p>[^<]*<mark[^>]*>full stop at its end\.</mark></p>", page)


async def test_fifty_highlights_are_fifty_marks(quiet, pages):
    a = await ready_article(quiet, pages)
    text = (await quiet.get(f"/api/articles/{a}/content")).json()["text"]
    for i in range(50):
        start = i * len(text) // 60
        assert (await quiet.post(f"/api/articles/{a}/highlights", json={"start": start, "end": start + 12})).status_code == 200
    page = (await quiet.get(f"/articles/{a}")).text
    assert len({hl for hl, _ in marks(page)}) == 50


async def test_the_highlights_page_lists_filters_and_links_to_each_place(quiet, pages):
    a = await ready_article(quiet, pages)
    made = []
    for i in range(1, 5):
        answer = await quiet.post(f"/api/articles/{a}/highlights",
                                  json={"quote": f"Paragraph number {i} of", "tags": ["odd" if i % 2 else "even"],
                                        "note": f"<b>note {i}</b>"})
        made.append(answer.json()["id"])
    page = (await quiet.get("/highlights")).text
    links = re.findall(rf'href="/articles/{a}#hl-(\d+)"', page)
    assert links == [str(i) for i in made[::-1]]  # newest first
    assert "&lt;b&gt;note 4&lt;/b&gt;" in page and "<b>note" not in page
    odd = (await quiet.get("/highlights?tag=odd")).text
    assert re.findall(rf'href="/articles/{a}#hl-(\d+)"', odd) == [str(made[2]), str(made[0])]
    found = (await quiet.get("/highlights", params={"q": '"note 3"'})).text
    assert re.findall(rf'href="/articles/{a}#hl-(\d+)"', found) == [str(made[2])]
    assert "No highlight matches." in (await quiet.get("/highlights?q=nothing-like-it")).text
    assert "In <a" in (await quiet.get(f"/highlights?article={a}")).text
    # bad input is a page that says so, never a 500
    for query in ("before=nonsense", "article=abc", "feed=-1", f"q={'x' * 300}"):
        answer = await quiet.get(f"/highlights?{query}")
        assert 400 <= answer.status_code < 500, (query, answer.status_code)
    assert (await quiet.get("/highlights?article=999999")).status_code == 404


async def test_the_highlights_page_pages(quiet, pages, monkeypatch):
    from reader.web.pages import highlights
    monkeypatch.setattr(highlights, "PAGE", 2)
    a = await ready_article(quiet, pages)
    for i in range(1, 6):
        await quiet.post(f"/api/articles/{a}/highlights", json={"quote": f"Paragraph number {i} of"})
    seen, path = [], "/highlights"
    while path:
        page = (await quiet.get(path)).text
        seen += re.findall(r'#hl-(\d+)"', page)
        older = re.search(r'href="(/highlights\?before=[^"]+)"', page)
        path = older.group(1).replace("&amp;", "&") if older else None
    assert len(seen) == 5 and seen == sorted(seen, key=int, reverse=True)


async def test_the_downloads_on_the_highlights_page(quiet, pages):
    import io
    import zipfile

    a = await ready_article(quiet, pages)
    made = (await quiet.post(f"/api/articles/{a}/highlights", json={"quote": "Paragraph number 3 of"})).json()
    page = (await quiet.get("/highlights")).text
    assert 'href="/highlights.zip"' in page and 'href="/highlights.csv"' in page
    zipped = await quiet.get("/highlights.zip")
    assert zipped.headers["content-type"] == "application/zip"
    with zipfile.ZipFile(io.BytesIO(zipped.content)) as archive:
        [name] = archive.namelist()
        assert f"/articles/{a}#hl-{made['id']}" in archive.read(name).decode()
    sheet = await quiet.get("/highlights.csv")
    assert sheet.text.startswith("Highlight,Book Title,Book Author,Amazon Book ID,Note,Color,Tags,Location Type,"
                                 "Location,Highlighted at,Document tags\r\n")


async def test_fetch_it_again_from_the_article_page(quiet, pages):
    from ..helpers import article_html

    a = await ready_article(quiet, pages)
    made = (await quiet.post(f"/api/articles/{a}/highlights", json={"quote": "marker-one"})).json()
    page = (await quiet.get(f"/articles/{a}")).text
    assert f'action="/articles/{a}/refetch"' in page
    # the site rewrites its page: the marker is gone
    pages.add("/one.html", article_html("Article one", "rewritten-text"))
    answer = await quiet.post(f"/articles/{a}/refetch", follow_redirects=False)
    assert answer.status_code == 303 and answer.headers["location"] == f"/articles/{a}#highlights"
    page = (await quiet.get(f"/articles/{a}")).text
    assert "rewritten-text" in page and marks(page) == [] and "Not found in the current text" in page
    [kept] = (await quiet.get(f"/api/articles/{a}/highlights")).json()["items"]
    assert kept["id"] == made["id"] and kept["detached"]
    # a page that cannot be fetched keeps the text and says why
    pages.add("/one.html", "gone", status=404)
    failed = await quiet.post(f"/articles/{a}/refetch")
    assert failed.status_code == 502 and "keeps its text" in failed.text
    assert "rewritten-text" in (await quiet.get(f"/articles/{a}")).text


async def test_a_row_says_how_many_highlights_its_article_has(quiet, pages):
    a = await ready_article(quiet, pages)
    assert (await quiet.post(f"/api/articles/{a}/queue", json={})).status_code == 200  # on the reading list
    row = (await quiet.get("/", params={"state": "ready", "unread": 1})).text
    assert "highlight" not in row.split(f'id="card-{a}"')[1].split("</article>")[0]
    for quote in ("Paragraph number 2 of Article one", "Paragraph number 3 of Article one"):
        assert (await quiet.post(f"/api/articles/{a}/highlights", json={"quote": quote})).status_code in (200, 201)
    for params in ({"state": "ready", "unread": 1}, {}):
        page = (await quiet.get("/", params=params)).text
        card = page.split(f'id="card-{a}"')[1].split("</article>")[0]
        assert " · 2 highlights" in card


async def test_a_search_points_to_the_highlights_whose_note_holds_its_words(quiet, pages):
    """The search page searches the articles' words; a note is the person's own, and the
    highlights page searches those: the search says how many match and links there."""
    a = await ready_article(quiet, pages)
    quote = "Paragraph number 2 of Article one carries enough words"
    await quiet.post(f"/api/articles/{a}/highlights", json={"quote": quote, "note": "remember the zebrafish study"})
    page = (await quiet.get("/?q=zebrafish")).text
    assert "No articles match “zebrafish”." in page  # no article's text has the word
    link = lxml_html.document_fromstring(page).cssselect(".search-highlights a")
    assert [a_.text_content() for a_ in link] == ["One of your highlights matches “zebrafish”"]
    listed = (await quiet.get(link[0].get("href"))).text
    assert "remember the zebrafish study" in listed
    # a second one, and a word only the article has: no pointer
    second = await quiet.post(f"/api/articles/{a}/highlights", json={"quote": "Paragraph number 3 of Article one", "note": "zebrafish again"})
    assert second.status_code == 200, second.text
    assert "2 of your highlights match “zebrafish”" in (await quiet.get("/?q=zebrafish")).text
    assert "search-highlights" not in (await quiet.get("/?q=stop")).text  # in the text, in no quote or note
    assert "search-highlights" not in (await quiet.get("/?q=%22%22")).text  # nothing to search for
    # longer than the highlights page searches for: no pointer there, the search itself answers
    long = await quiet.get("/?q=" + "zebrafish+" * 30)
    assert long.status_code == 200 and "search-highlights" not in long.text
