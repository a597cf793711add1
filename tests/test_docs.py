"""The README is the front door: what it says about settings must stay true."""

import re
from pathlib import Path

from reader.settings import describe

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()


def test_the_readme_settings_table_lists_every_setting_and_nothing_else():
    table = README[README.index("| variable | default | meaning |"):]
    table = table[: table.index("\n\n")]
    documented = re.findall(r"^\| `(READER_\w+)` \|", table, re.MULTILINE)
    assert documented == [env for env, _, _ in describe()]


def test_the_readme_starts_with_the_two_commands():
    blocks = re.findall(r"```sh\n(.*?)\n```", README, re.DOTALL)
    assert blocks[0].endswith("reader serve")
    assert blocks[1].endswith("python -m pytest")
