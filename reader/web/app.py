"""The application: `create_app(settings)` and `running(settings)`, the one place that
owns long-lived resources (database, HTTP client, extraction pool, worker, refresher)
for the web app and the CLI alike."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from . import api, sync, views
from .access import Access
from ..jobs.cleaning import Cleaner, worker_name
from ..core import Reader
from ..errors import ReaderError
from ..pool import CpuPool
from ..jobs.refresher import refresh_periodically
from ..fetch import make_client
from ..resources import static_dir
from ..fetch.guard import Resolver
from ..settings import Settings
from ..store import Store
from ..jobs.worker import Worker

log = logging.getLogger(__name__)


@contextlib.asynccontextmanager
async def running(
    settings: Settings, *, role: str = "serve", worker: bool = True, refresher: bool = True,
    concurrency: int = 1, resolver: Resolver | None = None,
) -> AsyncIterator[Reader]:
    """Open everything, start the background work, and on exit stop it in order:
    stop pulling, let in-flight extractions finish (bounded), then close."""
    store = await Store.open(settings.db)
    try:
        await store.close_expired_claims()
    except Exception:  # a database that cannot be written is reported by what needs it
        log.exception("closing the runs of expired claims failed")
    store.feed_items = max(1, settings.feed_items)
    store.raw_pages_budget = max(0, settings.raw_pages_bytes)
    client = make_client(allow_private=settings.allow_private_urls, deadline=settings.fetch_timeout,
                         resolver=resolver)
    pool = CpuPool(settings.extract_processes, warm=worker or refresher)
    cleaner = Cleaner(store, client, pool, settings, worker_name(role))
    the_worker = (
        Worker(store, cleaner, interval=settings.worker_interval, claim_ttl=settings.claim_ttl,
               concurrency=concurrency)
        if worker else None
    )
    background: list[asyncio.Task[None]] = []
    reader: Reader | None = None
    try:
        if the_worker is not None:
            background.append(asyncio.create_task(the_worker.run(), name="worker"))
        if refresher and settings.refresh_interval > 0:
            background.append(asyncio.create_task(
                refresh_periodically(store, client, pool, interval=settings.refresh_interval,
                                     max_bytes=settings.max_page_bytes, deadline=settings.fetch_timeout),
                name="refresher",
            ))
        reader = Reader(settings, store, client, pool, cleaner, the_worker)
        yield reader
    finally:
        if reader is not None:
            await reader.finish_imports()
        if the_worker is not None:
            the_worker.stop()
        await cleaner.drain(settings.shutdown_grace)
        for task in background:
            task.cancel()
        await asyncio.gather(*background, return_exceptions=True)
        await client.aclose()
        await asyncio.to_thread(pool.close)
        await store.close()


def stop_taking_work(app: Starlette) -> None:
    """SIGTERM, at once: no new work (the worker stops pulling, no open starts an
    extraction), and extractions in progress get their grace from now, not from when
    the server has waited out its open connections, which may be pending opens."""
    reader: Reader | None = getattr(app.state, "reader", None)
    if reader is None or getattr(app.state, "draining", None) is not None:
        return
    if reader.worker is not None:
        reader.worker.stop()
    app.state.draining = asyncio.create_task(reader.cleaner.drain(reader.settings.shutdown_grace),
                                             name="drain")


class ReaderApp(Starlette):
    """Starlette with the access layer outermost, outside even the handler that turns a
    crash into a 500, so that every answer, a 500 included, carries the security headers
    and no request reaches any layer before its Host and size are checked. Right inside
    it, a ready article's page kept from before and still current is answered
    (`views.kept_page`) before Starlette's own layers and router, which cost as much as
    the answer itself; anything else goes the whole way."""

    def __init__(self, settings: Settings, **kwargs: Any) -> None:
        self.access_settings = settings
        super().__init__(**kwargs)

    def build_middleware_stack(self) -> ASGIApp:
        return Access(_kept_pages_first(super().build_middleware_stack()), self.access_settings)


def _kept_pages_first(app: ASGIApp) -> ASGIApp:
    async def kept_first(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            kept = await views.kept_page(scope)
            if kept is not None:
                return await kept(scope, receive, send)
        await app(scope, receive, send)

    return kept_first


async def _reader_error(request: Request, exc: Exception) -> Response:
    """The one place a ReaderError (or Starlette's own 404/405) meets HTTP: JSON under
    /api/, the error page everywhere else."""
    if isinstance(exc, HTTPException):
        error = ReaderError(str(exc.detail))
        error.status = exc.status_code
        headers = exc.headers
    else:
        assert isinstance(exc, ReaderError)
        error, headers = exc, None
    response = api.error_response(error) if request.url.path.startswith("/api/") else views.error_response(request, error)
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
        routes=[
            *views.routes,
            *api.routes,
            *sync.routes,
            Mount("/static", StaticFiles(directory=static_dir()), name="static"),
        ],
        lifespan=lifespan,
        exception_handlers={ReaderError: _reader_error, HTTPException: _reader_error},
    )
    return app
