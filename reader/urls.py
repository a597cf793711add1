"""The one check of a URL given to reader: by a person, an API client, an OPML file, an
export or a feed. An http(s) URL with a host that can be looked up, or `Invalid`.

Everything a URL can do to the code after it is refused here, so nothing later (the
fetcher's IDNA encoding, SQLite's UTF-8 encoding, the sanitizer, the HTTP client) raises
on it: brackets that do not close, empty or over-long host labels, lone surrogates, URLs
that are pages long, control characters, a space in the host, an IP-literal that is no
IPv6 address.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import SplitResult, urlsplit, urlunsplit

import idna

from .errors import Invalid
from .settings import MAX_URL_LENGTH

_MAX_LABEL = 63  # RFC 1035
_MAX_HOST = 253
# C0, DEL and C1: urlsplit drops a tab or a newline without a word and keeps a NUL, which
# then lands raw in pages and files; no address holds one unescaped
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def check_url(value: object, name: str = "url") -> str:
    """The http(s) URL in `value`, stripped, or Invalid saying what is wrong with it."""
    if not isinstance(value, str) or not value.strip():
        raise Invalid(f"{name} is required")
    url = value.strip()
    if len(url) > MAX_URL_LENGTH:
        raise Invalid(f"{name} is longer than {MAX_URL_LENGTH} characters")
    shown = repr(url[:200])
    try:
        url.encode("utf-8")
    except UnicodeEncodeError:
        raise Invalid(f"{name} is not valid text (it holds a lone surrogate)") from None
    control = _CONTROL.search(url)
    if control:
        raise Invalid(f"not a valid URL: {shown} (it holds a control character,"
                      f" {control.group(0)!r} at {control.start()})")
    try:
        parts = urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018 - a port out of range or not a number raises ValueError here
    except ValueError as exc:
        raise Invalid(f"not a valid URL: {shown} ({exc})") from None
    if parts.scheme.lower() not in ("http", "https") or not host:
        raise Invalid(f"not an http or https URL: {shown}")
    _check_host(host, shown, "[" in parts.netloc.rpartition("@")[2])
    return url


def http_url(value: object) -> str | None:
    """The same check for readers of files and feeds, where a bad URL skips one item: the
    URL, or None."""
    try:
        return check_url(value)
    except Invalid:
        return None


def _check_host(host: str, shown: str, bracketed: bool) -> None:
    if bracketed:
        # urlsplit checks an IPv6 literal but lets any "[v1.x]" (RFC 3986's IPvFuture)
        # through, which no client can connect to; a zone id is spelled %25 in a URL
        try:
            ipaddress.IPv6Address(host.replace("%25", "%", 1))
        except ValueError:
            raise Invalid(f"not a valid URL: {shown} (the address in brackets is not an IPv6 address)") from None
        return
    if any(c.isspace() for c in host):  # a space in a path the client escapes; in a host it cannot
        raise Invalid(f"not a valid URL: {shown} (the host name holds a space)")
    if len(host) > _MAX_HOST:
        raise Invalid(f"not a valid URL: {shown} (the host name is too long)")
    labels = host.rstrip(".").split(".")
    if any(not label for label in labels):
        raise Invalid(f"not a valid URL: {shown} (the host name has an empty label)")
    if any(len(label) > _MAX_LABEL for label in labels):
        raise Invalid(f"not a valid URL: {shown} (a host name label is longer than {_MAX_LABEL} characters)")
    for label in labels:
        # Plain ASCII labels go to the resolver as they are (underscores and all); the rest
        # get the IDNA encoding the HTTP client applies before it connects, and "xn--"
        # labels must decode, so the client never meets a host it cannot encode.
        if label.isascii() and not label.lower().startswith("xn--"):
            continue
        try:
            idna.decode(label) if label.isascii() else idna.encode(label, uts46=True)
        except (idna.IDNAError, UnicodeError) as exc:
            raise Invalid(f"not a valid URL: {shown} (the host name is not valid: {exc})") from None


_TRACKING = re.compile(
    r"(utm_[a-z0-9_]*|fbclid|gclid|dclid|gbraid|wbraid|msclkid|mc_cid|mc_eid|igshid|yclid|twclid"
    r"|_hsenc|_hsmi|mkt_tok|oly_anon_id|oly_enc_id|vero_id|wickedid|__s)", re.IGNORECASE)
_DEFAULT_PORTS = {"http": 80, "https": 443}


def normalize_url(url: str) -> str:
    """The form two spellings of one link share: scheme and host in lower case, no default
    port, no fragment, no tracking parameters (utm_*, fbclid, gclid, ...), an empty path as
    "/" and no trailing slash on any other ("/post/" and "/post" are one link: feeds, share
    buttons and bookmark exports disagree about it); everything else (path case, other
    parameters and their order) kept, since servers may tell them apart. A key only: the
    URL stored and fetched is the one given. Raises ValueError for a URL that cannot be
    parsed."""
    return normalized_parts(urlsplit(url.strip()))


def normalized_parts(parts: SplitResult) -> str:
    """normalize_url of a URL already split (the importers split each row once)."""
    scheme = parts.scheme.lower()
    host = parts.hostname or ""
    port = parts.port  # ValueError for a port that is not a number in range
    netloc = f"[{host}]" if ":" in host else host
    if "@" in parts.netloc:
        netloc = parts.netloc.rpartition("@")[0] + "@" + netloc
    if port is not None and port != _DEFAULT_PORTS.get(scheme):
        netloc += f":{port}"
    query = parts.query
    if query:
        query = "&".join(p for p in query.split("&") if p and not _TRACKING.fullmatch(p.partition("=")[0]))
    path = parts.path.rstrip("/") or "/"
    return urlunsplit((scheme, netloc, path, query, ""))
