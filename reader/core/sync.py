"""The rules of reading in native apps (NetNewsWire, Reeder Classic, Read You, Unread...),
which speak the Google Reader API and Fever (adapters in reader/web/sync/).

What belongs here: app passwords (made by `reader app-password add`, kept as salted
scrypt hashes, the web password never accepted) and the tokens signed in with them; the
protocols' names for things read into reader's (item ids in their four forms, streams,
labels); a stream's item ids one keyset page at a time; items as an app shows them, with
the cleaned text once it is ready and images pointing at reader's stored copies through
URLs signed for that app; and what each edit means here:

* a feed's folder is a `folder` label, an article's tags are `tag` labels;
* the label `Queue` is the line: adding an item to it is a person's tap
  (`Reader.queue`, the same lanes, claims, positions and ledger as the web page), and
  removing it takes the tap back while cleaning has not started;
* the label `Reading list` is what is ready and not done, in tap order; adding to it is a
  tap too (and one done before is not done again), removing from it is being done with
  it. An app's read is only read: the article stays on the reading list;
* a star set from an app also queues the article, unless READER_SYNC_STAR_QUEUES is off
  (apps have no queue button; their star is what "keep this" is).

Nothing here knows HTTP; the adapters parse the wire, call these and shape the answer.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import html
import re
import secrets
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import Conflict, Invalid, Malformed, NotFound
from ..params import MAX_ID
from ..records import Feed, StoredImage
from ..store.sync import Stream as Stream  # the adapters name streams by it

if TYPE_CHECKING:
    from ..store import Store
    from .reader import Reader


def _store(reader: Reader) -> Store:
    """The Reader's store: this module is part of the core, so it may hold it; adapters
    never do."""
    return reader._store


# -- app passwords and sign-in -----------------------------------------------------------

# scrypt's cost: 16 MB and ~50 ms a try, run off the event loop. The passwords are random
# (100 bits), so this is for a stolen database, not for guessing over the wire.
SCRYPT = {"n": 2**14, "r": 8, "p": 1, "dklen": 32}
# A name is also the user name apps send (Fever hashes it with the password): kept to
# characters every app's keyboard and every md5 client spell the same way.
PASSWORD_NAME = re.compile(r"[A-Za-z0-9._@+-]{1,64}")
_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789"  # no 0/o, 1/l: typed on a phone
HOW_TO_ADD = "no app password is set: run `reader app-password add NAME` on the server and sign in with it"


@dataclass(frozen=True)
class Session:
    """Who is calling: the live app password a request was signed in with."""

    password_id: int
    name: str
    secret: str  # signs this app's image URLs


@dataclass(frozen=True)
class AppPassword:
    id: int
    name: str
    created_at: float
    last_used_at: float | None
    revoked_at: float | None


def _new_password() -> str:
    """20 random characters (100 bits) in groups of four, easy to type."""
    chars = "".join(secrets.choice(_ALPHABET) for _ in range(20))
    return "-".join(chars[i:i + 4] for i in range(0, 20, 4))


def _scrypt(password: str, salt: bytes) -> bytes:
    return hashlib.scrypt(password.encode("utf-8", "surrogatepass"), salt=salt, **SCRYPT)


def fever_key(name: str, password: str) -> str:
    """The api_key a Fever client sends: md5 of "name:password", hex."""
    return hashlib.md5(f"{name}:{password}".encode("utf-8", "surrogatepass")).hexdigest()


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


async def add_app_password(reader: Reader, name: object) -> tuple[AppPassword, str]:
    """A new app password called `name`, and the password itself: shown once, never
    stored (only its scrypt hash and the digest of its Fever key are)."""
    if not isinstance(name, str) or not PASSWORD_NAME.fullmatch(name) or name.isdigit():
        raise Invalid("an app password's name is 1 to 64 letters, digits or . _ @ + - (not only digits):"
                      " it is also the user name apps sign in with")
    password = _new_password()
    salt = secrets.token_bytes(16)
    digest = await asyncio.to_thread(_scrypt, password, salt)
    added = await _store(reader).add_app_password(name, salt, digest, _digest(fever_key(name, password)),
                                                  secrets.token_hex(32))
    if added is None:
        raise Conflict(f"an app password named {name} exists already: revoke it first, or pick another name")
    [made] = [p for p in await app_passwords(reader) if p.id == added]
    return made, password


async def app_passwords(reader: Reader) -> list[AppPassword]:
    """Every app password, live ones first (revoked ones are kept, to say when)."""
    return [AppPassword(r["id"], r["name"], r["created_at"], r["last_used_at"], r["revoked_at"])
            for r in await _store(reader).app_passwords()]


async def revoke_app_password(reader: Reader, name_or_id: object) -> AppPassword:
    """Revoke a live app password by its name or id: its tokens go in the same
    transaction, so every app signed in with it is refused from its next request on."""
    text = str(name_or_id)
    live = [p for p in await app_passwords(reader) if p.revoked_at is None]
    found = next((p for p in live if str(p.id) == text), None) or \
        next((p for p in live if p.name.lower() == text.lower()), None)
    if found is None or not await _store(reader).revoke_app_password(found.id):
        raise NotFound(f"no live app password named {text} (`reader app-password list` shows them)")
    return found


async def has_app_passwords(reader: Reader) -> bool:
    return bool(await _store(reader).app_passwords(live_only=True))


async def sign_in(reader: Reader, name: object, password: object) -> str | None:
    """ClientLogin: the token for a live app password (random, no `=` in it, which
    NetNewsWire splits lines on), or None. The name picks the password to check; a name
    that is none of them (an app that insists on an email address) has every live
    password checked. The web password is not an app password, so it never signs in."""
    if not isinstance(password, str) or not password or len(password) > 200:
        return None
    store = _store(reader)
    one = await store.live_app_password(name=name) if isinstance(name, str) and name else None
    candidates = [one] if one is not None else await store.app_passwords(live_only=True)
    for row in candidates:
        if hmac.compare_digest(await asyncio.to_thread(_scrypt, password, row["salt"]), row["hash"]):
            token = f"{row['id']}/{secrets.token_urlsafe(32)}"
            if await store.add_token(_digest(token), row["id"]):
                return token
    return None


async def session(reader: Reader, token: object) -> Session | None:
    """The session a GoogleLogin token belongs to, or None (unknown, or revoked)."""
    if not isinstance(token, str) or not 10 < len(token) < 200:
        return None
    row = await _store(reader).token_session(_digest(token))
    return Session(row["id"], row["name"], row["secret"]) if row is not None else None


async def fever_session(reader: Reader, api_key: object) -> Session | None:
    """The session of a Fever api_key (md5 of "name:password"), or None."""
    if not isinstance(api_key, str) or not re.fullmatch(r"[0-9A-Fa-f]{32}", api_key):
        return None
    row = await _store(reader).live_app_password(fever_key=_digest(api_key.lower()))
    if row is None:
        return None
    await _store(reader).touch_app_password(row["id"])
    return Session(row["id"], row["name"], row["secret"])


def edit_token(token: str) -> str:
    """The edit token T of a session: derived from its token, so nothing more is stored."""
    return hashlib.sha256(b"edit:" + token.encode("utf-8", "surrogatepass")).hexdigest()[:57]


def edit_token_ok(token: str, sent: str | None) -> bool:
    """Whether a write's T is acceptable. The token in the header already proves the
    caller; T adds nothing against another site (no cookie is involved), so what clients
    really send passes: none, empty (FeedMe), `x` (Reeder). Any other value must be this
    session's own T."""
    if sent is None or sent in ("", "x"):
        return True
    return hmac.compare_digest(sent.encode("utf-8", "surrogatepass"), edit_token(token).encode())


