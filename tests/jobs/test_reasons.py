"""No failure reason is ever empty: a site that resets the connection leaves a reason a
person can read, not "fetch failed:  (tried 3 times)". A real socket server that answers
every connection with a TCP reset."""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Iterator

import pytest

from ..helpers import app_client


@pytest.fixture
def resetting() -> Iterator[str]:
    """A URL whose server reads the request, then resets the connection (SO_LINGER 0)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                return
            try:
                conn.settimeout(5)
                conn.recv(65536)
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            except OSError:
                pass
            finally:
                conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}/page.html"
    stop.set()
    # close() alone leaves accept() blocked in the thread (the join then waited its 5 s out);
    # shutdown() makes it return at once.
    try:
        server.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # not connected: some kernels refuse shutdown() on a listening socket
    server.close()
    thread.join(5)
    assert not thread.is_alive(), "the resetting server did not stop"


async def test_a_connection_reset_leaves_a_reason(settings, resetting):
    async with app_client(settings.replace(serve_workers=0, extract_processes=0)) as client:
        saved = await client.post("/api/articles", json={"url": resetting})
        assert saved.status_code in (200, 201), saved.text
        article_id = saved.json()["id"]
        opened = await client.get(f"/api/articles/{article_id}/content")
        assert opened.status_code == 502
        reason = opened.json()["error"]
        assert "fetch failed: (" not in reason and "fetch failed:  " not in reason
        assert "reset" in reason or "closed the connection" in reason, reason
        article = (await client.get(f"/api/articles/{article_id}")).json()
        assert article["state"] == "failed" and article["error"] == reason
