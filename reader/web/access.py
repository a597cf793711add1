"""Who may do what, over HTTP. One ASGI middleware, outermost (outside even the handler
that turns a crash into a 500), so every rule below holds for every answer. What it
applies is kept by job: headers.py (the security headers and the bare refusals),
csrf.py (the pages' form tokens), sessions.py (login sessions, the password throttle);
server.py is the layer below it, in uvicorn's protocol.

* Security headers on every response, errors and 500s included (headers.py): a
  Content-Security-Policy without inline scripts and with images from reader only (an
  article's images are stored with it, so no page can make the browser request another
  address), nosniff, no framing.
* Only our own names: the Host header must be a loopback name or address, the host of
  READER_PUBLIC_URL, one of READER_ALLOWED_HOSTS, or the non-loopback address `serve` is
  bound to. Anything else is 421 before any route runs: a DNS-rebinding page (whose name
  now points at 127.0.0.1) sends its own name as Host, and is refused.
* Bounded requests: the request target is capped (414), and the body is counted while it
  streams, before anything parses it (413 and the connection closed): 16 KB before login,
  1 MB for ordinary forms and JSON, READER_MAX_UPLOAD_BYTES for the OPML upload,
  READER_MAX_PAGE_BYTES for a page the bookmarklet sends.
* No cross-site writes. Browsers say where a request comes from (Sec-Fetch-Site, else
  Origin); a state-changing request from another site is refused. On top of that, every
  form the pages send carries a CSRF token (double submit: a SameSite=Strict cookie and
  the same value in the form or the X-CSRF-Token header), checked by csrf.checked_form.
  The JSON API relies on the header check alone, so scripts and the CLI, which are not a
  browser another site can drive, use it without a token.
* No cross-site subresources. A GET can have effects (opening an article marks it read and
  cleans it), so another site's <img>, <script>, <iframe> or fetch() gets 403: from another
  site only a top-level navigation (a followed link) is answered.
* A password when reader listens beyond loopback (`READER_PASSWORD`): the pages then need
  a login, the API a bearer token (the same password). Wrong guesses are throttled per
  client address and overall (429 with Retry-After); sessions are random ids held in
  memory (sessions.py).
  E-reader apps get HTTP Basic with the same password, on /opds and the EPUB downloads
  only, throttled like the rest.
"""

from __future__ import annotations

import base64
import hmac
import math
import re
import secrets
from collections.abc import Mapping
from urllib.parse import quote

from starlette.requests import Request, cookie_parser
from starlette.responses import (
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
)
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..settings import MAX_URL_LENGTH, Settings, is_loopback
from .csrf import CSRF_COOKIE
from .headers import is_api, refusal, with_security_headers
from .sessions import SESSION_COOKIE, Sessions, Throttle, client_key

SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}

# Reachable without logging in. Browsers fetch an app's manifest without cookies.
OPEN_PATHS = ("/login", "/static/", "/manifest.webmanifest")
# sync API: native apps (reader/web/sync/) sign in with app passwords and tokens of their
# own, never the session or the web password, and send no CSRF token; their stored images
# are capability URLs an app's web view loads from another origin (a read, no effect)
SYNC_PATHS = re.compile(r"/accounts/ClientLogin|/reader/api/0/.*|/fever(?:/.*)?|/api/fever\.php|/sync/images/.*")

# Request bodies, counted while they stream. Before login nobody needs more than a login
# form; a logged-in form or JSON body is a URL and a title; only an upload is large.
PRE_LOGIN_BODY_BYTES = 16 * 1024

FORM_BODY_BYTES = 1_000_000

# Uploads, each with its own cap (a Settings field): an OPML file, and a page the
# bookmarklet sent as the browser rendered it (no larger than a page reader would fetch).
UPLOAD_PATHS = {"/feeds/import": "max_upload_bytes", "/save/page": "max_page_bytes"}

# E-reader apps (KOReader, Thorium...) cannot log in with a form and a cookie: on these
# paths, and only these, the password is also accepted as HTTP Basic (any user name).
BASIC_PATHS = re.compile(r"/opds(?:/.*)?|/edition\.epub|/articles/[0-9]+\.epub")

