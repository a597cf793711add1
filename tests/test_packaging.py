"""reader carries what it needs at run time inside its package (templates, static files,
the vendored htmx, the sample site and the first-run seed), and the seed is a database
at the current schema, separate from the frozen first-release fixture of the migration
test. The wheel itself is built, installed and run by .ci/run (`.ci/smoke`)."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from importlib.resources import files
from pathlib import Path

from reader import resources
from reader.cli import seed_database
from reader.samples import SAMPLE_FEED_URL
from reader.store import MIGRATIONS, Store

from .helpers import CHECKOUT, FIXTURES


def user_version(db: Path) -> int:
    connection = sqlite3.connect(db)
    try:
        return connection.execute("PRAGMA user_version").fetchone()[0]
    finally:
        connection.close()


def test_run_time_files_are_found_inside_the_package():
    package = files("reader")
    assert resources.templates_dir() == package / "templates"
    assert resources.static_dir() == package / "static"
    assert resources.seed_db() == package / "reader.db.example"
    assert (resources.templates_dir() / "base.html").is_file()
    assert (resources.static_dir() / "vendor" / "htmx-4.0.1" / "htmx.min.js").is_file()
    assert resources.seed_db().is_file()
    # In the checkout they are the documented top-level files, not copies that could drift.
    assert resources.templates_dir().resolve() == CHECKOUT / "templates"
    assert resources.static_dir().resolve() == CHECKOUT / "static"
    assert resources.seed_db().resolve() == CHECKOUT / "reader.db.example"


async def test_the_seed_is_the_sample_feed_at_the_current_schema(tmp_path):
    copy = tmp_path / "seed.db"
    shutil.copyfile(resources.seed_db(), copy)
    assert user_version(copy) == len(MIGRATIONS)  # nothing to migrate on a first run
    async with await Store.open(copy) as store:
        [feed] = await store.list_feeds()
        articles = await store.list_articles()
        stats = await store.stats()
    assert feed["url"] == SAMPLE_FEED_URL and feed["title"] == "reader samples"
    assert len(articles) == 8 and all(a["state"] == "new" for a in articles)
    assert (stats["started"], stats["queued"]) == (0, 0)  # nothing cleaned, nothing queued


def test_the_migration_fixture_is_the_first_released_schema():
    fixture = FIXTURES / "schema-v1.db"
    connection = sqlite3.connect(f"file:{fixture}?mode=ro&immutable=1", uri=True)  # writes nothing beside it
    try:
        assert connection.execute("PRAGMA user_version").fetchone() == (1,)
        columns = {row[1] for row in connection.execute("PRAGMA table_info(articles)")}
    finally:
        connection.close()
    assert "read_at" not in columns  # a column the second schema added


async def test_a_first_run_works_on_a_copy_of_the_seed_and_leaves_the_seed_as_it_was(tmp_path):
    seed = resources.seed_db()
    digest = hashlib.sha256(seed.read_bytes()).hexdigest()
    beside = sorted(p.name for p in seed.resolve().parent.glob(seed.name + "*"))

    db = tmp_path / "reader.db"
    seed_database(db)
    async with await Store.open(db) as store:
        [article, *_] = await store.list_articles()
        assert await store.queue(article["id"])
        assert await store.star(article["id"])

    assert hashlib.sha256(seed.read_bytes()).hexdigest() == digest
    assert sorted(p.name for p in seed.resolve().parent.glob(seed.name + "*")) == beside == ["reader.db.example"]
    seed_database(db)  # a second run keeps the library it has
    async with await Store.open(db) as store:
        assert (await store.get_article(article["id"]))["starred_at"] is not None
