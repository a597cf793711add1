"""Fit the candidate chooser (reader/clean/choose.py) and measure it on both development sets.

    python -m benchmarks.choose_fit --collect    # clean every page once, score each candidate (one process)
    python -m benchmarks.choose_fit              # fit, cross-validate, transfer
    python -m benchmarks.choose_fit --thresholds 0.6,0.7,0.8 --l2 1 --all-features --constants

`--collect` runs `clean_candidates` on all 1,014 pages and keeps, per page, the chooser's
features and each candidate's counts as the sets score them (benchmarks/clean_pages.py's
`scored` text), in benchmarks/results/choose-data.json. Everything after that reads only
that file: a set's F1 for any choice of candidates is the sum of the chosen pages' counts,
so fitting and cross-validating cost no further cleaning.

Two logistic regressions (numpy is not a dependency: Newton's method in plain Python),
one per alternative to the vote, each trained on the pages where it and the vote differ,
labelled by which scores better and weighted by how much (|delta F1|). Reported:

- the vote (today), each candidate alone, the best per page knowing the answer;
- k-fold within each set (out-of-fold choices), whole set and each half;
- transfer: trained on one set only, scored on the other;
- the shipped model, trained on both sets, scored on each (in sample).
"""

from __future__ import annotations

import json
import math
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

from .clean_quality import dev_dir, half
from .common import RESULTS

DATA = RESULTS / "choose-data.json"
FOLDS = 5
L2 = 10.0
THRESHOLD = 0.8
MIN_DELTA = 0.005  # pages whose candidates score within this are left out of the training
ALTERNATIVES = ("trafilatura", "readability")


def collect() -> None:
    from reader.clean import ExtractError
    from reader.clean.pipeline import clean_candidates

    from .clean_pages import scored

    dev = dev_dir()
    assert dev is not None, "development sets not found"
    sys.path.insert(0, str(dev))
    import score

    root = score.unpack(Path(tempfile.gettempdir()) / "reader-extraction-dev")
    rows: list[dict[str, Any]] = []
    for name, cases in (("mozilla", list(score.mozilla_cases(root))),
                        ("trafilatura", list(score.trafilatura_cases(root)))):
        for case, path, url, truth in cases:
            try:
                cleaned, read = clean_candidates(path.read_bytes(), url, None)
            except ExtractError:
                cleaned, read = {}, {}
            counts = {}
            for who in ("vote", *ALTERNATIVES):
                text = scored(dict(cleaned[who])) if who in cleaned else ""
                if who != "vote" and who not in cleaned and "vote" in cleaned:
                    counts[who] = counts["vote"]  # no such candidate: choosing it changes nothing
                    continue
                if name == "mozilla":
                    tp, fp, fn = score.shingle_counts(truth, text)
                    total = (tp + fp + fn) or 1.0
                    counts[who] = (tp / total, fp / total, fn / total)
                else:
                    tp, fn, fp, _ = score.snippet_counts(truth, text)
                    counts[who] = (tp, fp, fn)
            rows.append({"set": name, "case": case, "half": half(case), "read": read, "counts": counts})
        print(f"{name}: {len(cases)} pages", file=sys.stderr)
    RESULTS.mkdir(parents=True, exist_ok=True)
    DATA.write_text(json.dumps(rows), encoding="utf-8")


def load() -> list[dict[str, Any]]:
    """The collected pages, with the chooser's features worked out from what it read of each
    candidate (so a change of features needs no new collection)."""
    from reader.clean.choose import CANDIDATES, Text, features

    rows: list[dict[str, Any]] = json.loads(DATA.read_text(encoding="utf-8"))
    for row in rows:
        read = row.pop("read")
        row["features"] = features(*(Text(*read[c]) for c in CANDIDATES)) if len(read) > 1 else {}
    return rows


def f1(tp: float, fp: float, fn: float) -> float:
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return 2 * p * r / (p + r) if p + r else 0.0


def set_f1(rows: list[dict[str, Any]], picks: list[str]) -> float:
    sums = [0.0, 0.0, 0.0]
    for row, pick in zip(rows, picks):
        sums = [a + b for a, b in zip(sums, row["counts"][pick])]
    return f1(*sums)


def page_f1(row: dict[str, Any], who: str) -> float:
    return f1(*row["counts"][who])


# --- logistic regression, plain Python ---

def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """Gaussian elimination with partial pivoting."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[pivot] = m[pivot], m[col]
        for r in range(col + 1, n):
            f = m[r][col] / m[col][col]
            if f:
                m[r] = [x - f * y for x, y in zip(m[r], m[col])]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        x[r] = (m[r][n] - sum(m[r][c] * x[c] for c in range(r + 1, n))) / m[r][r]
    return x


def fit_logistic(xs: list[list[float]], ys: list[float], ws: list[float], l2: float = L2) -> list[float]:
    """Weighted, L2-penalized logistic regression (intercept unpenalized) by Newton's method."""
    d = len(xs[0]) + 1
    beta = [0.0] * d
    rows = [[1.0] + x for x in xs]
    for _ in range(30):
        grad = [0.0] * d
        hess = [[0.0] * d for _ in range(d)]
        for x, y, w in zip(rows, ys, ws):
            z = max(-60.0, min(60.0, sum(b * v for b, v in zip(beta, x))))
            p = 1 / (1 + math.exp(-z))
            g = w * (p - y)
            h = w * p * (1 - p)
            for i in range(d):
                grad[i] += g * x[i]
                hx = h * x[i]
                row = hess[i]
                for j in range(i, d):
                    row[j] += hx * x[j]
        for i in range(d):
            for j in range(i):
                hess[i][j] = hess[j][i]
        for i in range(1, d):
            grad[i] += l2 * beta[i]
            hess[i][i] += l2
        hess[0][0] += 1e-9
        step = _solve(hess, grad)
        beta = [b - s for b, s in zip(beta, step)]
        if max(abs(s) for s in step) < 1e-7:
            break
    return beta


