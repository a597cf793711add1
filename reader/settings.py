"""Settings: each one declared once, with its environment variable, default and help.

Built once (from the environment, then CLI flags on top) and passed into
`create_app(settings)` and the worker. Nothing reads the environment anywhere else.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import os
from dataclasses import dataclass, field
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .errors import Invalid
from .params import parse_bool


def _bool(text: str) -> bool:
    try:
        return parse_bool(text, "value")
    except Invalid:
        raise ValueError(f"not a boolean: {text!r}") from None


# The shortest READER_PASSWORD that lets reader listen beyond loopback: it is then
# reachable from other machines; on loopback the only reader is the owner.
MIN_PASSWORD_LENGTH = 12


def is_loopback(name: str) -> bool:
    """`localhost` or a loopback address (brackets around IPv6 allowed)."""
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name.strip("[]")).is_loopback
    except ValueError:
        return False


# The longest URL reader accepts from anywhere: a feed's, an article's, a saved link's.
# Real URLs are far shorter; a 5 MB "URL" from an OPML file once made /feeds 18 MB.
MAX_URL_LENGTH = 2048


def _hosts(text: str) -> tuple[str, ...]:
    return tuple(h.strip().lower() for h in text.split(",") if h.strip())


def _public_url(text: str) -> str | None:
    text = text.strip().rstrip("/")
    if not text:
        return None
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        raise ValueError(f"not a URL: {text!r}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.path or parts.query:
        raise ValueError(f"must be an origin like https://reader.example.org, not {text!r}")
    return f"{parts.scheme}://{parts.netloc.lower()}"


def _setting(env: str, default: Any, help: str, parse: Callable[[str], Any] | None = None) -> Any:
    return field(default=default, metadata={"env": env, "help": help, "parse": parse})


@dataclass(frozen=True)
class Settings:
    db: Path = _setting("READER_DB", Path("reader.db"), "SQLite database file; created (from the sample) if missing", Path)
    claim_ttl: float = _setting(
        "READER_CLAIM_TTL", 120.0,
        "seconds a claim on an article lasts without renewal; a dead holder blocks nobody longer", float)
    worker_interval: float = _setting(
        "READER_WORKER_INTERVAL", 20.0,
        "seconds a worker sleeps between polls when nothing in its own process woke it", float)
    next_lead: float = _setting(
        "READER_NEXT_LEAD", 600.0,
        "seconds a 'queue first' tap jumps: it goes ahead of normal taps made less than this before it", float)
    refresh_interval: float = _setting(
        "READER_REFRESH_INTERVAL", 1800.0, "seconds between background feed refreshes (0 = never)", float)
    allow_private_urls: bool = _setting(
        "READER_ALLOW_PRIVATE_URLS", False,
        "allow fetches into loopback, private and link-local addresses", _bool)
    fetch_timeout: float = _setting(
        "READER_FETCH_TIMEOUT", 30.0, "overall deadline in seconds for one page or feed fetch", float)
    fetch_retries: int = _setting(
        "READER_FETCH_RETRIES", 2,
        "extra tries for a page that failed transiently (timeout, 5xx, 429, connection error)", int)
    retry_backoff: float = _setting(
        "READER_RETRY_BACKOFF", 2.0, "seconds before the first retry of a page; doubles with each retry", float)
    max_page_bytes: int = _setting(
        "READER_MAX_PAGE_BYTES", 5_000_000, "largest page or feed body accepted, after decompression", int)
    image_max_bytes: int = _setting(
        "READER_IMAGE_MAX_BYTES", 3_000_000, "largest image kept with an article (bytes); a larger one is dropped", int)
    images_per_article: int = _setting(
        "READER_IMAGES_PER_ARTICLE", 30, "images kept with one article at most, in the order they appear", int)
    article_image_bytes: int = _setting(
        "READER_ARTICLE_IMAGE_BYTES", 15_000_000,
        "bytes of images kept with one article at most, in the order they appear", int)
    image_deadline: float = _setting(
        "READER_IMAGE_DEADLINE", 20.0,
        "seconds all of one article's images may take to fetch; those still loading then are dropped", float)
    raw_pages_bytes: int = _setting(
        "READER_RAW_PAGES_BYTES", 200_000_000,
        "compressed bytes of raw pages kept for `reader reclean`, all articles together; the oldest go first"
        " (0 keeps none)", int)
    extract_processes: int = _setting(
        "READER_EXTRACT_PROCESSES", min(4, os.cpu_count() or 1),
        "processes that run extraction and feed parsing off the event loop (0 = a thread, for debugging)", int)
    crash_limit: int = _setting(
        "READER_CRASH_LIMIT", 3,
        "runs of one article the extraction processes may die under (each run is a crash and its retry)"
        " before the article is marked failed instead of taken again", int)
    shutdown_grace: float = _setting(
        "READER_SHUTDOWN_GRACE", 10.0,
        "seconds extractions in progress get to finish at shutdown before their claims are handed back", float)
    serve_workers: int = _setting(
        "READER_SERVE_WORKERS", 4,
        "articles the `reader serve` process cleans at once from the queue, never two of one site at a time"
        " (0 = leave it to `reader worker`). Four, whatever the cores: cleaning an article is mostly waiting"
        " on its site, the CPU part runs in READER_EXTRACT_PROCESSES anyway, and a burst of taps rarely spans"
        " more than a few sites, which are fetched one article at a time each", int)
    password: str | None = _setting(
        "READER_PASSWORD", None,
        "password for the pages and bearer token for the API; required (12 characters or more) to listen beyond loopback", str)
    public_url: str | None = _setting(
        "READER_PUBLIC_URL", None,
        "the origin browsers use to reach reader (e.g. https://reader.example.org behind a TLS proxy): its host"
        " is accepted, and cross-site checks and the bookmarklet use it", _public_url)
    allowed_hosts: tuple[str, ...] = _setting(
        "READER_ALLOWED_HOSTS", (),
        "more host names reader answers to, comma-separated (loopback names and addresses always are);"
        " any other Host header gets 421, which stops DNS rebinding", _hosts)
    max_upload_bytes: int = _setting(
        "READER_MAX_UPLOAD_BYTES", 20_000_000,
        "largest request body for a file upload (the import form: OPML or any export reader reads); other forms and JSON get 1 MB, requests before login 16 KB",
        int)
    max_import_links: int = _setting(
        "READER_MAX_IMPORT_LINKS", 100_000,
        "most links one import brings in (a file holding more brings in its first ones and says so); imports"
        " run one at a time", int)
    header_timeout: float = _setting(
        "READER_HEADER_TIMEOUT", 10.0,
        "seconds a connection may take to send a request's headers before `reader serve` closes it", float)
    search_budget: float = _setting(
        "READER_SEARCH_BUDGET", 2.0,
        "seconds one search may run before it is stopped and answered as too broad", float)
    feed_items: int = _setting(
        "READER_FEED_ITEMS", 200,
        "items one refresh takes from one feed at most, newest first (the feed says how many were left out)", int)
    host: str = _setting("READER_HOST", "127.0.0.1", "address `reader serve` binds to", str)
    port: int = _setting("READER_PORT", 8000, "port `reader serve` listens on", int)
    page_size: int = _setting("READER_PAGE_SIZE", 50, "cards per browse page", int)
    poll_interval: float = _setting(
        "READER_POLL_INTERVAL", 2.0,
        "seconds between a page's checks on its cards (and the article) still being cleaned", float)
    open_wait: float = _setting(
        "READER_OPEN_WAIT", 0.0,
        "seconds opening an article that is not ready waits for its text before showing the feed's summary"
        " (0: the summary and “cleaning…” at once, the text swapped in when it is there)", float)
    edition_max_bytes: int = _setting(
        "READER_EDITION_MAX_BYTES", 50_000_000,
        "largest EPUB edition (text and images, before compression); articles past it wait for the next one", int)
    edition_marks_read: bool = _setting(
        "READER_EDITION_MARKS_READ", False,
        "mark an edition's articles read and done (off the reading list) once /edition.epub or"
        " `reader edition` has delivered it", _bool)
    offline_max_bytes: int = _setting(
        "READER_OFFLINE_MAX_BYTES", 200_000_000,
        "most a device keeps for offline reading (the reading list's pages and images); past it, the"
        " articles tapped last are left online only", int)
    sync_star_queues: bool = _setting(
        "READER_SYNC_STAR_QUEUES", True,
        "a star set from a native app (Google Reader or Fever API) also queues the article for cleaning, as"
        " apps have no queue button; a star set in reader's own pages never does", _bool)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> "Settings":
        source: Mapping[str, str] = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            env = f.metadata["env"]
            if env in source:
                try:
                    values[f.name] = f.metadata["parse"](source[env])
                except ValueError as exc:
                    raise ValueError(f"{env}: {exc}") from None
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

    def replace(self, **changes: Any) -> "Settings":
        return dataclasses.replace(self, **changes)

    def check_for_serving(self) -> None:
        """Serving beyond loopback needs READER_PASSWORD, of MIN_PASSWORD_LENGTH or more:
        anyone who can reach the port could otherwise read and change the library.
        Raises Invalid saying what to do. `reader serve` calls it, and so should
        create_app."""
        if is_loopback(self.host):
            return
        if not self.password:
            raise Invalid(f"refusing to listen on {self.host} without READER_PASSWORD: anyone who can reach it"
                          " could read and change your library. Set READER_PASSWORD, or bind to 127.0.0.1.")
        if len(self.password) < MIN_PASSWORD_LENGTH:
            raise Invalid(f"READER_PASSWORD is too short to listen on {self.host}: anyone who can reach it may"
                          f" guess it. Use at least {MIN_PASSWORD_LENGTH} characters.")


def describe() -> list[tuple[str, str, str]]:
    """(variable, default, help) for every setting: the README table and `reader --help` use it."""
    return [(f.metadata["env"], _shown(f.default), f.metadata["help"]) for f in dataclasses.fields(Settings)]


def _shown(default: Any) -> str:
    if isinstance(default, tuple):
        return ",".join(default)
    return str(default)
