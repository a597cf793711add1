"""What every answer carries, errors and 500s included: the security headers (a
Content-Security-Policy without inline scripts and with images from reader only,
nosniff, no framing), and the bare refusals the outer layers (the access middleware,
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


def with_security_headers(send: Send) -> Send:
    async def sender(message: Message) -> None:
        if message["type"] == "http.response.start":
            message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
        await send(message)

    return sender
