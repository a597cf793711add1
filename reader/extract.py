"""Turning a page into reading material: fetch it, then extract and clean its main text.

`extract_article` is the one extraction function: the worker, a direct open and the
CLI all reach it through `cleaning.Cleaner`. The CPU part, `clean_page`, is a plain
function of bytes, run in a process pool (`CpuPool`) so the event loop keeps serving
pages while trafilatura works.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import multiprocessing
import re
from typing import Any, Callable, TypeVar

import httpx

from .fetch import FetchError, fetch, is_html
from .sanitize import clean_html, plain_text

WORDS_PER_MINUTE = 230
HTML_ACCEPT = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.1"

T = TypeVar("T")

# The reader view prints the title itself; the page's own <h1> would repeat it.
_LEADING_H1 = re.compile(r"^\s*<h1>.*?</h1>", re.DOTALL)


class ExtractError(FetchError):
    """The page arrived but holds nothing we can show as an article."""


class CpuPool:
    """Runs CPU-bound functions off the event loop: in worker processes (the default,
    so extraction does not even compete for the GIL), or in one thread when
    processes = 0."""

    def __init__(self, processes: int = 1):
        if processes > 0:
            context = multiprocessing.get_context("forkserver")
            # Workers fork from a server that has already imported trafilatura.
            context.set_forkserver_preload(["reader.extract", "reader.feeds"])
            self._executor: concurrent.futures.Executor = concurrent.futures.ProcessPoolExecutor(
                max_workers=processes, mp_context=context
            )
        else:
            self._executor = concurrent.futures.ThreadPoolExecutor(max_workers=1)

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)

    def close(self) -> None:
        self._executor.shutdown(wait=True, cancel_futures=True)


def clean_page(body: bytes, url: str, charset: str | None) -> dict[str, Any]:
    """Extract the main text of an HTML page in one trafilatura pass, then sanitize it.
    Pure CPU; runs in the pool. Raises ExtractError when there is no article."""
    import trafilatura

    markup: bytes | str = body
    if charset:
        try:
            markup = body.decode(charset, errors="replace")
        except LookupError:
            pass  # unknown charset name: let trafilatura detect it from the bytes
    document = trafilatura.extract_with_metadata(
        markup,
        url=url,
        output_format="html",
        include_images=True,
        include_links=True,
        include_tables=True,
        include_comments=False,
    )
    if document is None or not document.text:
        raise ExtractError("no readable text found on the page")
    html = _LEADING_H1.sub("", clean_html(document.text, base_url=url), count=1)
    text = plain_text(html)
    words = len(text.split())
    if words == 0:
        raise ExtractError("no readable text found on the page")
    return {
        "title": plain_text(document.title or "") or None,
        "author": plain_text(document.author or "") or None,
        "published": document.date or None,
        "html": html,
        "text": text,
        "words": words,
    }


def reading_minutes(words: int) -> int:
    return max(1, round(words / WORDS_PER_MINUTE))


async def extract_article(
    client: httpx.AsyncClient, pool: CpuPool, url: str, *, max_bytes: int, deadline: float
) -> dict[str, Any]:
    """Fetch a page and return its cleaned content. Raises FetchError (ExtractError for
    pages that are not articles) with a reason fit for the card."""
    response = await fetch(client, url, max_bytes=max_bytes, deadline=deadline, accept=HTML_ACCEPT)
    if not is_html(response.content_type, response.body):
        raise ExtractError(f"not an HTML page ({response.content_type or 'unknown type'})")
    return await pool.run(clean_page, response.body, response.url, response.charset)
