"""Engine ``milp``: the exact optimum by mixed-integer programming in HiGHS (highspy).

Formulation (saturation ``cap1``)::

    max  sum_r w_r y_r
    s.t. y_r - sum_u a_ur x_u <= 0        for every unit r kept as a y column
         sum_u c_u x_u        <= B        (one knapsack row, B with the 1e-9 tolerance)
         sum_{u in g} x_u     <= k        for every group g with more than k candidates
         x_u in {0, 1},  0 <= y_r <= 1

Maximisation pushes y_r up to min(1, sum_u a_ur x_u), so only the x columns are integer.
Exact reductions: units of zero weight, units no affordable candidate covers and candidates
over budget are left out; when k = 1 and every candidate covering unit r sits in one group,
sum_u a_ur x_u <= 1 and the unit's term is linear, so it moves into the x objective and needs no
y column. Saturation ``linear`` has no y columns at all. ``log1p`` is not linear-representable
here and is refused with :class:`~memaudit_core.errors.SolverError`.

On large models that are mostly a multiple-choice knapsack (at least
:data:`NEIGHBOURHOOD_MIN_COLUMNS` candidate columns, at most :data:`NEIGHBOURHOOD_MAX_COUPLING`
coverage columns per candidate column) HiGHS first gets a *neighbourhood start*: the LP
relaxation is solved, and a sub-MIP over the candidates it uses, their groups' siblings and the
:data:`NEIGHBOURHOOD_EXTRA` others of best reduced cost finds a store that seeds the full solve
(:func:`neighbourhood_start`). On event-graph packages of 3,000-5,000 experiences HiGHS
otherwise spends seconds looking for the last 0.1% (a rounding heuristic failing against the
long knapsack row), while the proof from the optimum takes well under a second
(``bench/RESULTS.md``, issue 7). The start only seeds the search: the full model is solved and
proves the optimum as before.

A time-limited run on a model of at least :data:`GUARD_MIN_COLUMNS` candidate columns solves in a
child process that is killed when HiGHS overruns the limit (:func:`_run_highs_guarded`): HiGHS
1.16's root heuristics can ignore the clock for minutes on such models.

Both ``mip_rel_gap`` and ``mip_abs_gap`` are set to 0 (HiGHS defaults are 1e-4 and 1e-6, which
would accept a non-optimal store as "optimal"); HiGHS then stops only when its dual bound meets
the incumbent up to its own feasibility tolerances, which are tightened to 1e-9 so that the
reported objective matches F of the returned store to ~1e-11 relative. Those tolerances are
absolute in objective units, so HiGHS gets the objective scaled up (:func:`objective_scale`) and
its objective and bound are scaled back. The *model* status is
read (a run status of OK says nothing about optimality), with the dual bound and node count. A
limit hit before any incumbent returns the empty store (always feasible) and the dual bound.

Examples
--------
>>> from memaudit_core.generators import generate
>>> from memaudit_core.compiled import compile_package
>>> raw = solve_milp(compile_package(generate("update_chain")), 6)
>>> round(raw.value, 6), raw.status
(7.735, 'optimal')
"""

from __future__ import annotations

import functools
import math
import os
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

from .. import heartbeat
from ..compiled import CompiledInstance, budget_with_tolerance
from ..errors import SolverError
from ..objective import GAIN_EPS, coverage_of, evaluate, get_saturation
from . import RawSolution, orbits, register_engine, value_unit
from .bnb import heuristic_store_and_bound

#: Saturations the MILP formulation can express exactly.
SUPPORTED_SATURATIONS = ("cap1", "linear")


def unsupported_saturation(saturation: str) -> str | None:
    """Why the MILP cannot take ``saturation`` (no advice: callers that offer another solver
    add it), or None when it can.

    >>> unsupported_saturation("cap1") is None
    True
    """
    if saturation in SUPPORTED_SATURATIONS:
        return None
    return (
        f"the 'milp' solver supports saturations {', '.join(SUPPORTED_SATURATIONS)} only; "
        f"saturation {saturation!r} ({get_saturation(saturation).description}) is "
        "not linear-representable here"
    )


#: HiGHS primal / MIP feasibility tolerance (defaults 1e-7 / 1e-6).
FEASIBILITY_TOLERANCE = 1e-9
#: Models of at most this many candidate columns are solved with HiGHS's presolve off.
#: Exactness QA (eighteenth session): with a budget 1.1e-9 to 2.5e-9 (relative) below the cost
#: of some store, presolve reductions (rules 5, 15, 20 or 23 depending on the package) removed
#: the optimum and HiGHS "proved" a worse store, on 3- to 45-candidate packages; with presolve
#: off those solve right, and small models lose nothing without it.
PRESOLVE_OFF_MAX_COLUMNS = 64
#: Unlimited runs on models of at most this many candidate columns also compute the B&B's
#: root heuristic store (milliseconds here) to check HiGHS's optimum against: a proven optimum
#: worth less than a known feasible store is a HiGHS error, solved again with presolve off.
CHECK_HEURISTIC_MAX_COLUMNS = 400


#: Affordable costs spanning more than this factor make the knapsack row ill-conditioned for
#: HiGHS: with costs of 1e-6 next to 0.5 or 1e3, coefficients near its 1e-9 tolerances made it
#: miss optima exactly at the budget (QA fuzz: every miss had a spread of 5e5 or more).
#: ``auto`` then proves with B&B, and a MILP proof alone is not certified. Bundled samples and
#: generated families span 2-12, word costs of imported benchmarks up to about 1e4.
MILP_MAX_COST_SPREAD = 1e5


def milp_ill_conditioned(inst: CompiledInstance, budget: float) -> bool:
    """True when the affordable candidates' costs span more than :data:`MILP_MAX_COST_SPREAD`.

    Examples
    --------
    >>> from memaudit_core.generators import generate
    >>> from memaudit_core.compiled import compile_package
    >>> milp_ill_conditioned(compile_package(generate("update_chain")), 6)
    False
    """
    return _spread_too_wide(inst.cost[inst.cost <= budget_with_tolerance(budget)])


#: Why a HiGHS result at a budget where :func:`milp_ill_conditioned` holds proves nothing on its
#: own (:func:`ill_conditioned_reason`; callers add their consequence).
ILL_CONDITIONED_REASON = (
    f"the affordable costs span more than a factor {MILP_MAX_COST_SPREAD:g}, where HiGHS's 1e-9 "
    "tolerances cannot tell stores at the budget apart"
)


def ill_conditioned_reason(inst: CompiledInstance, budget: float) -> str | None:
    """Why HiGHS's proof and bound at ``budget`` are no proof (:data:`ILL_CONDITIONED_REASON`),
    or None where they are. One rule for ``solve``, ``audit`` and the Certification page (QA
    s48: HiGHS "proved" 1e9 with bound 1e9 where a store worth 1e9 + 0.5 fits, 5e-10 relative,
    and audit and the Certification page counted that as a proof agreeing with bnb).

    Examples
    --------
    >>> from memaudit_core.generators import generate
    >>> from memaudit_core.compiled import compile_package
    >>> ill_conditioned_reason(compile_package(generate("update_chain")), 6) is None
    True
    """
    return ILL_CONDITIONED_REASON if milp_ill_conditioned(inst, budget) else None


#: How a certificate's reason says the result's bound is not HiGHS's (QA s49): certification
#: replaced it by one proven without HiGHS (:func:`replaced_highs_bound`).
BOUND_REPLACED = "is no proof here, the bound given is"


