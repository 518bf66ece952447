"""Session 42, QA round 2 on the three-engine audit: two proofs are compared however the
third run ended, a limited run that contradicts a proof is a disagreement, a file saved
before enumeration says so, and the figure counts what it plots."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from cli_utils import run_cli
from package_utils import write_json

import memaudit_core as ma
import memaudit_core.solvers as solvers_mod
from memaudit_core import audit as au
from memaudit_core.compiled import compile_package
from memaudit_core.errors import ResultError
from memaudit_core.generators import generate

REPO = Path(__file__).resolve().parents[1]

#: OPT of update_chain at budget 6 (DESIGN's published table; PAPER_FAMILIES.md).
OPT_6 = 7.735


def _patched(monkeypatch: pytest.MonkeyPatch, change: dict) -> None:
    """Engines run for real, then ``change[name](raw)`` edits one engine's answer."""
    real = solvers_mod.run_engine

    def fake(name, inst, budget, **kw):
        raw, t = real(name, inst, budget, **kw)
        return (change[name](raw) if name in change else raw), t

    monkeypatch.setattr(solvers_mod, "run_engine", fake)


def _limited(raw):
    return dataclasses.replace(raw, status="limit")


def test_two_proofs_that_differ_disagree_while_the_third_engine_is_limited(monkeypatch):
    def wrong_optimum(raw):
        return dataclasses.replace(raw, selected_idx=(), value=0.0, bound=0.0)

    _patched(monkeypatch, {"enum": wrong_optimum, "milp": _limited})
    rec = au.audit_instance(compile_package(generate("update_chain")), 6)
    assert (rec["bnb_status"], rec["milp_status"], rec["enum_status"]) == (
        "optimal",
        "limit",
        "optimal",
    )
    assert rec["bnb_value"] == pytest.approx(OPT_6) and rec["enum_value"] == 0.0
    assert rec["outcome"] == "disagree"
    assert rec["abs_diff"] == pytest.approx(OPT_6)


def test_two_equal_proofs_agree_while_the_third_engine_is_limited(monkeypatch):
    _patched(monkeypatch, {"milp": _limited})
    rec = au.audit_instance(compile_package(generate("update_chain")), 6)
    assert rec["outcome"] == "agree" and rec["abs_diff"] == 0.0
    assert any("milp stopped at its limit" in p for p in rec["problems"])
    # And it reads back: an agreeing row may carry a limited third engine.
    rep = au.audit_summary_for_package(generate("update_chain"), [6.0])
    data = rep.to_dict()
    # The journal record's own keys ({engine}_reported, _cost) are not a saved row's (QA s43:
    # read_result refuses keys a result does not write).
    row = data["rows"][0]
    row.update({k: v for k, v in rec.items() if k in row} | {"problem_list": rec["problems"]})
    data["rows"][0]["problems"] = "; ".join(rec["problems"])
    assert ma.read_result(data).rows[0].outcome == "agree"


def test_a_limited_bound_below_a_proven_optimum_is_a_disagreement(monkeypatch):
    """A limited run's proven bound under another engine's proven optimum contradicts it."""

    def below(raw):
        return dataclasses.replace(raw, status="limit", bound=OPT_6 - 1.0, value=OPT_6 - 1.0)

    _patched(monkeypatch, {"milp": below})
    rec = au.audit_instance(compile_package(generate("update_chain")), 6)
    assert rec["outcome"] == "disagree"
    assert any("below the proven optimum" in p for p in rec["problems"])


def test_the_cli_counts_bnb_and_enum_agreeing_when_milp_is_limited(monkeypatch):
    """QA s42 round 2: `audit update_chain.json --budgets 63 --time-limit 0.01` said NOTHING
    CHECKED with exit 1 beside three equal values (the MILP stopped at its limit; here it is
    made to, so the test does not depend on the machine's speed)."""
    _patched(monkeypatch, {"milp": _limited})
    pkg = str(REPO / "sample_packages" / "update_chain.json")
    rc, out, err = run_cli("audit", pkg, "--budgets", "63", "--json")
    rep = json.loads(out)
    (row,) = rep["rows"]
    assert (row["bnb_status"], row["milp_status"], row["enum_status"]) == (
        "optimal",
        "limit",
        "optimal",
    )
    assert row["outcome"] == "agree" and rep["n_agree"] == 1
    assert rc == 0, err


