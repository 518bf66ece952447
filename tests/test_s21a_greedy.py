"""The greedy rows' priority queue picks exactly what the vectorised rows pick (session 21).

``writers._greedy_rows`` runs large packages as one heap per row (``heap=True``) and small
ones as vectorised passes. The oracle is the vectorised implementation as it was before the
heap existed, copied below (:func:`oracle_greedy_rows`), so a change to either path cannot
move the oracle. The heap path is forced on every instance, small ones included, so the tie
rule (a tolerance window on the ratio, then gain, then -cost, then the smallest id) is
exercised on hand-built ties and on random packages built from near-equal numbers.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from test_s19c_oracle import random_package

from memaudit_core import writers as W
from memaudit_core.compiled import (
    CompiledInstance,
    budget_with_tolerance,
    compile_package,
    entry_positions,
)
from memaudit_core.generators import generate
from memaudit_core.objective import GAIN_EPS
from memaudit_core.package import package_to_dict, parse_package
from memaudit_core.saturations import SATURATIONS
from memaudit_core.writers import TIE_TOL

TYPES = ("raw_span", "atomic_fact", "summary", "tombstone", "compound_update")


def pools(inst: CompiledInstance) -> list[np.ndarray | None]:
    """Every pool a greedy row runs on: all, fact_only, summary_only, and a mixed one."""
    types = W._prep(inst).types
    return [None, types == "atomic_fact", types == "summary", types != "raw_span"]


def check_rows(inst: CompiledInstance, budgets: list[float]) -> list[tuple[int, ...]]:
    """Heap rows (all pools x all budgets in one call) equal the oracle's; returns them."""
    rows = [(b, pool) for pool in pools(inst) for b in budgets]
    rows_b, rows_a = [b for b, _ in rows], [a for _, a in rows]
    expected = oracle_greedy_rows(inst, rows_b, rows_a)
    assert W._greedy_rows(inst, rows_b, rows_a, heap=True) == expected
    assert W._greedy_rows(inst, rows_b, rows_a) == expected  # the path chosen by size
    return expected


def budgets_of(inst: CompiledInstance, extra: tuple[float, ...] = ()) -> list[float]:
    total = float(inst.cost.sum())
    return sorted({0.0, *extra, total * 0.05, total * 0.2, total * 0.5, total})


def with_saturation(pkg, saturation: str):
    doc = package_to_dict(pkg)
    doc["objective"] = {**doc.get("objective", {}), "saturation": saturation}
    return parse_package(doc)


# --------------------------------------------------------------------------- packages


def test_memaudit_small_seeds():
    picked = 0
    for seed in range(40):
        pkg = generate("memaudit-small", seed=seed)
        inst = compile_package(pkg)
        rows = check_rows(inst, [2, 4, 8, 16, pkg.default_budget()])
        picked += sum(map(len, rows))
    assert picked > 1000


@pytest.mark.parametrize(("n_exp", "seed"), [(50, 0), (300, 1), (1500, 2)])
def test_event_graphs(n_exp, seed):
    pkg = generate("event_graph", seed=seed, n_experiences=n_exp)
    inst = compile_package(pkg)
    rows = check_rows(inst, budgets_of(inst, (pkg.default_budget(),)))
    assert max(map(len, rows)) > n_exp // 10


@pytest.mark.parametrize("n_groups", [50, 200])
@pytest.mark.parametrize("seed", [0, 5])
def test_random_coverage(n_groups, seed):
    inst = compile_package(generate("random_coverage", seed=seed, n_groups=n_groups))
    rows = check_rows(inst, budgets_of(inst))
    assert max(map(len, rows)) > n_groups // 4


@pytest.mark.parametrize("saturation", sorted(SATURATIONS))
def test_every_saturation(saturation):
    """log1p runs through numpy's h, cap1 / linear through Python floats: same gains."""
    inst = compile_package(
        with_saturation(generate("event_graph", seed=3, n_experiences=400), saturation)
    )
    assert inst.saturation == saturation
    check_rows(inst, budgets_of(inst))
    for seed in range(60):
        doc = random_package(seed + 500, saturation=saturation, n_exp=(2, 8), n_cand=(1, 4))
        inst = compile_package(parse_package(doc))
        check_rows(inst, budgets_of(inst, (1.0, 2.0, 3.0)))


