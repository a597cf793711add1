"""Rules and paused feeds, as the Reader offers them: make, change, test and delete a rule,
apply one to stored articles (a count first, then the change with its undo), the
articles rules hid (and showing one again), and pausing a feed.

The matching itself is feeds/rules.py, shared with the refresh that applies the rules to
what arrives. A rule never queues: it only hides, stars or tags.
"""

from __future__ import annotations

import dataclasses
import datetime
import math
import time
from collections.abc import Mapping
from typing import Any

from ..errors import Invalid, NotFound
from ..feeds.rules import Compiled, Rule, check_rule
from ..store import Store

# Headlines a rule's "Test" runs against: the newest ones.
TEST_HEADLINES = 200
# Stored articles read per batch while applying a rule.
APPLY_BATCH = 5000
# The longest pause: a feed muted for longer is one to unsubscribe from.
MAX_PAUSE_DAYS = 3660
PAUSES = {"day": 86400.0, "week": 7 * 86400.0}


@dataclasses.dataclass(frozen=True)
class Tested:
    """One headline a rule was tested on: whether the rule matches it and whether, saved,
    the rule would change it (hide it for hide and keep_only, star or tag it)."""

    id: int
    title: str
    feed_title: str
    matches: bool
    changes: bool


@dataclasses.dataclass(frozen=True)
class Applied:
    """What applying a rule to stored articles did, or would do (a dry run): how many
    articles, and the stamp its undo takes (None for a dry run or no change)."""

    rule: Rule
    count: int
    stamp: float | None = None


async def _checked_scope(store: Store, scope: str) -> None:
    if scope.startswith("feed:") and await store.get_feed(int(scope[5:])) is None:
        raise Invalid(f"scope: there is no feed {scope[5:]}")


async def rules(store: Store) -> list[Rule]:
    return [Rule.from_row(r) for r in await store.rules()]


async def rule(store: Store, rule_id: int) -> Rule:
    found = await store.rule(rule_id)
    if found is None:
        raise NotFound("no such rule")
    return Rule.from_row(found)


async def add_rule(store: Store, fields: Mapping[str, Any]) -> Rule:
    """A new rule from its parts (field, match, pattern, scope, action, enabled); Invalid
    with the reason for a part that is wrong. It applies to what arrives from now on;
    what is stored already takes `apply_rule`."""
    parts = check_rule(fields.get("field"), fields.get("match", fields.get("kind")), fields.get("pattern"),
                       fields.get("scope"), fields.get("action"))
    await _checked_scope(store, parts["scope"])
    enabled = fields.get("enabled", True)
    if not isinstance(enabled, bool):
        raise Invalid("enabled must be true or false")
    return await rule(store, await store.add_rule(**parts, enabled=enabled))


async def update_rule(store: Store, rule_id: int, changes: Mapping[str, Any]) -> Rule:
    """Change some parts of a rule (those given), checked as a whole."""
    old = await rule(store, rule_id)
    unknown = set(changes) - {"field", "match", "kind", "pattern", "scope", "action", "enabled"}
    if unknown:
        raise Invalid(f"a rule has no {', '.join(sorted(unknown))}: give field, match, pattern, scope, action"
                      " or enabled")
    parts = check_rule(changes.get("field", old.field), changes.get("match", changes.get("kind", old.kind)),
                       changes.get("pattern", old.pattern), changes.get("scope", old.scope),
                       changes.get("action", old.action))
    await _checked_scope(store, parts["scope"])
    enabled = changes.get("enabled", old.enabled)
    if not isinstance(enabled, bool):
        raise Invalid("enabled must be true or false")
    await store.update_rule(rule_id, {**parts, "enabled": int(enabled)})
    return await rule(store, rule_id)


async def delete_rule(store: Store, rule_id: int) -> int:
    """Delete a rule; the articles it hid are shown again. How many."""
    shown = await store.delete_rule(rule_id)
    if shown is None:
        raise NotFound("no such rule")
    return shown


