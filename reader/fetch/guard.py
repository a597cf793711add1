"""The SSRF guard: every connection goes to an address checked after DNS resolution,
at connect time, so redirects, DNS rebinding and odd spellings of loopback meet the
same check."""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import socket
import ssl
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import certifi
import httpcore
import httpx

from .errors import BlockedAddress, FetchError

# (host, port) -> the addresses to connect to; tests pass one to play a name server.
Resolver = Callable[[str, int], Awaitable[Iterable[str]]]

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

    def __init__(self, allow_private: bool, resolver: Resolver | None = None) -> None:
        self._inner = httpcore.AnyIOBackend()
        self._allow_private = allow_private
        self._resolve = resolver or _resolve

    async def connect_tcp(
        self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
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
                address, reason = next((a, p) for a, p in zip(addresses, problems) if p)
                if host.strip("[]") != address:  # a name: say where it leads, then why that is refused
                    rest = reason.removeprefix(address)
                    reason = (f"{host} resolves to {address}, which{rest}" if rest != reason
                              else f"{host} resolves to a refused address ({reason})")
                raise BlockedAddress(f"blocked: {reason} (set READER_ALLOW_PRIVATE_URLS to allow)")
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

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise BlockedAddress("blocked: unix sockets are never fetched")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


async def _resolve(host: str, port: int) -> list[str]:
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise FetchError(f"host not found: {host}", transient=True) from exc
    except UnicodeError:
        # getaddrinfo IDNA-encodes the name itself: a label that cannot be encoded (a
        # redirect to http://xn--/ or a 64-character label) is no host at all
        raise FetchError(f"not a valid host name: {host[:100]!r}") from None
    seen: list[str] = []
    for info in infos:
        address = str(info[4][0])
        if address not in seen:
            seen.append(address)
    return seen


@functools.cache
def _tls() -> ssl.SSLContext:
    """One TLS context per process: loading the CA bundle costs ~0.15 s, and every client
    (each app start, each CLI command) would otherwise load it twice."""
    return ssl.create_default_context(cafile=certifi.where())


class _GuardedTransport(httpx.AsyncHTTPTransport):
    def __init__(self, allow_private: bool, resolver: Resolver | None = None) -> None:
        super().__init__(verify=_tls(), trust_env=False, retries=0)
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=_tls(),
            max_connections=50,
            max_keepalive_connections=10,
            keepalive_expiry=5.0,
            network_backend=_GuardedBackend(allow_private, resolver),
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.scheme not in ("http", "https"):
            raise BlockedAddress(f"blocked: only http and https URLs are fetched, not {request.url.scheme}:")
        return await super().handle_async_request(request)
