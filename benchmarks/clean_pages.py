"""Benchmark 11b: the cleaner page by page on both development sets, against trafilatura's
precision mode, and the paragraphs it repeats.

One process cleans every page of both sets (`clean_page`, the workers' cleaner) and reports:

- F1 on each set as score.py counts it, whole and per half (benchmarks/clean_quality.py's
  split), for the text scored (see `scored`), and for the body alone (`text`, what the
  held-out pages are scored on: the Mozilla set's answers hold the dek and the captions, the
  trafilatura set's count captions as what the article is not and often hold the dek);
- the pages where reader is worse than `trafilatura.extract(favor_precision=True,
  include_comments=False)` by more than 0.02 F1, and better by more than 0.02;
- repeated paragraphs: a paragraph of the body (a block of text of the HTML with no block
  inside it, not the lead, a caption or a table's cell) of at least REPEAT_MIN_WORDS words
  that the output holds more often than the reference holds it (at least once): the
  expected text on the Mozilla set; on the other, whose answers are snippets and not whole
  paragraphs, trafilatura's text (precision mode, default mode, or with the cleaner's own
  settings: links and tables kept), whichever holds it most often. The count is of extra copies, over all 1,014 pages; the target is 0.

trafilatura's results are cached in benchmarks/results/ (they change only with its version).

    python -m benchmarks.clean_pages                 # the table
    python -m benchmarks.clean_pages --pages         # also every page that differs by > 0.02, and each repeat
    python -m benchmarks.clean_pages --save FILE     # also each page's scores and text, as JSON, to diff runs
    python -m benchmarks.clean_pages --only A,B      # only these pages (their file or folder names)
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .clean_quality import dev_dir, half
from .common import RESULTS, Row, main_for, verdict

MARGIN = 0.02
REPEAT_MIN_WORDS = 4
_WORD = re.compile(r"\w+", re.UNICODE)


def scored(result: dict[str, Any]) -> str:
    """The text a page is scored on: everything the reader view shows as text (the dek, the
    body and the captions, in the page's order). The answers hold the dek and captions
    (Readability's output keeps the article's figures and its standfirst), so scoring the
    body alone would count them as misses."""
    from reader.clean.sanitize import plain_text

    return plain_text(result["html"])


def normal(paragraph: str) -> str:
    """A paragraph's words, lower case: punctuation and spacing differ between the output
    and the reference (trafilatura writes a table's cells with " | " between them)."""
    return " ".join(_WORD.findall(paragraph.lower()))


def body_paragraphs(html: str) -> list[str]:
    """The paragraphs of the body of a cleaned article's HTML: its blocks of text with no
    block inside them, less the lead, the captions and the cells of its tables (a table
    says its labels again row after row)."""
    import lxml.html

    from reader.clean.repeats import paragraphs
    from reader.clean.standfirst import LEAD_CLASS

    if not html.strip():
        return []
    root = lxml.html.fragment_fromstring(html, create_parent="div")
    return [text for block in paragraphs(root) if block.get("class") != LEAD_CLASS
            if (text := block.text_content().strip())]


def repeats(paragraphs: list[str], references: list[str]) -> list[tuple[str, int, int]]:
    """The paragraphs said more often than the references hold them (at least once):
    (paragraph, copies said, copies in the reference that holds most)."""
    refs = [f" {normal(reference)} " for reference in references]
    counts: dict[str, int] = {}
    for paragraph in paragraphs:
        key = normal(paragraph)
        if len(_WORD.findall(key)) >= REPEAT_MIN_WORDS:
            counts[key] = counts.get(key, 0) + 1
    found = []
    for key, n in counts.items():
        if n > 1:
            allowed = max([1] + [_occurrences(ref, f" {key} ") for ref in refs])
            if n > allowed:
                found.append((key, n, allowed))
    return found


def _occurrences(text: str, part: str) -> int:
    """How often part occurs in text, overlaps included (two copies share the space
    between them)."""
    n, at = 0, text.find(part)
    while at >= 0:
        n, at = n + 1, text.find(part, at + 1)
    return n


def _trafilatura(cases: list[tuple[str, Path, str, Any]], name: str, mode: str = "precision") -> dict[str, str]:
    """trafilatura's text of each page, in precision mode (the one compared with) or in its
    default mode (a second reference for how often the article says a paragraph)."""
    import trafilatura

    cache = RESULTS / f"trafilatura-{mode}-{trafilatura.__version__}-{name}.json"
    if cache.exists():
        stored: dict[str, str] = json.loads(cache.read_text(encoding="utf-8"))
        return stored
    out = {}
    for case, path, url, _ in cases:
        html = path.read_bytes().decode("utf-8", "replace")
        options: dict[str, Any] = {
            "precision": {"favor_precision": True, "include_comments": False},
            # as the cleaner runs it (reader/clean/upstream.py), in plain text
            "cleaner": {"favor_precision": True, "include_comments": False, "include_links": True,
                        "include_tables": True, "include_images": False},
        }.get(mode, {})
        out[case] = trafilatura.extract(html, url=url, **options) or ""
    RESULTS.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(out), encoding="utf-8")
    return out


def measure(dev: Path, only: set[str] | None = None) -> dict[str, Any]:
    sys.path.insert(0, str(dev))
    import score

    from reader.clean import ExtractError, clean_page
    from reader.clean.sanitize import plain_text

    root = score.unpack(Path(tempfile.gettempdir()) / "reader-extraction-dev")
    report: dict[str, Any] = {}
    for name, cases in (("mozilla", list(score.mozilla_cases(root))),
                        ("trafilatura", list(score.trafilatura_cases(root)))):
        theirs = _trafilatura(cases, name)
        others = [_trafilatura(cases, name, mode) for mode in ("default", "cleaner")] if name == "trafilatura" else []
        if only is not None:
            cases = [case for case in cases if case[0] in only]
        started = time.perf_counter()
        pages: dict[str, Any] = {}
        sums = {part: [0.0, 0.0, 0.0] for part in ("all", "dev", "check", "trafilatura", "body", "body dev",
                                                     "body check")}
        for case, path, url, truth in cases:
            try:
                result: dict[str, Any] = dict(clean_page(path.read_bytes(), url, None))
            except ExtractError:
                result = {"html": "", "text": ""}
            mine = scored(result)
            per = {}
            for who, text in (("reader", mine), ("trafilatura", theirs[case]), ("body", result["text"])):
                if name == "mozilla":
                    tp, fp, fn = score.shingle_counts(truth, text)
                    total = (tp + fp + fn) or 1.0
                    counts = (tp / total, fp / total, fn / total)
                else:
                    tp, fn, fp, _ = score.snippet_counts(truth, text)
                    counts = (tp, fp, fn)
                per[who] = score.f1(tp, fp, fn)[0]
                for part in {"reader": ("all", half(case)), "trafilatura": ("trafilatura",),
                             "body": ("body", f"body {half(case)}")}[who]:
                    sums[part] = [a + b for a, b in zip(sums[part], counts)]
            if name == "mozilla":
                html = (path.parent / "expected.html").read_bytes().decode("utf-8", "replace")
                references = [plain_text(html)]
            else:
                references = [theirs[case]] + [other[case] for other in others]
            pages[case] = {"reader": per["reader"], "trafilatura": per["trafilatura"],
                           "repeats": repeats(body_paragraphs(result["html"]), references), "text": result["text"],
                           "lead": result.get("lead"), "figures": result.get("figures")}
        report[name] = {
            "pages": pages, "seconds": time.perf_counter() - started,
            "f1": {part: score.f1(*sums[part])[0] for part in sums},
        }
    return report


def run(argv: list[str] | None = None) -> list[Row]:
    argv = sys.argv[1:] if argv is None else argv
    dev = dev_dir()
    if dev is None:
        return [Row("11b", "the cleaner page by page on the development sets", "sets not found", "", "skipped")]
    only = set(argv[argv.index("--only") + 1].split(",")) if "--only" in argv else None
    report = measure(dev, only)
    rows = []
    copies = 0
    for name, part in report.items():
        pages = part["pages"]
        worse = sorted((p["reader"] - p["trafilatura"], case) for case, p in pages.items()
                       if p["reader"] < p["trafilatura"] - MARGIN)
        better = sorted(((p["reader"] - p["trafilatura"], case) for case, p in pages.items()
                         if p["reader"] > p["trafilatura"] + MARGIN), reverse=True)
        repeated = {case: p["repeats"] for case, p in pages.items() if p["repeats"]}
        extra = sum(n - allowed for found in repeated.values() for _, n, allowed in found)
        copies += extra
        f1 = part["f1"]
        rows.append(Row("11b", f"{name} set, {len(pages)} pages: F1 of the text shown (dek, body, captions)",
                        f"**{f1['all']:.4f}** (dev half {f1['dev']:.4f}, check half {f1['check']:.4f}); "
                        f"trafilatura precision {f1['trafilatura']:.4f}; {part['seconds']:.0f} s", "report",
                        "reported"))
        rows.append(Row("11b", f"{name} set: F1 of the body alone (`text`: no dek, no captions; what the held-out "
                               "pages are scored on)",
                        f"**{f1['body']:.4f}** (dev half {f1['body dev']:.4f}, check half {f1['body check']:.4f})",
                        "report", "reported"))
        rows.append(Row("11b", f"{name} set: pages where reader is worse / better than trafilatura precision "
                               f"by > {MARGIN} F1", f"**{len(worse)}** worse, **{len(better)}** better", "report",
                        "reported"))
        rows.append(Row("11b", f"{name} set: extra copies of repeated paragraphs ({REPEAT_MIN_WORDS}+ words)",
                        f"**{extra}** on {len(repeated)} pages", "0", verdict(extra == 0)))
        if "--pages" in argv:
            for delta, case in worse:
                print(f"  {name} worse {delta:+.3f}  {case}", file=sys.stderr)
            for delta, case in better:
                print(f"  {name} better {delta:+.3f}  {case}", file=sys.stderr)
            for case, found in repeated.items():
                for key, n, allowed in found:
                    print(f"  {name} repeat {case}: {n}x (reference {allowed}x) {key[:100]!r}", file=sys.stderr)
    if "--save" in argv:
        Path(argv[argv.index("--save") + 1]).write_text(json.dumps(report, ensure_ascii=False), encoding="utf-8")
    rows.append(Row("11b", "extra copies of repeated paragraphs over both sets", f"**{copies}**", "0",
                    verdict(copies == 0)))
    return rows


if __name__ == "__main__":
    main_for(run)
