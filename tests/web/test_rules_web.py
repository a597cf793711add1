"""Rules on the wire: /api/rules (CRUD, apply with dry_run, undo, test), pausing by
PATCH /api/feeds/{id}, the /rules page (Test before saving, apply with its count first and
its undo), the "hidden by rules" view with "Show again", the feeds page's pause, bad input
answered 422 with the reason, and `reader rules` on the command line."""

from __future__ import annotations

import re
import time

from reader.web.csrf import CSRF_COOKIE

from ..helpers import RSS, app_client, published, run_cli

ITEMS = [("a", "Sponsored: a mattress"), ("b", "Rust released"), ("c", "Weekly links")]


def feed(pages, path="/feed.xml", prefix="") -> str:
    items = "".join(f"<item><title>{t}</title><link>{pages.url(f'/{prefix}{s}.html')}</link><guid>{prefix}{s}</guid>"
                    f"<pubDate>{published(i)}</pubDate></item>" for i, (s, t) in enumerate(ITEMS))
    return pages.add(path, f'<?xml version="1.0"?><rss version="2.0"><channel><title>F{prefix}</title>'
                           f"<link>http://127.0.0.1/</link>{items}</channel></rss>", headers=RSS)


async def subscribed(client, pages, path="/feed.xml", prefix="") -> int:
    response = await client.post("/api/feeds", json={"url": feed(pages, path, prefix)})
    assert response.status_code == 201, response.text
    return int(response.json()["id"])


async def titles(client, **params) -> list[str]:
    return sorted(i["title"] for i in (await client.get("/api/articles", params=params)).json()["items"])


async def test_the_api_makes_lists_applies_undoes_and_deletes_rules(quiet, pages):
    feed_id = await subscribed(quiet, pages)
    made = await quiet.post("/api/rules", json={"field": "title", "match": "regex", "pattern": "^sponsored"})
    assert made.status_code == 201
    rule = made.json()
    assert rule["action"] == "hide" and rule["scope"] == "all" and rule["enabled"] is True
    dry = (await quiet.post(f"/api/rules/{rule['id']}/apply", json={"dry_run": True})).json()
    assert dry["count"] == 1 and dry["stamp"] is None and len(await titles(quiet)) == 3
    done = (await quiet.post(f"/api/rules/{rule['id']}/apply", json={})).json()
    assert done["count"] == 1 and done["stamp"]
    assert await titles(quiet) == ["Rust released", "Weekly links"]
    [listed] = (await quiet.get("/api/rules")).json()["rules"]
    assert listed["hidden"] == 1
    [hidden] = (await quiet.get("/api/hidden")).json()["items"]
    assert hidden["title"] == "Sponsored: a mattress" and hidden["rule"]["id"] == rule["id"]
    assert (await quiet.get("/api/feeds")).json()["feeds"][0]["unread"] == 2
    undone = await quiet.post(f"/api/rules/{rule['id']}/undo", json={"stamp": done["stamp"]})
    assert undone.json() == {"count": 1} and len(await titles(quiet)) == 3
    patched = await quiet.patch(f"/api/rules/{rule['id']}", json={"enabled": False, "pattern": "weekly"})
    assert patched.status_code == 200 and patched.json()["enabled"] is False
    tested = (await quiet.post("/api/rules/test", json={"field": "title", "pattern": "rust"})).json()
    assert tested["changes"] == 1 and [i["title"] for i in tested["items"] if i["matches"]] == ["Rust released"]
    await quiet.post(f"/api/rules/{rule['id']}/apply", json={})
    shown = await quiet.delete(f"/api/rules/{rule['id']}")
    assert shown.json() == {"shown_again": 1}
    assert (await quiet.get("/api/rules")).json()["rules"] == []
    assert (await quiet.delete(f"/api/rules/{rule['id']}")).status_code == 404
    assert feed_id


