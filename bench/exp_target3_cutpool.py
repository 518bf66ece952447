"""Issue 7, target 3: HiGHS's cut pool of a larger budget reused at smaller ones (not adopted).

A cut valid for the stores of budget B_src is valid at every B < B_src, whose stores are a
subset. HiGHS hands its cut pool to ``cbMipGetCutPool`` once, after the root; its columns are
those of the presolved model, which on target 3's package are the model's own (presolve does
not reduce it: the callback reports 600 columns, the model has 600) and the same at every
budget of the script (``build_model`` keeps every candidate and y column there; checked).

This script solves target 3's package (random_coverage, 100 groups, seed 0, 20 budgets 2-20%
of groups x mean cost) at budget ``--source`` with the cut pool harvested, then at each budget
in ``--targets`` twice with HiGHS alone, on the product's model (``memaudit_core.solvers.milp``,
its exactness options, HiGHS's default threads):

``plain``
    The model as the product builds it.
``cuts``
    The same model with the source's cuts added as rows before the run.

Prints one JSON line per solve (wall seconds, nodes, objective, model status) and, with
``--out``, writes them all to a JSON file.

Usage: ``.venv/bin/python bench/exp_target3_cutpool.py --source 19 --targets 18,16,14``
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np

from memaudit_core.compiled import compile_package
from memaudit_core.generators import generate
from memaudit_core.solvers import milp

Cut = tuple[float, float, np.ndarray, np.ndarray]


def solve_at(
    inst, budget: float, *, cuts: list[Cut] | None = None, harvest: bool = False
) -> tuple[dict, list[Cut] | None, dict]:
    """One HiGHS run of the product's model; (summary row, harvested cuts, model arrays)."""
    highspy = milp._highspy()
    model = milp.build_model(inst, budget)
    h = milp._new_highs(highspy)
    milp._exact_options(h, model)
    h.passModel(milp._highs_lp(highspy, model, integer=True))
    if cuts:
        starts = np.cumsum([0] + [len(c[2]) for c in cuts[:-1]]).astype(np.int32)
        index = np.concatenate([c[2] for c in cuts]).astype(np.int32)
        h.addRows(
            len(cuts),
            np.array([c[0] for c in cuts]),
            np.array([c[1] for c in cuts]),
            index.size,
            starts,
            index,
            np.concatenate([c[3] for c in cuts]),
        )
    pool: dict = {}

    def keep_pool(event) -> None:
        out = event.data_out
        start = np.asarray(out.cutpool_start)
        index, value = np.asarray(out.cutpool_index), np.asarray(out.cutpool_value)
        lower, upper = np.asarray(out.cutpool_lower), np.asarray(out.cutpool_upper)
        pool["n_cols"] = int(out.cutpool_num_col)
        pool["cuts"] = [
            (float(lower[i]), float(upper[i]), index[start[i] : start[i + 1]].copy(),
             value[start[i] : start[i + 1]].copy())
            for i in range(int(out.cutpool_num_cut))
        ]  # fmt: skip

    if harvest:
        h.cbMipGetCutPool.subscribe(keep_pool)
    t0 = time.perf_counter()
    h.run()
    wall = time.perf_counter() - t0
    info = h.getInfo()
    row = {
        "budget": budget,
        "wall_s": round(wall, 3),
        "nodes": int(info.mip_node_count),
        "objective": float(info.objective_function_value) / model["objective_scale"],
        "status": h.modelStatusToString(h.getModelStatus()),
        "model_cols": int(model["n_x"] + model["n_y"]),
        "cuts_added": len(cuts or []),
        "pool_cols": pool.get("n_cols"),
        "pool_cuts": len(pool.get("cuts", [])),
    }
    return row, pool.get("cuts"), model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=int, default=19, help="budget index harvested (0-19)")
    parser.add_argument("--targets", default="18,16,14", help="budget indices, comma-separated")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    inst = compile_package(generate("random_coverage", seed=0, n_groups=100))
    scale = inst.n_groups * float(inst.cost.mean())
    budgets = [float(b) for b in np.linspace(0.02, 0.20, 20) * scale]
    rows = []
    row, cuts, source_model = solve_at(inst, budgets[args.source], harvest=True)
    if cuts is None or row["pool_cols"] != row["model_cols"]:
        raise SystemExit(f"the cut pool is not in the model's columns: {row}")
    rows.append({"mode": "harvest", "k": args.source, **row})
    print(json.dumps(rows[-1]), flush=True)
    for k in (int(x) for x in args.targets.split(",")):
        for mode in ("plain", "cuts"):
            row, _, model = solve_at(inst, budgets[k], cuts=cuts if mode == "cuts" else None)
            same_columns = np.array_equal(model["cand"], source_model["cand"]) and np.array_equal(
                model["y_units"], source_model["y_units"]
            )
            if not same_columns:
                raise SystemExit(f"budget {k} has other columns than the source's")
            rows.append({"mode": mode, "k": k, **row})
            print(json.dumps(rows[-1]), flush=True)
    if args.out:
        machine = platform.processor() or platform.machine()
        args.out.write_text(json.dumps({"machine": machine, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
