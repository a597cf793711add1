"""reader: skim headlines, tap to queue, read clean text.

The data flow, module by module:

    core         the Reader every interface calls: queue/unqueue (the only way into the
                 line), articles with positions and waits, search, read/star, save,
                 subscribe, OPML, stats; parse_bool/parse_int, the snippet highlighter
    records      Article, Feed, Content: what the core hands out, every field declared
    errors       ReaderError and its kinds (NotFound, Invalid, ...), mapped once per interface
    urls         the one check of every URL given to reader
    views, api   the pages and the JSON API: adapters over the core
    app, cli     `create_app(settings)` and `running(settings)`; the `reader` command (an adapter too)
    access       security headers, no cross-site writes (CSRF), the optional password
    feeds        fetch and parse subscriptions into headlines (never queues anything)
    discover     subscribe by a feed's or a site's URL (<link rel="alternate">)
    opml         OPML import and export (no DOCTYPE, no entities: xmlguard, the one hardened expat)
    store/       every SQL statement, by entity: schema (and migrations), feeds, articles,
                 line (the queue and its claims), ledger, media (stored images and raw
                 pages), portable (export/import), search, library (tags, notes, folders,
                 imported links), devices (reading positions, actions applied once by a
                 device's id)
    line         positions in the line turned into honest waiting times
    worker       pulls the next queued article itself and cleans it
    cleaning     the one claim-then-extract path shared by the worker, a direct open, a
                 reclean (the stored raw page) and a page the browser sent
    images       an article's images: fetched in the claimed run, sniffed, capped, and the
                 HTML pointed at reader's copies
    extract      fetch a page and hand it to the cleaner (CPU part off the loop)
    prewarm      imported by the pool's fork server only: the cleaner's and the feed
                 parser's first calls, made once there instead of in every pool process
    cleaner      two extractors vote on the article's blocks; metadata, structure, plain text
    furniture    after the vote: cross-references, rights lines, closing headings dropped
    standfirst   after the vote: the lead paragraph beside the title put back
    blocks       what all three read an article as: voting units, their text, words, triples
    fetch/       the only HTTP client: guard (address check), sample_site, client, inflate
                 (bounded decompression), and fetch itself (size cap, deadline)
    sanitize     the one nh3 cleaner for every piece of outside HTML
    portability  backup (SQLite's backup API), export and import of your library
    moving       move in: another app's export (read by importers/) applied to the store,
                 never queued or fetched; the web form's import jobs and their progress
    importers/   read other apps' exports (Pocket, Instapaper, Omnivore, wallabag, bookmarks,
                 OPML with folders) into records, told apart by content; no database here
    resources    where the templates, static files and first-run seed are (package data)
    pwa          the installable app: manifest, the service worker script (static/sw.js) and
                 its version; offline actions and the reading position are static/offline.js
    edition/     EPUB 3 books and the OPDS catalog from plain article records (no database)
    editions     the reading list, one article and the catalog as books: core -> edition/
"""

__version__ = "0.1.0"
