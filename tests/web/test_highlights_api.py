"""The highlights API against the app with a real SQLite file and a real page server: made
from a quote (with context) or offsets, the W3C Web Annotation shape, filters and pages,
errors as JSON sentences (never a 500), and a replayed POST applied once."""

from __future__ import annotations

import uuid

from ..helpers import subscribe_slugs

QUOTE = "number 3 of Article one carries enough words"


async def ready_article(quiet, pages, slug: str = "one") -> int:
    _, [article_id] = await subscribe_slugs(quiet, pages, [slug])
    assert (await quiet.get(f"/api/articles/{article_id}/content")).status_code == 200
    return article_id


async def test_made_listed_changed_and_deleted(quiet, pages):
    a = await ready_article(quiet, pages)
    text = (await quiet.get(f"/api/articles/{a}/content")).json()["text"]
    assert QUOTE in text, text[:300]
    made = await quiet.post(f"/api/articles/{a}/highlights",
                            json={"quote": QUOTE, "note": "<script>x</script>", "tags": ["prose"]})
    assert made.status_code == 200, made.text
    h = made.json()
    assert text[h["start"]:h["end"]] == QUOTE and h["note"] == "<script>x</script>" and h["tags"] == ["prose"]
    selectors = {s["type"]: s for s in h["annotation"]["target"]["selector"]}
    assert selectors["TextQuoteSelector"]["exact"] == QUOTE
    assert selectors["TextQuoteSelector"]["prefix"] == text[h["start"] - 32:h["start"]]
    assert (selectors["TextPositionSelector"]["start"], selectors["TextPositionSelector"]["end"]) == (h["start"], h["end"])
    assert h["annotation"]["type"] == "Annotation" and h["annotation"]["@context"] == "http://www.w3.org/ns/anno.jsonld"
    assert h["annotation"]["body"][0]["value"] == "<script>x</script>"

    start = h["end"] + 10
    by_offsets = (await quiet.post(f"/api/articles/{a}/highlights", json={"start": start, "end": start + 5})).json()
    assert by_offsets["quote"] == text[start:start + 5]

    listed = (await quiet.get(f"/api/articles/{a}/highlights")).json()["items"]
    assert [x["id"] for x in listed] == [h["id"], by_offsets["id"]]
    jsonld = (await quiet.get("/api/highlights?format=jsonld")).json()
    assert jsonld["type"] == "AnnotationPage" and len(jsonld["items"]) == 2
    assert (await quiet.get(f"/api/highlights/{h['id']}?format=jsonld")).json()["type"] == "Annotation"

    changed = await quiet.patch(f"/api/highlights/{h['id']}", json={"note": "better", "color": "green"})
    assert changed.status_code == 200 and changed.json()["note"] == "better" and changed.json()["color"] == "green"
    assert (await quiet.delete(f"/api/highlights/{by_offsets['id']}")).json() == {"deleted": by_offsets["id"]}
    assert (await quiet.get(f"/api/highlights/{by_offsets['id']}")).status_code == 404


async def test_bad_input_is_a_sentence_never_a_500(quiet, pages):
    a = await ready_article(quiet, pages)
    cases = [
        (f"/api/articles/{a}/highlights", {"quote": "these words are not in the article"}, 422, "not in the article"),
        (f"/api/articles/{a}/highlights", {"quote": "x" * 100_000}, 422, "at most 5,000"),
        (f"/api/articles/{a}/highlights", {"quote": "x" * 1_000_000}, 413, "larger than this route accepts"),
        (f"/api/articles/{a}/highlights", {"quote": "carries enough words"}, 422, "in the text 12 times"),
        (f"/api/articles/{a}/highlights", {"quote": QUOTE, "note": "n" * 20_000}, 422, "at most 10,000"),
        (f"/api/articles/{a}/highlights", {"quote": QUOTE, "color": "<b>"}, 422, "color must be"),
        (f"/api/articles/{a}/highlights", {"quote": ["a"]}, 422, "quote must be text"),
        (f"/api/articles/{a}/highlights", {"start": "1", "end": 5}, 422, "whole number"),
        (f"/api/articles/{a}/highlights", {"start": 1.5, "end": 5}, 422, "whole number"),
        (f"/api/articles/{a}/highlights", {}, 422, "give the highlighted text"),
        ("/api/articles/999999/highlights", {"quote": QUOTE}, 404, "no such article"),
    ]
    for path, body, status, says in cases:
        answer = await quiet.post(path, json=body)
        assert answer.status_code == status and says in answer.json()["error"], (body, answer.text)
    assert (await quiet.post(f"/api/articles/{a}/highlights", content=b"{not json")).status_code == 400
    assert (await quiet.post(f"/api/articles/{a}/highlights", content=b"[1]")).status_code == 400
    assert (await quiet.patch("/api/highlights/12345", json={"note": "x"})).status_code == 404
    assert (await quiet.delete("/api/highlights/12345")).status_code == 404
    for query in ("before=nonsense", "limit=0", "article=abc", "format=xml", f"q={'q' * 500}"):
        answer = await quiet.get(f"/api/highlights?{query}")
        assert answer.status_code in (400, 422) and answer.json()["error"], query


