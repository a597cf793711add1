"""Highlights through the core against a real SQLite file and a real page server: made
from a quote or offsets, refused with a reason, capped, and placed again when a reclean
brings a new text (moved with the words around them, or detached when they are gone)."""

from __future__ import annotations

import pytest

from reader.core import running
from reader.core.highlights import MAX_QUOTE
from reader.errors import Invalid, NotFound

from ..helpers import app_client, run_cli


def article_page(middle: str) -> str:
    before = "\n".join(f"<p>Opening paragraph {i} sets the scene with enough ordinary words to read as prose,"
                       f" commas included, and it ends with a stop.</p>" for i in range(4))
    after = "\n".join(f"<p>Closing paragraph {i} wraps the story up with enough ordinary words to read as"
                      f" prose, commas included, and a stop.</p>" for i in range(4))
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>Presses</title></head><body><main><article>"
            f"<h1>Presses</h1>{before}<p>{middle}</p>{after}</article></main></body></html>")


PASSAGE = "Before the press, every copy was made by hand, slowly, by scribes who made mistakes."


async def cleaned(settings, pages, body: str) -> int:
    link = pages.add("/press.html", body)
    async with app_client(settings.replace(serve_workers=0, extract_processes=0)) as client:
        article_id = int((await client.post("/api/articles", json={"url": link})).json()["id"])
        assert (await client.get(f"/api/articles/{article_id}/content")).status_code == 200
    return article_id


async def test_made_from_a_quote_or_offsets_and_refused_with_a_reason(settings, pages):
    article_id = await cleaned(settings, pages, article_page(PASSAGE))
    async with running(settings.replace(extract_processes=0), worker=False) as reader:
        text = (await reader.reading(article_id))[1].text
        made = await reader.add_highlight(article_id, {"quote": "every copy was made by hand", "note": "<b>hm</b>",
                                                       "tags": "history, Press"})
        assert text[made["start"]:made["end"]] == "every copy was made by hand"
        assert made["note"] == "<b>hm</b>" and made["tags"] == ["history", "Press"] and not made["detached"]
        start = text.index("scribes")
        by_offsets = await reader.add_highlight(article_id, {"start": start, "end": start + 7, "color": "blue"})
        assert by_offsets["quote"] == "scribes" and by_offsets["color"] == "blue"
        assert [h["id"] for h in await reader.highlights(article_id)] == [made["id"], by_offsets["id"]]

        refusals = [
            ({"quote": "words that are nowhere in it"}, "not in the article's text"),
            ({}, "give the highlighted text"),
            ({"quote": "x" * (MAX_QUOTE + 1)}, "at most 5,000"),
            ({"quote": "scribes", "color": "octarine"}, "color must be one of"),
            ({"quote": "scribes", "note": 5}, "note must be text"),
            ({"start": 5, "end": 2}, "end must come after start"),
            ({"start": -1, "end": 2}, "whole number"),
            ({"start": 0, "end": 10 ** 7}, "at most 5,000"),
            ({"quote": "scribes", "tags": [f"t{i}" for i in range(30)]}, "at most 20 tags"),
        ]
        for body, says in refusals:
            with pytest.raises(Invalid, match=says):
                await reader.add_highlight(article_id, body)
        with pytest.raises(NotFound):
            await reader.add_highlight(article_id + 100, {"quote": "scribes"})
        changed = await reader.update_highlight(made["id"], {"note": "changed", "color": "pink"})
        assert changed["note"] == "changed" and changed["color"] == "pink"
        with pytest.raises(Invalid, match="nothing to change"):
            await reader.update_highlight(made["id"], {})
        await reader.delete_highlight(by_offsets["id"])
        with pytest.raises(NotFound):
            await reader.delete_highlight(by_offsets["id"])


async def test_an_article_not_cleaned_yet_has_nothing_to_highlight_in(settings):
    async with running(settings.replace(extract_processes=0), worker=False) as reader:
        article, _ = await reader.save("https://example.test/later")
        with pytest.raises(Invalid, match="no cleaned text yet"):
            await reader.add_highlight(article.id, {"quote": "anything"})


async def test_a_highlight_bumps_the_version_a_kept_page_is_keyed_by(settings, pages):
    article_id = await cleaned(settings, pages, article_page(PASSAGE))
    async with running(settings.replace(extract_processes=0), worker=False) as reader:
        before, _ = await reader.page_version(article_id)
        made = await reader.add_highlight(article_id, {"quote": "scribes"})
        after, _ = await reader.page_version(article_id)
        assert after > before
        await reader.update_highlight(made["id"], {"note": "n"})
        assert (await reader.page_version(article_id))[0] > after


