"""Session 42: the audit runs enumeration as a third engine where at most 100,000 stores fit.

Before, ``memaudit audit`` ran only ``bnb`` and ``milp``, so every check of a ``log1p``
package (which the MILP does not take) was skipped and the audit said NOTHING CHECKED with
exit 1, even on packages small enough to enumerate. The values are checked against a brute
force written here from the package JSON alone.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_utils import run_cli
from oracles import opt_by_enumeration
from package_utils import write_json

import memaudit_core as ma
from memaudit_core import audit as au
from memaudit_core.compiled import compile_package
from memaudit_core.errors import ResultError
from memaudit_core.generators import generate
from memaudit_core.solvers import ENGINES, RawSolution, solve

REPO = Path(__file__).resolve().parents[1]
UPDATE_CHAIN = REPO / "sample_packages" / "update_chain.json"


def _log1p_doc() -> dict:
    doc = json.loads(UPDATE_CHAIN.read_text(encoding="utf-8"))
    doc["objective"] = {"saturation": "log1p"}
    return doc


def test_a_log1p_package_small_enough_to_enumerate_is_checked_by_bnb_and_enum(tmp_path):
    doc = _log1p_doc()
    path = write_json(tmp_path, "uc-log1p.json", doc)
    rep = au.audit([str(path)], budgets=[4, 6, 13], figures=False)
    assert (rep.n_agree, rep.n_skipped, rep.n_disagree, rep.verdict) == (3, 0, 0, "PASS")
    for row in rep.rows:
        assert (row.bnb_status, row.milp_status, row.enum_status) == (
            "optimal",
            "skipped",
            "optimal",
        )
        assert row.enum_value == pytest.approx(opt_by_enumeration(doc, row.budget), rel=1e-12)
        assert row.bnb_value == pytest.approx(row.enum_value, rel=1e-12)
    assert any("enumeration (enum) ran on 3 of 3 check(s)" in n for n in rep.notes)
    # Saved and read back, the enumeration's answers stay.
    back = ma.read_result(json.loads(json.dumps(rep.to_dict())))
    assert [r.enum_value for r in back.rows] == [r.enum_value for r in rep.rows]
    assert back.enum_time_s == rep.enum_time_s


def test_the_cli_passes_a_small_log1p_audit_and_names_the_engines(tmp_path):
    path = write_json(tmp_path, "uc-log1p.json", _log1p_doc())
    rc, out, err = run_cli("audit", str(path), "--budgets", "4,6", "--quiet")
    assert rc == 0, err
    assert out.startswith("PASS: 2 of 2 checks")
    assert "milp did not run (skipped on every check)" in out
    assert "enum time: total" in out and "(2 check(s))" in out


def test_a_third_engine_that_differs_is_a_disagreement(monkeypatch):
    inst = compile_package(generate("update_chain"))
    solve(inst, 6, "bnb")  # registers the engines
    real = ENGINES["enum"]

    def worse(inst_, budget, **kw):
        raw = real(inst_, budget, **kw)
        # A smaller proven optimum: the empty store, claimed optimal.
        return RawSolution((), 0.0, 0.0, raw.status)

    monkeypatch.setitem(ENGINES, "enum", worse)
    rec = au.audit_instance(inst, 6)
    assert rec["bnb_value"] == pytest.approx(rec["milp_value"], rel=1e-12)
    assert rec["enum_value"] == 0.0
    assert rec["outcome"] == "disagree"


def test_an_infeasible_store_from_a_limited_run_is_a_disagreement(monkeypatch):
    """Was "unproven": a store over budget is a finding whatever the run's status."""
    inst = compile_package(generate("update_chain"))
    solve(inst, 6, "bnb")
    every = tuple(range(inst.n_candidates))

    def over_budget(inst_, budget, **kw):
        return RawSolution(every, 1.0, 2.0, "limit")

    monkeypatch.setitem(ENGINES, "bnb", over_budget)
    rec = au.audit_instance(inst, 6)
    assert rec["bnb_status"] == "infeasible"
    assert rec["outcome"] == "disagree"


