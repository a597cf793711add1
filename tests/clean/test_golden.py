"""The cleaner's output on 30 real pages is the golden files' (tests/clean/golden/), byte
for byte: any change to what it keeps, drops or writes shows as a diff of those files in
the commit that makes it.

A change meant to alter the output regenerates them, and the commit carries the diff:

    python -m tests.clean.golden --write

(see tests/clean/golden.py for the files' format, and tests/clean/pages/README.md for
where the pages come from and their licenses).
"""

from __future__ import annotations

import difflib

import pytest

from .golden import GOLDEN, golden_metadata, output, pages, read

REGENERATE = "if the change is meant, run `python -m tests.clean.golden --write` and commit the diff"


@pytest.mark.parametrize("name", sorted(pages()))
def test_the_cleaners_output_is_the_golden_files(name: str):
    files, entry = output(name)
    assert entry == golden_metadata().get(name), f"{name}: metadata changed; {REGENERATE}"
    for file, text in files.items():
        golden = read(GOLDEN / file)
        if text != golden:
            diff = difflib.unified_diff(golden.splitlines(), text.splitlines(), f"golden/{file}", "now", lineterm="")
            pytest.fail(f"{file} changed; {REGENERATE}\n" + "\n".join(list(diff)[:60]))


def test_every_golden_file_belongs_to_a_page():
    names = set(pages())
    stray = [p.name for p in GOLDEN.iterdir() if p.suffix in (".html", ".txt") and p.stem not in names]
    assert not stray
