"""The sync API for native feed apps: the Google Reader API (`greader`) and Fever
(`fever`), thin adapters over reader/core/sync.py. `routes` goes into the app's route
table; the access layer lets these paths through its session and CSRF checks
(access.SYNC_PATHS), as they sign in with app passwords of their own."""

from __future__ import annotations

from starlette.routing import BaseRoute

from . import fever, greader

routes: list[BaseRoute] = [*greader.routes, *fever.routes]

__all__ = ["routes"]