def test_enumeration_is_left_out_where_too_many_stores_fit():
    pkg = generate("event_graph", seed=0)
    rep = au.audit_summary_for_package(pkg, [125.0], time_limit=30.0)
    (row,) = rep.rows
    assert row.enum_status == au.NOT_RUN and row.enum_value is None
    assert (row.bnb_status, row.milp_status, row.outcome) == ("optimal", "optimal", "agree")
    assert any("enumeration (enum) ran on 0 of 1 check(s)" in n for n in rep.notes)


def test_a_saved_row_from_before_enumeration_reads_back_as_not_run():
    rep = au.audit_summary_for_package(generate("update_chain"), [6.0])
    data = rep.to_dict()
    for row in data["rows"]:
        for key in [k for k in row if k.startswith("enum_")]:
            del row[key]
    del data["enum_time_s"]
    back = ma.read_result(data)
    (row,) = back.rows
    assert row.enum_status == au.ABSENT and row.outcome == "agree"
    assert back.enum_time_s == (0.0, 0.0, 0.0)


def test_an_agreeing_row_whose_enumeration_differs_is_refused():
    rep = au.audit_summary_for_package(generate("update_chain"), [6.0])
    data = rep.to_dict()
    (row,) = data["rows"]
    assert row["enum_status"] == "optimal"
    row["enum_value"] = row["enum_bound"] = row["bnb_value"] - 1.0
    with pytest.raises(ResultError) as info:
        ma.read_result(data)
    assert info.value.path == "$.rows[0].outcome" and info.value.rule == "inconsistent"


def test_an_agreeing_row_with_one_engine_run_is_refused():
    rep = au.audit_summary_for_package(generate("update_chain"), [6.0])
    data = rep.to_dict()
    (row,) = data["rows"]
    row["milp_status"] = "skipped"
    row["enum_status"] = au.NOT_RUN
    with pytest.raises(ResultError) as info:
        ma.read_result(data)
    assert "only bnb ran" in str(info.value)


def test_an_edited_generated_package_is_audited_alone_on_the_certification_page():
    """It was audited as its family's seeds 0-19 (other packages, all cap1), and the page
    said "All 120 instance checks agree." of a log1p package whose checks were all skipped."""
    from app_utils import open_app, upload_file

    doc = json.loads((REPO / "sample_packages" / "event-graph-50.json").read_text("utf-8"))
    doc["id"] = "eg-log1p"
    doc["objective"] = {"saturation": "log1p"}
    doc["budgets"] = [100, 125]
    at = open_app("app.py", 300, package="sample:update_chain")
    upload_file(at, "eg-log1p.json", json.dumps(doc).encode())
    at.switch_page("pages/6_Certification.py").run()
    assert any("not seeds of its family" in c.value and "(edited)" in c.value for c in at.caption)
    at.button(key="cert_audit_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    metrics = {m.label: m.value for m in at.metric}
    assert (metrics["Sources"], metrics["Checks"], metrics["Skipped"]) == (
        "1",
        "6",
        "6",
    )  # 3 pools x 2 budgets
    assert not any("agree." in s.value for s in at.success)


def test_the_audit_figure_of_a_log1p_suite_plots_bnb_against_enum(tmp_path):
    """Its figure was empty: it plotted bnb against the MILP, which ran on no check."""
    path = write_json(tmp_path, "uc-log1p.json", _log1p_doc())
    rep = au.audit([str(path)], budgets=[4, 6], figures=False)
    fig = au.audit_figure(rep)
    assert fig.layout.yaxis.title.text == "enum time (ms)"
    agree = [t for t in fig.data if t.name == "agree (2)"]
    assert len(agree) == 1 and len(agree[0].y) == 2


def test_the_certification_pages_audit_caption_names_the_three_engines():
    """QA s42 round 2: it still said "Branch-and-bound and HiGHS MILP" only."""
    from app_utils import open_app

    at = open_app("pages/6_Certification.py", 300, package="sample:update_chain")
    captions = [c.value for c in at.caption]
    assert any(
        "Branch-and-bound, the HiGHS MILP and, where at most 100,000 stores fit the budget, "
        "enumeration" in c
        for c in captions
    ), captions
