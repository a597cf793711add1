"""schema.sql is the current schema. A new file is made from it; a file made by an older
reader reaches it by the numbered migrations. Both ways must give the same database: the
same rows in sqlite_master (type, name, table and statement, the statement compared as
SQLite reads it, without comments or layout), the same user_version, and for a new file
the same rows in every table. A migration that adds a column, an index or a trigger
schema.sql lacks, or the reverse, fails here."""

from __future__ import annotations

import contextlib
import re
import shutil
import sqlite3
from pathlib import Path

from reader.store import MIGRATIONS, Store
from reader.store.schema import SCHEMA, _statements

from ..helpers import FIXTURES, database_at

# One SQL token: a quoted literal or name (kept exactly), a comment, a run of spaces, a
# parenthesis, comma or semicolon, or a run of anything else.
_TOKEN = re.compile(r"""'(?:[^']|'')*'|"(?:[^"]|"")*"|`[^`]*`|\[[^\]]*\]|--[^\n]*|/\*.*?\*/|\s+|[(),;]|[^\s'"`\[(),;/-]+|.""",
                    re.S)
_TIGHT = set("(),;")


def normalized(sql: str | None) -> str | None:
    """A statement as SQLite parses it: comments gone, one space between two words and none
    beside a parenthesis, comma or semicolon. Literals keep their text. The ALTER TABLEs
    of the migrations append columns with a layout of their own; this makes it not matter."""
    if sql is None:  # an index SQLite made for a UNIQUE or PRIMARY KEY
        return None
    out: list[str] = []
    gap = False
    for token in _TOKEN.findall(sql):
        if token.isspace() or token.startswith(("--", "/*")):
            gap = True
            continue
        if out and gap and token not in _TIGHT and out[-1] not in _TIGHT:
            out.append(" ")
        out.append(token)
        gap = False
    return "".join(out)


def master(path: Path) -> list[tuple[str, str, str, str | None]]:
    with contextlib.closing(sqlite3.connect(path)) as db:
        return sorted(db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"))


def schema_of(path: Path) -> dict[tuple[str, str], tuple[str, str | None]]:
    """(type, name) -> (table, normalized statement) for everything in sqlite_master, and
    the file's user_version."""
    with contextlib.closing(sqlite3.connect(path)) as db:
        version = db.execute("PRAGMA user_version").fetchone()[0]
    found: dict[tuple[str, str], tuple[str, str | None]] = {
        (kind, name): (table, normalized(sql)) for kind, name, table, sql in master(path)}
    found["pragma", "user_version"] = ("", str(version))
    return found


def rows_of_every_table(path: Path) -> dict[str, list[tuple[object, ...]]]:
    with contextlib.closing(sqlite3.connect(path)) as db:
        tables = [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {name: sorted(db.execute(f'SELECT * FROM "{name}"'), key=repr) for name in tables}


def made_by_schema_sql(path: Path) -> Path:
    """A file made by running schema.sql as it is, without reader's code in between."""
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.executescript(SCHEMA)
    return path


async def test_every_migration_from_an_empty_file_gives_schema_sql(tmp_path):
    reference = made_by_schema_sql(tmp_path / "schema.db")
    stepped = tmp_path / "stepped.db"
    await database_at(stepped, len(MIGRATIONS))  # the twelve steps, in order, as released
    assert schema_of(stepped) == schema_of(reference)
    assert schema_of(reference)["pragma", "user_version"] == ("", str(len(MIGRATIONS)))
    # and the same rows: the reading list's length, the library's version, the search index's own
    assert rows_of_every_table(stepped) == rows_of_every_table(reference)


async def test_the_first_release_migrates_to_schema_sql(tmp_path):
    reference = made_by_schema_sql(tmp_path / "schema.db")
    old = tmp_path / "v1.db"
    shutil.copyfile(FIXTURES / "schema-v1.db", old)  # tests open copies, never a tracked file
    async with await Store.open(old):
        pass
    assert schema_of(old) == schema_of(reference)


async def test_a_new_file_is_made_from_schema_sql_comments_and_all(tmp_path):
    reference = made_by_schema_sql(tmp_path / "schema.db")
    new = tmp_path / "reader.db"
    async with await Store.open(new):
        pass
    # the very text, not only the same schema: `sqlite3 reader.db .schema` reads as schema.sql
    assert master(new) == master(reference)
    assert rows_of_every_table(new) == rows_of_every_table(reference)
    assert "-- the first tap: the reading list's order" in dict(
        (name, sql) for _, name, _, sql in master(new))["articles"]


def test_the_comparison_sees_what_schema_sql_lacks(tmp_path):
    reference = made_by_schema_sql(tmp_path / "schema.db")
    expected = schema_of(reference)
    for n, change in enumerate([
        "ALTER TABLE articles ADD COLUMN extra TEXT",
        "ALTER TABLE feeds ADD COLUMN note2 TEXT NOT NULL DEFAULT ''",
        "CREATE INDEX articles_extra ON articles (guid)",
        "DROP INDEX articles_by_key",
        "DROP TRIGGER unread_update",
        "PRAGMA user_version = 999",
    ]):
        changed = tmp_path / f"changed-{n}.db"
        shutil.copyfile(reference, changed)
        with contextlib.closing(sqlite3.connect(changed)) as db:
            db.execute(change)
            db.commit()
        assert schema_of(changed) != expected, change
    # Layout and comments do not count; what is inside a literal does.
    assert normalized("CREATE TABLE t (\n  a TEXT,  -- why\n  b REAL\n)") == "CREATE TABLE t(a TEXT,b REAL)"
    assert normalized("CHECK (x IN ('a  b'))") != normalized("CHECK (x IN ('a b'))")
    assert normalized("DEFAULT 'x -- y'") == "DEFAULT 'x -- y'"


def test_schema_sql_says_what_each_table_index_and_trigger_is():
    """Every table and index has a comment above it; a trigger has one, or shares the one
    above the trigger before it on the same table (the library version's groups)."""
    last_trigger_on = None
    for statement in _statements(SCHEMA):
        lines = statement.splitlines()
        head = next(i for i, line in enumerate(lines) if line.strip() and not line.lstrip().startswith("--"))
        commented = head > 0 and lines[head - 1].lstrip().startswith("--")  # right above it
        words = lines[head].split()
        if words[0] != "CREATE":
            last_trigger_on = None
            continue
        if words[1] == "TRIGGER":
            on = re.search(r"\bON (\w+)", statement).group(1)
            assert commented or on == last_trigger_on, f"no comment says why it is there: {lines[head]}"
            last_trigger_on = on
        else:
            assert commented, f"no comment says what it is for: {lines[head]}"
            last_trigger_on = None
