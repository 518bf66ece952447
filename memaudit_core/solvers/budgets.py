"""OPT at many budgets of one instance, reusing work across budgets (:func:`solve_budgets`).

Two ways, both exact and certified like :func:`memaudit_core.solvers.solve`:

* **One decomposition for all budgets** (``auto`` on instances whose interaction components
  are small, see :mod:`.frontier`): one exhaustive enumeration by components answers every
  budget. Each result is recorded as engine ``enum`` with the proof "exhaustive enumeration by
  components (all budgets at once)". It is abandoned past :data:`FRONTIER_WORK_PER_BUDGET`
  combinations and merge pairs per budget (at least :data:`FRONTIER_MIN_WORK`), where
  budget-by-budget solves are usually cheaper; what was spent until then is about the cost of
  those solves at most.
* **Budget by budget** otherwise, in ascending order. The optimum at a smaller budget is
  feasible at every larger one, so it is the starting incumbent (and HiGHS MIP start) of the
  next solve, with the caller's incumbents. When a proven optimum already reaches the largest
  value F can take (every reachable unit capped), it is optimal at every larger budget too
  (OPT is nondecreasing in B and bounded by that value) and wins their tie-breaks (anything
  as good and no dearer was feasible at the smaller budget): those budgets are answered
  without a solve, with the proof "monotonicity". With ``workers > 1`` the budgets start
  largest first (larger ones are usually the slowest), and a budget that a larger budget's proven
  optimum fits is answered by it (also "monotonicity"). Such a budget still gets the
  cross-check a solve there would run, so it is certified by the same rule.

Cross-checks in bulk (``cross_check``): ``True`` checks every result with a second exact
engine, ``False`` none, ``None`` does what :func:`~memaudit_core.solvers.solve` does per
budget (``auto``'s cheap checks), and ``"sample"`` (the default) checks a deterministic
sample: every budget of one instance in :data:`SAMPLE_EVERY`, chosen by the package's content
hash, with the plain vectorised enumeration (independent of the decomposition code) or with
``bnb`` / ``milp``; a named engine also gets, outside the sample, the check ``solve`` runs by
default (enumeration when the product is tiny). The certificate of each result records which
proof stands behind it and whether a cross-check agreed.

Examples
--------
>>> from memaudit_core.generators import generate
>>> from memaudit_core.compiled import compile_package
>>> inst = compile_package(generate("update_chain"))
>>> res = solve_budgets(inst, [13, 3, 6])
>>> [(round(r.value, 6), r.label) for r in res]
[(8.025, 'OPT'), (5.55, 'OPT'), (7.735, 'OPT')]
>>> res[0].certificate.proof
'exhaustive enumeration by components (all budgets at once)'
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import replace

import numpy as np

from ..compiled import CompiledInstance, budget_with_tolerance
from ..errors import (
    MemAuditError,
    SolverDisagreementError,
    UnknownNameError,
    check_progress,
    cut_repr,
)
from ..objective import evaluate, evaluate_many
from ..parallel import (
    SolverPool,
    check_workers,
    init_solver_worker,
    pool_context,
    stop_pool,
    worker_died,
)
from . import (
    SOLVER_CHOICES,
    RawSolution,
    SolveResult,
    _check_limits,
    check_budget,
    relative_gap,
    value_unit,
)
from .certify import (
    PROOFS,
    VALUE_RTOL,
    _check_incumbent,
    finish,
    planned_cross,
    solve_certified,
)
from .enum import (
    ENUM_MAX_COMBINATIONS,
    combination_count,
    enum_all_budgets,
)
from .frontier import Frontier, FrontierTooLarge
from .timeshare import active_share, check_total_time_limit, run_time_limit, skip_runs

#: The decomposition's work cap per budget asked for (combinations and merge pairs, 1-2
#: microseconds each): past about 4 ms of it per budget, one HiGHS solve per budget is usually
#: the cheaper way (MILPs take 5-20 ms on the 100-experience packages whose components merge
#: into fronts of 10,000+ stores; measured in bench/RESULTS.md, issue 7, fourth session).
FRONTIER_WORK_PER_BUDGET = 2_500
#: ... but never less than this (small sweeps of small packages).
FRONTIER_MIN_WORK = 25_000

#: With ``cross_check="sample"``, one instance in this many (by content hash) is cross-checked.
SAMPLE_EVERY = 32
CROSS_CHECK_MODES = (True, False, None, "sample")


def sampled(inst: CompiledInstance) -> bool:
    """Whether ``cross_check="sample"`` checks this instance (stable across runs and orders).

    Examples
    --------
    >>> from memaudit_core.generators import generate
    >>> from memaudit_core.compiled import compile_package
    >>> [sampled(compile_package(generate("memaudit-small", seed=s))) for s in range(3)]
    [False, False, False]
    """
    try:
        key = int(inst.content_hash[:12], 16)
    except ValueError:
        key = sum(inst.content_hash.encode())
    return key % SAMPLE_EVERY == 0


def _frontier(inst: CompiledInstance, b_max: float, n_budgets: int) -> Frontier | None:
    max_work = max(FRONTIER_MIN_WORK, FRONTIER_WORK_PER_BUDGET * n_budgets)
    try:
        return Frontier(inst, b_max, max_work=max_work)
    except FrontierTooLarge:
        return None


def _frontier_results(
    inst: CompiledInstance,
    fr: Frontier,
    grid: list[float],
    t_front: float,
    cross_check: bool | str | None,
    limits: dict,
) -> dict[float, SolveResult]:
    check = (
        cross_check is True or cross_check is None or (cross_check == "sample" and sampled(inst))
    )
    # The frontier was built on inst.scaled_view: budgets and values in its units.
    view, value_scale, cost_scale = inst.scaled_view
    plain: dict[float, tuple[float, tuple[int, ...]]] = {}
    t_plain = 0.0
    if check and combination_count(inst, grid[-1]) <= ENUM_MAX_COMBINATIONS:
        t = time.perf_counter()
        answers = enum_all_budgets(view, [b * cost_scale for b in grid])
        plain = {b: (v / value_scale, s) for b, (v, s) in zip(grid, answers, strict=True)}
        t_plain = (time.perf_counter() - t) / len(grid)
    per = t_front / len(grid)
    detail = {
        "method": "frontier",
        "components": fr.n_components,
        "combinations": fr.combinations,
        "entries": len(fr.entries),
        "budgets": len(grid),
    }
    best = [(v / value_scale, s) for v, s in (fr.best(b * cost_scale) for b in grid)]
    # F of every store, recomputed from the compiled instance in one pass (same numbers as
    # objective.evaluate) for the certificates.
    recomputed = evaluate_many(inst, [sel for _, sel in best])
    out = {}
    for b, (value, sel), rec in zip(grid, best, recomputed, strict=True):
        raw = RawSolution(sel, value, value, "optimal", nodes=fr.combinations, detail=detail)
        second, second_raw = None, None
        if check:
            if b in plain:
                v2, s2 = plain[b]
                second = "enum"
                second_raw = (
                    RawSolution(s2, v2, v2, "optimal", detail={"method": "enumeration"}),
                    t_plain,
                )
            else:
                second = "bnb"
        out[b] = finish(
            inst,
            b,
            "enum",
            raw,
            per,
            second=second,
            second_raw=second_raw,
            explicit_cross=cross_check is True,
            limits=limits,
            recomputed=rec,
        )
    return out


def _monotone_result(
    inst: CompiledInstance,
    budget: float,
    known: SolveResult,
    solver: str,
    cross_check: bool | None,
    limits: dict,
) -> SolveResult:
    """A proven optimum at another budget, re-certified at ``budget``.

    From a smaller budget when it already reaches F's largest value
    (:func:`_fits_and_saturated`), from a larger one when its store fits ``budget``
    (:func:`_fits_from_above`); the proof names which. The cross-check that
    :func:`~memaudit_core.solvers.solve` would run at ``budget`` (``solver`` and the per-budget
    ``cross_check``) runs here too, under ``limits``, so both paths certify by one rule (QA s41
    defect 1: without it, a HiGHS optimum on costs spanning a factor 1e5 was "OPT" from
    ``solve`` and "optimal (uncertified)" from the sweep, for want of the check's agreement).
    ``known`` is certified, and the result inherits that: HiGHS's conditioning is judged at
    ``known``'s budget, where its proof was made, not at ``budget`` (QA s41 second round).
    """
    t = time.perf_counter()
    method = "monotone" if known.budget < budget else "monotone_fits"
    raw = RawSolution(
        tuple(known.selected_idx),
        known.value,
        known.value,
        "optimal",
        detail={"method": method, "from_budget": known.budget},
    )
    proof = f"{PROOFS[method]} (B = {known.budget:.10g}: {known.certificate.proof})"
    second = planned_cross(inst, budget, solver, known.solver, cross_check)
    if second is None:
        skip_runs(1)  # no engine run: a shared total goes to the later runs
    else:  # the cross-check is this budget's run: its share of a shared total
        limits = {**limits, "time_limit": run_time_limit(limits.get("time_limit"))}
    return finish(
        inst,
        budget,
        known.solver,
        raw,
        time.perf_counter() - t,
        second=second,
        explicit_cross=bool(cross_check),
        limits=limits,
        t0=t,
        proof=proof,
        certified_elsewhere=known.certified,
    )


def solve_budgets(
    inst: CompiledInstance,
    budgets: Sequence[float],
    solver: str = "auto",
    *,
    time_limit: float | None = None,
    node_limit: int | None = None,
    cross_check: bool | str | None = "sample",
    incumbents: Sequence[tuple[int, ...] | None] | None = None,
    progress: Callable[[int, int], None] | None = None,
    workers: int = 1,
) -> list[SolveResult]:
    """Certified OPT at each budget (results in the order of ``budgets``).

    Parameters
    ----------
    inst : CompiledInstance
    budgets : sequence of float
        Budgets B >= 0; duplicates are solved once.
    solver : {'auto', 'bnb', 'milp', 'enum', 'brute'}
        ``auto`` answers every budget from one decomposition when the instance's components
        are small (:mod:`.frontier`), else solves budget by budget with
        :func:`~memaudit_core.solvers.certify.choose`. Other names run that engine per budget.
    time_limit, node_limit : optional
        Per budget, as in :func:`~memaudit_core.solvers.solve`. Inside a
        :func:`~memaudit_core.solvers.timeshare.shared_time` block each budget's run gets at
        most its share of the total; budgets answered without a run give theirs back.
    cross_check : {'sample', True, False, None}
        See the module docstring; ``"sample"`` (default) cross-checks one instance in
        :data:`SAMPLE_EVERY`.
    incumbents : sequence, optional
        A known feasible selection per budget (same order as ``budgets``), e.g. writer stores.
    progress : callable, optional
        ``progress(done, total)`` once per distinct budget, as its optimum is known
        (smallest budget first; with ``workers > 1`` in order of completion).
    workers : int
        Budget-by-budget solves run in this many worker processes (default 1: in this
        process). The budgets are handed out largest first (larger budgets are usually the
        slower proofs, so the short ones fill the workers' time at the end), each starting
        from the best store given or proven at a smaller budget; a budget that a larger
        budget's optimum fits is answered by that optimum. Results are certified the same way.

    Returns
    -------
    list of SolveResult

    Examples
    --------
    >>> from memaudit_core.generators import generate
    >>> from memaudit_core.compiled import compile_package
    >>> inst = compile_package(generate("temporal_interval"))
    >>> [round(r.value, 6) for r in solve_budgets(inst, [3, 6, 13], "bnb")]
    [3.2, 6.0, 10.635]
    """
    if solver not in SOLVER_CHOICES:
        raise UnknownNameError(
            f"unknown solver {cut_repr(solver)} (known: {', '.join(SOLVER_CHOICES)})"
        )
    if cross_check not in CROSS_CHECK_MODES:
        raise MemAuditError(
            f"cross_check must be True, False, None or 'sample', got {cut_repr(cross_check)}"
        )
    budgets = [check_budget(b) for b in budgets]
    _check_limits(time_limit, node_limit)
    workers = check_workers(workers)
    if incumbents is not None and (
        isinstance(incumbents, str | bytes | Mapping)
        or not hasattr(incumbents, "__len__")
        or len(incumbents) != len(budgets)
    ):
        raise MemAuditError(
            "incumbents must be a list giving one selection (or None) per budget, in the "
            f"order of budgets; got {cut_repr(incumbents)}"
        )
    check_progress(progress)
    if not budgets:
        return []
    grid = sorted(set(budgets))
    given: dict[float, list[tuple[int, ...]]] = {}
    for b, inc in zip(budgets, incumbents or [None] * len(budgets), strict=True):
        # The checks solve() makes (library QA: (999,) gave an IndexError, 0.7 became 0).
        positions = _check_incumbent(inst, inc, b)
        if positions:
            given.setdefault(b, []).append(positions)
    limits = {"time_limit": time_limit, "node_limit": node_limit}
    results: dict[float, SolveResult] = {}

    # One frontier serves every budget on one scaled view; budgets whose fitting candidates
    # need another value scale (CompiledInstance.value_scale_at) are solved one by one.
    one_scale = len({inst.value_scale_at(b) for b in grid} | {inst.scaled_view[1]}) == 1
    if solver == "auto" and one_scale:
        t = time.perf_counter()
        view, _, cost_scale = inst.scaled_view
        fr = _frontier(view, budget_with_tolerance(grid[-1] * cost_scale), len(grid))
        if fr is not None:
            results = _frontier_results(
                inst, fr, grid, time.perf_counter() - t, cross_check, limits
            )
            skip_runs(len(grid))  # no engine run: a shared total goes to the later runs
            if progress is not None:
                for k in range(len(grid)):
                    progress(k + 1, len(grid))
            return [results[b] for b in budgets]

    per_budget_cross = _per_budget_cross(inst, cross_check, solver)
    if workers > 1 and len(grid) > 1:
        if active_share() is not None:
            # Worker processes do not see the share: their runs would ignore the total.
            check_total_time_limit(active_share().total_s, workers)
        results = _solve_in_workers(
            inst, grid, solver, given, per_budget_cross, limits, workers, progress
        )
        return [results[b] for b in budgets]
    prev: SolveResult | None = None
    for k, b in enumerate(grid):
        if progress is not None and k:
            progress(k, len(grid))
        if prev is not None and prev.certified and _fits_and_saturated(inst, prev, b):
            results[b] = _monotone_result(inst, b, prev, solver, per_budget_cross, limits)
            continue
        candidates = [*given.get(b, [])]
        if prev is not None:
            candidates.append(tuple(prev.selected_idx))
        inc = _best_feasible(inst, b, candidates)
        res = solve_certified(
            inst, b, solver, cross_check=per_budget_cross, incumbent_idx=inc, **limits
        )
        results[b] = res
        prev = res
    if progress is not None:
        progress(len(grid), len(grid))
    return [results[b] for b in budgets]


#: The instance a worker process solves (set once per worker by :func:`_init_worker`).
_WORKER_INST: CompiledInstance | None = None


def _init_worker(inst: CompiledInstance) -> None:
    global _WORKER_INST
    _WORKER_INST = inst
    init_solver_worker()


def _solve_in_worker(
    budget: float,
    solver: str,
    cross_check: bool | None,
    incumbent_idx: tuple[int, ...] | None,
    limits: dict,
) -> SolveResult:
    assert _WORKER_INST is not None, "worker not initialised"
    return solve_certified(
        _WORKER_INST, budget, solver, cross_check=cross_check, incumbent_idx=incumbent_idx, **limits
    )


def _solve_in_workers(
    inst: CompiledInstance,
    grid: list[float],
    solver: str,
    given: dict[float, list[tuple[int, ...]]],
    cross_check: bool | None,
    limits: dict,
    workers: int,
    progress: Callable[[int, int], None] | None,
) -> dict[float, SolveResult]:
    """The budget-by-budget loop on a process pool.

    The budgets are submitted largest first, at most ``workers`` at a time. The largest
    budgets are usually the slowest proofs by far (on random packages the two largest of 20
    take half the time): started last they would end the sweep on one busy core, and handed
    out in decreasing size the short solves come last and fill both workers to the end (the
    longest-processing-time rule: on target 3's package the pool is busy 99.6% of the wall
    time, against 96.6-97.0% with the two largest first and the others smallest first;
    bench/RESULTS.md, fifty-seventh session). A solve starts from every store known at a
    smaller budget (all of them are feasible at the larger one) and the caller's incumbents.
    A certified optimum answers other budgets without a solve: the larger ones when it
    saturates every unit, as in the sequential loop, and the smaller ones its store fits (OPT
    is nondecreasing in B).
    """
    results: dict[float, SolveResult] = {}
    pending = grid[::-1]
    running: dict[Future, float] = {}
    finished = False
    pool = SolverPool(
        max_workers=min(workers, len(grid)),
        mp_context=pool_context(),
        initializer=_init_worker,
        initargs=(inst,),
        saturations_used=(inst.saturation,),
    )
    try:
        while pending or running:
            while pending and len(running) < workers:
                b = pending.pop(0)
                below = [r for r in results.values() if r.budget <= b]
                top = max(below, key=lambda r: r.budget, default=None)
                if top is not None and top.certified and _fits_and_saturated(inst, top, b):
                    known: SolveResult | None = top
                else:
                    known = _fits_from_above(inst, b, results.values())
                if known is not None:
                    results[b] = _monotone_result(inst, b, known, solver, cross_check, limits)
                    if progress is not None:
                        progress(len(results), len(grid))
                    continue
                known = [*given.get(b, []), *(tuple(r.selected_idx) for r in below)]
                inc = _best_feasible(inst, b, known)
                running[pool.submit(_solve_in_worker, b, solver, cross_check, inc, limits)] = b
            if not running:
                continue
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for fut in done:
                b = running.pop(fut)
                try:
                    results[b] = fut.result()
                except BrokenProcessPool as exc:
                    raise worker_died("budget sweep", exc) from exc
                if progress is not None:
                    progress(len(results), len(grid))
        finished = True
    finally:
        stop_pool(pool, abandon=not finished)
    return results


def _fits_and_saturated(inst: CompiledInstance, prev: SolveResult, budget: float) -> bool:
    """True when no store can be worth more than ``prev``'s at any budget.

    That is the case when the proven optimum already reaches the largest value F can take
    (every unit's cap reached by the candidates that exist): then it is optimal at every
    larger budget, and tie-breaks agree because nothing cheaper reaches that value (it was
    the cheapest at its own, smaller budget).
    """
    if inst.saturation != "cap1" or prev.status != "optimal":
        return False
    reachable = np.asarray(inst.coverage.sum(axis=0)).ravel() > 0
    top = float(inst.weight[reachable].sum())
    # Relative only: with an absolute floor of 1e-12, a package whose weights sum to 4e-12
    # counted an optimum of 3e-12 as saturated (QA: certified 3e-12 at every larger budget).
    return prev.value >= top * (1.0 - 1e-12) and budget >= prev.budget


def _fits_from_above(
    inst: CompiledInstance, budget: float, results: Iterable[SolveResult]
) -> SolveResult | None:
    """A certified optimum at a larger budget whose store fits ``budget``, if any.

    It is optimal here too: OPT is nondecreasing in B, and the store is feasible. It also
    wins the tie-breaks here when it won them there: every store as good and within
    ``budget`` was feasible at the larger budget. The smallest such budget is taken.
    """
    above = sorted(
        (r for r in results if r.budget > budget and r.certified and r.status == "optimal"),
        key=lambda r: r.budget,
    )
    return next((r for r in above if inst.is_feasible(tuple(r.selected_idx), budget)), None)


def _per_budget_cross(
    inst: CompiledInstance, cross_check: bool | str | None, solver: str = "auto"
) -> bool | None:
    """solve_certified's ``cross_check`` for one budget of a sweep's mode.

    ``"sample"`` on an instance outside the sample: no check for ``auto``, and for a named
    engine the one :func:`~memaudit_core.solvers.solve` runs by default (enumeration when the
    product is tiny). A MILP proof on costs spanning a factor 1e5 is certified only by that
    check's agreement: without it, ``sweep --solver milp`` starred rows that ``solve --solver
    milp`` certified (QA s41 defect 1). Under ``auto`` no check changes a label.
    """
    if cross_check is None:
        return None
    if cross_check in (True, False):
        return bool(cross_check)
    return None if sampled(inst) or solver != "auto" else False


#: A refinement run shorter than this would rarely change an unproven result.
REFINE_MIN_S = 0.5


def refine_unproven(
    solved: Sequence[tuple[CompiledInstance, list[SolveResult]]],
    solver: str = "auto",
    *,
    cross_check: bool | str | None = "sample",
    n_runs: int | None = None,
) -> int:
    """Inside a shared total, give the time the runs left over to the unproven results.

    A fair share of the total (:mod:`.timeshare`) cannot know which runs are hard: on a hard
    package the one hard budget got 3.4 s of a 30 s sweep and the page finished after 12 s.
    Once every run has had its share, each result in ``solved`` that is not certified is
    solved again from its incumbent (largest gap first, the spare time split evenly), and
    replaced by the better of the two (:func:`better_of`). Lists are updated in place;
    without an active share nothing happens. The spare time is the share of ``n_runs`` runs
    (default: one per result in ``solved``) beside the runs still expected
    (:meth:`.timeshare.TimeShare.spare_s`): all that is left once no more runs are expected.

    Returns
    -------
    int
        How many results were solved again.
    """
    share = active_share()
    if share is None:
        return 0
    todo = sorted(
        (
            (result.gap, n, inst, results, k)
            for n, (inst, results) in enumerate(solved)
            for k, result in enumerate(results)
            if not result.certified
        ),
        key=lambda item: (-item[0], item[1], item[4]),
    )
    if n_runs is None:
        n_runs = sum(len(results) for _, results in solved)
    deadline = time.perf_counter() + share.spare_s(n_runs)
    refined = 0
    for done, (_, _, inst, results, k) in enumerate(todo):
        left = deadline - time.perf_counter()
        if left < REFINE_MIN_S:
            break
        old = results[k]
        with share.extra_runs():
            new = solve_certified(
                inst,
                old.budget,
                solver,
                time_limit=left / (len(todo) - done),
                cross_check=_per_budget_cross(inst, cross_check, solver),
                incumbent_idx=tuple(old.selected_idx) or None,
            )
        results[k] = better_of(old, new, value_unit(inst, old.budget))
        refined += 1
    return refined


def better_of(old: SolveResult, new: SolveResult, unit: float = 1.0) -> SolveResult:
    """Two results of one instance and budget as one: a certified one, else the better
    incumbent with the tighter of the two proven bounds (both bound the same optimum).

    ``unit`` is :func:`~memaudit_core.solvers.value_unit` of the instance, for the gap.

    Raises
    ------
    SolverDisagreementError
        One run's proven bound is below the other's incumbent (or, both certified, the two
        optima differ): one of them is wrong, and merging would hide it.
    """
    for a, b in ((old, new), (new, old)):
        if a.bound < b.value - VALUE_RTOL * max(unit, abs(b.value)):
            raise SolverDisagreementError(
                f"budget {old.budget:g}: a run proved the bound {a.bound:.9g}, below the "
                f"store of value {b.value:.9g} another run found"
            )
    if old.certified or new.certified:
        return old if old.certified else new
    best = new if new.value > old.value else old
    bound = max(best.value, min(old.bound, new.bound))
    return replace(
        best,
        bound=bound,
        gap=relative_gap(best.value, bound, unit),
        time_s=old.time_s + new.time_s,
        nodes=old.nodes + new.nodes,
    )


def lift_store(inst: CompiledInstance, found: SolveResult, into: SolveResult) -> SolveResult:
    """``into`` (a result on ``inst``) after learning of ``found``, a result on a restriction of
    ``inst`` (an ablation pool) at the same budget.

    ``found``'s store is feasible in ``inst``, so OPT(inst) is at least its value: an unproven
    ``into`` below it takes that store, with ``into``'s own proven bound (QA: under a short
    shared total a pool's incumbent beat the full package's, and the ablation ratio was
    1.00064). A ``found`` worth no more than ``into`` changes nothing.

    Raises
    ------
    SolverDisagreementError
        ``into``'s proven bound is below ``found``'s value.
    """
    if found.value <= into.value:
        return into
    idx = tuple(int(i) for i in inst.indices(found.selected))
    value = evaluate(inst, idx)
    lifted = replace(
        into,
        value=value,
        selected=inst.ids(idx),
        selected_idx=idx,
        cost=inst.selection_cost(idx),
        status="limit",
        gap=relative_gap(value, max(value, into.bound), value_unit(inst, into.budget)),
    )
    return better_of(into, lifted, value_unit(inst, into.budget))


def _best_feasible(
    inst: CompiledInstance, budget: float, candidates: list[tuple[int, ...]]
) -> tuple[int, ...] | None:
    best, best_v = None, -math.inf
    for sel in candidates:
        if sel and inst.is_feasible(sel, budget):
            v = evaluate(inst, sel)
            if v > best_v:
                best, best_v = sel, v
    return best


__all__ = [
    "CROSS_CHECK_MODES",
    "REFINE_MIN_S",
    "SAMPLE_EVERY",
    "better_of",
    "lift_store",
    "refine_unproven",
    "sampled",
    "solve_budgets",
]
