"""Run every benchmark, print one Markdown table, and (with --write) put it into
benchmarks/README.md between the RESULTS markers with the machine, date and command.

    python -m benchmarks            # or: python benchmarks/run.py
    python -m benchmarks --write    # also update benchmarks/README.md
"""

from __future__ import annotations

import datetime
import importlib
import os
import sys
import time
import traceback
from pathlib import Path

if __package__ in (None, ""):  # python benchmarks/run.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    __package__ = "benchmarks"

from benchmarks.common import BENCH_DIR, Row, machine, table  # noqa: E402

ORDER = ["open_ready", "list_pages", "highlights", "browse_scale", "sync_scale", "browse_under_load", "clean_cpu", "clean_quality", "clean_pages", "open_storm", "feeds_peer",
         "memory", "take_throughput", "drain", "import_parse", "import_store", "rules_refresh"]
START, END = "<!-- RESULTS START -->", "<!-- RESULTS END -->"


def main(argv: list[str]) -> int:
    write = "--write" in argv
    only = [a for a in argv if not a.startswith("-")]
    rows: list[Row] = []
    load_before = os.getloadavg()
    started = time.monotonic()
    for name in only or ORDER:
        t = time.monotonic()
        print(f"running {name} ...", file=sys.stderr, flush=True)
        try:
            for row in importlib.import_module(f"benchmarks.{name}").run():
                if row.num.isdigit():  # an old numbered row: label it by what it measures
                    row.num = name
                rows.append(row)
        except Exception as exc:  # one broken benchmark must not hide the others
            traceback.print_exc()
            rows.append(Row(name, name, f"error: {type(exc).__name__}: {str(exc)[:200]}", "", "failed"))
        print(f"  {name}: {time.monotonic() - t:.0f} s", file=sys.stderr, flush=True)
    total = time.monotonic() - started
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    command = "python -m benchmarks" + (" " + " ".join(argv) if argv else "")
    load_after = os.getloadavg()
    # the machine may be shared: the load says how much else was running meanwhile
    load = (f"load average (1 min) {load_before[0]:.1f} at the start, {load_after[0]:.1f} at the end, "
            f"{load_after[2]:.1f} over the last 15 min")
    report = (f"Run {stamp} on {machine()}, with `{command}` ({total:.0f} s in all); {load}.\n\n" + table(rows))
    print(report)
    if write:
        readme = BENCH_DIR / "README.md"
        text = readme.read_text()
        head, rest = text.split(START, 1)
        _, tail = rest.split(END, 1)
        readme.write_text(f"{head}{START}\n{report}\n{END}{tail}")
    return 1 if any(r.status == "failed" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
