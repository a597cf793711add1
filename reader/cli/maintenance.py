"""Looking after the database and the cleaner: `check`, `stats`, `reclean`, and `clean`
(saved HTML files cleaned as the workers do, with no database)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from ..core import library
from ..params import MAX_ID
from ..settings import Settings
from .base import Command, one_line, quiet, whole


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    sub.add_parser("check", parents=[common],
                   help="is the database intact (PRAGMA quick_check), writable, with room on its disk?")
    sub.add_parser("stats", parents=[common], help="the extraction ledger's counts, per kind of run too")
    reclean = sub.add_parser("reclean", parents=[common],
                             help="clean articles again from their stored raw pages (fetches no page)")
    which = reclean.add_mutually_exclusive_group(required=True)
    which.add_argument("ids", nargs="*", type=whole(1, MAX_ID), default=[], metavar="ID", help="these articles")
    which.add_argument("--all", action="store_true", help="every article with a stored raw page")
    which.add_argument("--failed", action="store_true", help="every failed article with a stored raw page")
    reclean.add_argument("--refetch", action="store_true",
                         help="fetch each page anew (the site changed it) instead of using the stored one;"
                              " highlights are placed again in the new text")
    clean = sub.add_parser("clean", help="clean saved HTML files exactly as the workers do (no database)")
    clean.add_argument("files", nargs="+", metavar="FILE")
    clean.add_argument("--url", help="the page's address, for its links (default: the file's own)")
    clean.add_argument("--json", action="store_true", help="one JSON object per file, one per line")


def clean(args: argparse.Namespace) -> int:
    """Clean each file; one that cannot be cleaned is reported and the rest go on.
    Exit status 1 if any file failed. Needs no settings: no database is opened."""
    failed = 0
    for name in args.files:
        refused = library.not_a_regular_file(Path(name))
        try:
            if refused:
                raise ValueError(refused.removeprefix(f"{name}: "))
            result = library.clean_file(name, args.url)
        except Exception as exc:  # noqa: BLE001 - any file's failure is reported, never a traceback
            failed += 1
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc) or type(exc).__name__
            if args.json:
                print(library.as_json_line(name, None, reason), flush=True)
            else:
                print(f"reader: {name}: {reason}", file=sys.stderr)
            continue
        if args.json:
            print(library.as_json_line(name, result), flush=True)
        else:
            print(f"# {result['title'] or name}\n\n{result['text']}\n")
    return 1 if failed else 0


def check(settings: Settings, args: argparse.Namespace) -> int:
    """One line: `ok`, or what is wrong (exit status 2)."""
    health = library.check(settings)
    if health.ok:
        print(f"{settings.db}: ok")
        return 0
    print(f"reader: {settings.db}: {one_line('; '.join(health.problems()))}", file=sys.stderr)
    return 2


def stats(settings: Settings, args: argparse.Namespace) -> int:

    async def run() -> int:
        async with quiet(settings) as reader:
            print(json.dumps(await reader.stats(), indent=2))
        return 0

    return asyncio.run(run())


def reclean(settings: Settings, args: argparse.Namespace) -> int:
    """One line per article: recleaned, failed (the text it had stays) or skipped.
    Exit status 1 if any failed or was skipped."""
    if not (args.ids or args.all or args.failed):
        print("reader: name the articles (IDs), or --all, or --failed", file=sys.stderr)
        return 2

    async def run() -> int:
        status = 0
        async with quiet(settings) as reader:
            ids = list(args.ids) if args.ids else await reader.reclean_ids(failed=args.failed)
            if not ids:
                print("nothing to reclean: no article has a stored raw page" + (" and failed" if args.failed else ""))
            # as many at once as there are extraction processes; the lines still come in
            # the order asked, each as soon as it and those before it are done
            at_once = asyncio.Semaphore(max(1, settings.extract_processes))

            async def one(article_id: int) -> tuple[str, str | None]:
                async with at_once:
                    return await reader.reclean(article_id, refetch=args.refetch)

            runs = [asyncio.ensure_future(one(article_id)) for article_id in ids]
            for article_id, task in zip(ids, runs):
                outcome, error = await task
                if outcome == "cached":
                    print(f"article {article_id}: recleaned")
                else:
                    status = 1
                    print(f"article {article_id}: {outcome}: {one_line(error or '')}")
        return status

    return asyncio.run(run())


COMMANDS: dict[str, Command] = {"check": check, "stats": stats, "reclean": reclean}