# -- identifiers --------------------------------------------------------------------------

ITEM_PREFIX = "tag:google.com,2005:reader/item/"
# Item ids one call may name: real clients send at most about a thousand.
MAX_ITEM_IDS = 2500
# The largest page of ids served; a larger `n` is cut to it, as clients expect.
MAX_PAGE = 10_000
READING_LIST = "user/-/state/com.google/reading-list"
STATE = "user/-/state/com.google/"
LABEL = "user/-/label/"
QUEUE_LABEL = "Queue"
READING_LABEL = "Reading list"
_USER = re.compile(r"user/[0-9]+/")
_HEX = re.compile(r"[0-9A-Fa-f]{1,16}")
# States an edit may name that reader has no use for: accepted and ignored.
_IGNORED_STATES = ("like", "broadcast", "broadcast-friends", "fresh", "created")
MAX_LABEL = 200


def item_id(text: object) -> int:
    """An item id in any of the four forms clients send: long (`tag:google.com,2005:
    reader/item/` and 16 hex digits), long unpadded (NetNewsWire), bare 16 hex digits
    (Reeder) or decimal (Liferea). 16 characters are always hex, as padded ids are."""
    if not isinstance(text, str):
        raise Malformed("an item id must be text")
    raw = text.strip()
    if raw.startswith(ITEM_PREFIX):
        digits = raw[len(ITEM_PREFIX):]
        value = int(digits, 16) if _HEX.fullmatch(digits) else None
    elif len(raw) == 16 and _HEX.fullmatch(raw):
        value = int(raw, 16)
    elif raw.isascii() and raw.isdigit() and len(raw) <= 19:
        value = int(raw)
    else:
        value = None
    if value is None or not 1 <= value <= MAX_ID:
        shown = raw[:60] + ("…" if len(raw) > 60 else "")
        raise Malformed(f"not an item id: {shown!r} (send it as decimal, 16 hex digits or {ITEM_PREFIX}…)")
    return value