@pytest.mark.parametrize("capacity", [2, 3])
def test_group_capacity_above_one(capacity):
    for family, params in [
        ("event_graph", {"n_experiences": 300}),
        ("random_coverage", {"n_groups": 60}),
        ("memaudit-small", {}),
    ]:
        inst = compile_package(generate(family, seed=4, **params)).with_capacity(capacity)
        rows = check_rows(inst, budgets_of(inst))
        groups = [np.bincount(inst.group_idx[list(r)], minlength=inst.n_groups) for r in rows]
        counts = {int(g.max()) for g in groups}
        assert max(counts) <= capacity and max(counts) > 1  # groups past one pick
    for seed in range(40):
        doc = random_package(seed + 900, n_exp=(1, 4), n_cand=(2, 5))
        inst = compile_package(parse_package(doc)).with_capacity(capacity)
        check_rows(inst, budgets_of(inst, (2.0, 5.0)))


# --------------------------------------------------------------------------- ties


def tie_package(cands: list[tuple[str, str, float, dict[str, float]]], weights: dict) -> dict:
    """A cap1 package: candidates (id, experience, cost, coverage), unit weights given."""
    exps = sorted({e for _, e, _, _ in cands})
    return {
        "memaudit": 1,
        "id": "ties",
        "objective": {"saturation": "cap1"},
        "experiences": [{"id": e, "time": k} for k, e in enumerate(exps)],
        "units": [{"id": u, "kind": "fact", "weight": w} for u, w in weights.items()],
        "queries": [],
        "candidates": [
            {"id": c, "experience": e, "type": "atomic_fact", "cost": cost, "coverage": cov}
            for c, e, cost, cov in cands
        ],
    }


def heap_picks(doc: dict, budget: float) -> tuple[str, ...]:
    inst = compile_package(parse_package(doc))
    picked = W._greedy_rows(inst, [budget], [None], heap=True)[0]
    assert picked == oracle_greedy_rows(inst, [budget], [None])[0]
    return tuple(sorted(inst.candidate_ids[i] for i in picked))


def test_identical_candidates_in_other_groups_go_to_the_smallest_id():
    """Ids run against arrival order, so the smallest id is the *last* group's candidate."""
    cands = [(f"c{9 - k}", f"e{k}", 1.0, {f"u{k}": 1.0}) for k in range(6)]
    doc = tie_package(cands, {f"u{k}": 1.0 for k in range(6)})
    assert heap_picks(doc, 1) == ("c4",)
    assert heap_picks(doc, 3) == ("c4", "c5", "c6")


def test_equal_ratio_goes_to_the_larger_gain():
    # a: gain 1, cost 1; b: gain 2, cost 2 (same ratio, larger gain; larger id too)
    doc = tie_package(
        [("a", "e0", 1.0, {"u0": 1.0}), ("b", "e1", 2.0, {"u1": 1.0})],
        {"u0": 1.0, "u1": 2.0},
    )
    assert heap_picks(doc, 2) == ("b",)


def test_ratio_within_tolerance_of_the_top_then_larger_gain():
    """b's ratio is below a's by less than TIE_TOL: a tie, and b's larger gain wins."""
    g = 3.0 * (1.0 - 0.4 * TIE_TOL)
    doc = tie_package(
        [("a", "e0", 1.0, {"u0": 1.0}), ("b", "e1", 3.0, {"u1": 1.0})],
        {"u0": 1.0, "u1": g},
    )
    assert g / 3.0 < 1.0  # b's ratio is strictly lower
    assert heap_picks(doc, 3) == ("b",)
    # Below by more than the tolerance: a wins on ratio, then b no longer fits.
    g = 3.0 * (1.0 - 3 * TIE_TOL)
    doc["units"][1]["weight"] = g
    assert heap_picks(doc, 3) == ("a",)


def test_the_window_is_measured_from_the_top_ratio_not_chained():
    """b is within the tolerance of a, c within it of b but not of a: c is out."""
    ra, rb, rc = 1.0, 1.0 - 0.6 * TIE_TOL, 1.0 - 1.2 * TIE_TOL
    doc = tie_package(
        [
            ("a", "e0", 1.0, {"u0": 1.0}),
            ("b", "e1", 2.0, {"u1": 1.0}),
            ("c", "e2", 4.0, {"u2": 1.0}),
        ],
        {"u0": ra, "u1": 2.0 * rb, "u2": 4.0 * rc},
    )
    # b first (c, the largest gain, is outside a's window), then a; c alone costs all 4.
    assert heap_picks(doc, 4) == ("a", "b")


