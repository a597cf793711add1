"""The only HTTP client reader uses, for feeds and pages alike.

What it guarantees, for every request and every redirect hop:

* only http and https;
* the address actually connected to is checked *after* DNS resolution, at connect
  time, so redirects, DNS rebinding and odd spellings of loopback (`http://2130706433/`,
  `http://127.1/`, `[::ffff:127.0.0.1]`) meet the same check. Private, loopback,
  link-local, CGNAT, multicast, reserved and unspecified addresses, and IPv6 forms
  that wrap them, are refused unless the `allow_private_urls` setting is on;
* no environment proxy (`trust_env=False`), so nothing routes around the check;
* a cap on decoded bytes (a gzip bomb stops at the cap) and one overall deadline per
  fetch (a server trickling a byte a second is cut off).

Failures are `FetchError`s whose message is written for the person reading the card.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import ssl
from dataclasses import dataclass, field

import certifi
import httpcore
import httpx

from . import __version__
from .samples import SAMPLE_HOST, SITE_DIR

USER_AGENT = f"reader/{__version__} (self-hosted reading app; fetches pages its user asked for)"
MAX_REDIRECTS = 5


class FetchError(Exception):
    """A fetch that did not produce a usable body. `transient` failures may succeed later."""

    def __init__(self, message: str, *, transient: bool = False):
        super().__init__(message)
        self.transient = transient


class BlockedAddress(FetchError):
    pass


# Networks that ipaddress does not flag on every Python version, or flags only as
# "not global": listed so the rule reads the same everywhere.
_ALWAYS_BLOCKED = [
    ipaddress.ip_network("100.64.0.0/10"),  # CGNAT, shared address space
    ipaddress.ip_network("192.0.0.0/24"),  # IETF protocol assignments
    ipaddress.ip_network("198.18.0.0/15"),  # benchmarking
    ipaddress.ip_network("fc00::/7"),  # unique local
    ipaddress.ip_network("fec0::/10"),  # site local (deprecated, still routed by some)
]
_NAT64 = [ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48")]


def address_problem(address: str) -> str | None:
    """Why connecting to this IP address is refused, or None if it is a public address."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return f"{address} is not an IP address"
    if isinstance(ip, ipaddress.IPv6Address):
        # Forms that carry an IPv4 address inside: judge the address they lead to.
        embedded = []
        if ip.ipv4_mapped is not None:
            embedded.append(ip.ipv4_mapped)
        if ip.sixtofour is not None:
            embedded.append(ip.sixtofour)
        if ip.teredo is not None:
            embedded.extend(ip.teredo)
        if any(ip in net for net in _NAT64):
            embedded.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
        if ip.packed[:12] == bytes(12) and int(ip) > 1:  # deprecated IPv4-compatible ::a.b.c.d
            embedded.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
        for inner in embedded:
            problem = address_problem(str(inner))
            if problem:
                return f"{ip} wraps {problem}"
    for kind in ("loopback", "unspecified", "link_local", "multicast", "private", "reserved"):
        if getattr(ip, f"is_{kind}"):
            return f"{ip} is a {kind.replace('_', '-')} address"
    if any(ip.version == net.version and ip in net for net in _ALWAYS_BLOCKED):
        return f"{ip} is a private address"
    if not ip.is_global:
        return f"{ip} is not a public address"
    return None


