"""/api/imports: an import started from the page (the form answers with its page at once),
followed to its report, and the person's act of queueing its unread links."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ..requests import reader_of
from .json import path_id, queued_many_json


async def import_job(request: Request) -> Response:
    """GET /api/imports/{id}: how far it got, and once finished its report: the counts,
    each skipped row with its reason, the notes, the new feeds fetched (or left to the
    refresher), and how many of its links are unread and not queued (`unqueued`)."""
    reader = reader_of(request)
    job = await reader.import_job(path_id(request))
    answer: dict[str, Any] = {
        "id": job.id, "name": job.name, "started_at": job.started_at, "finished": job.finished,
        "status": None if job.finished else job.status, "done": job.done, "total": job.total,
        "error": job.error, "report": None,
    }
    o = job.outcome
    if o is not None:
        answer["report"] = {
            "format": o.format, "summary": o.summary(), "new": o.new, "merged": o.merged, "in_feeds": o.in_feeds,
            "contents": o.contents,
            "feeds_new": o.feeds_new, "feeds_there": o.feeds_there, "states": o.states,
            "skipped": [{"where": where, "reason": why} for where, why in o.skipped],
            "skipped_not_listed": o.skipped_not_listed, "notes": o.notes, "refused_feeds": o.refused_feeds,
            "feeds_fetched": [{"feed_id": r.feed_id, "url": r.url, "new": r.new, "error": r.error}
                              for r in o.fetched],
            "feeds_waiting": o.waiting, "stopped": o.stopped,
            "unqueued": await reader.import_unqueued(job),
        }
    return JSONResponse(answer)


async def queue_import(request: Request) -> Response:
    """POST /api/imports/{id}/queue: its links that are unread and not queued or ready, as
    one bulk queue (the same answer as POST /api/articles/queue); 409 while it runs."""
    return JSONResponse(queued_many_json(await reader_of(request).queue_import(path_id(request))))
