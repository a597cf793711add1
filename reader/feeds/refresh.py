"""Feeds come in: fetch subscriptions (conditional GET), parse RSS, Atom and JSON Feed
into headlines, and store them.

Refreshing stores headlines and nothing else. It never queues and never extracts:
only a person's tap puts an article in line. The rules (rules.py) decide, as articles
arrive, which are hidden, starred or tagged; they too never queue.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import Any

import httpx

from ..pool import CpuPool
from ..fetch import FetchError, fetch
from ..store import Store

from .parse import FeedError, parse_feed, short_reason
from .rules import Compiled, Rule, Rules

log = logging.getLogger(__name__)

FEED_ACCEPT = (
    "application/rss+xml, application/atom+xml, application/feed+json, application/json;q=0.9,"
    " application/xml;q=0.8, text/xml;q=0.8, */*;q=0.1"
)

@dataclass
class RefreshResult:
    feed_id: int
    url: str
    new: int = 0
    not_modified: bool = False
    error: str | None = None


async def refresh_feed(
    store: Store,
    client: httpx.AsyncClient,
    pool: CpuPool,
    feed: dict[str, Any],
    *,
    max_bytes: int,
    deadline: float,
    rules: Rules | None = None,
) -> RefreshResult:
    """Fetch one feed with a conditional GET and store its headlines, with what the rules
    decide for each. A failure is recorded on the feed; its articles stay as they were."""
    result = RefreshResult(feed_id=feed["id"], url=feed["url"])
    conditional = {}
    if feed.get("etag"):
        conditional["If-None-Match"] = feed["etag"]
    if feed.get("last_modified"):
        conditional["If-Modified-Since"] = feed["last_modified"]
    try:
        response = await fetch(
            client, feed["url"], max_bytes=max_bytes, deadline=deadline,
            accept=FEED_ACCEPT, extra_headers=conditional,
        )
        if response.status == 304:
            await store.store_feed_not_modified(feed["id"])
            result.not_modified = True
            return result
        parsed = await pool.run(parse_feed, response.body, response.url, response.content_type)
    except (FetchError, FeedError) as exc:
        result.error = str(exc)
    except Exception as exc:  # a bug in a parser must not stop the other feeds
        log.exception("refreshing %s failed", feed["url"])
        result.error = f"could not read the feed ({short_reason(exc)})"
    if result.error:
        await store.store_feed_error(feed["id"], result.error)
        return result
    if rules:
        decide(rules, parsed["entries"], feed["id"], feed.get("folder"))
    result.new = await store.store_feed_entries(
        feed["id"],
        title=parsed["title"],
        site_url=parsed["site_url"],
        etag=response.headers.get("etag"),
        last_modified=response.headers.get("last-modified"),
        entries=parsed["entries"],
    )
    return result


async def load_rules(store: Store) -> Rules:
    """The enabled rules, compiled: read once for a whole refresh."""
    return Rules(Rule.from_row(r) for r in await store.rules(counts=False))


def decide(rules: Rules, entries: list[dict[str, Any]], feed_id: int, folder: str | None) -> None:
    """What the rules do to each entry of a feed, written on the entry for the store's
    insert (which takes it only for an article that is new)."""
    now = time.time()
    for entry in entries:
        decision = rules.decide(entry, feed_id, folder, now)
        if decision:
            entry.update(hidden_by=decision.hidden_by, star=decision.star, tags=decision.tags)


# Articles one sweep of one age rule changes at most per statement (a first sweep after a
# long stop may find many).
SWEEP_BATCH = 2_000


async def sweep_aged(store: Store, now: float | None = None) -> int:
    """The age rules, on what grew old since they last looked. A rule decides an article's
    fate as it arrives; an article that arrived fresh grows older than an age rule's days
    later, and is hidden (starred, tagged) then, by this sweep the refresher makes every
    round. Each sweep looks only at the articles whose time passed the rule's line since
    the one before (rules.swept_at, the rule's creation at first), so what a person showed
    again, or touched in any way, is never taken from them again. keep_only age rules are
    left alone: what they keep only grows older. How many articles changed."""
    now = time.time() if now is None else now
    changed = 0
    for row in await store.rules(counts=False):
        rule = Rule.from_row(row)
        if not rule.enabled or rule.field != "age" or rule.action == "keep_only":
            continue
        compiled = Compiled(rule)
        span = compiled.days * 86400.0
        since = (row.get("swept_at") or rule.created) - span
        until = now - span
        while since < until:
            # each batch changed leaves the untouched (hidden, starred or tagged now), so the
            # next look finds the next ones
            ids = await store.grown_old(since, until, SWEEP_BATCH, feed_id=compiled.feed, folder=compiled.folder,
                                        with_tag=rule.tag)
            count = (await store.apply_rule(rule.id, rule.action, ids, remember=False))[0] if ids else 0
            changed += count
            if len(ids) < SWEEP_BATCH or count == 0:
                break
        await store.rule_swept(rule.id, now)
    return changed


async def refresh_feeds(
    store: Store,
    client: httpx.AsyncClient,
    pool: CpuPool,
    feeds: list[dict[str, Any]],
    *,
    max_bytes: int,
    deadline: float,
    concurrency: int = 8,
) -> list[RefreshResult]:
    """Refresh many feeds, a few at a time; one slow or broken feed holds up nothing else.
    The rules are read and compiled once for all of them."""
    limit = asyncio.Semaphore(concurrency)
    rules = await load_rules(store)

    async def one(feed: dict[str, Any]) -> RefreshResult:
        async with limit:
            return await refresh_feed(store, client, pool, feed, max_bytes=max_bytes, deadline=deadline,
                                      rules=rules)

    return list(await asyncio.gather(*(one(f) for f in feeds)))
