-- reader's database, schema version 21: every table, index and trigger, and what each is for.
--
-- A new file is made from this script (schema.py). A file made by an older reader gets here
-- by the numbered migrations in schema.py instead, and tests/store/test_schema.py checks that
-- both give the same tables, columns, indexes and triggers. A change to the schema is a new
-- migration and an edit of this file, in the same commit.
--
-- Times are Unix seconds (REAL). An article's state (new, queued, cleaning, ready, failed)
-- is never stored: store/base.py derives it from its rows in queue, claims and contents, so
-- it cannot drift from them. Columns sit in the order the migrations added them.


-- == Feeds and their articles ==================================================================

-- One row per subscription, with what its last refresh learnt.
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
    error         TEXT,          -- why the last attempt failed; NULL when it worked
    note          TEXT,          -- a fact about the last refresh that is not a failure: items past the cap
    folder        TEXT,          -- NULL: in no folder; nested ones joined by ' / '
    paused_until  REAL           -- its articles hidden and not counted unread until then (core/rules.py)
);
-- speed up every list's "not of a paused feed" (store.base.SHOWN): a seek, not a scan of every feed
CREATE INDEX feeds_paused ON feeds (paused_until) WHERE paused_until IS NOT NULL;

-- Every headline a feed brought, and every link saved by hand (no feed), with its reading
-- state. Its text, once cleaned, is in contents.
CREATE TABLE articles (
    id               INTEGER PRIMARY KEY,
    feed_id          INTEGER REFERENCES feeds(id) ON DELETE CASCADE,   -- NULL: a saved link
    guid             TEXT NOT NULL,
    url              TEXT NOT NULL,
    title            TEXT NOT NULL,
    summary          TEXT NOT NULL DEFAULT '',   -- the feed's own text, sanitized HTML
    author           TEXT,
    published        REAL,
    sort_at          REAL NOT NULL,              -- published, else first seen: browse order
    added_at         REAL NOT NULL,
    error            TEXT,                       -- why the last extraction failed
    failed_at        REAL,
    read_at          REAL,                       -- opened or marked read; NULL: unread
    starred_at       REAL,
    summary_text     TEXT NOT NULL DEFAULT '',   -- the summary as plain text: card excerpts, the search index
    tapped_at        REAL,                       -- the first tap: the reading list's order
    source           TEXT,                       -- its feed's name, kept when unsubscribing makes it a library item
    -- where a person stopped, as a fraction of the text (records.FINISHED and past: the end), and
    -- when their device reached it, so a late sync from an offline phone never rolls back a newer place
    read_position    REAL,
    read_position_at REAL,
    -- the reading list's order, kept by the triggers below: the first tap, else the cleaning
    -- time (opened without a tap). NULL while not ready, so `tap_order IS NOT NULL` is the ready
    -- state's own test and the indexes on it hold only ready articles
    tap_order        REAL,
    -- done with it: read to the end (records.FINISHED) or said done. NULL: not done, so a
    -- ready article is on the reading list whether it was opened or not
    done_at          REAL,
    -- normalize_url(url) (schema.url_key): every spelling of one link has the same, so a link
    -- saved, imported and carried by a feed is one article
    url_key          TEXT,
    saved_at         REAL,                       -- saved by a person or an import: kept like a saved link
    categories       TEXT NOT NULL DEFAULT '',   -- the feed's categories for it, one a line: what rules match
    -- the rule that hid it (a hidden article is read and out of every list and count) and
    -- when: showing it again makes it unread if hiding is what made it read
    hidden_by        INTEGER,
    hidden_at        REAL,
    UNIQUE (feed_id, guid)
);
-- speed up the browse page: newest first, keyset pagination on (sort_at, id)
CREATE INDEX articles_by_sort ON articles (sort_at DESC, id DESC);
-- speed up the browse page filtered to one feed
CREATE INDEX articles_by_feed ON articles (feed_id, sort_at DESC, id DESC);
-- speed up the starred filter
CREATE INDEX articles_starred ON articles (starred_at) WHERE starred_at IS NOT NULL;
-- made to speed up unread counts per feed (v2), which the unread table keeps since v10; left for
-- the unread filter of one feed, though the planner picks articles_by_feed for it on a new file
CREATE INDEX articles_unread ON articles (feed_id) WHERE read_at IS NULL;
-- speed up the failed filter: failures are rare, so a scan of the browse order would be long
CREATE INDEX articles_failed ON articles (sort_at DESC, id DESC) WHERE error IS NOT NULL;
-- speed up "is this link here already", whatever its spelling
CREATE INDEX articles_by_key ON articles (url_key);
-- speed up the library's order: when each link was saved
CREATE INDEX articles_by_added ON articles (added_at DESC, id DESC);
-- speed up the ready list and reading through it: next and previous are one seek each
CREATE INDEX articles_by_tap ON articles (tap_order, id) WHERE tap_order IS NOT NULL;
-- the same for the reading list: ready and not done, written as store.base.NOT_DONE writes
-- it, so the planner sees that the list's filter implies it
CREATE INDEX articles_to_read ON articles (tap_order, id) WHERE tap_order IS NOT NULL AND done_at IS NULL;
-- speed up the "hidden by rules" view: hidden articles, newest first
CREATE INDEX articles_hidden ON articles (sort_at DESC, id DESC) WHERE hidden_by IS NOT NULL;