class _GuardedBackend(httpcore.AsyncNetworkBackend):
    """Resolves the host itself, checks every address, then connects to a checked IP
    literal, so the address checked is the address used (no second lookup to rebind)."""

    def __init__(self, allow_private: bool, resolver=None):
        self._inner = httpcore.AnyIOBackend()
        self._allow_private = allow_private
        self._resolve = resolver or _resolve

    async def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        addresses = await self._resolve(host, port)
        if not self._allow_private:
            problems = [address_problem(a) for a in addresses]
            allowed = [a for a, p in zip(addresses, problems) if p is None]
            if not allowed or any(problems):
                # A name that resolves to both public and private addresses is refused
                # whole: which one is used must not be up to a race.
                reason = next(p for p in problems if p)
                raise BlockedAddress(
                    f"blocked: {host} resolves to {reason} (set READER_ALLOW_PRIVATE_URLS to allow)"
                )
        last_error: Exception | None = None
        for address in addresses:
            try:
                return await self._inner.connect_tcp(
                    address, port, timeout=timeout, local_address=local_address,
                    socket_options=socket_options,
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last_error = exc
        assert last_error is not None
        raise last_error

    async def connect_unix_socket(self, path, timeout=None, socket_options=None):
        raise BlockedAddress("blocked: unix sockets are never fetched")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


async def _resolve(host: str, port: int) -> list[str]:
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise FetchError(f"host not found: {host}", transient=True) from exc
    seen: list[str] = []
    for info in infos:
        if info[4][0] not in seen:
            seen.append(info[4][0])
    return seen


class _GuardedTransport(httpx.AsyncHTTPTransport):
    def __init__(self, allow_private: bool, resolver=None):
        super().__init__(trust_env=False, retries=0)
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=ssl.create_default_context(cafile=certifi.where()),
            max_connections=50,
            max_keepalive_connections=10,
            keepalive_expiry=5.0,
            network_backend=_GuardedBackend(allow_private, resolver),
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.scheme not in ("http", "https"):
            raise BlockedAddress(f"blocked: only http and https URLs are fetched, not {request.url.scheme}:")
        return await super().handle_async_request(request)


class _SampleTransport(httpx.AsyncBaseTransport):
    """Serves https://samples.reader.invalid/ from the files shipped in reader/samples,
    so the first run works with no network. `.invalid` never resolves, so nothing real
    can be shadowed."""

    _TYPES = {".xml": "application/rss+xml", ".html": "text/html; charset=utf-8", ".json": "application/feed+json"}

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        path = (SITE_DIR / request.url.path.lstrip("/")).resolve()
        if not path.is_relative_to(SITE_DIR.resolve()) or not path.is_file():
            return httpx.Response(404, text="not found", request=request)
        return httpx.Response(
            200,
            content=path.read_bytes(),
            headers={"content-type": self._TYPES.get(path.suffix, "application/octet-stream")},
            request=request,
        )


def make_client(*, allow_private: bool, deadline: float = 30.0, resolver=None) -> httpx.AsyncClient:
    """The client for all outgoing requests. `resolver` (host, port) -> [addresses]
    replaces DNS; tests use it to play a rebinding name server."""
    return httpx.AsyncClient(
        transport=_GuardedTransport(allow_private, resolver),
        mounts={f"all://{SAMPLE_HOST}": _SampleTransport()},
        follow_redirects=True,
        max_redirects=MAX_REDIRECTS,
        trust_env=False,
        # per-operation limits no tighter than the overall deadline fetch() enforces
        timeout=httpx.Timeout(deadline, connect=min(10.0, deadline)),
        headers={"User-Agent": USER_AGENT},
    )


@dataclass
class Response:
    url: str  # after redirects
    status: int
    content_type: str  # media type only, lower case, "" if absent
    charset: str | None
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)


async def fetch(
    client: httpx.AsyncClient,
    url: str,
    *,
    max_bytes: int,
    deadline: float,
    accept: str = "*/*",
    extra_headers: dict[str, str] | None = None,
) -> Response:
    """GET a URL within the limits. 304 comes back as a Response with an empty body;
    every other status of 400 and up raises FetchError."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError) as exc:
        raise FetchError(f"not a valid URL: {url!r}") from exc
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise FetchError(f"only http and https URLs can be fetched: {url!r}")
    headers = {"Accept": accept, **(extra_headers or {})}
    try:
        async with asyncio.timeout(deadline):
            async with client.stream("GET", parsed, headers=headers) as response:
                if response.status_code >= 400:
                    raise FetchError(
                        f"the site answered HTTP {response.status_code}"
                        f" {response.reason_phrase}".rstrip(),
                        transient=response.status_code >= 500 or response.status_code == 429,
                    )
                body = bytearray()
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) > max_bytes:
                        raise FetchError(f"page is larger than {_size(max_bytes)}")
                media_type, charset = _content_type(response.headers.get("content-type", ""))
                return Response(
                    url=str(response.url),
                    status=response.status_code,
                    content_type=media_type,
                    charset=charset,
                    body=bytes(body),
                    headers=dict(response.headers),
                )
    except TimeoutError:
        raise FetchError(f"timed out after {deadline:g} s", transient=True) from None
    except FetchError:
        raise
    except httpx.TooManyRedirects:
        raise FetchError(f"more than {MAX_REDIRECTS} redirects") from None
    except httpx.TimeoutException:
        raise FetchError("timed out", transient=True) from None
    except httpx.ConnectError as exc:
        raise FetchError(f"could not connect to {parsed.host}", transient=True) from exc
    except httpx.UnsupportedProtocol as exc:
        raise BlockedAddress(f"blocked: only http and https URLs are fetched ({exc})") from None
    except httpx.DecodingError:
        raise FetchError("the response could not be decoded (bad compression)") from None
    except (httpx.TransportError, httpx.InvalidURL) as exc:
        raise FetchError(f"fetch failed: {exc or type(exc).__name__}", transient=True) from exc


def _content_type(header: str) -> tuple[str, str | None]:
    media_type, _, params = header.partition(";")
    charset = None
    for param in params.split(";"):
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset" and value.strip():
            charset = value.strip().strip('"').lower()
    return media_type.strip().lower(), charset


def _size(n: int) -> str:
    return f"{n / 1_000_000:g} MB" if n >= 1_000_000 else f"{n / 1000:g} KB"


def is_html(content_type: str, body: bytes) -> bool:
    if content_type in ("text/html", "application/xhtml+xml"):
        return True
    if content_type:
        return False
    head = body[:512].lstrip().lower()
    return head.startswith((b"<!doctype html", b"<html", b"<head", b"<body", b"<p", b"<div"))

