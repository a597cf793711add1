"""Import parsing: other apps' exports read by reader.importers, no database: CPU time
(time.process_time) of reader.importers.parse_file over generated files the size of a big
library, each in the shape its app writes. The whole-import target is 20,000
links in under 30 s; parsing must be a small part of that.

    python -m benchmarks.import_parse
"""

from __future__ import annotations

import io
import json
import time
import zipfile

from .common import Row, main_for, verdict

LINKS = 20_000
CONTENT_ENTRIES = 1_000
TARGET_SECONDS = 2.0  # for 20,000 rows


def pocket_csv(n: int) -> bytes:
    rows = ["title,url,time_added,tags,status"]
    for i in range(n):
        rows.append(f'"Article {i}, on things",https://site{i % 500}.example/post/{i}?utm_source=feed&id={i},'
                    f'{1_600_000_000 + i * 60},tag{i % 40}|topic{i % 7},{"archive" if i % 3 else "unread"}')
    # Every 50th row again, spelled differently: duplicates to merge.
    rows += [f"Again {i},HTTPS://SITE{i % 500}.example/post/{i}?id={i}#top,1500000000,again,unread"
             for i in range(0, n, 50)]
    return "\n".join(rows).encode()


def netscape(n: int) -> bytes:
    out = ["<!DOCTYPE NETSCAPE-Bookmark-file-1>", "<TITLE>Bookmarks</TITLE>", "<H1>Bookmarks</H1>", "<DL><p>"]
    for folder in range(n // 500):
        out.append(f"<DT><H3>Folder {folder}</H3>")
        out.append("<DL><p>")
        for i in range(folder * 500, folder * 500 + 500):
            out.append(f'<DT><A HREF="https://b{i % 300}.example/{i}" ADD_DATE="{1_500_000_000 + i}" '
                       f'TAGS="t{i % 20},u{i % 3}">Bookmark {i} &amp; more</A>')
            if i % 10 == 0:
                out.append(f"<DD>A description of bookmark {i}")
        out.append("</DL><p>")
    out.append("</DL><p>")
    return "\n".join(out).encode()


def wallabag(n: int) -> bytes:
    sentence = "Words of a saved article, with <em>some</em> markup and a <a href='/x'>link</a>. "
    paragraph = "<p>" + sentence * 20 + "</p>"
    entries = [{"id": i, "title": f"Saved {i}", "url": f"https://w{i % 100}.example/{i}", "is_archived": i % 2,
                "is_starred": int(i % 7 == 0), "tags": [f"t{i % 9}"], "created_at": "2020-01-01 12:00:00",
                "content": paragraph * 12, "annotations": [{"quote": "some", "text": "a note",
                                                            "created_at": "2020-01-02T00:00:00+0000"}]}
               for i in range(n)]
    return json.dumps(entries).encode()


def pocket_zip(n: int) -> bytes:
    data = pocket_csv(n).decode().split("\n")
    header, rows = data[0], data[1:]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for part, start in enumerate(range(0, len(rows), 5000)):
            archive.writestr(f"part_{part:06d}.csv", "\n".join([header, *rows[start:start + 5000]]))
    return buffer.getvalue()


def _measure(data: bytes, name: str) -> tuple[float, float, int]:
    from reader.formats.importers import parse_file

    wall, cpu = time.perf_counter(), time.process_time()
    parsed = parse_file(data, name)
    return time.process_time() - cpu, time.perf_counter() - wall, len(parsed.links)


def run() -> list[Row]:
    from reader.formats.importers import parse_file

    parse_file(pocket_csv(10), "warm.csv")  # imports
    rows = []
    for label, data, name, n in [(f"Pocket CSV, {LINKS:,} rows + {LINKS // 50} duplicates", pocket_csv(LINKS),
                                  "pocket.csv", LINKS),
                                 (f"Pocket ZIP of 5 parts, {LINKS:,} rows + {LINKS // 50} duplicates",
                                  pocket_zip(LINKS), "pocket.zip", LINKS),
                                 (f"Netscape bookmarks, {LINKS:,} in 40 folders", netscape(LINKS), "bookmarks.html",
                                  LINKS)]:
        cpu, wall, links = _measure(data, name)
        rows.append(Row("import_parse", f"parse {label} ({len(data) / 1e6:.1f} MB)",
                        f"**{cpu:.2f} s** CPU ({wall:.2f} s wall), {links:,} links",
                        f"≤ {TARGET_SECONDS:.0f} s CPU", verdict(cpu <= TARGET_SECONDS and links == n)))
    data = wallabag(CONTENT_ENTRIES)
    cpu, wall, links = _measure(data, "wallabag.json")
    rows.append(Row("import_parse", f"parse wallabag JSON, {CONTENT_ENTRIES:,} entries with 20 KB of saved HTML each"
                    f" ({len(data) / 1e6:.1f} MB), every one through the nh3 cleaner",
                    f"**{cpu:.2f} s** CPU ({wall:.2f} s wall), {links:,} links", "report", "reported"))
    return rows


if __name__ == "__main__":
    main_for(run)
