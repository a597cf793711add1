"""SSRF: reader fetches whatever URL a feed names, so nothing a feed names may reach
into the machine or its network. Every hostile URL below is aimed at a real server on
loopback that counts its hits: a refusal is proven by the error *and* by zero hits,
and each spelling is first shown to really reach that server when private addresses
are allowed, so no row of the table can pass by missing its target.

How the tests get a "public" host, given that a test machine reaches nothing public:

* DNS is replaced by the production `resolver` hook (`make_client(resolver=...)`,
  `create_app(settings, resolver=...)`): a fake name server can answer any name with
  any address, which is how names resolving to 10.0.0.1, 169.254.169.254, fd00::1 or a
  rebinding answer set are played. Numeric spellings (`2130706433`, `127.1`, `0x7f.1`)
  and `localhost` go through the real resolver (getaddrinfo, no network involved), as
  they would in production.
* A redirect needs a first hop that is *allowed* with private addresses refused, and
  every address reachable here is loopback. Rather than a test-only switch in the guard
  ("treat this host as public"), the test plays the public web site in process:
  `make_client(sites={"public.example": transport})` serves that host from a transport
  (as the built-in sample site is served), and whatever it redirects to is a new
  request through the guarded transport and backend, exactly as from a real site. The
  guard itself has no exception for anything.
* End to end through the API, articles that point at loopback spellings, at names the
  fake resolver answers privately, and at a redirect to a non-http scheme all end
  `failed: blocked: ...` on their card.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from collections import Counter

import httpx
import pytest
from lxml import html as lxml_html

from reader.samples.transport import sample_sites
from reader.fetch import BlockedAddress, FetchError, _GuardedBackend, _resolve, address_problem, fetch, make_client

from ..helpers import LoopbackServer, Route, app_client, article_html, rss, wait_for

PUBLIC_V4 = "93.184.215.14"  # a global unicast address; never actually connected to here
LIMITS = {"max_bytes": 1_000_000, "deadline": 10.0}


# -- servers and resolvers --------------------------------------------------------------------

def listener(host: str, port: int = 0) -> LoopbackServer:
    """A server on a loopback address that answers every GET with a small page and counts
    who asked for what (Connection: close, so every hit is a connection made through the
    guard). Port 0 picks a free one."""
    internal = Route(article_html("Internal", "marker-internal"),
                     headers={"Content-Type": "text/html; charset=utf-8", "Connection": "close"})
    return LoopbackServer(host, port, fallback=internal).start()


@pytest.fixture
def loopback():
    """One port, listened on at 127.0.0.1 and at ::1."""
    v4 = listener("127.0.0.1")
    try:
        v6 = listener("::1", v4.port)
    except OSError:
        v4.stop()
        pytest.skip("no IPv6 loopback here")
    yield v4, v6
    v4.stop()
    v6.stop()


class FakeDNS:
    """A name server the test controls: name -> list of answers, one per lookup (the
    last repeats). IP literals answer themselves; unknown names are not found. Records
    every question."""

    def __init__(self, **names: list[list[str]] | list[str]):
        self.answers = {k.replace("_", "."): v for k, v in names.items()}
        self.asked: list[str] = []

    def add(self, name: str, *answer_sets: list[str]) -> None:
        self.answers[name] = list(answer_sets)

    async def __call__(self, host: str, port: int) -> list[str]:
        self.asked.append(host)
        try:
            ipaddress.ip_address(host)
            return [host]
        except ValueError:
            pass
        if host not in self.answers:
            # Numeric spellings and localhost are the system resolver's business even
            # here (no network is involved); any other name is not found.
            if host.lower() == "localhost" or _numeric(host):
                return await _resolve(host, port)
            raise FetchError(f"host not found: {host}", transient=True)
        sets = self.answers[host]
        return list(sets[min(self.asked.count(host), len(sets)) - 1])


def _numeric(host: str) -> bool:
    try:
        socket.getaddrinfo(host, None, flags=socket.AI_NUMERICHOST)
        return True
    except socket.gaierror:
        return False


async def get(url: str, *, allow_private: bool, resolver=None, sites=None):
    async with make_client(allow_private=allow_private, resolver=resolver, sites=sites) as client:
        return await fetch(client, url, **LIMITS)


async def refused(url: str, **kwargs) -> str:
    with pytest.raises(BlockedAddress) as caught:
        await get(url, allow_private=False, **kwargs)
    message = str(caught.value)
    assert message.startswith("blocked: "), message
    assert caught.value.transient is False  # a refusal is never retried
    return message


# -- 1. the address rule -------------------------------------------------------------------

BLOCKED_ADDRESSES = [
    # address, a word the reason must contain
    ("127.0.0.1", "loopback"), ("127.255.255.254", "loopback"), ("0.0.0.0", "unspecified"),
    ("0.1.2.3", ""), ("10.0.0.1", "private"), ("172.16.5.4", "private"), ("192.168.1.1", "private"),
    ("169.254.169.254", "link-local"), ("100.64.0.1", "private"), ("100.127.255.254", "private"),
    ("192.0.0.8", ""), ("192.0.0.9", ""), ("192.0.2.1", ""), ("198.18.0.1", ""), ("198.19.255.255", ""),
    ("198.51.100.7", ""), ("203.0.113.9", ""), ("192.88.99.1", ""), ("224.0.0.1", "multicast"),
    ("239.255.255.250", "multicast"), ("240.0.0.1", ""), ("255.255.255.255", ""),
    ("::1", "loopback"), ("::", "unspecified"), ("fe80::1", "link-local"), ("fe80::1%eth0", "link-local"),
    ("fd00::1", ""), ("fc00::1", ""), ("fec0::1", ""), ("ff02::1", "multicast"), ("2001:db8::1", ""),
    ("100::1", ""),
    # IPv6 forms that carry a private IPv4 address inside
    ("::ffff:127.0.0.1", "127.0.0.1"), ("::ffff:192.168.1.1", "192.168.1.1"), ("::ffff:10.0.0.1", ""),
    ("::127.0.0.1", ""), ("::10.0.0.1", ""),  # deprecated IPv4-compatible
    ("64:ff9b::7f00:1", "127.0.0.1"), ("64:ff9b::a9fe:a9fe", "169.254.169.254"),  # NAT64
    ("64:ff9b:1::1", ""), ("64:ff9b:1:7f00:1::", ""),  # local-use NAT64, any embedding
    ("2002:7f00:1::", "127.0.0.1"), ("2002:a9fe:a9fe::1", "169.254.169.254"),  # 6to4
    ("2001:0:4136:e378:8000:63bf:80ff:fffe", ""),  # Teredo whose client is 127.0.0.1
    ("::ffff:0:7f00:1", ""),  # IPv4-translated
]
PUBLIC_ADDRESSES = ["8.8.8.8", "1.1.1.1", PUBLIC_V4, "2606:4700:4700::1111", "2a00:1450:4001:80b::200e",
                    "64:ff9b::808:808", "2002:808:808::1"]


@pytest.mark.parametrize("address, word", BLOCKED_ADDRESSES)
def test_every_private_kind_of_address_is_refused_with_a_reason(address, word):
    problem = address_problem(address)
    assert problem is not None
    assert word in problem


@pytest.mark.parametrize("address", PUBLIC_ADDRESSES)
def test_public_addresses_pass(address):
    assert address_problem(address) is None


@pytest.mark.parametrize("text", ["", "localhost", "127.1", "2130706433", "0x7f.1", "[::1]", "::1::", "1.2.3.4.5"])
def test_anything_that_is_not_a_plain_ip_address_is_refused_not_guessed(text):
    assert address_problem(text)


# -- 2. spellings of loopback, through the real resolver ---------------------------------------

SPELLINGS = [
    "http://127.0.0.1:{port}/a", "http://localhost:{port}/b", "http://2130706433:{port}/c",
    "http://127.1:{port}/d", "http://0x7f.1:{port}/e", "http://0x7f000001:{port}/f", "http://[::1]:{port}/g",
    "http://[::ffff:127.0.0.1]:{port}/h", "http://0.0.0.0:{port}/i", "http://LocalHost:{port}/j",
    "http://0:{port}/k", "http://[0:0:0:0:0:ffff:7f00:1]:{port}/l",
]


@pytest.mark.parametrize("template", SPELLINGS)
async def test_every_spelling_of_loopback_is_refused_and_never_connects(loopback, template):
    v4, v6 = loopback
    url = template.format(port=v4.port)
    path = "/" + url.rsplit("/", 1)[1]

    message = await refused(url)
    assert v4.total == v6.total == 0, message

    # The same spelling does lead to the server when private addresses are allowed:
    # the refusal above is the guard's doing, not a dead URL.
    response = await get(url, allow_private=True)
    assert response.status == 200 and b"marker-internal" in response.body
    assert v4.hits[path] + v6.hits[path] == 1


@pytest.mark.parametrize("url", ["http://0177.0.0.1:{port}/", "http://127.0.0.1:{port}@:{port}/",
                                 "http://[::1:{port}/", "http://%31%32%37.0.0.1:{port}/"])
async def test_spellings_that_are_not_valid_urls_fetch_nothing(loopback, url):
    v4, v6 = loopback
    with pytest.raises(FetchError):
        await get(url.format(port=v4.port), allow_private=False)
    assert v4.total == v6.total == 0


# -- 3. names that resolve privately (fake DNS) ----------------------------------------------------

PRIVATE_ANSWERS = ["10.0.0.1", "169.254.169.254", "100.64.0.1", "fd00::1", "64:ff9b::7f00:1", "2002:7f00:1::",
                   "::ffff:192.168.1.1", "127.0.0.1", "0.0.0.0", "::1", "224.0.0.251"]


@pytest.mark.parametrize("answer", PRIVATE_ANSWERS)
async def test_a_name_that_resolves_to_a_private_address_is_refused_before_connecting(answer):
    dns = FakeDNS()
    dns.add("intranet.example.com", [answer])
    message = await refused("http://intranet.example.com/admin", resolver=dns)
    assert "intranet.example.com" in message
    assert str(ipaddress.ip_address(answer)) in message
    assert dns.asked == ["intranet.example.com"]


async def test_a_name_resolving_to_loopback_reaches_it_only_when_allowed(loopback):
    v4, _ = loopback
    dns = FakeDNS()
    dns.add("intranet.test", ["127.0.0.1"])
    await refused(f"http://intranet.test:{v4.port}/x", resolver=dns)
    assert v4.total == 0
    response = await get(f"http://intranet.test:{v4.port}/x", allow_private=True, resolver=dns)
    assert response.status == 200 and v4.hits["/x"] == 1


@pytest.mark.parametrize("answers", [[PUBLIC_V4, "127.0.0.1"], ["127.0.0.1", PUBLIC_V4],
                                     ["2606:4700:4700::1111", "::ffff:127.0.0.1"]])
async def test_an_answer_set_with_any_private_address_is_refused_whole(loopback, answers):
    # Which address of a set gets used must not be up to a race (or to the public one
    # timing out and the client falling through to the next).
    v4, _ = loopback
    dns = FakeDNS()
    dns.add("mixed.example.com", answers)
    message = await refused(f"http://mixed.example.com:{v4.port}/", resolver=dns)
    assert "127.0.0.1" in message
    assert v4.total == 0


async def test_dns_rebinding_cannot_swap_the_address_between_check_and_connect():
    """A rebinding name server answers a harmless address to the first question and an
    internal one to the next. A guard that checks one lookup and lets the connection do
    its own would be fooled. Here each connection asks once and connects to exactly
    what it was told: proven with two loopback servers on one port, 127.0.0.2 (the
    first answer) and 127.0.0.1 (the second)."""
    first = listener("127.0.0.2")
    second = listener("127.0.0.1", first.port)
    try:
        dns = FakeDNS()
        dns.add("rebind.example.com", ["127.0.0.2"], ["127.0.0.1"])
        response = await get(f"http://rebind.example.com:{first.port}/x", allow_private=True, resolver=dns)
        assert response.status == 200
        assert dns.asked == ["rebind.example.com"]
        assert first.hits["/x"] == 1 and second.total == 0

        # With the guard on, a first answer that is private is refused whatever the
        # second would have been, and nothing is asked twice.
        dns = FakeDNS()
        dns.add("rebind.example.com", ["127.0.0.1"], [PUBLIC_V4])
        await refused(f"http://rebind.example.com:{first.port}/y", resolver=dns)
        assert dns.asked == ["rebind.example.com"]
        assert first.total == 1 and second.total == 0
    finally:
        first.stop()
        second.stop()


async def test_a_name_server_with_no_answer_is_a_clear_error_not_a_crash():
    dns = FakeDNS()
    dns.add("empty.example.com", [])
    for allow_private in (False, True):
        with pytest.raises(FetchError, match="host not found: empty.example.com"):
            await get("http://empty.example.com/", allow_private=allow_private, resolver=dns)


# -- 4. redirects ------------------------------------------------------------------------------------

class PublicSite(httpx.AsyncBaseTransport):
    """Plays a web site on the public internet: path -> (status, Location)."""

    def __init__(self, routes: dict[str, str]):
        self.routes = routes
        self.hits: Counter[str] = Counter()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.hits[request.url.path] += 1
        target = self.routes.get(request.url.path)
        if target is None:
            return httpx.Response(200, stream=httpx.ByteStream(b"<p>public page</p>"),
                                  headers={"Content-Type": "text/html"})
        return httpx.Response(302, headers={"Location": target})


REDIRECT_TARGETS = [
    "http://127.0.0.1:{port}/secret", "http://localhost:{port}/secret", "http://2130706433:{port}/secret",
    "http://[::1]:{port}/secret", "http://[::ffff:127.0.0.1]:{port}/secret", "http://metadata.test:{port}/secret",
    "http://rebind.test:{port}/secret",
]


@pytest.mark.parametrize("target", REDIRECT_TARGETS)
async def test_a_redirect_from_a_public_site_into_the_machine_is_refused(loopback, target):
    v4, v6 = loopback
    dns = FakeDNS()
    dns.add("metadata.test", ["169.254.169.254"])
    dns.add("rebind.test", [PUBLIC_V4, "127.0.0.1"])
    target = target.format(port=v4.port)
    site = PublicSite({"/start": "/hop", "/hop": "https://public.example/hop2", "/hop2": target})
    message = await refused("https://public.example/start", resolver=dns, sites={"public.example": site})
    assert list(site.hits.values()) == [1, 1, 1]
    assert v4.total == v6.total == 0, message


async def test_a_public_site_that_redirects_within_itself_is_fetched():
    # The control for the test above: the in-process public site and its redirects work.
    site = PublicSite({"/start": "/hop", "/hop": "https://public.example/end"})
    response = await get("https://public.example/start", allow_private=False, sites={"public.example": site})
    assert response.status == 200 and response.url == "https://public.example/end"
    assert response.body == b"<p>public page</p>"


@pytest.mark.parametrize("target", ["file:///etc/passwd", "gopher://127.0.0.1:6379/_INFO", "ftp://127.0.0.1/",
                                    "dict://127.0.0.1:11211/stats", "http+unix://%2Frun%2Fdocker.sock/info"])
async def test_a_redirect_to_another_scheme_is_refused_even_with_private_urls_allowed(target):
    site = PublicSite({"/start": target})
    with pytest.raises(BlockedAddress, match="^blocked: only http and https URLs are fetched"):
        await get("https://public.example/start", allow_private=True, sites={"public.example": site})


# -- 5. schemes, unix sockets, proxies -------------------------------------------------------------

@pytest.mark.parametrize("url", ["file:///etc/passwd", "FILE:///etc/passwd", "ftp://127.0.0.1/", "gopher://127.0.0.1/",
                                 "javascript:alert(1)", "data:text/html,<p>hi</p>", "ws://127.0.0.1/",
                                 "http+unix://%2Frun%2Fdocker.sock/info"])
async def test_only_http_and_https_are_fetched(url):
    for allow_private in (False, True):
        with pytest.raises(BlockedAddress, match="^blocked: only http and https URLs are fetched, not "):
            await get(url, allow_private=allow_private)


async def test_unix_sockets_are_never_connected(tmp_path):
    path = str(tmp_path / "docker.sock")
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.listen()
    server.setblocking(False)
    try:
        with pytest.raises(BlockedAddress, match="unix sockets"):
            await _GuardedBackend(allow_private=True).connect_unix_socket(path)
        # A transport configured for a socket (as a proxy or `uds=` would) still goes
        # through the backend and is refused there.
        async with make_client(allow_private=True) as client:
            pool = client._transport._pool
            with pytest.raises(BlockedAddress):
                await pool._network_backend.connect_unix_socket(path)
        with pytest.raises(BlockingIOError):
            server.accept()  # nobody ever connected
    finally:
        server.close()


PROXY_VARIABLES = ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"]


async def test_environment_proxies_are_ignored(monkeypatch, pages):
    proxy = listener("127.0.0.1")
    try:
        for name in PROXY_VARIABLES:
            monkeypatch.setenv(name, f"http://127.0.0.1:{proxy.port}")
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        assert os.environ["HTTP_PROXY"].endswith(str(proxy.port))

        url = pages.add("/direct.html", "<p>direct</p>")
        response = await get(url, allow_private=True)
        assert response.body == b"<p>direct</p>" and pages.hits["/direct.html"] == 1

        # With the guard on, a proxy would have been the way around it.
        dns = FakeDNS()
        dns.add("intranet.test", ["127.0.0.1"])
        await refused(f"http://intranet.test:{pages.port}/direct.html", resolver=dns)
        await refused("https://intranet.test/", resolver=dns)
        assert proxy.total == 0 and pages.hits["/direct.html"] == 1
    finally:
        proxy.stop()


async def test_the_sample_site_serves_only_its_own_files():
    async with make_client(allow_private=False, sites=sample_sites()) as client:
        ok = await fetch(client, "https://samples.reader.invalid/feed.xml", **LIMITS)
        assert ok.status == 200 and b"<rss" in ok.body
        for path in ["/../../fetch.py", "/%2e%2e/%2e%2e/fetch.py", "/..%2f..%2ffetch.py", "/articles/../../__init__.py"]:
            with pytest.raises(FetchError, match="HTTP 404"):
                await fetch(client, "https://samples.reader.invalid" + path, **LIMITS)


# -- 6. end to end: the card says why -----------------------------------------------------------------

async def _status(client, article_id: int) -> str:
    node = lxml_html.fromstring((await client.get("/")).text).get_element_by_id(f"card-{article_id}")
    return " ".join(node.find_class("status")[0].text_content().split())


async def test_refusals_land_on_the_card_and_in_the_api_as_blocked(settings, pages, loopback):
    v4, _ = loopback
    dns = FakeDNS()
    dns.add("metadata.test", ["169.254.169.254"])
    dns.add("rebind.test", [PUBLIC_V4, "127.0.0.1"])
    dns.add("nat64.test", ["64:ff9b::7f00:1"])
    links = {
        "Loopback": f"http://127.0.0.1:{v4.port}/a",
        "Decimal": f"http://2130706433:{v4.port}/b",
        "Mapped": f"http://[::ffff:127.0.0.1]:{v4.port}/c",
        "Metadata": "http://metadata.test/latest/meta-data/",
        "Rebinding": f"http://rebind.test:{v4.port}/d",
        "NAT64": f"http://nat64.test:{v4.port}/e",
        # allowed first hop (private URLs are allowed for it below), refused second hop
        "To a file": pages.add("/to-file", b"", status=302, headers={"Location": "file:///etc/passwd"}),
    }
    feed = pages.add("/feed.xml", rss([{"title": t, "link": link} for t, link in links.items()]),
                     headers={"Content-Type": "application/rss+xml"})
    async with app_client(settings.replace(serve_workers=0), resolver=dns) as client:
        assert (await client.post("/api/feeds", json={"url": feed})).json()["error"] is None
        ids = {a["title"]: a["id"] for a in (await client.get("/api/articles")).json()["items"]}
    assert set(ids) == set(links)

    async def run(allow_private: bool, titles: list[str]) -> None:
        async with app_client(settings.replace(allow_private_urls=allow_private), resolver=dns) as client:
            for title in titles:
                assert (await client.post(f"/api/articles/{ids[title]}/queue")).status_code == 200

            async def all_failed():
                found = [(await client.get(f"/api/articles/{ids[t]}")).json() for t in titles]
                return found if all(a["state"] == "failed" for a in found) else None

            for title, found in zip(titles, await wait_for(all_failed, timeout=30)):
                assert found["error"].startswith("blocked: "), (title, found["error"])
                assert await _status(client, ids[title]) == f"failed: {found['error']}"
                # The direct lane refuses the same way, with the same words.
                direct = await client.get(f"/api/articles/{ids[title]}/content")
                assert direct.status_code == 502 and direct.json() == {"error": found["error"]}
            stats = (await client.get("/api/stats")).json()
            assert stats["cached"] == 0 and stats["failed"] == stats["started"]

    await run(False, [t for t in links if t != "To a file"])
    await run(True, ["To a file"])
    assert v4.total == 0
    assert pages.hits["/to-file"] == 2  # the tap and the direct open; the file was never read
