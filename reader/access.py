"""Who may do what, over HTTP.

* Security headers on every response: a Content-Security-Policy without inline scripts.
* No cross-site writes. Browsers say where a request comes from (Sec-Fetch-Site, else
  Origin); a state-changing request from another site is refused. On top of that, every
  form the pages send carries a CSRF token (double submit: a SameSite=Strict cookie and
  the same value in the form or the X-CSRF-Token header), checked by `checked_form`.
  The JSON API relies on the header check alone, so scripts and the CLI, which are not a
  browser another site can drive, use it without a token.
* A password when reader listens beyond loopback (`READER_PASSWORD`): the pages then need
  a login, the API a bearer token (the same password).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from urllib.parse import quote

from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CSRF_COOKIE = "reader_csrf"
CSRF_FIELD = "csrf"
CSRF_HEADER = "x-csrf-token"
SESSION_COOKIE = "reader_session"
SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}
OPEN_PATHS = ("/login", "/static/")  # reachable without logging in

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' https: http: data:; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
)
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    # no-referrer would make browsers send "Origin: null" on our own form posts
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
]


def csrf_token(request: Request) -> str:
    return request.scope["reader.csrf"]


def _is_api(scope: Scope) -> bool:
    return scope["path"].startswith("/api/")


def _deny(scope: Scope, status: int, message: str):
    if _is_api(scope):
        return JSONResponse({"error": message}, status_code=status)
    return PlainTextResponse(message, status_code=status)


def cross_site(request: Request) -> bool:
    """Sec-Fetch-Site decides alone when a browser sends it (same-origin and the
    user-typed "none" pass); older browsers send only Origin, which must then be ours."""
    fetch_site = request.headers.get("sec-fetch-site")
    if fetch_site is not None:
        return fetch_site not in ("same-origin", "none")
    origin = request.headers.get("origin")
    return origin is not None and origin != f"{request.url.scheme}://{request.url.netloc}"


def session_value(password: str) -> str:
    """What the session cookie holds: derived from the password, so changing the password
    logs every browser out, and nothing needs storing."""
    return hmac.new(hashlib.sha256(password.encode()).digest(), b"reader session v1", "sha256").hexdigest()


class Access:
    """One ASGI middleware for headers, the cross-site check, the CSRF cookie and login."""

    def __init__(self, app: ASGIApp, password: str | None = None):
        self.app = app
        self.password = password or None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        request = Request(scope)
        if scope["method"] not in SAFE_METHODS and cross_site(request):
            return await _deny(scope, 403, "cross-site request refused")(scope, receive, self._with_headers(send, None))
        if self.password and not self._authenticated(request):
            if _is_api(scope):
                response = JSONResponse({"error": "authentication required"}, status_code=401,
                                        headers={"www-authenticate": 'Bearer realm="reader"'})
            else:
                target = scope["path"] + ("?" + scope["query_string"].decode() if scope["query_string"] else "")
                response = RedirectResponse("/login?next=" + quote(target, safe=""), status_code=303)
            return await response(scope, receive, self._with_headers(send, None))

        token = request.cookies.get(CSRF_COOKIE)
        fresh = None
        if not token or len(token) < 20:
            token = fresh = secrets.token_urlsafe(32)
        scope["reader.csrf"] = token
        await self.app(scope, receive, self._with_headers(send, fresh))

    def _authenticated(self, request: Request) -> bool:
        path = request.url.path
        if path.startswith(OPEN_PATHS):
            return True
        expected = session_value(self.password)
        if hmac.compare_digest(request.cookies.get(SESSION_COOKIE, ""), expected):
            return True
        scheme, _, credential = request.headers.get("authorization", "").partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(credential.encode(), self.password.encode())

    @staticmethod
    def _with_headers(send: Send, fresh_token: str | None) -> Send:
        async def sender(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", [])) + SECURITY_HEADERS
                if fresh_token:
                    cookie = f"{CSRF_COOKIE}={fresh_token}; Path=/; HttpOnly; SameSite=Strict"
                    headers.append((b"set-cookie", cookie.encode()))
                message["headers"] = headers
            await send(message)

        return sender


async def checked_form(request: Request) -> FormData:
    """The form of a state-changing page request, once its CSRF token has been checked."""
    form = await request.form()
    sent = str(form.get(CSRF_FIELD) or request.headers.get(CSRF_HEADER) or "")
    cookie = request.cookies.get(CSRF_COOKIE, "")
    if not cookie or not hmac.compare_digest(sent.encode(), cookie.encode()):
        await form.close()  # uploaded files are spooled to disk: let them go now
        raise HTTPException(403, "this form has expired or came from another site: reload the page and try again")
    return form