def item_ids(values: Sequence[Any]) -> list[int]:
    if len(values) > MAX_ITEM_IDS:
        raise Malformed(f"{len(values):,} item ids in one call: send at most {MAX_ITEM_IDS:,} at a time")
    return list(dict.fromkeys(item_id(v) for v in values))


def long_id(article_id: int) -> str:
    return f"{ITEM_PREFIX}{article_id:016x}"


def _normal(stream_id: str) -> str:
    """`user/<digits>/...` means the same as `user/-/...`."""
    match = _USER.match(stream_id)
    return "user/-/" + stream_id[match.end():] if match else stream_id


def label_name(text: object) -> str:
    """The name in `user/-/label/NAME` (or a bare name, as some clients send a folder)."""
    if not isinstance(text, str):
        raise Malformed("a label must be text")
    raw = _normal(text.strip())
    name = raw[len(LABEL):] if raw.startswith(LABEL) else raw
    name = " ".join(name.split())
    if not name or len(name) > MAX_LABEL or name.startswith("user/"):
        raise Malformed(f"not a label: {text[:60]!r} (send user/-/label/NAME)")
    return name


async def stream(reader: Reader, text: object) -> Stream:
    """A stream id read into reader's terms. An unknown state, feed or label is NotFound."""
    if not isinstance(text, str) or not text or len(text) > 2100:
        raise Malformed("a stream id is text such as user/-/state/com.google/reading-list or feed/42")
    raw = _normal(text.strip())
    if raw.startswith(STATE):
        kind = {"reading-list": "all", "read": "read", "starred": "starred", "kept-unread": "unread"}.get(
            raw[len(STATE):])
        if kind is None:
            raise NotFound(f"no such stream: {raw[:80]}")
        return Stream(kind)
    if raw.startswith(LABEL):
        name = label_name(raw)
        if name.lower() == QUEUE_LABEL.lower():
            return Stream("queue")
        if name.lower() == READING_LABEL.lower():
            return Stream("reading")
        if name.lower() not in {n.lower() for n, _ in await labels(reader)}:
            raise NotFound(f"no such label: {name[:80]}")
        return Stream("label", name)
    if raw.startswith("feed/"):
        return Stream("feed", await _feed_id(reader, raw[len("feed/"):]))
    raise NotFound(f"no such stream: {raw[:80]}")