async def test_bad_rules_are_422_with_the_reason(quiet, pages):
    await subscribed(quiet, pages)
    cases = [
        ({"field": "title", "match": "regex", "pattern": "(a+)+$"}, "exponential"),
        ({"field": "title", "match": "regex", "pattern": "(a|a)*"}, "exponential"),
        ({"field": "title", "match": "regex", "pattern": "[unclosed"}, "not a regular expression"),
        ({"field": "colour", "pattern": "x"}, "field must be one of"),
        ({"field": "title", "pattern": "x", "action": "explode"}, "action must be one of"),
        ({"field": "title", "pattern": "x", "scope": "everywhere"}, "scope must be one of"),
        ({"field": "title", "pattern": 5}, "pattern"),
    ]
    for body, reason in cases:
        response = await quiet.post("/api/rules", json=body)
        assert response.status_code == 422 and reason in response.json()["error"], (body, response.text)
    assert (await quiet.post("/api/rules", content=b"[1]")).status_code == 400
    made = (await quiet.post("/api/rules", json={"field": "title", "pattern": "x"})).json()
    assert (await quiet.patch(f"/api/rules/{made['id']}", json={"match": "regex", "pattern": "(.*)*"})).status_code == 422
    assert (await quiet.post(f"/api/rules/{made['id']}/apply", json={"dry_run": "yes"})).status_code == 422
    assert (await quiet.post(f"/api/rules/{made['id']}/undo", json={"stamp": [1]})).status_code == 422
    assert (await quiet.post("/api/rules/999/apply", json={})).status_code == 404
    assert len((await quiet.get("/api/rules")).json()["rules"]) == 1


async def test_a_feed_is_paused_and_unpaused_by_patch(quiet, pages):
    feed_id = await subscribed(quiet, pages)
    response = await quiet.patch(f"/api/feeds/{feed_id}", json={"paused_until": "day"})
    assert response.status_code == 200 and response.json()["paused_until"] > time.time() + 86000
    assert response.json()["unread"] == 0 and await titles(quiet) == []
    bad = await quiet.patch(f"/api/feeds/{feed_id}", json={"paused_until": "later"})
    assert bad.status_code == 422 and "paused_until" in bad.json()["error"]
    past = await quiet.patch(f"/api/feeds/{feed_id}", json={"paused_until": time.time() - 5})
    assert past.json()["unread"] == 3 and len(await titles(quiet)) == 3
    gone = await quiet.patch(f"/api/feeds/{feed_id}", json={"paused_until": None})
    assert gone.json()["paused_until"] is None


def _hidden_fields(form: str) -> dict[str, str]:
    return dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', form))


async def test_the_rules_page_tests_saves_applies_with_a_count_and_undoes(quiet, pages):
    await subscribed(quiet, pages)
    page = await quiet.get("/rules")
    assert page.status_code == 200 and "No rules yet" in page.text
    form = {"field": "title", "match": "words", "pattern": "weekly links", "scope": "all", "action": "hide"}
    tested = await quiet.post("/rules", data={**form, "test": "1"})
    assert "1 of the newest 3 headlines would change" in tested.text and "Weekly links" in tested.text
    assert (await quiet.get("/api/rules")).json()["rules"] == []  # a test saves nothing
    saved = await quiet.post("/rules", data=form)
    assert saved.status_code == 303
    rule_id = (await quiet.get("/api/rules")).json()["rules"][0]["id"]
    asked = await quiet.post(f"/rules/{rule_id}/apply")
    assert "would hide 1 stored article." in asked.text and len(await titles(quiet)) == 3
    applied = await quiet.post(f"/rules/{rule_id}/apply", data={"confirm": "yes"})
    assert "1 stored article changed" in applied.text and len(await titles(quiet)) == 2
    undo = re.search(rf'<form method="post" action="/rules/{rule_id}/undo".*?</form>', applied.text, re.DOTALL).group(0)
    undone = await quiet.post(f"/rules/{rule_id}/undo", data=_hidden_fields(undo))
    assert "Undone: 1 article as before" in undone.text and len(await titles(quiet)) == 3
    # a bad regex: said on the page, the form kept
    bad = await quiet.post("/rules", data={**form, "match": "regex", "pattern": "(x+)+"})
    assert bad.status_code == 422 and "exponential" in bad.text and 'value="(x+)+"' in bad.text
    off = await quiet.post(f"/rules/{rule_id}/enabled", data={"enabled": "0"})
    assert off.status_code == 303 and (await quiet.get("/api/rules")).json()["rules"][0]["enabled"] is False
    deleted = await quiet.post(f"/rules/{rule_id}/delete")
    assert "Rule deleted" in deleted.text


