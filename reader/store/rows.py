"""The rows the store's reads return, as TypedDicts: which keys a row has and what each
holds, checked by mypy where it is read. tests/store/test_rows.py reads each from a real
database and checks its keys and value types against these, so they cannot drift from the
SQL behind them.

Only the reads whose callers mypy accepts a TypedDict from are typed so far: a TypedDict is
not a `dict[str, Any]`, and the articles, contents, feeds and runs still reach functions
(`records.*.from_row`, `refresh_feed`, the exports) that ask for one. Those stay
`dict[str, Any]` until their callers take a `Mapping[str, Any]`.
"""

from __future__ import annotations

from typing import TypedDict


class FeedRow(TypedDict):
    """A feeds row as stored (`SELECT *`)."""

    id: int
    url: str
    title: str
    site_url: str | None
    etag: str | None
    last_modified: str | None
    added_at: float
    refreshed_at: float | None  # the last attempt, successful or not
    error: str | None  # why the last attempt failed
    note: str | None
    folder: str | None
    paused_until: float | None  # hidden and not counted unread until then


class WaitingRow(TypedDict):
    """An article in line and not being cleaned, with its place (1: next)."""

    article_id: int
    lane: str
    tapped_at: float
    due_at: float
    title: str
    url: str
    position: int


class ClaimRow(TypedDict):
    """Who is cleaning an article: the run holding it, until when."""

    article_id: int
    run_id: int
    expires_at: float


class WorkRow(TypedDict):
    """What the workers still have to do, for the wait estimates."""

    article_id: int
    url: str
    started_at: float | None  # when its run started; None unless being cleaned
    cleaning: int  # 1 while a live claim holds it


class TimingRow(TypedDict):
    """A finished extraction: how long it took, and the URL it fetched."""

    url: str | None  # None once its article is gone: the ledger outlives it
    seconds: float


class RunCounts(TypedDict):
    """The ledger's counts: started = cached + failed + abandoned + running."""

    started: int
    cached: int
    failed: int
    abandoned: int
    running: int
    queued: int  # articles in line, being cleaned included
    imported: int  # texts stored from an export: never fetched, so not in `started`


class MediaTotals(TypedDict):
    """What stored images and raw pages take."""

    image_bytes: int
    images: int
    raw_page_bytes: int  # compressed: what the budget counts
    raw_pages: int


class NoteRow(TypedDict):
    """A highlight or annotation brought from another app."""

    text: str
    comment: str | None
    created_at: float | None


class OfflineRow(TypedDict):
    """An article of the reading list as a device saves it for offline reading."""

    id: int
    html: str
    bytes: int  # of its cleaned HTML, UTF-8