async def _feed_id(reader: Reader, rest: str) -> int:
    """`feed/42` is reader's own form; `feed/<url>` (as apps subscribe) is looked up."""
    if rest.isascii() and rest.isdigit() and len(rest) <= 18:
        feed_id = int(rest)
        if feed_id in {f.id for f in await reader.feeds(counts=False)}:
            return feed_id
    else:
        found = next((f.id for f in await reader.feeds(counts=False) if f.url == rest), None)
        if found is not None:
            return found
    raise NotFound(f"no such feed: {rest[:80]}")


# -- reading ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Page:
    """A page of a stream's item ids: (id, when it arrived), and where the next page
    starts (None: this was the last)."""

    items: list[tuple[int, float]]
    continuation: str | None


@dataclass(frozen=True)
class Query:
    stream: Stream
    include: tuple[Stream, ...] = ()
    exclude: tuple[Stream, ...] = ()
    newer_than: float | None = None  # ot: arrived at or after (seconds)
    older_than: float | None = None  # nt: arrived before
    oldest_first: bool = False
    continuation: str | None = None
    limit: int = 20


def _after(continuation: str | None) -> int | None:
    if continuation is None:
        return None
    if not (continuation.isascii() and continuation.isdigit() and len(continuation) <= 18):
        raise Malformed(f"not a continuation this server gave: {continuation[:40]!r}")
    return int(continuation)


async def page(reader: Reader, query: Query) -> Page:
    """One page of item ids, in the stream's order (arrival, newest first unless
    `oldest_first`; the Queue in service order; the Reading list in tap order). The
    continuation is the last item's place, sent only when the page is full."""
    limit = max(1, min(query.limit, MAX_PAGE))
    rows = await _store(reader).stream_item_ids(
        query.stream, include=query.include, exclude=query.exclude, newer_than=query.newer_than,
        older_than=query.older_than, oldest_first=query.oldest_first, after=_after(query.continuation),
        limit=limit)
    items = [(int(r["id"]), float(r["added_at"])) for r in rows]
    return Page(items, str(items[-1][0]) if len(items) == limit else None)


@dataclass(frozen=True)
class Item:
    """An article as an app shows it. `html` is the cleaned text when it is ready, else
    the feed's summary, with images only from reader (signed for the app asking)."""

    id: int
    url: str
    title: str
    author: str | None
    published: float
    added_at: float
    feed_id: int
    feed_title: str
    site_url: str | None
    folder: str | None
    tags: tuple[str, ...]
    read: bool
    starred: bool
    queued: bool
    reading: bool
    html: str

    @property
    def labels(self) -> list[str]:
        """The item's labels: its feed's folder, its tags, Queue and Reading list."""
        found = ([self.folder] if self.folder else []) + list(self.tags)
        found += [QUEUE_LABEL] if self.queued else []
        found += [READING_LABEL] if self.reading else []
        return list(dict.fromkeys(found))


_STORED_IMG = re.compile(r'(<img\b[^>]*?\ssrc=")/articles/([0-9]+)/images/([0-9a-f]{64})(")', re.I)
_ANY_IMG = re.compile(r"<img\b[^>]*>", re.I)


def image_signature(session: Session, article_id: int, digest: str) -> str:
    return hmac.new(bytes.fromhex(session.secret), f"{article_id}/{digest}".encode(), "sha256").hexdigest()[:32]


def image_path(session: Session, article_id: int, digest: str) -> str:
    """Where an app loads a stored image without a cookie: a capability URL, signed with
    its app password's secret (revoking the password ends them too)."""
    return f"/sync/images/{session.password_id}/{image_signature(session, article_id, digest)}/{article_id}/{digest}"


