"""The `reader` command (also `python -m reader`): the parser, `main`, and the table of
commands, each group in its own module:

    serve        serve, worker                            long-running processes
    feeds        add-feed, refresh, import-opml, export-opml
    library      save, import, export, backup, edition    your library and your data
    maintenance  check, stats, reclean, clean             the database and the cleaner
    passwords    app-password add | list | revoke         what native apps sign in with
    rules        rules list | add | test | apply | undo | delete   what hides, keeps, tags or stars

A command parses its arguments, calls the core (reader.core) and prints; a refusal from the
core (a ReaderError) becomes one line on stderr and exit status 2, here in `main`.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from ..errors import ReaderError
from ..settings import Settings, describe
from . import feeds, library, maintenance, passwords, rules, serve
from .base import Command, database_path_problem, one_line
from .serve import seed_database

GROUPS = (serve, feeds, library, maintenance, passwords, rules)
COMMANDS: dict[str, Command] = {name: command for group in GROUPS for name, command in group.COMMANDS.items()}


def _parser() -> argparse.ArgumentParser:
    settings_help = "\n".join(f"  {env:28} {help} (default {default})" for env, default, help in describe())
    parser = argparse.ArgumentParser(
        prog="reader",
        description="A self-hosted reading app: skim headlines, tap to queue, read clean text.",
        epilog="settings (environment variables):\n" + settings_help,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--db", type=Path, help="database file (READER_DB, default ./reader.db)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for group in GROUPS:
        group.add_parsers(sub, common)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "clean":  # files only: no settings, no database
        return maintenance.clean(args)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per fetch is noise
    try:
        settings = Settings.from_env(db=args.db, host=getattr(args, "host", None), port=getattr(args, "port", None))
    except ValueError as exc:
        print(f"reader: {exc}", file=sys.stderr)
        return 2
    problem = database_path_problem(settings.db) if args.command != "check" else None
    if problem:
        print(f"reader: {one_line(problem)}", file=sys.stderr)
        return 2
    try:
        return COMMANDS[args.command](settings, args)
    except ReaderError as exc:  # the one place a refusal becomes a command's answer
        print(f"reader: {one_line(exc.message)}", file=sys.stderr)
        return 2


__all__ = ["COMMANDS", "main", "seed_database"]
