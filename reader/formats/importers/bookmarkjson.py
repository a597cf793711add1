"""Bookmarks as JSON: the files browsers keep (Chrome's `Bookmarks`, Firefox's backup) and
the exports of Pinboard and Delicious.

Chrome: `{"roots": {"bookmark_bar": {...}, "other": {...}, "synced": {...}}, "version": 1}`,
each root a folder `{"type": "folder", "name", "children": [...]}` and each bookmark
`{"type": "url", "name", "url", "date_added"}`, the date in microseconds since 1601-01-01
(as Windows counts), written as a string. Edge and Brave write the same file.

Firefox (Bookmarks → Manage → Import and Backup → Backup…): one tree of
`{"guid", "title", "type", "children", "uri", "dateAdded", "tags"}`, `type` a
`text/x-moz-place-container` (a folder), `text/x-moz-place` (a bookmark) or
`text/x-moz-place-separator`; dates in microseconds since 1970; `tags` joined by commas.
The root (`placesRoot`) holds the menu, toolbar, other (unfiled) and mobile folders, and a
tags folder that older versions filled with one folder per tag around copies of the
bookmarks (newer ones leave it empty and write `tags` on each bookmark): those copies give
tags, not links. Older backups keep a bookmark's description in `annos`.

In both, folders become tags (and `LinkRecord.folder`) as in a Netscape bookmark file;
the browser's own roots are no tags (told by their keys and guids: their names are in the
browser's language, "Barre de favoris", "Autres marque-pages"). A browser knows nothing of
reading: nothing is marked read. Nesting is walked with a stack of our own, not recursion.

Pinboard (`/export/format:json/`, also the shape of the old Delicious API):
`[{"href", "description" (the title), "extended" (the description), "time", "shared",
"toread", "tags" (space separated)}]`. A bookmark marked `toread: yes` is unread and the
others were read, as in Pinboard's own "unread" filter and its HTML export (TOREAD): a
bookmark is saved to keep, and "to read" is the mark a person sets on the ones still
waiting. In a file with no `toread` at all, nothing is marked read.

Delicious (its 2021 JSON export): `[{"url", "title", "description", "tags": [...],
"created" (unix seconds), "private", "owner", "others"}]`; no read state."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from .base import (
    MAX_FOLDER_DEPTH,
    MAX_NOTE,
    MAX_TAG,
    Collector,
    Note,
    Ticks,
    long_text,
    one_line,
)

CHROME_EPOCH = -11_644_473_600.0  # 1601-01-01 in Unix seconds: where Chrome's clock starts
_CHROME_ROOTS = {"bookmark_bar", "other", "synced"}
_FOLDER, _PLACE, _SEPARATOR = ("text/x-moz-place-container", "text/x-moz-place", "text/x-moz-place-separator")
_FIREFOX_ROOTS = {"placesRoot", "bookmarksMenuFolder", "toolbarFolder", "unfiledBookmarksFolder", "mobileFolder",
                  "tagsFolder"}
_FIREFOX_ROOT_GUIDS = {"root________", "menu________", "toolbar_____", "unfiled_____", "mobile______",
                       "tags________"}
_TAGS_ROOT = ("tagsFolder", "tags________")
_DESCRIPTION = "bookmarkProperties/description"
_TAG_TEXT = 100_000  # characters of one tags field split; past it the rest is ignored
_PINBOARD_KEYS = {"toread", "shared", "extended", "hash", "meta"}

Folder = tuple[str, ...]


def bookmark_kind(document: Any) -> str | None:
    """'chrome', 'firefox', 'pinboard', 'delicious' or None, from the document's shape."""
    if isinstance(document, dict):
        roots = document.get("roots")
        if isinstance(roots, dict) and roots.keys() & _CHROME_ROOTS:
            return "chrome"
        if document.get("type") == _FOLDER and (isinstance(document.get("children"), list)
                                                or document.get("root") == "placesRoot"):
            return "firefox"
        return None
    if not isinstance(document, list):
        return None
    entries = [e for e in document[:50] if isinstance(e, dict)]
    keys: set[str] = set().union(*entries) if entries else set()
    if "href" in keys and keys & _PINBOARD_KEYS:
        return "pinboard"
    if "url" in keys and (keys & {"others", "owner"} or {"created", "private"} <= keys):
        return "delicious"
    return None