-- == Full-text search ==========================================================================

-- Titles, summaries and cleaned texts, searched by /search. rowid = article id, kept in step by
-- the triggers below, so no code path can forget it.
CREATE VIRTUAL TABLE search USING fts5 (
    title, summary, body, tokenize = 'porter unicode61 remove_diacritics 2'
);
-- a new article is searchable by its title and summary at once; its body comes with its text
CREATE TRIGGER articles_search_insert AFTER INSERT ON articles BEGIN
    INSERT INTO search (rowid, title, summary, body) VALUES (new.id, replace(replace(replace(replace(new.title, char(173), ''), char(8203), ''), char(8288), ''), char(65279), ''), replace(replace(replace(replace(new.summary_text, char(173), ''), char(8203), ''), char(8288), ''), char(65279), ''), '');
END;
-- a refresh that renames an article or changes its summary
CREATE TRIGGER articles_search_update AFTER UPDATE OF title, summary_text ON articles BEGIN
    UPDATE search SET title = replace(replace(replace(replace(new.title, char(173), ''), char(8203), ''), char(8288), ''), char(65279), ''), summary = replace(replace(replace(replace(new.summary_text, char(173), ''), char(8203), ''), char(8288), ''), char(65279), '') WHERE rowid = new.id;
END;
-- a deleted article is no longer found
CREATE TRIGGER articles_search_delete AFTER DELETE ON articles BEGIN
    DELETE FROM search WHERE rowid = old.id;
END;


-- == The line: taps, claims, workers ===========================================================

-- Articles waiting to be cleaned. Only the tap handlers insert here. Service order is
-- (due_at, seq): due_at is the tap time, moved earlier by the next lane's lead for "read next"
-- taps (see Store.queue). A row stays while its article is being cleaned.
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

-- Who is extracting an article right now. One row per article at most; the holder is
-- identified by its ledger run, which fences renewals and releases. A claim past its
-- expires_at counts as gone: a worker that died leaves nothing held.
CREATE TABLE claims (
    article_id INTEGER PRIMARY KEY REFERENCES articles(id) ON DELETE CASCADE,
    run_id     INTEGER NOT NULL,
    expires_at REAL NOT NULL
);


-- == Cleaned articles ==========================================================================

-- An article's cleaned text: its row is what makes the article ready.
CREATE TABLE contents (
    article_id INTEGER PRIMARY KEY REFERENCES articles(id) ON DELETE CASCADE,
    title      TEXT,
    author     TEXT,
    published  TEXT,
    html       TEXT NOT NULL,    -- sanitized
    text       TEXT NOT NULL,
    words      INTEGER NOT NULL,
    cleaned_at REAL NOT NULL,
    partial    TEXT              -- why the text may be only the article's start (clean/partial.py); NULL: whole
);
-- a list's reading times read the words from here: in contents they come after html and
-- text, which a row's overflow pages hold
CREATE INDEX contents_words ON contents (article_id, words);
-- a cleaned article is found by its text
CREATE TRIGGER contents_search AFTER INSERT ON contents BEGIN
    UPDATE search SET body = replace(replace(replace(replace(new.text, char(173), ''), char(8203), ''), char(8288), ''), char(65279), '') WHERE rowid = new.article_id;
