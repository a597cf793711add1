"""The line a person sees. Positions come from the store's service order (the same
ORDER BY the workers take by); this module turns a position into an honest estimate of
when the article will be ready.

Sites differ by an order of magnitude (a slow site takes seconds a page where a fast one
takes a tenth), so one median over every recent run makes a slow site's articles look
instant. Each article is costed by its own site's recent runs (a first guess before there
are any), and the line is played forward on the live workers' slots by the rule they
take by: one article of a site at a time, so a burst on one site waits in single file
however many workers there are."""

from __future__ import annotations

import functools
import heapq
import statistics
import time
from collections import Counter, deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ..store.line import url_host

# Runs per site that count: recent enough to follow a site that got slower, enough that
# one odd page does not swing the estimate.
SITE_RUNS = 5
# Runs overall that stand in for a site with no history of its own.
OVERALL_RUNS = 20
# Seconds one article is guessed to take before any has been cleaned: a page from a
# site far away, its images and the extraction (1.5 to 4 s were measured on news sites,
# and a guess that errs late disappoints less).
FIRST_GUESS = 5.0
# Below this, a wait is "a few seconds".
FEW_SECONDS = 5.0


@functools.lru_cache(maxsize=4096)
def host_of(url: str | None) -> str:
    """A URL's site, lower case (kept: a list page with anything queued on it looks up the
    200 latest runs' sites)."""
    try:
        return (urlsplit(url or "").hostname or "").lower()
    except ValueError:
        return ""


@dataclass(frozen=True)
class Timings:
    """Recent fetch+clean times: per site, overall for sites never seen, and `prior`
    (None: say nothing) before anything was cleaned at all."""

    by_host: Mapping[str, Sequence[float]] = field(default_factory=dict)
    overall: Sequence[float] = ()
    prior: float | None = None

    @classmethod
    def from_runs(cls, runs: Sequence[Mapping[str, Any]], prior: float | None = None) -> Timings:
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
        return cls(by_host, overall, prior)

    def expected(self, url: str | None) -> float | None:
        """Seconds one article of this URL's site is expected to take; the prior without history."""
        mine = self.by_host.get(host_of(url))
        if mine:
            return statistics.median(mine)
        return statistics.median(self.overall) if self.overall else self.prior


@dataclass(frozen=True)
class Work:
    """One article the workers still have to do: its URL, and when its cleaning started
    (None while it waits)."""

    url: str | None
    started_at: float | None = None


def estimate_waits(work: Sequence[Work], timings: Timings, capacity: int,
                   now: float | None = None) -> list[float | None]:
    """For each item of `work` (in service order, those being cleaned first), the seconds
    until it is cleaned. None when there is no history (and no prior) or no worker.

    The workers are played forward by the rule they take by (`Store.take_next`):
    `capacity` slots; whenever one is free it takes the first waiting article whose site
    has nothing being cleaned. So ten articles of one site wait for each other whatever
    the capacity, and articles of other sites pass them on the free slots. Each article
    costs its own site's expected time; one being cleaned costs what is left of it."""
    if capacity < 1:
        return [None] * len(work)
    now = time.time() if now is None else now
    costs = [timings.expected(item.url) for item in work]
    if any(cost is None for cost in costs):
        return [None] * len(work)
    hosts = [url_host(item.url) for item in work]
    waits: list[float | None] = [None] * len(work)
    free = capacity
    busy: Counter[str] = Counter()  # site -> its articles being cleaned
    ends: list[tuple[float, int]] = []  # (when it is done, item), a heap
    lines: dict[str, deque[int]] = {}  # site -> its waiting items, in service order
    for i, item in enumerate(work):
        if item.started_at is not None:
            left = max(0.0, (costs[i] or 0.0) - (now - item.started_at))
            waits[i] = left
            busy[hosts[i]] += 1
            free -= 1  # a direct open's claim may go past the capacity: the slots free up later
            heapq.heappush(ends, (left, i))
        else:
            lines.setdefault(hosts[i], deque()).append(i)
    # the first waiting item of every site that is free: what a free slot may take
    takeable = [line[0] for host, line in lines.items() if not busy[host]]
    heapq.heapify(takeable)

    def fill(at: float) -> None:
        nonlocal free
        while free > 0 and takeable:
            i = heapq.heappop(takeable)
            lines[hosts[i]].popleft()
            done = at + (costs[i] or 0.0)
            waits[i] = done
            busy[hosts[i]] += 1
            free -= 1
            heapq.heappush(ends, (done, i))

    fill(0.0)
    while ends:
        at, i = heapq.heappop(ends)
        free += 1
        busy[hosts[i]] -= 1
        line = lines.get(hosts[i])
        if not busy[hosts[i]] and line:
            heapq.heappush(takeable, line[0])
        fill(at)
    return waits


def describe_wait(seconds: float | None) -> str:
    """'about 40 s', 'about 3 min'; '' when there is nothing honest to say. "A few
    seconds" only for what is expected well under ten: an estimate is a median, and
    one of 8 s is as likely to take 12."""
    if seconds is None:
        return ""
    if seconds < FEW_SECONDS:
        return "a few seconds"
    if seconds < 90:
        return f"about {max(10, int(round(seconds / 5) * 5))} s"
    return f"about {round(seconds / 60)} min"
