"""The line a person sees. Positions come from the store's service order (the same
ORDER BY the workers take by); this module turns a position into an honest estimate of
when the article will be ready.

Sites differ by an order of magnitude (a slow site takes seconds a page where a fast one
takes a tenth), so one median over every recent run makes a slow site's articles look
instant. Each article is costed by its own site's recent runs, the work ahead of it by
theirs, and that work is shared among the live workers."""

from __future__ import annotations

import statistics
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

# Runs per site that count: recent enough to follow a site that got slower, enough that
# one odd page does not swing the estimate.
SITE_RUNS = 5
# Runs overall that stand in for a site with no history of its own.
OVERALL_RUNS = 20


def host_of(url: str | None) -> str:
    try:
        return (urlsplit(url or "").hostname or "").lower()
    except ValueError:
        return ""


@dataclass(frozen=True)
class Timings:
    """Recent fetch+clean times: per site, and overall for sites never seen."""

    by_host: Mapping[str, Sequence[float]] = field(default_factory=dict)
    overall: Sequence[float] = ()

    @classmethod
    def from_runs(cls, runs: Sequence[Mapping[str, Any]]) -> Timings:
        """From ledger rows ({url, seconds}), newest first."""
        by_host: dict[str, list[float]] = {}
        overall: list[float] = []
        for run in runs:
            seconds = max(0.0, float(run["seconds"]))
            if len(overall) < OVERALL_RUNS:
                overall.append(seconds)
            host = host_of(run.get("url"))
            if host:
                mine = by_host.setdefault(host, [])
                if len(mine) < SITE_RUNS:
                    mine.append(seconds)
        return cls(by_host, overall)

    def expected(self, url: str | None) -> float | None:
        """Seconds one article of this URL's site is expected to take; None without history."""
        mine = self.by_host.get(host_of(url))
        if mine:
            return statistics.median(mine)
        return statistics.median(self.overall) if self.overall else None


@dataclass(frozen=True)
class Work:
    """One article the workers still have to do: its URL, and when its cleaning started
    (None while it waits)."""

    url: str | None
    started_at: float | None = None


def estimate_waits(work: Sequence[Work], timings: Timings, capacity: int,
                   now: float | None = None) -> list[float | None]:
    """For each item of `work` (in service order, those being cleaned first), the seconds
    until it is cleaned: what is left of everything ahead of it, shared among `capacity`
    workers, plus its own time. None when there is no history or no worker to serve it."""
    if capacity < 1:
        return [None] * len(work)
    now = time.time() if now is None else now
    waits: list[float | None] = []
    ahead = 0.0  # seconds of work before this item, on one worker
    known = True
    for item in work:
        own = timings.expected(item.url)
        if own is None:
            known = False
        if item.started_at is not None:  # being cleaned: only what is left of it
            left = max(0.0, (own or 0.0) - (now - item.started_at))
            waits.append(left if known else None)
            ahead += left
            continue
        waits.append(ahead / capacity + own if known and own is not None else None)
        ahead += own or 0.0
    return waits


def describe_wait(seconds: float | None) -> str:
    """'about 40 s', 'about 3 min'; '' when there is nothing honest to say."""
    if seconds is None:
        return ""
    if seconds < 10:
        return "a few seconds"
    if seconds < 90:
        return f"about {int(round(seconds / 5) * 5)} s"
    return f"about {round(seconds / 60)} min"