END;
-- a reclean replaces the text: the search index follows
CREATE TRIGGER contents_search_update AFTER UPDATE OF text ON contents BEGIN
    UPDATE search SET body = replace(replace(replace(replace(new.text, char(173), ''), char(8203), ''), char(8288), ''), char(65279), '') WHERE rowid = new.article_id;
END;

-- An article's images, stored with it: served from reader, so its page works offline and
-- makes the browser request no other address.
CREATE TABLE images (
    article_id INTEGER NOT NULL REFERENCES articles(id) ON DELETE CASCADE,
    hash       TEXT NOT NULL,    -- sha256 of data, hex: its URL, so it can be cached forever
    source     TEXT NOT NULL,    -- the URL it came from: a reclean reuses it without a fetch
    type       TEXT NOT NULL,    -- sniffed from the bytes, never taken from the server
    data       BLOB NOT NULL,
    PRIMARY KEY (article_id, hash)
);

-- The raw page as fetched, compressed, so a better cleaner can run again without fetching
-- it. All of them together are kept under a budget (Store.raw_pages_budget), oldest dropped.
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


-- == The ledger ================================================================================

-- One row per extraction started, kept after it ends: /stats, wait estimates, and the count of
-- crashed runs that makes an article fail. No foreign key: it outlives articles.
CREATE TABLE runs (
    id          INTEGER PRIMARY KEY,
    article_id  INTEGER NOT NULL,
    lane        TEXT NOT NULL CHECK (lane IN ('queue', 'direct')),
    worker      TEXT NOT NULL,
    started_at  REAL NOT NULL,
    finished_at REAL,
    outcome     TEXT CHECK (outcome IN ('cached', 'failed', 'abandoned')),
    error       TEXT,
    -- a fetch of the page, a reclean of the stored raw page, or a page the person's browser sent
    kind        TEXT NOT NULL DEFAULT 'fetch' CHECK (kind IN ('fetch', 'reclean', 'browser')),
    bytes       INTEGER NOT NULL DEFAULT 0   -- taken in: the page and its images
);
-- speed up /stats and the "is anything in flight" checks
CREATE INDEX runs_by_outcome ON runs (outcome);
-- speed up the wait estimates on every page with a queued card: the latest finished runs,
-- read from the newest end instead of sorting every run the ledger holds (38 ms at 4,000)
CREATE INDEX runs_by_finished ON runs (finished_at) WHERE outcome IN ('cached', 'failed');


-- == The reading list's order and length =======================================================

-- articles.tap_order kept in step with tapped_at and the contents row, so no writer (a tap, a
-- cleaning, a reclean, an import, one in another process) can leave it behind.
-- cleaned: ready, in the list at its first tap, else now
CREATE TRIGGER contents_tap_insert AFTER INSERT ON contents BEGIN
    UPDATE articles SET tap_order = coalesce(tapped_at, new.cleaned_at) WHERE id = new.article_id;
END;
-- cleaned again
CREATE TRIGGER contents_tap_update AFTER UPDATE OF cleaned_at ON contents BEGIN
    UPDATE articles SET tap_order = coalesce(tapped_at, new.cleaned_at) WHERE id = new.article_id;
END;
-- its text gone: no longer ready
CREATE TRIGGER contents_tap_delete AFTER DELETE ON contents BEGIN
    UPDATE articles SET tap_order = NULL WHERE id = old.article_id;
END;
-- a first tap on an article that was cleaned without one
CREATE TRIGGER articles_tap_update AFTER UPDATE OF tapped_at ON articles BEGIN
    UPDATE articles SET tap_order = (
        SELECT coalesce(new.tapped_at, c.cleaned_at) FROM contents c WHERE c.article_id = new.id
    ) WHERE id = new.id;
END;

