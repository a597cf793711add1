"""The sample site, served from the files shipped in the package: the first run works
with no network."""

from __future__ import annotations

import httpx

from . import SAMPLE_HOST, SITE_DIR


class SampleTransport(httpx.AsyncBaseTransport):
    """Serves https://samples.reader.invalid/ from the files shipped in reader/samples,
    so the first run works with no network. `.invalid` never resolves, so nothing real
    can be shadowed."""

    _TYPES = {".xml": "application/rss+xml", ".html": "text/html; charset=utf-8", ".json": "application/feed+json",
              ".png": "image/png"}

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        path = (SITE_DIR / request.url.path.lstrip("/")).resolve()
        if not path.is_relative_to(SITE_DIR.resolve()) or not path.is_file():
            return httpx.Response(404, text="not found", request=request)
        data = path.read_bytes()
        return httpx.Response(
            200,
            # a stream, not content=: fetch() reads raw bytes, which a pre-read body has not
            stream=httpx.ByteStream(data),
            headers={"content-type": self._TYPES.get(path.suffix, "application/octet-stream"),
                     "content-length": str(len(data))},
            request=request,
        )


def sample_sites() -> dict[str, httpx.AsyncBaseTransport]:
    """The sites the app's HTTP client answers in-process: the sample site alone."""
    return {SAMPLE_HOST: SampleTransport()}
