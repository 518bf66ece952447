"""What explaining against the closest optimum costs and what it changes.

``score`` compares a store with the optimum closest to it among equally good ones
(``memaudit_core/closest.py``). This script measures, per package, budget and writer:

* the cost: ``score`` with the optimum already solved (as in the app after the first view),
  against the baseline of the same run, the same ``score`` with the closest optimum switched
  off (the code before it); and ``closest_equivalent`` alone on a cold instance (block
  classes not yet found, as on the first score of a package);
* the effect: memories in exactly one of store and optimum, before and after, and the units
  the explanation says the store missed (losing value) against the solver's optimum and
  against the closest one.

Every result must keep the solver optimum's F and fit the budget; the script stops otherwise.

Usage::

    .venv/bin/python bench/bench_closest.py [--out closest.json]
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import machine, save  # noqa: E402

from memaudit_core import analysis  # noqa: E402
from memaudit_core.analysis import compile_cached, score  # noqa: E402
from memaudit_core.closest import closest_equivalent  # noqa: E402
from memaudit_core.generators import generate  # noqa: E402
from memaudit_core.objective import coverage_of, evaluate, get_saturation  # noqa: E402
from memaudit_core.solvers import orbits  # noqa: E402

CASES = [
    ("event_graph", {"n_experiences": 50}, (None,)),  # the size of target 5's Compare page
    ("redundancy_heavy", {"n_experiences": 1000}, (25, 55, 275)),
    ("redundancy_heavy", {"n_experiences": 20000}, (275,)),
    ("density_trap", {"n_experiences": 1000}, (50, 500)),
    ("summary_tradeoff", {"n_episodes": 1000}, (100, 1000)),
    ("event_graph", {"n_experiences": 5000}, (None,)),
    ("event_graph", {"n_experiences": 20000}, (None,)),
    ("random_coverage", {"n_groups": 200}, (55, 110)),
]
WRITERS = ("gvt", "density")


def closest_off(inst, selected_idx, reference_idx, budget):
    """The baseline: the solver's optimum as it is (no reference store to move towards)."""
    return closest_equivalent(inst, selected_idx, (), budget)


def best_of(call, repeats: int = 3) -> float:
    """The fastest of a few runs (seconds): the score is cached work plus this change."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    return min(times)


def missed_units(inst, store_idx, opt_idx) -> int:
    h = get_saturation(inst.saturation).h
    lost = inst.weight * (h(coverage_of(inst, opt_idx)) - h(coverage_of(inst, store_idx)))
    return int((lost > 1e-9).sum())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="closest.json", help="name of the JSON in bench/out/")
    ap.add_argument("--time-limit", type=float, default=120.0)
    args = ap.parse_args()
    rows = []
    for family, params, budgets in CASES:
        pkg = generate(family, seed=0, **params)
        inst = compile_cached(pkg)
        for budget in budgets:
            budget = budget if budget is not None else pkg.budgets[0]
            for writer in WRITERS:
                ev = score(pkg, budget, writer=writer, time_limit=args.time_limit)  # warm-up
                again = functools.partial(score, pkg, budget, writer=writer)
                analysis.closest_equivalent = closest_off
                try:
                    base_s = best_of(again)
                finally:
                    analysis.closest_equivalent = closest_equivalent
                score_s = best_of(again)
                store_idx = inst.indices(ev.selected)
                solver_idx = ev.opt.selected_idx
                orbits._class_cache.clear()  # cold: block classes found again
                t0 = time.perf_counter()
                near = closest_equivalent(inst, solver_idx, store_idx, budget)
                closest_s = time.perf_counter() - t0
                same_f = abs(evaluate(inst, near.selected_idx) - evaluate(inst, solver_idx))
                if same_f > 1e-9 * max(1.0, ev.opt_value) or not inst.is_feasible(
                    near.selected_idx, budget
                ):
                    raise SystemExit(f"closest changed F or broke the budget: {family} {budget}")
                row = {
                    "family": family,
                    **params,
                    "budget": budget,
                    "writer": writer,
                    "certified": ev.opt_certified,
                    "score_without_s": base_s,
                    "score_s": score_s,
                    "ratio": score_s / base_s,
                    "closest_cold_s": closest_s,
                    "differences_before": near.differences_before,
                    "differences_after": near.differences_after,
                    "missed_before": missed_units(inst, store_idx, solver_idx),
                    "missed_after": missed_units(inst, store_idx, near.selected_idx),
                }
                rows.append(row)
                print(
                    f"{family:17s} {list(params.values())[0]:>6} B={budget:<8g} {writer:8s} "
                    f"score {base_s * 1000:7.1f} -> {score_s * 1000:7.1f} ms "
                    f"({row['ratio']:.2f}x) | cold {closest_s * 1000:4.0f} ms | "
                    f"differ {near.differences_before:4d} -> "
                    f"{near.differences_after:4d} | missed {row['missed_before']:4d} -> "
                    f"{row['missed_after']:4d}",
                    flush=True,
                )
    save(args.out, {"machine": machine(), "rows": rows})


if __name__ == "__main__":
    main()