-- The reading list's length (ready and not done, as articles_to_read), shown in the nav of
-- every page: one row, kept by the triggers below, as counting even its index cost 0.6 ms
-- per page at 3,000.
CREATE TABLE reading_list (
    id       INTEGER PRIMARY KEY CHECK (id = 1),
    articles INTEGER NOT NULL
);
INSERT INTO reading_list (id, articles) VALUES (1, 0);
-- an article joins or leaves the list: ready, done, or not done again
CREATE TRIGGER reading_list_update AFTER UPDATE OF tap_order, done_at ON articles
WHEN (old.tap_order IS NOT NULL AND old.done_at IS NULL) != (new.tap_order IS NOT NULL AND new.done_at IS NULL)
BEGIN
    UPDATE reading_list SET articles = articles + CASE
        WHEN new.tap_order IS NOT NULL AND new.done_at IS NULL THEN 1 ELSE -1 END;
END;
-- an article inserted ready and not done: no writer does today, but the count must not
-- rely on that
CREATE TRIGGER reading_list_insert AFTER INSERT ON articles
WHEN new.tap_order IS NOT NULL AND new.done_at IS NULL
BEGIN
    UPDATE reading_list SET articles = articles + 1;
END;
-- an article in the list deleted
CREATE TRIGGER reading_list_delete AFTER DELETE ON articles
WHEN old.tap_order IS NOT NULL AND old.done_at IS NULL
BEGIN
    UPDATE reading_list SET articles = articles - 1;
END;


-- == Unread counts =============================================================================

-- Unread articles per feed, for the filter bar of every browse page and the feeds page:
-- counting them (a GROUP BY over the unread index) cost 30-50 ms a page at 100,000 articles.
-- A row may fall to 0 and stay: readers skip those.
CREATE TABLE unread (
    feed     INTEGER PRIMARY KEY,  -- articles.feed_id, 0 for saved links (feed ids start at 1)
    articles INTEGER NOT NULL
);
-- a new unread article (a hidden one is not counted: store/rules.py)
CREATE TRIGGER unread_insert AFTER INSERT ON articles WHEN new.read_at IS NULL AND new.hidden_by IS NULL BEGIN
    INSERT INTO unread (feed, articles) VALUES (coalesce(new.feed_id, 0), 1)
        ON CONFLICT (feed) DO UPDATE SET articles = articles + 1;
END;
-- an unread article deleted
CREATE TRIGGER unread_delete AFTER DELETE ON articles WHEN old.read_at IS NULL AND old.hidden_by IS NULL BEGIN
    UPDATE unread SET articles = articles - 1 WHERE feed = coalesce(old.feed_id, 0);
END;
-- read, unread again, hidden, shown again, or moved to another feed (unsubscribing makes it
-- a saved link)
CREATE TRIGGER unread_update AFTER UPDATE OF read_at, feed_id, hidden_by ON articles
WHEN (old.read_at IS NULL AND old.hidden_by IS NULL) != (new.read_at IS NULL AND new.hidden_by IS NULL)
  OR old.feed_id IS NOT new.feed_id BEGIN
    UPDATE unread SET articles = articles - 1
        WHERE old.read_at IS NULL AND old.hidden_by IS NULL AND feed = coalesce(old.feed_id, 0);
    INSERT INTO unread (feed, articles) SELECT coalesce(new.feed_id, 0), 1
        WHERE new.read_at IS NULL AND new.hidden_by IS NULL
        ON CONFLICT (feed) DO UPDATE SET articles = articles + 1;
END;


-- == The library: tags, notes, what came with an import ========================================

-- Tag names, one per name whatever its case.
CREATE TABLE tags (
    id   INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE COLLATE NOCASE
);
-- Which article has which tag.
CREATE TABLE article_tags (
    article_id INTEGER NOT NULL REFERENCES articles(id) ON DELETE CASCADE,
    tag_id     INTEGER NOT NULL REFERENCES tags(id) ON DELETE CASCADE,
    PRIMARY KEY (article_id, tag_id)
) WITHOUT ROWID;
-- speed up the tag filter: from a tag to its articles
CREATE INDEX article_tags_by_tag ON article_tags (tag_id, article_id);

-- Highlights and annotations brought from other apps.
CREATE TABLE notes (
    id         INTEGER PRIMARY KEY,
    article_id INTEGER NOT NULL REFERENCES articles(id) ON DELETE CASCADE,
    text       TEXT NOT NULL,
    comment    TEXT,
    created_at REAL
);
-- speed up the reader view's notes
CREATE INDEX notes_by_article ON notes (article_id, id);