def test_an_audit_saved_before_enumeration_says_enum_was_not_part_of_it(tmp_path):
    rep = au.audit_summary_for_package(generate("update_chain"), [2.0, 6.0])
    data = rep.to_dict()
    for row in data["rows"]:
        for key in [k for k in row if k.startswith("enum_")]:
            del row[key]
    del data["enum_time_s"]
    path = write_json(tmp_path, "old.json", data)
    rc, out, err = run_cli("show", str(path))
    assert rc == 0, err
    assert "enum not part of this audit (saved before enumeration took part)" in out
    assert "too many stores" not in out


def test_the_audit_figure_counts_the_checks_it_plots_and_says_when_there_are_none(tmp_path):
    doc = json.loads((REPO / "sample_packages" / "update_chain.json").read_text("utf-8"))
    doc["objective"] = {"saturation": "log1p"}
    log1p = write_json(tmp_path, "uc-log1p.json", doc)
    cap1 = str(REPO / "sample_packages" / "update_chain.json")
    mixed = au.audit([cap1, str(log1p)], budgets=[4, 6], figures=False)
    fig = au.audit_figure(mixed)
    plotted = sum(len(t.x) for t in fig.data if t.name != "equal time")
    # QA s50: enumeration is drawn beside the MILP where both ran (the cap1 checks), so the 4
    # checks give 6 points; the title counts checks.
    assert mixed.n_tasks == 4 and plotted == 6
    assert fig.layout.title.text == "Solve time per check (4 checks)"
    assert fig.layout.yaxis.title.text == "milp or enum time (ms)"
    assert {t.name for t in fig.data} >= {"agree (2), bnb vs milp", "agree (4), bnb vs enum"}
    big = json.loads((REPO / "sample_packages" / "event-graph-50.json").read_text("utf-8"))
    big["objective"] = {"saturation": "log1p"}
    nothing = au.audit([str(write_json(tmp_path, "eg.json", big))], budgets=[125], figures=False)
    assert nothing.verdict == "NOTHING CHECKED"
    empty = au.audit_figure(nothing)
    assert "0 of 1 checks plotted" in empty.layout.title.text
    assert any("No check has" in a.text for a in empty.layout.annotations)


#: QA s42 round 3: a package whose value unit is 1 while the generic pool's optimum is 0.0015;
#: HiGHS finds 0.0015, bnb and enum 0.00150000002 (2e-11 apart, agreeing in units of 1).
TINY30 = {
    "memaudit": 1,
    "id": "tiny30",
    "objective": {"saturation": "cap1"},
    "experiences": [
        {"id": "e0", "time": 0},
        {"id": "e1", "time": 1},
        {"id": "e2", "time": 2},
        {"id": "e3", "time": 3},
        {"id": "e4", "time": 4},
    ],
    "units": [
        {"id": "u0", "weight": 1e-14},
        {"id": "u1", "weight": 0.001},
        {"id": "u2", "weight": 1e-14},
        {"id": "u3", "weight": 0.001},
        {"id": "u4", "weight": 1.0},
    ],
    "candidates": [
        {"id": "e0c0", "experience": "e0", "type": "summary", "cost": 2, "coverage": {"u3": 1.0}},
        {"id": "e1c0", "experience": "e1", "type": "raw_span", "cost": 2, "coverage": {"u1": 0.5}},
        {
            "id": "e1c1",
            "experience": "e1",
            "type": "raw_span",
            "cost": 0.7,
            "coverage": {"u1": 2e-08},
        },
        {
            "id": "e2c0",
            "experience": "e2",
            "type": "tombstone",
            "cost": 0.1,
            "coverage": {"u3": 1e-09},
        },
        {
            "id": "e3c0",
            "experience": "e3",
            "type": "tombstone",
            "cost": 100,
            "coverage": {"u3": 2e-08, "u2": 0.5},
        },
        {
            "id": "e4c0",
            "experience": "e4",
            "type": "tombstone",
            "cost": 10,
            "coverage": {"u1": 1e-11, "u2": 2e-08},
        },
        {
            "id": "e4c1",
            "experience": "e4",
            "type": "tombstone",
            "cost": 100,
            "coverage": {"u4": 1.0, "u2": 1e-09},
        },
        {
            "id": "e4c2",
            "experience": "e4",
            "type": "raw_span",
            "cost": 0.7,
            "coverage": {"u1": 2e-08},
        },
    ],
    "stores": [
        {"id": "s", "select": ["e0c0", "e1c0", "e2c0"]},
        {"id": "x", "memories": [{"id": "m0", "cost": 1.5, "coverage": {"u0": 1e-09}}]},
    ],
}


