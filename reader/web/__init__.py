"""The web adapter: HTML pages and the JSON API over the core (reader/core), with the
access layer in front. It holds no rule of its own: handlers parse a request, call the
Reader and shape its answer; the HTTP conditions (who opened a page, which list a link
names) are read here and handed to the core as plain values.

    app         create_app: the lifespan (entering core.running), the one mapping of a
                ReaderError to an answer, the kept-page hook in front of the router
    routes      the one route table, grouped by page, and the `rowid` path converter
    pages/      the HTML pages, one module per page
    api/        the JSON API: helpers, feeds, articles, devices, status
    render      the Jinja environment and its filters, render(), the error page
    forms       what forms and links carry: back_to, the list a link names, ids, toggles
    requests    what a handler reads off a request: its Reader, htmx, who opened it
    kept        ready pages kept from before, their ETags and the 304s
    access      the access middleware: hosts, size caps, cross-site checks, login
    headers     the security headers every answer carries, the bare refusals
    csrf        the pages' form tokens
    sessions    login sessions and the wrong-password throttle
    server      uvicorn's protocol with reader's header deadline and connection limit
    pwa         the installable app's manifest and service worker script
"""