-- Content stored from an export instead of fetched: no run in the ledger for it, so
-- started = cached + failed + ... stays about fetches.
CREATE TABLE imported (
    article_id  INTEGER PRIMARY KEY REFERENCES articles(id) ON DELETE CASCADE,
    source      TEXT NOT NULL,
    imported_at REAL NOT NULL
);


-- == Devices ===================================================================================

-- The actions a device sent with its own id, remembered with their answer, so one sent again
-- after a lost connection is a no-op that gives the same answer.
CREATE TABLE actions (
    key    TEXT PRIMARY KEY,   -- the device's id for the action
    action TEXT NOT NULL,      -- what it asked for, e.g. "DELETE /api/articles/3/star"
    status INTEGER,            -- NULL while it is being applied
    answer TEXT,               -- the answer given, given again to a replay
    at     REAL NOT NULL
);
-- speed up forgetting old actions
CREATE INDEX actions_by_at ON actions (at);

-- What a bulk read changed, so that its undo restores exactly the state before: a bulk read
-- moves a place left part-way to the end, and without the place it had, the undo could only
-- bring the article back unread at the start.
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


-- == The library's version =====================================================================

-- One number that grows with every change an article's page can show, so that a reopened
-- page is a read of this one row and a lookup in the rendered pages kept in memory, instead
-- of the article's 30 KB and a render. A page shows its article and content, the feed's name,
-- its tags and notes, the reading list's length and its neighbours in a list (which move when
-- any other article is added, read, starred, tagged, cleaned or moves in the tap order): every
-- change to those tables counts, whichever process makes it. Counting more than a page needs
-- only costs a render. The queue and claims are left out: a ready article's page does not
-- show them, and the lists whose members they decide (queued, cleaning, new, failed) also
-- change as claims expire, with no write at all, so a page opened from one of them is never
-- kept by this version.
CREATE TABLE library_version (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    version INTEGER NOT NULL
);
INSERT INTO library_version (id, version) VALUES (1, 1);
-- an article added, changed (read, starred, its place, its tap order) or deleted
CREATE TRIGGER articles_version_insert AFTER INSERT ON articles BEGIN
    UPDATE library_version SET version = version + 1;
END;
CREATE TRIGGER articles_version_update AFTER UPDATE ON articles BEGIN
    UPDATE library_version SET version = version + 1;
END;
CREATE TRIGGER articles_version_delete AFTER DELETE ON articles BEGIN
    UPDATE library_version SET version = version + 1;
END;
-- an article cleaned, recleaned, or its text gone
CREATE TRIGGER contents_version_insert AFTER INSERT ON contents BEGIN
    UPDATE library_version SET version = version + 1;
END;
CREATE TRIGGER contents_version_update AFTER UPDATE ON contents BEGIN
    UPDATE library_version SET version = version + 1;
END;
CREATE TRIGGER contents_version_delete AFTER DELETE ON contents BEGIN
    UPDATE library_version SET version = version + 1;
END;
-- an article tagged or untagged
CREATE TRIGGER article_tags_version_insert AFTER INSERT ON article_tags BEGIN
    UPDATE library_version SET version = version + 1;
END;
CREATE TRIGGER article_tags_version_update AFTER UPDATE ON article_tags BEGIN
    UPDATE library_version SET version = version + 1;
END;
CREATE TRIGGER article_tags_version_delete AFTER DELETE ON article_tags BEGIN
    UPDATE library_version SET version = version + 1;
END;
-- a note added, changed or deleted
CREATE TRIGGER notes_version_insert AFTER INSERT ON notes BEGIN
    UPDATE library_version SET version = version + 1;
END;
CREATE TRIGGER notes_version_update AFTER UPDATE ON notes BEGIN
    UPDATE library_version SET version = version + 1;
END;
CREATE TRIGGER notes_version_delete AFTER DELETE ON notes BEGIN
    UPDATE library_version SET version = version + 1;
END;
-- a feed renamed or moved to another folder. A refresh writes its bookkeeping (etag, error,
-- ...), which no page shows, and its name again, unchanged: only a change counts
CREATE TRIGGER feeds_version_update AFTER UPDATE OF title, folder ON feeds
    WHEN old.title IS NOT new.title OR old.folder IS NOT new.folder BEGIN
    UPDATE library_version SET version = version + 1;