def highs_bound_refused(result: object) -> bool:
    """Whether ``result``'s certificate refused HiGHS's proof and bound on ill-conditioned
    costs (its reason gives :data:`ILL_CONDITIONED_REASON`). Judged by the reason, so a saved
    result reads the same.

    Examples
    --------
    >>> from types import SimpleNamespace as R
    >>> highs_bound_refused(R(certificate=R(reason=ILL_CONDITIONED_REASON + ": use bnb")))
    True
    >>> highs_bound_refused(R(certificate=None))
    False
    """
    cert = getattr(result, "certificate", None)
    return cert is not None and ILL_CONDITIONED_REASON in (getattr(cert, "reason", "") or "")


def bound_unproven(result: object) -> bool:
    """Whether ``result``'s bound is HiGHS's on ill-conditioned costs, which proves nothing:
    text must not call it a proven bound, nor F / bound a lower limit of the ratio (QA s48:
    "OPT is at most the proven bound 1e+09" beside a store worth 1e9 + 0.5). Only results saved
    before QA s49 carry it; since, certification gives a proven bound instead
    (:func:`replaced_highs_bound`).

    Examples
    --------
    >>> from types import SimpleNamespace as R
    >>> bound_unproven(R(certificate=R(reason=ILL_CONDITIONED_REASON + ": use bnb")))
    True
    >>> bound_unproven(R(certificate=R(reason=f"{ILL_CONDITIONED_REASON}; 1.0 {BOUND_REPLACED}")))
    False
    >>> bound_unproven(R(certificate=None))
    False
    """
    cert = getattr(result, "certificate", None)
    return highs_bound_refused(result) and BOUND_REPLACED not in (cert.reason or "")


def replaced_highs_bound(result: object) -> float | None:
    """HiGHS's bound that certification replaced by a proven one on ill-conditioned costs
    (kept in ``certificate.checks[0]``), or None where the result's bound is its engine's own.
    Text names it beside the proven bound, so nothing HiGHS reported is hidden.

    Examples
    --------
    >>> from types import SimpleNamespace as R
    >>> reason = f"{ILL_CONDITIONED_REASON}; milp's bound 1.0 {BOUND_REPLACED} F of ..."
    >>> replaced_highs_bound(R(certificate=R(reason=reason, checks=(R(bound=1.0),))))
    1.0
    >>> replaced_highs_bound(R(certificate=None)) is None
    True
    """
    if not highs_bound_refused(result) or bound_unproven(result):
        return None
    checks = getattr(result.certificate, "checks", ())  # type: ignore[attr-defined]
    return float(checks[0].bound) if checks else None


def _spread_too_wide(costs: np.ndarray) -> bool:
    return bool(costs.size) and float(costs.max()) > MILP_MAX_COST_SPREAD * float(costs.min())


#: HiGHS's objective is multiplied by a power of two that brings the best single affordable
#: candidate's value to at least this. HiGHS prunes every store that beats its incumbent by at
#: most its feasibility tolerance (1e-9) *in objective units*, an absolute amount: at OPT 0.44 a
#: store better by 1e-9 (2.3e-9 relative) was lost and the worse one certified with gap 0
#: (exactness QA s49). With the objective at least 2^10 that loss is under 1e-12 relative.
OBJECTIVE_FLOOR = 2.0**10
#: ... but no objective coefficient is scaled above this (HiGHS's ``infinite_cost`` is 1e20).
OBJECTIVE_CEILING = 1e15


def objective_scale(
    inst: CompiledInstance, budget: float, col_cost: np.ndarray | None = None
) -> float:
    """The power of two HiGHS's objective is multiplied by at ``budget``: the smallest that
    brings the best single affordable candidate's value to at least :data:`OBJECTIVE_FLOOR`,
    lowered where needed so that no coefficient of ``col_cost`` (the model's objective) exceeds
    :data:`OBJECTIVE_CEILING`. 1 when the objective is already that large, when nothing
    affordable has a value, or when that value is below 2^-960 (scaling it would be absurd).

    Each affordable candidate alone is a feasible store, so the largest of their values is a
    lower bound on OPT; coverage is at most 1, so that value is ``coverage @ weight`` under both
    ``cap1`` and ``linear``. A power of two keeps the objective and bound mapped back exactly.

    Examples
    --------
    >>> from memaudit_core.generators import generate
    >>> from memaudit_core.compiled import compile_package
    >>> inst = compile_package(generate("update_chain"))
    >>> best = float(max(inst.coverage[inst.cost <= 6] @ inst.weight))
    >>> scale = objective_scale(inst, 6)
    >>> best * scale >= OBJECTIVE_FLOOR > best * scale / 2
    True
    """
    fits = inst.cost <= budget_with_tolerance(budget)
    if not fits.any():
        return 1.0
    best = float(np.max(inst.coverage[fits] @ inst.weight))
    # Below 2^-960 (the floor _pow2_scale keeps values above) the exponent would pass 970 and
    # the values are subnormal or nearly: HiGHS sees them unscaled (QA s49: weight 1e-160 x
    # coverage 1e-160 raised an OverflowError from 1024 / best = inf).
    if not math.isfinite(best) or best < 2.0**-960 or best >= OBJECTIVE_FLOOR:
        return 1.0
    # best = m 2^k with m in [0.5, 1): best 2^e >= 2^10 first holds at e = 11 - k, exactly.
    exponent = 11 - math.frexp(best)[1]
    top = float(np.max(np.abs(col_cost))) if col_cost is not None and col_cost.size else 0.0
    if top > 0:
        # HiGHS treats objective coefficients of 1e20 as infinite: keep them well below.
        exponent = min(exponent, math.frexp(OBJECTIVE_CEILING / top)[1] - 1)
    return math.ldexp(1.0, exponent) if exponent > 0 else 1.0


#: HiGHS presolve rule "dual fixing" (bit 17 of ``presolve_rule_off``). At the 1e-9
#: feasibility tolerances it reduced small models to a wrong optimum (a store costing 1.001
#: at B = 1.001(1 + 2e-9) dropped): 5 misses in 132,000 adversarial solves whose affordable
#: costs span at most 2e3, none with the rule off. HiGHS's developers call 1e-9 "asking for
#: trouble", but looser tolerances let its objective exceed F(X). The rule never fires on the
#: benchmark families (same optima, same times with it off). Ill-conditioned models keep it:
#: there, switching it off too gave 87 misses and 6 errors against 77 and 2, and a MILP
#: result is not certified anyway.
DUAL_FIXING_RULE = 1 << 17

#: HiGHS presolve rule "probing" (bit 15), off on models of at least
#: :data:`PROBING_MIN_OFF_COLUMNS` candidate columns. On those, probing turns the knapsack and
#: group rows into implications it substitutes, in the first presolve or in the one after a
#: restart: a 5,000-experience event graph at budget 10 grew from 26,264 to 214,789 nonzeros
#: and spent 54 of its 55 s in presolve (1 node); scope_shift with 1,000 scopes at budget 10
#: grew from 18,001 to 329,728 nonzeros at its restart and took 24 s. Without probing those
#: take 1 s and 0.3 s, and 15 budgets x 8 packages of 1,200-10,000 columns took 86 s against
#: 293 s with it, the largest loss 0.2 s. Smaller models keep it: target 2's 800-column
#: instances solve in the same times either way, and on some it pays (redundancy_heavy, 400
#: columns, budget 55: 0.2 s with it, 2.3 s without). Numbers: bench/RESULTS.md, issue 7,
#: twenty-third session.
PROBING_RULE = 1 << 15
PROBING_MIN_OFF_COLUMNS = 1000


