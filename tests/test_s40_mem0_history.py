"""Mem0 / OpenMemory importer defects found by QA s40 (round 4, the g2 fixes).

Every input is built here by hand (SQLite history databases with ``sqlite3``, backups with
``gzip``) and every expected value is written by hand from the documented rules (the mem0
importer's docstring; Mem0's own ``mem0/memory/storage.py``: its first ``history`` table and the
migration that copies ``prev_value`` to ``old_memory`` and ``timestamp`` to ``created_at`` /
``updated_at``), never read back from the code under test.
"""

from __future__ import annotations

import gzip
import json
import sqlite3
from pathlib import Path

import pytest
from package_utils import mem0_history_db, write_json

from memaudit_core.errors import PackageError
from memaudit_core.importers import guess_store_format, load_external_store

# --------------------------------------------------------------------------- defect 1

#: m-meal was updated on 04-23 (its updated_at); m-ana was exported on 04-28 (created_at only).
EXPORT = {
    "results": [
        {
            "id": "m-meal",
            "memory": "Is pescatarian now",
            "created_at": "2025-04-20T16:00:00+00:00",
            "updated_at": "2025-04-23T17:00:00+00:00",
        },
        {
            "id": "m-ana",
            "memory": "Sister Ana is allergic to peanuts",
            "created_at": "2025-04-28T16:00:00+00:00",
            "updated_at": None,
        },
    ]
}

HISTORY_ROWS = [
    # (id, memory_id, old_memory, new_memory, event, created_at, updated_at, is_deleted,
    #  actor_id, role)
    (
        "h1",
        "m-meal",
        None,
        "Prefers vegetarian meals",
        "ADD",
        "2025-04-20T16:00:00+00:00",
        None,
        0,
        None,
        None,
    ),
    # Applied (dated at the export's updated_at): "Prefers vegetarian meals" is replaced.
    (
        "h2",
        "m-meal",
        "Prefers vegetarian meals",
        "Is pescatarian now",
        "UPDATE",
        "2025-04-20T16:00:00+00:00",
        "2025-04-23T17:00:00+00:00",
        0,
        None,
        None,
    ),
    (
        "h3",
        "m-ana",
        None,
        "Sister Ana is allergic to peanuts",
        "ADD",
        "2025-04-28T16:00:00+00:00",
        None,
        0,
        None,
        None,
    ),
    # After the export's time: not applied, the store still holds "... peanuts".
    (
        "h4",
        "m-ana",
        "Sister Ana is allergic to peanuts",
        "Sister Ana is allergic to peanuts and shellfish",
        "UPDATE",
        "2025-04-28T16:00:00+00:00",
        "2025-05-02T16:00:00+00:00",
        0,
        None,
        None,
    ),
    # A memory the export does not hold (truncated export).
    ("h5", "ghost", None, "Ghost memory", "ADD", "2025-04-21T16:00:00+00:00", None, 0, None, None),
    (
        "h6",
        "ghost",
        "Ghost memory",
        "Ghost memory, updated",
        "UPDATE",
        "2025-04-21T16:00:00+00:00",
        "2025-04-22T16:00:00+00:00",
        0,
        None,
        None,
    ),
    # A deleted memory: listed in deleted, its replaced texts are not the store's.
    ("h7", "gone", None, "Likes jazz", "ADD", "2025-04-19T16:00:00+00:00", None, 0, None, None),
    (
        "h8",
        "gone",
        "Likes jazz",
        "Likes blues",
        "UPDATE",
        "2025-04-19T16:00:00+00:00",
        "2025-04-20T16:00:00+00:00",
        0,
        None,
        None,
    ),
    ("h9", "gone", "Likes blues", None, "DELETE", None, None, 1, None, None),
]


def test_superseded_versions_counts_only_replaced_texts_of_kept_memories(tmp_path):
    """QA s40 defect 1: every history UPDATE was counted (4 here); only h2 replaced a text of
    a memory the store holds with another one: h4 comes after the export (its replaced text is
    the one kept), h6 is of a memory missing from the export, h8 of a deleted memory."""
    export = write_json(tmp_path, "export.json", EXPORT)
    db = mem0_history_db(tmp_path / "history.db", HISTORY_ROWS)
    store = load_external_store(export, "mem0", history=db)
    assert store.meta["superseded_versions"] == 1
    assert {m.id: m.text for m in store.memories} == {
        "m-meal": "Is pescatarian now",
        "m-ana": "Sister Ana is allergic to peanuts",
    }
    assert [d["id"] for d in store.meta["deleted"]] == ["gone"]
    warnings = "\n".join(store.meta["warnings"])
    assert "the export is older than the history" in warnings
    assert any("(ghost)" in w and "truncated" in w for w in store.meta["warnings"])


