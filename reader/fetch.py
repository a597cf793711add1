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
  fetch (a server trickling a byte a second is cut off). Decompression is done here,
  bounded at every step: never more than the cap is inflated, however the body is
  compressed or how many times (httpx's own decoders inflate a whole chunk at once, so a
  doubly gzipped body could expand to gigabytes in one call);
* a charset is passed on only if it names a text encoding that can decode anything.

Failures are `FetchError`s whose message is written for the person reading the card.
"""

from __future__ import annotations

import asyncio
import codecs
import ipaddress
import socket
import ssl
import zlib
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
    ipaddress.ip_network("192.88.99.0/24"),  # 6to4 relay anycast (deprecated), not a host
    ipaddress.ip_network("64:ff9b:1::/48"),  # local-use NAT64: prefix length, hence embedding, unknown
    ipaddress.ip_network("fc00::/7"),  # unique local
    ipaddress.ip_network("fec0::/10"),  # site local (deprecated, still routed by some)
]
_NAT64 = [ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48")]


def address_problem(address: str) -> str | None:
    """Why connecting to this IP address is refused, or None if it is a public address.
    Never raises: anything that is not an IP address is refused too."""
    try:
        ip = ipaddress.ip_address(str(address).split("%", 1)[0])
    except ValueError:
        return f"{str(address)[:100]!r} is not an IP address"
    if isinstance(ip, ipaddress.IPv6Address):
        # Forms that carry an IPv4 address inside lead to that address: v4-mapped (an
        # IPv6 socket connects to it over IPv4), NAT64 64:ff9b::/96 and 6to4 (the
        # gateway forwards to it). They are judged by the address they lead to alone,
        # so on an IPv6-only network with DNS64 public sites still work, while a wrapped
        # private address is refused.
        inner = ip.ipv4_mapped or ip.sixtofour
        if inner is None and ip in _NAT64[0]:
            inner = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if inner is not None:
            problem = address_problem(str(inner))
            return f"{ip} wraps {problem}" if problem else None
        # Teredo and the deprecated IPv4-compatible ::a.b.c.d are refused whatever they
        # carry (both are also not global); say what is inside when it is worse.
        carried = list(ip.teredo or ())
        if ip.packed[:12] == bytes(12) and int(ip) > 1:
            carried.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
        for inner in carried:
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
        # One lookup per connection, and only its answers are connected to: there is no
        # second lookup for a rebinding name server to answer differently.
        addresses = list(await self._resolve(host, port))
        if not addresses:
            raise FetchError(f"host not found: {host}", transient=True)
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
        data = path.read_bytes()
        return httpx.Response(
            200,
            # a stream, not content=: fetch() reads raw bytes, which a pre-read body has not
            stream=httpx.ByteStream(data),
            headers={"content-type": self._TYPES.get(path.suffix, "application/octet-stream"),
                     "content-length": str(len(data))},
            request=request,
        )


def make_client(
    *, allow_private: bool, deadline: float = 30.0, resolver=None,
    sites: dict[str, httpx.AsyncBaseTransport] | None = None,
) -> httpx.AsyncClient:
    """The client for all outgoing requests. `resolver` (host, port) -> [addresses]
    replaces DNS; tests use it to play a rebinding name server. `sites` maps host names
    to in-process transports that answer for them, beside the built-in sample site;
    tests use it to play a public web site (nothing public is reachable from a test
    machine). Such a site never touches the network, and every request it redirects
    to is a new request through the guard like any other."""
    # Mounted per scheme, not all://: a redirect to file:///etc/passwd keeps the host it
    # came from, and must reach the guarded transport (which refuses the scheme), not
    # the in-process site.
    mounts: dict[str, httpx.AsyncBaseTransport] = {}
    for host, transport in {SAMPLE_HOST: _SampleTransport(), **(sites or {})}.items():
        mounts[f"http://{host}"] = mounts[f"https://{host}"] = transport
    return httpx.AsyncClient(
        transport=_GuardedTransport(allow_private, resolver),
        mounts=mounts,
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
    except (httpx.InvalidURL, TypeError):
        raise FetchError(f"not a valid URL: {_clip(url)}") from None
    if parsed.scheme and parsed.scheme not in ("http", "https"):
        raise BlockedAddress(f"blocked: only http and https URLs are fetched, not {_clip(parsed.scheme, 20)}:")
    if not parsed.scheme or not parsed.host:
        raise FetchError(f"not a valid URL: {_clip(url)}")
    # Only what _Inflater decodes, within the cap. (Left to itself httpx also offers br
    # and zstd when those packages are installed, and decodes them unbounded.)
    headers = {"Accept": accept, **(extra_headers or {}), "Accept-Encoding": "gzip, deflate"}
    try:
        async with asyncio.timeout(deadline):
            async with client.stream("GET", parsed, headers=headers) as response:
                if response.status_code >= 400:
                    raise FetchError(
                        f"the site answered HTTP {response.status_code}"
                        f" {response.reason_phrase}".rstrip(),
                        transient=response.status_code >= 500 or response.status_code == 429,
                    )
                too_large = FetchError(f"page is larger than {_size(max_bytes)}")
                declared = response.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > max_bytes:
                    raise too_large
                inflater = _Inflater(response.headers.get("content-encoding", ""), max_bytes)
                body = bytearray()
                received = 0
                try:
                    async for chunk in response.aiter_raw():
                        received += len(chunk)
                        if received > max_bytes:
                            raise _TooLarge
                        body += inflater.feed(chunk)
                    body += inflater.flush()
                except _TooLarge:
                    raise too_large from None
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


class _TooLarge(Exception):
    pass


class _Inflater:
    """Decodes a Content-Encoding (gzip, deflate, or a chain of them) while never
    producing more than `limit` bytes at any stage: each step inflates at most what is
    left of the cap, and leftover input after that means the body is too large."""

    def __init__(self, header: str, limit: int):
        encodings = [e.strip().lower() for e in header.split(",") if e.strip()]
        encodings = [e for e in encodings if e != "identity"]
        for encoding in encodings:
            if encoding not in ("gzip", "x-gzip", "deflate"):
                raise FetchError(f"the response could not be decoded (unsupported encoding {encoding[:40]!r})")
        # Applied in order, so decoded in reverse.
        self._stages = [_Stage(e) for e in reversed(encodings)]
        self._limit = limit

    def feed(self, data: bytes) -> bytes:
        for stage in self._stages:
            data = stage.feed(data, self._limit)
        return data

    def flush(self) -> bytes:
        data = b""
        for stage in self._stages:
            data = stage.feed(data, self._limit) + stage.flush(self._limit)
        return data


class _Stage:
    def __init__(self, encoding: str):
        self._gzip = encoding != "deflate"
        self._decoder = zlib.decompressobj(zlib.MAX_WBITS | 16 if self._gzip else zlib.MAX_WBITS)
        self._started = False  # deflate: zlib-wrapped or raw is known after the first bytes
        self._total = 0

    def feed(self, data: bytes, limit: int) -> bytes:
        if not data:
            return b""
        try:
            try:
                out = self._decoder.decompress(data, limit + 1 - self._total)
            except zlib.error:
                if self._gzip or self._started:
                    raise
                self._decoder = zlib.decompressobj(-zlib.MAX_WBITS)  # raw deflate, as some servers send
                out = self._decoder.decompress(data, limit + 1 - self._total)
        except zlib.error:
            raise FetchError("the response could not be decoded (bad compression)") from None
        self._started = True
        self._total += len(out)
        if self._total > limit or self._decoder.unconsumed_tail:
            raise _TooLarge
        return out

    def flush(self, limit: int) -> bytes:
        try:
            out = self._decoder.flush()
        except zlib.error:
            raise FetchError("the response could not be decoded (bad compression)") from None
        self._total += len(out)
        if self._total > limit:
            raise _TooLarge
        return out


def _content_type(header: str) -> tuple[str, str | None]:
    media_type, _, params = header.partition(";")
    charset = None
    for param in params.split(";"):
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset" and value.strip():
            charset = _usable_charset(value.strip().strip('"\'').lower())
    return media_type.strip().lower(), charset


def _usable_charset(name: str) -> str | None:
    """The charset if it is a text encoding that decodes any bytes with errors="replace";
    None otherwise (unknown, "base64", "idna", ...), so the page's own bytes decide."""
    if len(name) > 40:
        return None
    try:
        if not codecs.lookup(name)._is_text_encoding:
            return None
        b"\xff\xfe\x00<p>\x80\xe9\\N{x}\\u12".decode(name, errors="replace")
    except Exception:  # LookupError, UnicodeError, and whatever an odd codec raises
        return None
    return name


def _clip(value: object, limit: int = 200) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _size(n: int) -> str:
    return f"{n / 1_000_000:g} MB" if n >= 1_000_000 else f"{n / 1000:g} KB"


def is_html(content_type: str, body: bytes) -> bool:
    if content_type in ("text/html", "application/xhtml+xml"):
        return True
    if content_type:
        return False
    head = body[:512].lstrip().lower()
    return head.startswith((b"<!doctype html", b"<html", b"<head", b"<body", b"<p", b"<div"))

