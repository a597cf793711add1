"""The sync API for native feed apps: the Google Reader API (`greader`) and Fever
(`fever`), thin adapters over reader/core/sync.py, with the wire format they share
(`wire`). Their routes are in the app's one route table (reader/web/routes.py); the access
layer lets these paths through its session and CSRF checks (access.SYNC_PATHS), as they
sign in with app passwords of their own."""
