"""The application: `create_app(settings)`, whose lifespan enters the core's
`running(settings)` (reader/core/running.py) and keeps the Reader it yields in the app's
state for every request."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from ..core import Reader, Resolver, running
from ..errors import ReaderError
from ..settings import Settings
from .access import Access
from .kept import kept_page
from .render import error_page
from .routes import routes

log = logging.getLogger(__name__)


def stop_taking_work(app: Starlette) -> None:
    """SIGTERM, at once: no new work (the worker stops pulling, no open starts an
    extraction), and extractions in progress get their grace from now, not from when
    the server has waited out its open connections, which may be pending opens."""
    reader: Reader | None = getattr(app.state, "reader", None)
    if reader is None or getattr(app.state, "draining", None) is not None:
        return
    reader.stop_taking_work()
    app.state.draining = asyncio.create_task(reader.drain(), name="drain")


class ReaderApp(Starlette):
    """Starlette with the access layer outermost, outside even the handler that turns a
    crash into a 500, so that every answer, a 500 included, carries the security headers
    and no request reaches any layer before its Host and size are checked. Right inside
    it, a ready article's page kept from before and still current is answered
    (`kept.kept_page`) before Starlette's own layers and router, which cost as much as
    the answer itself; anything else goes the whole way."""

    def __init__(self, settings: Settings, **kwargs: Any) -> None:
        self.access_settings = settings
        super().__init__(**kwargs)

    def build_middleware_stack(self) -> ASGIApp:
        return Access(_kept_pages_first(super().build_middleware_stack()), self.access_settings)


def _kept_pages_first(app: ASGIApp) -> ASGIApp:
    async def kept_first(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            kept = await kept_page(scope)
            if kept is not None:
                return await kept(scope, receive, send)
        await app(scope, receive, send)

    return kept_first


async def _reader_error(request: Request, exc: Exception) -> Response:
    """The one place a ReaderError (or Starlette's own 404/405) meets HTTP: JSON
    {"error"} under /api/, the error page everywhere else, with the error's status."""
    if isinstance(exc, HTTPException):
        error = ReaderError(str(exc.detail), status=exc.status_code)
        headers = exc.headers
    else:
        assert isinstance(exc, ReaderError)
        error, headers = exc, None
    response: Response
    if request.url.path.startswith("/api/"):
        response = JSONResponse({"error": error.message}, status_code=error.status)
    else:
        response = error_page(request, error.status, error.message)
    if headers:
        response.headers.update(headers)
    if error.retry_after is not None:
        response.headers["Retry-After"] = str(error.retry_after)
    return response


def create_app(settings: Settings, *, resolver: Resolver | None = None) -> Starlette:
    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with running(settings, resolver=resolver, worker=settings.serve_workers > 0,
                           concurrency=settings.serve_workers) as reader:
            app.state.reader = reader
            try:
                yield
            finally:
                # A stop asked for by a signal started draining already: let it end here,
                # not be cut off with the loop.
                draining: asyncio.Task[None] | None = getattr(app.state, "draining", None)
                if draining is not None:
                    await asyncio.gather(draining, return_exceptions=True)

    app = ReaderApp(
        settings,
        routes=routes,
        lifespan=lifespan,
        exception_handlers={ReaderError: _reader_error, HTTPException: _reader_error},
    )
    return app