# A request target holds at most a URL plus a title (the bookmarklet's /save?url=&title=).
MAX_TARGET_LENGTH = 4 * MAX_URL_LENGTH

_HOST = re.compile(r"(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<name>[A-Za-z0-9_](?:[A-Za-z0-9_.\-]*[A-Za-z0-9_])?\.?))"
                   r"(?::(?P<port>[0-9]{1,5}))?")


def host_name(host_header: str) -> str | None:
    """The lower-case name or address in a Host header, or None if it is not one."""
    match = _HOST.fullmatch(host_header)
    if match is None:
        return None
    return (match["v6"] or match["name"]).lower().rstrip(".")


# Host headers whose answer _origin keeps.
HOSTS_REMEMBERED = 64


def allowed_hosts(settings: Settings) -> frozenset[str]:
    """The names reader answers to besides loopback ones."""
    names = {h.strip("[]") for h in settings.allowed_hosts}
    if settings.public_url:
        names.add(host_name(settings.public_url.split("://", 1)[1]) or "")
    bind = settings.host.strip("[]").lower()
    wildcard = bind in ("", "0.0.0.0", "::")
    if not wildcard and not is_loopback(bind):
        names.add(bind)
    names.discard("")
    return frozenset(names)


def cross_site(request: Request, origins: frozenset[str] = frozenset()) -> bool:
    """Sec-Fetch-Site decides alone when a browser sends it (same-origin and the
    user-typed "none" pass); older browsers send only Origin, which must then be ours:
    the request's own, or one of `origins` (READER_PUBLIC_URL behind a TLS proxy)."""
    fetch_site = request.headers.get("sec-fetch-site")
    if fetch_site is not None:
        return fetch_site not in ("same-origin", "none")
    origin = request.headers.get("origin")
    return origin is not None and origin != f"{request.url.scheme}://{request.url.netloc}" and origin not in origins


def foreign_subresource(headers: Mapping[str, str]) -> bool:
    """A request another site's page made for something other than a top-level navigation:
    an <img>, <script>, <iframe>, fetch()... Browsers that send Sec-Fetch-Site send
    Sec-Fetch-Mode too; without them (scripts, the CLI, old browsers) nothing is known."""
    site = headers.get("sec-fetch-site")
    mode = headers.get("sec-fetch-mode")
    if site in (None, "same-origin", "none") or mode is None:
        return False
    # An iframe is a navigation too, but not one the person chose (and our pages refuse
    # to be framed anyway): only a document loaded in a tab or window passes.
    return not (mode == "navigate" and headers.get("sec-fetch-dest", "document") == "document")


class _BodyTooLarge(Exception):
    """Raised out of `receive` once a body passed its cap (the 413 is already sent)."""


