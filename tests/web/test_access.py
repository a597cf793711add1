"""Who may do what: CSRF tokens on every page write, cross-site refusal, the API for
scripts, and the password that listening beyond loopback requires."""

from __future__ import annotations

import re

import pytest

from reader.web.csrf import CSRF_COOKIE

from .. import commands
from ..helpers import app_client, card_press, rss, state_of, subscribe_slugs, wait_for


async def _one_article(client, pages) -> int:
    link = pages.add_article("a")
    feed = pages.add("/feed.xml", rss([{"title": "A", "link": link}]), headers={"Content-Type": "application/rss+xml"})
    assert (await client.post("/api/feeds", json={"url": feed})).status_code == 201
    return (await client.get("/api/articles")).json()["items"][0]["id"]


def _forms(html: str) -> list[str]:
    return re.findall(r"<form\b.*?</form>", html, re.DOTALL)


async def test_every_form_on_every_page_carries_the_csrf_token(settings, pages):
    async with app_client(settings.replace(serve_workers=0)) as client:
        article_id = await _one_article(client, pages)
        token = client.cookies.get(CSRF_COOKIE)
        await client.post(f"/api/articles/{article_id}/queue")
        for path in ("/", "/queue", "/feeds", f"/articles/{article_id}/card"):
            html = (await client.get(path)).text
            forms = [f for f in _forms(html) if 'method="post"' in f]
            assert forms, path
            for form in forms:
                assert f'name="csrf" value="{token}"' in form, (path, form)
        base = (await client.get("/")).text
    # and htmx requests that are not form posts get it from the body, inherited explicitly (htmx 4)
    assert f'''<body hx-headers:inherited='{{"X-CSRF-Token": "{token}"}}'>''' in base


async def test_a_form_post_without_the_token_is_refused_and_changes_nothing(settings, pages):
    async with app_client(settings.replace(serve_workers=0), csrf=False) as client:
        article_id = await _one_article(client, pages)
        await client.get("/")  # the browser has a token cookie, but the forged form lacks it
        refused = await client.post(f"/articles/{article_id}/queue", data={"next": "/"})
        wrong = await client.post(f"/articles/{article_id}/queue", data={"csrf": "x" * 43})
        assert refused.status_code == wrong.status_code == 403
        assert (await client.get(f"/api/articles/{article_id}")).json()["state"] == "new"
        for path in ("/feeds", "/refresh", "/feeds/1/delete", f"/articles/{article_id}/unqueue", "/logout"):
            assert (await client.post(path, data={"url": "http://x.test/"})).status_code == 403, path
        assert len((await client.get("/api/feeds")).json()["feeds"]) == 1


async def test_the_no_javascript_journey_posts_the_token_from_the_page_and_works(settings, pages):
    async with app_client(settings.replace(serve_workers=0), csrf=False) as client:
        article_id = await _one_article(client, pages)
        page = (await client.get("/")).text
        pressed = card_press(page, article_id, "queue")  # the card's button, of the page's one form
        assert pressed is not None
        path, fields = pressed
        assert fields["csrf"]
        response = await client.post(path, data=fields)
        assert response.status_code == 303 and response.headers["location"] == "/"
        assert (await client.get(f"/api/articles/{article_id}")).json()["state"] == "queued"


async def test_a_cross_site_form_is_refused_even_with_a_stolen_token(settings, pages):
    async with app_client(settings.replace(serve_workers=0)) as client:
        article_id = await _one_article(client, pages)
        token = client.cookies.get(CSRF_COOKIE)
        response = await client.post(f"/articles/{article_id}/queue", data={"csrf": token},
                                     headers={"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"})
        api = await client.post(f"/api/articles/{article_id}/queue", headers={"Origin": "https://evil.example"})
        assert response.status_code == api.status_code == 403
        assert (await client.get(f"/api/articles/{article_id}")).json()["state"] == "new"


async def test_the_api_stays_usable_from_scripts_without_a_token(settings, pages):
    async with app_client(settings.replace(serve_workers=0), csrf=False) as client:
        article_id = await _one_article(client, pages)
        response = await client.post(f"/api/articles/{article_id}/queue", json={"lane": "next"})
        assert response.status_code == 200 and response.json()["state"] == "queued"
        assert (await client.delete(f"/api/articles/{article_id}/queue")).json()["state"] == "new"


async def test_with_a_password_pages_need_a_login_and_the_api_a_bearer_token(settings):
    async with app_client(settings.replace(password="correct horse")) as client:
        page = await client.get("/queue?x=1")
        assert page.status_code == 303 and page.headers["location"] == "/login?next=%2Fqueue%3Fx%3D1"
        assert (await client.get("/static/style.css")).status_code == 200
        api = await client.get("/api/stats")
        assert api.status_code == 401 and api.json() == {"error": "authentication required"}
        assert (await client.get("/api/stats", headers={"Authorization": "Bearer nope"})).status_code == 401
        assert (await client.get("/api/stats", headers={"Authorization": "Bearer correct horse"})).status_code == 200

        login = (await client.get("/login?next=/queue")).text
        assert 'name="password"' in login and 'name="next" value="/queue"' in login
        wrong = await client.post("/login", data={"password": "nope", "next": "/queue"})
        assert wrong.status_code == 401 and "wrong password" in wrong.text
        right = await client.post("/login", data={"password": "correct horse", "next": "/queue"})
        assert right.status_code == 303 and right.headers["location"] == "/queue"
        assert (await client.get("/queue")).status_code == 200
        assert (await client.get("/api/stats")).status_code == 200  # the session cookie works for the API too
        assert (await client.post("/logout")).status_code == 303
        assert (await client.get("/")).status_code == 303


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.10", "::"])
def test_serve_refuses_to_listen_beyond_loopback_without_a_password(tmp_path, host):
    result = commands.run(["serve", "--host", host, "--db", str(tmp_path / "r.db")], timeout=60,
                          env={"PATH": "/usr/bin:/bin", "READER_PASSWORD": ""})
    assert result.returncode == 2
    assert "without READER_PASSWORD" in result.stderr.decode()
    assert not (tmp_path / "r.db").exists()