#: Models with at least this many candidate columns get a neighbourhood start.
NEIGHBOURHOOD_MIN_COLUMNS = 8000
#: ... and at most this many coverage (y) columns per candidate column: models that are mostly
#: a multiple-choice knapsack, whose LP relaxation is nearly integral (event graphs: 9%; the
#: random coverage family, 50%, where the start costs more than it saves).
NEIGHBOURHOOD_MAX_COUPLING = 0.25
#: The sub-MIP is skipped when the LP relaxation has more fractional candidate columns.
NEIGHBOURHOOD_MAX_FRACTIONAL = 50
#: Candidates the neighbourhood takes beyond the LP's support and its fractional groups.
NEIGHBOURHOOD_EXTRA = 1500
#: Node and time limits of the neighbourhood's sub-MIP (its time also at most a quarter of
#: the caller's time limit). The sub-MIPs measured close in 0.1-0.6 s, well inside both.
NEIGHBOURHOOD_NODES = 2000
NEIGHBOURHOOD_TIME_S = 3.0

#: Limited runs on models with at least this many candidate columns run HiGHS in a child
#: process that is killed when it overruns the limit (:func:`_run_highs_guarded`). Below it
#: no overrun was seen (3,000-5,000-experience event graphs, 10,000-17,000 columns), and the
#: child's start-up would cost more than the guard is worth.
GUARD_MIN_COLUMNS = 30000
#: Limited runs (a time or node limit) on models of at most this many candidate columns, where
#: the neighbourhood start does not run, first compute :func:`bnb.heuristic_store` as the MIP
#: start, with at most :data:`HEURISTIC_START_SHARE` of the time limit: stopped at a limit,
#: HiGHS alone can report a store far below it (300 random groups at 0.5 s: 628.9 against the
#: heuristic's 671.8). Unlimited runs skip it: a start does not speed HiGHS's proof
#: (bench/RESULTS.md, issue 7).
HEURISTIC_START_MAX_COLUMNS = NEIGHBOURHOOD_MIN_COLUMNS
HEURISTIC_START_SHARE = 0.25
#: Its time on a run limited by nodes only (2.8 s unlimited at 8,000 random columns).
HEURISTIC_START_NODE_LIMIT_S = 1.0
#: The child gets max(GUARD_GRACE_S, GUARD_GRACE_FRACTION x limit) beyond its time limit.
GUARD_GRACE_S = 2.0
GUARD_GRACE_FRACTION = 0.25

_BANNER_SHOWN = False

#: Held around every HiGHS solve in this process: two Highs instances solving in two threads
#: at once can crash the process (ERGO-Code/HiGHS pull request 3141: the global scheduler reset
#: while another thread is inside HiGHS). A Streamlit server solves in each session's script
#: thread, the Overview's optimum thread and the app's prefetch thread.
HIGHS_LOCK = threading.RLock()


def _one_highs_at_a_time(fn):
    @functools.wraps(fn)
    def locked(*args, **kwargs):
        with HIGHS_LOCK:
            return fn(*args, **kwargs)

    return locked


#: The process that last built a Highs object (a forked child sees its parent's pid here).
_HIGHS_PID: int | None = None
#: HiGHS ``threads`` for every model of this process (None: HiGHS's default). Worker pools set
#: 1, so that N workers each running HiGHS do not oversubscribe N cores.
HIGHS_THREADS: int | None = None


def _highspy():
    try:
        import highspy
    except ImportError as exc:  # pragma: no cover - highspy is a hard requirement
        raise SolverError("the 'milp' solver needs highspy (pip install highspy)") from exc
    return highspy


def _new_highs(highspy):
    """A silent Highs object.

    HiGHS prints a copyright banner on C-level stdout when the first instance in a process is
    created, before any option can be set; that would corrupt JSON written to stdout by the
    CLI, so file descriptor 1 is pointed at /dev/null for that one construction.
    """
    global _BANNER_SHOWN, _HIGHS_PID
    if _HIGHS_PID is not None and _HIGHS_PID != os.getpid():
        # A forked child of a process that ran HiGHS inherits its thread scheduler without the
        # threads, and its first solve spins forever (library QA: the default
        # ProcessPoolExecutor on Linux forks). Dropping the copy without joining lets HiGHS
        # build a fresh one.
        highspy.Highs.resetGlobalScheduler(False)
    _HIGHS_PID = os.getpid()
    if _BANNER_SHOWN:
        h = highspy.Highs()
    else:
        sys.stdout.flush()
        saved = os.dup(1)
        try:
            with open(os.devnull, "w") as null:
                os.dup2(null.fileno(), 1)
                h = highspy.Highs()
        finally:
            os.dup2(saved, 1)
            os.close(saved)
        _BANNER_SHOWN = True
    h.setOptionValue("output_flag", False)
    if HIGHS_THREADS is not None:
        h.setOptionValue("threads", int(HIGHS_THREADS))
    return h


def build_model(inst: CompiledInstance, budget: float) -> dict[str, Any]:
    """Arrays of the MILP (CSC matrix, bounds, objective) and the column -> candidate map.

    Returns a dict with ``cand`` (candidate index of each x column), ``n_y``, ``y_units`` (unit
    index of each y column), ``col_cost``, ``col_upper``, ``row_upper``, ``start``, ``index``,
    ``value`` (CSC, columns x then y), and ``presolve_rule_off`` (HiGHS presolve rules to skip).
    """
    b_eff = budget_with_tolerance(budget)
    cand = np.flatnonzero(inst.cost <= b_eff)
    cov = sp.csc_array(inst.coverage[cand]) if cand.size else sp.csc_array((0, inst.n_units))
    w = inst.weight
    covered = np.diff(cov.indptr) > 0
    units = np.flatnonzero(covered & (w > 0))
    groups = inst.group_idx[cand]
    linear_units = np.zeros(inst.n_units, dtype=bool)
    if inst.saturation == "linear":
        linear_units[units] = True
    else:
        # cap1: a unit whose coverage by every candidate together is at most 1 never reaches
        # the cap. Its y column would only add a row of HiGHS tolerances: with coverage of
        # 1e-9 those swallowed the whole value (QA: OPT 0 "certified" where it is 6.4e-11).
        linear_units[units] = np.asarray(cov.sum(axis=0)).ravel()[units] <= 1.0
    if inst.saturation != "linear" and inst.group_capacity == 1 and units.size:
        # A unit whose covering candidates share one group can never have z_r > 1.
        col_rows = np.repeat(np.arange(inst.n_units), np.diff(cov.indptr))
        g_of_entry = groups[cov.indices]
        gmin = np.full(inst.n_units, np.iinfo(np.int64).max)
        gmax = np.full(inst.n_units, -1)
        np.minimum.at(gmin, col_rows, g_of_entry)
        np.maximum.at(gmax, col_rows, g_of_entry)
        linear_units[units] |= gmin[units] == gmax[units]
    y_units = units[~linear_units[units]]
    lin = units[linear_units[units]]
    csr = sp.csr_array(cov)
    x_cost = csr[:, lin] @ w[lin] if lin.size else np.zeros(cand.size)

    n_x, n_y = cand.size, y_units.size
    # Rows: one per y unit, the knapsack row, then the group rows that can bind.
    counts = np.bincount(groups, minlength=inst.n_groups) if n_x else np.zeros(inst.n_groups, int)
    binding = np.flatnonzero(counts > inst.group_capacity)
    group_row = np.full(inst.n_groups, -1)
    group_row[binding] = n_y + 1 + np.arange(binding.size)
    n_rows = n_y + 1 + binding.size

    blocks = []
    a_y = csr[:, y_units].T.tocoo() if n_y else None  # (n_y x n_x)
    if a_y is not None and a_y.nnz:
        blocks.append((a_y.row, a_y.col, -a_y.data))
    # The knapsack row in units of the budget, with upper bound 1 + 1e-9 (the product's
    # relative tolerance; without it optima costing between B and B(1 + 1e-9) were cut off):
    # HiGHS's absolute feasibility tolerance is then relative too. In raw units a budget of
    # 0.4 admitted stores 2e-9 over it, and next to 1e-6 costs presolve cut off optima that
    # cost exactly B (QA: OPT 4.625 "certified" where a store of cost 10.5 at B = 10.5 is
    # worth 5.875). Stores HiGHS's tolerance still lets over are repaired in solve_milp.
    scale = budget if budget > 0 else 1.0
    blocks.append((np.full(n_x, n_y), np.arange(n_x), inst.cost[cand] / scale))
    in_row = group_row[groups] >= 0
    blocks.append((group_row[groups][in_row], np.arange(n_x)[in_row], np.ones(int(in_row.sum()))))
    blocks.append((np.arange(n_y), n_x + np.arange(n_y), np.ones(n_y)))
    rows = np.concatenate([b[0] for b in blocks]).astype(np.int64)
    cols = np.concatenate([b[1] for b in blocks]).astype(np.int64)
    vals = np.concatenate([b[2] for b in blocks]).astype(np.float64)
    A = sp.csc_array((vals, (rows, cols)), shape=(n_rows, n_x + n_y))
    A.sort_indices()
    row_upper = np.concatenate(
        [
            np.zeros(n_y),
            [b_eff / scale if budget > 0 else 0.0],
            np.full(binding.size, float(inst.group_capacity)),
        ]
    )
    col_cost = np.concatenate([x_cost, w[y_units]])
    return {
        "cand": cand,
        "n_x": n_x,
        "n_y": n_y,
        "y_units": y_units,
        "col_cost": col_cost,
        "col_upper": np.ones(n_x + n_y),
        "row_upper": row_upper,
        "start": A.indptr.astype(np.int32),
        "index": A.indices.astype(np.int32),
        "value": A.data,
        "n_rows": n_rows,
        "objective_scale": objective_scale(inst, budget, col_cost),
        "presolve_rule_off": (PROBING_RULE if n_x >= PROBING_MIN_OFF_COLUMNS else 0)
        | (0 if _spread_too_wide(inst.cost[cand]) else DUAL_FIXING_RULE),
    }


