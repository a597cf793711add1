"""Bounded decompression: never more than the cap inflated, however the body is
compressed or how many times."""

from __future__ import annotations

import zlib

from .errors import FetchError

class _TooLarge(Exception):
    pass


class _Inflater:
    """Decodes a Content-Encoding (gzip, deflate, or a chain of them) while never
    producing more than `limit` bytes at any stage: each step inflates at most what is
    left of the cap, and leftover input after that means the body is too large."""

    def __init__(self, header: str, limit: int):
        encodings = [e.strip().lower() for e in header.split(",") if e.strip()]
        encodings = [e for e in encodings if e != "identity"]
        for encoding in encodings:
            if encoding not in ("gzip", "x-gzip", "deflate"):
                raise FetchError(f"the response could not be decoded (unsupported encoding {encoding[:40]!r})")
        # Applied in order, so decoded in reverse.
        self._stages = [_Stage(e) for e in reversed(encodings)]
        self._limit = limit

    def feed(self, data: bytes) -> bytes:
        for stage in self._stages:
            data = stage.feed(data, self._limit)
        return data

    def flush(self) -> bytes:
        data = b""
        for stage in self._stages:
            data = stage.feed(data, self._limit) + stage.flush(self._limit)
        return data


class _Stage:
    def __init__(self, encoding: str):
        self._gzip = encoding != "deflate"
        self._decoder = zlib.decompressobj(zlib.MAX_WBITS | 16 if self._gzip else zlib.MAX_WBITS)
        self._started = False  # deflate: zlib-wrapped or raw is known after the first bytes
        self._total = 0

    def feed(self, data: bytes, limit: int) -> bytes:
        if not data:
            return b""
        try:
            try:
                out = self._decoder.decompress(data, limit + 1 - self._total)
            except zlib.error:
                if self._gzip or self._started:
                    raise
                self._decoder = zlib.decompressobj(-zlib.MAX_WBITS)  # raw deflate, as some servers send
                out = self._decoder.decompress(data, limit + 1 - self._total)
        except zlib.error:
            raise FetchError("the response could not be decoded (bad compression)") from None
        self._started = True
        self._total += len(out)
        if self._total > limit or self._decoder.unconsumed_tail:
            raise _TooLarge
        return out

    def flush(self, limit: int) -> bytes:
        try:
            out = self._decoder.flush()
        except zlib.error:
            raise FetchError("the response could not be decoded (bad compression)") from None
        self._total += len(out)
        if self._total > limit:
            raise _TooLarge
        return out
