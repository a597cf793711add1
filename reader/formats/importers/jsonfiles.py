"""JSON exports: wallabag's (both versions), Omnivore's metadata files, and telling
reader's own and the bookmark files (bookmarkjson.py) apart.

wallabag: an array of entries (`title, url, content, is_archived, is_starred, tags,
created_at, published_at, published_by, annotations`). The flags are 0/1 (booleans in
some versions); tags are labels, or objects with a `label` in API-shaped files; dates are
"2017-02-14 17:50:31" or ISO 8601; an annotation has the highlighted `quote` and the
person's `text`. `is_not_parsed` means wallabag could not fetch the page, and `content` is
then its apology, not the article.

wallabag v1 (2014-2016): an array of the rows of its database, each field twice (by number,
"0" to "6", and by name: `id, title, url, is_read, is_fav, content, user_id`) and `tags`,
the entry's tags joined by commas in one string; every value a string ("0"/"1" for the
flags), and no date at all. A page v1 could not fetch was saved "Untitled" (in the
person's language), its content an apology: as wallabag v2 does on import, that content is
not taken for the article.

Omnivore: `metadata_*.json` arrays of `id, slug, title, description, author, url, state
(Active | Archived), readingProgress, labels, savedAt, updatedAt, publishedAt`; the content
and highlights sit beside them in the ZIP (see archives.py)."""

from __future__ import annotations

import json
from typing import Any

from .base import MAX_NOTE, MAX_NOTES, BadDate, Collector, ImportFileError, Note, long_text, parse_time
from .bookmarkjson import bookmark_kind

READER_FORMAT = "reader-export"


def load_json(text: str, name: str) -> Any:
    try:
        return json.loads(text)
    except RecursionError:
        raise ImportFileError(f"{name}: JSON nested too deeply to be an export") from None
    except ValueError as exc:
        raise ImportFileError(f"{name}: not valid JSON ({exc})") from None


def json_kind(document: Any) -> str | None:
    """'reader', 'wallabag', 'wallabag-v1', 'omnivore', one of bookmark_kind's or None,
    from the document's shape."""
    if isinstance(document, dict):
        return "reader" if document.get("format") == READER_FORMAT else bookmark_kind(document)
    if not isinstance(document, list):
        return None
    entries = [e for e in document[:50] if isinstance(e, dict)]
    if not entries:
        return None
    keys = set().union(*entries)
    if keys & {"is_archived", "is_starred"} or {"created_at", "content"} <= keys and "url" in keys:
        return "wallabag"
    if keys & {"is_read", "is_fav"} and "url" in keys:
        return "wallabag-v1"
    if keys & {"savedAt", "labels", "readingProgress"} and "url" in keys:
        return "omnivore"
    return bookmark_kind(document)


def as_list(value: Any) -> list[Any]:
    """The value if it is a JSON array, else nothing: a field of the wrong type is ignored."""
    return value if isinstance(value, list) else []


