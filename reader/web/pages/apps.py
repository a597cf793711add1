"""The native apps page: the app passwords feed apps sign in with (the Google Reader API
and Fever), made, listed and revoked as `reader app-password` does. A new password is
shown once, in the answer to the form that made it (never stored, never in a link)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from ...core import sync
from ...errors import ReaderError
from ..csrf import checked_form
from ..render import nav, render
from ..requests import reader_of


async def _page(request: Request, status: int = 200, **context: object) -> Response:
    reader = reader_of(request)
    return render(request, "apps.html", status=status, passwords=await sync.app_passwords(reader),
                  origin=str(request.base_url).rstrip("/"), **context, **await nav(request))


async def apps_page(request: Request) -> Response:
    return await _page(request)


async def add_app_password(request: Request) -> Response:
    """Make one: the answer shows the password this once (the page is never cached)."""
    form = await checked_form(request)
    try:
        made, password = await sync.add_app_password(reader_of(request), str(form.get("name") or "").strip())
    except ReaderError as exc:
        return await _page(request, status=exc.status, message=exc.message, name=form.get("name") or "")
    return await _page(request, made=made, password=password)


async def revoke_app_password(request: Request) -> Response:
    await checked_form(request)
    await sync.revoke_app_password(reader_of(request), request.path_params["id"])
    return RedirectResponse("/apps", status_code=303)
