"""A queued article always has its place in the line, however the line moves meanwhile.

An article's state and its position used to be read in two statements: a take committed
between them made a queued article's position None, and every page with positions
answered 500. Raced here: takes and hand-backs in a loop against the pages and the API
in a loop.
"""

from __future__ import annotations

import asyncio
import re

from ..conftest import app_client

PATHS = ["/", "/queue", "/api/queue", "/api/articles", "/live?" + "&".join(f"id={i}" for i in range(1, 41))]


async def test_positions_hold_while_workers_take_and_hand_back(settings):
    settings = settings.replace(serve_workers=0)  # this test is the only worker
    async with app_client(settings) as client:
        store = client.app.state.reader._store
        ids = [(await store.save_link(f"http://127.0.0.1:9/{i}"))[0] for i in range(40)]
        for article_id in ids:
            await store.queue(article_id)

        stop = asyncio.Event()
        takes = 0

        async def worker() -> None:
            nonlocal takes
            while not stop.is_set():
                run = await store.take_next("racer", ttl=60)
                assert run is not None  # hand-backs keep every article in line
                takes += 1
                await store.release(run)

        racing = asyncio.create_task(worker())
        failures: list[str] = []
        try:
            for round in range(60):
                for path in PATHS:
                    response = await client.get(path)
                    if response.status_code != 200:
                        failures.append(f"{path}: {response.status_code}")
                items = (await client.get("/api/articles")).json()["items"]
                failures += [f"article {a['id']} queued without a position" for a in items
                             if a["state"] == "queued" and not isinstance(a["position"], int)]
                line = (await client.get("/api/queue")).json()["items"]
                positions = [a["position"] for a in line]
                if positions != list(range(1, len(positions) + 1)):
                    failures.append(f"line positions {positions}")
                for article_id in ids[round % 5::5][:2]:
                    article = (await client.get(f"/api/articles/{article_id}")).json()
                    if article["state"] == "queued" and not isinstance(article["position"], int):
                        failures.append(f"article {article_id} queued without a position")
        finally:
            stop.set()
            await racing
        assert failures == []
        assert takes > 0  # the line really moved while the pages were read


def _cards(html: str) -> dict[int, tuple[str, int | None]]:
    """Each card in an answer: (state, its '#n in line' or None)."""
    cards: dict[int, tuple[str, int | None]] = {}
    for chunk in html.split('<article class="card')[1:]:
        article_id = int(re.search(r'id="card-(\d+)"', chunk).group(1))
        state = re.search(r"state-(\w+)", chunk).group(1)
        position = re.search(r"#(\d+) in line", chunk)
        cards[article_id] = (state, int(position.group(1)) if position else None)
    return cards


def _line_failures(where: str, cards: dict[int, tuple[str, int | None]], expected: set[int]) -> list[str]:
    """What is wrong with one answer that should show every card in `expected`: a card
    missing, a cleaning card still showing a place, or two cards on the same place."""
    failures = [f"{where}: card {i} missing" for i in sorted(expected - set(cards))]
    failures += [f"{where}: card {i} is {s} but shows #{p}" for i, (s, p) in cards.items()
                 if (s == "queued") != (p is not None)]
    places = sorted(p for s, p in cards.values() if p is not None)
    if places != list(range(1, len(places) + 1)):
        failures.append(f"{where}: places {places}")
    return failures


async def test_taps_answer_every_pending_card_from_one_read_while_workers_take(settings):
    """A tap's answer carries every pending card of the page (the page sends their ids),
    read together: racing taps of both lanes against takes, no two cards ever share a place,
    and a card a worker has taken shows 'cleaning…' in the very next answer, never a place."""
    settings = settings.replace(serve_workers=0)  # this test is the only worker
    async with app_client(settings) as client:
        store = client.app.state.reader._store
        ids = [(await store.save_link(f"http://127.0.0.1:9/{i}"))[0] for i in range(12)]
        for article_id in ids[:6]:
            await store.queue(article_id)

        stop = asyncio.Event()
        taken: list[int] = []

        async def worker() -> None:
            while not stop.is_set():
                run = await store.take_next("racer", ttl=60)
                if run is None:
                    await asyncio.sleep(0)
                    continue
                taken.append(run.article_id)
                await asyncio.sleep(0.01)  # holds it a moment: the cards must say so
                await store.release(run)

        racing = asyncio.create_task(worker())
        failures: list[str] = []
        try:
            for round in range(40):
                article_id = ids[round % len(ids)]
                lane = "next" if round % 3 == 0 else "normal"
                answer = await client.post(
                    f"/articles/{article_id}/queue", headers={"HX-Request": "true"},
                    data={"lane": lane, "id": [str(i) for i in ids]})
                assert answer.status_code == 200
                failures += _line_failures(f"tap {round}", _cards(answer.text), set(ids))
                live = await client.get("/live?" + "&".join(f"id={i}" for i in ids))
                failures += _line_failures(f"poll {round}", _cards(live.text), set(ids))
                taken_now = await store.take_next("tester", ttl=60)
                if taken_now is not None:  # a take, then at once a tap: it must show cleaning
                    answer = await client.post(f"/articles/{ids[0]}/queue", headers={"HX-Request": "true"},
                                               data={"id": [str(i) for i in ids]})
                    cards = _cards(answer.text)
                    if cards.get(taken_now.article_id, ("", None))[0] != "cleaning":
                        failures.append(f"taken card {taken_now.article_id} shows {cards.get(taken_now.article_id)}")
                    await store.release(taken_now)
        finally:
            stop.set()
            await racing
        assert failures == []
        assert taken  # the line really moved while the taps were answered
