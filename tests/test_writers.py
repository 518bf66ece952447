"""Reference writers: feasibility, exact tie rules, and the paper's published ratios.

Two independent oracles are used:

- plain-Python *reference writers* below, written straight from DESIGN.md section 6 with exact
  ``Fraction`` arithmetic (so every tie is a true tie), compared selection-for-selection with
  :mod:`memaudit_core.writers` on random packages;
- an exhaustive enumeration of every feasible store (``_opt_curve``), vectorised with numpy so a
  whole budget range costs one pass, and the brute-force solver on random small packages.
"""

from __future__ import annotations

import itertools
import random
import re
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from package_utils import rescaled

from memaudit_core import writers as W
from memaudit_core.analysis import sweep
from memaudit_core.compiled import budget_with_tolerance, compile_package
from memaudit_core.errors import MemAuditError, UnknownNameError
from memaudit_core.generators import generate
from memaudit_core.objective import CoverageState, evaluate
from memaudit_core.package import VALIDITY_TYPES, Package, parse_package, replace_package
from memaudit_core.solvers.brute import brute_force
from memaudit_core.solvers.enum import tie_tol, tied
from memaudit_core.writers import WRITERS, WriterResult, get_writer, run_writer, run_writers

ALL_WRITERS = list(WRITERS)
TYPES = ["raw_span", "atomic_fact", "summary", "tombstone", "compound_update"]


# --------------------------------------------------------------------------- package builders


def make_package(experiences, candidates, units, pid="t") -> Package:
    """experiences: [(id, time)]; candidates: [(id, exp, type, cost, {unit: a})];
    units: {unit: weight}."""
    return parse_package(
        {
            "memaudit": 1,
            "id": pid,
            "experiences": [{"id": e, "time": t} for e, t in experiences],
            "units": [{"id": u, "kind": "fact", "weight": w} for u, w in units.items()],
            "candidates": [
                {"id": c, "experience": e, "type": ty, "cost": cost, "coverage": cov}
                for c, e, ty, cost, cov in candidates
            ],
        }
    )


def random_package(rng: random.Random) -> Package:
    """Small packages full of ties: integer costs, coverage and weights on a 0.25 grid,
    equal experience times, and ids whose order differs from arrival order."""
    n_units = rng.randint(1, 4)
    units = {f"r{k}": rng.choice([0, 0.5, 1, 1, 1.5, 2]) for k in range(n_units)}
    experiences = []
    candidates = []
    letters = list("qwertyuiopasdfgh")
    rng.shuffle(letters)
    for g in range(rng.randint(1, 4)):
        exp = f"{letters[g]}{g}"
        experiences.append((exp, rng.randint(0, 2)))
        for k in range(rng.randint(1, 3)):
            cov = {u: rng.choice([0.25, 0.5, 0.75, 1.0]) for u in units if rng.random() < 0.6}
            candidates.append(
                (
                    f"{exp}_{rng.choice('abc')}{k}",
                    exp,
                    rng.choice(TYPES),
                    rng.choice([1, 1, 2, 3, 4]),
                    cov,
                )
            )
    return make_package(experiences, candidates, units)


# --------------------------------------------------------------------------- Fraction reference


