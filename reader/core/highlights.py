"""Highlights: the rules for making, changing and listing them, their W3C Web Annotation
shape, and their marks in the reader view.

A highlight is made by a person's selection in the reader view (or comes with an
import): a quote with its context, or offsets in the article's plain text, or both.
Where it goes is decided by reader/clean/anchors.py against the text as stored, never by
trusting the browser: a quote that is not in the text is refused (Invalid, 422) with a
sentence that says so. Notes and tags are plain text, escaped wherever they are shown.
"""

from __future__ import annotations

import csv
import datetime
import functools
import html as html_lib
import io
import json
import math
import re
import zipfile
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple
from urllib.parse import urlencode

from markupsafe import Markup

from ..clean.anchors import MAX_CONTEXT, Mark, paint
from ..clean.sanitize import valid_text
from ..errors import Invalid, NotFound
from ..params import MAX_LIMIT
from ..records import ArticlePage, Content
from ..store import Store, fts_query
from .tags import MAX_TAG, parse_tags

MAX_QUOTE = 5_000  # characters a highlight's quote may have
MAX_NOTE = 10_000
MAX_PER_ARTICLE = 1_000
MAX_HIGHLIGHT_TAGS = 20
COLORS = ("yellow", "green", "blue", "pink")
MAX_TEXT_FILTER = 200


def _text(value: object, name: str, cap: int) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise Invalid(f"{name} must be text")
    if len(value) > cap:
        raise Invalid(f"{name} is {len(value):,} characters long: at most {cap:,}")
    return valid_text(value)


