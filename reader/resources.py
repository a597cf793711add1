"""Where reader's own files are at run time: the templates, the static files (with the
vendored htmx) and the first-run seed database.

They are package data, found through `importlib.resources`, so a wheel installed
anywhere finds them as well as a source checkout does. In the checkout they live at the
top level (`templates/`, `static/`, `reader.db.example`, where the docs name them) and
the package reaches them through symlinks (`reader/templates -> ../templates`, ...);
building a wheel copies the files behind those links into it.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def _package_path(name: str) -> Path:
    resource = files(__package__) / name
    # Jinja's loader and Starlette's StaticFiles want a real directory. Wheels are always
    # unpacked on disk, so this holds for every install pip can make; a zipped import
    # would need an extraction step nobody needs today.
    if not isinstance(resource, Path):
        raise RuntimeError(f"reader's {name!r} is not a file on disk ({resource!r}); install reader unzipped")
    return resource


def templates_dir() -> Path:
    return _package_path("templates")


def static_dir() -> Path:
    return _package_path("static")


def seed_db() -> Path:
    """The sample database a first run starts from: the sample feed and its headlines,
    at the current schema."""
    return _package_path("reader.db.example")
