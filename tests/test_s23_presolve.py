"""Small budgets of large packages: HiGHS's presolve must not grow the model, the MILP's optimum
there must still be the B&B's, and enumeration must not densify every candidate.

With HiGHS's probing rule on, a budget that affords a few candidates made presolve multiply the
matrix (event graph of 500 experiences, budget 10: 2,972 nonzeros in, 15,372 out; 5,000
experiences: 26,264 in, 214,789 out and 54 s of presolve). The nonzero count is a property of
the presolved model, not a timing, so it is what the presolve test asserts.
"""

from __future__ import annotations

import highspy
import pytest

from memaudit_core.compiled import compile_package
from memaudit_core.generators import generate
from memaudit_core.solvers import solve
from memaudit_core.solvers.milp import (
    PROBING_MIN_OFF_COLUMNS,
    PROBING_RULE,
    _exact_options,
    _highs_lp,
    build_model,
)


@pytest.fixture(scope="module")
def event_graphs():
    return {
        n: compile_package(generate("event_graph", seed=1, n_experiences=n)) for n in (500, 1000)
    }


@pytest.mark.parametrize(("n_experiences", "budget"), [(500, 10.0), (500, 20.0), (1000, 20.0)])
def test_presolve_does_not_grow_small_budget_event_graphs(event_graphs, n_experiences, budget):
    model = build_model(event_graphs[n_experiences], budget)
    assert model["presolve_rule_off"] & PROBING_RULE
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    _exact_options(h, model)
    h.passModel(_highs_lp(highspy, model, integer=True))
    h.presolve()
    presolved_nonzeros = len(h.getPresolvedLp().a_matrix_.value_)
    assert presolved_nonzeros <= len(model["value"])


def assert_same_optimum(inst, budget: float, engine: str, oracle: str) -> None:
    """Both engines prove an optimum of the same, non-zero value. Tied optima may differ
    between engines (event graphs have many); each store's F is recomputed by its
    certificate, so equal values are the check."""
    res, ref = solve(inst, budget, engine), solve(inst, budget, oracle)
    assert res.label == ref.label == "OPT"
    assert res.value == pytest.approx(ref.value, rel=1e-9, abs=1e-12)
    assert res.value > 0
    assert res.cost <= budget


@pytest.mark.parametrize("budget", [5.0, 10.0, 20.0, 40.0])
def test_milp_and_bnb_agree_on_small_budgets(event_graphs, budget):
    assert_same_optimum(event_graphs[500], budget, "milp", "bnb")


def test_probing_stays_on_below_the_column_threshold():
    inst = compile_package(generate("random_coverage", seed=0, n_groups=200))
    model = build_model(inst, float(inst.total_cost))
    assert model["n_x"] < PROBING_MIN_OFF_COLUMNS
    assert not model["presolve_rule_off"] & PROBING_RULE


def test_milp_without_probing_matches_bnb_on_scope_shift():
    # With probing, HiGHS's presolve after its restart grew this family 18x (1,000 scopes:
    # 18,001 -> 329,728 nonzeros, 24 s); without it the optimum must still be the B&B's.
    inst = compile_package(generate("scope_shift", seed=0, n_scopes=300))
    model = build_model(inst, 10.0)
    assert model["n_x"] >= PROBING_MIN_OFF_COLUMNS
    assert model["presolve_rule_off"] & PROBING_RULE
    assert_same_optimum(inst, 10.0, "milp", "bnb")


# --------------------------------------------------------------------------- enum at tiny budgets
# Enumeration at a budget affording few candidates of a large package: it densified every
# candidate's coverage (780 MB at 5,000 experiences) and copied a growing matrix per group.


def test_enum_leaves_the_dense_coverage_of_all_candidates_unbuilt():
    inst = compile_package(generate("event_graph", seed=1, n_experiences=500))
    solve(inst, 5.0, "enum")
    assert "coverage_dense" not in inst.__dict__


@pytest.mark.parametrize("budget", [4.0, 6.0, 7.0, 8.0])
def test_enum_and_milp_agree_on_tiny_budgets_of_an_event_graph(event_graphs, budget):
    assert_same_optimum(event_graphs[1000], budget, "enum", "milp")
