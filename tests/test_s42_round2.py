"""QA s42 round 2: budget notes for external stores, the digits of a cost compared with a
budget, coverage rows built in Python, and the audit's table columns.

Expected values are written out by hand from the packages below, not computed by the code
under test.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from cli_utils import run_cli

import memaudit_core as ma
from memaudit_core.analysis import score, score_selection
from memaudit_core.errors import PackageError, WriterError
from memaudit_core.package import parse_package
from memaudit_core.plugins import validate_answer
from memaudit_core.suites import write_table
from memaudit_core.union import union_report

B = 1e9

#: QA's edge4: candidate a costs 1000000001.4 (above B's tolerance limit 1000000001), b
#: 1000000001.0 (above B, inside the tolerance).
EDGE4 = {
    "memaudit": 1,
    "id": "edge4",
    "budget": B,
    "experiences": [{"id": "e1"}, {"id": "e2"}],
    "units": [{"id": "u1", "weight": 1}, {"id": "u2", "weight": 1}],
    "candidates": [
        {
            "id": "a",
            "experience": "e1",
            "type": "fact",
            "cost": 1000000001.4,
            "coverage": {"u1": 1},
        },
        {
            "id": "b",
            "experience": "e2",
            "type": "fact",
            "cost": 1000000001.0,
            "coverage": {"u2": 1},
        },
    ],
    "stores": [{"id": "sa", "select": ["a"]}, {"id": "sb", "select": ["b"]}],
}

#: QA's edge5: external stores whose one memory costs 1000000001.4 (ext) / 1000000001.0 (ext2).
EDGE5 = {
    "memaudit": 1,
    "id": "edge5",
    "budget": B,
    "experiences": [{"id": "e1"}],
    "units": [{"id": "u1", "weight": 1}, {"id": "u2", "weight": 1}],
    "candidates": [
        {"id": "a", "experience": "e1", "type": "fact", "cost": 1000000001.0, "coverage": {"u1": 1}}
    ],
    "stores": [
        {
            "id": "ext",
            "system": "mem0",
            "memories": [{"id": "m1", "cost": 1000000001.4, "coverage": {"u2": 1}}],
        },
        {
            "id": "ext2",
            "system": "mem0",
            "memories": [{"id": "m1", "cost": 1000000001.0, "coverage": {"u2": 1}}],
        },
    ],
}

TOLERANCE_TAIL = (
    "is above B = 1000000000 by 1e-9 relative, inside the budget tolerance of 1e-9 (README, "
    'Package format: "At most B" allows B(1 + 1e-9), the 1e-9 feasibility tolerance of the '
    "HiGHS MILP)."
)


# --------------------------------------------------------------------------- defect 1


def test_external_store_inside_the_tolerance_gets_the_budget_note():
    """Defect 1: ext2's memory m1 costs 1000000001 at B = 1e9, inside the tolerance; the
    union report (printed by `score --store ext2`, its `notes` in --json) said nothing."""
    rep = union_report(parse_package(EDGE5), "ext2", B)
    assert f"The store's cost 1000000001 {TOLERANCE_TAIL}" in rep.notes
    # The optimum shown is the same store (m1 alone): said once, not twice.
    assert sum("budget tolerance" in n for n in rep.notes) == 1


def test_union_optimum_inside_the_tolerance_gets_the_budget_note():
    """Defect 1: for ext (m1 costs 1000000001.4, nothing of the store fits) the optimum over
    the union package is candidate a at 1000000001, inside the tolerance."""
    rep = union_report(parse_package(EDGE5), "ext", B)
    expected = f"The optimum over the union package shown: its cost 1000000001 {TOLERANCE_TAIL}"
    assert expected in rep.notes


def test_score_cli_prints_the_external_store_budget_note(tmp_path: Path):
    """Defect 1, as QA ran it: `score edge5.json --store ext2` (text and --json)."""
    path = tmp_path / "edge5.json"
    path.write_text(json.dumps(EDGE5), encoding="utf-8")
    rc, out, _ = run_cli("score", str(path), "--store", "ext2", "--json")
    assert rc == 0
    assert f"The store's cost 1000000001 {TOLERANCE_TAIL}" in json.loads(out)["notes"]
    rc, out, _ = run_cli("score", str(path), "--store", "ext2")
    assert rc == 0
    assert f"note: The store's cost 1000000001 {TOLERANCE_TAIL}" in out.splitlines()


# --------------------------------------------------------------------------- defect 2


def test_over_budget_store_note_prints_the_digits_that_differ():
    """Defect 2: sa costs 1000000001.4; the note said "costs 1000000001 units, more than the
    budget" next to "its cost 1000000001 is ... inside the budget tolerance" (b's cost)."""
    ev = score(parse_package(EDGE4), B, store_id="sa")
    over = [n for n in ev.notes if n.startswith("The store as written costs")]
    assert over == [
        "The store as written costs 1000000001.4 units, more than the budget 1000000000 units. "
        "It was pruned by recency (newest experience first, then cheaper, then id; each memory "
        "kept if it still fit): kept 0 of 1, dropped a."
    ]
    assert f"The optimum shown: its cost 1000000001 {TOLERANCE_TAIL}" in ev.notes


def test_cost_effect_note_prints_the_digits_that_differ():
    """Defect 2: "costs more than the budget 1e+09 units (the smallest, m1, costs 1e+09)"."""
    rep = union_report(parse_package(EDGE5), "ext", B)
    note = next(n for n in rep.notes if n.startswith("Every memory of ext"))
    assert note.startswith(
        "Every memory of ext costs more than the budget 1000000000 units (the smallest, m1, "
        "costs 1000000001.4), so nothing fits"
    )


