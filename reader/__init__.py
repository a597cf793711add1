"""reader: skim headlines, tap to queue, read clean text.

The data flow, module by module:

    feeds        fetch and parse subscriptions into headlines (never queues anything)
    discover     subscribe by a feed's or a site's URL (<link rel="alternate">)
    opml         OPML import and export (no DOCTYPE, no entities)
    views, api   the pages and the JSON API; `api.tap` is the only way into the queue
    access       security headers, no cross-site writes (CSRF), the optional password
    store/       every SQL statement, by entity: schema, feeds, articles, line + claims, ledger, portable
    line         positions in the line turned into honest waiting times
    worker       pulls the next queued article itself and cleans it
    cleaning     the one claim-then-extract path shared by the worker and a direct open
    extract      fetch a page and hand it to the cleaner (CPU part off the loop)
    cleaner      two extractors vote on the article's blocks; metadata, structure, plain text
    fetch        the only HTTP client: address guard, size cap, deadline
    sanitize     the one nh3 cleaner for every piece of outside HTML
    portability  backup (SQLite's backup API), export and import of your library
    importers/   read other apps' exports (Pocket, Instapaper, Omnivore, wallabag, bookmarks,
                 OPML with folders) into records, told apart by content; no database here
    app, cli     `create_app(settings)` and `running(settings)`; the `reader` command
    resources    where the templates, static files and first-run seed are (package data)
"""

__version__ = "0.1.0"