def test_superseded_versions_same_rules_for_json_history(tmp_path):
    """QA s40 defect 1, the JSON history: the same rows as a list give the same count."""
    keys = (
        "id",
        "memory_id",
        "old_memory",
        "new_memory",
        "event",
        "created_at",
        "updated_at",
        "is_deleted",
        "actor_id",
        "role",
    )
    rows = [dict(zip(keys, r, strict=True)) for r in HISTORY_ROWS]
    for row in rows:
        row["is_deleted"] = bool(row["is_deleted"])
    export = write_json(tmp_path, "export.json", EXPORT)
    hist = write_json(tmp_path, "history.json", rows)
    store = load_external_store(export, "mem0", history=hist)
    assert store.meta["superseded_versions"] == 1


# --------------------------------------------------------------------------- defect 2

FIRST_EXPORT = {
    "results": [
        {
            "id": "m1",
            "memory": "Lives in Lisbon",
            "created_at": "2024-07-01T10:00:00+00:00",
            "updated_at": "2024-07-15T09:00:00+00:00",
        }
    ]
}

#: Mem0's first history table: (id, memory_id, prev_value, new_value, event, timestamp,
#: is_deleted); timestamp was datetime.utcnow(), stored by sqlite3 as "YYYY-MM-DD HH:MM:SS.ffffff".
FIRST_ROWS = [
    ("r1", "m1", None, "Lives in Berlin", "ADD", "2024-07-01 10:00:00.000001", 0),
    ("r2", "m1", "Lives in Berlin", "Lives in Lisbon", "UPDATE", "2024-07-15 09:00:00", 0),
    ("r3", "m1", "Lives in Lisbon", "Lives in Porto", "UPDATE", "2024-08-01 08:30:00", 0),
    ("r4", "gone", None, "Likes jazz", "ADD", "2024-07-02 10:00:00", 0),
    ("r5", "gone", "Likes jazz", None, "DELETE", "2024-07-03 11:00:00", 1),
]


def _first_schema_db(path: Path) -> Path:
    con = sqlite3.connect(path)
    con.execute(
        "CREATE TABLE history (id TEXT PRIMARY KEY, memory_id TEXT, prev_value TEXT, "
        "new_value TEXT, event TEXT, timestamp DATETIME, is_deleted INTEGER)"
    )
    # Written out of time order: the reader orders by timestamp.
    con.executemany("INSERT INTO history VALUES (?,?,?,?,?,?,?)", FIRST_ROWS[::-1])
    con.commit()
    con.close()
    return path


FIRST_HISTORY_OF_M1 = [
    {"event": "ADD", "old": None, "new": "Lives in Berlin", "at": "2024-07-01T10:00:00.000001"},
    {
        "event": "UPDATE",
        "old": "Lives in Berlin",
        "new": "Lives in Lisbon",
        "at": "2024-07-15T09:00:00",
    },
    {
        "event": "UPDATE",
        "old": "Lives in Lisbon",
        "new": "Lives in Porto",
        "at": "2024-08-01T08:30:00",
    },
]


def _check_first_schema_store(store) -> None:
    assert store.memories[0].meta["history"] == FIRST_HISTORY_OF_M1
    assert store.meta["deleted"] == [
        {
            "id": "gone",
            "text": "Likes jazz",
            "status": "deleted",
            "deleted_at": "2024-07-03T11:00:00",
            "from": "history",
        }
    ]
    warnings = "\n".join(store.meta["warnings"])
    assert "without a readable time" not in warnings
    # r3 (08-01) is after the export's updated_at (07-15): the check can fire now.
    assert "the export is older than the history" in warnings
    assert "'Lives in Porto'" in warnings
    assert store.memories[0].text == "Lives in Lisbon"
    assert store.meta["superseded_versions"] == 1  # "Lives in Berlin" (r3 is after the export)


def test_first_history_db_schema_reads_prev_value_and_timestamp(tmp_path):
    """QA s40 defect 2: Mem0's first history.db was read as the "new_value schema" with no
    old texts and no times (every memory "taken in the file's order")."""
    export = write_json(tmp_path, "export.json", FIRST_EXPORT)
    db = _first_schema_db(tmp_path / "history.db")
    store = load_external_store(export, "mem0", history=db)
    assert store.meta["history"] == (
        "sqlite history.db (Mem0's first schema: prev_value, new_value, timestamp): 5 row(s)"
    )
    _check_first_schema_store(store)