def test_store_budget_note_writes_the_excess_as_the_readme_does():
    """Defect 2: "by 1e-09 relative" next to "tolerance of 1e-9" in the same sentence."""
    ev = score(parse_package(EDGE4), B, store_id="sb")
    assert f"The store's cost 1000000001 {TOLERANCE_TAIL}" in ev.notes
    assert not any("1e-09" in n for n in ev.notes)


def test_strict_selection_message_prints_the_digits_that_differ():
    """Defect 2: score_selection(strict=True) said "costs 1e+09, more than the budget 1e+09"."""
    with pytest.raises(ma.MemAuditError) as exc:
        score_selection(parse_package(EDGE4), B, ["a"], strict=True)
    assert "the selection costs 1000000001.4, more than the budget 1000000000 " in str(exc.value)


def test_plugin_over_budget_message_prints_the_digits_that_differ():
    """Defect 2: a writer's store of 1000000001.4 at B = 1e9 was "costs 1000000001, more than
    the budget 1000000000", a cost the tolerance admits."""
    cands = {"a": ("e1", 1000000001.4)}
    with pytest.raises(WriterError) as exc:
        validate_answer("w", {"type": "list", "items": ["a"], "bad": []}, cands, B)
    assert "the selection costs 1000000001.4, more than the budget 1000000000: 'a'" in str(
        exc.value
    )


# --------------------------------------------------------------------------- defect 3


def _candidate(coverage: object) -> ma.Candidate:
    return ma.Candidate("c1", "e1", "atomic_fact", 2, coverage)


@pytest.mark.parametrize("coverage", [None, "u1", {"u1"}, 5, [1, 2]])
def test_candidate_coverage_of_the_wrong_type_is_a_package_error(coverage: object):
    """Defect 3: None / 5 raised TypeError, "u1" ValueError, {"u1"} became {'u': '1'}."""
    with pytest.raises(PackageError) as exc:
        _candidate(coverage)
    line = exc.value.lines()[0]
    assert "candidates[c1].coverage: must be an object mapping unit ids to numbers" in line
    assert line.endswith("[rule: type]")


def test_external_memory_coverage_none_is_a_package_error():
    """Defect 3: ma.ExternalMemory("m1", 1, None) raised a bare TypeError."""
    with pytest.raises(PackageError) as exc:
        ma.ExternalMemory("m1", 1, None)
    line = exc.value.lines()[0]
    assert "memories[m1].coverage: must be an object mapping unit ids to numbers" in line
    assert line.endswith("[rule: type]")


def test_candidate_coverage_with_a_unit_twice_is_refused_as_duplicate_key():
    """Defect 3: [("u1", 0.5), ("u1", 1.0)] was kept as {'u1': 1.0} silently."""
    with pytest.raises(PackageError) as exc:
        _candidate([("u1", 0.5), ("u1", 1.0)])
    line = exc.value.lines()[0]
    assert "candidates[c1].coverage[u1]:" in line
    assert line.endswith("[rule: duplicate-key]")


def test_candidate_coverage_pairs_and_mappings_still_build():
    """Regression guard (defect 3): the forms that worked before still do."""
    assert dict(_candidate([("u1", 0.5), ("u2", 0.7)]).coverage) == {"u1": 0.5, "u2": 0.7}
    assert dict(_candidate({"u1": 1.0}).coverage) == {"u1": 1.0}
    assert dict(_candidate([]).coverage) == {}


# --------------------------------------------------------------------------- defect 4


def test_write_table_keeps_integer_columns_integer(tmp_path: Path):
    """Defect 4: instances.csv printed milp_nodes / enum_nodes as 1.0 (a missing value made
    the column float) while bnb_nodes printed 1."""
    rows = [
        {"id": "a", "bnb_nodes": 1, "milp_nodes": 1, "enum_nodes": None, "value": 2.5},
        {"id": "b", "bnb_nodes": 3, "milp_nodes": None, "enum_nodes": 7, "value": 1.0},
    ]
    cols = ["id", "bnb_nodes", "milp_nodes", "enum_nodes", "value"]
    write_table(rows, tmp_path / "instances", cols)
    with open(tmp_path / "instances.csv", encoding="utf-8", newline="") as fh:
        got = list(csv.reader(fh))
    assert got == [
        cols,
        ["a", "1", "1", "", "2.5"],
        ["b", "3", "", "7", "1.0"],
    ]
    table = pq.read_table(tmp_path / "instances.parquet")
    assert str(table.schema.field("milp_nodes").type) == "int64"
    assert str(table.schema.field("enum_nodes").type) == "int64"
    assert table.column("enum_nodes").to_pylist() == [None, 7]
    assert str(table.schema.field("value").type) == "double"


def test_oracle_item_that_is_an_int_is_shown_unquoted():
    """Defect 4: a writer returning the int 7 was reported as "... strings: '7'"."""
    with pytest.raises(WriterError) as exc:
        validate_answer("w", {"type": "list", "items": [], "bad": ["7"]}, {}, 5.0)
    assert "items that are not candidate id strings: 7" in str(exc.value)
    assert "'7'" not in str(exc.value)


def test_readme_audit_example_names_every_engine():
    """Defect 4: the README's audit example said "bnb against milp"; enum runs too."""
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    line = next(ln for ln in readme.splitlines() if "memaudit audit --family" in ln)
    assert "bnb, milp and enum" in line
