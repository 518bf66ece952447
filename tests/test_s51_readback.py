"""Session 51 (readback): saved results edited into something false were read back.

Each test saves a genuine result (with the CLI where it writes one: ``sweep``, ``audit``,
``solve``, ``score`` with ``--json``), checks that it reads back, applies one edit and expects
``memaudit show`` to exit 2 with a message naming the file, the JSON path and the rule:

1. a sweep's ``complete`` that its task counts contradict, and a complete sweep with one
   budget's rows, summary lines and grid entry deleted;
2. ``result_version: 1`` on a file holding what version 1 did not write (genuine version-1
   files, ``tests/fixtures/s51_v1`` as MemAudit wrote them at commit fe643ea^, still read);
3. an audit row's ``instance_hash`` edited to "zz";
4. every engine's value, bound and reported value at one audit check (or one certification
   row) moved by the same amount, so that they still agree: a store found at a budget fits
   every larger budget and pool holding its candidates, so the proven optimum there is worth
   at least as much; and two certification runs that returned one store with two values.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from cli_utils import run_cli

import memaudit_core as ma
from memaudit_core import curves
from memaudit_core.generators import generate
from memaudit_core.robustness import capacity_sensitivity

FIXTURES = Path(__file__).parent / "fixtures" / "s51_v1"
ENGINES = ("bnb", "milp", "enum")


@pytest.fixture(scope="module")
def pkg_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("s51") / "uc.json"
    rc, _, err = run_cli("generate", "update_chain", "-o", str(path))
    assert rc == 0, err
    return path


def _saved(pkg_file: Path, *argv: str, rc_expected: int = 0) -> dict[str, Any]:
    rc, out, err = run_cli(*argv, str(pkg_file), "--json")
    assert rc == rc_expected, err
    return json.loads(out)


@pytest.fixture(scope="module")
def sweep(pkg_file: Path) -> dict[str, Any]:
    return _saved(pkg_file, "sweep")


@pytest.fixture(scope="module")
def audit(pkg_file: Path) -> dict[str, Any]:
    return _saved(pkg_file, "audit")


def _show(tmp_path: Path, data: dict[str, Any], name: str = "result.json") -> tuple[int, str]:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    rc, _, err = run_cli("show", str(path))
    return rc, err


def _refused(tmp_path: Path, data: dict[str, Any], at: str, rule: str = "inconsistent") -> str:
    rc, err = _show(tmp_path, data, "edited.json")
    assert rc == 2, err
    assert "edited.json" in err and f"{at}:" in err and f"[rule: {rule}]" in err, err
    assert "Traceback" not in err
    return err


# ----------------------------------------------------------------------- 1. sweep complete


def test_sweep_complete_false_beside_every_task_done_is_refused(tmp_path, sweep):
    assert _show(tmp_path, sweep)[0] == 0
    assert sweep["complete"] and sweep["executed"] + sweep["reused"] == sweep["n_tasks"]
    edited = {**sweep, "complete": False}
    err = _refused(tmp_path, edited, "$.complete")
    assert "expected true" in err


def test_incomplete_sweep_reads_and_is_not_made_complete(tmp_path, pkg_file):
    out = tmp_path / "out"
    # Tasks left: exit 3, the run's and show's (s52: both 0).
    data = _saved(pkg_file, "sweep", "--out", str(out), "--max-tasks", "5", rc_expected=3)
    assert not data["complete"] and data["executed"] == 5 < data["n_tasks"]
    assert _show(tmp_path, data)[0] == 3
    _refused(tmp_path, {**data, "complete": True}, "$.complete")


def test_complete_sweep_with_a_budget_deleted_is_refused(tmp_path, sweep):
    gone = sweep["budgets"][-1]
    edited = copy.deepcopy(sweep)
    edited["rows"] = [r for r in edited["rows"] if r["budget"] != gone]
    edited["summary"] = [s for s in edited["summary"] if s["budget"] != gone]
    edited["budgets"] = edited["budgets"][:-1]
    err = _refused(tmp_path, edited, "$.n_tasks")
    assert "every task of a complete sweep" in err


# ----------------------------------------------------------------------- 2. result_version


@pytest.mark.parametrize("command", ["solve", "score", "sweep"])
def test_version_1_on_a_kind_whose_version_1_files_do_not_read_is_refused(
    tmp_path, pkg_file, command
):
    argv = ("score", "--writer", "density") if command == "score" else (command,)
    data = _saved(pkg_file, *argv)
    assert _show(tmp_path, data)[0] == 0
    err = _refused(tmp_path, {**data, "result_version": 1}, "$.result_version")
    assert "of version 1 cannot be read back" in err


def test_version_1_audit_reads_only_with_what_version_1_wrote(tmp_path, audit):
    old = json.loads((FIXTURES / "audit_v1.json").read_text(encoding="utf-8"))
    assert old["result_version"] == 1 and "result_kind" not in old
    assert _show(tmp_path, old, "old.json")[0] == 0
    err = _refused(tmp_path, {**audit, "result_version": 1}, "$.result_version")
    assert "$.enum_time_s, a key written since version 2" in err
    # A version-1 audit given one row key of today's.
    edited = copy.deepcopy(old)
    edited["rows"][1]["value_unit"] = 1.0
    err = _refused(tmp_path, edited, "$.result_version")
    assert "$.rows[1].value_unit" in err


def test_version_1_sensitivity_reads_only_with_what_version_1_wrote(tmp_path):
    old = json.loads((FIXTURES / "capacity_v1.json").read_text(encoding="utf-8"))
    # As the reader asks of a file saved before results said their kind.
    old = {**old, "result_kind": "capacity_sensitivity"}
    assert type(ma.read_result(old)).__name__ == "CapacitySensitivity"
    now = capacity_sensitivity(generate("memaudit-small"), [3, 6]).to_dict()
    err = _refused(tmp_path, {**now, "result_version": 1}, "$.result_version")
    assert "$.points[0].label_1" in err


# ----------------------------------------------------------------------- 3. instance hash


def test_audit_instance_hash_must_be_a_sha256(tmp_path, audit):
    assert _show(tmp_path, audit)[0] == 0
    edited = copy.deepcopy(audit)
    edited["rows"][0]["instance_hash"] = "zz"
    err = _refused(tmp_path, edited, "$.rows[0].instance_hash", "allowed-value")
    assert "SHA-256" in err


# ----------------------------------------------------------------------- 4. shifted values


def _shift(row: dict[str, Any], by: float, names: tuple[str, ...]) -> None:
    for eng in ENGINES:
        for name in names:
            if row.get(f"{eng}_{name}") is not None:
                row[f"{eng}_{name}"] += by


def test_audit_check_moved_above_a_larger_budgets_optimum_is_refused(tmp_path, audit):
    rows = audit["rows"]
    assert [r["budget"] for r in rows] == sorted(r["budget"] for r in rows)
    assert all(r["outcome"] == "agree" for r in rows)
    edited = copy.deepcopy(audit)
    # The middle budget's engines all moved alike: they still agree with each other.
    _shift(edited["rows"][1], 1.0, ("value", "reported", "bound"))
    err = _refused(tmp_path, edited, "$.rows[2].milp_value")
    assert "rows[1]'s bnb store" in err
    edited = copy.deepcopy(audit)
    _shift(edited["rows"][2], -0.5, ("value", "reported", "bound"))
    _refused(tmp_path, edited, "$.rows[2].milp_value")


def test_audit_sub_pool_above_the_full_pools_optimum_is_refused(tmp_path, pkg_file):
    data = _saved(pkg_file, "audit", "--pools", "full,generic", "--budgets", "6")
    assert _show(tmp_path, data)[0] == 0
    full = next(r for r in data["rows"] if r["pool"] == "full")
    k = next(i for i, r in enumerate(data["rows"]) if r["pool"] == "generic")
    edited = copy.deepcopy(data)
    _shift(
        edited["rows"][k],
        full["bnb_value"] - edited["rows"][k]["bnb_value"] + 1.0,
        ("value", "reported", "bound"),
    )
    err = _refused(tmp_path, edited, f"$.rows[{1 - k}].milp_value")
    assert "(pool generic)" in err


@pytest.fixture(scope="module")
def certificate() -> dict[str, Any]:
    rep = curves.certification_report(generate("update_chain"), [3, 6, 13])
    return json.loads(json.dumps(rep.to_dict()))


def _shift_runs(row: dict[str, Any], by: float) -> None:
    for run in row["runs"]:
        for name in ("value", "recomputed", "bound", "reported"):
            if run.get(name) is not None:
                run[name] += by


def test_certification_row_moved_above_a_larger_budgets_optimum_is_refused(tmp_path, certificate):
    assert _show(tmp_path, certificate)[0] == 0
    edited = copy.deepcopy(certificate)
    _shift_runs(edited["rows"][1], 1.0)
    err = _refused(tmp_path, edited, "$.rows[2].runs[2].value")
    assert "rows[1].runs[0]'s bnb store" in err


def test_certification_one_store_with_two_values_is_refused(tmp_path, certificate):
    edited = copy.deepcopy(certificate)
    # The budget-6 store given to the budget-3 runs, their values kept: within budget 6
    # that is no edit the order sees, but the store is worth one F.
    for run in edited["rows"][0]["runs"]:
        run["selected"] = list(edited["rows"][1]["runs"][0]["selected"])
    err = _refused(tmp_path, edited, "$.rows[1].runs[0].value")
    assert "the same store as $.rows[0].runs[0]" in err
