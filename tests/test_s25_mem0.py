"""Mem0 importer defects found by the s25 audit.

Every expected value is written by hand from the documented rules (the mem0 importer's
docstring, EXPORT_FORMATS.md section 1, DESIGN.md), never read back from the code under test.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from note_utils import message, messages
from package_utils import refused, write_json

from memaudit_core.cli import main
from memaudit_core.errors import PackageError
from memaudit_core.importers import import_package, load_external_store

FIX = Path(__file__).parent / "fixtures" / "importers"


@pytest.fixture(scope="module")
def locomo_pkg():
    return import_package("locomo", FIX / "locomo_small.json", instance="conv-a")


ADD_RESULT = {
    "results": [
        {
            "id": "m1",
            "memory": "Ann lives in Lisbon",
            "event": "UPDATE",
            "previous_memory": "Ann lives in Berlin",
        },
        {"id": "m2", "memory": "Ann has a hamster", "event": "DELETE"},
    ]
}


# --------------------------------------------------------------------------- 1. add() events


def test_add_result_delete_event_is_deleted_not_live(tmp_path):
    """EXPORT_FORMATS 1.3: a DELETE event is a deletion, like a history DELETE. Both items
    were scored as live memories, without a word."""
    store = load_external_store(write_json(tmp_path, "add.json", ADD_RESULT), "mem0")
    assert [m.id for m in store.memories] == ["m1"]
    assert store.meta["deleted"] == [
        {
            "id": "m2",
            "text": "Ann has a hamster",
            "status": "deleted",
            "deleted_at": None,
            "from": "add event",
        }
    ]
    m1 = store.memories[0]
    assert m1.status == "active"
    assert m1.meta["event"] == "UPDATE"
    assert m1.meta["previous_memory"] == "Ann lives in Berlin"
    assert store.meta["superseded_versions"] == 1  # Berlin is no longer in the store
    assert store.meta["format_version"] == "add"
    (warning,) = messages(store.meta["warnings"])
    assert warning.startswith("2 item(s) carry add() result events (UPDATE 1, DELETE 1)")
    assert "looks like add() output" in warning


def test_add_result_delete_counts_in_the_cli_summary(tmp_path, capsys):
    pkg = tmp_path / "pkg.json"
    argv = ["import", "locomo", str(FIX / "locomo_small.json"), "--instance", "conv-a"]
    assert main([*argv, "-o", str(pkg)]) == 0
    export = write_json(tmp_path, "add.json", ADD_RESULT)
    capsys.readouterr()
    rc = main(["score", str(pkg), "--external", str(export), "--format", "mem0", "--json"])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    summary = json.loads(cap.out)["external_store"]
    assert summary["memories"] == 1
    assert summary["deleted"] == 1 and summary["deleted_ids"] == ["m2"]
    assert "warning: $.results[0].event: 2 item(s) carry add() result events" in cap.err


@pytest.mark.parametrize("event", ["MERGE", "", 3])
def test_add_result_unknown_event_is_refused(tmp_path, event):
    export = {"results": [{"id": "m1", "memory": "Ann lives in Lisbon", "event": event}]}
    f = write_json(tmp_path, "add.json", export)
    assert refused(lambda: load_external_store(f, "mem0")) == [("$.results[0].event", "mem0-event")]


def test_add_result_graph_relations_are_named_as_add_output(tmp_path):
    """add() with the graph store returns relations as {added_entities, deleted_entities}:
    the message said only "'relations' must be an array"."""
    export = {
        "results": [{"id": "m1", "memory": "Ann lives in Lisbon", "event": "ADD"}],
        "relations": {"added_entities": [], "deleted_entities": []},
    }
    f = write_json(tmp_path, "add.json", export)
    with pytest.raises(PackageError) as info:
        load_external_store(f, "mem0")
    (problem,) = info.value.problems
    assert (problem.path, problem.rule) == ("$.relations", "mem0-relations")
    assert "looks like add() output" in problem.message
    assert "get_all()" in problem.message
    assert info.value.source == str(f)


# --------------------------------------------------------------------------- 2. relations


def test_invalidated_relations_are_not_live(tmp_path):
    """EXPORT_FORMATS 1.5: Mem0 1.x soft-deletes an edge (valid=false, invalidated_at)."""
    export = {
        "results": [{"id": "m1", "memory": "Ann lives in Lisbon"}],
        "relations": [
            {"source": "ann", "relationship": "lives_in", "target": "lisbon"},
            {
                "source": "ann",
                "relationship": "lives_in",
                "destination": "berlin",
                "valid": False,
                "invalidated_at": "2025-01-01T00:00:00Z",
            },
        ],
    }
    store = load_external_store(write_json(tmp_path, "g.json", export), "mem0")
    assert store.meta["relations"] == ["ann|lives_in|lisbon"]
    assert store.meta["invalidated_relations"] == [
        {"relation": "ann|lives_in|berlin", "invalidated_at": "2025-01-01T00:00:00+00:00"}
    ]
    (warning,) = messages(store.meta["warnings"])
    assert warning.startswith("1 of 2 graph relation(s) are invalidated (valid: false)")


def test_relation_valid_must_be_a_boolean(tmp_path):
    export = {
        "results": [{"id": "m1", "memory": "Ann lives in Lisbon"}],
        "relations": [{"source": "ann", "relationship": "lives_in", "target": "x", "valid": "no"}],
    }
    f = write_json(tmp_path, "g.json", export)
    assert refused(lambda: load_external_store(f, "mem0")) == [("$.relations[0].valid", "type")]


# --------------------------------------------------------------------------- 3. expiration


def test_memories_past_their_expiration_date_are_marked_and_said(tmp_path):
    """The latest time in the export is 2024-06-01T00:00Z. A date-only expiration_date lasts
    through its day: 2024-04-01 has expired, 2024-06-01 and 2030-01-01 have not."""
    page = {
        "count": 3,
        "next": None,
        "previous": None,
        "results": [
            {
                "id": "p1",
                "memory": "Ann has a cat",
                "created_at": "2024-03-01T00:00:00Z",
                "expiration_date": "2024-04-01",
            },
            {
                "id": "p2",
                "memory": "Ann lives in Lisbon",
                "created_at": "2024-06-01T00:00:00Z",
                "expiration_date": "2030-01-01",
            },
            {
                "id": "p3",
                "memory": "Ann visits Porto",
                "created_at": "2024-05-01T00:00:00Z",
                "expiration_date": "2024-06-01",
            },
        ],
    }
    store = load_external_store(write_json(tmp_path, "page.json", page), "mem0")
    assert {m.id: m.status for m in store.memories} == {
        "p1": "expired",
        "p2": "active",
        "p3": "active",
    }
    assert store.memories[0].meta["expired_before_export"] is True
    assert "expired_before_export" not in store.memories[1].meta
    assert store.memories[0].meta["expiration_date"] == "2024-04-01"
    (warning,) = messages(store.meta["warnings"])
    assert warning.startswith(
        "3 memory(ies) carry an expiration_date; 1 of them expire before the export's latest "
        "time (2024-06-01T00:00:00+00:00): 'p1'"
    )


# --------------------------------------------------------------------------- 4. history pages


def test_a_paginated_history_page_is_said(tmp_path):
    export = write_json(
        tmp_path, "m.json", {"results": [{"id": "m1", "memory": "Lives in Lisbon"}]}
    )
    page = {
        "count": 250,
        "next": "https://api.mem0.ai/v1/memories/events/?page=2",
        "previous": None,
        "results": [
            {"memory_id": "m1", "event": "ADD", "new_memory": "Lives in Lisbon"},
            {"memory_id": "m9", "event": "DELETE", "old_memory": "Has a hamster"},
        ],
    }
    hist = write_json(tmp_path, "e.json", page)
    store = load_external_store(export, "mem0", history=hist)
    assert [d["id"] for d in store.meta["deleted"]] == ["m9"]  # the page is still read
    paged = [w for w in store.meta["warnings"] if "paginated history" in w]
    assert len(paged) == 1
    assert "it holds 2 of 250 rows" in paged[0]
    assert "next page: https://api.mem0.ai/v1/memories/events/?page=2" in paged[0]


# --------------------------------------------------------------------------- 5. both histories


def test_embedded_history_is_merged_with_a_given_history(tmp_path):
    """The export's own "history" was dropped when --history was given: m7's deletion was
    lost. Both are read; the row in both counts once."""
    add_m1 = {
        "memory_id": "m1",
        "event": "ADD",
        "new_memory": "Lives in Lisbon",
        "created_at": "2026-01-01T00:00:00+00:00",
    }
    export = {
        "results": [{"id": "m1", "memory": "Lives in Lisbon"}],
        "history": [
            add_m1,
            {"memory_id": "m7", "event": "ADD", "new_memory": "Has a hamster"},
            {"memory_id": "m7", "event": "DELETE", "old_memory": "Has a hamster"},
        ],
    }
    f = write_json(tmp_path, "m.json", export)
    hist = write_json(tmp_path, "h.json", [add_m1])
    store = load_external_store(f, "mem0", history=hist)
    assert [d["id"] for d in store.meta["deleted"]] == ["m7"]
    assert [h["event"] for h in store.memories[0].meta["history"]] == ["ADD"]
    assert store.meta["history"] == (
        "embedded history: 3 row(s); json history: 1 row(s); merged, 1 identical row(s) "
        "counted once"
    )
    assert any(
        message(w).startswith("the export carries its own history (3 row(s))")
        for w in store.meta["warnings"]
    )


# --------------------------------------------------------------------------- 6. history.db


def test_history_db_rows_follow_the_json_row_rules(tmp_path, capsys):
    db = tmp_path / "history.db"
    con = sqlite3.connect(db)
    con.execute(
        "CREATE TABLE history (id TEXT, memory_id TEXT, old_memory TEXT, new_memory TEXT, "
        "event TEXT, created_at TEXT, updated_at TEXT, is_deleted INTEGER)"
    )
    con.executemany(
        "INSERT INTO history VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            ("h1", None, None, "Ann adopted a cat", "ADD", "2026-01-01T00:00:00", None, 0),
            ("h2", "m1", None, "Ann adopted a cat", None, "2026-01-02T00:00:00", None, 0),
            ("h3", "m1", None, "Ann adopted a cat", "MERGE", "2026-01-03T00:00:00", None, 0),
        ],
    )
    con.commit()
    con.close()
    export = write_json(tmp_path, "m.json", [{"id": "m1", "memory": "Ann adopted a cat"}])
    with pytest.raises(PackageError) as info:
        load_external_store(export, "mem0", history=db)
    assert info.value.source == str(db)
    assert [(p.path, p.rule) for p in info.value.problems] == [
        ("history[row 1].memory_id", "required"),
        ("history[row 2].event", "required"),
        ("history[row 3].event", "mem0-event"),
    ]
    pkg = tmp_path / "pkg.json"
    argv = ["import", "locomo", str(FIX / "locomo_small.json"), "--instance", "conv-a"]
    assert main([*argv, "-o", str(pkg)]) == 0
    capsys.readouterr()
    rc = main(
        ["score", str(pkg), "--external", str(export), "--format", "mem0", "--history", str(db)]
    )
    err = capsys.readouterr().err
    assert rc == 2
    assert f"{db}: history[row 3].event: event must be ADD, UPDATE, DELETE or NONE" in err
    assert "Traceback" not in err


# --------------------------------------------------------------------------- 7. raw payloads


def test_qdrant_scroll_points_are_read(tmp_path, locomo_pkg):
    """EXPORT_FORMATS 1.8 recommends a scroll of the vector store for full dumps; payload key
    ``data`` is the text, every non-reserved payload key is user metadata (1.2)."""
    points = [
        {
            "id": "5b1c",
            "payload": {
                "data": "Ann adopted a cat named Miso",
                "hash": "abc",
                "user_id": "ann",
                "dia_id": "D1:1",
                "created_at": "2026-11-30T13:04:56+00:00",
            },
            "vector": None,
        }
    ]
    f = write_json(tmp_path, "scroll.json", points)
    store = load_external_store(f, "mem0", package=locomo_pkg)
    assert store.meta["format_version"] == "qdrant"
    (mem,) = store.memories
    assert (mem.id, mem.text) == ("5b1c", "Ann adopted a cat named Miso")
    assert mem.created_at == "2026-11-30T13:04:56+00:00"
    assert mem.meta["metadata"] == {"dia_id": "D1:1"}
    assert mem.meta["user_id"] == "ann"
    assert mem.coverage == {"D1:1": 1.0}


def test_flattened_payload_keys_are_metadata(tmp_path, locomo_pkg):
    f = write_json(
        tmp_path, "flat.json", [{"id": "q1", "data": "Ann adopted a cat", "dia_id": "D1:1"}]
    )
    (mem,) = load_external_store(f, "mem0", package=locomo_pkg).memories
    assert mem.text == "Ann adopted a cat"
    assert mem.meta["metadata"] == {"dia_id": "D1:1"}
    assert mem.meta["links"] == ["D1:1"]
    assert mem.coverage == {"D1:1": 1.0}


def test_a_point_without_an_object_payload_is_refused(tmp_path):
    f = write_json(tmp_path, "scroll.json", [{"id": 7, "payload": "Ann adopted a cat"}])
    assert refused(lambda: load_external_store(f, "mem0")) == [("$[0].payload", "type")]


def test_a_point_without_text_is_located_at_its_payload_data(tmp_path):
    f = write_json(tmp_path, "scroll.json", [{"id": "p1", "payload": {"user_id": "ann"}}])
    assert refused(lambda: load_external_store(f, "mem0")) == [("$[0].payload.data", "required")]