async def test_the_hidden_view_lists_each_article_with_its_rule_and_shows_it_again(quiet, pages):
    await subscribed(quiet, pages)
    rule = (await quiet.post("/api/rules", json={"field": "title", "pattern": "rust"})).json()
    await quiet.post(f"/api/rules/{rule['id']}/apply", json={})
    page = await quiet.get("/rules/hidden")
    assert "Rust released" in page.text and "hidden by “hide: title has “rust”, everywhere”" in page.text
    [article] = (await quiet.get("/api/hidden")).json()["items"]
    back = await quiet.post(f"/rules/hidden/{article['id']}/show", data={"next": "/rules/hidden"})
    assert back.status_code == 303 and "Nothing is hidden" in (await quiet.get("/rules/hidden")).text
    assert "Rust released" in await titles(quiet, unread=1)
    again = await quiet.post(f"/rules/hidden/{article['id']}/show")  # a second click: no error
    assert again.status_code == 303
    assert (await quiet.get("/rules/hidden?before=abc")).status_code == 422


async def test_the_feeds_page_pauses_a_feed_and_links_its_rules(quiet, pages):
    feed_id = await subscribed(quiet, pages)
    page = (await quiet.get("/feeds")).text
    assert f'action="/feeds/{feed_id}/pause"' in page and f'href="/rules?scope=feed:{feed_id}"' in page
    paused = await quiet.post(f"/feeds/{feed_id}/pause", data={"pause": "date", "until": "2027-03-01"})
    assert paused.status_code == 303
    page = (await quiet.get("/feeds")).text
    assert "Paused until 2027-03-01 00:00 UTC" in page and await titles(quiet) == []
    assert f'value="feed:{feed_id}" selected' in (await quiet.get(f"/rules?scope=feed:{feed_id}")).text
    assert (await quiet.post(f"/feeds/{feed_id}/pause", data={"pause": "date"})).status_code == 422
    await quiet.post(f"/feeds/{feed_id}/pause", data={"pause": ""})
    assert len(await titles(quiet)) == 3


async def test_the_rules_forms_carry_the_token_and_are_refused_without(settings, pages):
    async with app_client(settings.replace(serve_workers=0), csrf=False) as client:
        await subscribed(client, pages)
        rule = (await client.post("/api/rules", json={"field": "title", "pattern": "rust"})).json()
        await client.post(f"/api/rules/{rule['id']}/apply", json={})
        token = client.cookies.get(CSRF_COOKIE)
        for path in ("/rules", "/rules/hidden", "/feeds"):
            html = (await client.get(path)).text
            forms = [f for f in re.findall(r"<form\b.*?</form>", html, re.DOTALL) if 'method="post"' in f]
            assert forms and all(f'name="csrf" value="{token}"' in f for f in forms), path
        for path in ("/rules", f"/rules/{rule['id']}/delete", f"/rules/{rule['id']}/apply", "/feeds/1/pause"):
            assert (await client.post(path, data={"field": "title", "pattern": "x"})).status_code == 403, path
        assert len((await client.get("/api/rules")).json()["rules"]) == 1


async def test_reader_rules_on_the_command_line(settings, pages, quiet):
    await subscribed(quiet, pages)
    db = settings.db
    code, out, err = await run_cli(db, "rules", "add", "title", "sponsored")
    assert code == 0 and "hide: title has “sponsored”, everywhere" in out
    code, out, err = await run_cli(db, "rules", "test", "title", "rust|weekly", "--match", "regex")
    assert code == 0 and "2 of the newest 3 headlines would change" in out
    code, out, err = await run_cli(db, "rules", "apply", "1")
    assert code == 0 and "would change 1 stored articles" in out
    code, out, err = await run_cli(db, "rules", "apply", "1", "--yes")
    assert code == 0 and "changed 1 stored articles" in out
    stamp = out.rsplit(" ", 1)[-1].strip()
    code, out, err = await run_cli(db, "rules", "list")
    assert code == 0 and "1 hidden" in out
    code, out, err = await run_cli(db, "rules", "undo", "1", stamp)
    assert code == 0 and "1 articles given back" in out
    code, out, err = await run_cli(db, "rules", "add", "title", "(a+)+", "--match", "regex")
    assert code == 2 and "exponential" in err and "Traceback" not in err
    code, out, err = await run_cli(db, "rules", "add", "title", "x", "--scope", "feed:99")
    assert code == 2 and "no feed 99" in err
    code, out, err = await run_cli(db, "rules", "apply", "42")
    assert code == 2 and "no such rule" in err
