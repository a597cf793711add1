"""The installable app's shell: the web app manifest, the service worker script (built
by reader/web/pwa.py) and the page it shows offline for what is not saved."""

from __future__ import annotations

import json

from starlette.requests import Request
from starlette.responses import Response

from ..pwa import manifest, service_worker
from ..render import render


async def web_manifest(request: Request) -> Response:
    return Response(json.dumps(manifest()), media_type="application/manifest+json",
                    headers={"cache-control": "no-cache"})


async def service_worker_script(request: Request) -> Response:
    # no-cache: the browser asks every time whether a deploy changed it
    return Response(service_worker(), media_type="text/javascript", headers={"cache-control": "no-cache"})


async def offline_page(request: Request) -> Response:
    """What the service worker shows offline for what is not saved on the device (it keeps
    both versions of this page when it installs)."""
    what = "article" if request.query_params.get("what") == "article" else "page"
    return render(request, "offline.html", what=what)
