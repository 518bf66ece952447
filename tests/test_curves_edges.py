"""Curves gaps found by the second mutation pass (QA s17e): the certification report and the
family band."""

from __future__ import annotations

from memaudit_core import curves
from memaudit_core.compiled import compile_package
from memaudit_core.curves import certification_report, family_band
from memaudit_core.generators import generate
from memaudit_core.objective import evaluate
from memaudit_core.solvers import RawSolution


def test_an_engine_returning_an_infeasible_store_is_not_certified(monkeypatch):
    """DESIGN section 5 / certification_report: a budget is certified only for "a feasible
    store". A fake engine claims optimality (zero gap, value = F of its store) for the store
    of every candidate of update_chain, which breaks one-per-group and the budget 3."""
    pkg = generate("update_chain")
    inst = compile_package(pkg)
    everything = tuple(range(inst.n_candidates))
    value = float(evaluate(inst, everything))

    def fake_run_engine(engine, inst_, budget, **kwargs):
        return RawSolution(everything, value, value, "optimal", nodes=1), 0.01

    monkeypatch.setattr(curves, "run_engine", fake_run_engine)
    rep = certification_report(pkg, [3], engines=("bnb",))
    (row,) = rep.rows
    run = row.run("bnb")
    assert run.feasible is False
    assert run.certified is False
    assert row.certified is False
    assert "not feasible" in row.message


def test_a_repeated_seed_counts_once_in_a_family_band():
    """A seed range is a set of packages: seeds [1, 1, 2] are the two packages of seeds 1 and
    2, so the band equals the band of [1, 2] (a repeat must not weigh seed 1 twice)."""
    args = ({}, [2, 4], ["writer:density"])
    twice = family_band("memaudit-small", [1, 1, 2], *args, ablations=())
    once = family_band("memaudit-small", [1, 2], *args, ablations=())
    assert twice.seeds == (1, 2)
    assert [r.n for r in twice.rows] == [2, 2]
    assert [(r.mean_ratio, r.ci_low, r.ci_high) for r in twice.rows] == [
        (r.mean_ratio, r.ci_low, r.ci_high) for r in once.rows
    ]