class Ref:
    """Exact reference writers over a Package (DESIGN.md section 6, read literally)."""

    def __init__(self, pkg: Package):
        self.w = {u: Fraction(x).limit_denominator() for u, x in pkg.unit_weights().items()}
        exps = sorted(pkg.experiences, key=lambda e: (e.time, e.id))
        self.time = {e.id: e.time for e in pkg.experiences}
        self.cands = {c.id: c for c in pkg.candidates}
        self.cost = {c.id: Fraction(c.cost).limit_denominator() for c in pkg.candidates}
        self.cov = {
            c.id: {u: Fraction(a).limit_denominator() for u, a in c.coverage.items()}
            for c in pkg.candidates
        }
        self.groups = [
            sorted(
                (c.id for c in pkg.candidates if c.experience == e.id),
                key=lambda c: (self.cost[c], c),
            )
            for e in exps
        ]

    def F(self, sel) -> Fraction:
        z: dict[str, Fraction] = {}
        for c in sel:
            for u, a in self.cov[c].items():
                z[u] = z.get(u, 0) + a
        return sum((self.w[u] * min(Fraction(1), zu) for u, zu in z.items()), Fraction(0))

    def gain(self, sel, c) -> Fraction:
        return self.F([*sel, c]) - self.F(sel)

    def gvt(self, budget, allowed=lambda c: True):
        B = Fraction(budget).limit_denominator()
        thresholds = sorted(
            {self.F([c]) / self.cost[c] for c in self.cands if self.cost[c] <= B and allowed(c)}
            | {Fraction(0)},
            reverse=True,
        )
        best = None
        for t_idx, tau in enumerate(thresholds):
            sel, spent = [], Fraction(0)
            for group in self.groups:
                adm = []
                for c in group:
                    g = self.gain(sel, c)
                    if (
                        allowed(c)
                        and spent + self.cost[c] <= B
                        and g > 0
                        and g / self.cost[c] >= tau
                    ):
                        adm.append((-g, self.cost[c], c))
                if adm:
                    c = min(adm)[2]
                    sel.append(c)
                    spent += self.cost[c]
            key = (-self.F(sel), spent, t_idx)
            if best is None or key < best[0]:
                best = (key, sel)
        return sorted(best[1])

    def density(self, budget):
        B = Fraction(budget).limit_denominator()
        sel, spent = [], Fraction(0)
        for group in self.groups:
            adm = []
            for c in group:
                g = self.gain(sel, c)
                if spent + self.cost[c] <= B and g > 0:
                    adm.append((-g / self.cost[c], -g, self.cost[c], c))
            if adm:
                c = min(adm)[3]
                sel.append(c)
                spent += self.cost[c]
        return sorted(sel)

    def greedy(self, budget, types=None):
        B = Fraction(budget).limit_denominator()
        sel, spent, used = [], Fraction(0), set()
        while True:
            adm = []
            for c, cand in self.cands.items():
                if cand.experience in used or (types and cand.type not in types):
                    continue
                g = self.gain(sel, c)
                if spent + self.cost[c] <= B and g > 0:
                    adm.append((-g / self.cost[c], -g, self.cost[c], c))
            if not adm:
                return sorted(sel)
            c = min(adm)[3]
            sel.append(c)
            spent += self.cost[c]
            used.add(self.cands[c].experience)

    def recency_raw(self, budget):
        B = Fraction(budget).limit_denominator()
        raw = [c for c, cand in self.cands.items() if cand.type == "raw_span"]
        raw.sort(key=lambda c: (-self.time[self.cands[c].experience], self.cost[c], c))
        sel, spent, used = [], Fraction(0), set()
        for c in raw:
            exp = self.cands[c].experience
            if exp in used or spent + self.cost[c] > B or self.gain(sel, c) <= 0:
                continue
            sel.append(c)
            spent += self.cost[c]
            used.add(exp)
        return sorted(sel)

    def run(self, name, budget):
        if name == "gvt":
            return self.gvt(budget)
        if name == "no_validity_gvt":
            return self.gvt(budget, lambda c: self.cands[c].type not in VALIDITY_TYPES)
        if name == "density":
            return self.density(budget)
        if name == "greedy":
            return self.greedy(budget)
        if name == "fact_only":
            return self.greedy(budget, {"atomic_fact"})
        if name == "summary_only":
            return self.greedy(budget, {"summary"})
        if name == "recency_raw":
            return self.recency_raw(budget)
        raise AssertionError(name)


# --------------------------------------------------------------------------- exhaustive oracle


def _opt_curve(inst):
    """(cost, value) of every store with at most one candidate per group (numpy enumeration)."""
    options = [[-1, *inst.group_slice(g)] for g in range(inst.n_groups)]
    combos = np.array(list(itertools.product(*options)), dtype=np.int64)
    dense = np.vstack([inst.coverage.toarray(), np.zeros((1, inst.n_units))])
    cost = np.append(inst.cost, 0.0)
    z = dense[combos].sum(axis=1)
    values = (np.minimum(1.0, z) * inst.weight).sum(axis=1)
    return cost[combos].sum(axis=1), values


def _opt(curve, budget, tol=1e-9):
    costs, values = curve
    return float(values[costs <= budget + tol].max())


# --------------------------------------------------------------------------- registry / API


def test_registry_entries_are_oracle_writers():
    assert ALL_WRITERS == [
        "gvt",
        "density",
        "greedy",
        "fact_only",
        "summary_only",
        "recency_raw",
        "no_validity_gvt",
    ]
    for name, info in WRITERS.items():
        assert info.name == name and info.kind == "oracle" and info.description


def test_unknown_writer_lists_known_names():
    inst = compile_package(generate("update_chain"))
    with pytest.raises(UnknownNameError) as exc:
        run_writer("gtv", inst, 3)
    assert "gvt" in str(exc.value) and "recency_raw" in str(exc.value)
    with pytest.raises(UnknownNameError):
        get_writer("nope")


@pytest.mark.parametrize("budget", [-1, float("nan"), float("inf"), "six"])
def test_bad_budget_is_a_user_error(budget):
    inst = compile_package(generate("update_chain"))
    with pytest.raises(MemAuditError):
        run_writer("gvt", inst, budget)


def test_writer_result_fields_and_to_dict():
    inst = compile_package(generate("update_chain"))
    res = run_writer("gvt", inst, 6)
    assert isinstance(res, WriterResult)
    assert res.selected_idx == tuple(sorted(res.selected_idx))
    assert res.selected == inst.ids(res.selected_idx)
    assert res.value == pytest.approx(evaluate(inst, list(res.selected_idx)))
    assert res.cost == pytest.approx(inst.selection_cost(list(res.selected_idx)))
    d = res.to_dict()
    assert d["writer"] == "gvt" and d["budget"] == 6.0 and d["selected"] == list(res.selected)


# --------------------------------------------------------------------------- random packages


def _check_against_oracles(pkg: Package, budget: float) -> None:
    inst = compile_package(pkg)
    ref = Ref(pkg)
    opt, _ = brute_force(inst, budget)
    for name in ALL_WRITERS:
        res = run_writer(name, inst, budget)
        assert inst.is_feasible(list(res.selected_idx), budget), name
        assert res.value <= opt + 1e-9, name
        assert sorted(res.selected) == ref.run(name, budget), (name, budget)


