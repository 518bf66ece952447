"""Importer defects found by the s39 QA (fixtures copied from QA's files, inline).

Every expected value is written by hand from the documented rules (the importers'
docstrings, EXPORT_FORMATS.md, DESIGN.md), never read back from the code under test.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from package_utils import MEM0_EXPORT as EXPORT
from package_utils import mem0_history_db, refused, write_json

from memaudit_core.cli import main
from memaudit_core.errors import PackageError
from memaudit_core.importers import import_package, load_external_store
from memaudit_core.package import load_package

FIX = Path(__file__).parent / "fixtures" / "importers"

ADD_M5 = (
    "h1",
    "m5",
    None,
    "Works at ACME",
    "ADD",
    "2023-05-08T01:00:00-07:00",
    None,
    0,
    None,
    "user",
)
# What Mem0's _delete_memory writes: add_history(..., "DELETE", is_deleted=1), no times.
DELETE_M5 = ("h2", "m5", "Works at ACME", None, "DELETE", None, None, 1, None, None)


# --------------------------------------------------------------------------- 1. DELETE is final


def test_mem0_own_delete_with_null_times_in_history_db_is_deleted(tmp_path):
    """QA s39 defect 1: Mem0's delete row has NULL times, sorted first by history.db; m5 was
    read as live, missing from a "truncated" export."""
    db = mem0_history_db(tmp_path / "history.db", [ADD_M5, DELETE_M5])
    store = load_external_store(write_json(tmp_path, "m.json", EXPORT), "mem0", history=db)
    assert [d["id"] for d in store.meta["deleted"]] == ["m5"]
    assert store.meta["deleted"][0]["text"] == "Works at ACME"
    assert not any("truncated" in w for w in store.meta.get("warnings", []))


def test_mem0_delete_row_before_its_add_in_a_json_history_is_still_final(tmp_path):
    """QA s39 defect 1 (hist_nulltime_mem0order.json): the DELETE row listed first."""
    rows = [
        {
            "id": "h2",
            "memory_id": "m5",
            "old_memory": "Works at ACME",
            "new_memory": None,
            "event": "DELETE",
            "created_at": None,
            "updated_at": None,
            "is_deleted": True,
        },
        {
            "id": "h1",
            "memory_id": "m5",
            "old_memory": None,
            "new_memory": "Works at ACME",
            "event": "ADD",
            "created_at": "2023-05-08T01:00:00-07:00",
            "updated_at": None,
            "is_deleted": False,
        },
    ]
    hist = write_json(tmp_path, "h.json", rows)
    store = load_external_store(write_json(tmp_path, "m.json", EXPORT), "mem0", history=hist)
    assert [d["id"] for d in store.meta["deleted"]] == ["m5"]
    assert not any("truncated" in w for w in store.meta.get("warnings", []))


# --------------------------------------------------------------------------- 2. newer history


def test_mem0_history_update_newer_than_the_export_is_said(tmp_path):
    """QA s39 defect 2 (m0_h2.json): the export says Berlin at 2023-05-09 10:00 UTC; history
    updates it to Lisbon at 2023-06-01 14:00 -07:00 (21:00 UTC). It was ignored unsaid."""
    doc = {
        "results": [
            {
                "id": "m1",
                "memory": "I live in Berlin.",
                "created_at": "2023-05-09T10:00:00+00:00",
                "updated_at": "2023-05-09T10:00:00+00:00",
            }
        ],
        "history": [
            {
                "id": "h2",
                "memory_id": "m1",
                "old_memory": "I live in Berlin.",
                "new_memory": "I live in Lisbon now.",
                "event": "UPDATE",
                "created_at": "2023-05-09T10:00:00",
                "updated_at": "2023-06-01T14:00:00-07:00",
                "is_deleted": False,
            },
            {
                "id": "h1",
                "memory_id": "m1",
                "old_memory": None,
                "new_memory": "I live in Berlin.",
                "event": "ADD",
                "created_at": "2023-05-09T03:00:00-07:00",
                "updated_at": None,
                "is_deleted": False,
            },
        ],
    }
    store = load_external_store(write_json(tmp_path, "m.json", doc), "mem0")
    assert store.memories[0].text == "I live in Berlin."
    newer = [w for w in store.meta["warnings"] if "'m1'" in w and "Lisbon" in w]
    assert len(newer) == 1
    for part in (
        "$.history[0]",
        "'I live in Lisbon now.'",
        "'I live in Berlin.'",
        "2023-06-01T21:00:00+00:00",
        "2023-05-09T10:00:00+00:00",
    ):
        assert part in newer[0]


def test_mem0_history_update_older_than_the_export_is_not_flagged(tmp_path):
    """Regression guard for defect 2: an export taken after its last UPDATE says nothing."""
    doc = dict(EXPORT)
    doc["history"] = [
        {
            "id": "h3",
            "memory_id": "m1",
            "old_memory": "I live in Berlin.",
            "new_memory": "I live in Lisbon now.",
            "event": "UPDATE",
            "created_at": "2023-05-09T10:00:00+00:00",
            "updated_at": "2023-06-01T21:00:00+00:00",
        }
    ]
    store = load_external_store(write_json(tmp_path, "m.json", doc), "mem0")
    assert not any("older than the history" in w for w in store.meta.get("warnings", []))


# --------------------------------------------------------------------------- 3. row ids

ROW_H1 = {
    "id": "h1",
    "memory_id": "m1",
    "old_memory": None,
    "new_memory": "I live in Berlin.",
    "event": "ADD",
    "created_at": "2023-05-09T10:00:00+00:00",
}


def test_mem0_two_history_rows_sharing_an_id_in_one_file_are_refused(tmp_path):
    """QA s39 defect 3 (m0_hist_dupid.json): ADD and DELETE both with id h1, accepted."""
    other = dict(ROW_H1, old_memory="I live in Berlin.", new_memory=None, event="DELETE")
    other["is_deleted"] = True
    hist = write_json(tmp_path, "h.json", [ROW_H1, other])
    export = write_json(tmp_path, "m.json", EXPORT)
    assert refused(lambda: load_external_store(export, "mem0", history=hist)) == [
        (f"{hist}: $[1].id", "unique-id")
    ]


def test_mem0_history_row_id_reused_across_export_and_file_is_refused(tmp_path):
    """QA s39 defect 3 (m0_inlinehist + m0_hist_conflict): two different h1 rows were read,
    and the warning said "0 row(s) found in both counted once"."""
    export = write_json(tmp_path, "m.json", dict(EXPORT, history=[ROW_H1]))
    hist = write_json(tmp_path, "h.json", [dict(ROW_H1, new_memory="I live in Hamburg.")])
    assert refused(lambda: load_external_store(export, "mem0", history=hist)) == [
        (f"{hist}: $[0].id", "unique-id")
    ]


def test_mem0_identical_row_in_export_and_file_is_still_counted_once(tmp_path):
    """Regression guard for defect 3: the same row given twice is one row, not a conflict."""
    export = write_json(tmp_path, "m.json", dict(EXPORT, history=[ROW_H1]))
    hist = write_json(tmp_path, "h.json", [ROW_H1])
    store = load_external_store(export, "mem0", history=hist)
    assert [h["event"] for h in store.memories[0].meta["history"]] == ["ADD"]


# --------------------------------------------------------------------------- 5. add() NONE


def test_mem0_add_output_warning_names_none_events_as_kept(tmp_path):
    """QA s39 defect 5: NONE items are kept, but the warning said only ADD and UPDATE."""
    doc = {
        "results": [
            {"id": "a3", "memory": "Has a cat", "event": "ADD"},
            {"id": "a4", "memory": "Has a dog", "event": "NONE"},
        ]
    }
    store = load_external_store(write_json(tmp_path, "a.json", doc), "mem0")
    assert [m.id for m in store.memories] == ["a3", "a4"]
    said = [w for w in store.meta["warnings"] if "add() result events" in w]
    assert len(said) == 1 and "ADD, UPDATE and NONE ones are kept" in said[0]


# --------------------------------------------------------------------------- 6. shapes


def test_mem0_list_of_platform_pages_is_named_as_pages(tmp_path):
    """QA s39 defect 6 (m0_pages.json): one "has no id" per page."""
    pages = [
        {"count": 3, "next": "https://api.mem0.ai/v3/memories/?page=2", "previous": None,
         "results": [{"id": "p1", "memory": "Lives in Berlin"}]},
        {"count": 3, "next": None, "previous": "https://api.mem0.ai/v3/memories/?page=1",
         "results": [{"id": "p3", "memory": "Has a cat"}]},
    ]  # fmt: skip
    f = write_json(tmp_path, "p.json", pages)
    with pytest.raises(PackageError) as info:
        load_external_store(f, "mem0")
    problems = [(p.path, p.rule) for p in info.value.problems]
    assert problems == [("$", "mem0-shape")]
    assert "Platform pages" in str(info.value) and "join" in str(info.value)


def test_openmemory_backup_is_read(tmp_path):
    """QA s39 defect 6 (openmemory.json): it got "needs a 'results' array"; session 40 reads
    OpenMemory backups (tests/test_s40_openmemory.py covers them)."""
    backup = {
        "user": {"id": "u1", "user_id": "alice"},
        "apps": [],
        "categories": [],
        "memories": [{"id": "o2", "content": "Lives in Lisbon", "state": "active"}],
        "export_meta": {"version": "1", "generated_at": "2023-07-01T00:00:00"},
    }
    f = write_json(tmp_path, "o.json", backup)
    store = load_external_store(f, "mem0")
    assert store.meta["format_version"] == "openmemory"
    assert [(m.id, m.text, m.status, m.cost) for m in store.memories] == [
        ("o2", "Lives in Lisbon", "active", 3.0)
    ]


# --------------------------------------------------------------------------- 4. turn links


@pytest.fixture(scope="module")
def locomo_pkg():
    return import_package("locomo", FIX / "locomo_small.json", instance="conv-a")


def test_mem0_link_to_a_turn_no_question_cites_covers_nothing_exactly(tmp_path, locomo_pkg):
    """QA s39 defect 4: D1:2 is a real turn of session_1 (3 turns) that no question cites;
    it was called a typo and the store "needs annotation"."""
    doc = [{"id": "x1", "memory": "Bo asked Miso's colour", "metadata": {"dia_id": "D1:2"}}]
    store = load_external_store(write_json(tmp_path, "m.json", doc), "mem0", package=locomo_pkg)
    memory = store.memories[0]
    assert dict(memory.coverage) == {}
    assert memory.meta["coverage_source"] == "turn-links"
    assert "unresolved_links" not in memory.meta
    assert "needs annotation" not in store.meta["coverage"]
    assert not any("name no unit" in w for w in store.meta.get("warnings", []))


@pytest.mark.parametrize("link", ["D1:4", "D3:1", "D1:0"])
def test_mem0_link_to_no_turn_of_the_package_is_still_unresolved(tmp_path, locomo_pkg, link):
    """Regression guard for defect 4: session_1 has 3 turns and there is no session_3."""
    doc = [{"id": "x1", "memory": "Something", "metadata": {"dia_id": link}}]
    store = load_external_store(write_json(tmp_path, "m.json", doc), "mem0", package=locomo_pkg)
    assert store.memories[0].meta["unresolved_links"] == [link]
    assert store.meta["coverage"] == "needs annotation"


# --------------------------------------------------------------------------- 7. validate hint


def test_validate_of_a_locomo_file_says_how_to_import_it(tmp_path, capsys):
    """QA s39 defect 7: only "$: a package must be a JSON object (got 'array')"."""
    assert main(["validate", str(FIX / "locomo_small.json")]) != 0
    err = capsys.readouterr().err
    # QA s50: the hint alone; "a package must be a JSON object" only restated it.
    assert "a package must be a JSON object" not in err
    assert "this is a LoCoMo benchmark file, not a MemAudit package" in err
    assert "memaudit import locomo FILE" in err and "[rule: format-hint]" in err


def test_loading_a_mem0_export_as_a_package_adds_one_import_hint(tmp_path):
    """QA s39 defect 7: a Mem0 export got only generic required-field problems."""
    f = write_json(tmp_path, "m.json", EXPORT)
    problems = refused(lambda: load_package(f))
    # QA s50: the hint alone (the package problems only restated the wrong kind of file).
    assert problems == [("$", "format-hint")]
    with pytest.raises(PackageError) as info:
        load_package(f)
    assert "memaudit import mem0 FILE --package PACKAGE" in str(info.value)


# --------------------------------------------------------------------------- 8. empty export


@pytest.mark.parametrize(
    "fmt, export", [("mem0", []), ("letta", {"agents": []})], ids=["mem0", "letta"]
)
def test_cli_import_of_an_empty_export_warns_nothing_to_score(tmp_path, capsys, fmt, export):
    """QA s39 defect 8: the app says "nothing to score"; the CLI added the store with a note.
    Exit 0 is kept (documented in README): the empty store scores F = 0."""
    pkg = tmp_path / "pkg.json"
    assert main(["import", "locomo", str(FIX / "locomo_small.json"), "--instance", "conv-a",
                 "-o", str(pkg)]) == 0  # fmt: skip
    capsys.readouterr()
    f = write_json(tmp_path, "e.json", export)
    out = tmp_path / "out.json"
    assert main(["import", fmt, str(f), "--package", str(pkg), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"{f}: warning: $: the export holds no memories (as kept): nothing to score" in err


# --------------------------------------------------------------------------- 10. LoCoMo dates


def test_locomo_session_dates_against_the_numbering_are_said(tmp_path):
    """QA s39 defect 10: session_2 dated a week before session_1, unsaid."""
    sample = {
        "sample_id": "conv-x",
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bo",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a cat."}],
            "session_2_date_time": "10:02 am on 1 May, 2023",
            "session_2": [{"speaker": "Ann", "dia_id": "D2:1", "text": "I live in Berlin."}],
        },
        "qa": [{"question": "Pet?", "answer": "a cat", "evidence": ["D1:1"], "category": 4}],
    }
    pkg = import_package("locomo", write_json(tmp_path, "l.json", [sample]))
    said = [w for w in pkg.meta["warnings"] if "against the session numbering" in w]
    assert len(said) == 1
    assert "session_2 ('10:02 am on 1 May, 2023') is dated before session_1" in said[0]
    assert "kept in their numbering order" in said[0]
    assert [e.id for e in pkg.experiences] == ["session_1", "session_2"]


# --------------------------------------------------------------------------- 11. Zep


def test_zep_edge_named_only_by_an_episode_entity_edges_has_its_provenance(tmp_path):
    """QA s39 defect 11 (zep_rev.json): e9 has "episodes": [] but ep1 lists it."""
    doc = {
        "edges": [{"uuid": "e9", "fact": "Ann has a cat", "episodes": []}],
        "episodes": [{"uuid": "ep1", "name": "session_1", "entity_edges": ["e9"]}],
    }
    pkg = import_package("locomo", FIX / "locomo_small.json", instance="conv-a")
    store = load_external_store(write_json(tmp_path, "z.json", doc), "zep", package=pkg)
    memory = store.memories[0]
    assert memory.meta["episodes_from_entity_edges"] == ["ep1"]
    assert memory.meta["links"] == ["ep1", "session_1"]
    assert memory.meta["coverage_source"] == "experience-links"
    # session_1's raw span covers its evidence turn D1:1 (LoCoMo importer docstring).
    assert memory.coverage["D1:1"] == 1.0


# --------------------------------------------------------------------------- 12a. app


def test_external_stores_page_counts_the_warnings_it_does_not_show():
    """QA s39 defect 12a (m0_manywarn.json): 14 warnings, 10 shown, no word of the rest."""
    from app_utils import open_app

    at = open_app("pages/4_External_stores.py", package="sample:veg-to-pescatarian")
    items = [
        {"id": f"w{i}", "memory": f"note {i}", "created_at": f"bad-time-{i}"} for i in range(14)
    ]
    data = json.dumps(items).encode()
    at.file_uploader(key="w_ext_upload").upload("m.json", data, "application/json").run()
    assert not at.exception and not at.error
    # QA s47: shown in one st.warning box, no longer as plain text under "Loaded".
    (box,) = [w.value.replace("\\", "") for w in at.warning if "importer warning" in w.value]
    assert box.count("\n\n- ") == 10
    # One warning per unreadable time (the Mem0 importer's rule): 14, so 4 are not shown.
    assert box.startswith("**14 importer warning(s)** for m.json:")
    assert box.endswith("\n\n... and 4 more warning(s)")
