"""`reader rules list | add | test | apply | undo | delete`: the rules that hide, keep
only, tag or star articles (reader/core/rules.py). `add` and `test` take the same parts;
`apply` counts first and changes stored articles only with --yes."""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from ..core import FIELDS, KINDS, Rule
from ..settings import Settings
from .base import one_line, quiet, whole

COMMAND = "rules"
_ID = whole(1, 2**63 - 1)


def _parts(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("field", choices=FIELDS, help="what the rule looks at (age: older than N days)")
    parser.add_argument("pattern", help="the words (all of them, as whole words), the regular expression, or days")
    parser.add_argument("--match", choices=KINDS, default="words", help="words (default) or regex")
    parser.add_argument("--scope", default="all", help="all (default), folder:NAME or feed:ID")
    parser.add_argument("--action", default="hide", help="hide (default), keep_only, star or tag:NAME")


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    """The `rules` command and its actions, on the CLI's subparsers."""
    command = sub.add_parser(COMMAND, parents=[common], help="rules that hide, keep only, tag or star articles")
    actions = command.add_subparsers(dest="action_name", required=True, metavar="ACTION")
    actions.add_parser("list", parents=[common], help="every rule, with how many articles it hides")
    add = actions.add_parser("add", parents=[common], help="make a rule; it applies to what arrives from now on")
    _parts(add)
    test = actions.add_parser("test", parents=[common], help="what a rule would match among the newest 200 headlines")
    _parts(test)
    apply = actions.add_parser("apply", parents=[common], help="apply a rule to stored articles (counts without --yes)")
    apply.add_argument("id", type=_ID)
    apply.add_argument("--yes", action="store_true", help="change them; otherwise only count")
    undo = actions.add_parser("undo", parents=[common], help="take back one apply, by the stamp it printed")
    undo.add_argument("id", type=_ID)
    undo.add_argument("stamp")
    delete = actions.add_parser("delete", parents=[common], help="delete a rule; what it hid is shown again")
    delete.add_argument("id", type=_ID)


def _line(r: Rule) -> str:
    state = "" if r.enabled else "  (disabled)"
    return f"{r.id}\t{one_line(r.describe())}\t{r.hidden} hidden{state}"


def run(settings: Settings, args: argparse.Namespace) -> int:
    """Run `reader rules ACTION`; a refusal (a regular expression refused, no such rule) is
    a ReaderError, which the CLI prints as one line with exit status 2."""
    async def act() -> int:
        async with quiet(settings) as reader:
            name = args.action_name
            if name == "list":
                for r in await reader.rules():
                    print(_line(r))
            elif name in ("add", "test"):
                fields = {"field": args.field, "pattern": args.pattern, "match": args.match, "scope": args.scope,
                          "action": args.action}
                if name == "add":
                    print(_line(await reader.add_rule(fields)))
                else:
                    tested = await reader.test_rule(fields)
                    for t in tested:
                        if t.changes:
                            print(f"{t.id}\t{one_line(t.title)}\t{one_line(t.feed_title)}")
                    print(f"{sum(t.changes for t in tested)} of the newest {len(tested)} headlines would change")
            elif name == "apply":
                applied = await reader.apply_rule(args.id, dry_run=not args.yes)
                if not args.yes:
                    print(f"rule {args.id} would change {applied.count} stored articles; --yes to apply it")
                else:
                    print(f"rule {args.id} changed {applied.count} stored articles"
                          + (f"; undo with: reader rules undo {args.id} {applied.stamp!r}" if applied.stamp else ""))
            elif name == "undo":
                print(f"{await reader.undo_rule(args.id, args.stamp)} articles given back")
            else:
                print(f"rule {args.id} deleted; {await reader.delete_rule(args.id)} articles shown again")
        return 0

    return asyncio.run(act())


COMMANDS = {COMMAND: run}
