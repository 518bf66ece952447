"""QA s41 (certification): one rule for "OPT" on every path.

Defect 1: ``sweep --solver milp`` starred proven optima (the budget sweep's monotonicity shortcut
skipped the cross-check ``solve()`` runs, and a HiGHS proof on costs spanning a factor 1e5 needs
that check's agreement) and its note blamed a time limit that was never set.
Defect 2: a cross-check stopped by a limit (consistent but inconclusive) lowered a proven
optimum to "optimal (uncertified)", while the same proof without a cross-check was "OPT".
The rule now: one exact engine's proof certifies (DESIGN.md section 5: optimal model status,
zero gap, recomputed F equal; engines that both concluded must agree); an inconclusive
cross-check is said in the proof; one that contradicts still raises.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import memaudit_core as ma
from memaudit_core.analysis import sweep, uncertified_note
from memaudit_core.errors import SolverDisagreementError
from memaudit_core.solvers import RawSolution, certify, solve_budgets

ROOT = Path(__file__).resolve().parents[1]
UPDATE_CHAIN = ROOT / "sample_packages" / "update_chain.json"

# /tmp/s41/qa-b/pkg_fz2_1.json (QA s41): costs from 0.00042 to 66.3, cap1.
FZ2_JSON = (
    '{"memaudit":1,"id":"fz2","experiences":[{"id":"e0","time":3},{"id":"e1","time":1},{"id":"e'
    '2","time":3},{"id":"e3","time":0}],"units":[{"id":"u0","kind":"fact","weight":0.0109787325'
    '61077727},{"id":"u1","kind":"fact","weight":122.37693146539075},{"id":"u2","kind":"fact","'
    'weight":0.0},{"id":"u3","kind":"fact","weight":0.0},{"id":"u4","kind":"fact","weight":1401'
    '.316838028846},{"id":"u5","kind":"fact","weight":0.0}],"candidates":[{"id":"e0:c0","experi'
    'ence":"e0","type":"atomic_fact","cost":0.07243246320173748,"coverage":{"u2":1.0}},{"id":"e'
    '0:c1","experience":"e0","type":"atomic_fact","cost":0.006530506741702433,"coverage":{"u5":'
    '0.3,"u1":0.7637009951314895,"u3":0.7,"u2":0.3}},{"id":"e0:c2","experience":"e0","type":"at'
    'omic_fact","cost":0.7633382601664024,"coverage":{"u3":1.0}},{"id":"e1:c0","experience":"e1'
    '","type":"atomic_fact","cost":0.12968106020774836,"coverage":{"u4":0.5875806061435594,"u1"'
    ':0.8461974184283128,"u2":1.0,"u5":0.48022697301760287}},{"id":"e1:c1","experience":"e1","t'
    'ype":"atomic_fact","cost":0.04201708593077666,"coverage":{"u4":1.0,"u2":0.7784426150001458'
    ',"u0":1.0}},{"id":"e1:c2","experience":"e1","type":"atomic_fact","cost":0.4746269396919936'
    '5,"coverage":{"u5":1.0,"u1":0.3,"u4":0.7,"u2":0.7}},{"id":"e2:c0","experience":"e2","type"'
    ':"atomic_fact","cost":66.26226654836262,"coverage":{"u3":0.3}},{"id":"e2:c1","experience":'
    '"e2","type":"atomic_fact","cost":52.349150068777206,"coverage":{"u3":0.7,"u0":0.3}},{"id":'
    '"e2:c2","experience":"e2","type":"atomic_fact","cost":9.416033761924004,"coverage":{"u2":0'
    '.7,"u3":1.0,"u5":0.3,"u0":0.3}},{"id":"e3:c0","experience":"e3","type":"atomic_fact","cost'
    '":0.00042134539882297643,"coverage":{"u0":0.7}},{"id":"e3:c1","experience":"e3","type":"at'
    'omic_fact","cost":0.002570636333968886,"coverage":{"u2":0.3,"u5":0.3}},{"id":"e3:c2","expe'
    'rience":"e3","type":"atomic_fact","cost":0.6600899406536317,"coverage":{"u5":0.7,"u2":0.38'
    '655710476146987,"u3":0.7,"u1":0.3}}],"objective":{"saturation":"cap1"}}'
)
B_LOW, B_MID, B_HIGH = 65.0895793086953, 125.69624634549098, 130.1791586173906
# OPT at B_MID, from QA's independent brute-force oracle (and enum).
FZ2_OPT = 1523.704748


def _fz2() -> ma.Package:
    return ma.parse_package(json.loads("".join(FZ2_JSON)), "pkg_fz2_1.json")


def test_solve_budgets_milp_monotone_budget_certified_like_solve() -> None:
    inst = ma.compile_package(_fz2())
    alone = ma.solve(inst, B_MID, "milp", cross_check=True)
    assert alone.label == "OPT"
    res = solve_budgets(inst, [B_LOW, B_MID], "milp", cross_check=True)
    assert [r.label for r in res] == ["OPT", "OPT"]
    assert res[1].value == pytest.approx(FZ2_OPT, abs=1e-6)
    assert res[1].certificate.reason == ""
    assert res[1].certificate.proof.endswith("; cross-checked by enum")


def test_sweep_milp_default_cross_check_certifies_proven_rows() -> None:
    res = sweep([_fz2()], [B_LOW, B_MID, B_HIGH], ["gvt"], solver="milp")
    assert [r.certified for r in res.rows] == [True, True, True]
    assert not any("not certified" in n for n in res.notes)


def test_cli_sweep_milp_stars_nothing(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from memaudit_core.cli import main

    path = tmp_path / "pkg_fz2_1.json"
    path.write_text("".join(FZ2_JSON))
    budgets = ",".join(repr(b) for b in (B_LOW, B_MID, B_HIGH))
    assert (
        main(["sweep", str(path), "--solver", "milp", "--budgets", budgets, "--writers", "gvt"])
        == 0
    )
    out = capsys.readouterr().out
    assert "1.000*" not in out
    assert "time limit" not in out


def test_uncertified_note_without_a_time_limit_blames_none() -> None:
    class Row:  # an optimum proven to zero gap that the rule refused (QA s41 defect 3)
        certified = False
        opt = opt_bound = 15.486

    note = uncertified_note([Row()], time_limit=None)
    assert note is not None
    assert "stopped at its time limit" not in note
    assert "1 closed the gap, but the engine's proof did not meet the certification rule" in note
    assert "--time-limit" not in note
    assert "memaudit solve PACKAGE --budget B" in note


def test_uncertified_note_with_a_time_limit_names_it() -> None:
    class Row:  # stopped with an open gap
        certified = False
        opt, opt_bound = 1.0, 2.0

    note = uncertified_note([Row()], time_limit=2.5)
    assert "time limit of 2.5 s" in note
    assert "a longer --time-limit, or none" in note


def test_enum_proof_with_node_limited_cross_check_is_opt() -> None:
    inst = ma.compile_package(ma.load_package(str(UPDATE_CHAIN)))
    res = ma.solve(inst, 6, "auto", node_limit=0)
    assert (res.label, res.solver, res.gap) == ("OPT", "enum", 0.0)
    assert res.value == pytest.approx(7.735, abs=1e-9)
    assert res.certificate.reason == ""
    assert [c.engine for c in res.certificate.checks] == ["enum", "bnb"]
    assert res.certificate.checks[1].status == "limit"
    assert "cross-check by bnb stopped at a limit, consistent but inconclusive" in (
        res.certificate.proof
    )
    # The same proof by the other path and without a check: the same label.
    (bulk,) = solve_budgets(inst, [6], "auto", node_limit=0, cross_check=True)
    plain = ma.solve(inst, 6, "enum", cross_check=False)
    assert (bulk.label, plain.label) == ("OPT", "OPT")


def test_cli_solve_node_limit_zero_says_opt(capsys: pytest.CaptureFixture) -> None:
    from memaudit_core.cli import main

    assert main(["solve", str(UPDATE_CHAIN), "--budget", "6", "--node-limit", "0"]) == 0
    out = capsys.readouterr().out
    assert "OPT" in out
    assert "uncertified" not in out


def test_milp_proof_with_node_limited_bnb_cross_check_is_opt() -> None:
    inst = ma.compile_package(
        ma.generate(
            "random_coverage",
            seed=0,
            n_groups=25,
            candidates_per_group=4,
            units_per_group=2,
            min_cover=3,
            max_cover=12,
            cost_low=1.0,
            cost_high=10.0,
            budget_fraction=0.1,
            integer_costs=False,
        )
    )
    checked = ma.solve(inst, 13.1601, "milp", node_limit=10, cross_check=True)
    unchecked = ma.solve(inst, 13.1601, "milp", node_limit=10, cross_check=False)
    assert unchecked.label == "OPT"
    assert checked.label == "OPT"
    assert checked.value == unchecked.value
    assert [c.engine for c in checked.certificate.checks] == ["milp", "bnb"]
    assert checked.certificate.checks[1].status == "limit"
    assert "consistent but inconclusive" in checked.certificate.proof


def _limit_stopped(value: float, bound: float, sel: tuple[int, ...]) -> RawSolution:
    return RawSolution(sel, value, bound, "limit", nodes=1)


def test_contradicting_limit_stopped_cross_check_still_raises(monkeypatch) -> None:
    """Regression guard: a limit-stopped cross-check whose bound is below the proven value
    contradicts the proof and must be reported, never certified."""
    inst = ma.compile_package(ma.load_package(str(UPDATE_CHAIN)))
    res = ma.solve(inst, 6, "enum", cross_check=False)

    def fake(engine, inst_, budget, **kw):
        return _limit_stopped(0.0, res.value / 2, ()), 0.0

    monkeypatch.setattr(certify, "run_engine", fake)
    raw = RawSolution(tuple(res.selected_idx), res.value, res.value, "optimal")
    with pytest.raises(SolverDisagreementError, match="contradict"):
        certify.finish(inst, 6, "enum", raw, 0.0, second="bnb")
