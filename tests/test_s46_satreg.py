"""QA s46: saturations are added through a checked register_saturation, not the bare dict.

``SATURATIONS`` was a plain dict: ``SATURATIONS["square"] = Saturation("square", z**2, ...)``
made packages naming "square" valid, and branch-and-bound, whose bounds assume a concave h,
certified 18 as OPT where a store worth 19 fit the budget.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from package_utils import registered_saturation

import memaudit_core as ma
from memaudit_core.errors import MemAuditError, PackageError
from memaudit_core.generators import generate
from memaudit_core.package import package_to_dict, parse_package
from memaudit_core.saturations import SATURATIONS, Saturation

BUILTIN = {"cap1", "linear", "log1p"}


# Module-level functions, so that worker processes can receive the saturations.
def _square(z):
    return np.asarray(z, dtype=np.float64) ** 2


def _square_scalar(z):
    return z * z


def _log2(z):
    return np.log1p(2 * np.asarray(z, dtype=np.float64))


def _log2_scalar(z):
    return math.log1p(2 * z)


LOG2 = Saturation("s46_log2", _log2, _log2_scalar, "h(z) = ln(1 + 2z)", math.inf)


@pytest.fixture(autouse=True)
def registry_left_as_found():
    yield
    assert set(SATURATIONS) == BUILTIN  # no test leaves a saturation registered


def _repro_package(n: int, saturation: str) -> ma.Package:
    """QA's package: two cost-1 candidates on one unit U (weight 1), and n cost-1 candidates
    each alone on its own unit (weight 1.5). Under a convex h, both on U are worth 4."""
    exps = [ma.Experience(f"e{i}", i) for i in range(n + 2)]
    units = [ma.Unit("U", weight=1.0)] + [ma.Unit(f"d{i}", weight=1.5) for i in range(n)]
    cands = [
        ma.Candidate("p1", f"e{n}", "atomic_fact", 1, {"U": 1.0}),
        ma.Candidate("p2", f"e{n + 1}", "atomic_fact", 1, {"U": 1.0}),
    ]
    cands += [ma.Candidate(f"c{i}", f"e{i}", "atomic_fact", 1, {f"d{i}": 1.0}) for i in range(n)]
    return ma.Package(
        "convex",
        exps,
        units,
        queries=[ma.Query("q", [u.id for u in units])],
        candidates=cands,
        saturation=saturation,
    )


def test_a_convex_saturation_is_refused_at_registration_naming_it_and_the_rule():
    square = Saturation("square", _square, _square_scalar, "h(z) = z^2", math.inf)
    with pytest.raises(ma.SaturationError) as caught:
        ma.register_saturation(square)
    text = str(caught.value)
    assert "'square'" in text
    assert "concave" in text
    assert isinstance(caught.value, ma.MemAuditError)
    assert "square" not in SATURATIONS
    # So QA's package is refused rather than certified with a wrong OPT.
    with pytest.raises(PackageError, match="known-saturation"):
        _repro_package(80, "square")


@pytest.mark.parametrize(
    ("h", "h_scalar", "rule"),
    [
        (lambda z: np.asarray(z, float) + 1.0, lambda z: z + 1.0, "h(0)=0"),
        (lambda z: -np.asarray(z, float), lambda z: -z, "nondecreasing"),
        (lambda z: np.sin(np.asarray(z, float)), math.sin, "nondecreasing"),
        (lambda z: np.asarray(z, float) ** 1.5, lambda z: z**1.5, "concave"),
        (np.expm1, math.expm1, "finite"),  # overflows past z = 709
        # Concave up to 40, then convex: only a grid reaching past the small range finds it.
        (
            lambda z: np.where(np.asarray(z) < 40, z, 40 + (np.asarray(z, float) - 40) ** 2),
            lambda z: z if z < 40 else 40 + (z - 40) ** 2,
            "concave",
        ),
        (_log2, math.log1p, "h_scalar"),
    ],
)
def test_register_saturation_refuses_an_h_that_breaks_a_rule(h, h_scalar, rule):
    with pytest.raises(ma.SaturationError) as caught:
        ma.register_saturation(Saturation("s46_bad", h, h_scalar, "bad", math.inf))
    assert "'s46_bad'" in str(caught.value)
    assert f"[rule: {rule}]" in str(caught.value)
    assert "s46_bad" not in SATURATIONS


@pytest.mark.parametrize("name", [5, None, "", "   ", "a,b", ("cap1",)])
def test_register_saturation_refuses_a_bad_name(name):
    with pytest.raises(ma.SaturationError, match=r"rule: saturation-name\]"):
        ma.register_saturation(Saturation(name, _log2, _log2_scalar, "ln(1 + 2z)", math.inf))
    assert set(SATURATIONS) == BUILTIN


def test_register_saturation_refuses_a_name_taken():
    for name in sorted(BUILTIN):
        mine = Saturation(name, _log2, _log2_scalar, "mine", math.inf)
        with pytest.raises(ma.SaturationError, match=rf"'{name}'.*saturation-name-taken"):
            ma.register_saturation(mine)
    assert SATURATIONS["log1p"].h is np.log1p
    with registered_saturation(LOG2):
        again = Saturation("s46_log2", np.log1p, math.log1p, "other", math.inf)
        with pytest.raises(ma.SaturationError, match="'s46_log2'.*saturation-name-taken"):
            ma.register_saturation(again)
        assert SATURATIONS["s46_log2"] is LOG2
    with pytest.raises(ma.SaturationError, match="built in"):
        ma.unregister_saturation("cap1")


def test_the_registry_cannot_be_changed_directly():
    sat = Saturation("s46_direct", _log2, _log2_scalar, "ln(1 + 2z)", math.inf)
    attempts = [
        lambda: SATURATIONS.__setitem__("s46_direct", sat),
        lambda: SATURATIONS.__setitem__("cap1", sat),
        lambda: SATURATIONS.__delitem__("cap1"),
        lambda: SATURATIONS.pop("cap1"),
        lambda: SATURATIONS.popitem(),
        lambda: SATURATIONS.update({"s46_direct": sat}),
        lambda: SATURATIONS.setdefault("s46_direct", sat),
        lambda: SATURATIONS.clear(),
    ]
    for attempt in attempts:
        with pytest.raises(MemAuditError, match="register_saturation"):
            attempt()
    with pytest.raises(MemAuditError, match="read-only"):
        registry = ma.SATURATIONS
        registry |= {"s46_direct": sat}
    assert set(SATURATIONS) == BUILTIN
    assert SATURATIONS["cap1"].description == "h(z) = min(1, z)"


def _brute_opt(inst: ma.CompiledInstance, budget: float) -> float:
    """The best F over every store with at most one candidate per group and cost <= budget,
    with h(z) = ln(1 + 2z) written out here rather than read from the registry."""
    cov = inst.coverage.toarray()
    groups = [list(inst.group_slice(g)) for g in range(inst.n_groups)]
    best = 0.0
    for pick in itertools.product(*[[None, *g] for g in groups]):
        chosen = [c for c in pick if c is not None]
        if sum(float(inst.cost[c]) for c in chosen) > budget * (1 + 1e-9):
            continue
        z = cov[chosen].sum(axis=0) if chosen else np.zeros(cov.shape[1])
        best = max(best, float(np.dot(inst.weight, np.log(1.0 + 2.0 * z))))
    return best


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_registered_concave_saturation_gets_a_certified_optimum_equal_to_brute_force(seed):
    data = package_to_dict(generate("random_coverage", seed=seed, n_groups=6))
    data["objective"] = {"saturation": "s46_log2"}
    with registered_saturation(LOG2):
        assert "s46_log2" in ma.SATURATIONS
        inst = ma.compile_package(parse_package(data))
        assert inst.group_capacity == 1
        for budget in (2.0, 5.0, 9.0):
            expected = _brute_opt(inst, budget)
            for solver in ("bnb", "auto"):
                res = ma.solve(inst, budget, solver=solver)
                assert res.certified and res.label == "OPT"
                assert res.value == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_the_qa_package_under_a_registered_saturation_is_solved_exactly():
    with registered_saturation(LOG2):
        inst = ma.compile_package(_repro_package(6, "s46_log2"))
        for budget in (2.0, 4.0, 7.0):
            res = ma.solve(inst, budget, solver="bnb")
            assert res.certified
            assert res.value == pytest.approx(_brute_opt(inst, budget), rel=1e-9)


def test_workers_know_a_registered_saturation():
    """Pool workers start from a fresh import: they used to call the saturation unknown."""
    data = package_to_dict(generate("random_coverage", seed=4, n_groups=6))
    data["objective"] = {"saturation": "s46_log2"}
    budgets = [2.0, 4.0, 6.0, 9.0]
    with registered_saturation(LOG2):
        inst = ma.compile_package(parse_package(data))
        res = ma.solve_budgets(inst, budgets, solver="bnb", workers=2)
        assert [r.value for r in res] == pytest.approx(
            [_brute_opt(inst, b) for b in budgets], rel=1e-9
        )


def test_a_package_reaching_past_the_checked_range_is_checked_on_its_own():
    """h is concave on [0, 1e6] (what registration checks) and convex past 2e6: a package
    whose units can collect more coverage has its own range checked when compiled."""

    def late(z):
        z = np.asarray(z, dtype=np.float64)
        return z + np.maximum(0.0, z - 2e6) ** 2

    def late_scalar(z):
        return z + max(0.0, z - 2e6) ** 2

    from memaudit_core.saturations import check_saturation_range

    with registered_saturation(Saturation("s46_late", late, late_scalar, "late", math.inf)):
        check_saturation_range("s46_late", 10.0)  # within the range already checked
        with pytest.raises(ma.SaturationError, match=r"'s46_late'.*rule: concave"):
            check_saturation_range("s46_late", 4e6)