def test_writers_match_exact_reference_on_random_packages():
    rng = random.Random(20261130)
    for _ in range(80):
        pkg = random_package(rng)
        for budget in (0, 1, 2, 3, 5, 8):
            _check_against_oracles(pkg, budget)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), budget=st.integers(0, 12))
def test_writers_match_reference_property(seed, budget):
    _check_against_oracles(random_package(random.Random(seed)), budget)


def test_group_capacity_two_is_respected():
    rng = random.Random(7)
    for _ in range(60):
        inst = compile_package(random_package(rng)).with_capacity(2)
        for budget in (2, 4, 7):
            opt, _ = brute_force(inst, budget)
            for name in ALL_WRITERS:
                res = run_writer(name, inst, budget)
                assert inst.is_feasible(list(res.selected_idx), budget), name
                assert res.value <= opt + 1e-9


@pytest.mark.parametrize("family", ["memaudit-small", "update_chain", "temporal_interval"])
def test_families_feasible_and_below_opt_for_budgets_0_to_20(family):
    inst = compile_package(generate(family, seed=11))
    curve = _opt_curve(inst)
    for budget in range(21):
        opt = _opt(curve, budget)
        for name in ALL_WRITERS:
            res = run_writer(name, inst, budget)
            assert inst.is_feasible(list(res.selected_idx), budget), (name, budget)
            assert res.value <= opt + 1e-9, (name, budget)
            assert res.cost <= budget + 1e-9


# --------------------------------------------------------------------------- hand-built tie rules


def _sel(pkg, name, budget):
    """Selected ids in alphabetical order (``selected`` itself follows arrival order)."""
    return tuple(sorted(run_writer(name, compile_package(pkg), budget).selected))


def test_gvt_prefers_larger_gain_over_density_once_admissible():
    # One experience: cheap narrow fact (density 1) vs broader raw span (gain 3, density 0.75).
    pkg = make_package(
        [("e", 0)],
        [
            ("e_fact", "e", "atomic_fact", 1, {"a": 1}),
            ("e_raw", "e", "raw_span", 4, {"a": 1, "b": 1, "c": 1}),
        ],
        {"a": 1, "b": 1, "c": 1},
    )
    assert _sel(pkg, "gvt", 4) == ("e_raw",)
    assert _sel(pkg, "density", 4) == ("e_fact",)
    assert _sel(pkg, "gvt", 3) == ("e_fact",)  # the raw span does not fit


def test_gvt_gain_tie_goes_to_lower_cost_then_smaller_id():
    pkg = make_package(
        [("e", 0)],
        [("e_a", "e", "summary", 2, {"a": 1}), ("e_b", "e", "atomic_fact", 1, {"a": 1})],
        {"a": 1},
    )
    assert _sel(pkg, "gvt", 5) == ("e_b",)
    twins = make_package(
        [("e", 0)],
        [("e_y", "e", "atomic_fact", 1, {"a": 1}), ("e_x", "e", "summary", 1, {"a": 1})],
        {"a": 1},
    )
    for name in ("gvt", "density", "greedy"):
        assert _sel(twins, name, 5) == ("e_x",), name


def test_gvt_keeps_best_pass_not_first_pass():
    # Threshold 1 (from q) skips p (density 0.5) and later takes q: F = 1.
    # Threshold 0.5 takes p first, then q still adds r2: F = 2.
    pkg = make_package(
        [("e1", 0), ("e2", 1)],
        [("e1_p", "e1", "raw_span", 2, {"r1": 1}), ("e2_q", "e2", "atomic_fact", 1, {"r2": 1})],
        {"r1": 1, "r2": 1},
    )
    assert _sel(pkg, "gvt", 3) == ("e1_p", "e2_q")


def test_gvt_equal_value_passes_prefer_lower_cost():
    # Threshold 1 (from q): skips p (density 0.5), takes q: F = 1, cost 1.
    # Threshold 0.5: takes p (F = 1, cost 2); q then adds nothing. Equal F -> the cheaper pass.
    pkg = make_package(
        [("e1", 0), ("e2", 1)],
        [("e1_p", "e1", "raw_span", 2, {"r": 1}), ("e2_q", "e2", "atomic_fact", 1, {"r": 1})],
        {"r": 1},
    )
    res = run_writer("gvt", compile_package(pkg), 3)
    assert res.selected == ("e2_q",) and res.cost == 1