def test_first_history_json_rows_read_alike(tmp_path):
    """QA s40 defect 2: Mem0's first history() rows (prev_value, new_value, timestamp) as
    JSON are read like the database's."""
    keys = ("id", "memory_id", "prev_value", "new_value", "event", "timestamp", "is_deleted")
    rows = [dict(zip(keys, r, strict=True)) for r in FIRST_ROWS]
    export = write_json(tmp_path, "export.json", FIRST_EXPORT)
    hist = write_json(tmp_path, "history.json", rows)
    store = load_external_store(export, "mem0", history=hist)
    assert store.meta["history"] == "json history: 5 row(s)"
    _check_first_schema_store(store)


# --------------------------------------------------------------------------- defect 3

BACKUP_ROWS = [
    {
        "id": "o1",
        "user_id": "u1",
        "content": "Lives in Lisbon",
        "state": "active",
        "metadata": {},
        "created_at": "2025-04-20T09:00:00+00:00",
    },
    {
        "id": "o2",
        "user_id": "u1",
        "content": "Likes jazz",
        "state": "deleted",
        "metadata": {},
        "created_at": "2025-04-21T09:00:00+00:00",
    },
]
JSONL = "".join(json.dumps(r) + "\n" for r in BACKUP_ROWS)
MEM0_HINT = (
    "this file looks like a Mem0 export or OpenMemory backup (format 'mem0'), not an export "
    "of format "
)


def _first_problem(path: Path, fmt: str):
    with pytest.raises(PackageError) as info:
        load_external_store(path, fmt)
    return info.value.problems[0]


@pytest.mark.parametrize("fmt", ["letta", "amem", "zep"])
@pytest.mark.parametrize("name", ["memories.jsonl.gz", "memories.jsonl", "backup.txt"])
def test_openmemory_jsonl_under_another_format_hints_mem0(tmp_path, fmt, name):
    """QA s40 defect 3: got only "decompress it first (gunzip)" / "wrap the lines in one
    array", no word of format mem0."""
    path = tmp_path / name
    data = JSONL.encode()
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    first = _first_problem(path, fmt)
    assert (first.path, first.rule) == ("$", "format-hint")
    assert first.message == MEM0_HINT + f"'{fmt}'"
    assert guess_store_format(path) == "mem0"


def test_other_gzip_keeps_decompress_advice(tmp_path):
    """Regression guard (QA s40 defect 3): a gzip file that is no OpenMemory backup gets no
    mem0 hint, only the decompress advice."""
    path = tmp_path / "notes.json.gz"
    path.write_bytes(gzip.compress(json.dumps([{"id": "n1", "text": "x"}]).encode()))
    assert guess_store_format(path) is None
    first = _first_problem(path, "letta")
    assert first.rule == "utf-8"
    assert "decompress it first" in first.message


# --------------------------------------------------------------------------- defect 4

TRIMMED = {"memories": BACKUP_ROWS}


def test_trimmed_memories_json_is_refused_with_a_backup_hint(tmp_path):
    """QA s40 defect 4: {"memories": [...]} without export_meta got only "needs a 'results'
    array". It is refused (export_meta says whether the backup was filtered) with a hint."""
    path = write_json(tmp_path, "memories.json", TRIMMED)
    first = _first_problem(path, "mem0")
    assert (first.path, first.rule) == ("$", "format-hint")
    assert first.message.startswith(
        "this looks like an OpenMemory backup's memories.json (rows with id, content, state) "
        "without its 'export_meta'"
    )
    assert first.value == ["memories"]


def test_trimmed_memories_json_under_another_format_hints_mem0(tmp_path):
    """QA s40 defect 4: as letta it got no word of format mem0."""
    path = write_json(tmp_path, "memories.json", TRIMMED)
    first = _first_problem(path, "letta")
    assert (first.path, first.rule, first.message) == ("$", "format-hint", MEM0_HINT + "'letta'")


# --------------------------------------------------------------------------- defect 5


def test_backup_with_history_gives_a_true_reason(tmp_path):
    """QA s40 defect 5: a memories.jsonl.gz (no status_history) was refused "which carries its
    own state history (status_history)"."""
    path = tmp_path / "memories.jsonl.gz"
    path.write_bytes(gzip.compress(JSONL.encode()))
    db = mem0_history_db(tmp_path / "history.db", HISTORY_ROWS[:1])
    first = _first_problem_with_history(path, db)
    assert (first.path, first.rule) == ("$", "mem0-history")
    assert "status_history" not in first.message
    assert first.message == (
        "this is an OpenMemory backup: each of its memories carries its own state (active, "
        "paused, archived or deleted), which says what the store holds, so a Mem0 history is "
        "not read with it: leave out the history"
    )


def _first_problem_with_history(path: Path, history: Path):
    with pytest.raises(PackageError) as info:
        load_external_store(path, "mem0", history=history)
    return info.value.problems[0]
