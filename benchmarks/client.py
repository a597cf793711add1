"""The lean load client every latency benchmark uses: raw sockets speaking just enough
HTTP/1.1 (keep-alive, Content-Length bodies) to time a server, not a client.

A full client (httpx costs about 1 ms a request) adds the same fixed time to both sides
of a ratio and pulls it towards 1, so a ratio measured through it says little about the
server. Here a request is one prepared byte string and one `sendall`; the response is
read until its headers and Content-Length bytes are in. Two or more targets are always
timed interleaved (A, B, A, B, ...) so that both see the same noise from the machine.
"""

from __future__ import annotations

import asyncio
import socket
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

_HEADER_END = b"\r\n\r\n"


class ClientError(RuntimeError):
    """A response the lean client cannot time (or one the benchmark did not expect)."""


def _request(host: str, path: str, headers: dict[str, str]) -> bytes:
    lines = [f"GET {path} HTTP/1.1", f"Host: {host}", *(f"{k}: {v}" for k, v in headers.items()), "", ""]
    return "\r\n".join(lines).encode("latin-1")


def _parse_head(head: bytes) -> tuple[int, dict[str, str]]:
    status_line, *lines = head.decode("latin-1").split("\r\n")
    try:
        status = int(status_line.split(" ", 2)[1])
    except (IndexError, ValueError):
        raise ClientError(f"not an HTTP status line: {status_line[:80]!r}") from None
    headers: dict[str, str] = {}
    for line in lines:
        name, _, value = line.partition(":")
        name = name.strip().lower()
        # Set-Cookie may repeat: keep the first, which is all a benchmark needs
        headers.setdefault(name, value.strip())
    if "chunked" in headers.get("transfer-encoding", ""):
        raise ClientError("a chunked response: the lean client times Content-Length bodies only")
    return status, headers


def _body_length(status: int, headers: dict[str, str]) -> int:
    if status in (204, 304) or 100 <= status < 200:
        return 0
    try:
        return int(headers["content-length"])
    except (KeyError, ValueError):
        raise ClientError(f"HTTP {status} without a Content-Length") from None


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: bytes
    seconds: float


@dataclass
class Connection:
    """One keep-alive connection to `base` (http://host:port) on a blocking socket.
    `headers` go with every request (a browser's cookie, for instance)."""

    base: str
    headers: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        parts = urlsplit(self.base)
        if parts.scheme != "http" or not parts.hostname or not parts.port:
            raise ClientError(f"the lean client needs http://host:port, not {self.base!r}")
        self.host = f"{parts.hostname}:{parts.port}"
        self._address = (parts.hostname, parts.port)
        self._sock: socket.socket | None = None
        self._buffer = b""
        self._prepared: dict[tuple[str, tuple[tuple[str, str], ...]], bytes] = {}

    def _connect(self) -> socket.socket:
        sock = socket.create_connection(self._address, timeout=120)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._buffer = b""
        return sock

    def get(self, path: str, extra: dict[str, str] | None = None) -> Response:
        """One GET, timed from the first byte sent to the last byte of the body read."""
        key = (path, tuple(sorted((extra or {}).items())))
        request = self._prepared.get(key)
        if request is None:
            request = self._prepared[key] = _request(self.host, path, {**self.headers, **(extra or {})})
        fresh = self._sock is None
        if fresh:
            self._sock = self._connect()
        sock = self._sock
        started = time.perf_counter()
        try:
            sock.sendall(request)
            buffer = self._buffer
            while (end := buffer.find(_HEADER_END)) < 0:
                buffer += self._recv(sock)
        except (ClientError, OSError):
            if fresh or self._buffer:
                raise
            # the server closed a connection left idle past its keep-alive timeout, as a
            # browser finds out: open a new one and ask again (timed from the new start)
            self.close()
            return self.get(path, extra)
        status, headers = _parse_head(buffer[:end])
        need = end + 4 + _body_length(status, headers)
        while len(buffer) < need:
            buffer += self._recv(sock)
        seconds = time.perf_counter() - started
        body, self._buffer = buffer[end + 4:need], buffer[need:]
        if headers.get("connection", "").lower() == "close":
            self.close()
        return Response(status, headers, body, seconds)

    def _recv(self, sock: socket.socket) -> bytes:
        chunk = sock.recv(262144)
        if not chunk:
            self.close()
            raise ClientError("the server closed the connection mid-response")
        return chunk

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def __enter__(self) -> "Connection":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def expect(response: Response, status: int, what: str) -> Response:
    if response.status != status:
        raise ClientError(f"GET {what}: HTTP {response.status}, expected {status}: {response.body[:200]!r}")
    return response