def _gvt_one_pass_per_threshold(inst, budget):
    """GVT read literally in floats: one full pass per threshold, gains from CoverageState.

    Independent of the writers' shared decision tree and of its group skipping; it shares
    only the tie primitives (the solvers' shared :func:`~memaudit_core.solvers.enum.tied`,
    :func:`_beats`) and the budget tolerance.
    """
    limit = budget_with_tolerance(budget)
    single = CoverageState(inst).gains()
    fits = inst.cost <= limit
    thresholds = []
    for t in sorted((single[fits] / inst.cost[fits]).tolist(), reverse=True) + [0.0]:
        if t >= 0.0 and (not thresholds or not tied(thresholds[-1], t)):
            thresholds.append(t)
    best = None
    for t_idx, tau in enumerate(thresholds):
        state, spent, picked = CoverageState(inst), 0.0, []
        for g in range(inst.n_groups):
            lo, hi = int(inst.group_start[g]), int(inst.group_start[g + 1])
            for _ in range(min(inst.group_capacity, hi - lo)):
                gains = state.gains()
                choice = None
                for i in range(lo, hi):
                    gain, cost = float(gains[i]), float(inst.cost[i])
                    if (
                        i in picked
                        or gain <= W.GAIN_EPS
                        or spent + cost > limit
                        or gain / cost < tau - tie_tol(tau)
                    ):
                        continue
                    if choice is None or W._beats((gain, -cost), choice[:2]):
                        choice = (gain, -cost, i)
                if choice is None:
                    break
                state.add(choice[2])
                spent += inst.cost[choice[2]]
                picked.append(choice[2])
        value = evaluate(inst, picked)
        if (
            best is None
            or (value > best[0] and not tied(value, best[0]))
            or (tied(value, best[0]) and (spent, t_idx) < (best[1], best[2]))
        ):
            best = (value, spent, t_idx, tuple(sorted(picked)))
    return best[3]


@pytest.mark.parametrize("walk", ["depth_first", "breadth_first"])
@pytest.mark.parametrize("saturation", ["cap1", "linear", "log1p"])
@pytest.mark.parametrize("capacity", [1, 2])
@pytest.mark.parametrize(
    "family, params",
    [("event_graph", {"n_experiences": 40}), ("random_coverage", {"n_groups": 12})],
)
def test_gvt_tree_equals_one_pass_per_threshold(
    family, params, saturation, capacity, walk, monkeypatch
):
    # Sizes where the tree shares and skips many groups; ids differ from arrival order. Both
    # walks of the tree (depth first in Python, all stores of a group at once in numpy).
    monkeypatch.setattr(W, "_GVT_WALK", walk)
    pkg = replace_package(generate(family, seed=3, **params), saturation=saturation)
    inst = compile_package(pkg).with_capacity(capacity)
    budgets = [1.0, pkg.budget / 2, pkg.budget, inst.total_cost / 3, inst.total_cost]
    many = W._gvt_many(inst, budgets)
    for budget, picked in zip(budgets, many, strict=True):
        assert picked == _gvt_one_pass_per_threshold(inst, budget), budget


