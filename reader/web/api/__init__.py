"""The JSON API, an adapter over the core (reader/core): what scripts and other clients
rely on (documented in docs/api.md). Errors are always {"error": "..."} with the status of
their ReaderError, mapped once, in reader/web/app.py.

    json        the request and answer helpers: bodies, ids, the records as JSON, once
    feeds       subscriptions: list, add, rename or move, delete, refresh
    articles    articles: lists and search, one, save, queue, marks, tags, content
    devices     what a device that reads offline asks: what to save, what it opened
    status      the line and the ledger's counts
"""



