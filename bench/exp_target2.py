"""Issue 7, target 2: rerunnable experiments behind "auto is not 3x faster than plain HiGHS".

Not part of the product. Each experiment runs on the target's instances (random_coverage,
200 groups x 4 candidates, 400 units, budget fraction 0.05 / 0.10) next to the plain HiGHS
model of ``bench_speed.plain_highs`` timed in the same run, and prints one line per instance:

``cuts``
    A root cut loop of per-unit Nemhauser-Wolsey inequalities for y_r <= min(1, sum_j a_rj x_j)
    (submodular in x): for the prefixes S of the covering candidates sorted by LP value,
    (A) y_r <= f(S) + sum_{j not in S} rho_j(S) x_j and
    (B) y_r <= f(S) - sum_{j in S} rho_j(S - j) (1 - x_j) + sum_{j not in S} f({j}) x_j,
    the most violated one per unit, rounds until the bound stalls. Prints the LP bound before
    and after, and the time.
``reduced``
    Reduced-cost fixing from the cut LP (with the product's greedy + local-search incumbent,
    and with OPT itself as the best case), then HiGHS on the reduced MILP, with and without
    the cut rows.
``cb``
    A cut-and-branch of our own: the cut LP at the root, reduced-cost fixing, then best-first
    branching on the most fractional x with two cut rounds and reduced-cost fixing per node
    (HiGHS's dual simplex, warm-started, as the LP engine). ``--cb-time-limit`` seconds.
``knapsack``
    With the cut LP's duals on the unit and cut rows fixed, the bound with the
    multiple-choice knapsack (budget + one per group) solved exactly by a DP on costs rounded
    down to 0.01 (a relaxation, so still a bound) instead of as an LP.
``bnb_reduced``
    The product's B&B (30 s) on the instance reduced by the cut LP's reduced-cost fixing.
``options``
    HiGHS option settings on the plain model (restarts off, pseudo-cost reliability,
    heuristics) against its defaults.
``auto_options``
    ``solve(..., "auto")`` as shipped, then again with each option set added to the product's
    HiGHS settings (``milp._exact_options``), against the same plain model.

Run: ``.venv/bin/python bench/exp_target2.py
[--experiments cuts,reduced,cb,knapsack,bnb_reduced,options,auto_options] [--seeds 3]
[--cb-time-limit 60] [--option-sets "root reduced-cost heuristic off,..."]``.
"""

from __future__ import annotations

import argparse
import heapq
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_speed import large_package, plain_highs  # noqa: E402
from common import machine  # noqa: E402

from memaudit_core.compiled import compile_package  # noqa: E402
from memaudit_core.objective import evaluate  # noqa: E402
from memaudit_core.solvers import milp, solve  # noqa: E402
from memaudit_core.solvers.bnb import solve_bnb  # noqa: E402
from memaudit_core.solvers.milp import _highspy, _new_highs, build_model  # noqa: E402

OPTION_SETS = {
    "no restarts": {"mip_allow_restart": False},
    "pscost reliable 2": {"mip_pscost_minreliable": 2},
    "RINS off": {"mip_heuristic_run_rins": False},
    "RENS off": {"mip_heuristic_run_rens": False},
    "heuristic effort 0.1": {"mip_heuristic_effort": 0.1},
    "lp age 20": {"mip_lp_age_limit": 20},
    "parallel on, 2 threads": {"parallel": "on", "threads": 2},
    # Thirty-second session: the HiGHS 1.16 options not tried before.
    "node cuts off": {"mip_allow_cut_separation_at_nodes": False},
    "feasibility jump off": {"mip_heuristic_run_feasibility_jump": False},
    "root reduced-cost heuristic off": {"mip_heuristic_run_root_reduced_cost": False},
    "root reduced-cost and feasibility jump off": {
        "mip_heuristic_run_root_reduced_cost": False,
        "mip_heuristic_run_feasibility_jump": False,
    },
}


def agrees(value: float, opt: float) -> bool:
    return abs(value - opt) <= 1e-6 * max(1.0, abs(opt))