async def test_rule(store: Store, fields: Mapping[str, Any], limit: int = TEST_HEADLINES) -> list[Tested]:
    """What a rule not saved yet would do to the newest `limit` headlines: each with whether
    it matches and whether the rule would change it. Invalid as `add_rule` is."""
    parts = check_rule(fields.get("field"), fields.get("match", fields.get("kind")), fields.get("pattern"),
                       fields.get("scope"), fields.get("action"))
    compiled = Compiled(Rule(id=0, **parts))
    now = time.time()
    tested = []
    for row in await store.headlines(limit):
        covered = compiled.covers(row["feed_id"], row["folder"])
        matches = covered and compiled.matches(row, now)
        changes = covered and (not matches if parts["action"] == "keep_only" else matches)
        tested.append(Tested(id=row["id"], title=row["title"], feed_title=row["feed_title"] or "",
                             matches=matches, changes=changes))
    return tested


async def apply_rule(store: Store, rule_id: int, *, dry_run: bool) -> Applied:
    """Apply a rule to the stored articles in its scope that no person has acted on (see
    store/rules.py): a dry run counts them ("this would hide 1,240 stored articles"), else
    they are changed, with a stamp for `undo_apply`."""
    found = await rule(store, rule_id)
    compiled = Compiled(found)
    now = time.time()
    chosen: list[int] = []
    after = 0
    tag = found.tag
    # the rows without the rule's words cannot match it: SQLite leaves them out (LIKE: ASCII
    # words only, the case SQLite folds), except for keep_only, which hides exactly those
    containing = None
    if (found.action != "keep_only" and compiled.words and found.field != "age"
            and all(w.isascii() for w in compiled.words)):
        containing = (found.field, compiled.words)
    while True:
        batch = await store.untouched_batch(after, APPLY_BATCH, feed_id=compiled.feed, folder=compiled.folder,
                                            with_tag=tag, containing=containing)
        if not batch:
            break
        for row in batch:
            if compiled.matches(row, now) != (found.action == "keep_only"):
                chosen.append(int(row["id"]))
        after = int(batch[-1]["id"])
    if dry_run or not chosen:
        return Applied(found, len(chosen))
    count, stamp = await store.apply_rule(rule_id, found.action, chosen)
    return Applied(found, count, stamp if count else None)


async def undo_apply(store: Store, rule_id: int, stamp: object) -> int:
    """Take back one apply of a rule (its stamp): how many articles were given back."""
    if isinstance(stamp, bool) or not isinstance(stamp, (int, float, str)):
        raise Invalid("stamp must be the number an apply gave")
    try:
        value = float(stamp)
    except ValueError:
        raise Invalid("stamp must be the number an apply gave") from None
    if not math.isfinite(value):
        raise Invalid("stamp must be the number an apply gave")
    found = await rule(store, rule_id)
    return await store.undo_apply(rule_id, found.action, value)


def parse_pause(value: object, now: float | None = None) -> float | None:
    """When a pause ends, from what a person gave: "day" or "week" (from now), a date
    (YYYY-MM-DD: paused until that day starts, UTC), a time in Unix seconds, or nothing
    (null, "", "none": not paused). Invalid for anything else, or a time not ahead."""
    now = time.time() if now is None else now
    if value is None or value == "" or value == "none":
        return None
    if isinstance(value, str) and value in PAUSES:
        return now + PAUSES[value]
    until: float
    if isinstance(value, str):
        try:
            day = datetime.date.fromisoformat(value.strip())
        except ValueError:
            raise Invalid("paused_until: give day, week, a date (YYYY-MM-DD), a time in seconds, or null") from None
        until = datetime.datetime(day.year, day.month, day.day, tzinfo=datetime.UTC).timestamp()
    elif isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        until = float(value)
    else:
        raise Invalid("paused_until: give day, week, a date (YYYY-MM-DD), a time in seconds, or null")
    if until > now + MAX_PAUSE_DAYS * 86400:
        raise Invalid(f"paused_until: at most {MAX_PAUSE_DAYS:,} days ahead; unsubscribe from a feed muted longer")
    return until


async def pause_feed(store: Store, feed_id: int, value: object) -> float | None:
    """Pause a feed (see parse_pause); the time it ends, or None (not paused). A time in
    the past ends the pause at once."""
    until = parse_pause(value)
    if not await store.pause_feed(feed_id, until):
        raise NotFound("no such feed")
    return until