class Access:
    """One ASGI middleware for headers, hosts, size caps, cross-site checks, the CSRF
    cookie, login, sessions and the password throttle."""

    def __init__(self, app: ASGIApp, settings: Settings):
        self.app = app
        self.settings = settings
        self.password = settings.password or None
        self.hosts = allowed_hosts(settings)
        self.origins = frozenset({settings.public_url} if settings.public_url else ())
        self.sessions = Sessions()
        self.throttle = Throttle()
        self._hosts_seen: dict[str, bool] = {}  # Host header -> whether it names us

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        send = with_security_headers(send, static=scope["path"].startswith("/static/"))
        scope["reader.access"] = self

        async def refuse(status: int, message: str, headers: dict[str, str] | None = None) -> None:
            await refusal(scope, status, message, headers)(scope, receive, send)

        if len(scope.get("raw_path") or scope["path"].encode()) + len(scope["query_string"]) > MAX_TARGET_LENGTH:
            return await refuse(414, f"the request's URL is longer than {MAX_TARGET_LENGTH} characters")
        # The headers this layer reads on every request, looked up in a dict (Starlette's
        # Headers walks the list for each): the first of a repeated header, as Headers has it.
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in reversed(scope["headers"])}
        origin = self._origin(scope, headers.get("host"))
        if origin is None:
            return await refuse(421, self._host_message(headers.get("host", "")))
        scope["reader.origin"] = origin
        sync = SYNC_PATHS.fullmatch(scope["path"]) is not None  # sync API: see SYNC_PATHS
        if foreign_subresource(headers) and not scope["path"].startswith("/sync/images/"):  # sync API
            return await refuse(403, "another site's page cannot load or embed reader's pages")
        if scope["method"] not in SAFE_METHODS and cross_site(Request(scope), self.origins):
            return await refuse(403, "cross-site request refused")

        authenticated = True
        if self.password and not sync:  # sync API: its routes check their own tokens
            client = client_key(scope)  # parsing the address costs a tenth of a kept page's answer: only when needed
            presents_password = (scope["method"] == "POST" and scope["path"] == "/login") or \
                "authorization" in headers
            wait = self.throttle.wait(client) if presents_password else 0.0
            if wait > 0:
                return await refuse(429, f"too many wrong passwords: try again in {math.ceil(wait)} s",
                                    {"retry-after": str(math.ceil(wait))})
            authenticated = self._authenticated(Request(scope), client)

        limit = self._body_limit(scope, authenticated)
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            return await refuse(413, _too_large(limit), {"connection": "close"})

        if self.password:
            if not authenticated and not scope["path"].startswith(OPEN_PATHS):
                response: Response
                if is_api(scope):
                    response = JSONResponse({"error": "authentication required"}, status_code=401,
                                            headers={"www-authenticate": 'Bearer realm="reader"'})
                elif BASIC_PATHS.fullmatch(scope["path"]):
                    # the challenge is what makes an e-reader app ask for the password
                    response = PlainTextResponse("authentication required", status_code=401,
                                                 headers={"www-authenticate": 'Basic realm="reader", charset="UTF-8"'})
                else:
                    target = scope["path"] + ("?" + scope["query_string"].decode() if scope["query_string"] else "")
                    response = RedirectResponse("/login?next=" + quote(target, safe=""), status_code=303)
                return await response(scope, receive, send)
            if scope["method"] == "POST" and scope["path"] == "/login":
                send = self._counting_login(send, client)

        token = cookie_parser(headers["cookie"]).get(CSRF_COOKIE) if "cookie" in headers else None
        fresh = None
        if (not token or len(token) < 20) and not sync:  # sync API: no CSRF cookie
            token = fresh = secrets.token_urlsafe(32)
        scope["reader.csrf"] = token

        started = False
        refused = False

        async def app_send(message: Message) -> None:
            nonlocal started
            if refused:
                return  # the 413 went out: whatever the interrupted handler answers is dropped
            if message["type"] == "http.response.start":
                started = True
                if fresh:
                    cookie = f"{CSRF_COOKIE}={fresh}; Path=/; HttpOnly; SameSite=Strict"
                    message["headers"] = [*message.get("headers", []), (b"set-cookie", cookie.encode())]
            await send(message)

        received = 0

        async def capped_receive() -> Message:
            nonlocal received, refused
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    if not started:
                        refused = True
                        await refusal(scope, 413, _too_large(limit), {"connection": "close"})(scope, receive, send)
                    raise _BodyTooLarge
            return message

        try:
            await self.app(scope, capped_receive, app_send)
        except _BodyTooLarge:
            if not refused:
                raise

    def _origin(self, scope: Scope, host: str | None) -> str | None:
        """The origin a request reached us at (`host`: its Host header), or None if its
        Host is not ours."""
        if host is None:  # HTTP/1.0 without Host: no browser, so no rebinding
            server = scope.get("server") or ("127.0.0.1", self.settings.port)
            bound = f"[{server[0]}]" if ":" in str(server[0]) else str(server[0])
            return f"{scope.get('scheme', 'http')}://{bound}:{server[1]}"
        ours = self._hosts_seen.get(host)
        if ours is None:
            name = host_name(host)
            ours = name is not None and (is_loopback(name) or name in self.hosts)
            # every request asks, nearly always with the same Host or two: parsing an IP
            # address each time was a tenth of the app's time for a ready open (cProfile). Bounded, so
            # that made-up names cost their parse and never memory.
            if len(self._hosts_seen) < HOSTS_REMEMBERED:
                self._hosts_seen[host] = ours
        if not ours:
            return None
        return f"{scope.get('scheme', 'http')}://{host.lower()}"

    def _host_message(self, host: str) -> str:
        shown = host if len(host) <= 100 and host.isprintable() else host[:100].encode("ascii", "replace").decode()
        return (f"reader does not answer to the host name {shown!r}. If you reach reader by this name, add it to "
                "READER_ALLOWED_HOSTS (or set READER_PUBLIC_URL) and restart it.")

    def _body_limit(self, scope: Scope, authenticated: bool) -> int:
        if not authenticated or scope["path"].startswith(OPEN_PATHS):
            return PRE_LOGIN_BODY_BYTES
        cap = UPLOAD_PATHS.get(scope["path"])
        if cap is not None:
            limit: int = getattr(self.settings, cap)
            return limit
        return FORM_BODY_BYTES

    def _authenticated(self, request: Request, client: str) -> bool:
        assert self.password is not None
        if self.sessions.valid(request.cookies.get(SESSION_COOKIE), self.password):
            return True
        authorization = request.headers.get("authorization")
        if authorization is None:
            return False
        scheme, _, credential = authorization.partition(" ")
        # headers arrive as latin-1 text, so any byte sequence encodes back; compare bytes
        if scheme.lower() == "bearer" and hmac.compare_digest(credential.encode("utf-8"),
                                                              self.password.encode("utf-8", "surrogatepass")):
            return True
        if scheme.lower() == "basic":
            if not BASIC_PATHS.fullmatch(request.url.path):
                # A browser that answered the challenge of /opds sends Basic to every path
                # of the site from then on: elsewhere it is no try at the password, so it
                # neither logs in nor counts as a failure.
                return False
            given = _basic_password(credential)
            if given is not None and hmac.compare_digest(given, self.password.encode("utf-8", "surrogatepass")):
                return True
        self.throttle.failed(client)
        return False

    def _counting_login(self, send: Send, client: str) -> Send:
        """The login view answers 401 for a wrong password and 303 for a right one."""
        async def sender(message: Message) -> None:
            if message["type"] == "http.response.start":
                if message["status"] == 401:
                    self.throttle.failed(client)
                elif message["status"] == 303:
                    self.throttle.succeeded(client)
            await send(message)

        return sender