def run_auto_with(inst, budget: float, options: dict) -> tuple[float, float, str]:
    """``solve(auto)`` with ``options`` added to the product's HiGHS settings."""
    shipped = milp._exact_options

    def with_options(h, model) -> None:
        shipped(h, model)
        for key, value in options.items():
            h.setOptionValue(key, value)

    milp._exact_options = with_options
    try:
        t = time.perf_counter()
        res = solve(inst, budget, "auto")
        return time.perf_counter() - t, res.value, res.label
    finally:
        milp._exact_options = shipped


class CutLP:
    """The MILP's LP relaxation in HiGHS, with per-unit Nemhauser-Wolsey cuts added as rows."""

    def __init__(self, inst, budget: float):
        self.highspy = hs = _highspy()
        self.inst = inst
        m = build_model(inst, budget)
        self.model = m
        self.n_x, self.n_y = n_x, n_y = m["n_x"], m["n_y"]
        matrix = sp.csc_array((m["value"], m["index"], m["start"]), shape=(m["n_rows"], n_x + n_y))
        unit_rows = sp.csr_array(matrix[:n_y, :n_x])
        self.unit_ptr, self.unit_cols, self.unit_a = (
            unit_rows.indptr,
            unit_rows.indices,
            -unit_rows.data,
        )
        self.lp = self._lp(m, integer=False)
        self.h = _new_highs(hs)
        self.h.passModel(self.lp)
        self.lp_time = self.sep_time = 0.0
        self.lp_iterations = 0

    def _lp(self, m, integer: bool):
        hs = self.highspy
        n = self.n_x + self.n_y
        lp = hs.HighsLp()
        lp.num_col_, lp.num_row_ = n, m["n_rows"]
        lp.sense_ = hs.ObjSense.kMaximize
        lp.col_cost_ = m["col_cost"]
        lp.col_lower_ = np.zeros(n)
        lp.col_upper_ = m["col_upper"]
        lp.row_lower_ = np.full(m["n_rows"], -hs.kHighsInf)
        lp.row_upper_ = m["row_upper"]
        lp.a_matrix_.format_ = hs.MatrixFormat.kColwise
        lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = n, m["n_rows"]
        lp.a_matrix_.start_ = m["start"]
        lp.a_matrix_.index_ = m["index"]
        lp.a_matrix_.value_ = m["value"]
        if integer:
            lp.integrality_ = [hs.HighsVarType.kInteger] * self.n_x + [
                hs.HighsVarType.kContinuous
            ] * self.n_y
        return lp

    def solve(self):
        """(objective, column values, solution) or None when infeasible."""
        t = time.perf_counter()
        self.h.run()
        self.lp_time += time.perf_counter() - t
        self.lp_iterations += self.h.getInfo().simplex_iteration_count
        status = self.h.getModelStatus()
        if status == self.highspy.HighsModelStatus.kInfeasible:
            return None
        sol = self.h.getSolution()
        return self.h.getInfo().objective_function_value, np.asarray(sol.col_value), sol

    def separate(self, col_value: np.ndarray, tol: float = 1e-6) -> int:
        """Add the most violated cut of each unit; returns how many were added."""
        t = time.perf_counter()
        x, y = col_value[: self.n_x], col_value[self.n_x :]
        idx_rows, val_rows, upper = [], [], []
        for r in np.flatnonzero(y > tol):
            lo, hi = self.unit_ptr[r], self.unit_ptr[r + 1]
            cols, a = self.unit_cols[lo:hi], self.unit_a[lo:hi]
            xs = x[cols]
            best_rhs, best = y[r] - tol, None
            in_s = np.zeros(cols.size, dtype=bool)
            total = 0.0
            for j in [None, *np.argsort(-xs, kind="stable").tolist()]:
                if j is not None:
                    if xs[j] < 1e-9:
                        break
                    in_s[j] = True
                    total += a[j]
                f_s = min(1.0, total)
                if f_s < 1.0:  # (A); with f(S) = 1 it is y <= 1
                    coef = np.where(in_s, 0.0, np.minimum(1.0, total + a) - f_s)
                    rhs = f_s + coef @ xs
                    if rhs < best_rhs:
                        best_rhs, best = rhs, (f_s, coef)
                rho = np.where(in_s, f_s - np.minimum(1.0, total - a), 0.0)  # (B)
                coef = np.where(in_s, rho, np.minimum(1.0, a))
                rhs = f_s - rho.sum() + coef @ xs
                if rhs < best_rhs:
                    best_rhs, best = rhs, (f_s - rho.sum(), coef)
            if best is not None:
                const, coef = best
                keep = np.abs(coef) > 1e-12
                idx_rows.append(np.concatenate([[self.n_x + r], cols[keep]]).astype(np.int32))
                val_rows.append(np.concatenate([[1.0], -coef[keep]]))
                upper.append(const)
        if upper:
            starts = np.cumsum([0] + [len(i) for i in idx_rows[:-1]]).astype(np.int32)
            self.h.addRows(
                len(upper),
                np.full(len(upper), -self.highspy.kHighsInf),
                np.asarray(upper),
                int(sum(len(i) for i in idx_rows)),
                starts,
                np.concatenate(idx_rows),
                np.concatenate(val_rows),
            )
        self.sep_time += time.perf_counter() - t
        return len(upper)

    def cut_loop(self, max_rounds: int = 40):
        """Separate and resolve until the bound stalls; returns (first bound, last solve, cuts)."""
        res = self.solve()
        first, n_cuts = res[0], 0
        for _ in range(max_rounds):
            added = self.separate(res[1])
            if not added:
                break
            n_cuts += added
            prev, res = res[0], self.solve()
            if prev - res[0] < 1e-6 * abs(prev):
                break
        return first, res, n_cuts

    def fixings(self, res, incumbent: float) -> tuple[np.ndarray, np.ndarray]:
        """Reduced-cost fixing: (x fixed to 0, x fixed to 1) for solutions above ``incumbent``."""
        x = res[1][: self.n_x]
        dual = np.asarray(res[2].col_dual)[: self.n_x]
        gap = res[0] - incumbent
        return (x < 1e-9) & (dual < -gap - 1e-7), (x > 1 - 1e-9) & (dual > gap + 1e-7)

    def reduced_milp(self, fix0, fix1, with_cuts: bool) -> tuple[float, float, int]:
        """HiGHS on the MILP with the fixings (and the cut rows); (seconds, objective, nodes)."""
        hs = self.highspy
        if with_cuts:
            lp = self.h.getLp()
            lp.integrality_ = [hs.HighsVarType.kInteger] * self.n_x + [
                hs.HighsVarType.kContinuous
            ] * self.n_y
        else:
            lp = self._lp(self.model, integer=True)
        lower = np.zeros(self.n_x + self.n_y)
        upper = self.model["col_upper"].copy()
        upper[: self.n_x][fix0] = 0.0
        lower[: self.n_x][fix1] = 1.0
        lp.col_lower_, lp.col_upper_ = lower, upper
        h = _new_highs(hs)
        h.setOptionValue("mip_rel_gap", 0.0)
        h.setOptionValue("mip_abs_gap", 0.0)
        h.passModel(lp)
        t = time.perf_counter()
        h.run()
        return (
            time.perf_counter() - t,
            h.getInfo().objective_function_value,
            h.getInfo().mip_node_count,
        )

    def value_of(self, x: np.ndarray) -> tuple[float, tuple[int, ...]]:
        sel = tuple(sorted(int(self.model["cand"][j]) for j in np.flatnonzero(x > 0.5)))
        return evaluate(self.inst, sel), sel

    def branch_and_cut(self, res, incumbent: float, time_limit: float):
        """Best-first B&B on the cut LP; returns (value, nodes, open bound, timed out)."""
        t0 = time.perf_counter()
        n_x = self.n_x
        fix0, fix1 = self.fixings(res, incumbent)
        lo = np.where(fix1, 1.0, 0.0)
        up = np.where(fix0, 0.0, 1.0)
        best, nodes, counter = incumbent, 0, 1
        heap = [(-res[0], 0, lo, up)]
        cols = np.arange(n_x, dtype=np.int32)
        while heap:
            if time.perf_counter() - t0 > time_limit:
                return best, nodes, max(best, -heap[0][0]), True
            neg_bound, _, lo, up = heapq.heappop(heap)
            if -neg_bound <= best + 1e-9:
                continue
            nodes += 1
            self.h.changeColsBounds(n_x, cols, lo, up)
            res = self.solve()
            for _ in range(2):
                if res is None or res[0] <= best + 1e-9:
                    break
                x = res[1][:n_x]
                if not (np.abs(x - np.round(x)) > 1e-6).any() or not self.separate(res[1]):
                    break
                res = self.solve()
            if res is None or res[0] <= best + 1e-9:
                continue
            x = res[1][:n_x]
            frac = np.abs(x - np.round(x)) > 1e-6
            value, _ = self.value_of(np.where(x > 1 - 1e-6, 1.0, 0.0))
            best = max(best, value)
            if not frac.any():
                continue
            f0, f1 = self.fixings(res, best)
            lo2, up2 = np.where(f1, 1.0, lo), np.where(f0, 0.0, up)
            j = int(np.argmax(np.where(frac, 0.5 - np.abs(x - 0.5), -1.0)))
            for side in (1.0, 0.0):
                clo, cup = lo2.copy(), up2.copy()
                clo[j] = cup[j] = side
                heapq.heappush(heap, (-res[0], counter, clo, cup))
                counter += 1
        return best, nodes, best, False


