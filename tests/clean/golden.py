"""The cleaner's golden output: what `clean_page` makes of the pages in tests/clean/pages/,
kept under tests/clean/golden/ as files a diff shows readably.

    python -m tests.clean.golden            # list the pages whose output differs
    python -m tests.clean.golden --write    # write the current output as the new golden files

For each page NAME: `NAME.html` (the article's HTML, with a line break added after each
closing tag of a block, so that a changed paragraph is a changed line), `NAME.txt` (its
body's plain text) and its entry in `metadata.json` (title, author, date, site, words,
lead, figures; or the error). The line breaks are added after every such tag, so two outputs that differ
give two files that differ: comparing the files compares the output byte for byte.
"""

from __future__ import annotations

import json
import lzma
import re
import sys
from pathlib import Path
from typing import Any

from reader.clean import ExtractError, clean_page

HERE = Path(__file__).resolve().parent
PAGES = HERE / "pages"
GOLDEN = HERE / "golden"

_BLOCK_END = re.compile(r"(</(?:p|li|h[1-6]|figure|figcaption|blockquote|pre|table|tr|ul|ol|dl|dt|dd)>)")


def pages() -> dict[str, dict[str, str]]:
    """Each page's name, with the URL it is cleaned as and where it came from."""
    index: dict[str, dict[str, str]] = json.loads((PAGES / "pages.json").read_text(encoding="utf-8"))
    return index


def output(name: str) -> tuple[dict[str, str], dict[str, Any]]:
    """The cleaner's output on one page: the files (name to text) and the metadata entry."""
    body = lzma.decompress((PAGES / f"{name}.html.xz").read_bytes())
    try:
        result = clean_page(body, pages()[name]["url"], None)
    except ExtractError as exc:
        return {}, {"error": str(exc)}
    files = {
        f"{name}.html": _BLOCK_END.sub("\\1\n", result["html"]) + "\n",
        f"{name}.txt": result["text"] + "\n",
    }
    return files, {key: result[key] for key in ("title", "author", "published", "site", "words", "lead", "figures")}


def read(path: Path) -> str:
    """A golden file's text as written: no newline translation (a page's text may hold a
    carriage return), and empty when the file is missing."""
    return path.read_bytes().decode("utf-8") if path.exists() else ""


def metadata_json(entries: dict[str, dict[str, Any]]) -> str:
    return json.dumps(entries, ensure_ascii=False, indent=1, sort_keys=True) + "\n"


def golden_metadata() -> dict[str, dict[str, Any]]:
    path = GOLDEN / "metadata.json"
    entries: dict[str, dict[str, Any]] = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    return entries


def write() -> None:
    GOLDEN.mkdir(exist_ok=True)
    for old in [*GOLDEN.glob("*.html"), *GOLDEN.glob("*.txt")]:
        old.unlink()
    entries = {}
    for name in pages():
        files, entries[name] = output(name)
        for file, text in files.items():
            (GOLDEN / file).write_text(text, encoding="utf-8", newline="")
    (GOLDEN / "metadata.json").write_text(metadata_json(entries), encoding="utf-8", newline="")


def differing() -> list[str]:
    """The pages whose output is not their golden files'."""
    meta = golden_metadata()
    changed = []
    for name in pages():
        files, entry = output(name)
        if entry != meta.get(name) or any(
                read(GOLDEN / file) != text for file, text in files.items()):
            changed.append(name)
    return changed


def main(argv: list[str]) -> int:
    if argv == ["--write"]:
        write()
        print(f"wrote the golden output of {len(pages())} pages to {GOLDEN}")
        return 0
    if argv:
        print(__doc__, file=sys.stderr)
        return 2
    changed = differing()
    print("\n".join(changed) or "every page's output is its golden files'")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