def _app_html(content: str | None, summary: str, session: Session, origin: str) -> str:
    """The cleaned text with its stored images made loadable by the app; else the feed's
    summary with its images dropped (they point at the original site, which reader's
    pages never make a reader's device request, so neither does an app)."""
    if content is not None:
        def signed(match: re.Match[str]) -> str:
            article_id, digest = int(match[2]), match[3]
            return f"{match[1]}{html.escape(origin + image_path(session, article_id, digest))}{match[4]}"

        # an image still at another address (not kept when it was cleaned) is dropped
        ours = f' src="{html.escape(origin)}/sync/images/'
        return _ANY_IMG.sub(lambda m: m[0] if ours in m[0] else "", _STORED_IMG.sub(signed, content))
    return _ANY_IMG.sub("", summary)


async def items(reader: Reader, ids: Sequence[int], session: Session, origin: str) -> list[Item]:
    """These items (unknown ids left out), in the order asked."""
    found = []
    for row in await _store(reader).sync_items(ids):
        found.append(Item(
            id=row["id"], url=row["url"], title=row["title"], author=row["author"],
            published=row["published"] or row["sort_at"], added_at=row["added_at"], feed_id=row["feed_id"],
            feed_title=row["feed_title"] or row["feed_url"], site_url=row["site_url"], folder=row["folder"],
            tags=tuple(row["tags"]), read=row["read_at"] is not None, starred=row["starred_at"] is not None,
            queued=row["queued"], reading=row["reading"],
            html=_app_html(row["content"], row["summary"], session, origin)))
    return found


async def image(reader: Reader, password_id: int, signature: str, article_id: int, digest: str) -> StoredImage:
    """A stored image through its capability URL; NotFound for a bad signature or a
    revoked password (nothing tells the two apart)."""
    row = await _store(reader).live_app_password(password_id=password_id)
    if row is None:
        raise NotFound("no such image")
    expected = image_signature(Session(row["id"], row["name"], row["secret"]), article_id, digest)
    if not hmac.compare_digest(signature.encode("utf-8", "surrogatepass"), expected.encode()):
        raise NotFound("no such image")
    return await reader.image(article_id, digest)


async def labels(reader: Reader) -> list[tuple[str, str]]:
    """Every label: (name, "folder") for each feed folder, then (name, "tag") for each
    tag no folder has the name of, then Queue and Reading list (item labels too)."""
    folders = sorted({f.folder for f in await reader.feeds(counts=False) if f.folder}, key=str.lower)
    taken = {f.lower() for f in folders} | {QUEUE_LABEL.lower(), READING_LABEL.lower()}
    tags = [t["name"] for t in await reader.tags() if t["name"].lower() not in taken]
    return [(f, "folder") for f in folders] + [(t, "tag") for t in tags] + \
        [(QUEUE_LABEL, "tag"), (READING_LABEL, "tag")]


async def subscriptions(reader: Reader) -> list[Feed]:
    return await reader.feeds(counts=False)


@dataclass(frozen=True)
class UnreadCount:
    stream_id: str
    count: int
    newest: float | None


async def unread_counts(reader: Reader) -> list[UnreadCount]:
    """Unread items per feed, per label and for the whole reading list."""
    store = _store(reader)
    per_feed = await reader.unread_counts()
    newest = await store.newest_per_feed()
    feeds = await reader.feeds(counts=False)
    counts = [UnreadCount(f"feed/{f.id}", per_feed.get(f.id, 0), newest.get(f.id)) for f in feeds]
    folders: dict[str, list[UnreadCount]] = {}
    for f, c in zip(feeds, counts):
        if f.folder:
            folders.setdefault(f.folder, []).append(c)
    per_folder = await reader.unread_per_folder()  # a story two of its feeds carry once
    for name, members in sorted(folders.items()):
        counts.append(UnreadCount(LABEL + name, per_folder.get(name, 0),
                                  max((m.newest for m in members if m.newest), default=None)))
    taken = {n.lower() for n in folders}
    for row in await store.unread_per_tag():
        if row["name"].lower() not in taken:
            counts.append(UnreadCount(LABEL + row["name"], int(row["count"]), row["newest"]))
    for name, kind in ((QUEUE_LABEL, "queue"), (READING_LABEL, "reading")):
        counts.append(UnreadCount(LABEL + name, await store.count_stream(Stream(kind), unread=True), None))
    counts.append(UnreadCount(READING_LIST, await reader.unread_total(saved=False),
                              max(newest.values(), default=None)))
    return counts