def knapsack_bound(lpw: CutLP, res, budget: float, step: float = 0.01) -> float:
    """Lagrangian bound: unit / cut row duals fixed, the knapsack part solved by a DP."""
    hs_lp = lpw.h.getLp()
    matrix = sp.csc_array(
        (
            np.asarray(hs_lp.a_matrix_.value_),
            np.asarray(hs_lp.a_matrix_.index_),
            np.asarray(hs_lp.a_matrix_.start_),
        ),
        shape=(hs_lp.num_row_, hs_lp.num_col_),
    )
    row_upper = np.asarray(hs_lp.row_upper_)
    dual = np.maximum(np.asarray(res[2].row_dual), 0.0)  # HiGHS: >= 0 on binding <= rows
    n_model_rows = lpw.model["n_rows"]
    dual[lpw.n_y : n_model_rows] = 0.0  # the knapsack and group rows are kept, not priced
    reduced = np.asarray(hs_lp.col_cost_) - matrix.T @ dual
    base = float(dual @ row_upper + np.maximum(reduced[lpw.n_x :], 0.0).sum())
    profit = reduced[: lpw.n_x]
    cand = lpw.model["cand"]
    weight = np.floor(lpw.inst.cost[cand] / step + 1e-9).astype(np.int64)
    groups = lpw.inst.group_idx[cand]
    cap = int(np.floor(budget / step + 1e-9))
    table = np.zeros(cap + 1)
    for g in np.unique(groups):
        new = table.copy()
        for j in np.flatnonzero(groups == g):
            if profit[j] > 0 and weight[j] <= cap:
                shifted = np.full(cap + 1, -np.inf)
                shifted[weight[j] :] = table[: cap + 1 - weight[j]] + profit[j]
                np.maximum(new, shifted, out=new)
        table = new
    return base + float(table[cap])


