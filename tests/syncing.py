"""What the sync API's tests share: `reader serve` as a real process, a library of feed
articles served by the loopback page server, an app password made through the core, and
a Google Reader client speaking the wire as the apps do (tests/test_sync_*.py)."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from reader.core import sync
from reader.settings import Settings
from reader.web.app import running

from . import commands
from .helpers import free_port, rss, wait_for
from .loopback import LoopbackServer

API = "/reader/api/0"
READING_LIST = "user/-/state/com.google/reading-list"
READ = "user/-/state/com.google/read"
STARRED = "user/-/state/com.google/starred"
QUEUE = "user/-/label/Queue"
READY = "user/-/label/Reading list"


class Serve:
    """`reader serve` as a real process on a free port (started as tests/commands.py
    starts commands), with a worker that cleans what is queued."""

    def __init__(self, settings: Settings, **env: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        environment = {**os.environ, **dict(READER_ALLOW_PRIVATE_URLS="1", READER_REFRESH_INTERVAL="0",
                                            READER_WORKER_INTERVAL="0.1", READER_RETRY_BACKOFF="0.05",
                                            READER_EXTRACT_PROCESSES="1"), **env}
        self.proc = commands.start(["serve", "--db", str(settings.db), "--port", str(self.port)], env=environment)

    async def __aenter__(self) -> Serve:
        async def up() -> bool:
            try:
                async with httpx.AsyncClient() as client:
                    return (await client.get(self.url + "/static/style.css")).status_code == 200
            except httpx.TransportError:
                assert self.proc.poll() is None, self.proc.stderr.read() if self.proc.stderr else ""
                return False

        await wait_for(up, timeout=60, interval=0.1)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.communicate()


def feed_of(pages: LoopbackServer, slugs: Sequence[str], path: str = "/feed.xml", title: str = "Test feed",
            summary: str = "<p>The feed's own summary.</p>", **route: Any) -> str:
    """A feed at `path` of an article page per slug (each carrying `marker-SLUG`)."""
    links = [pages.add_article(slug, **route) for slug in slugs]
    return pages.add(path, rss([{"title": f"Article {s}", "link": link, "summary": summary}
                                for s, link in zip(slugs, links)], title=title),
                     headers={"Content-Type": "application/rss+xml"})


async def subscribed(settings: Settings, *feeds: str, folder: str | None = None) -> dict[str, int]:
    """Subscribe to these feeds (each fetched now) in one folder; the articles' ids by title."""
    async with running(settings.replace(extract_processes=0), worker=False, refresher=False) as reader:
        for url in feeds:
            added = await reader.subscribe(url)
            if folder:
                await reader.set_folder(added.feed_id, folder)
        return {a.title: a.id for a in await reader.articles(limit=1000)}


async def refreshed(settings: Settings) -> None:
    async with running(settings.replace(extract_processes=0), worker=False, refresher=False) as reader:
        await reader.refresh()


async def app_password(settings: Settings, name: str = "phone") -> str:
    """A new app password, as `reader app-password add` makes it."""
    async with running(settings.replace(extract_processes=0), worker=False, refresher=False) as reader:
        _, password = await sync.add_app_password(reader, name)
    return password


async def revoke(settings: Settings, name: str) -> None:
    async with running(settings.replace(extract_processes=0), worker=False, refresher=False) as reader:
        await sync.revoke_app_password(reader, name)


class GReader:
    """A Google Reader client over httpx: signs in, then sends its token on every call."""

    def __init__(self, base_url: str, **client: Any) -> None:
        self.http = httpx.AsyncClient(base_url=base_url, timeout=30, **client)
        self.auth: str | None = None

    async def __aenter__(self) -> GReader:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.http.aclose()

    async def login(self, name: str, password: str, *, as_json: bool = False) -> httpx.Response:
        data = {"Email": name, "Passwd": password, **({"output": "json"} if as_json else {})}
        answer = await self.http.post("/accounts/ClientLogin", data=data)
        if answer.status_code == 200:
            self.auth = answer.json()["Auth"] if as_json else dict(
                line.split("=", 1) for line in answer.text.splitlines())["Auth"]
        return answer

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"GoogleLogin auth={self.auth}"} if self.auth else {}

    async def get(self, path: str, params: Any = None) -> httpx.Response:
        return await self.http.get(API + path, params=params, headers=self.headers())

    async def post(self, path: str, data: Any = None, params: Any = None) -> httpx.Response:
        return await self.http.post(API + path, data=data, params=params, headers=self.headers())

    async def ids(self, **params: Any) -> list[int]:
        """Every id of a stream, following the continuation as NetNewsWire does."""
        found: list[int] = []
        query = dict(params)
        while True:
            answer = await self.get("/stream/items/ids", params=query)
            assert answer.status_code == 200, answer.text
            body = answer.json()
            found += [int(ref["id"]) for ref in body["itemRefs"]]
            if "continuation" not in body:
                return found
            query["c"] = body["continuation"]

    async def contents(self, ids: Sequence[int], **data: Any) -> list[dict[str, Any]]:
        answer = await self.post("/stream/items/contents",
                                 data={"i": [f"tag:google.com,2005:reader/item/{i:x}" for i in ids], **data})
        assert answer.status_code == 200, answer.text
        items: list[dict[str, Any]] = answer.json()["items"]
        return items


def server_time(answer: httpx.Response) -> int:
    """The HTTP Date of an answer, in seconds: what NetNewsWire asks `ot=` from next time."""
    return int(parsedate_to_datetime(answer.headers["date"]).timestamp())


def item_number(item: Mapping[str, Any]) -> int:
    return int(str(item["id"]).rsplit("/", 1)[1], 16)
