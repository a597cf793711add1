"""The schema and its migrations: the current schema (schema.sql), version 1 as released,
and the numbered steps from each version to the next.

schema.sql is the one place that says what a database holds, and a new file is made from
it, in one transaction: replaying every step would make a new file by way of eleven old
schemas, with backfills that find nothing to fill, and the steps' ALTER TABLEs leave the
tables' text (what `sqlite3 reader.db .schema` prints) with columns appended out of line,
where schema.sql's keeps its comments. A file made by an older reader is brought up to date
by the steps after its PRAGMA user_version, never by schema.sql. The two ways must give the
same database: tests/store/test_schema.py compares the tables, columns, indexes and
triggers made by schema.sql with those the steps make from an empty file and from the
first release's. So a schema change is a new step in MIGRATIONS and the same change in
schema.sql.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from importlib.resources import files

import aiosqlite

from ..errors import StorageError
from ..clean.sanitize import plain_text
from ..urls import normalize_url
from .search import INVISIBLE_CODES


# The current schema, made in one go: what a new file starts as (package data beside this module).
SCHEMA = files(__package__).joinpath("schema.sql").read_text(encoding="utf-8")

# The schema of version 1, the first released one. Later versions are reached by the
# numbered steps in MIGRATIONS, never by editing this string.
SCHEMA_V1 = """
CREATE TABLE feeds (
    id            INTEGER PRIMARY KEY,
    url           TEXT NOT NULL UNIQUE,
    title         TEXT NOT NULL DEFAULT '',
    site_url      TEXT,
    -- conditional GET: sent back as If-None-Match / If-Modified-Since
    etag          TEXT,
    last_modified TEXT,
    added_at      REAL NOT NULL,
    refreshed_at  REAL,          -- last attempt, successful or not
    error         TEXT           -- why the last attempt failed; NULL when it worked
);

CREATE TABLE articles (
    id         INTEGER PRIMARY KEY,
    feed_id    INTEGER REFERENCES feeds(id) ON DELETE CASCADE,   -- NULL: a saved link
    guid       TEXT NOT NULL,
    url        TEXT NOT NULL,
    title      TEXT NOT NULL,
    summary    TEXT NOT NULL DEFAULT '',   -- the feed's own text, sanitized HTML
    author     TEXT,
    published  REAL,
    sort_at    REAL NOT NULL,               -- published, else first seen: browse order
    added_at   REAL NOT NULL,
    error      TEXT,                        -- why the last extraction failed
    failed_at  REAL,
    UNIQUE (feed_id, guid)
);
-- speed up the browse page: newest first, keyset pagination on (sort_at, id)
CREATE INDEX articles_by_sort ON articles (sort_at DESC, id DESC);
-- speed up the browse page filtered to one feed
CREATE INDEX articles_by_feed ON articles (feed_id, sort_at DESC, id DESC);

-- Only the tap handlers insert here. Service order is (due_at, seq): due_at is the tap
-- time, moved earlier by the next-lane lead for "read next" taps (see Store.queue).
CREATE TABLE queue (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    article_id INTEGER NOT NULL UNIQUE REFERENCES articles(id) ON DELETE CASCADE,
    lane       TEXT NOT NULL DEFAULT 'normal' CHECK (lane IN ('normal', 'next')),
    tapped_at  REAL NOT NULL,
    due_at     REAL NOT NULL
);
-- speed up take_next and positions: the service order
CREATE INDEX queue_by_due ON queue (due_at, seq);

-- Live worker processes and how many articles each cleans at once: for wait estimates.
CREATE TABLE workers (
    name       TEXT PRIMARY KEY,
    slots      INTEGER NOT NULL,
    expires_at REAL NOT NULL
);

-- Who is extracting an article right now. One row per article at most; the holder
-- is identified by its ledger run, which fences renewals and releases.
CREATE TABLE claims (
    article_id INTEGER PRIMARY KEY REFERENCES articles(id) ON DELETE CASCADE,
    run_id     INTEGER NOT NULL,
    expires_at REAL NOT NULL
);

CREATE TABLE contents (
    article_id INTEGER PRIMARY KEY REFERENCES articles(id) ON DELETE CASCADE,
    title      TEXT,
    author     TEXT,
    published  TEXT,
    html       TEXT NOT NULL,    -- sanitized
    text       TEXT NOT NULL,
    words      INTEGER NOT NULL,
    cleaned_at REAL NOT NULL
);

-- The ledger: one row per extraction started. No foreign key: it outlives articles.
CREATE TABLE runs (
    id          INTEGER PRIMARY KEY,
    article_id  INTEGER NOT NULL,
    lane        TEXT NOT NULL CHECK (lane IN ('queue', 'direct')),
    worker      TEXT NOT NULL,
    started_at  REAL NOT NULL,
    finished_at REAL,
    outcome     TEXT CHECK (outcome IN ('cached', 'failed', 'abandoned')),
    error       TEXT
);
-- speed up /stats and the "is anything in flight" checks
CREATE INDEX runs_by_outcome ON runs (outcome);
"""

# Version 2: the library. Reading state, the summary as plain text, full-text search.
SCHEMA_V2_COLUMNS = """
-- reading state: when opened (or marked read; NULL = unread) and when starred
ALTER TABLE articles ADD COLUMN read_at REAL;
ALTER TABLE articles ADD COLUMN starred_at REAL;
-- the feed's summary as plain text: card excerpts and the search index
ALTER TABLE articles ADD COLUMN summary_text TEXT NOT NULL DEFAULT '';
-- speed up the starred filter
CREATE INDEX articles_starred ON articles (starred_at) WHERE starred_at IS NOT NULL;
-- speed up unread counts per feed
CREATE INDEX articles_unread ON articles (feed_id) WHERE read_at IS NULL;
-- speed up the failed filter: failures are rare, so a scan of the browse order would be long
CREATE INDEX articles_failed ON articles (sort_at DESC, id DESC) WHERE error IS NOT NULL;
-- speed up "is this link saved already"
CREATE INDEX articles_saved ON articles (url) WHERE feed_id IS NULL;
"""

# rowid = article id. Kept in step by triggers, so no code path can forget it.
SCHEMA_V2_SEARCH = """
CREATE VIRTUAL TABLE search USING fts5 (
    title, summary, body, tokenize = 'porter unicode61 remove_diacritics 2'
);
INSERT INTO search (rowid, title, summary, body)
    SELECT a.id, a.title, a.summary_text, coalesce(c.text, '')
    FROM articles a LEFT JOIN contents c ON c.article_id = a.id;
CREATE TRIGGER articles_search_insert AFTER INSERT ON articles BEGIN
    INSERT INTO search (rowid, title, summary, body) VALUES (new.id, new.title, new.summary_text, '');
END;
CREATE TRIGGER articles_search_update AFTER UPDATE OF title, summary_text ON articles BEGIN
    UPDATE search SET title = new.title, summary = new.summary_text WHERE rowid = new.id;
END;
CREATE TRIGGER articles_search_delete AFTER DELETE ON articles BEGIN
    DELETE FROM search WHERE rowid = old.id;
END;
CREATE TRIGGER contents_search AFTER INSERT ON contents BEGIN
    UPDATE search SET body = new.text WHERE rowid = new.article_id;