def _offset(value: object, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or value != int(value) or not 0 <= value <= 100_000_000:
        raise Invalid(f"{name} must be a whole number of characters from 0")
    return int(value)


def parse_color(value: object) -> str:
    if value is None:
        return COLORS[0]
    if value not in COLORS:
        raise Invalid(f"color must be one of {', '.join(COLORS)}")
    return str(value)


def parse_highlight_tags(value: object) -> list[str]:
    return [] if value is None else parse_tags(value, limit=MAX_HIGHLIGHT_TAGS, on="a highlight")


async def add(store: Store, article_id: int, body: Mapping[str, Any]) -> dict[str, Any]:
    """Make a highlight from {quote, prefix?, suffix?} or {start, end} or both, with
    note, color and tags; the stored row."""
    quote = _text(body.get("quote"), "quote", MAX_QUOTE)
    # more context than is kept may be given (up to MAX_CONTEXT is weighed); longer is cut
    prefix = _text(body.get("prefix"), "prefix", MAX_QUOTE)[-MAX_CONTEXT:]
    suffix = _text(body.get("suffix"), "suffix", MAX_QUOTE)[:MAX_CONTEXT]
    start, end = _offset(body.get("start"), "start"), _offset(body.get("end"), "end")
    if not quote.strip() and (start is None or end is None):
        raise Invalid("give the highlighted text (quote, with prefix and suffix) or its start and end")
    if start is not None and end is not None and end <= start:
        raise Invalid("end must come after start")
    if start is not None and end is not None and end - start > MAX_QUOTE:
        raise Invalid(f"a highlight is at most {MAX_QUOTE:,} characters")
    note = _text(body.get("note"), "note", MAX_NOTE)
    color = parse_color(body.get("color"))
    tags = parse_highlight_tags(body.get("tags"))
    outcome, row = await store.add_highlight(article_id, quote, prefix, suffix, start, end, note, color, tags,
                                             cap=MAX_PER_ARTICLE)
    if outcome == "no article":
        raise NotFound("no such article")
    if outcome == "full":
        raise Invalid(f"this article has {MAX_PER_ARTICLE:,} highlights, the most one article may have")
    if outcome == "no text":
        raise Invalid("this article has no cleaned text yet to highlight in")
    if outcome.startswith("repeated"):
        raise Invalid(f"that passage is in the text {outcome.split()[1]} times: give its prefix and suffix"
                      " (the words around it) or its start and end to say which")
    if outcome == "not found":
        raise Invalid("that passage is not in the article's text" if quote.strip()
                      else "start and end do not fit the article's text")
    assert row is not None
    return row


async def update(store: Store, highlight_id: int, body: Mapping[str, Any]) -> dict[str, Any]:
    changes: dict[str, Any] = {}
    if "note" in body:
        changes["note"] = _text(body["note"], "note", MAX_NOTE)
    if "color" in body:
        changes["color"] = parse_color(body["color"])
    if "tags" in body:
        changes["tags"] = parse_highlight_tags(body["tags"])
    if not changes:
        raise Invalid("nothing to change: give note, color or tags")
    row = await store.update_highlight(highlight_id, changes)
    if row is None:
        raise NotFound("no such highlight")
    return row


def parse_before(value: object) -> tuple[float, int] | None:
    """A page's continuation, "CREATED:ID" as `next` gave it."""
    if value is None or value == "":
        return None
    try:
        when, _, ident = str(value).partition(":")
        stamp, number = float(when), int(ident)
    except ValueError:
        raise Invalid("before must be the `next` of the page before") from None
    if not math.isfinite(stamp) or number < 0:
        raise Invalid("before must be the `next` of the page before")
    return stamp, number


async def listing(store: Store, *, article_id: int | None = None, feed_id: int | None = None,
                  tag: str | None = None, text: str | None = None, before: object = None,
                  limit: int = 50) -> tuple[list[dict[str, Any]], str | None]:
    """A page of highlights, newest first, and the `before` of the next page (None at the end)."""
    if text is not None and len(text) > MAX_TEXT_FILTER:
        raise Invalid(f"the text to find is at most {MAX_TEXT_FILTER} characters")
    if tag is not None and len(tag) > MAX_TAG:
        raise Invalid(f"a tag is at most {MAX_TAG} characters")
    limit = max(1, min(limit, MAX_LIMIT))
    query = None
    if text is not None and text.strip():
        query = fts_query(text)
        if not query:
            raise Invalid("the text to find has no word in it to search for")
    rows = await store.list_highlights(article_id=article_id, feed_id=feed_id, tag=tag or None, text=query,
                                       before=parse_before(before), limit=limit + 1)
    more = len(rows) > limit
    rows = rows[:limit]
    return rows, (f"{rows[-1]['created_at']!r}:{rows[-1]['id']}" if more else None)


def _iso(stamp: float) -> str:
    return datetime.datetime.fromtimestamp(stamp, datetime.UTC).isoformat().replace("+00:00", "Z")


def annotation(row: Mapping[str, Any], base: str = "") -> dict[str, Any]:
    """A highlight as a W3C Web Annotation (JSON-LD): its target is the article's URL with
    a TextQuoteSelector and, while it is placed, a TextPositionSelector in the plain text."""
    selectors: list[dict[str, Any]] = [
        {"type": "TextQuoteSelector", "exact": row["quote"], "prefix": row["prefix"], "suffix": row["suffix"]}]
    if not row["detached"] and row["start"] is not None:
        selectors.append({"type": "TextPositionSelector", "start": row["start"], "end": row["end"]})
    found: dict[str, Any] = {
        "@context": "http://www.w3.org/ns/anno.jsonld",
        "id": f"{base}/api/highlights/{row['id']}",
        "type": "Annotation",
        "motivation": "commenting" if row["note"] else "highlighting",
        "created": _iso(row["created_at"]),
        "modified": _iso(row["updated_at"]),
        "target": {"source": row.get("article_url") or f"{base}/articles/{row['article_id']}",
                   "selector": selectors},
    }
    if row["note"]:
        found["body"] = [{"type": "TextualBody", "value": row["note"], "format": "text/plain",
                          "purpose": "commenting"}]
    if row["tags"]:
        found.setdefault("body", []).extend(
            {"type": "TextualBody", "value": tag, "purpose": "tagging"} for tag in row["tags"])
    return found


class Shown(NamedTuple):
    """A highlight as the reader view shows it: hashable, so a page's ETag can count it."""

    id: int
    start: int | None
    end: int | None
    color: str
    detached: bool
    quote: str
    note: str
    tags: tuple[str, ...]
    created_at: float
    short: str  # the quote cut for a list


def _cut(text: str, at: int) -> str:
    return text if len(text) <= at else text[:at - 1].rstrip() + "…"


def shown(highlights: Sequence[Mapping[str, Any]]) -> tuple[Shown, ...]:
    return tuple(Shown(h["id"], h["start"], h["end"], h["color"] if h["color"] in COLORS else COLORS[0],
                       bool(h["detached"]) or h["start"] is None, h["quote"], h["note"], tuple(h["tags"]),
                       h["created_at"], _cut(h["quote"], 300)) for h in highlights)


def exported(row: Mapping[str, Any]) -> dict[str, Any]:
    """A highlight as `reader export` keeps it: its Web Annotation without an id (ids are
    one database's), with its color, which the model has no word for."""
    found = annotation(row)
    del found["id"]
    found["target"]["source"] = row["article_url"]
    found["color"] = row["color"]
    return found


def _stamp(value: object) -> float | None:
    if not isinstance(value, str):
        return None
    try:
        when = datetime.datetime.fromisoformat(value)
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.UTC)
    return when.timestamp()


