"""What every answer carries, errors and 500s included: the security headers (a
Content-Security-Policy without inline scripts and with images from reader only,
nosniff, no framing), a Cache-Control for answers that give none, and the bare refusals the outer layers (the access middleware,
the server's connection limit) answer with before any route runs."""

from __future__ import annotations

from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.types import Message, Scope, Send

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'; "
    # the installable app: its manifest and its service worker (/sw.js), ours only
    "manifest-src 'self'; worker-src 'self'"
)

SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    # no-referrer would make browsers send "Origin: null" on our own form posts
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
]


def is_api(scope: Scope) -> bool:
    return str(scope["path"]).startswith("/api/")


def refusal(scope: Scope, status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    if is_api(scope):
        return JSONResponse({"error": message}, status_code=status, headers=headers)
    return PlainTextResponse(message, status_code=status, headers=headers)


# An answer that says nothing about caching may be stored by a shared cache (a proxy, a
# CDN) and, with a heuristic freshness, handed to whoever asks next: the library's JSON,
# its exports, the redirects to the login. Every answer but the static files' (the same
# for everyone, and open without a login) is the person's, so those that give no
# Cache-Control of their own are not stored at all.
DEFAULT_CACHE_CONTROL = (b"cache-control", b"no-store")


def with_security_headers(send: Send, *, static: bool = False) -> Send:
    """`send` adding the security headers, and the default Cache-Control unless `static`."""

    async def sender(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = message.get("headers", [])
            extra = SECURITY_HEADERS
            if not any(name.lower() == b"cache-control" for name, _ in headers) and not static:
                extra = [*SECURITY_HEADERS, DEFAULT_CACHE_CONTROL]
            message["headers"] = [*headers, *extra]
        await send(message)

    return sender
