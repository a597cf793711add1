"""The layout's rules, read from the code's own imports: every package imports only from
the floors below it, and the adapters (the web pages and API, the command line) reach
reader through the core alone.

The floors, from the bottom up, are the order data flows through them (docs/architecture.md).
A package may import from its own floor and any floor below; a module named
`__main__` is an entry point and may import anything.
"""

from __future__ import annotations

import ast
from pathlib import Path

import reader

PACKAGE = Path(reader.__file__).parent

# Bottom first. Each entry is a floor; names on one floor may import each other.
FLOORS: list[set[str]] = [
    {"errors"},
    {"clean"},  # page bytes -> content, pure CPU; its sanitizer is the one nh3 cleaner
    {"params", "settings", "urls", "records", "resources", "samples"},  # vocabulary, no I/O
    {"formats"},  # files in and out, no database
    {"fetch"},
    {"pool"},
    {"store"},
    {"feeds"},
    {"jobs"},
    {"core"},
    {"web"},  # the pages and the JSON API: an adapter
    {"cli"},  # the command line: an adapter, and `reader serve` starts the web one
]
# What an adapter may import besides its own package: the core and the vocabulary, and
# two modules of pure string functions the pages use for display (a feed's summary as
# text, or without its remote images): none of them stores, fetches or cleans.
ADAPTER_MAY_IMPORT = {"core", "errors", "params", "settings", "urls", "records", "resources", "samples",
                      "clean.sanitize", "clean.images"}
# Attributes that are the core's own parts; an adapter that names one went around it.
CORE_PARTS = {"store", "cleaner", "pool", "client", "worker"}


def _modules() -> list[tuple[str, Path]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        found.append((".".join(parts), path))
    return found


def _imports(module: str, path: Path) -> list[str]:
    """Every reader module `module` imports, as absolute names."""
    is_package = path.name == "__init__.py"
    here = module.split(".")
    if is_package:
        here = here[:-1]  # reader.x.__init__ -> reader.x
    targets = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = here if is_package else here[:-1]
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if node.module:
                targets.append(target)
            else:
                targets.extend(f"{target}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            targets.extend(alias.name for alias in node.names)
    return [t for t in targets if t.startswith("reader.")]


def _unit(module: str) -> str:
    """The package (or top-level module) a module belongs to: reader.web.app -> web."""
    return module.split(".")[1]


def _floor(unit: str) -> int:
    for level, names in enumerate(FLOORS):
        if unit in names:
            return level
    raise AssertionError(f"reader/{unit} is on no floor: add it to FLOORS in {__file__}")


def test_every_package_imports_only_from_its_floor_and_below():
    upward = []
    for module, path in _modules():
        if _unit(module) in {"__init__", "__main__"} or module.endswith(".__main__"):
            continue  # the package's docstring and version; entry points
        for target in _imports(module, path):
            if _unit(target) in {"__init__", "__version__"}:
                continue
            if _floor(_unit(target)) > _floor(_unit(module)):
                upward.append(f"{module} imports {target}")
    assert upward == []


def test_the_adapters_reach_reader_only_through_the_core():
    around = []
    for module, path in _modules():
        unit = _unit(module)
        if unit not in {"web", "cli"}:
            continue
        for target in _imports(module, path):
            name = ".".join(target.split(".")[1:3])  # reader.clean.images.x -> clean.images
            if target == "reader.__version__" or name in ADAPTER_MAY_IMPORT:
                continue
            if _unit(target) not in ADAPTER_MAY_IMPORT | {unit} | ({"web"} if unit == "cli" else set()):
                around.append(f"{module} imports {target}")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in CORE_PARTS:
                around.append(f"{module}:{node.lineno} uses .{node.attr}")
    assert around == []


def test_the_check_sees_an_upward_import(tmp_path):
    # the rule above is only worth something if it can fail: a module of the store that
    # imports the web adapter is reported
    fake = tmp_path / "reader" / "store" / "bad.py"
    fake.parent.mkdir(parents=True)
    fake.write_text("from ..web import app\nfrom . import base\n")
    targets = _imports("reader.store.bad", fake)
    assert targets == ["reader.web", "reader.store.base"]
    assert _floor(_unit(targets[0])) > _floor("store")
