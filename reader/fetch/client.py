"""The client factory: the one httpx client reader makes, guarded and offline-capable."""

from __future__ import annotations

import httpx

from .. import __version__
from .guard import Resolver, _GuardedTransport

USER_AGENT = f"reader/{__version__} (self-hosted reading app; fetches pages its user asked for)"
MAX_REDIRECTS = 5


def make_client(
    *, allow_private: bool, deadline: float = 30.0, resolver: Resolver | None = None,
    sites: dict[str, httpx.AsyncBaseTransport] | None = None,
) -> httpx.AsyncClient:
    """The client for all outgoing requests. `resolver` (host, port) -> [addresses]
    replaces DNS; tests use it to play a rebinding name server. `sites` maps host names
    to in-process transports that answer for them: the app mounts the sample site
    there (reader/samples), and tests play a public web site with it (nothing public is
    reachable from a test machine). Such a site never touches the network, and every request it redirects
    to is a new request through the guard like any other."""
    # Mounted per scheme, not all://: a redirect to file:///etc/passwd keeps the host it
    # came from, and must reach the guarded transport (which refuses the scheme), not
    # the in-process site.
    mounts: dict[str, httpx.AsyncBaseTransport] = {}
    for host, transport in (sites or {}).items():
        mounts[f"http://{host}"] = mounts[f"https://{host}"] = transport
    return httpx.AsyncClient(
        transport=_GuardedTransport(allow_private, resolver),
        mounts=mounts,
        follow_redirects=True,
        max_redirects=MAX_REDIRECTS,
        trust_env=False,
        # per-operation limits no tighter than the overall deadline fetch() enforces
        timeout=httpx.Timeout(deadline, connect=min(10.0, deadline)),
        headers={"User-Agent": USER_AGENT},
    )