# -- cross-site writes (moved from test_web.py) -------------------------------------------------------------------


async def test_an_api_tap_from_a_foreign_origin_is_refused_with_403_json(quiet, pages):
    _, ids = await subscribe_slugs(quiet, pages, ["a"])
    response = await quiet.post(f"/api/articles/{ids[0]}/queue", headers={"Origin": "https://evil.example"})
    assert response.status_code == 403
    assert response.json() == {"error": "cross-site request refused"}
    assert await state_of(quiet, ids[0]) == "new"


async def test_a_cross_site_form_tap_is_refused_and_queues_nothing(quiet, pages):
    _, ids = await subscribe_slugs(quiet, pages, ["a"])
    response = await quiet.post(f"/articles/{ids[0]}/queue", data={"next": "/"},
                                headers={"Sec-Fetch-Site": "cross-site"})
    assert response.status_code == 403
    assert await state_of(quiet, ids[0]) == "new"
    assert (await quiet.get("/api/queue")).json() == {"items": []}


@pytest.mark.parametrize(
    "headers",
    [{"Origin": "https://evil.example"}, {"Origin": "null"}, {"Origin": "http://reader.test:8080"},
     {"Origin": "https://reader.test"}, {"Sec-Fetch-Site": "cross-site"}, {"Sec-Fetch-Site": "same-site"},
     {"Sec-Fetch-Site": "cross-site", "Origin": "http://reader.test"}],
)
async def test_cross_site_unsubscribe_and_api_delete_are_refused(quiet, pages, headers):
    feed_id, _ = await subscribe_slugs(quiet, pages, ["a"])
    assert (await quiet.post(f"/feeds/{feed_id}/delete", headers=headers)).status_code == 403
    assert (await quiet.delete(f"/api/feeds/{feed_id}", headers=headers)).status_code == 403
    assert (await quiet.post("/feeds", data={"url": pages.url("/x.xml")}, headers=headers)).status_code == 403
    assert [f["id"] for f in (await quiet.get("/api/feeds")).json()["feeds"]] == [feed_id]


@pytest.mark.parametrize(
    "headers",
    [{"Origin": "http://reader.test"}, {"Sec-Fetch-Site": "same-origin"},
     {"Origin": "http://reader.test", "Sec-Fetch-Site": "same-origin"}, {"Sec-Fetch-Site": "none"}, {}],
    ids=["same-origin Origin", "same-origin fetch site", "both", "typed by the user", "script or CLI"],
)
async def test_same_origin_and_headerless_taps_are_accepted(quiet, pages, headers):
    _, ids = await subscribe_slugs(quiet, pages, ["a", "b"])
    form = await quiet.post(f"/articles/{ids[0]}/queue", data={"next": "/"}, headers=headers)
    assert form.status_code == 303
    api = await quiet.post(f"/api/articles/{ids[1]}/queue", headers=headers)
    assert api.status_code == 200 and api.json()["state"] == "queued"
    assert [i["id"] for i in (await quiet.get("/api/queue")).json()["items"]] == [ids[0], ids[1]]


async def test_reads_from_a_foreign_origin_are_still_served(quiet):
    response = await quiet.get("/", headers={"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"})
    assert response.status_code == 200


# -- a link on another site's page opens, and changes nothing --------------------------------------------------------

FOLLOWED_FROM_ELSEWHERE = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}


async def test_an_article_opened_from_another_sites_link_is_neither_cleaned_nor_marked_read(quiet, pages):
    """Opening an article cleans it and marks it read. A top-level navigation passes the
    access layer from anywhere, so any site could make reader fetch and clean the person's
    articles and empty their reading list by linking to them."""
    _, [a] = await subscribe_slugs(quiet, pages, ["a"])
    fetched = pages.hits.copy()
    for path in (f"/articles/{a}", f"/articles/{a}/body"):
        response = await quiet.get(path, headers=FOLLOWED_FROM_ELSEWHERE)
        assert response.status_code == 200
        assert "has not started cleaning" in response.text and "hx-trigger" not in response.text
    assert 'http-equiv="refresh"' not in (await quiet.get(f"/articles/{a}", headers=FOLLOWED_FROM_ELSEWHERE)).text
    article = (await quiet.get(f"/api/articles/{a}")).json()
    assert article["state"] == "new" and article["read"] is False
    assert pages.hits == fetched  # nothing was fetched for it

    # The page's own link is the person asking: it opens as always.
    own = await quiet.get(f"/articles/{a}", headers={"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "navigate"})
    assert own.status_code == 200 and "has not started cleaning" not in own.text
    await wait_for(lambda: _state_is(quiet, a, "ready"))
    assert (await quiet.get(f"/api/articles/{a}")).json()["read"] is True


async def _state_is(client, article_id: int, state: str) -> bool:
    return await state_of(client, article_id) == state
