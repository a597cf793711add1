"""Benchmark 11: how well the cleaner picks an article's words, and what that costs.

Quality: `reader clean --json` (exactly the workers' cleaner) scored by the development
sets' own score.py (../shared/extraction-dev beside the checkout, or $READER_EXTRACTION_DEV)
on the text the reader view shows (the plain text of the printed HTML: lead, body,
captions; the printed `text` is the body alone, and the answers hold the dek and captions):
F1 on Mozilla Readability's 130 test pages and on trafilatura's 884 evaluation pages, for
the whole set and for each half (split by a hash of the file name: tune on dev, watch check).
Cost: CPU time (time.process_time, one process) of reader.cleaner.clean_page against one
bare trafilatura.extract(html, url=url) on the same pages from both sets, alternating.

    python -m benchmarks.clean_quality
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .common import Row, main_for, ratio, verdict

TARGETS = {"mozilla": 0.975, "trafilatura": 0.940}  # issue 22
CPU_TARGET = 2.5
CPU_PAGES = 40  # from each set


def dev_dir() -> Path | None:
    env = os.environ.get("READER_EXTRACTION_DEV")
    here = Path(__file__).resolve().parent.parent
    for candidate in ([Path(env)] if env else []) + [here.parent / "shared" / "extraction-dev"]:
        if (candidate / "score.py").exists():
            return candidate
    return None


def half(name: str) -> str:
    """The half of a set a page belongs to, by a stable hash of its file name: rules are
    tuned on "dev" and checked on "check", so a rule fitted to pages shows as a gap."""
    return "dev" if hashlib.sha256(name.encode()).digest()[0] % 2 == 0 else "check"


def quality(dev: Path) -> dict[str, dict[str, float]]:
    """F1 of `reader clean --json` on each set, whole and per half, scored with the sets'
    own score.py (its loader, its cleaner runner and its counting, so the whole-set figure
    is the one `score.py --cli` prints)."""
    sys.path.insert(0, str(dev))
    import score

    reader = Path(sys.executable).with_name("reader")
    command = f"{reader} clean --json" if reader.exists() else f"{sys.executable} -m reader clean --json"
    root = score.unpack(Path(tempfile.gettempdir()) / "reader-extraction-dev")
    runner = _shown(score.CliCleaner)(command)
    scores: dict[str, dict[str, float]] = {}
    for name, cases in (("mozilla", list(score.mozilla_cases(root))),
                        ("trafilatura", list(score.trafilatura_cases(root)))):
        texts = runner.run(cases)
        sums = {part: [0.0, 0.0, 0.0] for part in ("all", "dev", "check")}  # tp, fp, fn
        for case, _, _, truth in cases:
            if name == "mozilla":
                tp, fp, fn = score.shingle_counts(truth, texts[case])
                total = (tp + fp + fn) or 1.0  # each page weighs the same, as score.py counts
                counts = (tp / total, fp / total, fn / total)
            else:
                tp, fn, fp, _ = score.snippet_counts(truth, texts[case])
                counts = (tp, fp, fn)
            for part in ("all", half(case)):
                sums[part] = [a + b for a, b in zip(sums[part], counts)]
        scores[name] = {part: score.f1(*sums[part])[0] for part in sums}
    return scores


def _shown(base: type) -> type:
    """score.py's CLI runner, scoring the text the reader view shows (the plain text of the
    printed HTML: the lead, the body and the captions) rather than the printed `text`, which
    is the body alone: the answers hold the dek and the captions (the Mozilla set's are
    Readability's output, figures and standfirst included)."""
    import json
    import subprocess

    from reader.clean.sanitize import plain_text

    class Shown(base):  # type: ignore[misc, valid-type]
        def run(self, cases: list[Any]) -> dict[str, str]:
            out: dict[str, str] = {}
            for i in range(0, len(cases), self.batch):
                chunk = cases[i:i + self.batch]
                done = subprocess.run(self.command + [str(path) for _, path, _, _ in chunk], capture_output=True,
                                      text=True, timeout=1800)
                for line in done.stdout.splitlines():
                    if line.strip():
                        obj = json.loads(line)
                        out[str(Path(obj.get("file", "")).resolve())] = plain_text(obj.get("html") or "")
            return {name: out.get(str(Path(path).resolve()), "") for name, path, _, _ in cases}

    return Shown


def cpu(dev: Path) -> tuple[float, float, int]:
    sys.path.insert(0, str(dev))
    import score  # the sets' own loader
    import trafilatura

    from reader.clean.pipeline import clean_page

    root = score.unpack(Path(tempfile.gettempdir()) / "reader-extraction-dev")
    cases = list(score.mozilla_cases(root))[:CPU_PAGES] + list(score.trafilatura_cases(root))[:CPU_PAGES]
    pages = [(path.read_bytes(), url) for _, path, url, _ in cases]
    for body, url in pages[:3]:  # imports and first-call caches (dateparser's locales) out of the count
        clean_page(body, url, "utf-8"), trafilatura.extract(body.decode("utf-8", "replace"), url=url)
    # jusText's stop lists, read once a process (0.3 s) by whichever extraction first falls
    # back to it: a worker pays it once, not per page
    from trafilatura.external import jt_stoplist_init
    jt_stoplist_init()
    ours = bare = 0.0
    for i, (body, url) in enumerate(pages):
        pair = [("ours", lambda: clean_page(body, url, "utf-8")),
                ("bare", lambda: trafilatura.extract(body.decode("utf-8", "replace"), url=url))]
        for name, fn in (pair if i % 2 == 0 else pair[::-1]):
            started = time.process_time()
            try:
                fn()
            except Exception:  # a page with no article still cost what it cost
                pass
            spent = time.process_time() - started
            if name == "ours":
                ours += spent
            else:
                bare += spent
    return ours, bare, len(pages)


def run() -> list[Row]:
    dev = dev_dir()
    if dev is None:
        return [Row("11", "cleaning quality and CPU on the development sets", "sets not found", "", "skipped")]
    scores = quality(dev)
    rows = [Row("11", f"F1 of `reader clean` on the {name} set (score.py)",
                f"**{scores[name]['all']:.4f}** (dev half {scores[name]['dev']:.4f}, check half "
                f"{scores[name]['check']:.4f})", f"≥ {target}", verdict(scores[name]["all"] >= target))
            for name, target in TARGETS.items()]
    ours, bare, n = cpu(dev)
    r = ratio(ours, bare)
    rows.append(Row("11", f"CPU of clean_page vs one bare trafilatura.extract, {n} pages of both sets",
                    f"**{r:.2f}×** ({ours / n * 1000:.1f} ms vs {bare / n * 1000:.1f} ms CPU per page)",
                    f"≤ {CPU_TARGET}×", verdict(r <= CPU_TARGET)))
    return rows


if __name__ == "__main__":
    main_for(run)