# -- writing ------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Tag:
    kind: str  # read, unread, starred, queue, reading, label, ignore
    name: str | None = None


def _edit_tag(text: object) -> _Tag:
    if not isinstance(text, str):
        raise Malformed("a tag to add or remove must be text")
    raw = _normal(text.strip())
    if raw.startswith(STATE):
        state = raw[len(STATE):]
        kinds = {"read": "read", "kept-unread": "unread", "starred": "starred", "reading-list": "ignore"}
        if state in kinds:
            return _Tag(kinds[state])
        if state in _IGNORED_STATES or state.startswith("tracking-"):
            return _Tag("ignore")
        raise Malformed(f"no such state: {raw[:80]}")
    name = label_name(raw)
    if name.lower() == QUEUE_LABEL.lower():
        return _Tag("queue")
    if name.lower() == READING_LABEL.lower():
        return _Tag("reading")
    if len(name) > 100:
        raise Malformed("a tag is at most 100 characters")
    return _Tag("label", name)


async def edit_tags(reader: Reader, ids: Sequence[int], add: Sequence[Any], remove: Sequence[Any]) -> None:
    """edit-tag: every tag is read first (a bad one changes nothing), then added, then
    removed. Unknown item ids are left alone (an app's ids of articles gone since)."""
    adds, removes = [_edit_tag(t) for t in add], [_edit_tag(t) for t in remove]
    if not adds and not removes:
        raise Malformed("edit-tag needs a tag to add (a) or remove (r)")
    chosen = await _store(reader).existing_ids(ids)
    if not chosen:
        return
    starred = await _store(reader).starred_among(chosen)  # before this edit: a new star queues
    for tag in adds:
        await _apply(reader, chosen, tag, True, starred)
    for tag in removes:
        await _apply(reader, chosen, tag, False, starred)


async def _apply(reader: Reader, ids: list[int], tag: _Tag, add: bool, starred: set[int]) -> None:
    if tag.kind == "read" or tag.kind == "unread":
        await reader.mark_many((tag.kind == "read") == add, ids=ids)
    elif tag.kind == "starred":
        for article_id in ids:
            await reader.star(article_id, add)
            # a star from an app is its "keep this": it queues, once, when it is new
            if add and reader.settings.sync_star_queues and article_id not in starred:
                await reader.queue(article_id)
    elif tag.kind in ("queue", "reading") and add:
        for article_id in ids:
            await reader.queue(article_id)
        if tag.kind == "reading":  # a ready one is not queued again: back on the list all the same
            await reader.done_many(False, ids=ids)
    elif tag.kind == "queue":
        for article_id in ids:
            if (await reader.article(article_id)).state == "queued":  # cleaning started: that work is paid for
                await reader.unqueue(article_id)
    elif tag.kind == "reading":
        await reader.done_many(True, ids=ids)  # off the reading list: done with it
    elif tag.kind == "label" and add:
        await reader.set_tags(ids, [tag.name], add_only=True)
    elif tag.kind == "label":
        assert tag.name is not None
        for article_id in ids:
            current = (await reader.article(article_id)).tags
            if any(t.lower() == tag.name.lower() for t in current):
                await reader.set_tags([article_id], [t for t in current if t.lower() != tag.name.lower()])


