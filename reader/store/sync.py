"""What native apps need stored and read (the Google Reader and Fever APIs,
reader/core/sync.py): app passwords and the tokens signed in with them, the item ids of
a stream one keyset page at a time, items by id with everything an app shows of them,
and the label edits a folder or a tag takes (rename, remove).

The core names a stream with a `Stream` (reader/core/sync.py builds it from the
protocol's ids); the SQL for each kind of stream is here, and nowhere else."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .base import NOT_DONE, SHOWN, StoreBase, rows_of

# A token's last use is written at most this often (seconds): every sync request reads
# it, and a write per request would serialise them all behind the write lock.
TOKEN_TOUCH = 60.0

# What an app sees: the articles of feeds. A saved link has no subscription to belong to
# (an app drops an item whose feed it does not know), so it is left out of every stream.
_FROM_FEEDS = "a.feed_id IS NOT NULL"
# ... and of those, the shown ones (base.SHOWN, with its own time): none a rule hid, none of
# a paused feed.
_SHOWN = SHOWN.replace(":now", "((julianday('now') - 2440587.5) * 86400.0)")


@dataclass(frozen=True)
class Stream:
    """A set of articles an app names: `kind` is one of KINDS; `value` is the feed id
    for "feed" and the label's name for "label"."""

    kind: str
    value: int | str | None = None


KINDS = ("all", "read", "unread", "starred", "feed", "label", "queue", "reading")


def _condition(stream: Stream, params: dict[str, Any], key: str) -> str:
    """The WHERE term that holds for the articles in `stream` (aliases a, q), its values
    added to `params` under names starting with `key`."""
    if stream.kind == "all":
        return _FROM_FEEDS
    if stream.kind == "read":
        return f"a.read_at IS NOT NULL AND {_FROM_FEEDS}"
    if stream.kind == "unread":
        return f"a.read_at IS NULL AND {_FROM_FEEDS}"
    if stream.kind == "starred":
        return f"a.starred_at IS NOT NULL AND {_FROM_FEEDS}"
    if stream.kind == "feed":
        params[key] = stream.value
        # the stories it carries that another feed brought first too (schema v18)
        return f"(a.feed_id = :{key} OR a.id IN (SELECT article_id FROM sources WHERE feed_id = :{key}))"
    if stream.kind == "label":
        # a label is a folder of feeds and a tag on articles at once, when both have its name
        params[key] = stream.value
        return (f"(a.feed_id IN (SELECT id FROM feeds WHERE folder = :{key}) OR a.id IN ("
                f"SELECT s.article_id FROM sources s JOIN feeds sf ON sf.id = s.feed_id WHERE sf.folder = :{key})"
                f" OR a.id IN ("
                f"SELECT at.article_id FROM article_tags at JOIN tags t ON t.id = at.tag_id WHERE t.name = :{key}))")
    if stream.kind == "queue":  # waiting or being cleaned: tapped and not ready
        return (f"(a.id IN (SELECT article_id FROM queue) AND a.id NOT IN (SELECT article_id FROM contents)"
                f" AND {_FROM_FEEDS})")
    if stream.kind == "reading":  # the reading list's own rule (store.base.NOT_DONE)
        return f"(a.tap_order IS NOT NULL AND {NOT_DONE} AND {_FROM_FEEDS})"
    raise ValueError(f"no such kind of stream: {stream.kind}")


# Each stream's order and the keyset term that continues after article :after in it.
_ID_ORDER = ("a.id", "a.id", "SELECT :after")
_ORDERS = {
    "queue": ("(q.due_at, q.seq)", "q.due_at, q.seq", "SELECT due_at, seq FROM queue WHERE article_id = :after"),
    "reading": ("(a.tap_order, a.id)", "a.tap_order, a.id", "SELECT tap_order, id FROM articles WHERE id = :after"),
}


