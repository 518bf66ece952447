"""Store importers and the library API as a researcher uses them (QA s20d).

Expected values are written by hand from the documented rules (importer docstrings,
EXPORT_FORMATS.md, DESIGN.md section 2), never read back from the code under test.
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import numpy as np
import pytest
from note_utils import messages

import memaudit_core as ma
from memaudit_core.errors import MemAuditError, PackageError
from memaudit_core.importers import load_external_store
from memaudit_core.package import parse_package

REPO = Path(__file__).resolve().parents[1]
UPDATE_CHAIN = REPO / "sample_packages" / "update_chain.json"


def _write(tmp_path: Path, name: str, obj: object) -> Path:
    f = tmp_path / name
    f.write_text(json.dumps(obj, ensure_ascii=False), encoding="utf-8")
    return f


def _tiny_package(**extra: object) -> dict:
    """Two sessions, three evidence units (weights 2, 1, 1), one raw span per session."""
    return {
        "memaudit": 1,
        "id": "tiny",
        "cost_unit": "words",
        "experiences": [{"id": "s1", "time": 0}, {"id": "s2", "time": 1}],
        "units": [
            {"id": "D1:1", "text": "Ann adopted a cat", "weight": 2},
            {"id": "D1:3", "text": "The cat is orange", "weight": 1},
            {"id": "D2:1", "text": "Ann moved to Lisbon", "weight": 1},
        ],
        "candidates": [
            {
                "id": "s1:raw",
                "experience": "s1",
                "type": "raw_span",
                "cost": 20,
                "coverage": {"D1:1": 1.0, "D1:3": 1.0},
            },
            {
                "id": "s2:raw",
                "experience": "s2",
                "type": "raw_span",
                "cost": 20,
                "coverage": {"D2:1": 1.0},
            },
        ],
        **extra,
    }


# --------------------------------------------------------------------------- A-Mem links


def test_amem_note_links_are_not_overwritten_by_provenance_links(tmp_path):
    """A-Mem's ``links`` field (links between notes) is part of the note (amem docstring:
    kept in meta). A note that also carries provenance (``metadata.dia_id``) lost its own
    links: build_store wrote the provenance links over ``meta["links"]``."""
    notes = [
        {
            "id": "n1",
            "content": "Ann adopted a cat named Miso",
            "links": ["n2"],
            "timestamp": "202305081356",
            "metadata": {"dia_id": "D1:1"},
        },
        {"id": "n2", "content": "Ann moved to Lisbon", "links": [], "evidence": "D2:1"},
    ]
    pkg = parse_package(_tiny_package())
    store = load_external_store(_write(tmp_path, "notes.json", notes), "amem", package=pkg)
    n1, n2 = store.memories
    assert n1.meta["links"] == ["n2"]  # the note's own field, as exported
    assert n1.meta["provenance_links"] == ["D1:1"]
    assert n1.coverage == {"D1:1": 1.0}
    assert n2.meta["links"] == []
    assert n2.meta["provenance_links"] == ["D2:1"]
    assert n2.coverage == {"D2:1": 1.0}
    # Where the export has no links field of its own, provenance keeps its key.
    export = {
        "results": [{"id": "m1", "memory": "Ann adopted a cat", "metadata": {"dia_id": "D1:1"}}]
    }
    mem = load_external_store(_write(tmp_path, "m.json", export), "mem0").memories[0]
    assert mem.meta["links"] == ["D1:1"] and "provenance_links" not in mem.meta


# --------------------------------------------------------------------------- Mem0 states


def test_mem0_lifecycle_states_that_are_not_understood_are_said(tmp_path):
    """mem0 docstring: ``lifecycle_state`` ``deleted`` is a DELETE, ``superseded`` marks the
    memory; other states are kept as the memory's status. An ``archived`` or ``paused`` memory
    then counts in the store like an active one, which was said nowhere (Platform's enum is
    undocumented; OpenMemory's archived / paused memories are not served)."""
    page = {
        "count": 3,
        "next": None,
        "previous": None,
        "results": [
            {"id": "p1", "memory": "Ann adopted a cat", "lifecycle_state": "active"},
            {"id": "p2", "memory": "Ann moved to Lisbon", "lifecycle_state": "ARCHIVED"},
            {"id": "p3", "memory": "The cat is orange", "lifecycle_state": "paused"},
        ],
    }
    store = load_external_store(_write(tmp_path, "page.json", page), "mem0")
    assert [(m.id, m.status) for m in store.memories] == [
        ("p1", "active"),
        ("p2", "archived"),
        ("p3", "paused"),
    ]
    said = [w for w in store.meta.get("warnings", []) if "lifecycle_state" in w]
    assert len(said) == 1
    assert "'p2' (archived)" in said[0] and "'p3' (paused)" in said[0]
    assert "counted as part of the store" in said[0]


# --------------------------------------------------------------------------- units in notes


def test_over_budget_note_gives_the_store_cost_in_the_store_unit(tmp_path):
    """A store costed by chars in a words package: the over-budget note said "costs 39 words"
    for 39 characters (the header line and the units note said chars)."""
    pkg = parse_package(_tiny_package())
    export = {
        "results": [
            {"id": "m1", "memory": "Ann adopted a cat", "metadata": {"dia_id": "D1:1"}},
            {"id": "m2", "memory": "Ann moved to Lisbon", "metadata": {"dia_id": "D2:1"}},
        ]
    }
    store = load_external_store(
        _write(tmp_path, "m.json", export), "mem0", cost_rule="chars", package=pkg
    )
    assert [m.cost for m in store.memories] == [17.0, 19.0]  # len() of each text
    rep = ma.union_report(ma.with_store(pkg, store), "mem0", 20)
    over = [n for n in rep.notes if n.startswith("The store as written costs")]
    assert over and over[0].startswith("The store as written costs 36 chars, more than")
    ev = ma.score(ma.with_store(pkg, store), 20, store_id="mem0")
    over = [n for n in ev.notes if n.startswith("The store as written costs")]
    assert over and over[0].startswith("The store as written costs 36 chars, more than")


# --------------------------------------------------------------------------- package dicts


@pytest.mark.parametrize(
    ("where", "path"),
    [
        ("meta", "$.meta[1]"),
        ("experience-meta", "$.experiences[0].meta[1]"),
        ("coverage", "$.candidates[0].coverage[1]"),
        ("top", "$[5]"),
    ],
)
def test_parse_package_refuses_keys_that_are_not_strings(where, path):
    """A Python dict can have int keys, JSON cannot. parse_package raised AttributeError
    ('int' object has no attribute 'isascii') instead of a PackageError."""
    doc = _tiny_package()
    if where == "meta":
        doc["meta"] = {1: "x"}
    elif where == "experience-meta":
        doc["experiences"][0]["meta"] = {1: "x"}
    elif where == "coverage":
        doc["candidates"][0]["coverage"] = {1: 1.0}
    else:
        doc[5] = 1
    with pytest.raises(PackageError) as err:
        parse_package(doc)
    problems = [(p.path, p.rule) for p in err.value.problems]
    assert problems == [(path, "type")]


@pytest.mark.parametrize(
    "value",
    [{1, 2}, datetime.datetime(2024, 1, 1), b"bytes", object(), np.float32(0.5), np.int64(3)],
    ids=["set", "datetime", "bytes", "object", "float32", "int64"],
)
def test_parse_package_refuses_meta_values_that_are_not_json(value):
    """Meta is kept as given; a value JSON cannot hold was accepted and crashed later with a
    TypeError (content hash, save, every score)."""
    doc = _tiny_package(meta={"params": {"x": [value]}})
    with pytest.raises(PackageError) as err:
        parse_package(doc)
    assert [(p.path, p.rule) for p in err.value.problems] == [("$.meta.params.x[0]", "type")]
    # What was accepted stays accepted: tuples in meta (JSON arrays) and NumPy scalars in the
    # numeric fields, which are converted there (test_package.test_numpy_scalars_are_numbers).
    doc = _tiny_package(meta={"seeds": (1, 2), "ok": [None, True, 1.5, "x", {"a": 1}]})
    doc["units"][0]["weight"] = np.int64(2)
    doc["candidates"][0]["coverage"]["D1:3"] = np.float32(0.5)
    pkg = parse_package(doc)
    assert (pkg.units[0].weight, pkg.candidates[0].coverage["D1:3"]) == (2.0, 0.5)
    assert len(pkg.content_hash()) == 64


# --------------------------------------------------------------------------- API types


def _api_calls(pkg, inst, export):
    path = str(UPDATE_CHAIN)
    return {
        "sweep(paths)": lambda: ma.sweep([path], [6], ["gvt"]),
        "sweep(dicts)": lambda: ma.sweep([{}], [6], ["gvt"]),
        "run_writer(package)": lambda: ma.run_writer("gvt", pkg, 6),
        "budget_curve(dict)": lambda: ma.budget_curve({}, [6], ["gvt"]),
        "compare_view(path)": lambda: ma.compare_view(path, 6, writer="gvt"),
        "compare_view(budget text)": lambda: ma.compare_view(pkg, "x", writer="gvt"),
        "evidence_view(path)": lambda: ma.evidence_view(path, 6, writer="gvt"),
        "union_report(dict)": lambda: ma.union_report({}, "mem0", 6),
        "with_store(dict)": lambda: ma.with_store({}, pkg.stores[0] if pkg.stores else None),
        "score_selection(dict)": lambda: ma.score_selection({}, 6, []),
        "load_external_store(int path)": lambda: ma.load_external_store(5, "mem0"),
        "load_external_store(package dict)": lambda: ma.load_external_store(
            export, "mem0", package={"id": "p"}
        ),
        "score(writer_result text)": lambda: ma.score(pkg, 6, writer="gvt", writer_result="x"),
    }


def test_public_functions_refuse_wrong_argument_types_with_a_memaudit_error(tmp_path):
    """README: every user error raises a ma.MemAuditError. score() and compile_package()
    refused a dict or a path with one; these public functions raised AttributeError,
    TypeError or ValueError for the same mistakes."""
    pkg = ma.load_package(UPDATE_CHAIN)
    inst = ma.compile_package(pkg)
    export = _write(tmp_path, "m.json", [{"id": "m1", "memory": "Prefers tea"}])
    wrong = {}
    for name, call in _api_calls(pkg, inst, export).items():
        try:
            call()
        except MemAuditError:
            continue
        except Exception as exc:  # noqa: BLE001 - the point is which type escapes
            wrong[name] = type(exc).__name__
        else:
            wrong[name] = "no error"
    assert wrong == {}


def test_duplicate_texts_are_found_across_unicode_normal_forms(tmp_path):
    """'café' composed (U+00E9) and decomposed (e + U+0301) is one text to a reader and to
    the system that stored it twice: listed as a repeat (QA s20d: it was not)."""
    export = [
        {"id": "m1", "memory": "Ann likes the caf\u00e9 on Rua Augusta"},
        {"id": "m2", "memory": "Ann likes the cafe\u0301 on Rua Augusta"},
    ]
    store = load_external_store(_write(tmp_path, "m.json", export), "mem0")
    assert [m.text for m in store.memories] == [export[0]["memory"], export[1]["memory"]]
    (warning,) = messages(store.meta["warnings"])
    assert warning.startswith("1 memory(ies) repeat an earlier one: 'm1' = 'm2' (same text).")


def test_mem0_history_row_without_a_time_keeps_the_file_order_and_is_said(tmp_path):
    """A DELETE row with no time, listed after its ADD: the memory is deleted. Sorting put
    the timeless row first, so the ADD became the last event and m9 was reported as missing
    from the export rather than deleted (QA s20d). The ADD has no time either, so the file's
    order is said (QA s39 round 2 defect 4: a timeless DELETE alone is not)."""
    export = _write(tmp_path, "m.json", {"results": [{"id": "m1", "memory": "Lives in Lisbon"}]})
    history = [
        {
            "memory_id": "m9",
            "event": "ADD",
            "old_memory": None,
            "new_memory": "Has a hamster.",
        },
        {"memory_id": "m9", "event": "DELETE", "old_memory": "Has a hamster."},
    ]
    store = load_external_store(export, "mem0", history=history)
    assert [d["id"] for d in store.meta["deleted"]] == ["m9"]
    warnings = messages(store.meta["warnings"])
    assert not any("not in the export" in w for w in warnings)
    assert (
        "history rows without a readable time for 1 memory(ies) ('m9'): their events are "
        "taken in the file's order (for a history.db, its row order), except that a DELETE (or "
        "is_deleted) row is always the memory's last event"
    ) in warnings