async def mark_all_read(reader: Reader, target: Stream, before: float | None) -> int:
    """Everything in the stream that arrived before `before` (seconds; None: now) is read;
    how many articles changed. Articles arriving after the app looked are left alone."""
    store, changed, after = _store(reader), 0, None
    while True:
        rows = await store.stream_item_ids(target, exclude=(Stream("read"),), older_than=before,
                                           oldest_first=True, after=after, limit=MAX_PAGE)
        if not rows:
            return changed
        ids = [int(r["id"]) for r in rows]
        changed += len((await reader.mark_many(True, ids=ids)).ids)
        if target.kind in ("queue", "reading") or len(rows) < MAX_PAGE:
            return changed
        after = ids[-1]


def timestamp(text: object) -> float:
    """`ts` of mark-all-as-read: microseconds when 16 digits or more, else seconds."""
    if not isinstance(text, str) or not (text.isascii() and text.isdigit()) or len(text) > 19:
        raise Malformed("ts must be a time: seconds, or microseconds, since 1970")
    return int(text) / 1e6 if len(text) >= 16 else float(int(text))


async def quickadd(reader: Reader, url: object) -> Feed | None:
    """Subscribe by a feed's or a site's address; None if no feed is there."""
    if isinstance(url, str) and url.startswith("feed/"):
        url = url[len("feed/"):]
    try:
        added = await reader.subscribe(url)
    except Invalid:
        return None
    return await reader.feed(added.feed_id)


async def edit_subscription(reader: Reader, action: object, stream_id: object, title: object, add: Sequence[Any],
                            remove: Sequence[Any]) -> None:
    """subscription/edit: subscribe (then name and folder it), unsubscribe, or edit its
    name and folder. A folder is one label: `a` puts the feed in it, `r` alone takes it
    out of it (NetNewsWire moves a feed with r=<old>&a=<new>)."""
    if action not in ("subscribe", "unsubscribe", "edit"):
        raise Malformed("ac must be subscribe, unsubscribe or edit")
    if not isinstance(stream_id, str) or not stream_id.startswith("feed/"):
        raise Malformed("s must be a feed: feed/42, or feed/<its address> to subscribe")
    folders_in = [label_name(a) for a in add]
    folders_out = [label_name(r) for r in remove]
    if len(folders_in) > 1:
        raise Malformed("a feed is in one folder: add one label (a) at most")
    for name in folders_in:
        if name.lower() in (QUEUE_LABEL.lower(), READING_LABEL.lower()):
            raise Invalid(f"{name} is a label of articles, not a folder")
    if title is not None and (not isinstance(title, str) or not title.strip()):
        raise Malformed("t, the feed's name, cannot be empty")
    if action == "subscribe":
        try:
            feed_id = await _feed_id(reader, stream_id[len("feed/"):])
        except NotFound:
            feed_id = (await reader.subscribe(stream_id[len("feed/"):])).feed_id
    else:
        feed_id = await _feed_id(reader, stream_id[len("feed/"):])
    if action == "unsubscribe":
        await reader.unsubscribe(feed_id)
        return
    if title is not None:
        await reader.rename_feed(feed_id, title)
    if folders_in:
        await reader.set_folder(feed_id, folders_in[0])
    elif folders_out:
        feed = await reader.feed(feed_id)
        if feed.folder is not None and feed.folder.lower() in {f.lower() for f in folders_out}:
            await reader.set_folder(feed_id, None)


def _own_label(text: object) -> str:
    name = label_name(text)
    if name.lower() in (QUEUE_LABEL.lower(), READING_LABEL.lower()):
        raise Invalid(f"{name} is reader's own label: it cannot be renamed or removed")
    return name


async def rename_label(reader: Reader, source: object, dest: object) -> None:
    """rename-tag: the folder and the tag of that name both take the new one."""
    old, new = _own_label(source), _own_label(dest)
    if old.lower() not in {n.lower() for n, _ in await labels(reader)}:
        raise NotFound(f"no such label: {old[:80]}")
    folder = next((f.folder for f in await reader.feeds(counts=False) if f.folder and f.folder.lower() == old.lower()),
                  None)
    if folder is not None:
        await _store(reader).rename_folder(folder, new)
    await _store(reader).rename_tag(old, new)