def from_annotation(raw: object) -> dict[str, Any] | None:
    """A highlight from a Web Annotation (an export's, or another tool's): its quote, its
    context and offsets if it has them, its note (the commenting bodies) and tags (the
    tagging ones); None if it quotes nothing. Caps as for one made while reading."""
    if not isinstance(raw, dict):
        return None
    target = raw.get("target")
    selectors = target.get("selector") if isinstance(target, dict) else None
    if isinstance(selectors, dict):
        selectors = [selectors]
    if not isinstance(selectors, list):
        return None
    quote: dict[str, Any] = next((s for s in selectors if isinstance(s, dict) and s.get("type") == "TextQuoteSelector"), {})
    where: dict[str, Any] = next((s for s in selectors if isinstance(s, dict) and s.get("type") == "TextPositionSelector"), {})
    exact = quote.get("exact")
    if not isinstance(exact, str) or not exact.strip() or len(exact) > MAX_QUOTE:
        return None
    bodies = raw.get("body")
    if isinstance(bodies, dict):
        bodies = [bodies]
    bodies = [b for b in bodies if isinstance(b, dict) and isinstance(b.get("value"), str)] \
        if isinstance(bodies, list) else []
    note = "\n\n".join(b["value"] for b in bodies if b.get("purpose", "commenting") == "commenting")[:MAX_NOTE]
    try:
        tags = parse_highlight_tags([b["value"] for b in bodies if b.get("purpose") == "tagging"])
    except Invalid:
        tags = []
    start, end = where.get("start"), where.get("end")
    placed = isinstance(start, int) and isinstance(end, int) and not isinstance(start, bool) \
        and not isinstance(end, bool) and 0 <= start < end
    created = _stamp(raw.get("created"))
    prefix, suffix = quote.get("prefix"), quote.get("suffix")
    return {
        "quote": valid_text(exact), "prefix": valid_text(prefix)[-MAX_CONTEXT:] if isinstance(prefix, str) else "",
        "suffix": valid_text(suffix)[:MAX_CONTEXT] if isinstance(suffix, str) else "",
        "start": start if placed else None, "end": end if placed else None, "note": valid_text(note),
        "color": raw.get("color") if raw.get("color") in COLORS else COLORS[0], "tags": tags,
        "created_at": created, "updated_at": _stamp(raw.get("modified")) or created,
    }


def list_item(h: Shown) -> Markup:
    """One highlight in the list under its article: its quote (linking to its mark, while
    it is placed), note and tags, with what the editor needs in data- attributes. Built
    here rather than in the template, where its dozen expressions cost 50 µs a highlight
    (3 ms of a page with 50). Everything from the highlight is escaped."""
    e = html_lib.escape
    tags = "".join(f'{", " if i else ""}<a href="/highlights?{e(urlencode({"tag": t}))}">#{e(t)}</a>'
                   for i, t in enumerate(h.tags))
    quote = (f'<blockquote class="highlight-quote">{e(h.quote)}</blockquote>' if h.detached else
             f'<a class="highlight-quote hl-{h.color}" href="#hl-{h.id}">{e(h.short)}</a>')
    return Markup(  # every value escaped above
        f'<li class="highlight-item" data-hl="{h.id}" data-color="{h.color}" data-note="{e(h.note)}"'
        f' data-tags="{e(json.dumps(list(h.tags)))}" data-quote="{e(h.short)}">{quote}'
        + (f'<p class="highlight-note">{e(h.note)}</p>' if h.note else "")
        + (f'<p class="meta highlight-tags">{tags}</p>' if tags else "") + "</li>")


def painted(html: str, text: str, highlights: Sequence[Mapping[str, Any]]) -> Markup:
    """The article's (sanitized) HTML with its placed highlights marked. The HTML is the
    cleaner's, and marks add only our own tags and numbers: safe to show as it is."""
    marks = tuple(Mark(h["id"], h["start"], h["end"], h["color"] if h["color"] in COLORS else COLORS[0])
                  for h in highlights if not h["detached"] and h["start"] is not None and h["end"] is not None)
    return Markup(_painted(html, text, marks))


@functools.lru_cache(maxsize=32)
def _painted(html: str, text: str, marks: tuple[Mark, ...]) -> str:
    """Kept for the next render of the same article: any change in the library (a star on
    another article) renders a page again, and painting is most of what 50 marks cost it."""
    return paint(html, text, marks)


class PageMarks(NamedTuple):
    """What the reader view shows of an article's highlights: each as `Shown`, the list
    items of those placed and of those detached, and the text with its marks (None when
    nothing is placed in it)."""

    shown: tuple[Shown, ...]
    placed: Markup
    detached: Markup
    body: Markup | None


# A highlight's list item by all it shows (Shown): one highlight made or changed makes one
# item, not the article's fifty (~700 us under load).
_item = functools.lru_cache(maxsize=4096)(list_item)