def _objective_off(inst: CompiledInstance, model: dict[str, Any], run: dict[str, Any]) -> bool:
    """True when HiGHS's objective is not F of the store its solution selects (beyond the
    1e-9 relative tolerance its feasibility tolerance allows)."""
    if run["x"] is None:
        return False
    chosen = _selected(model, run)
    value = evaluate(inst, chosen) if chosen else 0.0
    return abs(run["objective"] - value) > 1e-9 * max(1.0, abs(value))


def _selected(model: dict[str, Any], run: dict[str, Any]) -> tuple[int, ...]:
    """Candidate positions of the x columns at 1 in a run's solution."""
    return tuple(sorted(int(c) for c in model["cand"][run["x"][: model["n_x"]] > 0.5]))


#: Stores over the budget a repair may cut off, one no-good row each, before it gives up.
REPAIR_MAX_CUTS = 8


def _with_no_good(model: dict[str, Any], cols: np.ndarray) -> dict[str, Any]:
    """``model`` plus the row sum_{j in cols} x_j <= |cols| - 1 (that store and its supersets
    excluded: with positive costs they all cost more, so all are over the budget too)."""
    n_cols = model["n_x"] + model["n_y"]
    a = sp.csc_array(
        (model["value"], model["index"], model["start"]), shape=(model["n_rows"], n_cols)
    )
    cut = sp.csc_array(
        (np.ones(cols.size), (np.zeros(cols.size, dtype=np.int64), cols)), shape=(1, n_cols)
    )
    a = sp.vstack([a, cut], format="csc")
    a.sort_indices()
    out = dict(model)
    out.update(
        start=a.indptr.astype(np.int32),
        index=a.indices.astype(np.int32),
        value=a.data,
        n_rows=model["n_rows"] + 1,
        row_upper=np.append(model["row_upper"], float(cols.size - 1)),
    )
    return out


def _repair_over_budget(
    inst: CompiledInstance,
    model: dict[str, Any],
    budget: float,
    run: dict[str, Any],
    time_limit: float | None,
    node_limit: int | None,
    detail: dict[str, Any],
) -> dict[str, Any]:
    """HiGHS's run again, without the stores its tolerance let a hair over the budget.

    Each such store is cut off by a no-good row and the model solved again, up to
    :data:`REPAIR_MAX_CUTS` times. A cut removes only stores over the budget, so the final
    model still admits every store the budget allows: its optimum, once within the budget, is
    proven and its bound valid. If the loop ends without such a store, the status is
    ``"unproven"`` with the last run's bound.
    """
    t0 = time.perf_counter()
    cuts = 0
    while True:
        if inst.is_feasible(_selected(model, run), budget) or run["run_status"] != "optimal":
            break
        if cuts == REPAIR_MAX_CUTS:
            run = {**run, "run_status": "unproven", "x": None}  # its bound stays valid
            break
        cols = np.flatnonzero(run["x"][: model["n_x"]] > 0.5)
        model = _with_no_good(model, cols)
        cuts += 1
        remaining = (
            None if time_limit is None else max(0.0, time_limit - (time.perf_counter() - t0))
        )
        run = _run_highs(model, remaining, node_limit, None)
        if run["x"] is None:
            break
    detail["over_budget"] = {"cuts": cuts, "status": run["model_status"]}
    return run


def _check_against_known(
    inst: CompiledInstance,
    model: dict[str, Any],
    budget: float,
    run: dict[str, Any],
    incumbent_idx: tuple[int, ...] | None,
    time_limit: float | None,
    node_limit: int | None,
    detail: dict[str, Any],
) -> dict[str, Any]:
    """HiGHS's proven optimum, checked against the feasible stores known without it.

    A proven optimum worth less than a feasible store is wrong (exactness QA: HiGHS's presolve
    near the budget's tolerance edge). The known stores are the caller's incumbent and, on
    unlimited runs of at most :data:`CHECK_HEURISTIC_MAX_COLUMNS` candidate columns, the B&B's
    root heuristic. On a contradiction the model is solved again with presolve off; if that
    still contradicts, the run is ``"unproven"`` and keeps the better store with no bound.
    """
    if run["run_status"] != "optimal" or run["x"] is None:
        return run
    known: list[tuple[float, tuple[int, ...]]] = []
    if incumbent_idx and inst.is_feasible(incumbent_idx, budget):
        known.append((evaluate(inst, list(incumbent_idx)), tuple(incumbent_idx)))
    if node_limit is None and "heuristic_start" not in detail:
        if model["n_x"] <= CHECK_HEURISTIC_MAX_COLUMNS:
            found, _ = heuristic_store_and_bound(inst, budget)
            if found and inst.is_feasible(found, budget):
                known.append((evaluate(inst, list(found)), tuple(found)))
    if not known:
        return run
    best_value, best_idx = max(known)
    value = evaluate(inst, list(_selected(model, run)))
    if value >= best_value - 1e-9 * max(1.0, abs(best_value)):
        return run
    detail["contradicted"] = {"value": value, "known_value": best_value}
    off = {**model, "presolve_off": True}
    again = _run_highs(off, time_limit, node_limit, None)
    if again["x"] is not None and not inst.is_feasible(_selected(off, again), budget):
        # Near the budget's edge the re-solve may land a hair over it too, as the first run
        # can (exactness QA: without this repair such runs ended unproven).
        again = _repair_over_budget(inst, off, budget, again, time_limit, node_limit, {})
    if again["x"] is not None and inst.is_feasible(_selected(model, again), budget):
        again_value = evaluate(inst, list(_selected(model, again)))
        if again["run_status"] == "optimal" and again_value >= best_value - 1e-9 * max(
            1.0, abs(best_value)
        ):
            detail["contradicted"]["presolve_off_value"] = again_value
            return again
    x = np.zeros(model["n_x"])
    pos = {int(c): k for k, c in enumerate(model["cand"])}
    x[[pos[int(i)] for i in best_idx]] = 1.0
    # HiGHS's bound was wrong as well: no valid bound is known, only the store.
    detail["contradicted"]["unresolved"] = True
    return {**run, "run_status": "unproven", "x": x, "objective": best_value, "dual": math.inf}