def _items_sql(stream: Stream, *, include: Sequence[Stream], exclude: Sequence[Stream], newer_than: float | None,
               older_than: float | None, oldest_first: bool, after: int | None, limit: int,
               ) -> tuple[str, dict[str, Any]]:
    params: dict[str, Any] = {"limit": limit}
    where = [_condition(stream, params, "s"), _SHOWN]
    where += [_condition(s, params, f"i{n}") for n, s in enumerate(include)]
    where += [f"NOT ({_condition(s, params, f'x{n}')})" for n, s in enumerate(exclude)]
    if newer_than is not None:
        where.append("a.added_at >= :newer_than")
        params["newer_than"] = newer_than
    if older_than is not None:
        where.append("a.added_at < :older_than")
        params["older_than"] = older_than
    key, order, key_of = _ORDERS.get(stream.kind, _ID_ORDER)
    # the queue and the reading list have an order of their own (service, tap); every
    # other stream is in the order articles arrived, newest first unless asked otherwise
    ascending = oldest_first or stream.kind in _ORDERS
    if after is not None:
        where.append(f"{key} {'>' if ascending else '<'} ({key_of})")
        params["after"] = after
    direction = "ASC" if ascending else "DESC"
    columns = ", ".join(f"{c.strip()} {direction}" for c in order.split(","))
    sql = (f"SELECT a.id, a.added_at FROM articles a LEFT JOIN queue q ON q.article_id = a.id"
           f" WHERE {' AND '.join(where)} ORDER BY {columns} LIMIT :limit")
    return sql, params


