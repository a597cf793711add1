"""The person's session: login and logout (only with READER_PASSWORD set), and the
presentation choices kept in cookies (list or cards, the first-run sentence dismissed)."""

from __future__ import annotations

import hmac

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from ..access import end_session, start_session
from ..csrf import checked_form
from ..forms import back_to
from ..render import render
from ..requests import reader_of
from ..sessions import SESSION_COOKIE


async def login_page(request: Request) -> Response:
    return render(request, "login.html", next=back_to(request.query_params))


async def login(request: Request) -> Response:
    """Only reachable with READER_PASSWORD set (without it, nobody is ever sent here)."""
    password = reader_of(request).settings.password
    form = await checked_form(request)
    given = str(form.get("password") or "")
    if not password or not hmac.compare_digest(given.encode("utf-8", "replace"), password.encode()):
        return render(request, "login.html", status=401, next=back_to(form), message="wrong password")
    response = RedirectResponse(back_to(form), status_code=303)
    response.set_cookie(SESSION_COOKIE, start_session(request), httponly=True, samesite="lax",
                        secure=request.url.scheme == "https", max_age=400 * 86400)
    return response


# What logging out clears in the browser, besides the session cookie (deleted below):
#   "storage"  the origin's Cache Storage (the service worker's saved pages and images, and
#              its shell), IndexedDB (static/offline.js's outbox of offline taps and the
#              reading positions), local and session storage; and it unregisters the
#              service worker: the page it controls keeps it until it navigates, and the
#              next page registers a fresh one, which saves nothing until a login.
#   "cache"    the HTTP cache: a page or an image kept there (Back, a reload offline).
# Cookies are not named: "cookies" would also drop the CSRF cookie and the presentation
# choices, which are nobody's secret. Browsers honour the header only in a secure context
# (https, or loopback), which is also the only place a service worker runs; the page's
# message to the worker and the worker's own rule (static/sw.js: the login page seen live
# drops the saved copies) hold where it is not honoured.
CLEAR_ON_LOGOUT = '"cache", "storage"'


async def logout(request: Request) -> Response:
    """Ends the session, and with it everything saved on the device for reading offline:
    whoever uses this browser next cannot read the library with the network off."""
    await checked_form(request)
    end_session(request)
    response = RedirectResponse("/login", status_code=303, headers={"Clear-Site-Data": CLEAR_ON_LOGOUT})
    response.delete_cookie(SESSION_COOKIE)
    return response


# Cookies rather than localStorage so the server renders the chosen layout in the first
# paint and the choice works without JavaScript. Only these values are ever set.
PREFS = {"view": ("list", "cards"), "intro": ("off",)}


async def set_pref(request: Request) -> Response:
    form = await checked_form(request)
    response = RedirectResponse(back_to(form), status_code=303)
    for name, allowed in PREFS.items():
        value = str(form.get(name) or "")
        if value in allowed:
            response.set_cookie(f"reader_{name}", value, max_age=400 * 86400, samesite="lax", path="/")
    return response
