"""The tags page: every tag with how many articles have it, each a link to the list of
those articles (the headlines filtered by the tag)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from ...core import ArticleFilter
from ..forms import list_url
from ..render import nav, render
from ..requests import reader_of


async def tags_page(request: Request) -> Response:
    """Sorted by name in any case, as the store counts them: a tag's count is the length
    of its list, since both read the same article_tags rows."""
    found = await reader_of(request).tags()
    tags = [(t["name"], t["articles"], list_url(ArticleFilter(tag=t["name"]))) for t in found]
    return render(request, "tags.html", tags=tags, **await nav(request))
