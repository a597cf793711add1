"""reader: skim headlines, tap to queue, read clean text.

The data flow, module by module:

    feeds      fetch and parse subscriptions into headlines (never queues anything)
    discover   subscribe by a feed's or a site's URL (<link rel="alternate">)
    opml       OPML import and export (no DOCTYPE, no entities)
    portability  backup (SQLite's backup API), export and import of your library
    web        the browse page and the JSON API; the tap handlers are the only enqueuers
    store      every SQL statement: queue, claims, cleaned content, the ledger
    worker     pulls the oldest queued article itself and cleans it
    cleaning   the one claim-then-extract path shared by the worker and a direct open
    extract    fetch a page and turn it into sanitized reading HTML (CPU part off the loop)
    fetch      the only HTTP client: address guard, size cap, deadline
    sanitize   the one nh3 cleaner for every piece of outside HTML
"""

__version__ = "0.1.0"