def bnb_on_reduced(lpw: CutLP, res, inc, budget: float) -> str:
    fix0, _ = lpw.fixings(res, inc.value)
    keep = np.ones(lpw.inst.n_candidates, dtype=bool)
    keep[lpw.model["cand"][fix0]] = False
    keep[list(inc.selected_idx)] = True
    sub = lpw.inst.restrict(keep, lpw.inst.pool)
    t = time.perf_counter()
    raw = solve_bnb(sub, budget, time_limit=30.0)
    return (
        f"B&B on the reduced instance ({int(keep.sum())} candidates): "
        f"{time.perf_counter() - t:.1f} s, {raw.status}, {raw.nodes} nodes, "
        f"value {raw.value:.4f}, bound {raw.bound:.4f}"
    )


def run_plain_with(inst, budget: float, options: dict) -> tuple[float, int, float, str]:
    lpw = CutLP(inst, budget)
    hs = lpw.highspy
    h = _new_highs(hs)
    h.setOptionValue("mip_rel_gap", 0.0)
    h.setOptionValue("mip_abs_gap", 0.0)
    for key, value in options.items():
        h.setOptionValue(key, value)
    h.passModel(lpw._lp(lpw.model, integer=True))
    t = time.perf_counter()
    h.run()
    secs = time.perf_counter() - t
    info = h.getInfo()
    return secs, info.mip_node_count, info.objective_function_value, str(h.getModelStatus())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--experiments", default="cuts,reduced,cb,knapsack,bnb_reduced,options")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--cb-time-limit", type=float, default=60.0)
    ap.add_argument(
        "--option-sets",
        default=",".join(OPTION_SETS),
        help=f"comma-separated names for the options experiment (default all): {list(OPTION_SETS)}",
    )
    args = ap.parse_args()
    option_sets = [name for name in args.option_sets.split(",") if name]
    unknown = sorted(set(option_sets) - set(OPTION_SETS))
    if unknown:
        ap.error(f"unknown option set(s) {unknown}; choose from {list(OPTION_SETS)}")
    todo = set(args.experiments.split(","))
    print(f"machine: {machine()}")
    for frac in (0.05, 0.10):
        for seed in range(args.seeds):
            pkg = large_package(frac, seed)
            inst = compile_package(pkg)
            plain_s, _, opt, _ = plain_highs(inst, pkg.budget)
            head = f"f={frac:.2f} seed={seed}: plain HiGHS {plain_s:.2f} s, OPT {opt:.4f}"
            t0 = time.perf_counter()
            inc = solve_bnb(inst, pkg.budget, node_limit=1)  # greedy + local search
            lpw = CutLP(inst, pkg.budget)
            first, res, n_cuts = lpw.cut_loop()
            root_s = time.perf_counter() - t0
            out = [
                f"root LP {first:.2f} -> {res[0]:.2f} with {n_cuts} cuts in {root_s:.2f} s "
                f"(incumbent {inc.value:.3f})"
            ]
            if "knapsack" in todo:
                out.append(
                    f"cut LP {res[0]:.3f}; with the knapsack part exact: "
                    f"{knapsack_bound(lpw, res, pkg.budget):.3f}"
                )
            if "bnb_reduced" in todo:
                out.append(bnb_on_reduced(lpw, res, inc, pkg.budget))
            if "reduced" in todo:
                for name, cutoff in (("incumbent", inc.value), ("OPT", opt)):
                    fix0, fix1 = lpw.fixings(res, cutoff)
                    for with_cuts in (False, True):
                        secs, value, nodes = lpw.reduced_milp(fix0, fix1, with_cuts)
                        out.append(
                            f"fix by {name} ({int(fix0.sum() + fix1.sum())}/{lpw.n_x}), "
                            f"{'with' if with_cuts else 'no'} cuts: {secs:.2f} s, "
                            f"{nodes} nodes, {value:.4f}"
                        )
            if "cb" in todo:
                lp_before, it_before, sep_before = lpw.lp_time, lpw.lp_iterations, lpw.sep_time
                t1 = time.perf_counter()
                value, nodes, bound, stopped = lpw.branch_and_cut(
                    res, inc.value, args.cb_time_limit
                )
                # Root (cut loop, incumbent) plus the tree; the experiments above are not counted.
                total = root_s + time.perf_counter() - t1
                state = "TIME LIMIT" if stopped else "proved"
                out.append(
                    f"cut-and-branch {total:.2f} s ({state}; {nodes} nodes, tree LP "
                    f"{lpw.lp_time - lp_before:.2f} s / {lpw.lp_iterations - it_before} "
                    f"iterations, tree separation {lpw.sep_time - sep_before:.2f} s) "
                    f"value {value:.4f} bound {bound:.4f}; ratio {plain_s / total:.2f}x"
                )
            if "options" in todo:
                for name in option_sets:
                    secs, nodes, value, status = run_plain_with(inst, pkg.budget, OPTION_SETS[name])
                    same = "same OPT" if agrees(value, opt) else "DIFFERS"
                    out.append(
                        f"{name}: {secs:.2f} s ({plain_s / secs:.2f}x), {nodes} nodes, "
                        f"{status}, {value:.4f} ({same})"
                    )
            if "auto_options" in todo:
                for name in ["auto as shipped", *option_sets]:
                    options = OPTION_SETS.get(name, {})
                    secs, value, label = run_auto_with(inst, pkg.budget, options)
                    same = "same OPT" if agrees(value, opt) else "DIFFERS"
                    out.append(
                        f"auto, {name}: {secs:.2f} s ({plain_s / secs:.2f}x), {label} ({same})"
                    )
            if "cuts" in todo or len(out) > 1:
                print(head + "\n    " + "\n    ".join(out), flush=True)


if __name__ == "__main__":
    main()
