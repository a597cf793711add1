"""/api/rules: rules made, listed, changed, deleted, applied to stored articles (a count
first with dry_run) and undone; and the articles rules hid."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ...core import MAX_LIMIT, Rule
from ...errors import Invalid
from ..requests import reader_of
from .json import json_body, path_id, query_int


def rule_json(r: Rule) -> dict[str, Any]:
    return {"id": r.id, "field": r.field, "match": r.kind, "pattern": r.pattern, "scope": r.scope,
            "action": r.action, "enabled": r.enabled, "created": r.created, "hidden": r.hidden,
            "describe": r.describe()}


async def list_rules(request: Request) -> Response:
    return JSONResponse({"rules": [rule_json(r) for r in await reader_of(request).rules()]})


async def add_rule(request: Request) -> Response:
    """POST /api/rules {"field", "match"?, "pattern", "scope"?, "action"?, "enabled"?}: 201
    with the rule; 422 with the reason for a part that is wrong (a regular expression that
    does not compile, or one refused as able to run away)."""
    made = await reader_of(request).add_rule(await json_body(request))
    return JSONResponse(rule_json(made), status_code=201)


async def update_rule(request: Request) -> Response:
    changed = await reader_of(request).update_rule(path_id(request), await json_body(request))
    return JSONResponse(rule_json(changed))


async def delete_rule(request: Request) -> Response:
    shown = await reader_of(request).delete_rule(path_id(request))
    return JSONResponse({"shown_again": shown})


async def apply_rule(request: Request) -> Response:
    """POST /api/rules/{id}/apply {"dry_run": true}: how many stored articles it would
    change; without dry_run they are changed, and the answer's `stamp` undoes it
    (POST /api/rules/{id}/undo {"stamp"})."""
    body = await json_body(request)
    dry_run = body.get("dry_run", False)
    if not isinstance(dry_run, bool):
        raise Invalid("dry_run must be true or false")
    applied = await reader_of(request).apply_rule(path_id(request), dry_run=dry_run)
    return JSONResponse({"rule": rule_json(applied.rule), "dry_run": dry_run, "count": applied.count,
                         "stamp": applied.stamp})


async def undo_rule(request: Request) -> Response:
    given_back = await reader_of(request).undo_rule(path_id(request), (await json_body(request)).get("stamp"))
    return JSONResponse({"count": given_back})


async def test_rule(request: Request) -> Response:
    """POST /api/rules/test {a rule's parts}: the newest 200 headlines, each with whether
    the rule matches it and would change it; nothing is saved."""
    tested = await reader_of(request).test_rule(await json_body(request))
    return JSONResponse({"items": [{"id": t.id, "title": t.title, "feed_title": t.feed_title,
                                    "matches": t.matches, "changes": t.changes} for t in tested],
                         "changes": sum(t.changes for t in tested)})


async def hidden(request: Request) -> Response:
    """GET /api/hidden: the articles rules hid, newest first, each with its rule."""
    limit = query_int(request, "limit", 50, high=MAX_LIMIT) or 50
    rows = await reader_of(request).hidden(before=query_int(request, "before"), limit=limit)
    return JSONResponse({"items": [{"id": r["id"], "title": r["title"], "url": r["url"], "feed_id": r["feed_id"],
                                    "feed_title": r["feed_title"], "hidden_at": r["hidden_at"],
                                    "rule": rule_json(r["rule"]) if r["rule"] else None} for r in rows]})


async def show_again(request: Request) -> Response:
    await reader_of(request).show_again(path_id(request))
    return JSONResponse({"shown": True})
