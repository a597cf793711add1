"""The web adapter goes through the core only, and declares its routes in one table:
rules a grep can check, kept as tests so a handler that reaches past the Reader, or a
route declared beside its handler, fails here rather than in review."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import reader.web
from reader.web.routes import routes

WEB = Path(reader.web.__file__).parent
MODULES = sorted(WEB.rglob("*.py"))
# The Reader's own parts are private: nothing in the adapter names them.
PARTS = re.compile(r"\.(store|cleaner|pool|client|worker)\b")
BELOW_THE_CORE = ("store", "jobs", "pool", "clean.pipeline", "feeds")


def imported(path: Path) -> list[str]:
    """The modules of reader `path` imports, by their names under reader/ (core, web.render...)."""
    package = ["reader", *path.relative_to(WEB.parent).parts[:-1]]  # reader.web.pages/x.py: reader, web, pages
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                name = ".".join([*base, node.module] if node.module else base)
            else:
                name = node.module or ""
            if name.startswith("reader."):
                names.append(name.removeprefix("reader."))
    return names


def test_no_web_module_reaches_past_the_reader():
    for path in MODULES:
        found = [line for line in path.read_text().splitlines() if PARTS.search(line)]
        assert found == [], f"{path.relative_to(WEB)} names a part of the Reader: {found}"
        below = [m for m in imported(path) if m.startswith(BELOW_THE_CORE)]
        assert below == [], f"{path.relative_to(WEB)} imports below the core: {below}"


def test_pages_and_the_api_do_not_import_each_other():
    for path in MODULES:
        part = path.relative_to(WEB).parts[0]
        names = imported(path)
        if part == "pages":
            assert not [m for m in names if m.startswith("web.api")], path
        if part == "api":
            assert not [m for m in names if m.startswith("web.pages")], path


def test_every_route_is_declared_in_the_one_table():
    for path in MODULES:
        if path.name != "routes.py":
            assert not re.search(r"\b(Route|Mount)\(", path.read_text()), f"{path.relative_to(WEB)} declares a route"
    paths = [(getattr(r, "path", None), tuple(sorted(getattr(r, "methods", None) or ()))) for r in routes]
    assert len(paths) == len(set(paths)), "a route is declared twice"
    assert paths[0] == ("/articles/{id:rowid}", ("GET", "HEAD"))  # the reader view is tried first
