"""The installable app: the web app manifest, the service worker script and its version.

The worker's own code is static/sw.js (read it first: it says what is kept on a device
and when). It is served from the root, /sw.js, so its scope is every page, with its
VERSION filled in here: reader's version and a hash of every file the pages are built
from (static files and templates). A deploy that changes any of them changes the
script's bytes, so browsers install the new worker, which deletes the old caches when
it takes over: no stale shell after an upgrade."""

from __future__ import annotations

import functools
import hashlib
from typing import Any

from .. import __version__
from ..resources import static_dir, templates_dir

THEME_COLOR = "#1f5fbf"  # the pages' accent
BACKGROUND_COLOR = "#fdfcf9"  # the pages' light background
# Where the installed app opens: the reading list, which is what is saved offline.
START_URL = "/?state=ready&unread=1"
_PLACEHOLDER = "__READER_VERSION__"


@functools.lru_cache(maxsize=1)
def shell_version() -> str:
    """reader's version and a hash of the files every page is built from."""
    digest = hashlib.sha256()
    for root in (static_dir(), templates_dir()):
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
    return f"{__version__}-{digest.hexdigest()[:12]}"


@functools.lru_cache(maxsize=1)
def service_worker() -> str:
    return (static_dir() / "sw.js").read_text(encoding="utf-8").replace(_PLACEHOLDER, shell_version())


def manifest() -> dict[str, Any]:
    return {
        "id": "/",
        "name": "reader",
        "short_name": "reader",
        "description": "Skim headlines, tap to queue, read clean text, online or not.",
        "start_url": START_URL,
        "scope": "/",
        "display": "standalone",
        "theme_color": THEME_COLOR,
        "background_color": BACKGROUND_COLOR,
        "icons": [
            {"src": f"/static/icons/icon-{size}.png", "sizes": f"{size}x{size}", "type": "image/png",
             "purpose": "any maskable"}
            for size in (192, 512)
        ],
        # Sharing a link to the installed app opens the same confirmation the bookmarklet
        # does (/save): a GET that saves nothing by itself, so no share can save (or queue)
        # without the person's tap on the page it lands on.
        "share_target": {
            "action": "/save",
            "method": "GET",
            "params": {"title": "title", "text": "text", "url": "url"},
        },
    }
