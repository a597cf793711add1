"""Rules and paused feeds: the rules table, the articles rules hid (and showing them
again), an apply to stored articles with its undo, a feed's pause.

A hidden article (articles.hidden_by set) is read and out of every list and count (the
SHOWN term in base.py, the unread counter's triggers); hidden_at is when, so that
showing it again makes it unread if hiding is what made it read. Rules apply to
articles no person has acted on: never to one tapped, cleaned, queued or starred, so a
rule can never take away what a person chose to read."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

import aiosqlite

from .base import StoreBase, rows_of
from .library import _tag_ids

# What a rule applied to stored articles may change: an article of a feed nobody has acted
# on (tapped, cleaned, queued, starred) and not hidden already. Needs the alias a.
_UNTOUCHED = """(a.feed_id IS NOT NULL AND a.hidden_by IS NULL AND a.tapped_at IS NULL AND a.tap_order IS NULL
    AND a.starred_at IS NULL AND NOT EXISTS (SELECT 1 FROM queue q WHERE q.article_id = a.id))"""

# Showing a hidden article again: unread again if hiding is what made it read.
_SHOWN_AGAIN = """hidden_by = NULL, hidden_at = NULL,
    read_at = CASE WHEN read_at = hidden_at THEN NULL ELSE read_at END"""

# The columns rules match on, a summary cut to what words are looked for in (a 100 KB one
# is not read whole to match its first 10,000 characters).
_MATCHED = """a.id, a.feed_id, f.folder, a.title, substr(a.summary_text, 1, 10000) AS summary_text, a.author,
    a.categories, a.url, a.sort_at"""


# The column each field of a rule reads.
_COLUMNS = {"title": "a.title", "summary": "a.summary_text", "author": "a.author", "category": "a.categories",
            "url": "a.url"}


def _json(values: Sequence[Any]) -> str:
    return json.dumps(list(values))


def _narrowed(where: list[str], params: dict[str, Any], feed_id: int | None, folder: str | None,
              with_tag: str | None) -> None:
    """A rule's scope (a feed, or a folder and the folders in it) and, for a tag rule, only
    the articles that lack its tag, added to a query on articles a joined to feeds f."""
    if feed_id is not None:
        where.append("a.feed_id = :feed")
        params["feed"] = feed_id
    if folder is not None:
        where.append("(f.folder = :folder OR substr(f.folder, 1, length(:folder) + 3) = :folder || ' / ')")
        params["folder"] = folder
    if with_tag is not None:
        where.append("NOT EXISTS (SELECT 1 FROM article_tags at JOIN tags t ON t.id = at.tag_id"
                     " WHERE at.article_id = a.id AND t.name = :tag)")
        params["tag"] = with_tag


class RuleStore(StoreBase):

    async def rules(self, *, counts: bool = True) -> list[dict[str, Any]]:
        """Every rule, oldest first; with counts, how many articles each hides now (`hidden`)."""
        if not counts:
            return await self._all("SELECT * FROM rules ORDER BY id")
        return await self._all(
            """
            SELECT r.*, (SELECT count(*) FROM articles a WHERE a.hidden_by = r.id) AS hidden
            FROM rules r ORDER BY r.id
            """)

    async def rule(self, rule_id: int) -> dict[str, Any] | None:
        return await self._one("SELECT * FROM rules WHERE id = ?", (rule_id,))

    async def add_rule(self, *, field: str, kind: str, pattern: str, scope: str, action: str,
                       enabled: bool = True, created: float | None = None) -> int:
        now = time.time()
        async with self._transaction() as db:
            # an age rule sweeps what grows old from the time it is stored (a rule an export
            # brings back keeps its creation time, and the library it comes to is another)
            rows = await rows_of(
                db, "INSERT INTO rules (field, kind, pattern, scope, action, enabled, created, swept_at)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                (field, kind, pattern, scope, action, int(enabled), now if created is None else created, now))
            return int(rows[0]["id"])

    async def update_rule(self, rule_id: int, changes: dict[str, Any]) -> bool:
        """Change a rule's parts (checked by the caller). What it hid stays hidden: showing
        it again is the person's own act (show_again), as is applying the changed rule."""
        columns = [c for c in ("field", "kind", "pattern", "scope", "action", "enabled") if c in changes]
        async with self._transaction() as db:
            if not columns:
                return bool(await rows_of(db, "SELECT 1 FROM rules WHERE id = ?", (rule_id,)))
            sets = ", ".join(f"{c} = :{c}" for c in columns)
            # a changed rule sweeps what grows old from now on, as it applies to what arrives
            # from now on (the stored ones are the person's to apply it to)
            cur = await db.execute(f"UPDATE rules SET {sets}, swept_at = :now WHERE id = :id",
                                   {**changes, "id": rule_id, "now": time.time()})
            return cur.rowcount > 0

    async def delete_rule(self, rule_id: int) -> int | None:
        """Delete a rule; what it hid is shown again. How many articles that was, or None for
        no such rule."""
        async with self._transaction() as db:
            cur = await db.execute("DELETE FROM rules WHERE id = ?", (rule_id,))
            if not cur.rowcount:
                return None
            shown = await db.execute(f"UPDATE articles SET {_SHOWN_AGAIN} WHERE hidden_by = ?", (rule_id,))
            await db.execute("DELETE FROM rule_undo WHERE rule_id = ?", (rule_id,))
            return shown.rowcount

    async def replace_rules(self, db: aiosqlite.Connection, rules: Sequence[dict[str, Any]]) -> None:
        """Inside an import's transaction: the rules of an export, with their ids (articles'
        hidden_by name them)."""
        await db.executemany(
            "INSERT INTO rules (id, field, kind, pattern, scope, action, enabled, created)"
            " VALUES (:id, :field, :kind, :pattern, :scope, :action, :enabled, :created)"
            " ON CONFLICT (id) DO UPDATE SET field = excluded.field, kind = excluded.kind,"
            " pattern = excluded.pattern, scope = excluded.scope, action = excluded.action,"
            " enabled = excluded.enabled, created = excluded.created",
            [{**r, "enabled": int(bool(r["enabled"]))} for r in rules])

    # -- matching stored articles ------------------------------------------------------

    async def headlines(self, limit: int = 200) -> list[dict[str, Any]]:
        """The newest `limit` headlines of feeds, shown or hidden, with what rules match on:
        what a rule's "Test" runs against."""
        return await self._all(
            f"""
            SELECT {_MATCHED}, coalesce(f.title, a.source) AS feed_title, a.hidden_by
            FROM articles a JOIN feeds f ON f.id = a.feed_id
            ORDER BY a.sort_at DESC, a.id DESC LIMIT ?
            """, (limit,))

    async def untouched_batch(self, after: int, limit: int, *, feed_id: int | None = None,
                              folder: str | None = None, with_tag: str | None = None,
                              containing: tuple[str, Sequence[str]] | None = None) -> list[dict[str, Any]]:
        """A batch of the articles a rule may change (see _UNTOUCHED), in id order after
        article `after`, with what rules match on; narrowed to a feed or a folder (and
        the folders in it). `with_tag`: only those that lack this tag (a tag rule's).
        `containing`: (field, words): only those whose field has every one of these
        (ASCII) words somewhere, in any case, a test SQLite makes without sending the
        rows: the caller still matches what comes back."""
        params: dict[str, Any] = {"after": after, "limit": limit}
        where = [_UNTOUCHED, "a.id > :after"]
        if containing is not None:
            column = _COLUMNS[containing[0]]
            for n, word in enumerate(containing[1]):
                escaped = word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
                where.append(f"{column} LIKE :like{n} ESCAPE '\\'")
                params[f"like{n}"] = f"%{escaped}%"
        _narrowed(where, params, feed_id, folder, with_tag)
        return await self._all(
            f"SELECT {_MATCHED} FROM articles a JOIN feeds f ON f.id = a.feed_id"
            f" WHERE {' AND '.join(where)} ORDER BY a.id LIMIT :limit", params)

    async def grown_old(self, since: float, until: float, limit: int, *, feed_id: int | None = None,
                        folder: str | None = None, with_tag: str | None = None) -> list[int]:
        """The articles a rule may change (see _UNTOUCHED) whose time (sort_at) lies in
        (since, until], oldest first: those an age rule's sweep has not looked at yet."""
        params: dict[str, Any] = {"since": since, "until": until, "limit": limit}
        where = [_UNTOUCHED, "a.sort_at > :since", "a.sort_at <= :until"]
        _narrowed(where, params, feed_id, folder, with_tag)
        rows = await self._all(
            f"SELECT a.id FROM articles a JOIN feeds f ON f.id = a.feed_id WHERE {' AND '.join(where)}"
            " ORDER BY a.sort_at, a.id LIMIT :limit", params)
        return [int(r["id"]) for r in rows]

    async def rule_swept(self, rule_id: int, until: float) -> None:
        async with self._transaction() as db:
            await db.execute("UPDATE rules SET swept_at = ? WHERE id = ?", (until, rule_id))

    async def apply_rule(self, rule_id: int, action: str, ids: Sequence[int], *,
                         remember: bool = True) -> tuple[int, float]:
        """Apply a rule's action to these articles (those still untouched: see _UNTOUCHED),
        in one transaction, each change remembered under one stamp for `undo_apply`
        (unless not to `remember`: an age rule's sweep, which no one takes back as one).
        Returns (articles changed, the stamp)."""
        stamp = time.time()
        chosen = f"SELECT a.id FROM articles a WHERE a.id IN (SELECT value FROM json_each(:ids)) AND {_UNTOUCHED}"
        params = {"ids": _json([int(i) for i in ids]), "stamp": stamp, "rule": rule_id}
        async with self._transaction() as db:
            if action.startswith("tag:"):
                tag_ids = await _tag_ids(db, [action[4:]])
                params["tag"] = next(iter(tag_ids.values()))
                chosen += " AND NOT EXISTS (SELECT 1 FROM article_tags at WHERE at.article_id = a.id" \
                          " AND at.tag_id = :tag)"
            await db.execute(f"INSERT INTO rule_undo (stamp, rule_id, article_id) SELECT :stamp, :rule, id"
                             f" FROM ({chosen})", params)
            changed = "SELECT article_id FROM rule_undo WHERE stamp = :stamp"
            if action in ("hide", "keep_only"):
                cur = await db.execute(
                    f"UPDATE articles SET hidden_by = :rule, hidden_at = :stamp, read_at = coalesce(read_at, :stamp)"
                    f" WHERE id IN ({changed})", params)
            elif action == "star":
                cur = await db.execute(f"UPDATE articles SET starred_at = :stamp WHERE id IN ({changed})", params)
            else:
                cur = await db.execute("INSERT INTO article_tags (article_id, tag_id) SELECT article_id, :tag"
                                       " FROM rule_undo WHERE stamp = :stamp", params)
            if not remember:
                await db.execute("DELETE FROM rule_undo WHERE stamp = :stamp AND rule_id = :rule", params)
            return cur.rowcount, stamp

    async def undo_apply(self, rule_id: int, action: str, stamp: float) -> int:
        """Take back one apply of a rule: what it hid is shown again (unread again if it made
        it read), what it starred unstarred, what it tagged untagged, except what was changed
        by hand since (starred, shown or hidden again). How many articles it gave back."""
        params = {"stamp": stamp, "rule": rule_id}
        changed = "SELECT article_id FROM rule_undo WHERE stamp = :stamp AND rule_id = :rule"
        async with self._transaction() as db:
            if action in ("hide", "keep_only"):
                cur = await db.execute(f"UPDATE articles SET {_SHOWN_AGAIN} WHERE id IN ({changed})"
                                       " AND hidden_by = :rule AND hidden_at = :stamp", params)
            elif action == "star":
                cur = await db.execute(f"UPDATE articles SET starred_at = NULL WHERE id IN ({changed})"
                                       " AND starred_at = :stamp", params)
            else:
                cur = await db.execute(
                    f"DELETE FROM article_tags WHERE article_id IN ({changed})"
                    " AND tag_id = (SELECT id FROM tags WHERE name = :tag)", {**params, "tag": action[4:]})
                await db.execute("DELETE FROM tags WHERE id NOT IN (SELECT tag_id FROM article_tags)")
            await db.execute("DELETE FROM rule_undo WHERE stamp = :stamp AND rule_id = :rule", params)
            return cur.rowcount

    # -- hidden articles -----------------------------------------------------------------

    async def hidden_articles(self, *, before: int | None = None, limit: int = 50) -> list[dict[str, Any]]:
        """The articles rules hid, newest first (keyset pagination after article `before`),
        each with the rule that hid it (rule_field, rule_kind, rule_pattern, rule_action)."""
        params: dict[str, Any] = {"limit": limit}
        where = "a.hidden_by IS NOT NULL"
        if before is not None:
            where += " AND (a.sort_at, a.id) < (SELECT sort_at, id FROM articles WHERE id = :before)"
            params["before"] = before
        return await self._all(
            f"""
            SELECT a.id, a.feed_id, a.url, a.title, a.author, a.sort_at, a.hidden_by, a.hidden_at,
                   coalesce(f.title, a.source) AS feed_title, r.field AS rule_field, r.kind AS rule_kind,
                   r.pattern AS rule_pattern, r.action AS rule_action, r.scope AS rule_scope
            FROM articles a LEFT JOIN feeds f ON f.id = a.feed_id LEFT JOIN rules r ON r.id = a.hidden_by
            WHERE {where} ORDER BY a.sort_at DESC, a.id DESC LIMIT :limit
            """, params)

    async def hidden_count(self) -> int:
        return await self._count("SELECT count(*) FROM articles WHERE hidden_by IS NOT NULL")

    async def show_again(self, article_id: int) -> bool:
        """Show a hidden article again (unread again if hiding made it read). False if there
        is no such hidden article."""
        async with self._transaction() as db:
            cur = await db.execute(f"UPDATE articles SET {_SHOWN_AGAIN} WHERE id = ? AND hidden_by IS NOT NULL",
                                   (article_id,))
            return cur.rowcount > 0

    # -- paused feeds --------------------------------------------------------------------

    async def pause_unpaused(self, pauses: Sequence[tuple[int, float]]) -> None:
        """An imported file's pauses, (feed id, until) each, to the feeds that have no
        pause of their own (one set here is the person's, newer than the file's)."""
        async with self._transaction() as db:
            await db.executemany("UPDATE feeds SET paused_until = ? WHERE id = ? AND paused_until IS NULL",
                                 [(until, feed_id) for feed_id, until in pauses])

    async def pause_feed(self, feed_id: int, until: float | None) -> bool:
        """Pause a feed until a time (None: not paused). Its articles are still fetched and
        stored; the lists and unread counts leave them out while now < until."""
        async with self._transaction() as db:
            cur = await db.execute("UPDATE feeds SET paused_until = ? WHERE id = ?", (until, feed_id))
            return cur.rowcount > 0