@pytest.mark.parametrize("route", ["many_passes", "handover"])
def test_gvt_auto_walks_a_wide_tree_breadth_first(route, monkeypatch):
    # An event graph of 1,000 experiences has 652 thresholds per budget and keeps about 28
    # stores apart per group. "auto" walks it breadth first from the start (many passes) or,
    # with the pass rule out of reach and a low width limit, gives up the depth-first walk
    # part way and starts the breadth-first one afresh (handover). Either way its picks must
    # equal a full depth-first walk at every budget of a sweep (several budgets per store).
    inst = compile_package(generate("event_graph", seed=2, n_experiences=1000))
    budgets = [inst.total_cost * f for f in (0.05, 0.1, 0.2, 0.3)]
    breadth, depth_nodes, handed = W._gvt_breadth, [], []

    def counted(*args):
        handed.append(1)
        return breadth(*args)

    monkeypatch.setattr(W, "_gvt_breadth", counted)
    monkeypatch.setattr(W, "beat", lambda: depth_nodes.append(1))  # every 64 tree nodes
    if route == "handover":
        monkeypatch.setattr(W, "_GVT_BREADTH_MIN_PASSES", 10**9)
        monkeypatch.setattr(W, "_GVT_WIDE_NODES_PER_GROUP", 6)
    auto = W._gvt_many(inst, budgets)
    assert handed == [1]
    tree_beats = len(depth_nodes) - -(-inst.n_groups // 64)  # less the breadth walk's beats
    assert (tree_beats > 0) == (route == "handover")
    monkeypatch.setattr(W, "_GVT_WALK", "depth_first")
    assert auto == W._gvt_many(inst, budgets)


def test_density_tie_on_density_goes_to_larger_gain():
    pkg = make_package(
        [("e", 0)],
        [
            ("e_small", "e", "atomic_fact", 1, {"a": 1}),
            ("e_big", "e", "summary", 2, {"a": 1, "b": 1}),
        ],
        {"a": 1, "b": 1},
    )
    assert _sel(pkg, "density", 2) == ("e_big",)


def test_greedy_density_tie_goes_to_larger_gain_then_smaller_id():
    # Equal density across groups: the larger gain first (then nothing else fits).
    pkg = make_package(
        [("e1", 0), ("e2", 1)],
        [
            ("e1_s", "e1", "atomic_fact", 1, {"a": 1}),
            ("e2_b", "e2", "summary", 2, {"b": 1, "c": 1}),
        ],
        {"a": 1, "b": 1, "c": 1},
    )
    assert _sel(pkg, "greedy", 2) == ("e2_b",)
    # Full tie across groups: smaller candidate id wins even though it arrives later.
    pkg = make_package(
        [("e1", 0), ("e2", 1)],
        [
            ("z_late", "e1", "atomic_fact", 1, {"a": 1}),
            ("a_late", "e2", "atomic_fact", 1, {"b": 1}),
        ],
        {"a": 1, "b": 1},
    )
    assert _sel(pkg, "greedy", 1) == ("a_late",)


def test_fact_only_and_summary_only_restrict_types():
    pkg = make_package(
        [("e1", 0), ("e2", 1)],
        [
            ("e1_f", "e1", "atomic_fact", 1, {"a": 1}),
            ("e1_s", "e1", "summary", 1, {"a": 1, "b": 1}),
            ("e2_t", "e2", "tombstone", 1, {"c": 1}),
        ],
        {"a": 1, "b": 1, "c": 5},
    )
    assert _sel(pkg, "fact_only", 5) == ("e1_f",)
    assert _sel(pkg, "summary_only", 5) == ("e1_s",)
    assert _sel(pkg, "greedy", 5) == ("e1_s", "e2_t")


def test_recency_raw_order_newest_then_cheaper_then_id():
    pkg = make_package(
        [("old", 0), ("mid_b", 1), ("mid_a", 1), ("new", 2)],
        [
            ("old_raw", "old", "raw_span", 1, {"o": 1}),
            ("mid_b_raw", "mid_b", "raw_span", 2, {"b": 1}),
            ("mid_a_raw", "mid_a", "raw_span", 2, {"a": 1}),
            ("new_raw", "new", "raw_span", 3, {"n": 1}),
            ("new_fact", "new", "atomic_fact", 1, {"n": 1, "x": 1}),
        ],
        {"o": 1, "a": 1, "b": 1, "n": 1, "x": 1},
    )
    # Budget 5: new_raw (3), then the time-1 tie: same cost -> smaller id mid_a (2). Full.
    assert _sel(pkg, "recency_raw", 5) == ("mid_a_raw", "new_raw")
    # Budget 6: mid_b (2) no longer fits after 5 spent, but old_raw (1) does: add if it fits.
    assert _sel(pkg, "recency_raw", 6) == ("mid_a_raw", "new_raw", "old_raw")
    # A cheaper tie at equal time goes first.
    cheap = make_package(
        [("x", 1), ("y", 1)],
        [("x_raw", "x", "raw_span", 2, {"a": 1}), ("y_raw", "y", "raw_span", 1, {"b": 1})],
        {"a": 1, "b": 1},
    )
    assert _sel(cheap, "recency_raw", 2) == ("y_raw",)


def test_zero_gain_candidates_are_never_taken():
    pkg = make_package(
        [("e1", 0), ("e2", 1), ("e3", 2)],
        [
            ("e1_raw", "e1", "raw_span", 1, {"a": 1}),
            ("e2_raw", "e2", "raw_span", 1, {"a": 1}),  # redundant once e1 or e3 is kept
            ("e3_raw", "e3", "raw_span", 1, {"a": 1}),
            ("e2_zero", "e2", "atomic_fact", 1, {"w0": 1}),  # covers only a zero-weight unit
            ("e3_empty", "e3", "summary", 1, {}),
        ],
        {"a": 1, "w0": 0},
    )
    inst = compile_package(pkg)
    for name in ALL_WRITERS:
        res = run_writer(name, inst, 10)
        if name in ("fact_only", "summary_only"):
            assert res.selected == (), name  # their only candidates add nothing
        else:
            assert len(res.selected) == 1, (name, res.selected)
            assert res.value == pytest.approx(1.0)
    assert run_writer("recency_raw", inst, 10).selected == ("e3_raw",)


def test_candidates_costlier_than_budget_are_never_taken():
    pkg = make_package(
        [("e", 0)],
        [("e_raw", "e", "raw_span", 5, {"a": 1})],
        {"a": 1},
    )
    inst = compile_package(pkg)
    for name in ALL_WRITERS:
        assert run_writer(name, inst, 4.999).selected == ()
        assert run_writer(name, inst, 0).selected == ()


def test_budget_tolerance_is_relative_1e9():
    pkg = make_package(
        [("e1", 0), ("e2", 1)],
        [
            ("e1_a", "e1", "atomic_fact", 0.1, {"a": 1}),
            ("e2_b", "e2", "atomic_fact", 0.2, {"b": 1}),
        ],
        {"a": 1, "b": 1},
    )
    for name in ("gvt", "density", "greedy", "fact_only"):
        assert _sel(pkg, name, 0.3) == ("e1_a", "e2_b"), name  # 0.1 + 0.2 > 0.3 in floats


def test_no_validity_gvt_maps_back_to_full_positions():
    inst = compile_package(generate("update_chain"))
    res = run_writer("no_validity_gvt", inst, 13)
    assert all(inst.candidate_types[i] not in VALIDITY_TYPES for i in res.selected_idx)
    pool = inst.pool_instance("no_validity")
    assert res.value == pytest.approx(run_writer("gvt", pool, 13).value)


# --------------------------------------------------------------------------- published values

PUBLISHED = {
    # family, budget: (OPT, gvt, density, no_validity_opt)
    ("update_chain", 3): (5.55, "1.000", "0.351", "0.486"),
    ("update_chain", 6): (7.735, "1.000", "0.730", "0.513"),
    ("update_chain", 13): (8.025, "1.000", "0.704", "0.698"),
    ("temporal_interval", 3): (3.2, "1.000", "0.914", "0.656"),
    ("temporal_interval", 6): (6.0, "1.000", "0.662", "0.700"),
    ("temporal_interval", 13): (10.635, "0.905", "0.924", "0.831"),
}


@pytest.mark.parametrize(("family", "budget"), sorted(PUBLISHED))
def test_published_controlled_ratios(family, budget):
    opt_pub, gvt_pub, density_pub, nv_pub = PUBLISHED[(family, budget)]
    inst = compile_package(generate(family))
    opt = _opt(_opt_curve(inst), budget)
    assert opt == pytest.approx(opt_pub, abs=1e-9)
    assert f"{run_writer('gvt', inst, budget).value / opt:.3f}" == gvt_pub
    assert f"{run_writer('density', inst, budget).value / opt:.3f}" == density_pub
    nv = _opt(_opt_curve(inst.pool_instance("no_validity")), budget)
    assert f"{nv / opt:.3f}" == nv_pub


def test_published_memaudit_small_means_over_500_seeds():
    packages = [generate("memaudit-small", seed=s) for s in range(500)]
    res = sweep(packages, [6], ["gvt", "density"], ablations=["no_validity_opt"])
    means = {s.method: s for s in res.summary}
    assert [s.method for s in res.summary] == ["gvt", "density", "no_validity_opt"]
    for method, published in (("gvt", "1.000"), ("density", "0.398"), ("no_validity_opt", "0.650")):
        row = means[method]
        assert row.n + row.n_undefined == 500
        assert f"{row.mean_ratio:.3f}" == published, method
    assert all(r.certified for r in res.rows)


@pytest.mark.parametrize(
    "family,params",
    [
        ("event_graph", {"n_experiences": 400}),
        ("random_coverage", {"n_groups": 120}),
        ("temporal_interval", {}),
        ("memaudit-small", {}),
    ],
)
@pytest.mark.parametrize("seed", [0, 3])
def test_greedy_rows_updating_changed_gains_equals_full_passes(monkeypatch, family, params, seed):
    """The greedy rows' incremental gains give the very picks of a full pass at every step."""
    pkg = generate(family, seed=seed, **params)
    inst = compile_package(pkg)
    prep = W._prep(inst)
    budgets = sorted(set(pkg.budget_grid()) | {pkg.default_budget()})
    pools = [None, prep.types == "atomic_fact", prep.types != "raw_span"]
    rows = [(b, pool) for b in budgets for pool in pools]

    def picks(min_entries):
        monkeypatch.setattr(W, "GREEDY_INCREMENTAL_MIN_ENTRIES", min_entries)
        # The vectorised path (large event graphs would take the heap path by default).
        return W._greedy_rows(inst, [b for b, _ in rows], [p for _, p in rows], heap=False)

    incremental, full = picks(0), picks(10**12)
    assert incremental == full
    assert any(incremental)


@pytest.mark.parametrize(("weight_scale", "cost_scale"), [(1e-12, 1.0), (1.0, 1e-12), (1e30, 1e30)])
def test_reference_writers_pick_the_same_stores_in_any_units(weight_scale, cost_scale):
    """Weights of 1e-12 made every gain look like zero (<= 1e-12): writers kept nothing."""
    pkg = generate("temporal_interval")
    inst, inst_s = compile_package(pkg), compile_package(rescaled(pkg, weight_scale, cost_scale))
    names = ALL_WRITERS
    for b in (3.0, 8.0, 13.0):
        for name in names:
            plain = run_writer(name, inst, b)
            scaled = run_writer(name, inst_s, b * cost_scale)
            assert scaled.selected == plain.selected, (name, b)
            assert scaled.value == pytest.approx(plain.value * weight_scale, rel=1e-9)
    bulk = run_writers(names, inst_s, [b * cost_scale for b in (3.0, 8.0, 13.0)])
    for name in names:
        assert [r.selected for r in bulk[name]] == [
            run_writer(name, inst, b).selected for b in (3.0, 8.0, 13.0)
        ], name


# --------------------------------------------------------------------------- writers users register


@pytest.fixture
def own_writer():
    """Register writers for one test and remove them afterwards (WRITERS is process-wide)."""
    added: list[str] = []

    def register(name, fn, **kw):
        W.register_writer(W.WriterInfo(name, "test writer", "oracle", fn), **kw)
        added.append(name)

    yield register
    for name in added:
        dict.pop(WRITERS, name, None)


def test_register_writer_refuses_taken_names_and_bad_records(own_writer):
    with pytest.raises(MemAuditError, match="'gvt' is taken by a reference writer"):
        W.register_writer(W.WriterInfo("gvt", "mine", "oracle", lambda inst, b: ()))
    assert get_writer("gvt") is W.BUILTIN_WRITERS["gvt"]
    for bad, match in [
        (W.WriterInfo(None, "x", "oracle", lambda i, b: ()), "non-empty string"),
        (W.WriterInfo("x1", "x", "whatever", lambda i, b: ()), "kind must be one of"),
        (W.WriterInfo("x2", "x", "oracle", "not callable"), "must be callable"),
    ]:
        with pytest.raises(MemAuditError, match=match):
            W.register_writer(bad)
    own_writer("mine_twice", lambda inst, b: ())
    with pytest.raises(MemAuditError, match="already registered"):
        W.register_writer(W.WriterInfo("mine_twice", "again", "oracle", lambda inst, b: ()))
    own_writer("mine_twice", lambda inst, b: (0,), replace=True)  # on purpose: allowed
    assert run_writer("mine_twice", compile_package(generate("update_chain")), 50).selected_idx == (
        0,
    )


@pytest.mark.parametrize(
    ("fn", "match"),
    [
        (lambda inst, b: 1 / 0, "raised ZeroDivisionError"),
        (lambda inst, b: None, "must return a list of candidate positions.*got NoneType None"),
        (lambda inst, b: ["version_0_atomic_fact"], "must return candidate positions"),
        (lambda inst, b: [999], "position 999, outside 0..17"),
        (lambda inst, b: [True], "must return candidate positions"),
        (lambda inst, b: [3, 3], "more than once"),
        (lambda inst, b: list(range(inst.n_candidates)), "holds .* candidates of experience"),
    ],
)
def test_a_registered_writer_that_fails_raises_a_writer_error(own_writer, fn, match):
    """Library QA: raw RuntimeError / IndexError / TypeError escaped and aborted sweeps."""
    own_writer("mine_failing", fn)
    inst = compile_package(generate("update_chain"))
    with pytest.raises(W.WriterError, match=match):
        run_writer("mine_failing", inst, 100)
    [entry] = run_writers(["mine_failing"], inst, [100])["mine_failing"]
    assert isinstance(entry, W.WriterError) and re.search(match, str(entry))
    result = sweep([generate("update_chain")], [100], ["gvt", "mine_failing"])
    assert [e.writer for e in result.errors] == ["mine_failing"]
    assert {r.method for r in result.rows} == {"gvt"}


def test_numpy_positions_are_accepted(own_writer):
    own_writer("mine_numpy", lambda inst, b: np.array([0, 3]))
    res = run_writer("mine_numpy", compile_package(generate("update_chain")), 100)
    assert res.selected_idx == (0, 3)


def test_overview_lists_a_failing_writer_and_keeps_the_others(own_writer):
    from memaudit_core.reports import overview

    own_writer("mine_overview_boom", lambda inst, b: 1 / 0)
    ov = overview(generate("update_chain"), 6)
    assert [name for name, _ in ov.writer_errors] == ["mine_overview_boom"]
    assert "ZeroDivisionError" in ov.writer_errors[0][1]
    assert {e.writer for e in ov.evaluations} >= {"gvt", "density"}


def test_registering_the_same_own_writer_twice_says_so(own_writer):
    own_writer("mine_cell", lambda inst, b: ())
    with pytest.raises(MemAuditError, match="already registered: pass replace=True"):
        W.register_writer(W.WriterInfo("mine_cell", "again", "oracle", lambda inst, b: ()))


def test_the_many_budget_gvt_tree_beats_for_the_progress_bar():
    """App QA: a 58-budget sweep of a large package ran its writers for 28-38 s without one
    progress call, so Streamlit's Stop could not act."""
    from memaudit_core.heartbeat import heartbeat
    from memaudit_core.writers import _gvt_many

    inst = compile_package(generate("random_coverage", 0, n_groups=40))
    budgets = [float(b) for b in range(5, 60, 5)]
    calls = []
    with heartbeat(lambda: calls.append(1), interval=0.0):
        picked = _gvt_many(inst, budgets)
    assert len(calls) >= 1
    assert picked == _gvt_many(inst, budgets)  # the hook changes nothing


def test_sweep_package_forwards_writer_heartbeats_to_progress(monkeypatch):
    import time

    from memaudit_core import analysis
    from memaudit_core.heartbeat import beat

    real = analysis.run_writers

    def slow_writers(*args, **kwargs):
        time.sleep(0.3)  # past the heartbeat's 0.25 s interval
        beat()
        return real(*args, **kwargs)

    monkeypatch.setattr(analysis, "run_writers", slow_writers)
    ticks = []
    analysis.sweep_package(
        generate("update_chain"), [3.0, 6.0], ["gvt"], progress=lambda d, n: ticks.append((d, n))
    )
    assert ticks[0] == (0, 2) and ticks[-1] == (2, 2)


# Ties within 1e-12 are ties (mutation testing: every other tie here is exact in floats).
def _one_group(x_cov, y_cov):
    units = sorted({*x_cov, *y_cov})
    return parse_package(
        {
            "memaudit": 1,
            "id": "float-tie",
            "experiences": [{"id": "e", "time": 0}],
            "units": [{"id": u, "kind": "fact", "weight": 1.0} for u in units],
            "candidates": [
                # "b_x" covers 0.1 + 0.2 = 0.30000000000000004 in floats; "a_y" covers 0.3.
                {
                    "id": "b_x",
                    "experience": "e",
                    "type": "atomic_fact",
                    "cost": 1,
                    "coverage": x_cov,
                },
                {
                    "id": "a_y",
                    "experience": "e",
                    "type": "atomic_fact",
                    "cost": 1,
                    "coverage": y_cov,
                },
            ],
        }
    )


def test_density_treats_a_one_ulp_difference_as_a_tie_and_takes_the_smaller_id():
    assert 0.1 + 0.2 != 0.3  # the premise: the float gains differ
    pkg = _one_group({"u1": 0.1, "u2": 0.2}, {"u3": 0.3})
    inst = compile_package(pkg)
    # Equal density, gain and cost in exact arithmetic: the tie goes to the smaller id.
    for writer in ("density", "greedy", "gvt"):
        assert run_writer(writer, inst, 1).selected == ("a_y",), writer


# GVT pass tie rule: "tie: lower cost, then earlier threshold" when the earlier pass
# costs more (mutation testing). The expected store is an exact Fraction reading of DESIGN.md.
# (id, experience, cost, coverage); experiences (id, time); unit weights.
GVT_TIE_CANDS = [
    ("e0_c0", "e0", 2, {"r0": 0.75, "r2": 0.5}),
    ("e0_c1", "e0", 2, {"r1": 0.25}),
    ("e0_b2", "e0", 4, {"r0": 0.25, "r1": 1.0, "r2": 0.5}),
    ("w1_a0", "w1", 1, {"r2": 1.0}),
    ("w1_a1", "w1", 4, {"r0": 0.25, "r1": 0.75, "r2": 0.25}),
    ("w1_c2", "w1", 1, {"r0": 0.75, "r1": 0.5}),
    ("q2_a0", "q2", 1, {"r1": 0.5}),
    ("q2_a1", "q2", 4, {"r0": 0.5}),
]
GVT_TIE_EXPS = [("e0", 2), ("w1", 2), ("q2", 0)]
GVT_TIE_WEIGHTS = {"r0": 0.5, "r1": 0.5, "r2": 2.0}


def _gvt_tie_package():
    return parse_package(
        {
            "memaudit": 1,
            "id": "gvt-pass-tie",
            "experiences": [{"id": e, "time": t} for e, t in GVT_TIE_EXPS],
            "units": [{"id": u, "kind": "fact", "weight": w} for u, w in GVT_TIE_WEIGHTS.items()],
            "candidates": [
                {"id": c, "experience": e, "type": "atomic_fact", "cost": k, "coverage": cov}
                for c, e, k, cov in GVT_TIE_CANDS
            ],
        }
    )


def _exact_f(sel):
    z = {}
    for c, _, _, cov in GVT_TIE_CANDS:
        if c in sel:
            for u, a in cov.items():
                z[u] = z.get(u, Fraction(0)) + Fraction(a)
    return sum(
        (Fraction(GVT_TIE_WEIGHTS[u]) * min(Fraction(1), v) for u, v in z.items()), Fraction(0)
    )


def _gvt_passes(budget):
    """Every GVT pass as (F, cost, threshold index, selection), read from DESIGN.md."""
    B = Fraction(budget)
    cost = {c: Fraction(k) for c, _, k, _ in GVT_TIE_CANDS}
    time = dict(GVT_TIE_EXPS)
    groups = sorted({e for _, e, _, _ in GVT_TIE_CANDS}, key=lambda e: (time[e], e))
    members = {
        g: sorted((c for c, e, _, _ in GVT_TIE_CANDS if e == g), key=lambda c: (cost[c], c))
        for g in groups
    }
    taus = sorted(
        {_exact_f({c}) / cost[c] for c in cost if cost[c] <= B} | {Fraction(0)}, reverse=True
    )
    passes = []
    for t_idx, tau in enumerate(taus):
        sel, spent = set(), Fraction(0)
        for g in groups:
            adm = []
            for c in members[g]:
                gain = _exact_f(sel | {c}) - _exact_f(sel)
                if spent + cost[c] <= B and gain > 0 and gain / cost[c] >= tau:
                    adm.append((-gain, cost[c], c))
            if adm:
                c = min(adm)[2]
                sel.add(c)
                spent += cost[c]
        passes.append((_exact_f(sel), spent, t_idx, tuple(sorted(sel))))
    return passes


def test_gvt_equal_value_passes_prefer_lower_cost_over_earlier_threshold():
    passes = _gvt_passes(5)
    top = max(p[0] for p in passes)
    tied = [p for p in passes if p[0] == top]
    # The situation the rule is about: two best-F passes, the earlier one more expensive.
    assert {(p[1], p[3]) for p in tied} >= {
        (Fraction(5), ("e0_b2", "w1_a0")),
        (Fraction(4), ("e0_c0", "q2_a0", "w1_a0")),
    }
    expected = min(tied, key=lambda p: (p[1], p[2]))[3]
    assert expected == ("e0_c0", "q2_a0", "w1_a0")
    res = run_writer("gvt", compile_package(_gvt_tie_package()), 5)
    assert tuple(sorted(res.selected)) == expected
    assert res.cost == 4 and abs(res.value - 21 / 8) < 1e-12
