"""The stats page: a summary for a person (the line now, what is ready, the last week),
then the ledger's counts and its latest runs under Details."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from ..render import nav, render
from ..requests import reader_of


async def stats_page(request: Request) -> Response:
    reader = reader_of(request)
    return render(request, "stats.html", stats=await reader.stats(), runs=await reader.latest_runs(20),
                  week=await reader.week(), **await nav(request))