def test_an_agreeing_audit_of_tiny_values_reads_back(tmp_path):
    """Judged in the value unit at the budget when run, and read back in the saved unit:
    "agree, yet the values 0.0015 and 0.00150000002 differ" (now the unit is saved)."""
    path = write_json(tmp_path, "tiny30.json", TINY30)
    rep = au.audit([str(path)], budgets=[37.6, 215.5], pools=["generic"], figures=False)
    # Review s50 #1: the unit is at most the best affordable single, a lower bound on OPT
    # (as in solve), no longer 1 for an optimum of 0.0015.
    assert rep.rows and all(r.outcome == "agree" and r.value_unit <= r.bnb_value for r in rep.rows)
    saved = json.loads(json.dumps(rep.to_dict()))
    assert [r["value_unit"] for r in saved["rows"]] == [r.value_unit for r in rep.rows]
    back = ma.read_result(json.loads(json.dumps(saved)))
    assert [r.outcome for r in back.rows] == ["agree"] * len(rep.rows)
    for row in saved["rows"]:
        assert row["milp_value"] == row["bnb_value"] == 0.00150000002
        row["milp_value"] = 0.0015
        row["abs_diff"] = row["bnb_value"] - 0.0015
        row["rel_diff"] = row["abs_diff"] / row["value_unit"]
    saved["max_abs_diff"] = max(r["abs_diff"] for r in saved["rows"])
    saved["max_rel_diff"] = max(r["rel_diff"] for r in saved["rows"])
    # 1.3e-8 relative apart: more than 1e-9 of OPT, no longer "within 1e-9 of the unit 1".
    with pytest.raises(ResultError, match=r"agree, yet milp reported .*\[rule: inconsistent\]"):
        ma.read_result(saved)


#: A row saved mid-session 42, before the difference was taken over the proofs only: bnb
#: limited (6.8125), milp and enum proved 8.0625, abs_diff 1.25 over every engine that ran.
ROW_BEFORE = {
    "instance_hash": "18065583f6ecc6b49ea28812e328e5d9b8940c3c82c36d816a9e0b5ce2e028a7",
    "pool": "full",
    "budget": 41.377,
    "n_sources": 1,
    "source": "/tmp/s42/qa2-c/show/p0.json",
    "package_id": "p0",
    "family": None,
    "outcome": "unproven",
    "bnb_value": 6.8125,
    "milp_value": 8.0625,
    "bnb_bound": 8.0625,
    "milp_bound": 8.0625,
    "bnb_gap": 0.1834862385321101,
    "milp_gap": 0.0,
    "abs_diff": 1.25,
    "rel_diff": 0.15503875968992248,
    "bnb_time_s": 0.000340154001605697,
    "milp_time_s": 0.005877753996173851,
    "bnb_status": "limit",
    "milp_status": "optimal",
    "bnb_nodes": 1,
    "milp_nodes": 0,
    "enum_status": "optimal",
    "enum_value": 8.0625,
    "enum_bound": 8.0625,
    "enum_gap": 0.0,
    "enum_time_s": 0.0006557110027642921,
    "enum_nodes": 576,
    "problems": "",
    "problem_list": [],
}


def test_a_row_saved_with_the_earlier_difference_reads_back():
    row = au.AuditRow.from_dict(ROW_BEFORE, "$.rows[7]")
    assert row.abs_diff == 1.25 and row.outcome == "unproven"
    edited = dict(ROW_BEFORE, abs_diff=0.5)
    with pytest.raises(ma.errors.ResultError) as info:
        au.AuditRow.from_dict(edited, "$.rows[7]")
    assert info.value.path == "$.rows[7].abs_diff"


def test_a_limited_run_reporting_less_than_its_store_is_worth_is_no_finding(monkeypatch):
    """QA s42 round 3: a time-limited HiGHS incumbent reported 20.40304 for a store worth
    21.26504 and the audit said FAIL; a limited run's objective may sit below F."""

    def under(raw):
        return dataclasses.replace(raw, status="limit", value=raw.value - 0.5)

    _patched(monkeypatch, {"milp": under})
    rec = au.audit_instance(compile_package(generate("update_chain")), 6)
    assert rec["milp_value"] == pytest.approx(OPT_6)  # F recomputed on its store
    assert not any("reported" in p for p in rec["problems"])
    assert rec["outcome"] == "agree"  # bnb and enum proved it


def test_an_optimal_run_reporting_less_than_its_store_is_worth_is_a_finding(monkeypatch):
    """A proof whose value is not its store's F is still a disagreement (guard)."""

    def under(raw):
        return dataclasses.replace(raw, value=raw.value - 0.5, bound=raw.bound - 0.5)

    _patched(monkeypatch, {"milp": under})
    rec = au.audit_instance(compile_package(generate("update_chain")), 6)
    assert rec["outcome"] == "disagree"
    assert any("milp reported" in p for p in rec["problems"])