async def test_the_cap_per_article_is_a_sentence(settings, pages, monkeypatch):
    from reader.core import highlights
    monkeypatch.setattr(highlights, "MAX_PER_ARTICLE", 2)
    article_id = await cleaned(settings, pages, article_page(PASSAGE))
    async with running(settings.replace(extract_processes=0), worker=False) as reader:
        await reader.add_highlight(article_id, {"quote": "scribes"})
        await reader.add_highlight(article_id, {"quote": "mistakes"})
        with pytest.raises(Invalid, match="has 2 highlights, the most"):
            await reader.add_highlight(article_id, {"quote": "slowly"})


async def test_a_refetched_text_moves_a_highlight_with_its_words(settings, pages):
    article_id = await cleaned(settings, pages, article_page(PASSAGE))
    async with running(settings.replace(extract_processes=0), worker=False) as reader:
        made = await reader.add_highlight(article_id, {"quote": "every copy was made by hand"})
    # the site adds a sentence before the passage and edits the passage itself
    pages.add("/press.html", article_page("A new sentence the site added in front of it all. "
                                          + PASSAGE.replace("every copy", "every single copy")))
    code, out, err = await run_cli(settings.db, "reclean", "--refetch", str(article_id))
    assert code == 0 and "recleaned" in out, err
    async with running(settings.replace(extract_processes=0), worker=False) as reader:
        text = (await reader.reading(article_id))[1].text
        [moved] = await reader.highlights(article_id)
    assert "A new sentence" in text
    assert not moved["detached"] and moved["start"] > made["start"]
    assert text[moved["start"]:moved["end"]] == "every single copy was made by hand"
    assert moved["quote"] == "every copy was made by hand"  # kept as the person chose it


async def test_a_passage_gone_from_the_refetched_text_is_detached_not_lost(settings, pages):
    article_id = await cleaned(settings, pages, article_page(PASSAGE))
    async with running(settings.replace(extract_processes=0), worker=False) as reader:
        made = await reader.add_highlight(article_id, {"quote": "scribes who made mistakes", "note": "kept"})
        kept = await reader.add_highlight(article_id, {"quote": "Opening paragraph 2 sets the scene"})
    pages.add("/press.html", article_page("The site rewrote this part about gardening and compost entirely."))
    code, _, err = await run_cli(settings.db, "reclean", "--refetch", str(article_id))
    assert code == 0, err
    async with running(settings.replace(extract_processes=0), worker=False) as reader:
        found = {h["id"]: h for h in await reader.highlights(article_id)}
        page = await reader.reading_page(article_id)
    assert found[made["id"]]["detached"] and found[made["id"]]["note"] == "kept"
    assert found[made["id"]]["quote"] == "scribes who made mistakes"
    assert not found[kept["id"]]["detached"]
    assert [h["detached"] for h in page.highlights] == [False, True]  # placed ones first


async def test_a_reclean_from_the_stored_page_keeps_highlights_where_they_are(settings, pages):
    article_id = await cleaned(settings, pages, article_page(PASSAGE))
    async with running(settings.replace(extract_processes=0), worker=False) as reader:
        made = await reader.add_highlight(article_id, {"quote": "scribes"})
        assert (await reader.reclean(article_id))[0] == "cached"
        [again] = await reader.highlights(article_id)
    assert (again["start"], again["end"], again["detached"]) == (made["start"], made["end"], False)


async def test_an_export_keeps_highlights_as_web_annotations_and_brings_them_back_exactly(settings, pages, tmp_path):
    import json

    article_id = await cleaned(settings, pages, article_page(PASSAGE))
    async with running(settings.replace(extract_processes=0), worker=False) as reader:
        await reader.add_highlight(article_id, {"quote": "every copy was made by hand", "note": "by hand",
                                                "tags": ["history"], "color": "green"})
        await reader.add_highlight(article_id, {"quote": "scribes"})
    # one detached: the site rewrote that part
    pages.add("/press.html", article_page(PASSAGE.replace("scribes", "monks")))
    assert (await run_cli(settings.db, "reclean", "--refetch", str(article_id)))[0] == 0
    first = tmp_path / "first.json"
    code, _, err = await run_cli(settings.db, "export", "--out", str(first))
    assert code == 0, err
    document = json.loads(first.read_text())
    [record] = [r for r in document["articles"] if r["highlights"]]
    by_quote = {h["target"]["selector"][0]["exact"]: h for h in record["highlights"]}
    made = by_quote["every copy was made by hand"]
    assert made["type"] == "Annotation" and made["@context"] == "http://www.w3.org/ns/anno.jsonld"
    assert made["color"] == "green" and made["target"]["source"] == record["url"]
    assert [s["type"] for s in made["target"]["selector"]] == ["TextQuoteSelector", "TextPositionSelector"]
    assert {(b["purpose"], b["value"]) for b in made["body"]} == {("commenting", "by hand"), ("tagging", "history")}
    # the detached one keeps its quote and has no place
    assert [s["type"] for s in by_quote["scribes"]["target"]["selector"]] == ["TextQuoteSelector"]

    fresh = tmp_path / "fresh.db"
    code, _, err = await run_cli(fresh, "import", str(first), "--no-refresh")
    assert code == 0, err
    second = tmp_path / "second.json"
    assert (await run_cli(fresh, "export", "--out", str(second)))[0] == 0
    a, b = json.loads(first.read_text()), json.loads(second.read_text())
    a.pop("exported_at"), b.pop("exported_at")
    assert a == b
    # and importing it again adds nothing
    assert (await run_cli(fresh, "import", str(first), "--no-refresh"))[0] == 0
    third = tmp_path / "third.json"
    assert (await run_cli(fresh, "export", "--out", str(third)))[0] == 0
    c = json.loads(third.read_text())
    c.pop("exported_at")
    assert c == a