END;
"""


async def _run_script(db: aiosqlite.Connection, script: str) -> None:
    for statement in _statements(script):
        await db.execute(statement)


async def _v0_to_v1(db: aiosqlite.Connection) -> None:
    await _run_script(db, SCHEMA_V1)


async def _v1_to_v2(db: aiosqlite.Connection) -> None:
    await _run_script(db, SCHEMA_V2_COLUMNS)
    rows = list(await db.execute_fetchall("SELECT id, summary FROM articles WHERE summary != ''"))
    await db.executemany(
        "UPDATE articles SET summary_text = ? WHERE id = ?", [(plain_text(r["summary"]), r["id"]) for r in rows]
    )
    await _run_script(db, SCHEMA_V2_SEARCH)


# Version 3: the reading list is in the order articles were tapped, and the queue row that
# knew it is gone once an article is cleaned. The first tap is kept on the article itself;
# articles cleaned before this version take their first queued run's start (else their
# cleaning time), which is the order they were served in.
SCHEMA_V3 = """
ALTER TABLE articles ADD COLUMN tapped_at REAL;
UPDATE articles SET tapped_at = coalesce(
    (SELECT q.tapped_at FROM queue q WHERE q.article_id = articles.id),
    (SELECT min(r.started_at) FROM runs r WHERE r.article_id = articles.id AND r.lane = 'queue'),
    (SELECT c.cleaned_at FROM contents c WHERE c.article_id = articles.id)
);
"""


async def _v2_to_v3(db: aiosqlite.Connection) -> None:
    await _run_script(db, SCHEMA_V3)


# Version 4: a feed's note, a fact about its last refresh that is not a failure (today:
# how many items past the cap were left out); and an article's source, the name of the
# feed it came from, kept when unsubscribing turns it into a library item.
async def _v3_to_v4(db: aiosqlite.Connection) -> None:
    await db.execute("ALTER TABLE feeds ADD COLUMN note TEXT")
    await db.execute("ALTER TABLE articles ADD COLUMN source TEXT")


# Version 5: what a cleaning needs to stand on its own. An article's images, stored with it
# (served from reader, so the page works offline and no page makes the browser request
# another address); the raw page as fetched, compressed, so a better cleaner can run again
# without fetching it; and in the ledger, what kind of run each one was (a fetch, a
# reclean of the stored page, or a page the person's browser sent) and the bytes it took
# in (the page and its images).
SCHEMA_V5 = """
ALTER TABLE runs ADD COLUMN kind TEXT NOT NULL DEFAULT 'fetch' CHECK (kind IN ('fetch', 'reclean', 'browser'));
ALTER TABLE runs ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0;
CREATE TABLE images (
    article_id INTEGER NOT NULL REFERENCES articles(id) ON DELETE CASCADE,
    hash       TEXT NOT NULL,    -- sha256 of data, hex: its URL, so it can be cached forever
    source     TEXT NOT NULL,    -- the URL it came from: a reclean reuses it without a fetch
    type       TEXT NOT NULL,    -- sniffed from the bytes, never taken from the server
    data       BLOB NOT NULL,
    PRIMARY KEY (article_id, hash)
);
CREATE TABLE pages (
    article_id INTEGER PRIMARY KEY REFERENCES articles(id) ON DELETE CASCADE,
    url        TEXT NOT NULL,    -- after redirects: what relative links resolve against
    charset    TEXT,
    size       INTEGER NOT NULL, -- compressed bytes: what the budget counts
    data       BLOB NOT NULL,    -- zlib
    stored_at  REAL NOT NULL
);
-- speed up dropping the oldest raw pages past the budget
CREATE INDEX pages_by_age ON pages (stored_at);
-- a reclean replaces the text: the search index follows
CREATE TRIGGER contents_search_update AFTER UPDATE OF text ON contents BEGIN
    UPDATE search SET body = new.text WHERE rowid = new.article_id;
