"""Fuzz (hypothesis): the feed parser adapter and the URL guard take anything without
crashing, and only ever fail with their own clear errors. No network: fetches go to a
fake resolver that answers loopback for every name, so the guard refuses them all."""

from __future__ import annotations

import asyncio
import ipaddress
import json

from hypothesis import HealthCheck, example, given, settings, strategies as st

from reader.feeds.parse import FeedError, parse_feed
from reader.fetch import FetchError, address_problem, fetch, make_client

from ..helpers import rss

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CONTENT_TYPES = st.sampled_from(["application/rss+xml", "application/atom+xml", "application/feed+json",
                                 "application/json", "text/xml", "text/html", "", "text/plain"])
FEED_URLS = st.sampled_from(["http://example.org/feed.xml", "https://example.org/a/b/", "http://[::1]/f"])


def check_parsed(body: bytes, url: str, content_type: str) -> None:
    try:
        parsed = parse_feed(body, url, content_type)
    except FeedError as exc:
        assert str(exc)
        return
    assert isinstance(parsed["title"], str)
    assert parsed["site_url"] is None or parsed["site_url"].lower().startswith(("http://", "https://"))
    for entry in parsed["entries"]:
        assert entry["url"].lower().startswith(("http://", "https://")), entry
        assert isinstance(entry["guid"], str) and entry["guid"].strip() and len(entry["guid"]) <= 500
        assert isinstance(entry["title"], str) and isinstance(entry["summary"], str)


@FUZZ
@given(st.binary(max_size=2000), FEED_URLS, CONTENT_TYPES)
def test_arbitrary_bytes_parse_or_fail_with_a_feed_error(body, url, content_type):
    check_parsed(body, url, content_type)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40)
    | st.sampled_from(["javascript:alert(1)", "data:,x", "/rel", "http://[::1/x", " ", "https://ok.example/"]),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(
        st.sampled_from(["id", "url", "external_url", "title", "content_html", "content_text", "summary",
                         "author", "authors", "name", "date_published", "items", "version", "home_page_url", "x"]),
        children, max_size=6),
    max_leaves=25,
)


@FUZZ
@given(JSON_VALUES, st.booleans(), FEED_URLS, CONTENT_TYPES)
@example([{"title": "t", "authors": True}], True, "http://example.org/feed.xml", "")  # was a TypeError
def test_arbitrary_json_parses_or_fails_with_a_feed_error(value, as_feed, url, content_type):
    if as_feed:  # a document that claims to be a JSON Feed, with anything as its items
        value = {"version": "https://jsonfeed.org/version/1.1", "title": "t",
                 "items": value if isinstance(value, list) else [value]}
    check_parsed(json.dumps(value).encode(), url, content_type or "application/feed+json")


VALID_RSS = rss([
    {"title": "One &amp; <b>two</b>", "link": "http://example.org/1", "guid": "g1", "summary": "&lt;p&gt;hi&lt;/p&gt;"},
    {"title": "Relative", "link": "/two", "guid": "g2"},
    {"title": "Bad", "link": "javascript:alert(1)"},
]).encode()


@FUZZ
@given(st.lists(st.tuples(st.integers(0, len(VALID_RSS)), st.integers(0, 20), st.binary(max_size=12)),
                min_size=1, max_size=8), FEED_URLS)
@example([(VALID_RSS.index(b"http://example.org/1") + 1, 0, b"\t")], "http://example.org/feed.xml")  # "h\tttp://"
def test_mutated_rss_parses_or_fails_with_a_feed_error(mutations, url):
    body = bytearray(VALID_RSS)
    for position, cut, insert in mutations:
        position = min(position, len(body))
        body[position:position + cut] = insert
    check_parsed(bytes(body), url, "application/rss+xml")


# -- the URL guard --------------------------------------------------------------------------

@FUZZ
@given(st.text(max_size=80))
def test_address_problem_never_raises_on_any_text(text):
    problem = address_problem(text)
    assert problem is None or (isinstance(problem, str) and problem)
    if problem is None:
        ipaddress.ip_address(text.split("%", 1)[0])  # only a real address can pass


# Written out here, independently of reader.fetch: what must never be connected to. (IPv6
# forms that lead to an IPv4 address are judged by that address: see wrappers() below.)
BLOCKED = [ipaddress.ip_network(n) for n in [
    "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
    "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24",
    "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
    "::/128", "::1/128", "::/96", "64:ff9b:1::/48", "100::/64", "2001::/23", "2001:db8::/32",
    "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8",
]]
BLOCKED_V4 = [n for n in BLOCKED if n.version == 4]


def blocked(ip) -> bool:
    return any(ip.version == n.version and ip in n for n in BLOCKED)


def wrappers(v4: ipaddress.IPv4Address) -> list[ipaddress.IPv6Address]:
    """IPv6 forms that lead to an IPv4 address."""
    n = int(v4)
    return [
        ipaddress.IPv6Address(0xFFFF << 32 | n),  # v4-mapped
        ipaddress.IPv6Address(0x0064FF9B << 96 | n),  # NAT64
        ipaddress.IPv6Address(0x2002 << 112 | n << 80),  # 6to4
        ipaddress.IPv6Address(n) if n > 1 else ipaddress.IPv6Address("::2"),  # IPv4-compatible
        ipaddress.IPv6Address(0x20010000 << 96 | (n ^ 0xFFFFFFFF)),  # Teredo, client obfuscated
    ]


@FUZZ
@given(st.ip_addresses())
def test_every_address_in_a_blocked_range_is_refused(ip):
    if blocked(ip):
        assert address_problem(str(ip)) is not None, ip


@FUZZ
@given(st.sampled_from(BLOCKED).flatmap(lambda net: st.ip_addresses(network=net)))
def test_addresses_drawn_from_inside_each_blocked_range_are_refused(ip):
    assert address_problem(str(ip)) is not None, ip


@FUZZ
@given(st.sampled_from(BLOCKED_V4).flatmap(lambda net: st.ip_addresses(network=net)))
def test_every_ipv6_wrapping_of_a_blocked_ipv4_address_is_refused(v4):
    for wrapped in wrappers(v4):
        assert address_problem(str(wrapped)) is not None, (v4, wrapped)


# -- fetch with any URL --------------------------------------------------------------------------

async def _loopback_for_everything(host: str, port: int) -> list[str]:
    return ["127.0.0.1"]


URLS = st.one_of(
    st.text(max_size=60),
    st.builds(lambda scheme, rest: scheme + rest,
              st.sampled_from(["http://", "https://", "HTTP://", "ftp://", "file://", "javascript:", "//", "http:",
                               "http://[", "http://user:pw@", "gopher://", "data:"]),
              st.text(max_size=40)),
)


@settings(max_examples=120, deadline=None)
@given(URLS)
def test_fetch_of_any_string_raises_only_fetch_errors(url):
    async def attempt():
        async with make_client(allow_private=False, resolver=_loopback_for_everything) as client:
            try:
                await fetch(client, url, max_bytes=10_000, deadline=5.0)
            except FetchError as exc:
                return exc
        return None

    outcome = asyncio.run(attempt())
    # Nothing is reachable: every name answers loopback, which the guard refuses; the
    # sample site's own pages are the only thing that could come back.
    assert outcome is not None or "samples.reader.invalid" in url.lower()
    if outcome is not None:
        assert str(outcome)