async def test_filters_and_pages_newest_first(quiet, pages):
    a = await ready_article(quiet, pages, "one")
    words = [f"Paragraph number {i} of" for i in range(1, 5)]
    made = []
    for i, quote in enumerate(words):
        answer = await quiet.post(f"/api/articles/{a}/highlights",
                                  json={"quote": quote, "tags": ["even"] if i % 2 == 0 else ["odd"],
                                        "note": f"note {i}"})
        assert answer.status_code == 200, answer.text
        made.append(answer.json()["id"])
    first = (await quiet.get("/api/highlights?limit=3")).json()
    assert [x["id"] for x in first["items"]] == made[::-1][:3] and first["next"]
    rest = (await quiet.get("/api/highlights", params={"limit": 3, "before": first["next"]})).json()
    assert [x["id"] for x in rest["items"]] == [made[0]] and rest["next"] is None
    assert [x["id"] for x in (await quiet.get("/api/highlights?tag=EVEN")).json()["items"]] == [made[2], made[0]]
    # words in the quote, the note or the tags (full-text: every word, any case, a "quoted phrase" as written)
    assert [x["id"] for x in (await quiet.get('/api/highlights?q="NOTE 3"')).json()["items"]] == [made[3]]
    assert [x["id"] for x in (await quiet.get("/api/highlights?q=note 3")).json()["items"]] == [made[3], made[2]]
    assert [x["id"] for x in (await quiet.get('/api/highlights?q="number 2"')).json()["items"]] == [made[1]]
    assert [x["id"] for x in (await quiet.get("/api/highlights?q=odd")).json()["items"]] == [made[3], made[1]]
    assert (await quiet.get("/api/highlights?q=*** ---")).status_code == 422
    assert len((await quiet.get(f"/api/highlights?article={a}")).json()["items"]) == 4
    assert (await quiet.get(f"/api/highlights?article={a + 1}")).json()["items"] == []


async def test_a_replayed_post_makes_one_highlight(quiet, pages):
    a = await ready_article(quiet, pages)
    key = str(uuid.uuid4())
    first = await quiet.post(f"/api/articles/{a}/highlights", json={"quote": QUOTE}, headers={"Idempotency-Key": key})
    again = await quiet.post(f"/api/articles/{a}/highlights", json={"quote": QUOTE}, headers={"Idempotency-Key": key})
    assert first.status_code == again.status_code == 200 and first.content == again.content
    assert len((await quiet.get(f"/api/articles/{a}/highlights")).json()["items"]) == 1
    # a refusal is remembered too
    bad = str(uuid.uuid4())
    for _ in range(2):
        answer = await quiet.post(f"/api/articles/{a}/highlights", json={"quote": "not there at all"},
                                  headers={"Idempotency-Key": bad})
        assert answer.status_code == 422


async def test_a_highlight_made_offline_is_edited_and_deleted_by_the_key_it_was_made_with(quiet, pages):
    """A device that made a highlight offline knows only its POST's Idempotency-Key; its
    edits name it by that key (PATCH/DELETE /api/highlights/made/{key}), sent after it."""
    from ..helpers import subscribe_slugs

    _, [article_id] = await subscribe_slugs(quiet, pages, ["one"])
    assert (await quiet.get(f"/api/articles/{article_id}/content")).status_code == 200
    key = "hl-0123456789abcdef"
    early = await quiet.patch(f"/api/highlights/made/{key}", json={"note": "too soon"},
                              headers={"Idempotency-Key": "edit-0000000001"})
    assert early.status_code == 404 and "has not received it" in early.json()["error"]
    made = await quiet.post(f"/api/articles/{article_id}/highlights", headers={"Idempotency-Key": key},
                            json={"quote": "Paragraph number 2 of Article one carries enough words"})
    assert made.status_code == 200
    edited = await quiet.patch(f"/api/highlights/made/{key}", json={"note": "kept", "color": "blue"},
                               headers={"Idempotency-Key": "edit-0000000002"})
    assert edited.status_code == 200 and (edited.json()["id"], edited.json()["note"]) == (made.json()["id"], "kept")
    # the made/ name is no door to other actions: a key that queued an article, a bad key
    queued = await quiet.post(f"/api/articles/{article_id}/queue", headers={"Idempotency-Key": "queue-000000001"})
    assert queued.status_code == 200
    assert (await quiet.patch("/api/highlights/made/queue-000000001", json={"note": "x"})).status_code == 404
    assert (await quiet.patch("/api/highlights/made/x", json={"note": "x"})).status_code == 422
    assert (await quiet.delete(f"/api/highlights/made/{key}", headers={"Idempotency-Key": "del-00000000001"})
            ).status_code == 200
    assert (await quiet.get(f"/api/articles/{article_id}/highlights")).json()["items"] == []
