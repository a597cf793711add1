"""The HTML pages, one module per page: each handler parses its form or query, calls the
Reader and renders a template (or redirects, 303, after a form). The route table that
names them all is reader/web/routes.py.

    browse      the headlines: every list, its filters, search, a page of it
    taps        the taps (queue, unqueue, read, star, tags, bulk marks) and the line's page
    article     the reader view: an article opened, its body's poll, its images
    feeds       the feeds page: subscribe, unsubscribe, rename, folders, refresh
    library     files in and out: imports of any kind, the bookmarks and OPML exports
    save        saving a link (the bookmarklet's and the share target's confirmation)
    session     login, logout, and the presentation choices kept in cookies
    status      the stats page
    tags        the tags page: every tag with its count
    editions    the EPUB downloads and the OPDS catalog for e-readers
    app_shell   the installable app: manifest, service worker, the offline page
"""