class KeptMarks:
    """The marks of the pages of the articles opened last, each kept by its highlights'
    version (ArticlePage.highlights_version: the library's version when they last
    changed, whoever changed them) and its text's version (the article, its cleaning time
    and lengths, as a page's ETag counts it). A page is rendered again after any change in
    the library; with 50 highlights, their list items and the painted text were most of
    a render. One per Reader: the versions are one database's."""

    def __init__(self, size: int = 32) -> None:  # a page's marks and list: ~50 KB with 50
        self.size = size
        self._kept: OrderedDict[tuple[int, int, float, int, int], PageMarks] = OrderedDict()

    def of(self, page: ArticlePage, content: Content) -> PageMarks:
        version = (page.highlights_version, content.article_id, content.cleaned_at, len(content.html),
                   len(content.text))
        found = self._kept.get(version)
        if found is not None:
            self._kept.move_to_end(version)
            return found
        every = shown(page.highlights)
        found = self._kept[version] = PageMarks(
            every, Markup("".join(_item(h) for h in every if not h.detached)),
            Markup("".join(_item(h) for h in every if h.detached)),
            painted(content.html, content.text, page.highlights) if any(not h.detached for h in every) else None)
        while len(self._kept) > self.size:
            self._kept.popitem(last=False)
        return found


# -- taken anywhere: Markdown for notes apps, Readwise's CSV ---------------------------------

# Readwise's import header, exactly (readwise.io/import_bulk)
READWISE_HEADER = ["Highlight", "Book Title", "Book Author", "Amazon Book ID", "Note", "Color", "Tags",
                   "Location Type", "Location", "Highlighted at", "Document tags"]
_SLUG = re.compile(r"[^a-z0-9]+")


def _by_article(rows: Sequence[Mapping[str, Any]]) -> list[list[Mapping[str, Any]]]:
    groups: dict[int, list[Mapping[str, Any]]] = {}
    for row in rows:
        groups.setdefault(row["article_id"], []).append(row)
    return list(groups.values())


def _day(stamp: float | None) -> str | None:
    return _iso(stamp) if stamp is not None else None


def markdown_files(rows: Sequence[Mapping[str, Any]], tags: Mapping[int, Sequence[str]],
                   base: str) -> dict[str, str]:
    """One Markdown file per article with highlights, named after its title: YAML front
    matter (title, URL, author, tags, dates; each value JSON, which YAML reads as it is),
    then each highlight as a quote with its note, its tags and a link that opens the
    article at that passage (`base`: the address reader is reached at)."""
    files: dict[str, str] = {}
    for group in _by_article(rows):
        first = group[0]
        article_id = first["article_id"]
        front = {"title": first["article_title"], "url": first["article_url"], "author": first["article_author"],
                 "source": first.get("feed_title"), "tags": list(tags.get(article_id, ())),
                 "saved": _day(first.get("article_added_at")), "published": _day(first.get("article_published")),
                 "reader": f"{base}/articles/{article_id}", "highlights": len(group)}
        lines = ["---", *(f"{key}: {json.dumps(value, ensure_ascii=False)}" for key, value in front.items()), "---",
                 "", f"# {' '.join(str(first['article_title']).split())}", ""]
        for h in group:
            lines += [f"> {line}" if line.strip() else ">" for line in h["quote"].splitlines() or [""]]
            lines.append("")
            if h["note"]:
                lines += [h["note"], ""]
            where = "not found in the current text" if h["detached"] else \
                f"[open at this passage]({base}/articles/{article_id}#hl-{h['id']})"
            extra = "".join(f" #{'-'.join(t.split())}" for t in h["tags"])
            lines += [f"{where} · {_iso(h['created_at'])}{extra}", ""]
        slug = _SLUG.sub("-", str(first["article_title"]).lower()).strip("-")[:60] or "article"
        files[f"{slug}-{article_id}.md"] = "\n".join(lines)
    return files


def markdown_zip(files: Mapping[str, str]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in files.items():
            archive.writestr(f"highlights/{name}", text)
    return out.getvalue()


def readwise_csv(rows: Sequence[Mapping[str, Any]], tags: Mapping[int, Sequence[str]]) -> str:
    """Readwise's CSV: a row per highlight, Location its order in the article."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(READWISE_HEADER)
    for group in _by_article(rows):
        for order, h in enumerate(group, 1):
            when = datetime.datetime.fromtimestamp(h["created_at"], datetime.UTC).strftime("%Y-%m-%d %H:%M:%S")
            writer.writerow([h["quote"], h["article_title"], h["article_author"] or "", "", h["note"], h["color"],
                             ",".join(h["tags"]), "order", order, when, ",".join(tags.get(h["article_id"], ()))])
    return out.getvalue()