def test_equal_ratio_and_gain_go_to_the_lower_cost():
    """Gains near GAIN_EPS: ratios and gains tie (absolute 1e-12), costs do not."""
    g = 2.0 * GAIN_EPS  # ratio 2e-12 at cost 1, 1.33e-12 at cost 1.5: within 1e-12
    doc = tie_package(
        [("a", "e0", 1.5, {"u0": 1.0}), ("b", "e1", 1.0, {"u1": 1.0})],
        {"u0": g, "u1": g},
    )
    assert heap_picks(doc, 1.5) == ("b",)


def near_equal_package(seed: int) -> dict:
    """Random cap1 / linear / log1p packages whose gains, costs and ratios tie or nearly tie."""
    rng = random.Random(seed)
    wobble = [0.0, 0.0, 0.0, 0.3, -0.3, 0.9, -0.9, 1.5, -1.5, 4.0]
    n_units = rng.randint(2, 10)
    weights = {
        f"u{r}": rng.choice([1.0, 1.0, 2.0, 0.5, 3.0]) * (1 + rng.choice(wobble) * TIE_TOL)
        for r in range(n_units)
    }
    cands = []
    n_exp = rng.randint(2, 9)
    order = list(range(40))
    rng.shuffle(order)  # ids in no relation to arrival order
    for e in range(n_exp):
        for _ in range(rng.randint(1, 4)):
            cov = {
                u: rng.choice([1.0, 1.0, 0.5])
                for u in rng.sample(sorted(weights), rng.randint(1, min(3, n_units)))
            }
            cost = rng.choice([1.0, 1.0, 2.0, 0.5, 3.0]) * (1 + rng.choice(wobble) * TIE_TOL)
            cands.append((f"c{order[len(cands)]:02d}", f"e{e}", cost, cov))
    doc = tie_package(cands, weights)
    doc["objective"]["saturation"] = rng.choice(sorted(SATURATIONS))
    for c in doc["candidates"]:
        c["type"] = rng.choice(TYPES)
    return doc


def test_near_equal_random_packages():
    differing = 0
    for seed in range(400):
        inst = compile_package(parse_package(near_equal_package(seed)))
        if seed % 3 == 1:
            inst = inst.with_capacity(2)
        rows = check_rows(inst, budgets_of(inst, (1.0, 2.0, 2.5, 4.0)))
        differing += len(set(rows)) > 1
    assert differing > 100


def test_run_writers_on_a_heap_sized_package_equals_the_oracle():
    """The writers as users call them (scaled view, three writers x budgets in one batch)."""
    pkg = generate("event_graph", seed=7, n_experiences=800)
    inst = compile_package(pkg)
    view, _, cost_scale = inst.scaled_view
    assert W._greedy_reread(view) <= W.GREEDY_HEAP_READ_SHARE * view.n_candidates
    budgets = [pkg.default_budget() / 4, pkg.default_budget()]
    out = W.run_writers(["greedy", "fact_only", "summary_only"], inst, budgets)
    types = W._prep(view).types
    for name, pool in [("greedy", None), ("fact_only", types == "atomic_fact")]:
        for b, res in zip(budgets, out[name], strict=True):
            expected = oracle_greedy_rows(view, [b * cost_scale], [pool])[0]
            assert res.selected_idx == expected


# --------------------------------------------------------------------------- the oracle


