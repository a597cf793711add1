"""Subscriptions: `add-feed`, `refresh`, and OPML in (`import-opml`) and out (`export-opml`)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from ..core import library
from ..errors import Invalid
from ..settings import Settings
from ..urls import check_url
from .base import Command, one_line, quiet


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    add = sub.add_parser("add-feed", parents=[common], help="subscribe to a feed and fetch it")
    add.add_argument("url")
    sub.add_parser("refresh", parents=[common], help="refresh every feed now")
    opml_in = sub.add_parser("import-opml", parents=[common], help="subscribe to the feeds in an OPML file")
    opml_in.add_argument("file", type=Path)
    opml_in.add_argument("--no-refresh", action="store_true",
                         help=f"subscribe only; let the refresher fetch them (otherwise up to"
                              f" {library.IMPORT_FETCH_LIMIT} new feeds are fetched now)")
    sub.add_parser("export-opml", parents=[common], help="write your feeds as OPML to stdout")


def add_feed(settings: Settings, args: argparse.Namespace) -> int:
    url = check_url(args.url)  # refused before anything is opened

    async def add() -> int:
        async with quiet(settings) as reader:
            # a feed's URL or a site's (its feed is discovered); a new feed is fetched by
            # subscribing, one already there is refreshed now
            try:
                subscription = await reader.subscribe(url)
            except Invalid as exc:  # a page that links to no feed
                print(f"reader: {one_line(exc.message)}", file=sys.stderr)
                return 1
            feed_id, created = subscription.feed_id, subscription.created
            new = None
            if not created:
                [result] = await reader.refresh_ids([feed_id])
                new = result.new
            feed = await reader.feed(feed_id)
            if feed.error:
                print(f"feed {feed_id} added, but fetching it failed: {feed.error}", file=sys.stderr)
                return 1
            found = f" (found on {url})" if subscription.discovered else ""
            count = f"{new} new articles" if new is not None else f"{feed.articles} articles"
            print(f"feed {feed_id}: {'added' if created else 'already subscribed'}{found}, {count}")
            return 0

    return asyncio.run(add())


def refresh(settings: Settings, args: argparse.Namespace) -> int:
    async def run() -> int:
        async with quiet(settings) as reader:
            results = await reader.refresh()
        for r in results:
            status = f"error: {r.error}" if r.error else ("not modified" if r.not_modified else f"{r.new} new")
            print(f"{r.feed_id:>5}  {r.url}  {status}")
        return 1 if any(r.error for r in results) else 0

    return asyncio.run(run())


def print_fetched(outcome: library.ImportOutcome) -> None:
    """What the one rule did with an import's new feeds (reader/core/library.py)."""
    if outcome.fetched:
        failed = [r for r in outcome.fetched if r.error]
        print(f"fetched {len(outcome.fetched) - len(failed)} of {len(outcome.fetched)} new feeds")
        for r in failed:
            print(f"  {r.url}: {r.error}", file=sys.stderr)
    elif outcome.waiting:
        print(f"{outcome.waiting} new feeds left to the background refresh (`reader refresh` fetches them now)")


def import_opml(settings: Settings, args: argparse.Namespace) -> int:
    try:
        data = library.read_file(args.file)
    except Invalid as exc:
        print(f"reader: {one_line(exc.message)}", file=sys.stderr)
        return 2

    async def run() -> int:
        async with quiet(settings) as reader:
            try:
                outcome = await reader.import_data(data, str(args.file), fetch=not args.no_refresh, opml_only=True)
            except Invalid as exc:
                print(f"reader: {one_line(exc.message)}", file=sys.stderr)
                return 1
        summary = f"{outcome.feeds_new} new feeds, {outcome.feeds_there} already subscribed"
        if outcome.refused_feeds:
            summary += f", {len(outcome.refused_feeds)} skipped (not http or https URLs)"
        print(f"{args.file}: {summary}")
        for url in outcome.refused_feeds:
            print(f"  skipped {one_line(url)}", file=sys.stderr)
        if not args.no_refresh:
            print_fetched(outcome)
        return 0

    return asyncio.run(run())


def export_opml(settings: Settings, args: argparse.Namespace) -> int:

    async def run() -> bytes:
        async with quiet(settings) as reader:
            return await reader.export_opml()

    sys.stdout.buffer.write(asyncio.run(run()))
    sys.stdout.flush()
    return 0


COMMANDS: dict[str, Command] = {"add-feed": add_feed, "refresh": refresh, "import-opml": import_opml,
                                "export-opml": export_opml}
