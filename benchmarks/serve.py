"""reader's own app under uvicorn with the settings `reader serve` uses, plus one extra
path, /floor, answered by an outer ASGI wrapper with a prepared string (the bytes of
the file BENCH_FLOOR_FILE, read on first use; /floor/NAME: the file NAME beside it). The
floor is what the same server costs when the handler does nothing: open_ready compares
GET /articles/{id} against it, list_pages each list page against its own.

    python -m benchmarks.serve      # settings from READER_* like `reader serve`
"""

from __future__ import annotations

import os
from pathlib import Path

import uvicorn
from starlette.responses import HTMLResponse

from reader.web.server import server_options
from reader.web.app import create_app
from reader.settings import Settings


class WithFloor:
    """/floor answers the floor file; /floor/NAME the file NAME beside it (a benchmark with
    several pages gives each its own floor). Each is read once, on first use."""

    def __init__(self, app, floor_file: str | None):
        self.app = app
        self.floor_file = floor_file
        self.floors: dict[str, bytes] = {}

    def _floor(self, path: str) -> bytes:
        if path not in self.floors:
            if not self.floor_file:
                self.floors[path] = b"floor"
            elif path == "/floor":
                self.floors[path] = Path(self.floor_file).read_bytes()
            else:
                self.floors[path] = (Path(self.floor_file).parent / Path(path).name).read_bytes()
        return self.floors[path]

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and (scope["path"] == "/floor" or scope["path"].startswith("/floor/")):
            return await HTMLResponse(self._floor(scope["path"]))(scope, receive, send)
        return await self.app(scope, receive, send)


def main() -> None:
    settings = Settings.from_env()
    app = WithFloor(create_app(settings), os.environ.get("BENCH_FLOOR_FILE"))
    # exactly the arguments reader.cli._serve passes (access log included)
    uvicorn.run(app, log_level="info", **server_options(settings))


if __name__ == "__main__":
    main()
