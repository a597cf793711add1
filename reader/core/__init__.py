"""The one core every interface calls: the web pages, the JSON API, the command line and
any interface to come import this package (with reader.records, reader.errors,
reader.settings and reader.params) and nothing below it.

    running     the composition root: opens the resources, starts the background work,
                yields the one Reader (the web app's lifespan and the CLI enter it)
    reader      the Reader facade: taps into the line, lists with their waits, search,
                reading state, saved links, subscriptions, stats
    reading     the direct lane: an article opened now, with a bounded wait, one task
                per article, a failed one not tried again by opening it
    waits       positions in the line turned into honest waiting times
    failures    what a failed article's reason advises (the browser, or that the page is gone)
    imports     another app's export read into the library (never queued or fetched)
    exports     backup, export and import of reader's own library file
    editions    the reading list, one article and the catalog as EPUB and OPDS
    rules       rules made, tested, applied to stored articles and undone; paused feeds
"""

from .reader import (
    LANES,
    MAX_ID,
    MAX_LIMIT,
    READING_LIST,
    SEARCH_MAX_OFFSET,
    STATES,
    UNREAD_CAP,
    ArticleFilter,
    Reader,
    Saved,
    parse_bool,
    parse_filter,
    parse_int,
    parse_list_page,
    snippet_html,
)
from .reading import Opened, OpenedBy, OpenedPage
from .rules import Applied, Tested
from ..feeds.rules import ACTIONS, FIELDS, KINDS, SCOPES, Rule
from ..fetch.guard import Resolver
from .running import running

__all__ = [
    "ACTIONS",
    "FIELDS",
    "KINDS",
    "SCOPES",
    "Applied",
    "Rule",
    "Tested",
    "LANES",
    "MAX_ID",
    "MAX_LIMIT",
    "READING_LIST",
    "SEARCH_MAX_OFFSET",
    "STATES",
    "UNREAD_CAP",
    "ArticleFilter",
    "Opened",
    "OpenedBy",
    "OpenedPage",
    "Reader",
    "Resolver",
    "Saved",
    "parse_bool",
    "parse_filter",
    "parse_int",
    "parse_list_page",
    "running",
    "snippet_html",
]