def _basic_password(credential: str) -> bytes | None:
    """The password part of an HTTP Basic credential (the user name is ignored), as bytes:
    clients disagree on its encoding, so it is compared as the UTF-8 they mostly send."""
    try:
        decoded = base64.b64decode(credential.strip().encode("latin-1"), validate=True)
    except (ValueError, UnicodeEncodeError):
        return None
    _, colon, password = decoded.partition(b":")
    return password if colon else None


def _too_large(limit: int) -> str:
    return f"the request body is larger than this route accepts ({limit:,} bytes)"


def access_of(request: Request) -> Access:
    access: Access = request.scope["reader.access"]
    return access


def start_session(request: Request) -> str:
    """A new session id for a browser that just gave the right password."""
    access = access_of(request)
    assert access.password is not None
    return access.sessions.start(access.password)


def end_session(request: Request) -> None:
    access_of(request).sessions.end(request.cookies.get(SESSION_COOKIE))


def from_another_site(request: Request) -> bool:
    """Whether another site's page made this request (a GET included: a navigation it
    started passes the access layer, as the person may have followed a link)."""
    return cross_site(request, access_of(request).origins)


def origin_of(request: Request) -> str:
    """The origin browsers reach reader at: READER_PUBLIC_URL if set, else the checked Host."""
    access = access_of(request)
    return access.settings.public_url or request.scope["reader.origin"]