END;
"""


async def _v4_to_v5(db: aiosqlite.Connection) -> None:
    await _run_script(db, SCHEMA_V5)


# Version 6: moving in. Tags on articles, a folder on feeds, notes (highlights and
# annotations brought from other apps), and the ledger of content that came with an
# import: kept apart from `runs`, so started = cached + failed + ... stays about fetches.
SCHEMA_V6 = """
ALTER TABLE feeds ADD COLUMN folder TEXT;   -- NULL: in no folder; nested ones joined by ' / '
CREATE TABLE tags (
    id   INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE COLLATE NOCASE
);
CREATE TABLE article_tags (
    article_id INTEGER NOT NULL REFERENCES articles(id) ON DELETE CASCADE,
    tag_id     INTEGER NOT NULL REFERENCES tags(id) ON DELETE CASCADE,
    PRIMARY KEY (article_id, tag_id)
) WITHOUT ROWID;
-- speed up the tag filter: from a tag to its articles
CREATE INDEX article_tags_by_tag ON article_tags (tag_id, article_id);
CREATE TABLE notes (
    id         INTEGER PRIMARY KEY,
    article_id INTEGER NOT NULL REFERENCES articles(id) ON DELETE CASCADE,
    text       TEXT NOT NULL,
    comment    TEXT,
    created_at REAL
);
-- speed up the reader view's notes
CREATE INDEX notes_by_article ON notes (article_id, id);
-- content stored from an export instead of fetched: no run in the ledger for it
CREATE TABLE imported (
    article_id  INTEGER PRIMARY KEY REFERENCES articles(id) ON DELETE CASCADE,
    source      TEXT NOT NULL,
    imported_at REAL NOT NULL
);
-- speed up the library's order: when each link was saved
CREATE INDEX articles_by_added ON articles (added_at DESC, id DESC);
"""


async def _v5_to_v6(db: aiosqlite.Connection) -> None:
    await _run_script(db, SCHEMA_V6)


# Version 7: read anywhere. Where a person stopped in an article (a fraction of its text,
# with the time it was reached on their device, so a late sync from an offline phone never
# rolls back a newer place), and the actions a device sent with its own id, remembered
# with their answer, so one sent again after a lost connection is a no-op.
SCHEMA_V7 = """
ALTER TABLE articles ADD COLUMN read_position REAL;
ALTER TABLE articles ADD COLUMN read_position_at REAL;
CREATE TABLE actions (
    key    TEXT PRIMARY KEY,   -- the device's id for the action
    action TEXT NOT NULL,      -- what it asked for, e.g. "DELETE /api/articles/3/star"
    status INTEGER,            -- NULL while it is being applied
    answer TEXT,               -- the answer given, given again to a replay
    at     REAL NOT NULL
);
-- speed up forgetting old actions
CREATE INDEX actions_by_at ON actions (at);
"""


async def _v6_to_v7(db: aiosqlite.Connection) -> None:
    await _run_script(db, SCHEMA_V7)


# Version 8: when each article was cleaned, readable without its content. cleaned_at sits
# after the html and text in a contents row, so reading it walks every overflow page of a
# 25 KB article; the reading list's tap order falls back to it for every ready article
# (200 ms per neighbour lookup at 3,000 ready articles). This index holds it apart.
async def _v7_to_v8(db: aiosqlite.Connection) -> None:
    await db.execute("CREATE INDEX contents_cleaned ON contents (article_id, cleaned_at)")


# Version 9: the reading list's order, stored where an index can hold it, and its length
# (and an index for the latest finished runs). A ready article's
# place is its first tap, else its cleaning time (opened without a tap), then its id; as
# an expression over two tables it could not be indexed, so finding the next article
# scanned every ready one (35-50 ms a lookup at 100,000 articles, two per open). The key
# is NULL while the article is not ready, so its indexes hold only the ready articles,
# and `tap_order IS NOT NULL` is the ready state's own test. Triggers keep it in step
# with tapped_at and the contents row, so no writer (a tap, a cleaning, a reclean, an
# import, one in another process) can leave it behind.
SCHEMA_V9 = """
ALTER TABLE articles ADD COLUMN tap_order REAL;
UPDATE articles SET tap_order = (
    SELECT coalesce(articles.tapped_at, c.cleaned_at) FROM contents c WHERE c.article_id = articles.id
) WHERE id IN (SELECT article_id FROM contents);
-- speed up the ready list and reading through it: next and previous are one seek each
CREATE INDEX articles_by_tap ON articles (tap_order, id) WHERE tap_order IS NOT NULL;
-- the same for the reading list (ready and not done with: unread, or left short of the
-- end, records.FINISHED; written as store.base.NOT_DONE writes it, so the planner sees the
-- list's filter implies it), and its count in the nav
CREATE INDEX articles_to_read ON articles (tap_order, id)
    WHERE tap_order IS NOT NULL AND (read_at IS NULL OR read_position < 0.98);
-- only the computed order read it (v8)
DROP INDEX contents_cleaned;
-- speed up the wait estimates on every page with a queued card: the latest finished runs,
-- read from the newest end instead of sorting every run the ledger holds (38 ms at 4,000)
CREATE INDEX runs_by_finished ON runs (finished_at) WHERE outcome IN ('cached', 'failed');
CREATE TRIGGER contents_tap_insert AFTER INSERT ON contents BEGIN
    UPDATE articles SET tap_order = coalesce(tapped_at, new.cleaned_at) WHERE id = new.article_id;
END;
CREATE TRIGGER contents_tap_update AFTER UPDATE OF cleaned_at ON contents BEGIN
    UPDATE articles SET tap_order = coalesce(tapped_at, new.cleaned_at) WHERE id = new.article_id;
END;
CREATE TRIGGER contents_tap_delete AFTER DELETE ON contents BEGIN
    UPDATE articles SET tap_order = NULL WHERE id = old.article_id;
END;
CREATE TRIGGER articles_tap_update AFTER UPDATE OF tapped_at ON articles BEGIN
    UPDATE articles SET tap_order = (
        SELECT coalesce(new.tapped_at, c.cleaned_at) FROM contents c WHERE c.article_id = new.id
    ) WHERE id = new.id;
END;
-- The reading list's length (ready and not done with, as articles_to_read), shown in the
-- nav of every page: counted once here and kept by triggers, as counting even its index
-- cost 0.6 ms per page at 3,000.
CREATE TABLE reading_list (
    id       INTEGER PRIMARY KEY CHECK (id = 1),
    articles INTEGER NOT NULL
);
INSERT INTO reading_list (id, articles) VALUES (1, (
    SELECT count(*) FROM articles WHERE tap_order IS NOT NULL AND (read_at IS NULL OR read_position < 0.98)));
CREATE TRIGGER reading_list_update AFTER UPDATE OF tap_order, read_at, read_position ON articles
WHEN (old.tap_order IS NOT NULL AND (old.read_at IS NULL OR coalesce(old.read_position < 0.98, 0)))
  != (new.tap_order IS NOT NULL AND (new.read_at IS NULL OR coalesce(new.read_position < 0.98, 0)))
BEGIN
    UPDATE reading_list SET articles = articles + CASE
        WHEN new.tap_order IS NOT NULL AND (new.read_at IS NULL OR coalesce(new.read_position < 0.98, 0))
        THEN 1 ELSE -1 END;
END;
CREATE TRIGGER reading_list_insert AFTER INSERT ON articles
WHEN new.tap_order IS NOT NULL AND (new.read_at IS NULL OR coalesce(new.read_position < 0.98, 0))
BEGIN
    UPDATE reading_list SET articles = articles + 1;
END;
CREATE TRIGGER reading_list_delete AFTER DELETE ON articles
WHEN old.tap_order IS NOT NULL AND (old.read_at IS NULL OR coalesce(old.read_position < 0.98, 0))
BEGIN
    UPDATE reading_list SET articles = articles - 1;
END;
"""


async def _v8_to_v9(db: aiosqlite.Connection) -> None:
    await _run_script(db, SCHEMA_V9)


# Version 10: unread articles per feed, kept by triggers. The filter bar of every browse
# page and the feeds page show them, and counting them (a GROUP BY over the unread index)
# cost 30-50 ms a page at 100,000 articles. Saved links (no feed) count under feed 0, which
# no feed has (ids start at 1). A row may fall to 0 and stay: readers skip those.
SCHEMA_V10 = """
CREATE TABLE unread (
    feed     INTEGER PRIMARY KEY,  -- articles.feed_id, 0 for saved links
    articles INTEGER NOT NULL
);
INSERT INTO unread (feed, articles)
    SELECT coalesce(feed_id, 0), count(*) FROM articles WHERE read_at IS NULL GROUP BY coalesce(feed_id, 0);
CREATE TRIGGER unread_insert AFTER INSERT ON articles WHEN new.read_at IS NULL BEGIN
    INSERT INTO unread (feed, articles) VALUES (coalesce(new.feed_id, 0), 1)
        ON CONFLICT (feed) DO UPDATE SET articles = articles + 1;
END;
CREATE TRIGGER unread_delete AFTER DELETE ON articles WHEN old.read_at IS NULL BEGIN
    UPDATE unread SET articles = articles - 1 WHERE feed = coalesce(old.feed_id, 0);
END;
CREATE TRIGGER unread_update AFTER UPDATE OF read_at, feed_id ON articles
WHEN (old.read_at IS NULL) != (new.read_at IS NULL) OR old.feed_id IS NOT new.feed_id BEGIN
    UPDATE unread SET articles = articles - 1
        WHERE old.read_at IS NULL AND feed = coalesce(old.feed_id, 0);
    INSERT INTO unread (feed, articles) SELECT coalesce(new.feed_id, 0), 1 WHERE new.read_at IS NULL
        ON CONFLICT (feed) DO UPDATE SET articles = articles + 1;
END;
"""


async def _v9_to_v10(db: aiosqlite.Connection) -> None:
    await _run_script(db, SCHEMA_V10)


# Version 11: what a bulk read changed, so that its undo restores exactly the state
# before. A bulk read is done with an article left part-way (its place moves to the end);
# without the place it had, its undo could only bring it back unread at the start.
SCHEMA_V11 = """
CREATE TABLE read_undo (
    stamp            REAL NOT NULL,     -- the read_at the bulk read gave its articles
    article_id       INTEGER NOT NULL REFERENCES articles (id) ON DELETE CASCADE,
    read_at          REAL,              -- the article's state before it
    read_position    REAL,
    read_position_at REAL,
    PRIMARY KEY (stamp, article_id)
) WITHOUT ROWID;
-- deleting an article checks for its rows
CREATE INDEX read_undo_by_article ON read_undo (article_id);
"""


async def _v10_to_v11(db: aiosqlite.Connection) -> None:
    await _run_script(db, SCHEMA_V11)


# Version 12: one number that grows with every change an article's page can show, so
# that a reopened page is a read of this one row and a lookup in the rendered pages kept
# in memory (views.PAGE_CACHE_SIZE), instead of the article's 30 KB and a render. A page
# shows its article and content, the feed's name, its tags and notes, the reading list's
# length and its neighbours in a list (which move when any other article is added,
# read, starred, tagged, cleaned or moves in the tap order): every change to those
# tables counts, whichever process (a worker, the CLI) makes it. Counting more than a
# page needs only costs a render. The queue and claims are left out: a ready article's
# page does not show them, and the lists whose members they decide (queued, cleaning,
# new, failed) also change as claims expire, with no write at all, so a page opened
# from one of them is never kept by this version.
#
# Each trigger's name and what it fires on. A feed's refresh writes its bookkeeping (etag,
# error, ...), which no page shows, and its name again, unchanged: only a change counts.
_VERSIONED = [
    *((f"{table}_version_{event.lower()}", f"{event} ON {table}")
      for table in ("articles", "contents", "article_tags", "notes") for event in ("INSERT", "UPDATE", "DELETE")),
    ("feeds_version_update", "UPDATE OF title, folder ON feeds"
                             " WHEN old.title IS NOT new.title OR old.folder IS NOT new.folder"),
    ("feeds_version_delete", "DELETE ON feeds"),
    ("tags_version_update", "UPDATE ON tags"),
    ("tags_version_delete", "DELETE ON tags"),
]
SCHEMA_V12 = """
CREATE TABLE library_version (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    version INTEGER NOT NULL
);
INSERT INTO library_version (id, version) VALUES (1, 1);
""" + "".join(f"""CREATE TRIGGER {name} AFTER {event} BEGIN
    UPDATE library_version SET version = version + 1;
END;
""" for name, event in _VERSIONED)


async def _v11_to_v12(db: aiosqlite.Connection) -> None:
    await _run_script(db, SCHEMA_V12)


# Version 13: native apps sign in (reader/core/sync.py). An app password is made by
# `reader app-password add NAME` and shown once; only its salted scrypt hash is kept, with
# the digest of the Fever key it implies (Fever clients send md5("NAME:password"), so it
# is looked up by that) and a secret that signs the image URLs handed to that app. A
# sign-in (ClientLogin) gets a random token, kept hashed; revoking the password deletes
# its tokens in the same transaction, so every app signed in with it stops at once.
SCHEMA_V13 = """
CREATE TABLE app_passwords (
    id           INTEGER PRIMARY KEY,
    name         TEXT NOT NULL,     -- what the person called it; the user name apps send
    salt         BLOB NOT NULL,
    hash         BLOB NOT NULL,     -- hashlib.scrypt(password, salt), see core/sync.py
    fever_key    TEXT NOT NULL,     -- sha256 (hex) of md5("name:password") (hex)
    secret       TEXT NOT NULL,     -- signs the image URLs given to apps using it
    created_at   REAL NOT NULL,
    last_used_at REAL,
    revoked_at   REAL               -- NULL while it works
);
-- one live password per name (a revoked one's name may be used again); sign-in looks it up
CREATE UNIQUE INDEX app_passwords_by_name ON app_passwords (name COLLATE NOCASE) WHERE revoked_at IS NULL;
-- speed up Fever's sign-in, which sends only the key
CREATE INDEX app_passwords_by_fever_key ON app_passwords (fever_key) WHERE revoked_at IS NULL;
CREATE TABLE sync_tokens (
    hash         TEXT PRIMARY KEY,  -- sha256 (hex) of the token an app sends as GoogleLogin auth
    password_id  INTEGER NOT NULL REFERENCES app_passwords (id) ON DELETE CASCADE,
    created_at   REAL NOT NULL,
    last_used_at REAL NOT NULL
) WITHOUT ROWID;
-- revoking a password deletes its tokens
CREATE INDEX sync_tokens_by_password ON sync_tokens (password_id);
"""


async def _v12_to_v13(db: aiosqlite.Connection) -> None:
    await _run_script(db, SCHEMA_V13)


# Version 14: "read" and "done" are two facts. The reading list held what was ready and
# unread or left part-way, so opening an article and going back, or a bulk read of a feed,
# took it off; it now holds what is ready until it is done: read to the end
# (records.FINISHED) or said done. Each ready article that is off the list today is done
# as of when it was read, so nobody's list changes with the upgrade; the rest, ready or
# not, are not done. The list's index, its length and the triggers that keep it go by
# done_at alone.
SCHEMA_V14 = """
ALTER TABLE articles ADD COLUMN done_at REAL;
UPDATE articles SET done_at = read_at
    WHERE tap_order IS NOT NULL AND read_at IS NOT NULL AND coalesce(read_position >= 0.98, 1);
DROP INDEX articles_to_read;
CREATE INDEX articles_to_read ON articles (tap_order, id) WHERE tap_order IS NOT NULL AND done_at IS NULL;
DROP TRIGGER reading_list_update;
DROP TRIGGER reading_list_insert;
DROP TRIGGER reading_list_delete;
UPDATE reading_list SET articles = (
    SELECT count(*) FROM articles WHERE tap_order IS NOT NULL AND done_at IS NULL);
CREATE TRIGGER reading_list_update AFTER UPDATE OF tap_order, done_at ON articles
WHEN (old.tap_order IS NOT NULL AND old.done_at IS NULL) != (new.tap_order IS NOT NULL AND new.done_at IS NULL)
BEGIN
    UPDATE reading_list SET articles = articles + CASE
        WHEN new.tap_order IS NOT NULL AND new.done_at IS NULL THEN 1 ELSE -1 END;
END;
CREATE TRIGGER reading_list_insert AFTER INSERT ON articles
WHEN new.tap_order IS NOT NULL AND new.done_at IS NULL
BEGIN
    UPDATE reading_list SET articles = articles + 1;
END;
CREATE TRIGGER reading_list_delete AFTER DELETE ON articles
WHEN old.tap_order IS NOT NULL AND old.done_at IS NULL
BEGIN
    UPDATE reading_list SET articles = articles - 1;
END;
"""


async def _v13_to_v14(db: aiosqlite.Connection) -> None:
    await _run_script(db, SCHEMA_V14)


# Version 15: one article per link. Each article keeps the normal form of its URL
# (normalize_url: case, default port, fragment, tracking parameters, trailing slash), so a
# link saved, imported and carried by a feed is found as one article by an index seek
# instead of a second card whose tap fetched the page again; and when a person or an
# import saved it, so that a saved link a feed's article took in is still kept like one
# (unsubscribing keeps it, an export carries it). The copies made before are merged here,
# key by key, where at most one of them belongs to a feed (two feeds' articles of one link
# are another matter, left as they are): into the feed's one, else the oldest, nothing of
# any copy lost (see _merge_copy). The saved-link index by exact URL had only those
# lookups, which now go by the key.
SCHEMA_V15 = """
ALTER TABLE articles ADD COLUMN url_key TEXT;
ALTER TABLE articles ADD COLUMN saved_at REAL;
-- speed up "is this link here already", whatever its spelling
CREATE INDEX articles_by_key ON articles (url_key);
DROP INDEX articles_saved;
-- a link saved by hand or an import: saved when it was added (one kept from a feed it left was not)
UPDATE articles SET saved_at = added_at WHERE feed_id IS NULL AND source IS NULL;
"""


def url_key(url: str) -> str:
    """articles.url_key (v15): normalize_url, or the URL itself where it cannot be parsed
    (stored before reader checked every URL), so every article has one."""
    try:
        return normalize_url(url)
    except ValueError:
        return url


async def _v14_to_v15(db: aiosqlite.Connection) -> None:
    await _run_script(db, SCHEMA_V15)
    rows = list(await db.execute_fetchall("SELECT id, url FROM articles"))
    await db.executemany("UPDATE articles SET url_key = ? WHERE id = ?", [(url_key(r[1]), r[0]) for r in rows])
    # per link, the feed's article first, then the oldest: that one stays, the others merge into it
    copies: dict[str, list[int]] = {}
    for key, article in await db.execute_fetchall(
            """
            SELECT url_key, id FROM articles WHERE url_key IN (
                SELECT url_key FROM articles GROUP BY url_key HAVING count(*) > 1 AND count(feed_id) <= 1)
            ORDER BY url_key, feed_id IS NULL, added_at, id
            """):
        copies.setdefault(key, []).append(article)
    others = await _other_tables(db)
    pairs = [(ids[0], gone) for ids in copies.values() for gone in ids[1:]]
    for keep, gone in pairs:
        await _merge_copy(db, keep, gone, others)
    await _move_runs(db, pairs)


async def _other_tables(db: aiosqlite.Connection) -> list[str]:
    """The tables with an article_id column that _merge_copy does not know: it moves their rows."""
    return [table for (table,) in await db.execute_fetchall(
        "SELECT m.name FROM sqlite_master m, pragma_table_info(m.name) c WHERE m.type = 'table' AND c.name = 'article_id'")
        if table not in _MERGED_TABLES]


async def _move_runs(db: aiosqlite.Connection, pairs: Sequence[tuple[int, int]]) -> None:
    """The ledger's runs of merged copies (keep, gone) to the kept article, in one pass: it
    has no index by article, so a statement per copy read every run each time."""
    await db.execute("CREATE TEMP TABLE merged_into (gone INTEGER PRIMARY KEY, keep INTEGER NOT NULL)")
    await db.executemany("INSERT INTO merged_into (keep, gone) VALUES (?, ?)", pairs)
    await db.execute("UPDATE runs SET article_id = (SELECT keep FROM merged_into WHERE gone = runs.article_id)"
                     " WHERE article_id IN (SELECT gone FROM merged_into)")
    await db.execute("DROP TABLE temp.merged_into")


def _earliest(column: str) -> str:
    """The earlier of two times where either may be missing (SQL's min() of a NULL is NULL)."""
    return (f"{column} = CASE WHEN k.{column} IS NULL THEN g.{column} WHEN g.{column} IS NULL THEN k.{column}"
            f" ELSE min(k.{column}, g.{column}) END")


# The tables whose rows name an article and what _merge_copy does with them; a table with an
# article_id column that is not here (one a later step adds) has its rows moved as they are.
_MERGED_TABLES = {"contents", "images", "pages", "imported", "queue", "claims", "runs", "article_tags", "notes",
                  "read_undo"}


async def _merge_copy(db: aiosqlite.Connection, keep: int, gone: int, others: Sequence[str]) -> None:
    """Merge article `gone` into `keep`, two copies of one link, and delete it: read or
    starred if either was (and since the earlier time), the earlier time added, saved and
    first tapped, the newer reading place (as a device's sync decides), done as the copy
    whose text stays was (on the reading list or off it, as its card was), a title, summary,
    author and date where `keep` had none; the tags united, the notes moved. A text one of
    them has stays with the article (`keep`'s, else `gone`'s with its images, raw page and
    import record: a link that is ready is never fetched again for a copy); without one,
    `keep` stays in line if either was. The undo of a bulk read moves with it, and so do
    the rows of `others` (tables with an article_id column this step does not know), as
    they are; the ledger's runs are moved by the caller. Every count (unread, the reading
    list, the search index, the library's version) follows by its triggers, since only
    rows are written. Only the statements with something to move run: most copies are a
    bare saved link, and each statement is a trip to the database's thread."""
    ids = {"keep": keep, "gone": gone}

    def has(table: str, article: str) -> str:
        return f"EXISTS (SELECT 1 FROM {table} WHERE article_id = :{article})"

    [found] = await db.execute_fetchall(
        f"SELECT {has('contents', 'keep')}, {has('contents', 'gone')}, {has('pages', 'gone')}, {has('queue', 'gone')},"
        f" {has('article_tags', 'gone')}, {has('notes', 'gone')}, {has('read_undo', 'gone')}", ids)
    keep_text, gone_text, gone_page, gone_queued, gone_tags, gone_notes, gone_undo = map(bool, found)
    newer_place = ("g.read_position IS NOT NULL AND (k.read_position IS NULL"
                   " OR coalesce(g.read_position_at, 0) > coalesce(k.read_position_at, 0))")
    ready = "1" if keep_text or gone_text else "0"
    # done (v14) goes with the text that stays: the reading list keeps the card it showed
    done = ("done_at = k.done_at" if keep_text else "done_at = g.done_at" if gone_text
            else "done_at = coalesce(k.done_at, g.done_at)")
    await db.execute(
        f"""
        UPDATE articles AS k SET
            title = CASE WHEN k.title = k.url AND g.title != g.url THEN g.title ELSE k.title END,
            summary = CASE WHEN k.summary = '' THEN g.summary ELSE k.summary END,
            summary_text = CASE WHEN k.summary_text = '' THEN g.summary_text ELSE k.summary_text END,
            author = coalesce(k.author, g.author), published = coalesce(k.published, g.published),
            source = coalesce(k.source, g.source),
            sort_at = CASE WHEN k.feed_id IS NULL THEN min(k.sort_at, g.sort_at) ELSE k.sort_at END,
            added_at = min(k.added_at, g.added_at),
            {_earliest("read_at")}, {_earliest("starred_at")}, {_earliest("tapped_at")}, {_earliest("saved_at")},
            read_position = CASE WHEN {newer_place} THEN g.read_position ELSE k.read_position END,
            read_position_at = CASE WHEN {newer_place} THEN g.read_position_at ELSE k.read_position_at END,
            {done},
            error = CASE WHEN {ready} THEN NULL ELSE coalesce(k.error, g.error) END,
            failed_at = CASE WHEN {ready} THEN NULL WHEN k.error IS NOT NULL THEN k.failed_at ELSE g.failed_at END
        FROM articles AS g WHERE k.id = :keep AND g.id = :gone
        """,
        ids,
    )
    if gone_text and not keep_text:
        # the text, its images and raw page go over; its HTML names the images by article id
        await db.execute(
            """
            INSERT INTO contents (article_id, title, author, published, html, text, words, cleaned_at)
            SELECT :keep, title, author, published,
                   replace(html, '/articles/' || :gone || '/images/', '/articles/' || :keep || '/images/'),
                   text, words, cleaned_at
            FROM contents WHERE article_id = :gone
            """, ids)
        await db.execute("UPDATE OR IGNORE images SET article_id = :keep WHERE article_id = :gone", ids)
        await db.execute("INSERT OR IGNORE INTO imported (article_id, source, imported_at)"
                         " SELECT :keep, source, imported_at FROM imported WHERE article_id = :gone", ids)
        if gone_page:
            await db.execute("DELETE FROM pages WHERE article_id = :keep", ids)
        await db.execute("DELETE FROM queue WHERE article_id = :keep", ids)
    if gone_page and (gone_text or not keep_text):
        await db.execute("UPDATE OR IGNORE pages SET article_id = :keep WHERE article_id = :gone", ids)
    if gone_queued and not keep_text and not gone_text:
        await db.execute("UPDATE OR IGNORE queue SET article_id = :keep WHERE article_id = :gone", ids)
    if gone_tags:
        await db.execute("INSERT OR IGNORE INTO article_tags (article_id, tag_id)"
                         " SELECT :keep, tag_id FROM article_tags WHERE article_id = :gone", ids)
    if gone_notes:
        await db.execute(
            """
            UPDATE notes SET article_id = :keep WHERE article_id = :gone AND NOT EXISTS (
                SELECT 1 FROM notes n WHERE n.article_id = :keep AND n.text = notes.text
                AND n.comment IS notes.comment)
            """, ids)
    if gone_undo:
        await db.execute("UPDATE OR IGNORE read_undo SET article_id = :keep WHERE article_id = :gone", ids)
    for table in others:
        await db.execute(f'UPDATE OR IGNORE "{table}" SET article_id = :keep WHERE article_id = :gone', ids)
    await db.execute("DELETE FROM articles WHERE id = :gone", ids)  # what is left of it goes by its cascades


# Version 16: highlights made while reading (reader/core/highlights.py), anchored by quote
# and context and by offsets in the plain text (reader/clean/anchors.py). Existing notes
# stay notes: the notes table does not say which of them are quotes (wallabag's comment
# without a quote, Instapaper's selection and a note on a whole article look alike).
SCHEMA_V16 = """
CREATE TABLE highlights (
    id           INTEGER PRIMARY KEY,
    article_id   INTEGER NOT NULL REFERENCES articles(id) ON DELETE CASCADE,
    quote        TEXT NOT NULL,
    prefix       TEXT NOT NULL DEFAULT '',
    suffix       TEXT NOT NULL DEFAULT '',
    start_offset INTEGER,              -- [start, end) in contents.text; NULL: never placed
    end_offset   INTEGER,
    text_hash    TEXT,                 -- sha256 (hex) of the text last placed in; NULL: none yet
    note         TEXT NOT NULL DEFAULT '',
    color        TEXT NOT NULL DEFAULT 'yellow',
    tags         TEXT NOT NULL DEFAULT '[]',   -- a JSON list of names
    detached     INTEGER NOT NULL DEFAULT 0,   -- 1: not found in the text with confidence
    created_at   REAL NOT NULL,
    updated_at   REAL NOT NULL
);
CREATE INDEX highlights_by_article ON highlights (article_id, start_offset);
CREATE INDEX highlights_by_created ON highlights (created_at DESC, id DESC);
CREATE TABLE highlight_tags (
    name       TEXT PRIMARY KEY COLLATE NOCASE,
    highlights INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TRIGGER highlight_tags_insert AFTER INSERT ON highlights BEGIN
    INSERT INTO highlight_tags (name, highlights) SELECT value, 1 FROM json_each(new.tags) WHERE true
        ON CONFLICT (name) DO UPDATE SET highlights = highlights + 1;
END;
CREATE TRIGGER highlight_tags_delete AFTER DELETE ON highlights BEGIN
    UPDATE highlight_tags SET highlights = highlights - 1 WHERE name IN (SELECT value FROM json_each(old.tags));
    DELETE FROM highlight_tags WHERE highlights <= 0;
END;
CREATE TRIGGER highlight_tags_update AFTER UPDATE OF tags ON highlights WHEN old.tags IS NOT new.tags BEGIN
    UPDATE highlight_tags SET highlights = highlights - 1 WHERE name IN (SELECT value FROM json_each(old.tags));
    DELETE FROM highlight_tags WHERE highlights <= 0;
    INSERT INTO highlight_tags (name, highlights) SELECT value, 1 FROM json_each(new.tags) WHERE true
        ON CONFLICT (name) DO UPDATE SET highlights = highlights + 1;
END;
-- Highlights' words (quote, note, tags), searched by the highlights page: rowid = highlight
-- id, kept in step by the triggers below
CREATE VIRTUAL TABLE highlights_search USING fts5 (
    quote, note, tags, tokenize = 'porter unicode61 remove_diacritics 2'
);
-- a highlight made is found by its words
CREATE TRIGGER highlights_search_insert AFTER INSERT ON highlights BEGIN
    INSERT INTO highlights_search (rowid, quote, note, tags) VALUES (new.id, new.quote, new.note, new.tags);
END;
-- its note or tags changed
CREATE TRIGGER highlights_search_update AFTER UPDATE OF quote, note, tags ON highlights BEGIN
    UPDATE highlights_search SET quote = new.quote, note = new.note, tags = new.tags WHERE rowid = new.id;
END;
-- a deleted highlight is no longer found
CREATE TRIGGER highlights_search_delete AFTER DELETE ON highlights BEGIN
    DELETE FROM highlights_search WHERE rowid = old.id;
END;
""" + "".join(f"""CREATE TRIGGER highlights_version_{event.lower()} AFTER {event} ON highlights BEGIN
    UPDATE library_version SET version = version + 1;
END;
""" for event in ("INSERT", "UPDATE", "DELETE"))


async def _v15_to_v16(db: aiosqlite.Connection) -> None:
    await _run_script(db, SCHEMA_V16)


# Version 17: each cleaned article's word count beside its id, which a list's reading
# times read from this index alone: read from contents, `words` (stored after html and
# text) meant walking each row's overflow pages, 0.6 ms for a page of 50 ready articles.
SCHEMA_V17 = """
CREATE INDEX contents_words ON contents (article_id, words);
"""


async def _v16_to_v17(db: aiosqlite.Connection) -> None:
    await _run_script(db, SCHEMA_V17)


# Version 18: taming the firehose. Rules that hide, keep only, tag or star what arrives
# (and, on request, what is stored), the article's categories they match on, which rule
# hid an article and when (a hidden article is read and out of every list; showing it
# again brings back the unread state hiding took), what an apply to stored changed (for
# its undo), and a feed paused until a time. The unread counter counts shown articles only.
SCHEMA_V18 = """
ALTER TABLE feeds ADD COLUMN paused_until REAL;
ALTER TABLE articles ADD COLUMN categories TEXT NOT NULL DEFAULT '';
ALTER TABLE articles ADD COLUMN hidden_by INTEGER;
ALTER TABLE articles ADD COLUMN hidden_at REAL;
CREATE INDEX articles_hidden ON articles (sort_at DESC, id DESC) WHERE hidden_by IS NOT NULL;
CREATE INDEX feeds_paused ON feeds (paused_until) WHERE paused_until IS NOT NULL;
CREATE TABLE rules (
    id      INTEGER PRIMARY KEY,
    field   TEXT NOT NULL CHECK (field IN ('title', 'summary', 'author', 'category', 'url', 'age')),
    kind    TEXT NOT NULL CHECK (kind IN ('words', 'regex')),
    pattern TEXT NOT NULL,
    scope   TEXT NOT NULL DEFAULT 'all',
    action  TEXT NOT NULL,
    enabled INTEGER NOT NULL DEFAULT 1,
    created REAL NOT NULL
);
CREATE TABLE rule_undo (
    stamp      REAL NOT NULL,
    rule_id    INTEGER NOT NULL,
    article_id INTEGER NOT NULL REFERENCES articles (id) ON DELETE CASCADE,
    PRIMARY KEY (stamp, article_id)
) WITHOUT ROWID;
CREATE INDEX rule_undo_by_article ON rule_undo (article_id);
DROP TRIGGER unread_insert;
DROP TRIGGER unread_delete;
DROP TRIGGER unread_update;
CREATE TRIGGER unread_insert AFTER INSERT ON articles WHEN new.read_at IS NULL AND new.hidden_by IS NULL BEGIN
    INSERT INTO unread (feed, articles) VALUES (coalesce(new.feed_id, 0), 1)
        ON CONFLICT (feed) DO UPDATE SET articles = articles + 1;
END;
CREATE TRIGGER unread_delete AFTER DELETE ON articles WHEN old.read_at IS NULL AND old.hidden_by IS NULL BEGIN
    UPDATE unread SET articles = articles - 1 WHERE feed = coalesce(old.feed_id, 0);
END;
CREATE TRIGGER unread_update AFTER UPDATE OF read_at, feed_id, hidden_by ON articles
WHEN (old.read_at IS NULL AND old.hidden_by IS NULL) != (new.read_at IS NULL AND new.hidden_by IS NULL)
  OR old.feed_id IS NOT new.feed_id BEGIN
    UPDATE unread SET articles = articles - 1
        WHERE old.read_at IS NULL AND old.hidden_by IS NULL AND feed = coalesce(old.feed_id, 0);
    INSERT INTO unread (feed, articles) SELECT coalesce(new.feed_id, 0), 1
        WHERE new.read_at IS NULL AND new.hidden_by IS NULL
        ON CONFLICT (feed) DO UPDATE SET articles = articles + 1;
END;
"""


async def _v17_to_v18(db: aiosqlite.Connection) -> None:
    await _run_script(db, SCHEMA_V18)


# Version 19: one card per story. The same story from several feeds (the same link, or the
# same title from the same site within a few days) was a card per feed, each with its own
# read, star, tags and place in line, and each tap fetched the page again. An article now
# stays the first feed's, and every other feed carrying it is a row in `sources`, with its
# own unread count beside `unread` (see schema.sql). The copies made before are merged here:
# per link carried by two feeds or more, into the feed's article added first, nothing of any
# copy lost (_merge_copy), each other feed's copy becoming a source (a second copy in one
# feed, a feed that changed its guids, is left as it is). Saved copies of the link join it
# too. Titles are not merged here: an old library's look-alike titles are left apart.
SCHEMA_V19 = """
CREATE TABLE sources (
    feed_id    INTEGER NOT NULL REFERENCES feeds(id) ON DELETE CASCADE,
    guid       TEXT NOT NULL,
    article_id INTEGER NOT NULL REFERENCES articles(id) ON DELETE CASCADE,
    title      TEXT NOT NULL,
    published  REAL,
    added_at   REAL NOT NULL,
    sort_at    REAL NOT NULL,
    PRIMARY KEY (feed_id, guid)
) WITHOUT ROWID;
CREATE UNIQUE INDEX sources_by_article ON sources (article_id, feed_id);
CREATE INDEX sources_by_feed ON sources (feed_id, sort_at DESC, article_id DESC);
CREATE TRIGGER sources_sort_update AFTER UPDATE OF sort_at ON articles WHEN old.sort_at != new.sort_at BEGIN
    UPDATE sources SET sort_at = new.sort_at WHERE article_id = new.id;
END;
CREATE INDEX articles_by_title ON articles (title);
CREATE TABLE unread_sources (
    feed     INTEGER PRIMARY KEY,
    articles INTEGER NOT NULL
);
CREATE TRIGGER sources_unread_insert AFTER INSERT ON sources
WHEN (SELECT read_at IS NULL FROM articles WHERE id = new.article_id) BEGIN
    INSERT INTO unread_sources (feed, articles) VALUES (new.feed_id, 1)
        ON CONFLICT (feed) DO UPDATE SET articles = articles + 1;
END;
CREATE TRIGGER sources_unread_delete AFTER DELETE ON sources
WHEN (SELECT read_at IS NULL FROM articles WHERE id = old.article_id) BEGIN
    UPDATE unread_sources SET articles = articles - 1 WHERE feed = old.feed_id;
END;
CREATE TRIGGER sources_unread_read AFTER UPDATE OF read_at ON articles
WHEN (old.read_at IS NULL) != (new.read_at IS NULL) BEGIN
    INSERT INTO unread_sources (feed, articles)
        SELECT feed_id, CASE WHEN new.read_at IS NULL THEN 1 ELSE -1 END FROM sources WHERE article_id = new.id
        ON CONFLICT (feed) DO UPDATE SET articles = articles + excluded.articles;
END;
CREATE TRIGGER sources_unread_gone BEFORE DELETE ON articles WHEN old.read_at IS NULL BEGIN
    UPDATE unread_sources SET articles = articles - 1
        WHERE feed IN (SELECT feed_id FROM sources WHERE article_id = old.id);
END;
"""


async def _v18_to_v19(db: aiosqlite.Connection) -> None:
    await _run_script(db, SCHEMA_V19)
    # per link in two feeds or more: the feed's article added first stays, the others merge into it
    copies: dict[str, list[tuple[int, int | None, str, str, float | None, float]]] = {}
    for key, *row in await db.execute_fetchall(
            """
            SELECT url_key, id, feed_id, guid, title, published, added_at FROM articles WHERE url_key IN (
                SELECT url_key FROM articles WHERE feed_id IS NOT NULL GROUP BY url_key
                HAVING count(DISTINCT feed_id) > 1)
            ORDER BY url_key, feed_id IS NULL, added_at, id
            """):
        copies.setdefault(key, []).append(tuple(row))
    others = await _other_tables(db)
    pairs = []
    for (keep, feed, *_), *rest in copies.values():
        feeds = {feed}
        for gone, gone_feed, guid, title, published, added in rest:
            if gone_feed in feeds:
                continue
            if gone_feed is not None:
                feeds.add(gone_feed)
                await db.execute(
                    "INSERT INTO sources (feed_id, guid, article_id, title, published, added_at, sort_at)"
                    " SELECT ?, ?, id, ?, ?, ?, sort_at FROM articles WHERE id = ?",
                    (gone_feed, guid, title, published, added, keep))
            await _merge_copy(db, keep, gone, others)
            pairs.append((keep, gone))
    await _move_runs(db, pairs)


# Version 20: when each article's highlights last changed, as the library's version then
# (kept by triggers): the reader view keeps an article's highlights and marks by it and
# reads them again only when it moved. Articles with highlights start at today's version.
SCHEMA_V20 = """
CREATE TABLE highlight_changes (
    article_id INTEGER PRIMARY KEY,
    version    INTEGER NOT NULL
);
CREATE TRIGGER highlight_changes_insert AFTER INSERT ON highlights BEGIN
    INSERT INTO highlight_changes (article_id, version) VALUES (new.article_id, (SELECT version FROM library_version))
        ON CONFLICT (article_id) DO UPDATE SET version = excluded.version;
END;
CREATE TRIGGER highlight_changes_update AFTER UPDATE ON highlights BEGIN
    INSERT INTO highlight_changes (article_id, version) VALUES (new.article_id, (SELECT version FROM library_version))
        ON CONFLICT (article_id) DO UPDATE SET version = excluded.version;
    INSERT INTO highlight_changes (article_id, version) SELECT old.article_id, (SELECT version FROM library_version)
        WHERE old.article_id IS NOT new.article_id
        ON CONFLICT (article_id) DO UPDATE SET version = excluded.version;
END;
CREATE TRIGGER highlight_changes_delete AFTER DELETE ON highlights BEGIN
    INSERT INTO highlight_changes (article_id, version) VALUES (old.article_id, (SELECT version FROM library_version))
        ON CONFLICT (article_id) DO UPDATE SET version = excluded.version;
END;
INSERT INTO highlight_changes (article_id, version)
    SELECT DISTINCT article_id, (SELECT version FROM library_version) FROM highlights;
"""


async def _v19_to_v20(db: aiosqlite.Connection) -> None:
    await _run_script(db, SCHEMA_V20)


# Version 21: why a cleaned text may be only the article's start (a teaser behind a paywall,
# a body shorter than the feed's summary: reader/clean/partial.py). NULL for every article
# cleaned before: nothing was known of them, and `reader reclean` fills it in.
async def _v20_to_v21(db: aiosqlite.Connection) -> None:
    await db.execute("ALTER TABLE contents ADD COLUMN partial TEXT")


# Version 22: the web form's imports and their reports, kept across restarts. The report
# page, its "Queue the N unread links" and GET /api/imports/{n} used to live in the server's
# memory: after a restart the link answered 404, and the next import took the same number.
# `outcome` is the report as JSON; `article_ids` its links' articles as packed 8-byte
# integers (100,000 links are 800 kB); `finished_at` NULL with no process running it is an
# import a restart cut short.
SCHEMA_V22 = """
CREATE TABLE imports (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    started_at REAL NOT NULL,
    finished_at REAL,
    error TEXT,
    outcome TEXT,
    article_ids BLOB
);
"""


async def _v21_to_v22(db: aiosqlite.Connection) -> None:
    await _run_script(db, SCHEMA_V22)


# Version 23: how far an age rule has looked (rules.swept_at). An age rule decided an
# article's fate only as it arrived, so one that arrived fresh stayed shown once it was
# older than the rule's days; the refresher now sweeps the articles that grew old since the
# last sweep (feeds/refresh.py: sweep_aged), never one a person showed again. NULL: from the
# rule's creation. The rules there are when it is added sweep from that moment: what grew
# old before the upgrade was left shown by the rule, and may be an article a person showed
# again, which the sweep must not take from them.
async def _v22_to_v23(db: aiosqlite.Connection) -> None:
    await db.execute("ALTER TABLE rules ADD COLUMN swept_at REAL")
    await db.execute("UPDATE rules SET swept_at = (julianday('now') - 2440587.5) * 86400.0")


# Version 24: the search indexes leave out the characters a browser never shows (the soft
# hyphen, the zero-width space, the word joiner, the zero-width no-break space). FTS5's
# tokenizer takes them for separators, so a page that marks where its long words may break
# ("Mag&shy;da&shy;le&shy;ner", common on German sites) could not be found by its words.
# The texts keep them as the page has them (a scorer, a copy, a quote); only what is indexed, and
# what is searched for (search.fts_terms), goes without. Rows indexed before are indexed
# again when their text holds one.
def _visible(expression: str) -> str:
    """SQL for the text of expression without the characters a browser never shows."""
    for code in INVISIBLE_CODES:
        expression = f"replace({expression}, char({code}), '')"
    return expression


def _holds_invisible(*columns: str) -> str:
    return " OR ".join(f"instr({column}, char({code})) > 0" for column in columns for code in INVISIBLE_CODES)


# The search triggers as v24 writes them (schema.sql holds the same text): each indexes what
# it indexed before, through _visible.
_V24_TRIGGERS = {
    "articles_search_insert": ("AFTER INSERT ON articles",
                               "INSERT INTO search (rowid, title, summary, body) VALUES "
                               f"(new.id, {_visible('new.title')}, {_visible('new.summary_text')}, '');"),
    "articles_search_update": ("AFTER UPDATE OF title, summary_text ON articles",
                               f"UPDATE search SET title = {_visible('new.title')}, "
                               f"summary = {_visible('new.summary_text')} WHERE rowid = new.id;"),
    "contents_search": ("AFTER INSERT ON contents",
                        f"UPDATE search SET body = {_visible('new.text')} WHERE rowid = new.article_id;"),
    "contents_search_update": ("AFTER UPDATE OF text ON contents",
                               f"UPDATE search SET body = {_visible('new.text')} WHERE rowid = new.article_id;"),
    "highlights_search_insert": ("AFTER INSERT ON highlights",
                                 "INSERT INTO highlights_search (rowid, quote, note, tags) VALUES "
                                 f"(new.id, {_visible('new.quote')}, {_visible('new.note')}, new.tags);"),
    "highlights_search_update": ("AFTER UPDATE OF quote, note, tags ON highlights",
                                 f"UPDATE highlights_search SET quote = {_visible('new.quote')}, "
                                 f"note = {_visible('new.note')}, tags = new.tags WHERE rowid = new.id;"),
}
SCHEMA_V24 = "\n".join(f"DROP TRIGGER {name};\nCREATE TRIGGER {name} {when} BEGIN\n    {body}\nEND;"
                       for name, (when, body) in _V24_TRIGGERS.items())


async def _v23_to_v24(db: aiosqlite.Connection) -> None:
    await _run_script(db, SCHEMA_V24)
    body = _visible("coalesce(c.text, '')")
    await db.execute(
        f"UPDATE search SET title = {_visible('a.title')}, summary = {_visible('a.summary_text')}, body = {body}"
        " FROM articles a LEFT JOIN contents c ON c.article_id = a.id"
        f" WHERE search.rowid = a.id AND ({_holds_invisible('a.title', 'a.summary_text', 'c.text')})")
    await db.execute(
        f"UPDATE highlights_search SET quote = {_visible('h.quote')}, note = {_visible('h.note')}"
        f" FROM highlights h WHERE highlights_search.rowid = h.id AND ({_holds_invisible('h.quote', 'h.note')})")


# MIGRATIONS[n] takes a database from user_version n to n + 1, inside one transaction.
MIGRATIONS: list[Callable[[aiosqlite.Connection], Awaitable[None]]] = [
    _v0_to_v1, _v1_to_v2, _v2_to_v3, _v3_to_v4, _v4_to_v5, _v5_to_v6, _v6_to_v7, _v7_to_v8, _v8_to_v9,
    _v9_to_v10, _v10_to_v11, _v11_to_v12, _v12_to_v13, _v13_to_v14, _v14_to_v15, _v15_to_v16,
    _v16_to_v17, _v17_to_v18, _v18_to_v19, _v19_to_v20, _v20_to_v21, _v21_to_v22, _v22_to_v23, _v23_to_v24]


# Tables every reader database has had since version 1.
OWN_TABLES = ("feeds", "articles", "queue", "claims", "contents", "runs")


def schema_problem(version: int, tables: set[str]) -> str | None:
    """Why a file holding these tables at this user_version is not a database this reader
    may use, or None. A file of another program (any SQLite file named with --db) got
    reader's tables added to it and was switched to WAL; one made by a newer reader was a
    traceback."""
    if version > len(MIGRATIONS):
        return (f"its schema version {version} is newer than this reader ({len(MIGRATIONS)}): it was made by a"
                " newer reader; run that one (or `reader export` with it, then import here)")
    if tables and not set(OWN_TABLES) <= tables:
        return "it is an SQLite database of another program, not reader's: give reader a file of its own"
    return None


async def check_schema(db: aiosqlite.Connection) -> None:
    """Before anything is written: raise StorageError if the file is not one this reader
    may use (schema_problem)."""
    version = (await db.execute_fetchall("PRAGMA user_version"))
    tables = {row[0] for row in await db.execute_fetchall("SELECT name FROM sqlite_master WHERE type = 'table'")}
    problem = schema_problem(list(version)[0][0], tables)
    if problem:
        raise StorageError(f"the database file cannot be used: {problem}", "foreign")


async def migrate(db: aiosqlite.Connection) -> None:
    """Bring the file to the current schema: a new (empty) file is made from schema.sql,
    an older one takes the steps after its user_version, each in its own transaction."""
    await check_schema(db)
    version = await _user_version(db)
    if version == 0 and not list(await db.execute_fetchall("SELECT 1 FROM sqlite_master")):
        async with _transaction(db):
            await _run_script(db, SCHEMA)
        # schema.sql sets its own version; were it behind MIGRATIONS, the steps below
        # would still finish the job (and tests/store/test_schema.py would fail)
        version = await _user_version(db)
    for step in range(version, len(MIGRATIONS)):
        async with _transaction(db):
            await MIGRATIONS[step](db)
            await db.execute(f"PRAGMA user_version = {step + 1}")


async def _user_version(db: aiosqlite.Connection) -> int:
    rows = list(await db.execute_fetchall("PRAGMA user_version"))
    return int(rows[0][0])


@contextlib.asynccontextmanager
async def _transaction(db: aiosqlite.Connection) -> AsyncIterator[None]:
    await db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        await db.execute("ROLLBACK")
        raise
    await db.execute("COMMIT")


def _statements(script: str) -> list[str]:
    """Split a migration script into statements (executescript would commit on its own)."""
    statements, current = [], []
    for line in script.splitlines():
        current.append(line)
        candidate = "\n".join(current)
        if sqlite3.complete_statement(candidate):
            statements.append(candidate.strip())
            current = []
    return [s for s in statements if s and s != ";"]

