"""The records the core hands to every interface: an article and a feed, with every
field they can have declared here, so a page or a JSON answer never has to ask whether
a key is there (`position`, `wait`, `capacity` and `snippet` are None when they do not
apply)."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from collections.abc import Mapping
from typing import Any, NamedTuple

from .clean.parts import Parts, read_parts

# A reading position this far through the text is the end: the page reports 1 once the
# last lines are on screen, and what remains past 98% is the article's foot.
FINISHED = 0.98


@dataclass(frozen=True)
class Article:
    id: int
    feed_id: int | None
    guid: str
    url: str
    title: str
    summary: str
    author: str | None
    published: float | None
    sort_at: float
    added_at: float
    error: str | None
    failed_at: float | None
    read_at: float | None
    starred_at: float | None
    summary_text: str
    feed_title: str | None
    queue_seq: int | None
    due_at: float | None
    lane: str | None
    state: str  # one of store.STATES
    read_position: float | None = None  # how far through the text the person got, 0 to 1
    read_position_at: float | None = None  # when they got there (their device's clock)
    done_at: float | None = None  # read to the end or said done: off the reading list (None: not done)
    position: int | None = None  # in the line, while queued
    wait: float | None = None  # estimated seconds until ready, while queued (None: nothing honest to say)
    capacity: int | None = None  # articles the live workers clean at once, while queued
    snippet: str | None = None  # search results only: matches marked \x02 ... \x03
    tags: tuple[str, ...] = ()  # sorted by name, any case
    words: int | None = None  # of the cleaned text, once there is one (a list's reading time)
    also_in: tuple[str, ...] = ()  # the other feeds that carry the story, by name (schema v18)
    highlights: int | None = None  # how many highlights it has (a list's rows say so)
    partial: str | None = None  # ready, but the text may be only the article's start: why

    @property
    def done(self) -> bool:
        """Done with it: off the reading list. Another fact than read (opening an article,
        a bulk read, a native app's read never make it done)."""
        return self.done_at is not None

    @classmethod
    def from_row(cls, row: Mapping[str, Any], **given: Any) -> Article:
        """The record of a store row; `given` are the fields the row does not hold (its
        tags, its wait), so the record is made once, whole. Its fields are written into it
        directly: a frozen dataclass's __init__ sets each of its 29 through
        object.__setattr__, which was a fifth of a list page's reads (50 records)."""
        article = object.__new__(cls)
        values = article.__dict__
        for name in _ARTICLE_NAMES:
            values[name] = row.get(name)
        values.update(given)
        if "also_in" not in given:  # the store's JSON array of names
            values["also_in"] = tuple(sorted(json.loads(values.get("also_in") or "[]"), key=str.lower))
        return article


_ARTICLE_FIELDS = dataclasses.fields(Article)
_ARTICLE_NAMES = tuple(f.name for f in _ARTICLE_FIELDS)


@dataclass(frozen=True)
class Feed:
    id: int
    url: str
    title: str
    site_url: str | None
    etag: str | None
    last_modified: str | None
    added_at: float
    refreshed_at: float | None
    error: str | None
    note: str | None = None  # about the last refresh, not a failure (items past the cap)
    folder: str | None = None  # nested folders joined by " / "
    paused_until: float | None = None  # hidden and not counted unread until then (core/rules.py)
    articles: int | None = None  # counted only when asked for
    unread: int | None = None

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Feed:
        values: dict[str, Any] = {f.name: row.get(f.name) for f in _FEED_FIELDS}
        return cls(**values)


_FEED_FIELDS = dataclasses.fields(Feed)


class FeedChoice(NamedTuple):
    """A feed as a list's feed filter offers it: its name and how many unread it holds. A
    tuple: a page makes 200 of them (a frozen dataclass cost 2 µs each) and hashes them."""

    id: int
    name: str
    folder: str | None
    unread: int


@dataclass(frozen=True)
class ListFacts:
    """What a list's page shows around its articles, read together: the feeds (by name)
    with their unread counts, the saved links' unread count, the newest article's id (a
    bulk action's bound) and the reading list's length (the nav's count)."""

    feeds: tuple[FeedChoice, ...]
    saved_unread: int
    newest: int
    reading: int
    total: int = 0  # unread articles, each once (a story several feeds carry counts in each of theirs)

    def unread(self, *, feed_id: int | None = None, folder: str | None = None) -> int:
        """Unread articles of one feed, of a folder's feeds (both: that feed if it is in
        that folder), or (neither) of the whole library, saved links included. A folder's
        sum counts a story two of its feeds carry twice: its exact count is the list's own
        (core's unread_in counts it)."""
        if feed_id is None and folder is None:
            return self.total
        return sum(f.unread for f in self.feeds
                   if (feed_id is None or f.id == feed_id) and (folder is None or f.folder == folder))


@dataclass(frozen=True)
class ArticleFilter:
    """Which articles a list shows: every filter combines with the others. The reading
    list is `state="ready", unread=True`: on a ready list, unread means not done (a ready
    list is in tap order, oldest first; every other list is newest first, a search best
    match first)."""

    state: str | None = None
    feed_id: int | None = None
    unread: bool = False
    starred: bool = False
    q: str = ""
    tag: str | None = None  # articles with this tag (any case)
    folder: str | None = None  # articles of the feeds in this folder

    @property
    def is_reading_list(self) -> bool:
        return self == READING_LIST

    def query(self) -> dict[str, str]:
        """The filter as query parameters (only those set), for links and forms."""
        pairs = (("state", self.state), ("feed", self.feed_id), ("unread", "1" if self.unread else None),
                 ("starred", "1" if self.starred else None), ("tag", self.tag), ("folder", self.folder),
                 ("q", self.q or None))
        return {k: str(v) for k, v in pairs if v is not None}


READING_LIST = ArticleFilter(state="ready", unread=True)


@dataclass
class Marked:
    """What a bulk read or unread (or done or not done) changed: exactly these articles,
    all stamped with `stamp` (the read_at, or done_at, they now share, which is how an undo
    finds them; None for unread and not done)."""

    ids: list[int]
    stamp: float | None


@dataclass
class QueuedMany:
    """What a bulk queue did: these articles queued, oldest first (`ids`), out of `matched`
    the selection held that could be (more when the cap `limit` cut it), the seconds until
    the last of them is ready (None: nothing honest to say, as with no worker running:
    `capacity` 0), and the token its undo takes (None when nothing was queued)."""

    ids: list[int]
    matched: int
    limit: int
    estimate: float | None
    undo: str | None
    capacity: int | None = None  # articles the live workers clean at once

    @property
    def left(self) -> int:
        """How many the cap left out: the same act again queues them."""
        return self.matched - len(self.ids)


@dataclass
class TakenBack:
    """An undone bulk queue: the articles out of the line again, and how many of the
    batch could not be taken back (started: being cleaned, cleaned, or failed)."""

    ids: list[int]
    started: int


@dataclass
class Content:
    """An article's cleaned text (sanitized HTML and plain text)."""

    article_id: int
    title: str | None
    author: str | None
    published: str | None
    html: str
    text: str
    words: int
    cleaned_at: float
    partial: str | None = None  # why the text may be only the article's start; None: whole

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Content:
        values: dict[str, Any] = {f.name: row.get(f.name) for f in _CONTENT_FIELDS}
        return cls(**values)

    def parts(self) -> Parts:
        """The lead, figures and body of the text, read from its HTML (no column holds them:
        the cleaner marks them in the HTML it stores)."""
        return read_parts(self.html)


_CONTENT_FIELDS = dataclasses.fields(Content)


@dataclass(frozen=True)
class Link:
    """Another article as a page links to it."""

    id: int
    title: str


@dataclass
class ArticlePage:
    """An article as its page shows it, read at once: the article, its cleaned text (None
    while not cleaned), its highlights and annotations brought from other apps (oldest
    first), the reading list's length for the nav, and the articles before and after it
    in the list it was opened from."""

    article: Article
    content: Content | None
    notes: list[dict[str, Any]]
    reading_count: int
    prev: Link | None = None
    next: Link | None = None
    # the library's version when this was read (schema v12): every later change that a
    # page can show makes it larger
    version: int = 0
    # its highlights (schema v16) in the order of the text, detached ones last
    highlights: list[dict[str, Any]] = field(default_factory=list)
    # the library's version when they last changed (schema v18; 0: never had one), by
    # which their marks on the page are kept
    highlights_version: int = 0


@dataclass(frozen=True)
class StoredImage:
    """One image of an article, kept with it: `hash` (sha256 of data, hex) names it in the
    article's HTML, `source` is the URL it was fetched from, `type` was sniffed from data."""

    hash: str
    source: str
    type: str
    data: bytes


@dataclass(frozen=True)
class RawPage:
    """A page as it arrived (fetched, or sent by the person's browser), zlib-compressed:
    what a reclean cleans again without fetching. `url` is where it came from, after
    redirects; `size` is the length of `data` (what the budget counts)."""

    url: str
    charset: str | None
    data: bytes

    @property
    def size(self) -> int:
        return len(self.data)