END;
-- a feed unsubscribed
CREATE TRIGGER feeds_version_delete AFTER DELETE ON feeds BEGIN
    UPDATE library_version SET version = version + 1;
END;
-- a tag renamed or deleted (a new tag counts when an article gets it, in article_tags)
CREATE TRIGGER tags_version_update AFTER UPDATE ON tags BEGIN
    UPDATE library_version SET version = version + 1;
END;
CREATE TRIGGER tags_version_delete AFTER DELETE ON tags BEGIN
    UPDATE library_version SET version = version + 1;
END;


-- Native apps (the Google Reader API and Fever, reader/core/sync.py). An app password is
-- made by `reader app-password add NAME` and shown once; only its salted scrypt hash is
-- kept, with the digest of the Fever key it implies (Fever clients send md5("NAME:password"),
-- so it is looked up by that) and a secret that signs the image URLs handed to that app.
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
-- A sign-in (ClientLogin) gets a random token, kept hashed; revoking the password deletes
-- its tokens in the same transaction, so every app signed in with it stops at once.
CREATE TABLE sync_tokens (
    hash         TEXT PRIMARY KEY,  -- sha256 (hex) of the token an app sends as GoogleLogin auth
    password_id  INTEGER NOT NULL REFERENCES app_passwords (id) ON DELETE CASCADE,
    created_at   REAL NOT NULL,
    last_used_at REAL NOT NULL
) WITHOUT ROWID;
-- revoking a password deletes its tokens
CREATE INDEX sync_tokens_by_password ON sync_tokens (password_id);


-- == Highlights ================================================================================

-- Passages a person marked while reading (or that came with an import), in the shape of the
-- W3C Web Annotation selectors: the quote with about 32 characters either side (TextQuote)
-- and its offsets in contents.text (TextPosition), with the hash of the text they were
-- placed in. A new text (a reclean) places them again (clean/anchors.py): one that cannot
-- be placed with confidence is detached, kept with its quote and never painted.
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
-- speed up the reader view's marks and the per-article cap
CREATE INDEX highlights_by_article ON highlights (article_id, start_offset);
-- speed up the highlights page: newest first, keyset pagination on (created_at, id)
CREATE INDEX highlights_by_created ON highlights (created_at DESC, id DESC);
-- a highlight made, changed (placed again, its note) or deleted: the article's page shows it
CREATE TRIGGER highlights_version_insert AFTER INSERT ON highlights BEGIN
    UPDATE library_version SET version = version + 1;
END;
CREATE TRIGGER highlights_version_update AFTER UPDATE ON highlights BEGIN
    UPDATE library_version SET version = version + 1;
END;
CREATE TRIGGER highlights_version_delete AFTER DELETE ON highlights BEGIN
    UPDATE library_version SET version = version + 1;
END;
-- The library's version when each article's highlights last changed (one made, changed,
-- placed again or deleted), kept by the triggers below whichever process writes: the reader
-- view keeps an article's highlights and their marks by it, and its statement reads them
-- again only when it moved (building them as JSON was most of what 50 cost a page).
-- An article that never had a highlight has no row.
CREATE TABLE highlight_changes (
    article_id INTEGER PRIMARY KEY,
    version    INTEGER NOT NULL
);
-- a highlight made: its article's highlights changed
CREATE TRIGGER highlight_changes_insert AFTER INSERT ON highlights BEGIN
    INSERT INTO highlight_changes (article_id, version) VALUES (new.article_id, (SELECT version FROM library_version))
        ON CONFLICT (article_id) DO UPDATE SET version = excluded.version;
END;
-- one changed (its note, color, tags, or placed again): its article's, and any it left
CREATE TRIGGER highlight_changes_update AFTER UPDATE ON highlights BEGIN
    INSERT INTO highlight_changes (article_id, version) VALUES (new.article_id, (SELECT version FROM library_version))
        ON CONFLICT (article_id) DO UPDATE SET version = excluded.version;
    INSERT INTO highlight_changes (article_id, version) SELECT old.article_id, (SELECT version FROM library_version)
        WHERE old.article_id IS NOT new.article_id
        ON CONFLICT (article_id) DO UPDATE SET version = excluded.version;