def _children(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


_END = object()


def _walk(top: list[Any], folder_of: Callable[[Any], tuple[list[Any], str] | None]) -> Iterator[tuple[Any, Folder]]:
    """Every item that is not a folder, in the file's order, with the names of the folders
    around it, outermost first (at most MAX_FOLDER_DEPTH). `folder_of` gives a folder's
    children and its name ("" for one that is no tag), None for anything else. Depth
    first with a stack of our own: no nesting a file can hold reaches Python's limit."""
    stack: list[tuple[Iterator[Any], Folder]] = [(iter(top), ())]
    while stack:
        items, path = stack[-1]
        item = next(items, _END)
        if item is _END:
            stack.pop()
            continue
        folder = folder_of(item)
        if folder is None:
            yield item, path
            continue
        children, name = folder
        inner = path + (name,) if name and len(path) < MAX_FOLDER_DEPTH else path
        stack.append((iter(children), inner))


def _split(value: Any, separator: str | None) -> list[str]:
    """Tags written in one string (split on `separator`, None for any space) or as a list."""
    if isinstance(value, str):
        return value[:_TAG_TEXT].split(separator)
    if isinstance(value, list):
        return [v for v in value[:1000] if isinstance(v, str)]
    return []


def _not_a_bookmark(collector: Collector, where: str, item: Any) -> None:
    collector.report.rows += 1
    if isinstance(item, dict):
        shown = one_line(str(item.get("type")), 60)
        collector.report.add(where, f"neither a bookmark nor a folder (type {shown!r})", kept=False)
    else:
        collector.report.add(where, "not a bookmark (not a JSON object)", kept=False)


# -- Chrome -------------------------------------------------------------------------------


def _chrome_folder(item: Any) -> tuple[list[Any], str] | None:
    if isinstance(item, dict) and item.get("type") == "folder":
        return _children(item.get("children")), one_line(item.get("name"), MAX_TAG)
    return None


def parse_chrome(document: dict[str, Any], collector: Collector) -> None:
    roots = document["roots"]
    # The roots' own names (in the browser's language) are no tags: walk what they hold.
    top = [child for root in roots.values() if isinstance(root, dict) for child in _children(root.get("children"))]
    for number, (item, folder) in enumerate(_walk(top, _chrome_folder), 1):
        where = f"bookmark {number}"
        if not isinstance(item, dict) or item.get("type") != "url":
            _not_a_bookmark(collector, where, item)
            continue
        collector.link(where, item.get("url"), title=item.get("name"), tags=folder,
                       added_at=Ticks(item.get("date_added"), 1e6, CHROME_EPOCH), folder=folder)


# -- Firefox ------------------------------------------------------------------------------


def _is_root(item: dict[str, Any]) -> bool:
    return item.get("root") in _FIREFOX_ROOTS or item.get("guid") in _FIREFOX_ROOT_GUIDS


def _is_tags_root(item: Any) -> bool:
    return isinstance(item, dict) and (item.get("root") == _TAGS_ROOT[0] or item.get("guid") == _TAGS_ROOT[1])


def _firefox_folder(item: Any) -> tuple[list[Any], str] | None:
    if not isinstance(item, dict) or item.get("type") != _FOLDER:
        return None
    if _is_tags_root(item):
        return [], ""  # read apart, as tags (_tag_folders)
    return _children(item.get("children")), "" if _is_root(item) else one_line(item.get("title"), MAX_TAG)


def _tag_folders(document: dict[str, Any]) -> dict[str, set[str]]:
    """Older backups' tags: {bookmark URL: the names of the tag folders it is in}."""
    tags: dict[str, set[str]] = {}
    for root in _children(document.get("children")):
        if not _is_tags_root(root):
            continue
        for tag in _children(root.get("children")):
            if not isinstance(tag, dict) or tag.get("type") != _FOLDER:
                continue
            name = one_line(tag.get("title"), MAX_TAG)
            for place in _children(tag.get("children")) if name else ():
                if isinstance(place, dict) and isinstance(place.get("uri"), str):
                    tags.setdefault(place["uri"].strip(), set()).add(name)
    return tags


def _description(annos: Any) -> Note | None:
    for anno in _children(annos):
        if isinstance(anno, dict) and anno.get("name") == _DESCRIPTION:
            text = long_text(anno.get("value"), MAX_NOTE)
            return Note(text) if text else None
    return None


def parse_firefox(document: dict[str, Any], collector: Collector) -> None:
    tagged = _tag_folders(document)
    number = 0
    for item, folder in _walk([document], _firefox_folder):
        if isinstance(item, dict) and item.get("type") == _SEPARATOR:
            continue  # a line in a menu: no row
        number += 1
        where = f"bookmark {number}"
        if not isinstance(item, dict) or item.get("type") != _PLACE:
            _not_a_bookmark(collector, where, item)
            continue
        url = item.get("uri")
        tags: list[str] = _split(item.get("tags"), ",") + list(folder)
        if isinstance(url, str):
            tags += tagged.get(url.strip(), ())
        note = _description(item.get("annos"))
        collector.link(where, url, title=item.get("title"), tags=tags, added_at=Ticks(item.get("dateAdded"), 1e6),
                       notes=[note] if note else (), folder=folder)


# -- Pinboard and Delicious ---------------------------------------------------------------


def _entries(document: list[Any], collector: Collector) -> Iterable[tuple[str, dict[str, Any]]]:
    for number, entry in enumerate(document, 1):
        where = f"bookmark {number}"
        if isinstance(entry, dict):
            yield where, entry
        else:
            _not_a_bookmark(collector, where, entry)


def _yes(value: Any) -> bool:
    return isinstance(value, str) and value.strip().lower() in ("yes", "1", "true") or value is True


def parse_pinboard(document: list[Any], collector: Collector) -> None:
    any_toread = any(isinstance(e, dict) and "toread" in e for e in document)
    for where, entry in _entries(document, collector):
        note = long_text(entry.get("extended"), MAX_NOTE)
        collector.link(where, entry.get("href"), title=entry.get("description"), tags=_split(entry.get("tags"), None),
                       added_at=entry.get("time"), read=any_toread and not _yes(entry.get("toread")),
                       notes=[Note(note)] if note else ())


def parse_delicious(document: list[Any], collector: Collector) -> None:
    for where, entry in _entries(document, collector):
        note = long_text(entry.get("description"), MAX_NOTE)
        collector.link(where, entry.get("url"), title=entry.get("title"), tags=_split(entry.get("tags"), None),
                       added_at=entry.get("created"), notes=[Note(note)] if note else ())
