"""The only HTTP client reader uses, for feeds and pages alike.

Its jobs, one module each: `guard` (the address check at connect time), `sample_site`
(the offline sample), `client` (the client factory), `inflate` (bounded decompression),
and here `fetch` itself, which puts them together within a size cap and a deadline.

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
from dataclasses import dataclass, field

import httpx

from ..urls import http_url
from .client import MAX_REDIRECTS, USER_AGENT, make_client
from .errors import BlockedAddress, FetchError
from .guard import _GuardedBackend, _resolve, address_problem
from .inflate import _Inflater, _TooLarge

__all__ = [
    "MAX_REDIRECTS", "USER_AGENT", "BlockedAddress", "FetchError", "Response", "_GuardedBackend", "_resolve",
    "address_problem", "fetch", "is_html", "make_client",
]


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
    if not parsed.scheme or not parsed.host or http_url(url) is None:
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
        raise FetchError(f"fetch failed: {_transport_reason(exc)}", transient=True) from exc


def _transport_reason(exc: Exception) -> str:
    """Never empty: httpx raises a connection reset as a ReadError with no text, and an
    exception object is truthy whatever its text (the bug that wrote "fetch failed: ")."""
    text = str(exc).strip()
    if text:
        return text
    if isinstance(exc, (httpx.ReadError, httpx.WriteError)):
        return "the connection was reset by the site"
    if isinstance(exc, httpx.RemoteProtocolError):
        return "the site closed the connection without a proper answer"
    return type(exc).__name__


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
