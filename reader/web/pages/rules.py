"""The rules page: every rule with what it hides now, a form to make one that shows what
it would match among the newest 200 headlines before it is saved ("Test"), turning one
on and off, deleting it, applying it to stored articles (a count first, then the change
with an undo); and the "hidden by rules" view, each article with its rule and "Show
again". Pausing a feed is on the feeds page (feeds.html), which posts here."""

from __future__ import annotations

from typing import Any

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from ...core import FIELDS, KINDS, Applied, parse_int
from ...errors import Invalid, ReaderError
from ..csrf import checked_form
from ..forms import back_to
from ..render import nav, render
from ..requests import reader_of

HIDDEN_PAGE = 50


def _fields(form: FormData) -> dict[str, Any]:
    """A rule's parts from the form: a tag action takes its name from its own field."""
    action = str(form.get("action") or "hide")
    if action == "tag":
        action = "tag:" + str(form.get("tag") or "")
    return {"field": form.get("field"), "match": form.get("match"), "pattern": form.get("pattern") or "",
            "scope": form.get("scope"), "action": action}


async def _page(request: Request, status: int = 200, **context: Any) -> Response:
    reader = reader_of(request)
    feeds = await reader.feeds(counts=False)
    folders = sorted({f.folder for f in feeds if f.folder}, key=str.lower)
    form = context.pop("form", None) or {"scope": request.query_params.get("scope") or "all"}
    return render(request, "rules.html", status=status, rules=await reader.rules(), feeds=feeds,
                  feed_names={f.id: f.title or f.url for f in feeds}, folders=folders, fields=FIELDS,
                  kinds=KINDS, form=form, hidden_count=await reader.hidden_count(), **context,
                  **await nav(request))


async def rules_page(request: Request) -> Response:
    return await _page(request)


async def add_rule(request: Request) -> Response:
    """Save a rule, or with test=1 show what it would match first (nothing saved). A part
    that is wrong is said on the page (422), the form kept as it was filled."""
    form = await checked_form(request)
    fields = _fields(form)
    kept = {**fields, "action": str(form.get("action") or "hide"), "tag": form.get("tag") or ""}
    reader = reader_of(request)
    try:
        if form.get("test"):
            tested = await reader.test_rule(fields)
            return await _page(request, form=kept, tested=tested)
        made = await reader.add_rule(fields)
    except Invalid as exc:
        return await _page(request, status=exc.status, form=kept, message=exc.message)
    return RedirectResponse(f"/rules?made={made.id}#rule-{made.id}", status_code=303)


async def set_enabled(request: Request) -> Response:
    form = await checked_form(request)
    await reader_of(request).update_rule(request.path_params["id"], {"enabled": form.get("enabled") == "1"})
    return RedirectResponse("/rules", status_code=303)


async def delete_rule(request: Request) -> Response:
    await checked_form(request)
    shown = await reader_of(request).delete_rule(request.path_params["id"])
    return await _page(request, notice=f"Rule deleted; {shown:,} article{'s' if shown != 1 else ''} shown again.")


async def apply_rule(request: Request) -> Response:
    """The first post counts (this would hide 1,240 stored articles) and asks; only the
    confirming post, carrying confirm=yes, changes them, and the answer offers the undo."""
    form = await checked_form(request)
    reader = reader_of(request)
    rule_id = request.path_params["id"]
    confirmed = form.get("confirm") == "yes"
    applied: Applied = await reader.apply_rule(rule_id, dry_run=not confirmed)
    return await _page(request, applied=applied, confirmed=confirmed)


async def undo_rule(request: Request) -> Response:
    form = await checked_form(request)
    given_back = await reader_of(request).undo_rule(request.path_params["id"], form.get("stamp"))
    return await _page(request, notice=f"Undone: {given_back:,} article{'s' if given_back != 1 else ''} as before.")


async def hidden_page(request: Request) -> Response:
    """The articles rules hid, newest first, each with its rule and "Show again"."""
    reader = reader_of(request)
    before = parse_int(request.query_params.get("before"), "before")
    rows = await reader.hidden(before=before, limit=HIDDEN_PAGE + 1)
    more = len(rows) > HIDDEN_PAGE
    rows = rows[:HIDDEN_PAGE]
    return render(request, "hidden.html", articles=rows, more=more, count=await reader.hidden_count(),
                  next_before=rows[-1]["id"] if more else None, **await nav(request))


async def show_again(request: Request) -> Response:
    form = await checked_form(request)
    try:
        await reader_of(request).show_again(request.path_params["id"])
    except ReaderError:
        pass  # shown again already (a second click, another tab): the list says how it is now
    return RedirectResponse(back_to(form, "/rules/hidden"), status_code=303)


async def pause_feed(request: Request) -> Response:
    """From the feeds page: pause a feed for a day, a week or until a date, or end it."""
    form = await checked_form(request)
    value: object = form.get("pause") or None
    if value == "date":
        value = form.get("until") or ""
        if not value:
            raise Invalid("give the date the pause ends")
    await reader_of(request).pause_feed(request.path_params["id"], value)
    return RedirectResponse(f"/feeds#feed-{request.path_params['id']}", status_code=303)