def front_matter(markdown: str) -> tuple[dict, str]:
    """The YAML front matter of a Markdown file (each value written as JSON), and the rest."""
    import json

    assert markdown.startswith("---\n")
    head, _, rest = markdown[4:].partition("\n---\n")
    fields = {}
    for line in head.splitlines():
        key, _, value = line.partition(": ")
        fields[key] = json.loads(value)
    return fields, rest


async def test_markdown_and_readwise_exports_parse_back(settings, pages, tmp_path):
    import csv
    import io
    import zipfile

    article_id = await cleaned(settings, pages, article_page(PASSAGE))
    async with running(settings.replace(extract_processes=0), worker=False) as reader:
        await reader.set_tags([article_id], ["print", "history"])
        first = await reader.add_highlight(article_id, {"quote": "every copy was made by hand",
                                                        "note": 'A "note", with a comma', "tags": ["hand made"]})
        await reader.add_highlight(article_id, {"quote": "scribes who made mistakes", "color": "pink"})
    folder = tmp_path / "notes"
    code, out, err = await run_cli(settings.db, "export", "--highlights", str(folder))
    assert code == 0, err
    [written] = list(folder.iterdir())
    assert written.name == f"presses-{article_id}.md" and str(written) in out
    fields, rest = front_matter(written.read_text())
    assert fields["title"] == "Presses" and fields["url"] == pages.url("/press.html")
    assert fields["tags"] == ["history", "print"] and fields["highlights"] == 2 and fields["saved"].endswith("Z")
    assert "> every copy was made by hand\n\nA \"note\", with a comma\n" in rest
    assert f"(http://127.0.0.1:8000/articles/{article_id}#hl-{first['id']})" in rest and "#hand-made" in rest

    zipped = tmp_path / "notes.zip"
    assert (await run_cli(settings.db, "export", "--highlights", str(zipped)))[0] == 0
    with zipfile.ZipFile(zipped) as archive:
        assert archive.namelist() == [f"highlights/{written.name}"]
        assert archive.read(archive.namelist()[0]).decode() == written.read_text()

    sheet = tmp_path / "readwise.csv"
    assert (await run_cli(settings.db, "export", "--readwise", str(sheet)))[0] == 0
    raw = sheet.read_text(encoding="utf-8")
    assert raw.splitlines()[0] == ("Highlight,Book Title,Book Author,Amazon Book ID,Note,Color,Tags,Location Type,"
                                   "Location,Highlighted at,Document tags")
    rows = list(csv.DictReader(io.StringIO(raw)))
    assert [(r["Highlight"], r["Note"], r["Color"], r["Location"]) for r in rows] == [
        ("every copy was made by hand", 'A "note", with a comma', "yellow", "1"),
        ("scribes who made mistakes", "", "pink", "2")]
    assert rows[0]["Book Title"] == "Presses" and rows[0]["Tags"] == "hand made"
    assert rows[0]["Document tags"] == "history,print" and rows[0]["Location Type"] == "order"
    assert len(rows[0]["Highlighted at"]) == 19


async def test_the_tag_names_follow_every_change(settings, pages):
    article_id = await cleaned(settings, pages, article_page(PASSAGE))
    async with running(settings.replace(extract_processes=0), worker=False) as reader:
        one = await reader.add_highlight(article_id, {"quote": "scribes", "tags": ["History", "press"]})
        two = await reader.add_highlight(article_id, {"quote": "mistakes", "tags": ["history"]})
        assert await reader.highlight_tags() == ["History", "press"]  # one name whatever its case
        await reader.update_highlight(one["id"], {"tags": ["ink"]})
        assert await reader.highlight_tags() == ["History", "ink"]
        await reader.delete_highlight(two["id"])
        assert await reader.highlight_tags() == ["ink"]
        await reader.update_highlight(one["id"], {"tags": []})
        assert await reader.highlight_tags() == []
