"""Issue 7, target 3: the cost-band restriction across budgets, measured (not in the product).

With budgets solved in ascending order, an optimum at B_k worth more than OPT(B_{k-1}) must
cost more than B_{k-1}: a cheaper one would be feasible, and so no better, at B_{k-1}. This
script solves target 3's package (random_coverage, 100 groups, seed 0, 20 budgets 2-20% of
groups x mean cost) at budgets ``--ks`` twice with HiGHS alone:

``warm``
    The model of ``memaudit_core.solvers.milp`` with the previous optimum as complete MIP start
    (what ``solve_budgets`` does).
``band``
    The same model with the knapsack row's lower side set just above B_{k-1} and OPT(B_{k-1})
    as HiGHS's ``objective_bound`` cutoff (the warm start lies outside the band).

The first budget in ``--ks`` is solved warm only, to provide OPT(B_{k-1}) for the next.
Prints one line per budget and mode: wall seconds, HiGHS nodes, objective and status.

Usage: ``.venv/bin/python bench/exp_target3_band.py --ks 13,14,15,16,17``
"""

from __future__ import annotations

import argparse
import time

import highspy
import numpy as np

from memaudit_core.compiled import compile_package
from memaudit_core.generators import generate
from memaudit_core.solvers import milp
from memaudit_core.solvers.milp import FEASIBILITY_TOLERANCE, build_model, mip_start


def solve_highs(inst, budget, *, cost_above=None, cutoff=None, start_idx=None, time_limit=120.0):
    m = build_model(inst, budget)
    n_x, n_y, n_rows = m["n_x"], m["n_y"], m["n_rows"]
    row_lower = np.full(n_rows, -highspy.kHighsInf)
    if cost_above is not None:
        row_lower[n_y] = cost_above  # row n_y is the knapsack row
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = n_x + n_y, n_rows
    lp.sense_ = highspy.ObjSense.kMaximize
    lp.col_cost_, lp.col_lower_, lp.col_upper_ = m["col_cost"], np.zeros(n_x + n_y), m["col_upper"]
    lp.row_lower_, lp.row_upper_ = row_lower, m["row_upper"]
    a = lp.a_matrix_
    a.format_ = highspy.MatrixFormat.kColwise
    a.num_col_, a.num_row_ = n_x + n_y, n_rows
    a.start_, a.index_, a.value_ = m["start"], m["index"], m["value"]
    lp.integrality_ = [highspy.HighsVarType.kInteger] * n_x + [
        highspy.HighsVarType.kContinuous
    ] * n_y
    h = milp._new_highs(highspy)
    for name, value in [
        ("mip_rel_gap", 0.0),
        ("mip_abs_gap", 0.0),
        ("mip_feasibility_tolerance", FEASIBILITY_TOLERANCE),
        ("primal_feasibility_tolerance", FEASIBILITY_TOLERANCE),
        ("time_limit", float(time_limit)),
    ]:
        h.setOptionValue(name, value)
    h.passModel(lp)
    if cutoff is not None:
        h.setOptionValue("objective_bound", float(cutoff))
    if start_idx:
        sol = highspy.HighsSolution()
        sol.col_value = mip_start(inst, m, start_idx, budget)
        sol.value_valid = True
        h.setSolution(sol)
    t0 = time.perf_counter()
    h.run()
    wall = time.perf_counter() - t0
    info = h.getInfo()
    selected: tuple[int, ...] = ()
    if int(info.primal_solution_status) == 2:
        x = np.asarray(h.getSolution().col_value[:n_x])
        selected = tuple(sorted(int(c) for c in m["cand"][x > 0.5]))
    return {
        "status": h.modelStatusToString(h.getModelStatus()),
        "wall_s": wall,
        "nodes": int(info.mip_node_count),
        "value": float(info.objective_function_value),
        "selected": selected,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ks", default="13,14,15,16,17", help="budget positions 0-19, ascending")
    ap.add_argument("--time-limit", type=float, default=120.0)
    args = ap.parse_args()
    inst = compile_package(generate("random_coverage", seed=0, n_groups=100))
    base = inst.n_groups * float(inst.cost.mean())
    budgets = [float(b) for b in np.linspace(0.02, 0.20, 20) * base]
    ks = [int(k) for k in args.ks.split(",")]
    prev = None
    for pos, k in enumerate(ks):
        warm = solve_highs(
            inst, budgets[k], start_idx=prev and prev["selected"], time_limit=args.time_limit
        )
        line = (
            f"k={k} B={budgets[k]:.2f} warm {warm['wall_s']:.1f} s {warm['nodes']} nodes "
            f"F={warm['value']:.4f} {warm['status']}"
        )
        if pos > 0:
            band = solve_highs(
                inst,
                budgets[k],
                cost_above=budgets[ks[pos - 1]] + 1e-7,
                cutoff=prev["value"],
                time_limit=args.time_limit,
            )
            line += (
                f" | band {band['wall_s']:.1f} s {band['nodes']} nodes F={band['value']:.4f} "
                f"{band['status']}"
            )
        print(line, flush=True)
        prev = warm


if __name__ == "__main__":
    main()
