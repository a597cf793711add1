"""The native apps page: an app password made in the browser works for a sync client at
once, is shown only in the answer that made it, and revoking it from the page ends its
sign-ins; a bad name is refused with the reason and nothing is made."""

from __future__ import annotations

import re

from lxml import html as lxml_html


def _live_names(page: str) -> list[str]:
    tree = lxml_html.fromstring(page)
    return [li.find("strong").text for li in tree.cssselect("ul.app-passwords li")]


async def _sign_in(client, name: str, password: str) -> int:
    answer = await client.post("/accounts/ClientLogin", data={"Email": name, "Passwd": password})
    return answer.status_code


async def test_an_app_password_made_on_the_page_signs_an_app_in_until_it_is_revoked_there(quiet):
    first = await quiet.get("/apps")
    assert first.status_code == 200 and "None yet" in first.text
    assert first.headers["cache-control"] == "no-store"

    made = await quiet.post("/apps", data={"name": "phone"})
    assert made.status_code == 200 and made.headers["cache-control"] == "no-store"
    password = re.search(r'<code class="app-password">([^<]+)</code>', made.text)
    assert password is not None and len(password[1]) == 24
    assert _live_names(made.text) == ["phone"]
    assert await _sign_in(quiet, "phone", password[1]) == 200

    again = await quiet.get("/apps")
    assert password[1] not in again.text  # shown once, in the answer that made it
    [revoke] = lxml_html.fromstring(again.text).cssselect("form[action$='/revoke']")
    gone = await quiet.post(revoke.get("action"), follow_redirects=False)
    assert gone.status_code == 303 and gone.headers["location"] == "/apps"
    assert await _sign_in(quiet, "phone", password[1]) == 401
    assert _live_names((await quiet.get("/apps")).text) == []


async def test_a_bad_or_taken_name_is_refused_with_the_reason_and_nothing_is_made(quiet):
    bad = await quiet.post("/apps", data={"name": "<script>"})
    assert bad.status_code == 422 and "letters, digits" in bad.text and "<script>" not in bad.text
    assert _live_names(bad.text) == []
    assert (await quiet.post("/apps", data={"name": "tablet"})).status_code == 200
    taken = await quiet.post("/apps", data={"name": "TABLET"})
    assert taken.status_code == 409 and "exists already" in taken.text
    assert _live_names(taken.text) == ["tablet"]
    missing = await quiet.post("/apps/999/revoke", follow_redirects=False)
    assert missing.status_code == 404
