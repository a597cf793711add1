"""URLs that used to pass the check at save time and fail only once queued (issue 26): a
space in the host, a control character anywhere, an IP-literal that is no IPv6 address.
Refused at the door, with the reason, by the one check every way in uses."""

from __future__ import annotations

import json

import pytest

from reader.errors import Invalid
from reader.urls import check_url, http_url

REFUSED = {
    "http://exa mple.com/": "space",
    "http://example.com/\x00": "control character",
    "http://example.com/a\tb": "control character",
    "http://example.com/a\nb": "control character",
    "http://exam\x7fple.com/": "control character",
    "http://example.com/a\x85b": "control character",
    "https://[v1.x]/": "IPv6",
    "http://[::1::2]/": "IPv6",
    "http://[12345::]/": "IPv6",
    "http://exa\u3000mple.com/": "space",
}


@pytest.mark.parametrize("url", REFUSED)
def test_spaces_control_characters_and_bad_ip_literals_are_refused_with_the_reason(url):
    with pytest.raises(Invalid) as caught:
        check_url(url)
    assert caught.value.status == 422 and REFUSED[url] in caught.value.message, caught.value.message
    assert http_url(url) is None


@pytest.mark.parametrize("url", ["http://[::1]:8000/x", "http://[2001:db8::1]/", "http://[::ffff:192.0.2.1]/",
                                 "http://example.com/a%20b", "http://example.com/a b", "https://bücher.example/"])
def test_real_ipv6_literals_and_spaces_in_a_path_are_still_accepted(url):
    assert check_url(url) == url


@pytest.mark.parametrize("url", REFUSED)
async def test_saving_such_a_url_through_the_api_is_a_422_that_says_why(client, url):
    response = await client.post("/api/articles", content=json.dumps({"url": url}).encode(),
                                 headers={"content-type": "application/json"})
    assert response.status_code == 422, response.text
    assert REFUSED[url] in response.json()["error"]
    assert (await client.get("/api/articles")).json() == {"items": []}
    library = await client.get("/library.html")
    assert "\x00" not in library.text