def drop_dead_weight(inst: CompiledInstance, selected_idx: Sequence[int]) -> tuple[int, ...]:
    """The store without the members that add nothing to it, most expensive tried first.

    HiGHS may return an optimum carrying members whose marginal gain is 0 (conformance QA: on
    event-graph-50 at budget 400, three atomic facts whose stale unit a selected compound
    update already covers: cost 293 where 281 keeps F). Members are dropped while the losses
    of all dropped members, each computed on its own units against the store left, add up to
    at most :data:`GAIN_EPS` times the smaller of the package's value unit and F itself: the
    floor below which engines and writers never spend budget, and never more than 1e-12 of F
    (exactness QA: with weights of 1 and 1e-13, a 1e-13 optimum was emptied to 0). Only
    members whose own gain is within that are tried: with F submodular, removing others can
    only raise a member's gain.

    Examples
    --------
    >>> from memaudit_core.generators import generate
    >>> from memaudit_core.compiled import compile_package
    >>> inst = compile_package(generate("update_chain"))
    >>> best = solve_milp(inst, 6).selected_idx
    >>> drop_dead_weight(inst, best) == tuple(sorted(best))
    True
    """
    chosen = sorted(int(i) for i in selected_idx)
    if not chosen:
        return ()
    h = get_saturation(inst.saturation).h
    z = coverage_of(inst, chosen)
    full = float(np.dot(inst.weight, h(z)))
    allowance = GAIN_EPS * min(value_unit(inst), abs(full))
    cov = inst.coverage

    def gain(i: int) -> float:
        # On the member's own units: no cancellation against F's total (a loss of 1e-8 read
        # as 0 next to F = 1e9).
        lo, hi = cov.indptr[i], cov.indptr[i + 1]
        units, a = cov.indices[lo:hi], cov.data[lo:hi]
        return float(np.dot(inst.weight[units], h(z[units]) - h(np.maximum(z[units] - a, 0.0))))

    trial = [i for i in chosen if gain(i) <= allowance]
    kept = set(chosen)
    for i in sorted(trial, key=lambda i: (-float(inst.cost[i]), inst.candidate_ids[i])):
        loss = gain(i)
        if loss <= allowance:
            kept.discard(i)
            lo, hi = cov.indptr[i], cov.indptr[i + 1]
            z[cov.indices[lo:hi]] -= cov.data[lo:hi]
            allowance -= loss
    return tuple(sorted(kept))


def mip_start(
    inst: CompiledInstance, model: dict[str, Any], selected_idx: tuple[int, ...], budget: float
) -> np.ndarray | None:
    """Every column's value for a feasible selection, or None if it is not a model solution.

    HiGHS treats a start that leaves columns unset as partial and solves a sub-MIP to complete
    it: on instances HiGHS proves at the root that made a warm start 2-3x slower than none
    (measured on abstention_hard and density_trap sweeps). So the y columns are given too,
    y_r = min(1, z_r), the largest value their rows allow.
    """
    pos = {int(c): k for k, c in enumerate(model["cand"])}
    cols = [pos.get(int(i), -1) for i in selected_idx]
    if -1 in cols or not inst.is_feasible(selected_idx, budget):
        return None
    x = np.zeros(model["n_x"])
    x[cols] = 1.0
    y_units = model["y_units"]
    z = np.asarray(inst.coverage[list(selected_idx)].sum(axis=0)).ravel()
    return np.concatenate([x, np.minimum(z[y_units], 1.0)])


def _highs_lp(highspy, model: dict[str, Any], *, integer: bool, col_upper=None):
    """The model as a ``HighsLp`` (x columns integer unless ``integer`` is False)."""
    n_x, n_y = model["n_x"], model["n_y"]
    lp = highspy.HighsLp()
    lp.num_col_ = n_x + n_y
    lp.num_row_ = model["n_rows"]
    lp.sense_ = highspy.ObjSense.kMaximize
    # The model's objective is in the package's units; HiGHS gets it scaled (objective_scale),
    # and every objective or bound read back from HiGHS is divided by the same power of two.
    lp.col_cost_ = model["col_cost"] * model.get("objective_scale", 1.0)
    lp.col_lower_ = np.zeros(n_x + n_y)
    lp.col_upper_ = model["col_upper"] if col_upper is None else col_upper
    lp.row_lower_ = np.full(model["n_rows"], -highspy.kHighsInf)
    lp.row_upper_ = model["row_upper"]
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.num_col_ = n_x + n_y
    lp.a_matrix_.num_row_ = model["n_rows"]
    lp.a_matrix_.start_ = model["start"]
    lp.a_matrix_.index_ = model["index"]
    lp.a_matrix_.value_ = model["value"]
    if integer:
        lp.integrality_ = [highspy.HighsVarType.kInteger] * n_x + [
            highspy.HighsVarType.kContinuous
        ] * n_y
    return lp


def _exact_options(h, model: dict[str, Any]) -> None:
    # Exactness: no relative or absolute gap is accepted (defaults 1e-4 / 1e-6).
    h.setOptionValue("mip_rel_gap", 0.0)
    h.setOptionValue("mip_abs_gap", 0.0)
    # With the default feasibility tolerances (1e-6 / 1e-7) HiGHS may let y_r exceed
    # sum_u a_ur x_u by 1e-6 and report an objective above F(X) by ~1e-8 relative, which the
    # certificate's 1e-9 recompute check rejects; 1e-9 removes that at no measurable cost.
    h.setOptionValue("mip_feasibility_tolerance", FEASIBILITY_TOLERANCE)
    h.setOptionValue("primal_feasibility_tolerance", FEASIBILITY_TOLERANCE)
    # Knapsack coefficients are cost / budget: keep those down to 1e-12 (HiGHS's minimum;
    # default 1e-9), so that many tiny costs cannot all become free.
    h.setOptionValue("small_matrix_value", 1e-12)
    h.setOptionValue("presolve_rule_off", int(model["presolve_rule_off"]))
    if model["n_x"] <= PRESOLVE_OFF_MAX_COLUMNS or model.get("presolve_off"):
        h.setOptionValue("presolve", "off")


