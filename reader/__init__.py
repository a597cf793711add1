"""reader: skim headlines, tap to queue, read clean text.

The packages, in the order an article goes through them (docs/architecture.md):

    feeds/       feeds come in: parse (RSS, Atom, JSON Feed), refresh (conditional GET,
                 headlines stored, never queued), discover (a site's feed)
    fetch/       the only HTTP client: the address guard, size caps, deadlines, bounded
                 decompression, an article's HTML page
    core/        the one core every interface calls: the Reader (the tap is the only way
                 into the line), the direct lane, waits, the library's files in and out,
                 editions, the sync API's rules, the composition root
    store/       every SQL statement, by entity; schema.sql and the migrations to it
    jobs/        background work: the worker that pulls, the one claim-then-clean path,
                 an article's images, the refresher, the pool's warm-up
    pool         the CPU pool: cleaning and parsing off the event loop
    clean/       page bytes to content, pure CPU: two extractors vote (every call into
                 their internals in clean/upstream.py); the one nh3 sanitizer
    formats/     files in and out without a database: importers, OPML, EPUB, OPDS
    web/         the pages, the JSON API, the sync API, the access layer, the server
    cli/         the `reader` command
    samples/     the sample site a first run reads offline

and the vocabulary every floor shares: errors (the one error tree), records (frozen
records the core hands out), params (parsing of what comes from outside), settings, urls
(the one URL check), resources (package data). A package imports only from the floors
below it, and the adapters (web, cli) only from the core and the vocabulary
(tests/test_layers.py).
"""

__version__ = "0.1.0"
