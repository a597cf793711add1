"""The one core every interface calls: the web pages, the JSON API, the command line and
any interface to come import this package (with reader.records, reader.errors,
reader.settings and reader.params) and nothing below it.

    reader      the Reader facade: taps into the line, lists with their waits, search,
                reading state, saved links, subscriptions, stats
    waits       positions in the line turned into honest waiting times
    imports     another app's export read into the library (never queued or fetched)
    exports     backup, export and import of reader's own library file
    editions    the reading list, one article and the catalog as EPUB and OPDS
"""

from .reader import (
    LANES,
    MAX_ID,
    MAX_LIMIT,
    READING_LIST,
    SEARCH_MAX_OFFSET,
    ArticleFilter,
    Reader,
    parse_bool,
    parse_filter,
    parse_int,
    snippet_html,
)

__all__ = [
    "LANES",
    "MAX_ID",
    "MAX_LIMIT",
    "READING_LIST",
    "SEARCH_MAX_OFFSET",
    "ArticleFilter",
    "Reader",
    "parse_bool",
    "parse_filter",
    "parse_int",
    "snippet_html",
]