def _flag(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes")
    return value is True or (isinstance(value, (int, float)) and not isinstance(value, bool) and value != 0)


def _labels(values: Any, key: str) -> list[str]:
    if not isinstance(values, list):
        return []
    labels = []
    for value in values[:1000]:
        if isinstance(value, dict):
            value = value.get(key) or value.get("name")
        if isinstance(value, str):
            labels.append(value)
    return labels


def _note_time(value: Any) -> float | None:
    try:
        return parse_time(value)
    except BadDate:
        return None


def parse_wallabag(document: list[Any], collector: Collector) -> None:
    for number, entry in enumerate(document, 1):
        where = f"entry {number}"
        if not isinstance(entry, dict):
            collector.report.rows += 1
            collector.report.add(where, "not an entry (not a JSON object)", kept=False)
            continue
        url = entry.get("url") or entry.get("given_url") or entry.get("origin_url")
        notes: list[Note] = []
        for annotation in as_list(entry.get("annotations")):
            if not isinstance(annotation, dict) or len(notes) >= MAX_NOTES:
                continue
            quote = long_text(annotation.get("quote"), MAX_NOTE)
            comment = long_text(annotation.get("text"), MAX_NOTE)
            if quote or comment:
                notes.append(Note(quote or comment or "", comment if quote else None,
                                  _note_time(annotation.get("created_at")), highlight=bool(quote)))
        authors = entry.get("published_by")
        author = ", ".join(a for a in authors if isinstance(a, str)) if isinstance(authors, list) else authors
        content = None if _flag(entry.get("is_not_parsed")) else entry.get("content")
        collector.link(where, url, title=entry.get("title"), tags=_labels(entry.get("tags"), "label"),
                       added_at=entry.get("created_at"), read=_flag(entry.get("is_archived")),
                       starred=_flag(entry.get("is_starred")), author=author, published=entry.get("published_at"),
                       content_html=content if isinstance(content, str) else None, notes=notes)


# What wallabag v1 titled a page it could not fetch, in each of its languages (wallabag v2
# reads the same list on import)
_UNTITLED = {"", "Untitled", "Sans titre", "podle nadpisu", "Sin título", "با عنوان", "per titolo", "Sem título",
             "Без названия", "po naslovu", "Без назви", "No title found"}
V1_UNDATED = "wallabag v1 exports hold no dates: the links come in as saved now"


def parse_wallabag_v1(document: list[Any], collector: Collector) -> None:
    if V1_UNDATED not in collector.report.notes:
        collector.report.notes.append(V1_UNDATED)
    for number, entry in enumerate(document, 1):
        where = f"entry {number}"
        if not isinstance(entry, dict):
            collector.report.rows += 1
            collector.report.add(where, "not an entry (not a JSON object)", kept=False)
            continue
        title = entry.get("title")
        unfetched = isinstance(title, str) and title.strip() in _UNTITLED
        tags = entry.get("tags")
        labels = tags[:100_000].split(",") if isinstance(tags, str) else _labels(tags, "label")
        content = None if unfetched else entry.get("content")
        collector.link(where, entry.get("url"), title="" if unfetched else title, tags=labels,
                       read=_flag(entry.get("is_read")), starred=_flag(entry.get("is_fav")),
                       content_html=content if isinstance(content, str) else None)


def parse_omnivore_metadata(document: list[Any], collector: Collector, label: str = "",
                            contents: dict[str, str] | None = None,
                            highlights: dict[str, list[Note]] | None = None) -> None:
    """The entries of one metadata file; `contents` and `highlights` by slug, from the ZIP."""
    for number, entry in enumerate(document, 1):
        where = f"{label}entry {number}"
        if not isinstance(entry, dict):
            collector.report.rows += 1
            collector.report.add(where, "not an entry (not a JSON object)", kept=False)
            continue
        state = str(entry.get("state") or "").strip().lower()
        if state == "deleted":
            collector.report.rows += 1
            collector.report.add(where, "deleted in Omnivore", kept=False)
            continue
        progress = entry.get("readingProgress")
        finished = isinstance(progress, (int, float)) and not isinstance(progress, bool) and progress >= 100
        slug = entry.get("slug") if isinstance(entry.get("slug"), str) else None
        collector.link(where, entry.get("url"), title=entry.get("title"), tags=_labels(entry.get("labels"), "name"),
                       added_at=entry.get("savedAt"), read=state == "archived" or finished,
                       author=entry.get("author"), published=entry.get("publishedAt"),
                       summary=entry.get("description"),
                       content_html=(contents or {}).get(slug) if slug else None,
                       notes=(highlights or {}).get(slug, ()) if slug else ())


def parse_omnivore_highlights(markdown: str) -> list[Note]:
    """Omnivore wrote each highlight as a Markdown quote (`> text`; a paragraph break inside
    it became a line `> `), then optionally a line of `#labels`, then the person's note; a
    note on the whole article is a paragraph of its own. Blocks are split on blank lines."""
    notes: list[Note] = []
    current: Note | None = None
    comment: list[str] = []

    def finish() -> None:
        if current is not None:
            current.comment = long_text("\n\n".join(comment), MAX_NOTE)
            notes.append(current)

    for block in markdown.replace("\r\n", "\n").split("\n\n"):
        block = block.strip("\n")
        if not block.strip():
            continue
        if block.startswith(">"):
            finish()
            comment = []
            lines = [line[1:].removeprefix(" ") if line.startswith(">") else line for line in block.split("\n")]
            current = Note(long_text("\n".join(lines), MAX_NOTE) or "", highlight=True)
        elif current is not None:
            words = block.split()
            if not comment and words and all(w.startswith("#") for w in words):
                continue  # the highlight's labels
            comment.append(block.strip())
        else:
            text = long_text(block, MAX_NOTE)
            if text:
                notes.append(Note(text))
        if len(notes) >= MAX_NOTES:
            return notes
    finish()
    return [n for n in notes if n.text][:MAX_NOTES]