class Model:
    """Scaling plus one logistic model per alternative."""

    def __init__(self, rows: list[dict[str, Any]], names: tuple[str, ...], l2: float = L2):
        usable = [r for r in rows if r["features"]]
        self.names = names
        cols = list(zip(*[[r["features"][n] for n in names] for r in usable]))
        self.means = [sum(c) / len(c) for c in cols]
        self.scales = [max(1e-6, math.sqrt(sum((v - m) ** 2 for v in c) / len(c))) for c, m in zip(cols, self.means)]
        self.models = {}
        for alt in ALTERNATIVES:
            xs, ys, ws = [], [], []
            for r in usable:
                delta = page_f1(r, alt) - page_f1(r, "vote")
                if abs(delta) < MIN_DELTA:
                    continue
                xs.append(self.scaled(r["features"]))
                ys.append(1.0 if delta > 0 else 0.0)
                ws.append(abs(delta))
            self.models[alt] = fit_logistic(xs, ys, ws, l2) if xs else [-10.0] + [0.0] * len(names)

    def scaled(self, found: dict[str, float]) -> list[float]:
        return [(found[n] - m) / s for n, m, s in zip(self.names, self.means, self.scales)]

    def probabilities(self, found: dict[str, float]) -> dict[str, float]:
        if not found:
            return {alt: 0.0 for alt in ALTERNATIVES}
        x = [1.0] + self.scaled(found)
        return {alt: 1 / (1 + math.exp(-max(-60.0, min(60.0, sum(b * v for b, v in zip(beta, x))))))
                for alt, beta in self.models.items()}

    def pick(self, found: dict[str, float], threshold: float) -> str:
        best, odds = "vote", threshold
        for alt, p in self.probabilities(found).items():
            if p > odds:
                best, odds = alt, p
        return best


def folds(rows: list[dict[str, Any]], k: int) -> list[list[int]]:
    index = list(range(len(rows)))
    random.Random(22).shuffle(index)
    return [sorted(index[i::k]) for i in range(k)]


def report(rows: list[dict[str, Any]], picks: list[str]) -> str:
    parts = [f"{set_f1(rows, picks):.4f}"]
    for h in ("dev", "check"):
        sub = [(r, p) for r, p in zip(rows, picks) if r["half"] == h]
        parts.append(f"{h} {set_f1([r for r, _ in sub], [p for _, p in sub]):.4f}")
    moved = sum(p != "vote" for p in picks)
    return f"{parts[0]} ({parts[1]}, {parts[2]}; {moved} pages moved off the vote)"


def out_of_fold(rows: list[dict[str, Any]], names: tuple[str, ...], threshold: float, l2: float) -> list[str]:
    picks = ["vote"] * len(rows)
    for fold in folds(rows, FOLDS):
        held = set(fold)
        model = Model([r for i, r in enumerate(rows) if i not in held], names, l2)
        for i in fold:
            picks[i] = model.pick(rows[i]["features"], threshold)
    return picks


def main(argv: list[str]) -> None:
    from reader.clean.choose import FEATURES

    if "--collect" in argv:
        collect()
    rows = load()
    names = FEATURES
    if "--all-features" in argv:  # every feature `choose.features` computes, not only the shipped model's
        names = tuple(next(r["features"] for r in rows if r["features"]))
    sets = {name: [r for r in rows if r["set"] == name] for name in ("mozilla", "trafilatura")}
    thresholds = [float(t) for t in argv[argv.index("--thresholds") + 1].split(",")] if "--thresholds" in argv \
        else [THRESHOLD]
    l2 = float(argv[argv.index("--l2") + 1]) if "--l2" in argv else L2
    for name, part in sets.items():
        print(f"{name}: {len(part)} pages")
        for who in ("vote", *ALTERNATIVES):
            print(f"  {who} alone: {report(part, [who] * len(part))}")
        best = [max(("vote", *ALTERNATIVES), key=lambda w: page_f1(r, w)) for r in part]
        print(f"  best per page, knowing the answer: {report(part, best)}")
    for threshold in thresholds:
        print(f"threshold {threshold}, L2 {l2}:")
        for name, part in sets.items():
            print(f"  {name} {FOLDS}-fold: {report(part, out_of_fold(part, names, threshold, l2))}")
        for train, test in (("mozilla", "trafilatura"), ("trafilatura", "mozilla")):
            model = Model(sets[train], names, l2)
            picks = [model.pick(r["features"], threshold) for r in sets[test]]
            print(f"  trained on {train}, scored on {test}: {report(sets[test], picks)}")
        both = Model(rows, names, l2)
        for name, part in sets.items():
            picks = [both.pick(r["features"], threshold) for r in part]
            print(f"  trained on both, {name} (in sample): {report(part, picks)}")
    if "--constants" in argv:
        both = Model(rows, names, l2)
        print(f"MEANS: tuple[float, ...] = {tuple(round(m, 6) for m in both.means)}")
        print(f"SCALES: tuple[float, ...] = {tuple(round(s, 6) for s in both.scales)}")
        for alt in ALTERNATIVES:
            print(f"{alt.upper()}: tuple[float, ...] = {tuple(round(b, 6) for b in both.models[alt])}")


if __name__ == "__main__":
    main(sys.argv[1:])
