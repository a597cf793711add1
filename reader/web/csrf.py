"""No cross-site forms: every form the pages send carries a CSRF token (double submit: a
SameSite=Strict cookie, set by the access middleware, and the same value in the form or
the X-CSRF-Token header). The JSON API relies on the access middleware's cross-site
check alone, so scripts and the CLI use it without a token."""

from __future__ import annotations

import hmac

from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.requests import Request

CSRF_COOKIE = "reader_csrf"

CSRF_FIELD = "csrf"

CSRF_HEADER = "x-csrf-token"


async def checked_form(request: Request) -> FormData:
    """The form of a state-changing page request, once its CSRF token has been checked."""
    form = await request.form()
    sent = str(form.get(CSRF_FIELD) or request.headers.get(CSRF_HEADER) or "")
    cookie = request.cookies.get(CSRF_COOKIE, "")
    if not cookie or not hmac.compare_digest(sent.encode("utf-8", "surrogatepass"), cookie.encode()):
        await form.close()  # uploaded files are spooled to disk: let them go now
        raise HTTPException(403, "this form has expired or came from another site: reload the page and try again")
    return form


def check_token(request: Request) -> None:
    """A state-changing request whose body is not a form (a page the bookmarklet sent):
    its CSRF token must come in the X-CSRF-Token header, matching the cookie."""
    sent = request.headers.get(CSRF_HEADER, "")
    cookie = request.cookies.get(CSRF_COOKIE, "")
    if not cookie or not hmac.compare_digest(sent.encode("utf-8", "surrogatepass"), cookie.encode()):
        raise HTTPException(403, "this request has expired or came from another site: reload the page and try again")