@_one_highs_at_a_time
def neighbourhood_start(
    inst: CompiledInstance,
    model: dict[str, Any],
    budget: float,
    *,
    time_limit: float | None = None,
) -> tuple[tuple[int, ...], dict[str, Any]]:
    """A feasible store from a sub-MIP around the LP relaxation's solution.

    The neighbourhood is every candidate the LP relaxation uses (x > 0), every candidate of a
    group where the LP is fractional, and the :data:`NEIGHBOURHOOD_EXTRA` other candidates whose
    reduced costs are closest to zero; the others are fixed to 0 and the sub-MIP is solved
    within :data:`NEIGHBOURHOOD_NODES` nodes and :data:`NEIGHBOURHOOD_TIME_S` seconds (the LP
    and the sub-MIP each; a quarter of ``time_limit`` when that is smaller). An LP with more
    than :data:`NEIGHBOURHOOD_MAX_FRACTIONAL` fractional candidate columns ends it early. Any store
    it returns is feasible for the full model, so it can only help as a MIP start; it proves
    nothing.

    Returns
    -------
    (selection, detail)
        Candidate positions (empty when the sub-MIP found nothing) and what was done.

    Examples
    --------
    >>> from memaudit_core.generators import generate
    >>> from memaudit_core.compiled import compile_package
    >>> inst = compile_package(generate("random_coverage", seed=0, n_groups=30))
    >>> sel, detail = neighbourhood_start(inst, build_model(inst, 10.0), 10.0)
    >>> inst.is_feasible(sel, 10.0), detail["status"]
    (True, 'Optimal')
    """
    highspy = _highspy()
    n_x = model["n_x"]
    limit = NEIGHBOURHOOD_TIME_S
    if time_limit is not None:
        limit = min(limit, time_limit / 4)
    h = _new_highs(highspy)
    _exact_options(h, model)
    h.setOptionValue("time_limit", float(limit))
    h.passModel(_highs_lp(highspy, model, integer=False))
    h.run()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return (), {"status": "LP " + h.modelStatusToString(h.getModelStatus())}
    solution = h.getSolution()
    x = np.asarray(solution.col_value[:n_x])
    reduced = np.asarray(solution.col_dual[:n_x])
    groups = inst.group_idx[model["cand"]]
    used = x > 1e-6
    fractional = used & (x < 1.0 - 1e-6)
    lp_value = float(h.getInfo().objective_function_value) / model.get("objective_scale", 1.0)
    if fractional.sum() > NEIGHBOURHOOD_MAX_FRACTIONAL:
        return (), {
            "lp_value": lp_value,
            "status": f"skipped: {int(fractional.sum())} fractional columns in the LP",
        }
    keep = used | np.isin(groups, np.unique(groups[fractional]))
    rest = np.flatnonzero(~keep)
    # Maximisation: a column at its lower bound has reduced cost <= 0; nearest zero first.
    keep[rest[np.argsort(-reduced[rest], kind="stable")[:NEIGHBOURHOOD_EXTRA]]] = True
    col_upper = model["col_upper"].copy()
    col_upper[:n_x][~keep] = 0.0
    sub = _new_highs(highspy)
    _exact_options(sub, model)
    sub.setOptionValue("time_limit", float(limit))
    sub.setOptionValue("mip_max_nodes", NEIGHBOURHOOD_NODES)
    sub.passModel(_highs_lp(highspy, model, integer=True, col_upper=col_upper))
    sub.run()
    detail: dict[str, Any] = {
        "columns": int(keep.sum()),
        "lp_value": lp_value,
        "status": sub.modelStatusToString(sub.getModelStatus()),
    }
    if int(sub.getInfo().primal_solution_status) != 2:
        return (), detail
    chosen = np.asarray(sub.getSolution().col_value[:n_x]) > 0.5
    return tuple(sorted(int(c) for c in model["cand"][chosen])), detail


@_one_highs_at_a_time
def _run_highs(
    model: dict[str, Any],
    time_limit: float | None,
    node_limit: int | None,
    start: np.ndarray | None,
) -> dict[str, Any]:
    """One HiGHS solve of the MILP; plain data out (so that a child process can send it)."""
    highspy = _highspy()
    lp = _highs_lp(highspy, model, integer=True)
    h = _new_highs(highspy)
    _exact_options(h, model)
    if time_limit is not None:
        h.setOptionValue("time_limit", float(max(time_limit, 0.0)))
    if node_limit is not None:
        h.setOptionValue("mip_max_nodes", int(max(node_limit, 0)))
    if h.passModel(lp) == highspy.HighsStatus.kError:
        raise SolverError("HiGHS rejected the model (passModel returned an error)")
    if start is not None:
        solution = highspy.HighsSolution()
        solution.col_value = start
        solution.value_valid = True
        h.setSolution(solution)
    scale = model.get("objective_scale", 1.0)
    watched = heartbeat.status()
    if watched is not None:
        # The CLI's progress lines (heartbeat.watch). HiGHS calls back from its own thread,
        # which does not see the context variable: the dict is taken here.
        def report(event: Any) -> None:
            out = event.data_out
            watched.update(incumbent=out.mip_primal_bound / scale, bound=out.mip_dual_bound / scale)

        h.cbMipInterrupt.subscribe(report)
        h.cbMipImprovingSolution.subscribe(report)
    h.run()
    ms = h.getModelStatus()
    info = h.getInfo()
    S = highspy.HighsModelStatus
    if ms == S.kOptimal:
        run_status = "optimal"
    elif ms in (S.kTimeLimit, S.kIterationLimit, S.kSolutionLimit, S.kInterrupt, S.kHighsInterrupt):
        run_status = "limit"
    else:
        run_status = "error"
    has_solution = int(info.primal_solution_status) == 2
    return {
        "run_status": run_status,
        "model_status": h.modelStatusToString(ms),
        "x": np.asarray(h.getSolution().col_value[: model["n_x"]]) if has_solution else None,
        "objective": float(info.objective_function_value) / scale,
        "dual": float(info.mip_dual_bound) / scale,
        "nodes": int(info.mip_node_count),
        "mip_gap": float(info.mip_gap),
    }


