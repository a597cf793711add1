"""The wire: what `reader serve` tells uvicorn. A subclass of uvicorn's H11Protocol adds a
deadline for each request's headers, reader's own limit on connections and requests
(whose 503 carries the security headers), and those headers on the 400 for a request
h11 cannot parse. It reaches into uvicorn's internals (its attributes connections,
tasks, cycle, transport and send_400_response), so pyproject pins uvicorn's minor
version, and tests/web/test_access_limits.py fails on an upgrade that changes them."""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from ..settings import Settings
from .headers import SECURITY_HEADERS, refusal, with_security_headers

# Connections (and so requests) served at once; past it reader answers 503 at once
# rather than holding more sockets, tasks and memory. One person's browser needs a few.
LIMIT_CONCURRENCY = 200

KEEP_ALIVE_TIMEOUT = 5  # seconds an idle kept-alive connection stays open

BUSY = "reader is busy: too many requests at once; try again in a moment"


def _busy_app(app: ASGIApp, connections: set[Any], tasks: set[Any], limit: int) -> ASGIApp:
    """`app`, answering 503 once `limit` connections are open or `limit` requests run.

    uvicorn's own limit_concurrency answers with an app of its own that runs outside
    every middleware, so its 503 carried none of the security headers. This is the same
    rule (uvicorn's shared sets of connections and of running requests), kept here so the
    503 is reader's: the headers every answer carries, JSON on the API, Retry-After."""

    async def limited(scope: Scope, receive: Receive, send: Send) -> None:
        # the request asking is already counted among the tasks (uvicorn adds it before
        # it runs) and its connection among the connections
        if scope["type"] == "http" and (len(connections) >= limit or len(tasks) > limit):
            busy = refusal(scope, 503, BUSY, {"retry-after": "1", "connection": "close"})
            return await busy(scope, receive, with_security_headers(send))
        return await app(scope, receive, send)

    return limited


def _head(status: int, reason: bytes, headers: list[tuple[bytes, bytes]], body: bytes) -> bytes:
    lines = [b"HTTP/1.1 %d %s" % (status, reason), *(name + b": " + value for name, value in headers),
             b"content-length: %d" % len(body), b"", b""]
    return b"\r\n".join(lines) + body


def header_deadline_protocol(timeout: float, limit: int = LIMIT_CONCURRENCY) -> type:
    """uvicorn's HTTP protocol, plus a deadline for each request's headers, a limit on
    connections and requests answered by reader, and the security headers on the 400
    uvicorn gives a request it cannot parse.

    uvicorn arms no timer on a new connection, and its keep-alive timer is cancelled by
    any byte received, so a client trickling a header a byte at a time holds its
    connection forever (1,500 such connections were all held). Here each connection must
    complete a request's head within `timeout` seconds of connecting or of its previous
    response; otherwise it is closed. A request whose head arrived is never cut off."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class HeaderDeadline(H11Protocol):
        _head_timer = None

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.app = _busy_app(self.app, self.connections, self.tasks, limit)

        def _arm(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
            self._head_timer = self.loop.call_later(timeout, self._head_overdue, self.cycle)

        def _head_overdue(self, cycle_then: Any) -> None:
            waiting_for_head = self.cycle is cycle_then and (cycle_then is None or cycle_then.response_complete)
            if waiting_for_head and not self.transport.is_closing():
                self.transport.close()

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
            super().connection_lost(exc)

        def send_400_response(self, msg: str) -> None:
            # A request h11 cannot parse never reaches an app, so the middleware cannot add
            # the headers: the answer is written here, as uvicorn writes its own (the
            # parser's state is broken, so the bytes go straight out and the connection
            # closes), with them added.
            headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"connection", b"close"),
                       *SECURITY_HEADERS]
            self.transport.write(_head(400, b"Bad Request", headers, msg.encode("ascii", "replace")))
            self.transport.close()

    return HeaderDeadline


def server_options(settings: Settings) -> dict[str, Any]:
    """The keyword arguments `reader serve` gives uvicorn (tests serve with the same)."""
    return {
        "host": settings.host, "port": settings.port,
        # the protocol keeps LIMIT_CONCURRENCY itself (uvicorn's limit_concurrency is left
        # unset: its 503 would bypass the headers)
        "http": header_deadline_protocol(settings.header_timeout),
        "timeout_keep_alive": KEEP_ALIVE_TIMEOUT,
        # Opens still waiting are answered within the grace (their text, or 503 once
        # the extraction is cut off), so this bounds only connections that hang.
        "timeout_graceful_shutdown": int(settings.shutdown_grace) + 3,
    }