END;
-- one deleted (with its article too)
CREATE TRIGGER highlight_changes_delete AFTER DELETE ON highlights BEGIN
    INSERT INTO highlight_changes (article_id, version) VALUES (old.article_id, (SELECT version FROM library_version))
        ON CONFLICT (article_id) DO UPDATE SET version = excluded.version;
END;

-- The tag names highlights have and how many have each, kept by the triggers below, for the
-- highlights page's tag filter (gathering them from every highlight's list cost 7 ms at 10,000).
CREATE TABLE highlight_tags (
    name       TEXT PRIMARY KEY COLLATE NOCASE,
    highlights INTEGER NOT NULL
) WITHOUT ROWID;
-- a highlight made with tags
CREATE TRIGGER highlight_tags_insert AFTER INSERT ON highlights BEGIN
    INSERT INTO highlight_tags (name, highlights) SELECT value, 1 FROM json_each(new.tags) WHERE true
        ON CONFLICT (name) DO UPDATE SET highlights = highlights + 1;
END;
-- a highlight deleted: names no highlight has any more go
CREATE TRIGGER highlight_tags_delete AFTER DELETE ON highlights BEGIN
    UPDATE highlight_tags SET highlights = highlights - 1 WHERE name IN (SELECT value FROM json_each(old.tags));
    DELETE FROM highlight_tags WHERE highlights <= 0;
END;
-- a highlight's tags changed
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
    INSERT INTO highlights_search (rowid, quote, note, tags) VALUES (new.id, replace(replace(replace(replace(new.quote, char(173), ''), char(8203), ''), char(8288), ''), char(65279), ''), replace(replace(replace(replace(new.note, char(173), ''), char(8203), ''), char(8288), ''), char(65279), ''), new.tags);
END;
-- its note or tags changed
CREATE TRIGGER highlights_search_update AFTER UPDATE OF quote, note, tags ON highlights BEGIN
    UPDATE highlights_search SET quote = replace(replace(replace(replace(new.quote, char(173), ''), char(8203), ''), char(8288), ''), char(65279), ''), note = replace(replace(replace(replace(new.note, char(173), ''), char(8203), ''), char(8288), ''), char(65279), ''), tags = new.tags WHERE rowid = new.id;
END;
-- a deleted highlight is no longer found
CREATE TRIGGER highlights_search_delete AFTER DELETE ON highlights BEGIN
    DELETE FROM highlights_search WHERE rowid = old.id;
END;
-- == Rules =====================================================================================

-- What a person never wants to see, or only wants to see, and what to tag or star: applied
-- to articles as they arrive (feeds/refresh.py), and to stored ones on request (README: "Rules and paused feeds").
CREATE TABLE rules (
    id      INTEGER PRIMARY KEY,
    field   TEXT NOT NULL CHECK (field IN ('title', 'summary', 'author', 'category', 'url', 'age')),
    kind    TEXT NOT NULL CHECK (kind IN ('words', 'regex')),
    pattern TEXT NOT NULL,             -- words, a regular expression, or days (age)
    scope   TEXT NOT NULL DEFAULT 'all',   -- all, folder:NAME or feed:ID
    action  TEXT NOT NULL,             -- hide, keep_only, star or tag:NAME
    enabled INTEGER NOT NULL DEFAULT 1,
    created REAL NOT NULL,
    swept_at REAL                      -- an age rule: the articles that grew old until then are swept
);
-- What one apply of a rule to stored articles changed, so that its undo takes back exactly that.
CREATE TABLE rule_undo (
    stamp      REAL NOT NULL,          -- the apply's time: hidden_at or starred_at of what it changed
    rule_id    INTEGER NOT NULL,
    article_id INTEGER NOT NULL REFERENCES articles (id) ON DELETE CASCADE,
    PRIMARY KEY (stamp, article_id)
) WITHOUT ROWID;
-- deleting an article checks for its rows
CREATE INDEX rule_undo_by_article ON rule_undo (article_id);


-- == One story, many feeds =====================================================================