class SyncStore(StoreBase):

    # -- app passwords and tokens ----------------------------------------------------

    async def add_app_password(self, name: str, salt: bytes, digest: bytes, fever_key: str, secret: str) -> int | None:
        """A new app password; None if a live one has this name already."""
        async with self._transaction() as db:
            taken = await rows_of(db, "SELECT 1 FROM app_passwords WHERE name = ? COLLATE NOCASE"
                                      " AND revoked_at IS NULL", (name,))
            if taken:
                return None
            rows = await rows_of(
                db, "INSERT INTO app_passwords (name, salt, hash, fever_key, secret, created_at)"
                    " VALUES (?, ?, ?, ?, ?, ?) RETURNING id", (name, salt, digest, fever_key, secret, time.time()))
            return int(rows[0]["id"])

    async def app_passwords(self, *, live_only: bool = False) -> list[dict[str, Any]]:
        """Every app password (id, name, salt, hash, secret, created_at, last_used_at,
        revoked_at), live ones first, oldest first."""
        where = "WHERE revoked_at IS NULL" if live_only else ""
        return await self._all(f"SELECT id, name, salt, hash, secret, created_at, last_used_at, revoked_at"
                               f" FROM app_passwords {where} ORDER BY revoked_at IS NOT NULL, id")

    async def live_app_password(self, *, name: str | None = None, password_id: int | None = None,
                                fever_key: str | None = None) -> dict[str, Any] | None:
        """The live app password with this name (any case), id or Fever key digest."""
        value: str | int | None
        if name is not None:
            where, value = "name = ? COLLATE NOCASE", name
        elif password_id is not None:
            where, value = "id = ?", password_id
        else:
            where, value = "fever_key = ?", fever_key
        return await self._one(f"SELECT id, name, salt, hash, secret FROM app_passwords"
                               f" WHERE {where} AND revoked_at IS NULL", (value,))

    async def revoke_app_password(self, password_id: int) -> bool:
        """Revoke it and delete its tokens, in one transaction: every app signed in with it
        is refused from its next request on. False if there is no live one with this id."""
        async with self._transaction() as db:
            cur = await db.execute("UPDATE app_passwords SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                                   (time.time(), password_id))
            await db.execute("DELETE FROM sync_tokens WHERE password_id = ?", (password_id,))
            return cur.rowcount > 0

    async def add_token(self, token_hash: str, password_id: int) -> bool:
        """A sign-in's token; False if the password was revoked meanwhile."""
        now = time.time()
        async with self._transaction() as db:
            live = await rows_of(db, "SELECT 1 FROM app_passwords WHERE id = ? AND revoked_at IS NULL",
                                 (password_id,))
            if not live:
                return False
            await db.execute("INSERT INTO sync_tokens (hash, password_id, created_at, last_used_at)"
                             " VALUES (?, ?, ?, ?)", (token_hash, password_id, now, now))
            await db.execute("UPDATE app_passwords SET last_used_at = ? WHERE id = ?", (now, password_id))
            return True

    async def token_session(self, token_hash: str) -> dict[str, Any] | None:
        """The live password a token was signed in with (id, name, secret), or None."""
        row = await self._one(
            "SELECT p.id, p.name, p.secret, t.last_used_at FROM sync_tokens t"
            " JOIN app_passwords p ON p.id = t.password_id WHERE t.hash = ? AND p.revoked_at IS NULL",
            (token_hash,))
        if row is None:
            return None
        now = time.time()
        if row.pop("last_used_at") < now - TOKEN_TOUCH:
            async with self._transaction() as db:
                await db.execute("UPDATE sync_tokens SET last_used_at = ? WHERE hash = ?", (now, token_hash))
                await db.execute("UPDATE app_passwords SET last_used_at = ? WHERE id = ?", (now, row["id"]))
        return row

    async def touch_app_password(self, password_id: int) -> None:
        """Fever signs in with every request: its last use, at most every TOKEN_TOUCH."""
        async with self._transaction() as db:
            await db.execute("UPDATE app_passwords SET last_used_at = :now WHERE id = :id"
                             " AND coalesce(last_used_at, 0) < :now - :touch",
                             {"now": time.time(), "id": password_id, "touch": TOKEN_TOUCH})

    # -- streams and items ------------------------------------------------------------

    async def stream_item_ids(self, stream: Stream, *, include: Sequence[Stream] = (),
                              exclude: Sequence[Stream] = (), newer_than: float | None = None,
                              older_than: float | None = None, oldest_first: bool = False,
                              after: int | None = None, limit: int = 20) -> list[dict[str, Any]]:
        """One page of a stream's articles (id, added_at), in its order: a keyset page
        after article `after`, so articles arriving meanwhile move no page. `include` and
        `exclude` narrow it to (or out of) other streams; newer_than and older_than are
        times the articles arrived at (seconds)."""
        sql, params = _items_sql(stream, include=include, exclude=exclude, newer_than=newer_than,
                                 older_than=older_than, oldest_first=oldest_first, after=after, limit=limit)
        return await self._all(sql, params)

    async def sync_items(self, ids: Sequence[int]) -> list[dict[str, Any]]:
        """These articles of feeds as an app shows them, in the order of `ids`: the
        article, its feed (title, site, folder), its tags (`tags`, a list), its cleaned
        HTML (`content`, None while not cleaned), and whether it is in the Queue (`queued`)
        or on the reading list (`reading`). Unknown ids and saved links are left out."""
        rows = await self._all(
            f"""
            SELECT a.id, a.feed_id, a.url, a.title, a.summary, a.author, a.published, a.sort_at, a.added_at,
                   a.read_at, a.starred_at, f.title AS feed_title, f.site_url, f.url AS feed_url,
                   f.folder, c.html AS content,
                   (SELECT json_group_array(t.name) FROM article_tags at JOIN tags t ON t.id = at.tag_id
                    WHERE at.article_id = a.id) AS tags,
                   (q.seq IS NOT NULL AND c.article_id IS NULL) AS queued,
                   (a.tap_order IS NOT NULL AND {NOT_DONE}) AS reading
            FROM articles a JOIN feeds f ON f.id = a.feed_id
                 LEFT JOIN queue q ON q.article_id = a.id
                 LEFT JOIN contents c ON c.article_id = a.id
            WHERE a.id IN (SELECT value FROM json_each(:ids)) AND {_SHOWN}
            """,
            {"ids": json.dumps([int(i) for i in ids])},
        )
        by_id = {}
        for row in rows:
            row["tags"] = sorted(json.loads(row["tags"]), key=str.lower)
            row["queued"], row["reading"] = bool(row["queued"]), bool(row["reading"])
            by_id[row["id"]] = row
        return [by_id[i] for i in dict.fromkeys(ids) if i in by_id]

    async def existing_ids(self, ids: Sequence[int]) -> list[int]:
        """Which of these are articles of feeds, in the order given."""
        rows = await self._all("SELECT id FROM articles WHERE feed_id IS NOT NULL AND id IN"
                               " (SELECT value FROM json_each(?))", (json.dumps([int(i) for i in ids]),))
        found = {int(r["id"]) for r in rows}
        return [i for i in dict.fromkeys(ids) if i in found]

    async def starred_among(self, ids: Sequence[int]) -> set[int]:
        """Which of these articles are starred."""
        rows = await self._all("SELECT id FROM articles WHERE starred_at IS NOT NULL AND id IN"
                               " (SELECT value FROM json_each(?))", (json.dumps([int(i) for i in ids]),))
        return {int(r["id"]) for r in rows}

    async def newest_per_feed(self) -> dict[int, float]:
        """Each feed's newest article's time (its browse order's, sort_at)."""
        rows = await self._all("SELECT feed_id, max(sort_at) AS newest FROM articles"
                               " WHERE feed_id IS NOT NULL GROUP BY feed_id")
        return {int(r["feed_id"]): float(r["newest"]) for r in rows}

    async def unread_per_tag(self) -> list[dict[str, Any]]:
        """Unread articles of feeds per tag: name, count, newest (sort_at)."""
        return await self._all(
            f"""
            SELECT t.name, count(*) AS count, max(a.sort_at) AS newest
            FROM tags t JOIN article_tags at ON at.tag_id = t.id JOIN articles a ON a.id = at.article_id
            WHERE a.read_at IS NULL AND {_FROM_FEEDS} AND {_SHOWN} GROUP BY t.id ORDER BY lower(t.name)
            """)

    async def count_stream(self, stream: Stream, *, unread: bool = False) -> int:
        params: dict[str, Any] = {}
        where = f"{_condition(stream, params, 's')} AND {_SHOWN}"
        if unread:
            where += " AND a.read_at IS NULL"
        return await self._count(f"SELECT count(*) FROM articles a WHERE {where}", params)

    # -- labels ----------------------------------------------------------------------

    async def rename_folder(self, old: str, new: str) -> int:
        """Every feed in folder `old` moves to `new`; how many feeds moved."""
        async with self._transaction() as db:
            cur = await db.execute("UPDATE feeds SET folder = ? WHERE folder = ?", (new, old))
            return cur.rowcount

    async def rename_tag(self, old: str, new: str) -> bool:
        """The tag `old` (any case) takes the name `new`; where a tag `new` exists already
        the two merge. False if there is no tag `old`."""
        async with self._transaction() as db:
            rows = await rows_of(db, "SELECT id FROM tags WHERE name = ?", (old,))
            if not rows:
                return False
            old_id = rows[0]["id"]
            target = await rows_of(db, "SELECT id FROM tags WHERE name = ? AND id != ?", (new, old_id))
            if target:
                await db.execute("INSERT INTO article_tags (article_id, tag_id) SELECT article_id, ? FROM"
                                 " article_tags WHERE tag_id = ? ON CONFLICT DO NOTHING", (target[0]["id"], old_id))
                await db.execute("DELETE FROM tags WHERE id = ?", (old_id,))
            else:
                await db.execute("UPDATE tags SET name = ? WHERE id = ?", (new, old_id))
            return True

    async def drop_folder(self, name: str) -> int:
        """The feeds of folder `name` are in no folder any more; how many."""
        async with self._transaction() as db:
            cur = await db.execute("UPDATE feeds SET folder = NULL WHERE folder = ?", (name,))
            return cur.rowcount

    async def drop_tag(self, name: str) -> bool:
        """The tag `name` comes off every article (the articles stay)."""
        async with self._transaction() as db:
            cur = await db.execute("DELETE FROM tags WHERE name = ?", (name,))
            return cur.rowcount > 0