def oracle_greedy_rows(
    inst: CompiledInstance,
    budgets: list[float],
    allowed: list[np.ndarray | None],
) -> list[tuple[int, ...]]:
    """The vectorised greedy rows as they were before the priority queue (commit 6453cda)."""
    prep = W._prep(inst)
    n, R = inst.n_candidates, inst.n_units
    rows = len(budgets)
    cost = inst.cost
    neg_cost = -cost[None, :]
    limit = np.array([budget_with_tolerance(b) for b in budgets], dtype=np.float64)
    open_ = np.ones((rows, n), dtype=bool)
    for k, a in enumerate(allowed):
        if a is not None:
            open_[k] &= a
    cap = inst.group_capacity
    group_idx = inst.group_idx
    group_count = np.zeros((rows, inst.n_groups), dtype=np.int64)
    z = np.zeros((rows, R))
    spent = np.zeros(rows)
    chosen: list[list[int]] = [[] for _ in range(rows)]
    cov = inst.coverage
    cols, data = cov.indices, cov.data
    bins = prep.entry_row
    # Small instances add a pick's coverage as a dense row (adding 0.0 elsewhere is exact).
    dense = inst.coverage_dense if n * R <= 1_000_000 else None
    # Arrays hold the rows still running only; ``row_id`` maps them back.
    row_id = np.arange(rows)
    first = True
    # After a pick only the candidates sharing a unit with it change gain; ``affected`` holds
    # them (None: recompute every gain). Recomputing a candidate sums the same per-entry terms
    # in the same order as a full pass, so the gains, and the picks, are identical.
    affected: np.ndarray | None = None
    full_pass_done = False
    while row_id.size:
        open_ &= cost[None, :] <= (limit - spent)[:, None]
        m = row_id.size
        if first:
            # Every row starts from the empty store: its gains are the singleton values.
            gains = np.broadcast_to(prep.singletons(inst), (m, n))
            first = False
        elif affected is None:
            zc = z[:, cols]
            per = prep.entry_weight * (prep.h(zc + data) - prep.h(zc))
            flat = (np.arange(m)[:, None] * n + bins[None, :]).ravel()
            gains = np.bincount(flat, weights=per.ravel(), minlength=m * n).reshape(m, n)
            full_pass_done = True
        elif affected.size:
            pos, lens = entry_positions(cov.indptr, affected)
            local = np.repeat(np.arange(affected.size), lens)
            zc = z[:, cols[pos]]
            per = prep.entry_weight[pos] * (prep.h(zc + data[pos]) - prep.h(zc))
            k = affected.size
            flat = (np.arange(m)[:, None] * k + local[None, :]).ravel()
            gains[:, affected] = np.bincount(flat, weights=per.ravel(), minlength=m * k).reshape(
                m, k
            )
        mask = open_ & (gains > GAIN_EPS)
        alive = mask.any(axis=1)
        if not alive.all():
            keep = np.flatnonzero(alive)
            row_id, mask, gains = row_id[keep], mask[keep], gains[keep]
            open_, z, spent, limit = open_[keep], z[keep], spent[keep], limit[keep]
            group_count = group_count[keep]
            m = row_id.size
            if not m:
                break
        ratio = gains / cost[None, :]
        for arr in (ratio, gains, neg_cost):
            top = np.where(mask, arr, -np.inf).max(axis=1)
            floor = top - TIE_TOL * np.maximum(1.0, np.abs(top))
            mask &= arr >= floor[:, None]
            if mask.sum() == m:
                break  # one candidate left per row: later keys cannot change the pick
        # Full ties across groups go to the smaller id (positions follow arrival order).
        picks = np.where(mask, prep.id_rank[None, :], n).argmin(axis=1)
        # Add each row's pick: its coverage, its cost, and close it (and a full group).
        incremental = full_pass_done and cov.nnz >= 2500
        if dense is not None:
            z += dense[picks]
        if dense is None or incremental:
            pos, lens = entry_positions(cov.indptr, picks)
            local = np.repeat(np.arange(m), lens)
            if dense is None and pos.size:
                z[local, cols[pos]] += data[pos]
        if incremental:
            # The gains are all formula values now: from here on update what the picks touch.
            by_unit = inst.coverage_csc
            unit_pos, _ = entry_positions(by_unit.indptr, np.unique(cols[pos]))
            affected = np.unique(by_unit.indices[unit_pos])
        spent += cost[picks]
        grp = group_idx[picks]
        if cap == 1:
            open_ &= group_idx[None, :] != grp[:, None]
        else:
            open_[np.arange(m), picks] = False
            group_count[np.arange(m), grp] += 1
            full = group_count[np.arange(m), grp] >= cap
            if full.any():
                open_[full] &= group_idx[None, :] != grp[full][:, None]
        for k, pick in zip(row_id.tolist(), picks.tolist(), strict=True):
            chosen[k].append(pick)
    return [tuple(sorted(c)) for c in chosen]