def _run_highs_guarded(
    model: dict[str, Any],
    time_limit: float,
    node_limit: int | None,
    start: np.ndarray | None,
    *,
    command: list[str] | None = None,
) -> dict[str, Any]:
    """:func:`_run_highs` in a child process that is killed once it overruns ``time_limit``.

    HiGHS 1.16 does not look at its clock inside some root heuristics: on a 20,000-experience
    event graph (66,000 candidate columns) a 10 s limit ended after 150-262 s, and its interrupt
    callbacks were not called during that phase either (``bench/RESULTS.md``, issue 7, ninth
    session). A killed run reports no HiGHS solution; the caller keeps its start and the LP
    bound it has. The child is a fresh interpreter (``python -m
    memaudit_core.solvers._highs_child``) rather than a multiprocessing process, which would
    re-import the caller's ``__main__`` and so break every script without a main guard.
    ``command`` replaces the child's command line in tests.
    """
    import pickle
    import subprocess

    payload = pickle.dumps((model, time_limit, node_limit, start, HIGHS_THREADS), protocol=5)
    heartbeat.note(stage="HiGHS in a child process, which reports no progress")
    # The child finds this copy of memaudit_core even when the caller put it on sys.path by
    # hand (a checkout that is not installed).
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    proc = subprocess.Popen(
        command or [sys.executable, "-m", "memaudit_core.solvers._highs_child"],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    t0 = time.perf_counter()
    waited = time_limit + max(GUARD_GRACE_S, GUARD_GRACE_FRACTION * time_limit)
    try:
        out, err = proc.communicate(payload, timeout=waited)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return {
            "run_status": "limit",
            "model_status": "killed: HiGHS overran its time limit",
            "x": None,
            "objective": 0.0,
            "dual": math.inf,
            "nodes": 0,
            "mip_gap": math.inf,
            "killed_after_s": time.perf_counter() - t0,
        }
    except BaseException:  # e.g. KeyboardInterrupt: never leave HiGHS running behind
        proc.kill()
        proc.communicate()
        raise
    if proc.returncode != 0 or not out:
        last = err.decode(errors="replace").strip().splitlines()[-1:] or [""]
        raise SolverError(
            f"HiGHS failed in its guarded process (exit code {proc.returncode}): {last[0]}"
        )
    result = pickle.loads(out)
    if "error" in result:
        raise SolverError(f"HiGHS failed in its guarded process: {result['error']}")
    return result


def _better_than_greedy(
    inst: CompiledInstance,
    budget: float,
    chosen: tuple[int, ...],
    value: float,
    detail: dict[str, Any],
) -> tuple[tuple[int, ...], float]:
    """The better of a limited run's store and the greedy writer's (``detail["kept_greedy"]``
    says when greedy's won).

    What HiGHS holds at a limit can be the empty store (5 of 10 runs at --time-limit 5 on a
    20,000-experience event graph, killed or stopped by HiGHS itself), far below the greedy
    writer's store (550.5 against 21,346.4 under load), or the caller's start returned as it
    came: QA s43 scored the density writer on a 15,000-experience event graph with a 3 s limit
    and got its own store back as the incumbent (8,617.3, ratio 1.000, where greedy writes
    16,020.8 and OPT is 17,310.4). So the greedy store is compared whatever start was given;
    only the heuristic start already holds it (:func:`bnb.heuristic_store` runs the same
    density greedy first). It costs about 1 s at 50,000-66,000 candidates with its priority
    queue (1.1 s on that event graph's 49,650; 14-19 s before the twenty-first session).
    """
    from ..writers import run_writer

    greedy = run_writer("greedy", inst, budget)
    idx = tuple(sorted(int(i) for i in greedy.selected_idx))
    if not idx or not inst.is_feasible(idx, budget):
        return chosen, value
    greedy_value = evaluate(inst, list(idx))  # recomputed, as every store returned here
    if greedy_value > value:
        detail["kept_greedy"] = True
        return idx, greedy_value
    return chosen, value


def _solve_counts(
    inst: CompiledInstance,
    budget: float,
    time_limit: float | None,
    node_limit: int | None,
    incumbent_idx: tuple[int, ...] | None,
) -> tuple[RawSolution | None, dict[str, Any] | None]:
    """The optimum from the model over counts of interchangeable blocks, when there is one.

    Returns (solution, what was done); the solution is None when the package has no repeats
    worth counting (then the second item is None too) or when the count model's answer fails a
    check, which the 0/1 model then solves: HiGHS ending without a store, a store over the
    budget or whose F is not HiGHS's objective, or a proven optimum worth less than a known
    store (the caller's incumbent or, below :data:`CHECK_HEURISTIC_MAX_COLUMNS` affordable
    candidates, the B&B's root heuristic).
    """
    t_start = time.perf_counter()
    agg = orbits.aggregate(inst, budget)
    if agg is None:
        return None, None
    cand_cost = inst.cost[inst.cost <= budget_with_tolerance(budget)]
    model = {
        **agg.model,
        "presolve_rule_off": 0 if _spread_too_wide(cand_cost) else DUAL_FIXING_RULE,
        "objective_scale": objective_scale(inst, budget, agg.model["col_cost"]),
    }
    info: dict[str, Any] = {**agg.summary(), "prep_s": time.perf_counter() - t_start}
    run = _run_highs(model, time_limit, node_limit, None)
    info["model_status"] = run["model_status"]
    info["time_s"] = time.perf_counter() - t_start
    if run["x"] is None or run["run_status"] == "error":
        info["outcome"] = "no store: the 0/1 model solved instead"
        return None, info
    chosen = agg.expand(run["x"])
    value = evaluate(inst, list(chosen)) if chosen else 0.0
    if not inst.is_feasible(chosen, budget):
        info["outcome"] = "store over the budget: the 0/1 model solved instead"
        return None, info
    tol = 1e-9 * max(1.0, abs(value))
    if abs(run["objective"] - value) > tol:
        info["outcome"] = "objective is not F: the 0/1 model solved instead"
        return None, info
    known = []
    if incumbent_idx and inst.is_feasible(incumbent_idx, budget):
        known.append(tuple(incumbent_idx))
    if run["run_status"] == "optimal" and node_limit is None:
        if cand_cost.size <= CHECK_HEURISTIC_MAX_COLUMNS:
            found, _ = heuristic_store_and_bound(inst, budget)
            if found and inst.is_feasible(found, budget):
                known.append(tuple(found))
    best_known = max(known, key=lambda k: evaluate(inst, list(k)), default=None)
    if best_known is not None and evaluate(inst, list(best_known)) > value + tol:
        if run["run_status"] == "optimal":
            info["outcome"] = "a known store is better: the 0/1 model solved instead"
            return None, info
        chosen, value = tuple(sorted(best_known)), evaluate(inst, list(best_known))
    info["outcome"] = run["run_status"]
    detail: dict[str, Any] = {
        "method": "milp_orbits",
        "orbits": info,
        "columns": model["n_x"] + model["n_y"],
        "rows": model["n_rows"],
        "y_columns": model["n_y"],
        "model_status": run["model_status"],
        "objective_function_value": run["objective"],
        "mip_dual_bound": run["dual"],
        "mip_gap": run["mip_gap"],
    }
    if run["run_status"] != "optimal":
        chosen, value = _better_than_greedy(inst, budget, chosen, value, detail)
    lean = drop_dead_weight(inst, chosen)
    if len(lean) < len(chosen):
        detail["dead_weight_dropped"] = len(chosen) - len(lean)
    dual = run["dual"]
    bound = dual if math.isfinite(dual) else float(model["col_cost"] @ model["col_upper"])
    reported = run["objective"] if run["run_status"] == "optimal" else value
    return (
        RawSolution(
            lean,
            max(reported, 0.0),
            max(bound, reported),
            run["run_status"],
            nodes=run["nodes"],
            detail=detail,
        ),
        info,
    )


@register_engine("milp")
def solve_milp(
    inst: CompiledInstance,
    budget: float,
    *,
    time_limit: float | None = None,
    node_limit: int | None = None,
    incumbent_idx: tuple[int, ...] | None = None,
    aggregate: bool = True,
) -> RawSolution:
    """Solve the MILP with HiGHS; status ``"optimal"`` only on a proven optimum.

    Parameters
    ----------
    inst : CompiledInstance
        Saturation ``cap1`` or ``linear``.
    budget : float
    time_limit : float, optional
        Seconds (HiGHS ``time_limit``).
    node_limit : int, optional
        Branch-and-bound nodes (HiGHS ``mip_max_nodes``).
    incumbent_idx : tuple of int, optional
        A feasible selection passed as a MIP start.
    aggregate : bool
        Solve the model over counts of interchangeable blocks when the package repeats blocks
        (:mod:`memaudit_core.solvers.orbits`; ``detail["method"]`` is then ``"milp_orbits"``).
        False always solves the 0/1 model (the oracle for the count model in tests).

    Returns
    -------
    RawSolution
        ``value`` is HiGHS's objective value, ``bound`` its dual bound, ``nodes`` its node count.

    Raises
    ------
    SolverError
        For saturation ``log1p``, or when HiGHS ends in any status other than optimal or a
        limit (e.g. a solve error).

    Examples
    --------
    >>> from memaudit_core.generators import generate
    >>> from memaudit_core.compiled import compile_package
    >>> raw = solve_milp(compile_package(generate("temporal_interval")), 13)
    >>> round(raw.value, 6), round(raw.bound, 6)
    (10.635, 10.635)
    """
    unsupported = unsupported_saturation(inst.saturation)
    if unsupported is not None:
        raise SolverError(f"{unsupported}: use solver 'bnb' or 'auto'")
    counted_info = None
    if aggregate:
        counted, counted_info = _solve_counts(inst, budget, time_limit, node_limit, incumbent_idx)
        if counted is not None:
            return counted
        if counted_info is not None and time_limit is not None:
            time_limit = max(0.0, time_limit - counted_info["time_s"])
    model = build_model(inst, budget)
    n_x, n_y = model["n_x"], model["n_y"]
    detail: dict[str, Any] = {"columns": n_x + n_y, "rows": model["n_rows"], "y_columns": n_y}
    if counted_info is not None:
        detail["orbits"] = counted_info
    if n_x == 0:
        return RawSolution((), 0.0, 0.0, "optimal", nodes=0, detail=detail)
    _highspy()  # a clear SolverError before any work when highspy is missing
    if (
        node_limit is None
        and n_y
        and n_x >= NEIGHBOURHOOD_MIN_COLUMNS
        and n_y <= NEIGHBOURHOOD_MAX_COUPLING * n_x
    ):
        t_start = time.perf_counter()
        heartbeat.note(stage="neighbourhood start")
        found, nb_detail = neighbourhood_start(inst, model, budget, time_limit=time_limit)
        nb_detail["time_s"] = time.perf_counter() - t_start
        if found and inst.is_feasible(found, budget):
            nb_detail["value"] = evaluate(inst, list(found))
            if not incumbent_idx or nb_detail["value"] > evaluate(inst, list(incumbent_idx)):
                incumbent_idx = found
        detail["neighbourhood"] = nb_detail
        if time_limit is not None:
            time_limit = max(0.0, time_limit - nb_detail["time_s"])
    if (
        (time_limit is not None or node_limit is not None)
        and "neighbourhood" not in detail
        and n_x <= HEURISTIC_START_MAX_COLUMNS
    ):
        t_start = time.perf_counter()
        heartbeat.note(stage="heuristic start")
        share = (
            HEURISTIC_START_NODE_LIMIT_S
            if time_limit is None
            else HEURISTIC_START_SHARE * time_limit
        )
        found, root_bound = heuristic_store_and_bound(inst, budget, time_limit=share)
        h_detail: dict[str, Any] = {
            "value": evaluate(inst, list(found)) if found else 0.0,
            "root_bound": root_bound,
        }
        if found and (
            not incumbent_idx
            or not inst.is_feasible(incumbent_idx, budget)
            or h_detail["value"] > evaluate(inst, list(incumbent_idx))
        ):
            incumbent_idx = found
            h_detail["used"] = True
        h_detail["time_s"] = time.perf_counter() - t_start
        detail["heuristic_start"] = h_detail
        if time_limit is not None:
            time_limit = max(0.0, time_limit - h_detail["time_s"])
    if time_limit is not None and "heuristic_start" not in detail and n_x >= GUARD_MIN_COLUMNS:
        # The greedy store a limited run falls back on (_better_than_greedy), computed first
        # and counted in the limit: after a HiGHS run that used the whole limit it ran past the
        # bound --help gives (QA s43: 27 s for 48,000 random candidates after HiGHS's 30,
        # time_s 76 s at --time-limit 30). It runs to its end: its first 7.6 s gave 22,605
        # where the whole store is worth 29,455 (gap 33% against 2%). It is the MIP start
        # unless the caller's start is worth more.
        from ..writers import run_writer

        t_start = time.perf_counter()
        heartbeat.note(stage="greedy start")
        greedy = run_writer("greedy", inst, budget)
        detail["greedy_start"] = {"value": greedy.value, "time_s": time.perf_counter() - t_start}
        if greedy.selected_idx and (
            not incumbent_idx or greedy.value > evaluate(inst, list(incumbent_idx))
        ):
            incumbent_idx = tuple(sorted(greedy.selected_idx))
        time_limit = max(0.0, time_limit - detail["greedy_start"]["time_s"])
    start = None
    if incumbent_idx:
        start = mip_start(inst, model, incumbent_idx, budget)
        detail["mip_start"] = start is not None

    def highs(limit: float | None, start: np.ndarray | None) -> dict[str, Any]:
        heartbeat.note(stage="HiGHS")
        if limit is not None and n_x >= GUARD_MIN_COLUMNS:
            return _run_highs_guarded(model, limit, node_limit, start)
        return _run_highs(model, limit, node_limit, start)

    run_start = stage_start = time.perf_counter()
    stage_limit = time_limit  # what the HiGHS runs below share
    run = highs(time_limit, start)
    if start is not None and run["run_status"] == "optimal" and _objective_off(inst, model, run):
        # Seen on a 5-candidate package: with a MIP start HiGHS 1.16 reported "optimal 7.5"
        # and handed back the start itself, worth 5.0 (OPT 6.875). Solve again without it.
        detail["start_contradicted"] = {"objective": run["objective"]}
        if time_limit is not None:
            time_limit = max(0.0, time_limit - (time.perf_counter() - run_start))
        run_start = time.perf_counter()
        run = highs(time_limit, None)
    if run["x"] is not None and not inst.is_feasible(_selected(model, run), budget):
        # HiGHS's tolerance let a store a hair over the budget through.
        if run["run_status"] == "optimal":
            if time_limit is not None:
                time_limit = max(0.0, time_limit - (time.perf_counter() - run_start))
            run = _repair_over_budget(inst, model, budget, run, time_limit, node_limit, detail)
        if run["x"] is not None and not inst.is_feasible(_selected(model, run), budget):
            run = {**run, "x": None}  # a limited run: its bound stands, its store does not
    remaining = (
        None if stage_limit is None else max(0.0, stage_limit - (time.perf_counter() - stage_start))
    )
    run = _check_against_known(
        inst, model, budget, run, incumbent_idx, remaining, node_limit, detail
    )
    detail["model_status"] = run["model_status"]
    if "killed_after_s" in run:
        detail["killed_after_s"] = run["killed_after_s"]
    run_status = run["run_status"]
    if run_status == "error":
        # The empty store is always feasible, so "Infeasible" or "Solve error" here is HiGHS's
        # floating point giving up (seen with costs spanning 1e-6 to 1e3), not the package.
        # Both scales are named: weights of 1e300 failed with costs spanning a factor 3, and
        # the message blamed the costs (QA s20a).
        span = float(inst.cost[model["cand"]].max() / inst.cost[model["cand"]].min())
        positive = inst.weight[inst.weight > 0]
        weights = (
            f"unit weights span a factor {float(positive.max() / positive.min()):.3g} "
            f"(largest {float(positive.max()):.3g})"
            if positive.size
            else "no unit has a positive weight"
        )
        raise SolverError(
            f"HiGHS ended with model status {run['model_status']!r} on a model whose costs "
            f"span a factor {span:.3g} and whose {weights}: a numerical failure; solver 'bnb' "
            "does not depend on floating-point tolerances this way"
        )
    nodes = run["nodes"]
    dual = run["dual"]
    if run["x"] is not None:
        chosen = _selected(model, run)
        value = run["objective"]
    else:
        # No incumbent yet: the empty store is always feasible.
        chosen, value = (), 0.0
    if run_status == "optimal" and run["x"] is None:
        raise SolverError("HiGHS reported optimal without a primal solution")
    bound = dual if math.isfinite(dual) else float(np.sum(model["col_cost"]))
    if run_status in ("limit", "unproven"):
        # On large models HiGHS can stop at a limit below the start it was given (seen on a
        # 20,000-experience event graph: start 22,877, HiGHS's incumbent 22,085.6), and before
        # its root LP is solved: keep the better store, and the LP relaxation's bound when the
        # neighbourhood start solved it.
        if incumbent_idx and inst.is_feasible(incumbent_idx, budget):
            start_value = evaluate(inst, list(incumbent_idx))
            if start_value > value:
                chosen, value = tuple(sorted(int(i) for i in incumbent_idx)), start_value
                detail["kept_start"] = True
        if "heuristic_start" not in detail and "greedy_start" not in detail:
            chosen, value = _better_than_greedy(inst, budget, chosen, value, detail)
        # Bounds computed before HiGHS ran, kept when HiGHS stopped before beating them (its
        # bound is trivial at a 1 ms limit). Each is a float value and gets a margin: the LP's
        # for its dual feasibility tolerance (1e-7), the B&B's root bound for rounding.
        for found, margin, source in (
            (detail.get("neighbourhood", {}).get("lp_value"), 1e-6, "LP relaxation"),
            (detail.get("heuristic_start", {}).get("root_bound"), 1e-9, "B&B root bound"),
        ):
            if found is None:
                continue
            found += margin * max(1.0, abs(found))
            if found < bound:
                bound, detail["bound_from"] = found, source
    if chosen:
        lean = drop_dead_weight(inst, chosen)
        if len(lean) < len(chosen):
            detail["dead_weight_dropped"] = len(chosen) - len(lean)
            chosen = lean
    detail["objective_function_value"] = value
    detail["mip_dual_bound"] = dual
    detail["mip_gap"] = run["mip_gap"]
    return RawSolution(
        chosen, max(value, 0.0), max(bound, value), run_status, nodes=nodes, detail=detail
    )