def interleaved(targets: dict[str, tuple[Connection, str]], count: int, *, warmup: int = 20,
                status: int | dict[str, int] = 200,
                extra: dict[str, dict[str, str]] | None = None) -> dict[str, list[float]]:
    """`count` timed GETs of every target, one target after the other (A, B, A, B, ...),
    each target on its own keep-alive connection, after `warmup` untimed rounds.
    `extra` adds request headers per target name. Any other status than `status` (one for
    all, or by target name) raises."""
    extra = extra or {}
    wanted = status if isinstance(status, dict) else {name: status for name in targets}
    names = list(targets)
    out: dict[str, list[float]] = {name: [] for name in names}
    for round_ in range(warmup + count):
        for name in names:
            conn, path = targets[name]
            r = expect(conn.get(path, extra.get(name)), wanted.get(name, 200), f"{conn.base}{path}")
            if round_ >= warmup:
                out[name].append(r.seconds)
    return out


async def _async_get(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes,
                     buffer: bytearray) -> tuple[int, float]:
    started = time.perf_counter()
    writer.write(request)
    while (end := buffer.find(_HEADER_END)) < 0:
        chunk = await reader.read(262144)
        if not chunk:
            raise ClientError("the server closed the connection mid-response")
        buffer += chunk
    status, headers = _parse_head(bytes(buffer[:end]))
    need = end + 4 + _body_length(status, headers)
    while len(buffer) < need:
        chunk = await reader.read(262144)
        if not chunk:
            raise ClientError("the server closed the connection mid-response")
        buffer += chunk
    del buffer[:need]
    return status, time.perf_counter() - started


async def closed_loop(url: str, count: int, concurrency: int, *,
                      headers: dict[str, str] | None = None) -> list[float]:
    """`count` timed GETs of one URL by `concurrency` keep-alive connections at once, each
    sending its next request as soon as its last one is answered. Connections are opened
    before the clock starts. Anything but 200 raises."""
    parts = urlsplit(url)
    host = f"{parts.hostname}:{parts.port}"
    request = _request(host, (parts.path or "/") + (f"?{parts.query}" if parts.query else ""), headers or {})
    streams = [await asyncio.open_connection(parts.hostname, parts.port) for _ in range(concurrency)]
    for _, writer in streams:
        writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    out: list[float] = []
    left = [count]

    async def one(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        buffer = bytearray()
        while left[0] > 0:
            left[0] -= 1
            status, seconds = await _async_get(reader, writer, request, buffer)
            if status != 200:
                raise ClientError(f"GET {url}: HTTP {status}")
            out.append(seconds)

    try:
        await asyncio.gather(*(one(r, w) for r, w in streams))
    finally:
        for _, writer in streams:
            writer.close()
    return out


def closed_loop_rounds(urls: dict[str, str], rounds: int, per_round: int, concurrency: int, *,
                       headers: dict[str, str] | None = None) -> dict[str, list[float]]:
    """Closed-loop load on one URL at a time, the URLs taking turns round by round (the
    order reversed every other round), so each is measured under its own load and all
    of them under the same machine noise."""
    out: dict[str, list[float]] = {name: [] for name in urls}

    async def main() -> None:
        items = list(urls.items())
        for name, url in items:  # warm-up, untimed
            await closed_loop(url, concurrency * 4, concurrency, headers=headers)
        for r in range(rounds):
            for name, url in (items if r % 2 == 0 else items[::-1]):
                out[name] += await closed_loop(url, per_round, concurrency, headers=headers)

    asyncio.run(main())
    return out


async def get_once(url: str, *, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    """One GET on a connection of its own (closed after): for storms, where no request
    should wait for another's connection."""
    parts = urlsplit(url)
    request = _request(f"{parts.hostname}:{parts.port}",
                       (parts.path or "/") + (f"?{parts.query}" if parts.query else ""),
                       {**(headers or {}), "Connection": "close"})
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    try:
        writer.write(request)
        buffer = bytearray()
        while (end := buffer.find(_HEADER_END)) < 0:
            chunk = await reader.read(262144)
            if not chunk:
                raise ClientError("the server closed the connection mid-response")
            buffer += chunk
        status, head = _parse_head(bytes(buffer[:end]))
        need = end + 4 + _body_length(status, head)
        while len(buffer) < need:
            chunk = await reader.read(262144)
            if not chunk:
                raise ClientError("the server closed the connection mid-response")
            buffer += chunk
        return status, bytes(buffer[end + 4:need])
    finally:
        writer.close()
