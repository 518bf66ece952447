"""QA s41 (gaps at any value scale, read-back consistency, the audit headline).

1. A package in units of 1e-14: the sweep's optimum rows, the certification runs and the audit
   measured relative gaps in units of 1, so a bound 3-5% above an incumbent of 2e-12 was a
   zero gap ("optimal (uncertified)", "gap 0.00%"), and two engines 3% apart "agreed".
   The app's sweep and certification tables showed such values as 0.0000.
2. Certification records and audit reports were read back with "certified" / "agree" rows
   whose bounds stood above their values.
3. ``memaudit audit`` led with a bare ``PASS`` when a check was left unproven.

Each test fails on the code before the fix (checked against a worktree of f740a49).
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from cli_utils import run_cli

import memaudit_core as ma
from memaudit_core import audit, cli, curves
from memaudit_core import solvers as solvers_mod
from memaudit_core.analysis import compile_cached
from memaudit_core.errors import ResultError
from memaudit_core.objective import evaluate
from memaudit_core.solvers import RawSolution

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_packages" / "update_chain.json"
TINY = 1e-14


def _package(tmp_path: Path, scale: float) -> Any:
    """update_chain with every unit weight multiplied by ``scale`` (as QA's make_tiny.py)."""
    data = json.loads(SAMPLE.read_text())
    for u in data["units"]:
        u["weight"] = u["weight"] * scale
    path = tmp_path / f"update_chain_{scale:g}.json"
    path.write_text(json.dumps(data))
    return ma.load_package(str(path))


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return _package(tmp_path_factory.mktemp("tiny"), TINY)


@pytest.fixture(scope="module")
def normal() -> Any:
    return ma.load_package(str(SAMPLE))


@pytest.fixture(scope="module")
def tiny_opt(tiny: Any) -> tuple[Any, Any]:
    """The compiled tiny package and its proven optimum at budget 6."""
    inst = compile_cached(tiny)
    res = solvers_mod.solve(inst, 6.0)
    assert res.certified and 1e-14 < res.value < 1e-11  # in the package's tiny units
    return inst, res


# ----------------------------------------------------------------- 1. gaps in the value unit


def test_sweep_opt_row_with_open_bound_is_incumbent_at_tiny_scale(tiny_opt: tuple) -> None:
    """A sweep row's optimum with its bound 3% above is a limited run, whatever the scale
    (was: gap 0, status "optimal", label "optimal (uncertified)")."""
    inst, res = tiny_opt
    row = SimpleNamespace(budget=6.0, opt=res.value, opt_bound=res.value * 1.03, certified=False)
    method = SimpleNamespace(key="writer:gvt", kind="writer")
    (point,) = curves._opt_points(inst, [6.0], [("writer:gvt", row)], [method], "auto", 1.0)
    assert (point.status, point.label, point.certified) == ("limit", "incumbent", False)
    assert point.gap == pytest.approx(0.03, rel=1e-6)


def test_certification_engine_run_gap_at_tiny_scale(
    tiny_opt: tuple, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A limited engine run's gap on the Certification page (was 0.0 for a 3% gap)."""
    inst, res = tiny_opt
    raw = RawSolution(tuple(res.selected_idx), res.value, res.value * 1.03, "limit", nodes=7)
    monkeypatch.setattr(curves, "run_engine", lambda *a, **k: (raw, 0.01))
    run = curves._engine_run(inst, "bnb", 6.0, 1.0)
    assert run.gap == pytest.approx(0.03, rel=1e-6)
    assert run.certified is False


def _fake_engines(monkeypatch: pytest.MonkeyPatch, answers: dict[str, RawSolution]) -> None:
    def run_engine(engine: str, inst: Any, budget: float, **kw: Any) -> tuple[RawSolution, float]:
        return answers[engine], 0.01

    monkeypatch.setattr(solvers_mod, "run_engine", run_engine)
    # Only the two engines answered here (enum would otherwise run on this tiny package).
    monkeypatch.setattr(audit, "audit_engines", lambda inst, budget: audit.ALWAYS)


def test_audit_gap_at_tiny_scale(
    tiny: Any, tiny_opt: tuple, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The audit's unproven line and JSON gap (was ``gap 0.00%``, ``bnb_gap`` 0.0, for 5%)."""
    _, res = tiny_opt
    sel, v = tuple(res.selected_idx), res.value
    _fake_engines(
        monkeypatch,
        {
            "bnb": RawSolution(sel, v, v * 1.05, "limit", nodes=9),
            "milp": RawSolution(sel, v, v, "optimal"),
        },
    )
    rep = audit.audit_summary_for_package(tiny, [6.0], time_limit=1.0)
    (row,) = rep.rows
    assert row.outcome == "unproven"
    assert row.to_dict()["bnb_gap"] == pytest.approx(0.05, rel=1e-6)
    assert "bnb limit" in audit.unproven_lines(rep)
    assert "gap 5%" in audit.unproven_lines(rep)  # gap_percent (s52: "5.00%")


def test_audit_engines_apart_disagree_at_tiny_scale(
    tiny: Any, tiny_opt: tuple, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two proven optima 10% apart disagree in units of 1e-14 too (was "agree": their
    difference, 2e-13, is under the tolerance 1e-9 in units of 1)."""
    inst, res = tiny_opt
    sel = tuple(res.selected_idx)
    worse = sel[:-1]
    low = evaluate(inst, worse)
    assert 0 < low < res.value * 0.99  # a real difference between the two stores
    _fake_engines(
        monkeypatch,
        {
            "bnb": RawSolution(sel, res.value, res.value, "optimal"),
            "milp": RawSolution(worse, low, low, "optimal"),
        },
    )
    (row,) = audit.audit_summary_for_package(tiny, [6.0], time_limit=1.0).rows
    assert row.outcome == "disagree"


@pytest.mark.parametrize(
    ("page", "columns"),
    [
        ("1_Budget_sweep.py", ("value", "bound", "F", "OPT")),
        ("6_Certification.py", ('{e} value"', '{e} bound"')),
    ],
)
def test_pages_show_values_with_significant_digits(page: str, columns: tuple) -> None:
    """The tables' value and bound columns format with significant digits ("%.6g"), not
    fixed decimals that read 0.0000 for values of 2e-12."""
    src = (ROOT / "pages" / page).read_text()
    fixed = re.findall(r'format="%\.\d+f"', src)
    assert 'format="%.4f"' not in fixed and 'format="%.6f"' not in fixed
    # The sweep's proven-bound column (QA s41, CSV fix) formats the same way; the
    # Certification page's with twelve (QA s43: its bound must read as "reported" does).
    assert src.count('format="%.6g"') + src.count('format="%.12g"') >= len(columns)


# ------------------------------------------------------------------ 2. read-back consistency


@pytest.fixture(scope="module")
def cert_dict(normal: Any) -> dict[str, Any]:
    rep = curves.certification_report(normal, [3, 6], time_limit=10)
    assert rep.all_certified
    return json.loads(json.dumps(rep.to_dict()))


@pytest.fixture(scope="module")
def tiny_cert_dict(tiny: Any) -> dict[str, Any]:
    rep = curves.certification_report(tiny, [6], time_limit=10)
    assert rep.all_certified
    return json.loads(json.dumps(rep.to_dict()))


def _refused(data: dict[str, Any]) -> ResultError:
    with pytest.raises(ResultError) as info:
        ma.read_result(data)
    assert info.value.rule == "inconsistent"
    return info.value


def test_certified_run_with_bound_above_value_is_refused(
    cert_dict: dict[str, Any], tmp_path: Path
) -> None:
    """QA's forged record: a certified run with its bound 3% above F (and its true gap)."""
    d = copy.deepcopy(cert_dict)
    run = d["rows"][0]["runs"][0]
    v = run["value"]
    run["bound"] = v * 1.03
    run["gap"] = (v * 1.03 - v) / v
    assert _refused(d).path == "$.rows[0].runs[0].certified"
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(d))
    rc, _, err = run_cli("show", str(path))
    assert rc == 2 and "$.rows[0].runs[0].certified" in err and "inconsistent" in err


def test_zero_gap_beside_open_bound_is_refused_at_tiny_scale(
    tiny_cert_dict: dict[str, Any],
) -> None:
    """A run in units of 1e-14 with its bound 3% above and a stored gap of 0 (what the gap in
    units of 1 gave): the gap is the one refused."""
    d = copy.deepcopy(tiny_cert_dict)
    d["rows"][0]["certified"] = False
    d["n_certified"] = 0
    run = d["rows"][0]["runs"][0]
    run.update(status="limit", certified=False, hit_limit=True, bound=run["value"] * 1.03)
    run["gap"] = 0.0
    assert _refused(d).path == "$.rows[0].runs[0].gap"


def test_run_bound_below_value_is_refused_at_tiny_scale(
    tiny_cert_dict: dict[str, Any],
) -> None:
    """A bound 3% below its value of 2e-12 (was inside the absolute tolerance)."""
    d = copy.deepcopy(tiny_cert_dict)
    d["rows"][0]["certified"] = False
    d["n_certified"] = 0
    run = d["rows"][0]["runs"][1]
    run.update(status="limit", certified=False, hit_limit=True, bound=run["value"] * 0.97)
    run["gap"] = 0.0
    assert _refused(d).path == "$.rows[0].runs[1].bound"


def test_cert_row_read_alone_holds_its_runs_to_certified() -> None:
    """A CertRow read on its own: certified with a run that is not."""
    run = {
        "engine": "bnb",
        "applicable": True,
        "status": "limit",
        "value": 2.0,
        "recomputed": 2.0,
        "bound": 2.5,
        "gap": 0.25,
        "time_s": 0.1,
        "nodes": 3,
        "selected": [],
        "feasible": True,
        "certified": False,
        "hit_limit": True,
        "error": None,
        "note": None,
    }
    row = {
        "budget": 3.0,
        "runs": [run],
        "agreement": None,
        "disagreement": False,
        "certified": True,
        "message": "x",
    }
    with pytest.raises(ResultError) as info:
        curves.CertRow.from_dict(row)
    assert (info.value.path, info.value.rule) == ("$.certified", "inconsistent")


@pytest.fixture(scope="module")
def audit_dict(normal: Any) -> dict[str, Any]:
    rep = audit.audit_summary_for_package(normal, [3, 6], time_limit=10)
    assert rep.n_agree == 2
    return json.loads(json.dumps(rep.to_dict()))


def test_agree_row_with_bounds_above_values_is_refused(audit_dict: dict[str, Any]) -> None:
    """QA's tampered audit: an "agree" row with gaps of 2.5% and 1.1% (and both engines
    "optimal") read back and showed PASS."""
    d = copy.deepcopy(audit_dict)
    row = d["rows"][1]
    v = row["bnb_value"]
    row.update(bnb_bound=v * 1.025, bnb_gap=0.025, milp_bound=v * 1.011, milp_gap=0.011)
    err = _refused(d)
    assert err.path == "$.rows[1].outcome"
    assert "bnb's bound" in str(err) and "milp's bound" in str(err)


def test_audit_gap_that_its_bound_does_not_give_is_refused(audit_dict: dict[str, Any]) -> None:
    """A stored gap of 0 beside a bound 2.5% above (was ignored on reading)."""
    d = copy.deepcopy(audit_dict)
    row = d["rows"][0]
    row.update(outcome="unproven", bnb_status="limit", bnb_bound=row["bnb_value"] * 1.025)
    row["bnb_gap"] = 0.0
    d["n_agree"], d["n_unproven"] = d["n_agree"] - 1, d["n_unproven"] + 1
    assert _refused(d).path == "$.rows[0].bnb_gap"


# ---------------------------------------------------------------------- 3. audit headline


def test_pass_with_an_unproven_check_says_so_up_front(
    audit_dict: dict[str, Any], tmp_path: Path
) -> None:
    """``PASS (1 unproven): 1 of 2 checks ...``, exit code 0 (was a bare ``PASS:``)."""
    d = copy.deepcopy(audit_dict)
    row = d["rows"][0]
    v = row["bnb_value"]
    row.update(outcome="unproven", bnb_status="limit", bnb_bound=v * 1.02, bnb_gap=0.02)
    d["n_agree"], d["n_unproven"] = d["n_agree"] - 1, d["n_unproven"] + 1
    rep = ma.read_result(d)
    assert rep.headline == "PASS (1 unproven)"
    assert cli._audit_human(rep).splitlines()[0].startswith("PASS (1 unproven): 1 of 2 checks")
    path = tmp_path / "audit.json"
    path.write_text(json.dumps(d))
    rc, out, _ = run_cli("show", str(path))
    assert rc == 0
    assert out.splitlines()[0].startswith("PASS (1 unproven): 1 of 2 checks")


def test_clean_pass_headline_unchanged(audit_dict: dict[str, Any]) -> None:
    """Regression guard: every check agreeing still leads with a bare PASS."""
    rep = ma.read_result(copy.deepcopy(audit_dict))
    assert rep.headline == "PASS"
    assert cli._audit_human(rep).splitlines()[0].startswith("PASS: 2 of 2 checks")