-- The other feeds that carry an article's story (v19): the same link (url_key), or the same
-- title from the same site within a few days (store/feeds.py STORY_WINDOW). The article row is
-- the first feed's (articles.feed_id, guid); each later feed's item of the story is a row here
-- instead of a second card, so the story has one state, one text and one fetch, and each
-- feed's refresh still finds its own item by (feed_id, guid). A feed's list is its articles
-- and the stories it carries here.
CREATE TABLE sources (
    feed_id    INTEGER NOT NULL REFERENCES feeds(id) ON DELETE CASCADE,
    guid       TEXT NOT NULL,      -- the item's guid in that feed
    article_id INTEGER NOT NULL REFERENCES articles(id) ON DELETE CASCADE,
    title      TEXT NOT NULL,      -- as that feed titled it
    published  REAL,
    added_at   REAL NOT NULL,      -- when that feed first brought it
    sort_at    REAL NOT NULL,      -- the story's articles.sort_at, kept by sources_sort_update
    PRIMARY KEY (feed_id, guid)
) WITHOUT ROWID;
-- one row per feed of a story; speed up a card's "also in" and the counts that follow its read
CREATE UNIQUE INDEX sources_by_article ON sources (article_id, feed_id);
-- speed up a feed's list: the stories it carries, newest first, a page a seek as its own
-- articles are in articles_by_feed (sorting them all cost 12 ms a page at 1,600)
CREATE INDEX sources_by_feed ON sources (feed_id, sort_at DESC, article_id DESC);
-- the story moved in the browse order (a merge, a saved link a feed took in): its sources follow
CREATE TRIGGER sources_sort_update AFTER UPDATE OF sort_at ON articles WHEN old.sort_at != new.sort_at BEGIN
    UPDATE sources SET sort_at = new.sort_at WHERE article_id = new.id;
END;
-- speed up "has another feed brought this title already", the story's second test
CREATE INDEX articles_by_title ON articles (title);

-- Unread stories per feed that carries them (sources), beside unread (which counts each article
-- once, under its own feed, so that its sum is the number of unread articles): a feed's unread
-- count is the two together, as its list shows them. Kept by the triggers below.
CREATE TABLE unread_sources (
    feed     INTEGER PRIMARY KEY,  -- sources.feed_id
    articles INTEGER NOT NULL
);
-- a feed brings a story that is unread
CREATE TRIGGER sources_unread_insert AFTER INSERT ON sources
WHEN (SELECT read_at IS NULL FROM articles WHERE id = new.article_id) BEGIN
    INSERT INTO unread_sources (feed, articles) VALUES (new.feed_id, 1)
        ON CONFLICT (feed) DO UPDATE SET articles = articles + 1;
END;
-- a feed no longer carries an unread story (its article deleted: see sources_unread_gone)
CREATE TRIGGER sources_unread_delete AFTER DELETE ON sources
WHEN (SELECT read_at IS NULL FROM articles WHERE id = old.article_id) BEGIN
    UPDATE unread_sources SET articles = articles - 1 WHERE feed = old.feed_id;
END;
-- a story read or unread again: in every feed that carries it
CREATE TRIGGER sources_unread_read AFTER UPDATE OF read_at ON articles
WHEN (old.read_at IS NULL) != (new.read_at IS NULL) BEGIN
    INSERT INTO unread_sources (feed, articles)
        SELECT feed_id, CASE WHEN new.read_at IS NULL THEN 1 ELSE -1 END FROM sources WHERE article_id = new.id
        ON CONFLICT (feed) DO UPDATE SET articles = articles + excluded.articles;
END;
-- an unread story deleted: before, while its sources are still there (their cascade comes
-- after the article is gone, when sources_unread_delete cannot tell it was unread)
CREATE TRIGGER sources_unread_gone BEFORE DELETE ON articles WHEN old.read_at IS NULL BEGIN
    UPDATE unread_sources SET articles = articles - 1
        WHERE feed IN (SELECT feed_id FROM sources WHERE article_id = old.id);
END;


-- The web form's imports and their reports (the report page and its queue button work
-- after a restart; ids are never taken twice). outcome: the report as JSON; article_ids:
-- its links' articles as packed 8-byte integers; finished_at NULL and no process running
-- it: cut short by a restart.
CREATE TABLE imports (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    started_at REAL NOT NULL,
    finished_at REAL,
    error TEXT,
    outcome TEXT,
    article_ids BLOB
);


-- The version this script makes: len(schema.MIGRATIONS), the number of migration steps.
PRAGMA user_version = 24;
