"""Files in and out: the import form (any file reader imports, told apart by content),
an import's page following it to its report, and the bookmarks and OPML exports."""

from __future__ import annotations

import asyncio
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from ...errors import Invalid
from ..csrf import checked_form
from ..render import nav, render
from ..requests import reader_of
from .feeds import render_feeds
from .taps import queued_notice

async def import_form(request: Request) -> Response:
    """An upload of any file reader imports, told apart by content. Another app's library
    is imported in the background, and the answer is its page, which follows the import
    to its report. An OPML upload subscribes to every feed in it (with its folders) and
    answers with the feeds page. Either way the core's one rule for the new feeds applies
    (reader/core/library.py): a few are fetched right away, many are left to the refresher;
    links are never fetched or queued."""
    reader = reader_of(request)
    form = await checked_form(request)
    upload = form.get("file") or form.get("opml")
    if upload is None or isinstance(upload, str):
        await form.close()
        return await render_feeds(request, status=422, message="choose a file to import")
    try:
        limit = reader.settings.max_upload_bytes
        data = await upload.read(limit + 1)
    finally:
        await form.close()  # the spooled upload file
    if len(data) > limit:
        return await render_feeds(request, status=422, message=f"the file is larger than {limit:,} bytes")
    name = upload.filename or "the file"
    try:
        kind = await asyncio.to_thread(reader.format_of, data, name)
        if kind != "opml":
            job = await reader.start_import_data(data, name)
            return RedirectResponse(f"/imports/{job.id}", status_code=303)
        outcome = await reader.import_data(data, name, opml_only=True)
    except Invalid as exc:
        return await render_feeds(request, status=422, message=exc.message)
    failed = [r.feed_id for r in outcome.fetched if r.error is not None]
    query = urlencode([("imported", outcome.feeds_new), ("existing", outcome.feeds_there),
                       ("skipped", len(outcome.refused_feeds)), ("waiting", outcome.waiting),
                       *(("failed", i) for i in failed)])
    return RedirectResponse("/feeds?" + query, status_code=303)


async def import_page(request: Request) -> Response:
    """One web import: how far it got while it runs (the page reloads itself), then its
    report: new, already there, with their texts, each skipped row with its reason, and
    how many of its links are unread and not queued (the report offers to queue them)."""
    reader = reader_of(request)
    job = await reader.import_job(request.path_params["id"])
    unqueued = await reader.import_unqueued(job) if job.finished and not reader.read_only else 0
    return render(request, "import.html", job=job, unqueued=unqueued, **await nav(request))


async def queue_import(request: Request) -> Response:
    """POST /imports/{id}/queue: the person's "Queue the N unread links" on an import's
    report (an import never queues by itself). Then the list of what is in line, with the
    bulk queue's notice and its undo."""
    await checked_form(request)
    queued = await reader_of(request).queue_import(request.path_params["id"])
    return RedirectResponse("/?" + urlencode({"state": "queued", **queued_notice(queued)}), status_code=303)


async def export_bookmarks_file(request: Request) -> Response:
    body = await reader_of(request).export_bookmarks()
    return Response(body, media_type="text/html; charset=utf-8",
                    headers={"content-disposition": 'attachment; filename="reader-library.html"'})


async def export_opml_file(request: Request) -> Response:
    body = await reader_of(request).export_opml()
    return Response(body, media_type="text/x-opml; charset=utf-8",
                    headers={"content-disposition": 'attachment; filename="reader-feeds.opml"'})