async def disable_label(reader: Reader, source: object) -> None:
    """disable-tag: the folder's feeds are in none, the tag comes off its articles."""
    name = _own_label(source)
    if name.lower() not in {n.lower() for n, _ in await labels(reader)}:
        raise NotFound(f"no such label: {name[:80]}")
    for folder in {f.folder for f in await reader.feeds(counts=False) if f.folder and f.folder.lower() == name.lower()}:
        await _store(reader).drop_folder(folder)
    await _store(reader).drop_tag(name)


# -- Fever --------------------------------------------------------------------------------

def group_id(folder: str) -> int:
    """A folder's Fever group id: folders have no ids, so one derived from the name (the
    same for as long as the name is)."""
    return zlib.crc32(folder.encode("utf-8", "surrogatepass")) % (2**31 - 1) + 1


async def groups(reader: Reader) -> list[tuple[int, str, list[int]]]:
    """Fever's groups: (group id, folder, its feed ids)."""
    found: dict[str, list[int]] = {}
    for f in await reader.feeds(counts=False):
        if f.folder:
            found.setdefault(f.folder, []).append(f.id)
    return [(group_id(name), name, ids) for name, ids in sorted(found.items(), key=lambda kv: kv[0].lower())]


async def fever_items(reader: Reader, session: Session, origin: str, *, since_id: int | None = None,
                      max_id: int | None = None, with_ids: Sequence[int] | None = None) -> list[Item]:
    """Fever's pages of 50 items: after since_id (oldest first), before max_id (newest
    first), or those named."""
    if with_ids is not None:
        chosen = list(with_ids)[:50]
    else:
        rows = await _store(reader).stream_item_ids(
            Stream("all"), oldest_first=max_id is None, after=max_id if max_id is not None else (since_id or 0),
            limit=50)
        chosen = [int(r["id"]) for r in rows]
    return await items(reader, chosen, session, origin)


async def all_ids(reader: Reader, target: Stream) -> list[int]:
    """Every item id of a stream (Fever's unread_item_ids and saved_item_ids), oldest first."""
    found: list[int] = []
    after = None
    while True:
        rows = await _store(reader).stream_item_ids(target, oldest_first=True, after=after, limit=MAX_PAGE)
        found += [int(r["id"]) for r in rows]
        if len(rows) < MAX_PAGE:
            return found
        after = found[-1]


async def fever_mark(reader: Reader, what: str, as_: str, target: int, before: float | None) -> None:
    """Fever's writes: an item read, unread, saved (starred, which queues as a star from
    any app does) or unsaved; a feed or group (0: everything) read up to `before`."""
    if what == "item":
        tag = {"read": "user/-/state/com.google/read", "unread": "user/-/state/com.google/read",
               "saved": "user/-/state/com.google/starred", "unsaved": "user/-/state/com.google/starred"}.get(as_)
        if tag is None:
            raise Malformed("as must be read, unread, saved or unsaved for an item")
        adding = as_ in ("read", "saved")
        await edit_tags(reader, [target], [tag] if adding else [], [] if adding else [tag])
        return
    if as_ != "read":
        raise Malformed(f"a {what} can only be marked read")
    if what == "feed":
        await mark_all_read(reader, Stream("feed", await _feed_id(reader, str(target))), before)
    elif what == "group":
        if target == 0:
            await mark_all_read(reader, Stream("all"), before)
            return
        name = next((n for g, n, _ in await groups(reader) if g == target), None)
        if name is None:
            raise NotFound("no such group")
        await mark_all_read(reader, Stream("label", name), before)
    else:
        raise Malformed("mark must be item, feed or group")


async def last_refreshed(reader: Reader) -> int:
    return int(max((f.refreshed_at or 0 for f in await reader.feeds(counts=False)), default=0))


async def total_items(reader: Reader) -> int:
    """Every item an app can see (Fever's total_items)."""
    return await _store(reader).count_stream(Stream("all"))
