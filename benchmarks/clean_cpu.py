"""Benchmark 4: CPU time (time.process_time, one process, no pool) of reader's whole
clean step, reader.extract.clean_page (one trafilatura pass with metadata and HTML
output, nh3 sanitizing, the plain text), against one bare trafilatura.extract with the
same settings, over the same realistic pages (benchmarks/pages.py, 50-500 KB). The
page is in memory: no fetch. The two alternate page by page, over several rounds.

    python -m benchmarks.clean_cpu
"""

from __future__ import annotations

import time

from .common import Row, main_for, ratio, verdict
from .pages import make_pages

PAGES = 24
ROUNDS = 3
# The budget for the two-extractor cleaner: at most 2.5x one bare extract on the same pages
# (it was 1.25x while the cleaner was trafilatura alone).
TARGET = 2.5


def bare(markup: str, url: str):
    import trafilatura

    return trafilatura.extract(markup, url=url, output_format="html", include_images=True, include_links=True,
                               include_tables=True, include_comments=False, with_metadata=True)


def run() -> list[Row]:
    from reader.clean.pipeline import clean_page

    pages = [(body.encode(), f"http://127.0.0.1/a/{i}.html") for i, (_, body) in enumerate(make_pages(PAGES, seed=11))]
    ours_t = bare_t = 0.0
    clean_page(*pages[0], "utf-8"), bare(pages[0][0].decode(), pages[0][1])  # imports, first-call caches
    for r in range(ROUNDS):
        for body, url in pages:
            pair = [("ours", lambda: clean_page(body, url, "utf-8")), ("bare", lambda: bare(body.decode("utf-8"), url))]
            for name, fn in (pair if r % 2 == 0 else pair[::-1]):
                t = time.process_time()
                out = fn()
                spent = time.process_time() - t
                assert out, f"{name} extracted nothing from {url}"
                if name == "ours":
                    ours_t += spent
                else:
                    bare_t += spent
    n = PAGES * ROUNDS
    mean_kb = sum(len(b) for b, _ in pages) / len(pages) / 1000
    r = ratio(ours_t, bare_t)
    return [Row("4", f"CPU of the whole clean step vs one bare trafilatura.extract, {PAGES} pages "
                     f"(mean {mean_kb:.0f} KB) × {ROUNDS} rounds",
                f"**{r:.2f}×** ({ours_t / n * 1000:.1f} ms vs {bare_t / n * 1000:.1f} ms CPU per page)",
                f"≤ {TARGET}×", verdict(r <= TARGET))]


if __name__ == "__main__":
    main_for(run)
