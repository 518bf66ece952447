"""Certification: run the exact engines, re-check what they claim, and record the evidence.

:func:`solve_certified` is what :func:`memaudit_core.solvers.solve` calls. It runs the primary
engine (``auto`` picks one with :func:`choose`), recomputes F of the returned store with
:func:`memaudit_core.objective.evaluate`, checks feasibility, optionally runs a second exact
engine (:func:`cross_engine`), and records a :class:`Certificate`.

A result is **certified** only when the primary engine proved optimality (status
``"optimal"``), its bound meets its value, the recomputed F equals the reported value and — when
a cross-check concluded — both engines agree. One engine's proof alone certifies: a cross-check
stopped by a limit whose store is worth no more than the value and whose bound is at least the
value is consistent but inconclusive; it is said in the certificate's ``proof`` and does not
lower the label (asking for more checking never lowers it), nor does a cross-check that no
second engine can run (said in the ``proof``). One that contradicts the proof (a better store,
or a bound below the value) raises :class:`SolverDisagreementError`. Only a HiGHS proof on
affordable costs spanning more than a factor 1e5 (:func:`~.milp.ill_conditioned_reason`) needs an
agreeing cross-check. Each "meets" and
"equals" is within 1e-9 x max(|value|, the value unit at the budget): relative, with an
absolute floor for values below the unit. That unit (:func:`~memaudit_core.solvers.value_unit`
with the budget) is the package's value scale there, but never more than the best affordable
candidate's F alone, a proven lower bound on OPT, so the floor is at most 1e-9 of OPT; the
audit and the Certification report compare in the same unit. Exact engines that disagree raise
:class:`~memaudit_core.errors.SolverDisagreementError`, except that a primary whose report is
not its store's F (uncertified for that), or a HiGHS proof on ill-conditioned costs, claims
nothing beyond its store: a cross-check's proven, better store is then returned, uncertified
(:attr:`Certificate.returned_check` says whose store is returned). An engine that returns an
infeasible store raises :class:`~memaudit_core.errors.SolverError`. Neither is ever hidden.

Examples
--------
>>> from memaudit_core.generators import generate
>>> from memaudit_core.compiled import compile_package
>>> res = solve_certified(compile_package(generate("temporal_interval")), 13)
>>> round(res.value, 6), res.label, res.solver, res.certificate.agreement
(10.635, 'OPT', 'bnb', True)
"""

from __future__ import annotations

import math
import operator
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..compiled import CompiledInstance, budget_with_tolerance
from ..errors import (
    InstanceTooLargeError,
    MemAuditError,
    SolverDisagreementError,
    SolverError,
    UnknownNameError,
    cut_repr,
)
from ..heartbeat import beat
from ..objective import evaluate, value_ceiling
from . import (
    SOLVER_CHOICES,
    RawSolution,
    SolveResult,
    _check_limits,
    check_budget,
    orbits,
    relative_gap,
    run_engine,
    value_text,
    value_unit,
)
from .enum import ENUM_MAX_COMBINATIONS, combination_count, tied
from .milp import (
    BOUND_REPLACED,
    SUPPORTED_SATURATIONS,
    ill_conditioned_reason,
    milp_ill_conditioned,
)
from .timeshare import BNB_BELOW_S, active_share, run_time_limit

#: Relative tolerance for "equal" values (recompute, gap and engine agreement).
VALUE_RTOL = 1e-9
#: :data:`VALUE_RTOL` as the README and the messages write it ("1e-9").
VALUE_RTOL_TEXT = f"{VALUE_RTOL:g}".replace("e-0", "e-")
#: ``auto`` enumerates when the group-option product is at most this large.
ENUM_AUTO_MAX = 20_000
#: ``auto`` cross-checks with ``enum`` up to this many combinations.
ENUM_CROSS_MAX = 100_000
#: ``auto`` cross-checks ``bnb`` with ``milp`` up to this many candidates.
MILP_CROSS_MAX_CANDIDATES = 60
#: ``auto`` prefers ``bnb`` while (affordable candidates) x (expected store size) is at most
#: this; beyond it HiGHS's cuts win (see the measurements in the solver report).
BNB_AUTO_WORK = 1000
#: When ``auto`` runs ``bnb``, it hands over to ``milp`` (warm-started with the B&B's
#: incumbent) after this many nodes. Instances where ``auto`` picks B&B normally close in a few
#: hundred nodes; the exceptions (symmetric groups: every tied optimum explored; budgets where
#: the bound stays loose) can take minutes where HiGHS's cuts and symmetry handling take
#: seconds. A node count, not a time, keeps the engine that answers deterministic.
AUTO_BNB_NODES = 3000


def certified_gap_text(gap: float) -> str:
    """How a certified optimum's gap reads: "zero gap" only when it is 0, otherwise the gap
    and the tolerance it is certified within (QA s42 #2: "zero gap" was printed beside a
    saved gap of 3e-10, HiGHS's bound carrying its 1e-9 feasibility tolerance).

    Certification holds an engine's bound to within :data:`VALUE_RTOL` of the value it
    reported and that value to within :data:`VALUE_RTOL` of the store's recomputed F (each
    relative to F, or to one value unit below it), so a certified gap may reach about twice
    :data:`VALUE_RTOL`; a read-back result at most
    :data:`~memaudit_core.solvers.CERTIFIED_GAP_MAX`.

    The gap reads in percent (:func:`~memaudit_core.solvers.gap_percent`, as on every face),
    and the tolerance, a relative one, in both (s52).

    >>> certified_gap_text(0.0), certified_gap_text(3e-10)
    ('zero gap', 'gap 3e-8%, within the certification tolerance 1e-9 (1e-7%)')
    >>> certified_gap_text(1.5e-9)[:60]
    'gap 1.5e-7%, within the certification tolerances (the bound '
    """
    from . import gap_percent

    if gap == 0:
        return "zero gap"
    tol = VALUE_RTOL_TEXT
    shown = gap_percent(gap)
    if gap <= VALUE_RTOL:
        return f"gap {shown}, within the certification tolerance {tol} ({gap_percent(VALUE_RTOL)})"
    return (
        f"gap {shown}, within the certification tolerances (the bound within {tol} of the "
        f"engine's reported value, that value within {tol} of the recomputed F, each relative "
        "to F or to one value unit)"
    )


#: What each engine's (or method's) "optimal" rests on, as recorded in certificates.
PROOFS = {
    "enum": "exhaustive enumeration",
    "enumeration": "exhaustive enumeration",
    "frontier": "exhaustive enumeration by components (all budgets at once)",
    "bnb": "branch-and-bound (bound met the incumbent)",
    "bnb_limit": "branch-and-bound (bound met the incumbent when a limit stopped the search; "
    "the tie-break among equally good stores was not finished)",
    "bnb_tie_cut": "branch-and-bound (bound met the incumbent; the tie-break among equally "
    "good stores stopped after its cap of subtrees, so a cheaper store of the same value may "
    "exist)",
    "milp": "HiGHS MILP (model status optimal, its own gap 0)",
    "bnb_then_milp": "HiGHS MILP (model status optimal, its own gap 0) after a B&B warm start",
    "milp_orbits": "HiGHS MILP over counts of interchangeable blocks (model status optimal, "
    "its own gap 0)",
    "bnb_then_milp_orbits": "HiGHS MILP over counts of interchangeable blocks (model status "
    "optimal, its own gap 0) after a B&B run",
    "brute": "brute force",
    "exhaustive": "brute force",
    "monotone": "monotonicity: optimal at a smaller budget and already worth the largest value "
    "F can take",
    "monotone_fits": "monotonicity: optimal at a larger budget and feasible here",
}

#: How each engine's proof in :data:`PROOFS` begins, in every wording saved results carry
#: (the MILP's once read "zero gap"; :func:`proof_engine`).
PROOF_HEADS = {
    "exhaustive enumeration": "enum",
    "branch-and-bound": "bnb",
    "HiGHS MILP": "milp",
    "brute force": "brute",
}


def proof_engine(proof: str) -> str | None:
    """The engine whose proof ``proof`` (a certificate's) is: a proof carried over by
    monotonicity is the proof made at its other budget (``"... (B = 30: <proof>)"``, nested
    for a carry of a carry); None when it names none of :data:`PROOF_HEADS`.

    >>> proof_engine("exhaustive enumeration by components (all budgets at once)")
    'enum'
    >>> proof_engine(PROOFS["monotone_fits"] + " (B = 13: HiGHS MILP (...); cross-checked by enum)")
    'milp'
    >>> proof_engine("") is None
    True
    """
    while proof.startswith("monotonicity:"):
        start = proof.find(" (B = ")
        colon = proof.find(": ", start + 1) if start >= 0 else -1
        if colon < 0:
            return None
        proof = proof[colon + 2 :]
    return next((eng for head, eng in PROOF_HEADS.items() if proof.startswith(head)), None)


def rel_diff(a: float, b: float, unit: float = 1.0) -> float:
    """|a - b| / max(unit, |a|, |b|): the relative difference used by every check.

    ``unit`` is :func:`~memaudit_core.solvers.value_unit` of the instance (1 in band).

    Examples
    --------
    >>> rel_diff(100.0, 100.0 + 1e-8) < 1e-9
    True
    """
    if a == b:
        return 0.0
    diff = abs(a - b) / max(unit, abs(a), abs(b))
    # inf against a finite value is inf / inf = nan, and a nan passed every "> tolerance"
    # check: HiGHS's "optimum inf" for a store worth 1e300 was certified (QA s20a).
    return diff if math.isfinite(diff) else math.inf


def checks_rel_diff(checks: Sequence[EngineCheck], unit: float = 1.0) -> float:
    """A certificate's ``max_rel_diff``: the largest :func:`rel_diff` among the values that
    must agree, the primary's reported F against its store's, and, when the cross-check
    proved its optimum, each engine's reported and recomputed F against the other's and the
    cross-check's report against its store's F (0 without checks).

    With ``unit=0`` (a saved result does not record its unit) the differences are relative to
    the values alone, which bounds the certificate's from above whatever its unit was.
    """
    if not checks:
        return 0.0
    first = checks[0]
    diffs = [rel_diff(first.value, first.recomputed_value, unit)]
    if len(checks) > 1 and checks[1].status == "optimal":
        other = checks[1]
        diffs += [
            rel_diff(first.value, other.value, unit),
            rel_diff(first.recomputed_value, other.recomputed_value, unit),
            rel_diff(other.value, other.recomputed_value, unit),
        ]
    return max(diffs)


@dataclass(frozen=True)
class EngineCheck:
    """What one engine reported, and what re-checking its store found."""

    engine: str
    status: str
    value: float
    bound: float
    gap: float
    time_s: float
    nodes: int
    recomputed_value: float
    feasible: bool
    n_selected: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "engine": self.engine,
            "status": self.status,
            "value": self.value,
            "bound": self.bound,
            "gap": self.gap,
            "time_s": self.time_s,
            "nodes": self.nodes,
            "recomputed_value": self.recomputed_value,
            "feasible": self.feasible,
            "n_selected": self.n_selected,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], path: str = "$") -> EngineCheck:
        """The inverse of :meth:`to_dict`; a located ``ResultError`` on bad input."""
        from ..results import check_finite, from_fields
        from . import ENGINES

        res = from_fields(cls, data, path, choices={"engine": ENGINES})
        check_finite(f"{path}.time_s", res.time_s)  # QA s47: "NaN" was read back
        return res


@dataclass(frozen=True)
class Certificate:
    """The evidence behind a result's label.

    Attributes
    ----------
    certified : bool
        True only when every condition in the module docstring holds.
    reason : str
        Why it is not certified ("" when it is); notes otherwise.
    checks : tuple of EngineCheck
        The primary engine first, then the cross-check (if any).
    recomputed_value : float
        F of the returned store, recomputed from the compiled instance.
    agreement : bool or None
        Whether both engines proved the same optimum; None when no cross-check concluded.
    max_rel_diff : float
        Largest relative difference among values that must agree (reported vs recomputed,
        and engine vs engine).
    proof : str
        Which proof of optimality the primary engine gave (see :data:`PROOFS`), plus
        "; cross-checked by <engine>" when a second engine agreed; "" when nothing was proven.
    returned_check : int
        The position in ``checks`` of the engine whose store is returned: 0, the primary's;
        1, the cross-check's, when it proved a store worth more (the engines agreeing within
        their tolerance, or the primary's claim refused: then uncertified, the reason says
        why). A run a limit stopped may then take a reference writer's better store, which
        the reason names. Results saved before the field (session 51) read it from the
        wording of their reason or proof (:func:`returned_check_from_wording`).
    """

    certified: bool
    reason: str
    checks: tuple[EngineCheck, ...]
    recomputed_value: float
    agreement: bool | None
    max_rel_diff: float
    proof: str = ""
    returned_check: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "certified": self.certified,
            "reason": self.reason,
            "checks": [c.to_dict() for c in self.checks],
            "recomputed_value": self.recomputed_value,
            "agreement": self.agreement,
            "max_rel_diff": self.max_rel_diff,
            "proof": self.proof,
            "returned_check": self.returned_check,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], path: str = "$") -> Certificate:
        """The inverse of :meth:`to_dict`; a located ``ResultError`` on bad input. A
        certificate saved without ``returned_check`` takes it from its wording."""
        from ..errors import ResultError
        from ..results import child, from_fields

        cert = from_fields(cls, data, path, optional=("returned_check",))
        at = child(path, "returned_check")
        if "returned_check" not in data:
            return replace(cert, returned_check=returned_check_from_wording(cert))
        if isinstance(data["returned_check"], bool) or cert.returned_check not in (
            range(2) if len(cert.checks) > 1 else range(1)
        ):
            raise ResultError(
                at,
                "allowed-value",
                "the position in checks of the engine whose store is returned: 0 (the "
                "primary's)" + (" or 1 (the cross-check's)" if len(cert.checks) > 1 else ""),
                data["returned_check"],
            )
        if cert.returned_check == 1:
            other = cert.checks[1]
            if other.status != "optimal" or cert.agreement is None:
                raise ResultError(
                    at,
                    "inconsistent",
                    f"the cross-check's store is returned, yet {other.engine!r} "
                    + (
                        f"stopped at a {other.status!r}"
                        if other.status != "optimal"
                        else "is not compared with the primary (agreement is null)"
                    )
                    + ": only a store a cross-check proved optimal is returned in place of "
                    "the primary's",
                    cert.returned_check,
                )
        return cert


def returned_check_from_wording(cert: Certificate) -> int:
    """:attr:`Certificate.returned_check` of a certificate saved before the field: 1 where
    its reason or proof says, in the words :func:`finish` wrote then, that the cross-check's
    store is the one returned, else 0.

    >>> check = EngineCheck("enum", "optimal", 2.0, 2.0, 0.0, 0.1, 0, 2.0, True, 1)
    >>> first = replace(check, engine="milp", value=1.5, recomputed_value=1.5)
    >>> reason = "enum proved 2.0; its store, worth 0.5 more than milp's, is the one returned"
    >>> returned_check_from_wording(Certificate(False, reason, (first, check), 2.0, False, 0.25))
    1
    """
    if len(cert.checks) < 2:
        return 0
    other = cert.checks[1]
    refused = f"{other.engine} proved {other.recomputed_value!r}; its store, worth "
    agreed = f"; {other.engine}'s store, worth "
    return int(refused in cert.reason or (bool(cert.agreement) and agreed in cert.proof))


def _expected_picks(inst: CompiledInstance, budget: float) -> tuple[int, float]:
    b_eff = budget_with_tolerance(budget)
    afford = inst.cost <= b_eff
    n = int(np.count_nonzero(afford))
    if n == 0:
        return 0, 0.0
    picks = min(
        float(inst.n_groups * inst.group_capacity), b_eff / float(np.median(inst.cost[afford]))
    )
    return n, max(picks, 1.0)


def choose(inst: CompiledInstance, budget: float, *, combos: int | None = None) -> str:
    """The engine ``auto`` runs first.

    ``enum`` when the group-option product is tiny; ``bnb`` for ``log1p`` (the MILP cannot
    express it) and for small / medium instances; ``milp`` for large ones, where HiGHS's cutting
    planes beat the branch-and-bound, and for packages that repeat blocks enough for the model
    over counts (:mod:`memaudit_core.solvers.orbits`). Size is measured as affordable candidates
    times the expected store size (budget over the median affordable cost). When ``auto`` runs
    ``bnb`` and it has not finished after :data:`AUTO_BNB_NODES` nodes, :func:`solve_certified`
    hands the instance to ``milp`` with the B&B's incumbent as MIP start.

    Examples
    --------
    >>> from memaudit_core.generators import generate
    >>> from memaudit_core.compiled import compile_package
    >>> inst = compile_package(generate("temporal_interval"))
    >>> choose(inst, 2), choose(inst, 13)
    ('enum', 'bnb')
    """
    if combos is None:
        combos = combination_count(inst, budget)
    if combos <= ENUM_AUTO_MAX:
        return "enum"
    if inst.saturation not in SUPPORTED_SATURATIONS or milp_ill_conditioned(inst, budget):
        return "bnb"
    if inst.group_capacity > 1:
        # Subsets per group multiply the branch-and-bound's items; HiGHS handles k directly.
        return "milp"
    n, picks = _expected_picks(inst, budget)
    if n * picks > BNB_AUTO_WORK:
        return "milp"
    # A package that repeats blocks: B&B would explore every copy of a tied store before its
    # hand-over (density_trap with 100 experiences at budget 5: 0.99 s, the count model 0.05 s).
    return "milp" if orbits.aggregate(inst, budget) is not None else "bnb"


def cross_engine(
    inst: CompiledInstance,
    budget: float,
    primary: str,
    *,
    explicit: bool,
    combos: int | None = None,
) -> str | None:
    """The second exact engine for a cross-check, or None when none is suitable.

    Without an explicit request only cheap checks run: ``enum`` on small products, ``bnb``
    after ``enum``, and ``milp`` on instances of at most 60 candidates. An explicit request
    takes any other engine that can handle the instance.

    Examples
    --------
    >>> from memaudit_core.generators import generate
    >>> from memaudit_core.compiled import compile_package
    >>> inst = compile_package(generate("memaudit-small", seed=0))
    >>> cross_engine(inst, 16, "bnb", explicit=False), cross_engine(inst, 2, "enum", explicit=False)
    ('enum', 'bnb')
    """
    if primary == "enum":
        return "bnb"
    if combos is None:
        combos = combination_count(inst, budget)
    if combos <= (ENUM_MAX_COMBINATIONS if explicit else ENUM_CROSS_MAX):
        return "enum"
    milp_ok = inst.saturation in SUPPORTED_SATURATIONS and (
        explicit or not milp_ill_conditioned(inst, budget)
    )
    if (
        primary != "milp"
        and milp_ok
        and (explicit or inst.n_candidates <= MILP_CROSS_MAX_CANDIDATES)
    ):
        return "milp"
    if explicit and primary != "bnb":
        return "bnb"
    return None


def _check(
    inst: CompiledInstance,
    budget: float,
    engine: str,
    raw: RawSolution,
    t: float,
    recomputed: float | None = None,
) -> EngineCheck:
    sel = tuple(int(i) for i in raw.selected_idx)
    if recomputed is None:
        recomputed = evaluate(inst, np.asarray(sel, dtype=np.int64))
    feasible = inst.is_feasible(sel, budget) and all(0 <= i < inst.n_candidates for i in sel)
    return EngineCheck(
        engine=engine,
        status=raw.status,
        value=float(raw.value),
        bound=float(raw.bound),
        gap=relative_gap(float(raw.value), float(raw.bound), value_unit(inst, budget)),
        time_s=t,
        nodes=int(raw.nodes),
        recomputed_value=recomputed,
        feasible=feasible,
        n_selected=len(sel),
    )


def _require_feasible(
    inst: CompiledInstance, budget: float, check: EngineCheck, raw: RawSolution
) -> None:
    if not check.feasible:
        cost = inst.selection_cost(raw.selected_idx)
        limit = budget_with_tolerance(budget)
        if cost <= limit * (1 + 1e-12):
            # Within float rounding of the limit: the engine's running sum and the correctly
            # rounded one fall on either side of it. Not a wrong answer, but not one to certify.
            raise SolverError(
                f"solver {check.engine!r} returned a store whose cost {cost!r} lies within "
                f"floating-point rounding of the budget limit {limit!r}; the engines' sums "
                "disagree at that precision: move the budget by more than 1e-12 of itself"
            )
        raise SolverError(
            f"solver {check.engine!r} returned an infeasible store for budget {budget:.10g} "
            f"(cost {cost:g}, {check.n_selected} candidates): this is a solver bug"
        )


def _refuse_float_edge(
    inst: CompiledInstance, budget: float, stores: Sequence[Sequence[int]]
) -> None:
    """A clear error when two engines' different optima are explained by a store whose cost
    lies within float rounding of the budget limit (one engine's running sum admits it, the
    other's does not; exactness re-check: ``auto`` said "exact solvers disagree" there)."""
    limit = budget_with_tolerance(budget)
    edge = [s for s in stores if abs(inst.selection_cost(s) - limit) <= 1e-12 * max(limit, 1e-300)]
    if edge:
        raise SolverError(
            f"at budget {budget!r} a store costs {inst.selection_cost(edge[0])!r}, within "
            f"floating-point rounding of the budget limit {limit!r}: the engines' cost sums "
            "fall on either side of it, so no optimum can be certified there; move the budget "
            "by more than 1e-12 of itself"
        )


def _check_incumbent(
    inst: CompiledInstance, incumbent_idx: Sequence[int] | None, budget: float
) -> tuple[int, ...] | None:
    """``incumbent_idx`` as a tuple of candidate positions, or a clear error (not an
    IndexError deep in an engine) naming the rule it breaks. QA s44: a start over the budget
    or with two candidates of one experience was dropped unsaid by the engines, while the
    parameter is documented as a known feasible selection."""
    if incumbent_idx is None:
        return None
    n = inst.n_candidates
    try:
        positions = tuple(operator.index(i) for i in incumbent_idx)
    except TypeError:
        positions = None
    if positions is None or any(not 0 <= i < n for i in positions):
        raise MemAuditError(
            f"incumbent_idx must be candidate positions 0..{n - 1} (integers; "
            f"CompiledInstance.indices maps ids), got {cut_repr(incumbent_idx)}"
        )
    repeated = sorted(i for i, times in Counter(positions).items() if times > 1)
    if repeated:
        raise MemAuditError(
            f"incumbent_idx repeats position(s) {', '.join(map(str, repeated[:12]))}: a "
            "selection holds each candidate at most once"
        )
    from ..writers import infeasible_reason  # writers imports this package

    why = infeasible_reason(inst, positions, budget)
    if why:
        raise MemAuditError(
            f"incumbent_idx is not a feasible selection at budget {budget:g}: {why}"
        )
    return positions


def solve_certified(
    inst: CompiledInstance,
    budget: float,
    solver: str = "auto",
    *,
    time_limit: float | None = None,
    node_limit: int | None = None,
    cross_check: bool | None = None,
    incumbent_idx: tuple[int, ...] | None = None,
) -> SolveResult:
    """Solve, re-check and certify (see the module docstring for the rules).

    Parameters
    ----------
    inst : CompiledInstance
    budget : float
    solver : {'auto', 'bnb', 'milp', 'enum', 'brute'}
        The primary engine; ``auto`` uses :func:`choose`.
    time_limit, node_limit : optional
        Passed to each engine run. Inside a
        :func:`~memaudit_core.solvers.timeshare.shared_time` block the time limit is at most
        this run's share of the block's total.
    cross_check : bool, optional
        True: run a second exact engine (:func:`cross_engine`); False: never; None: every
        cheap check when ``solver`` is ``auto``, and enumeration for a named engine when the
        instance has at most :data:`ENUM_AUTO_MAX` stores to enumerate.
    incumbent_idx : tuple of int, optional
        A known feasible selection (warm start for bnb and milp).

    Returns
    -------
    SolveResult
        ``value`` is the recomputed F of the returned store; ``solver`` the primary engine.

    Raises
    ------
    SolverDisagreementError
        Two exact engines proved different optima (or contradict each other's bounds).
    SolverError
        An engine returned an infeasible store, or cannot handle the instance.

    Examples
    --------
    >>> from memaudit_core.generators import generate
    >>> from memaudit_core.compiled import compile_package
    >>> inst = compile_package(generate("update_chain"))
    >>> res = solve_certified(inst, 13, "bnb", cross_check=True)
    >>> round(res.value, 6), res.certified, [c.engine for c in res.certificate.checks]
    (8.025, True, ['bnb', 'enum'])
    """
    beat()  # sweeps run many solves between progress ticks (memaudit_core.heartbeat)
    t0 = time.perf_counter()
    budget = check_budget(budget)
    _check_limits(time_limit, node_limit)
    incumbent_idx = _check_incumbent(inst, incumbent_idx, budget)
    if solver not in SOLVER_CHOICES:
        raise UnknownNameError(
            f"unknown solver {cut_repr(solver)} (known: {', '.join(SOLVER_CHOICES)})"
        )
    # Inside a shared total (a page's sweep) this run gets its fair share of what is left.
    shared = active_share() is not None
    time_limit = run_time_limit(time_limit)
    combos = combination_count(inst, budget)
    primary = choose(inst, budget, combos=combos) if solver == "auto" else solver
    if shared and solver == "auto" and primary == "milp" and time_limit < BNB_BELOW_S:
        primary = "bnb"  # a share this short: B&B's root bound, not HiGHS's trivial one
    limits = {"time_limit": time_limit, "node_limit": node_limit}
    proof = None
    try:
        if (
            solver == "auto"
            and primary == "bnb"
            and not (shared and time_limit < BNB_BELOW_S)
            and _milp_can_take_over(inst, budget, node_limit)
        ):
            raw, t1, primary, proof = _bnb_then_milp(
                inst, budget, incumbent_idx, time_limit, node_limit
            )
        else:
            raw, t1 = run_engine(primary, inst, budget, incumbent_idx=incumbent_idx, **limits)
    except InstanceTooLargeError as exc:  # enum / brute refuse large instances; any other
        # ValueError is a defect and must reach the user as one (exit 1), not as a refusal.
        raise SolverError(f"solver {primary!r} cannot handle this instance: {exc}") from exc
    second = planned_cross(inst, budget, solver, primary, cross_check, combos=combos)
    res = finish(
        inst,
        budget,
        primary,
        raw,
        t1,
        second=second,
        explicit_cross=bool(cross_check),
        limits=limits,
        t0=t0,
        proof=proof,
    )
    # Only a run a limit stopped: a proven (or certified) result is never touched, so
    # unlimited runs cost nothing more (bench/RESULTS.md's speed targets).
    return lift_with_writers(inst, res) if res.status == "limit" else res


#: Reference writers a limited run's incumbent is compared with (DESIGN section 5: "an
#: incumbent from the best reference writer"), each with the most candidates it runs on. QA s42
#: (defect 2): a B&B stopped after 50 nodes on event-graph-500 reported 539.126 while gvt
#: writes 572.3 in 0.2 s, so score() and sweep() divided one store by two different
#: "incumbents". The caps keep the extra work well under a second: measured on a loaded
#: 2-core machine, gvt took 0.3-0.4 s on event_graph at 5,092 candidates, 0.79 s on
#: random_coverage at 5,000 (500 groups x 10) and ~7 s at 66,177 (20,000 experiences), so
#: it runs up to 4,000 candidates; greedy took 0.15 s at 19,975 candidates, so up to 20,000.
LIMITED_INCUMBENT_WRITERS: dict[str, int] = {"gvt": 4_000, "greedy": 20_000}


def lift_with_writers(inst: CompiledInstance, res: SolveResult) -> SolveResult:
    """``res`` (a run stopped by a limit) with the best of its incumbent and the stores of
    the reference writers in :data:`LIMITED_INCUMBENT_WRITERS` (the product's own, from
    :data:`memaudit_core.writers.WRITERS`; one a user replaced, one that fails, or one over
    its size cap is skipped).

    Each store's F is recomputed with :func:`~memaudit_core.objective.evaluate` and its
    feasibility checked; the engines' tie-break picks (among the stores tied with the highest
    value, the cheapest, then the smallest ids: :class:`~.enum.TieBest`).
    The engine's proven bound is kept, the gap recomputed, the status stays ``"limit"`` and
    the result uncertified even when the writer's F meets the bound (no engine proved it and
    no cross-check ran; the certificate's reason says the store meets the bound).
    The certificate's reason says "incumbent from the <name> writer".

    Raises
    ------
    SolverDisagreementError
        A writer's feasible store is worth more than the engine's proven bound.
    """
    from ..errors import WriterError
    from ..writers import BUILTIN_WRITERS, WRITERS, run_writer
    from .enum import TieBest, selection_key

    budget = res.budget
    _, vs, cs = inst.scaled_view_at(budget)
    # The engines' tie-break, in the units they compare in (run_engine's scaled view): an
    # absolute 1e-12 tied every store of a package in units of 1e-13 and took a cheaper,
    # worse one.
    ties = TieBest()
    cur = tuple(res.selected_idx)
    ties.offer(res.value * vs, res.cost * cs, lambda: selection_key(inst, cur), None)
    for name, max_candidates in LIMITED_INCUMBENT_WRITERS.items():
        builtin = BUILTIN_WRITERS.get(name)
        if (
            inst.n_candidates > max_candidates
            or builtin is None
            or dict.get(WRITERS, name) is not builtin
        ):
            continue  # over its cap, or not the product's reference writer: not run here
        try:
            found = run_writer(name, inst, budget)
        except (MemAuditError, WriterError):
            continue  # a writer that fails is skipped: the engine's incumbent stands
        idx = tuple(sorted(int(i) for i in found.selected_idx))
        if not inst.is_feasible(idx, budget):
            continue
        value = evaluate(inst, np.asarray(idx, dtype=np.int64))
        cost = inst.selection_cost(idx)
        key = selection_key(inst, idx)
        ties.offer(value * vs, cost * cs, lambda key=key: key, (value, cost, idx, name))
    best = ties.best()[3]
    if best is None:
        return res
    value, cost, idx, name = best
    unit = value_unit(inst, budget)
    if value > res.bound + VALUE_RTOL * max(unit, abs(value)):
        raise SolverDisagreementError(
            f"at budget {budget:.10g} the {name} writer's store is worth {value!r}, above the "
            f"bound {res.bound!r} {res.solver} proved: the bound is wrong"
        )
    bound = max(res.bound, value)
    # QA s51 #4: the note is printed in the CLI's text as it stands, so its values are written
    # as the text writes F (6 decimals), not as reprs ("F 61.400000000000006"); the result's
    # fields keep the full values.
    note = (
        f"incumbent from the {name} writer (F {value_text(value, 6)}; "
        f"{res.solver}'s store {value_text(res.value, 6)})"
    )
    if not bound - value > VALUE_RTOL * max(unit, abs(value)):
        # Decided (QA s42): a writer's store meeting the proven bound is optimal by that
        # bound, but no engine proved it and no cross-check ran, so it stays uncertified.
        note += (
            f"; its F meets {res.solver}'s proven bound, so it is optimal by that bound, but "
            "not certified: solve without a limit for a certificate"
        )
    cert = res.certificate
    if cert is not None:
        reason = f"{cert.reason}; {note}" if cert.reason else note
        cert = replace(cert, reason=reason)
    return replace(
        res,
        value=value,
        selected=inst.ids(idx),
        selected_idx=idx,
        cost=cost,
        bound=bound,
        gap=relative_gap(value, bound, unit),
        certificate=cert,
    )


def planned_cross(
    inst: CompiledInstance,
    budget: float,
    solver: str,
    primary: str,
    cross_check: bool | None,
    *,
    combos: int | None = None,
) -> str | None:
    """The cross-check engine :func:`solve_certified` runs after ``primary`` (None: none).

    ``solver`` is what the caller asked for (``auto`` or an engine name), ``cross_check`` as
    in :func:`solve_certified`. Shared with the budget sweeps' shortcuts (QA s41 defect 1: a
    sweep's "monotonicity" answers skipped the check ``solve()`` runs at that budget, and were
    labelled differently).

    Examples
    --------
    >>> from memaudit_core.generators import generate
    >>> from memaudit_core.compiled import compile_package
    >>> inst = compile_package(generate("update_chain"))
    >>> planned_cross(inst, 13, "bnb", "bnb", None), planned_cross(inst, 13, "bnb", "bnb", False)
    ('enum', None)
    """
    if combos is None:
        combos = combination_count(inst, budget)
    if cross_check is None:
        # auto: every cheap check. A named engine: enumeration when the product is tiny, which
        # costs little and catches a MILP misled by floating point (QA: HiGHS "proved" 4.625 on
        # four candidates whose optimum is 5.875).
        wants_cross = solver == "auto" or (primary != "enum" and combos <= ENUM_AUTO_MAX)
    else:
        wants_cross = cross_check
    if not wants_cross:
        return None
    return cross_engine(inst, budget, primary, explicit=bool(cross_check), combos=combos)


def _milp_can_take_over(inst: CompiledInstance, budget: float, node_limit: int | None) -> bool:
    return (
        inst.saturation in SUPPORTED_SATURATIONS
        and not milp_ill_conditioned(inst, budget)
        and (node_limit is None or node_limit > AUTO_BNB_NODES)
    )


def _bnb_then_milp(
    inst: CompiledInstance,
    budget: float,
    incumbent_idx: tuple[int, ...] | None,
    time_limit: float | None,
    node_limit: int | None,
) -> tuple[RawSolution, float, str, str | None]:
    """``auto``'s B&B run, handed over to HiGHS after :data:`AUTO_BNB_NODES` nodes.

    Returns (raw solution, wall time of both runs, engine whose proof stands, proof or None).
    """
    raw, t1 = run_engine(
        "bnb",
        inst,
        budget,
        incumbent_idx=incumbent_idx,
        time_limit=time_limit,
        node_limit=AUTO_BNB_NODES,
    )
    if raw.status != "limit" or raw.nodes < AUTO_BNB_NODES:
        return raw, t1, "bnb", None  # proved, or stopped by the caller's time limit
    remaining = None if time_limit is None else max(0.0, time_limit - t1)
    start = tuple(raw.selected_idx) or incumbent_idx
    raw2, t2 = run_engine(
        "milp", inst, budget, incumbent_idx=start, time_limit=remaining, node_limit=node_limit
    )
    detail = {
        **raw2.detail,
        "handover": {
            "from": "bnb",
            "bnb_nodes": raw.nodes,
            "bnb_value": raw.value,
            "bnb_bound": raw.bound,
            "bnb_time_s": t1,
        },
    }
    # Both bounds are proven; at a limit the B&B's may be the tighter one.
    bound = max(raw2.value, min(raw2.bound, raw.bound))
    raw2 = RawSolution(
        raw2.selected_idx, raw2.value, bound, raw2.status, nodes=raw2.nodes, detail=detail
    )
    counted = raw2.detail.get("method") == "milp_orbits"
    return raw2, t1 + t2, "milp", PROOFS["bnb_then_milp_orbits" if counted else "bnb_then_milp"]


def finish(
    inst: CompiledInstance,
    budget: float,
    primary: str,
    raw: RawSolution,
    t1: float,
    *,
    second: str | None = None,
    second_raw: tuple[RawSolution, float] | None = None,
    explicit_cross: bool = False,
    limits: dict[str, Any] | None = None,
    t0: float | None = None,
    proof: str | None = None,
    recomputed: float | None = None,
    certified_elsewhere: bool = False,
) -> SolveResult:
    """Re-check an engine's raw solution, run or take the cross-check, certify.

    ``second`` names the cross-check engine (None: no cross-check). ``second_raw`` is its
    already computed solution and wall time (bulk paths compute many budgets at once);
    otherwise the engine is run here with ``limits``. ``explicit_cross`` records that a
    cross-check was asked for: when no second engine can run, the proof says so, and the label
    is lowered only where the rule needs the check (a HiGHS proof on ill-conditioned costs).
    ``proof`` describes the primary engine's proof (default: from the engine and its detail).
    ``recomputed`` is F of the primary store when the caller already computed it with
    :func:`~memaudit_core.objective.evaluate_many` (the same numbers as ``evaluate``).
    ``certified_elsewhere`` says the proof is a certified optimum at another budget carried
    over by monotonicity: the HiGHS conditioning test was applied at the budget where that
    proof was made, not here.
    """
    if t0 is None:
        t0 = time.perf_counter() - t1
    limits = limits or {}
    first = _check(inst, budget, primary, raw, t1, recomputed)
    _require_feasible(inst, budget, first, raw)
    value = first.recomputed_value
    unit = value_unit(inst, budget)
    checks = [first]
    reasons: list[str] = []
    diffs = [rel_diff(first.value, value, unit)]
    if raw.status == "unproven" and raw.detail.get("contradicted", {}).get("unresolved"):
        reasons.append(
            f"{primary} proved a store worth less than a known feasible one, also with its "
            "presolve off (floating point near the budget's edge); the best known store is kept, "
            "not proven"
        )
    elif raw.status == "unproven" and raw.detail.get("unproven") == "skipped_value":
        reasons.append(
            f"{primary} left out candidates worth at most its zero-gain floor each, which "
            f"together could add {raw.detail.get('skipped_value', math.nan)!r} to a store, more "
            "than the certification tolerance: its store is not proven optimal"
        )
    elif raw.status == "unproven":
        reasons.append(
            f"{primary} kept returning stores a hair over the budget (its floating-point "
            "tolerance); the best store within the budget is not proven"
        )
    elif raw.status != "optimal":
        reasons.append(f"{primary} stopped at a {raw.status} before proving optimality")
    if diffs[0] > VALUE_RTOL:
        reasons.append(f"{primary} reported {first.value!r} but the store's F is {value!r}")
    bound = float(raw.bound)
    bound_refused = not bound >= value - VALUE_RTOL * max(unit, abs(value))  # nan too
    if bound_refused:
        reasons.append(f"{primary}'s bound {bound!r} is below the store's F {value!r}")
        # A bound below a store's own F bounds nothing: no valid bound is known.
        bound = math.inf
    bound = max(bound, value)
    gap = relative_gap(value, bound, unit)
    # "Its bound meets its value" is the engine's own claim: its bound against the value it
    # reported (the recomputed F is held to that value just above). Measured against the
    # recomputed F, the two 1e-9 allowances added up: HiGHS proved 1.5 on five candidates
    # (objective 1.500000001 from its feasibility tolerance, dual bound 1.5000000015, enum
    # agreeing on 1.5) and the optimum was refused as "a gap of 1e-09" (exactness QA s19c).
    claimed = max(value, first.value) if diffs[0] <= VALUE_RTOL else value
    # An infinite bound proves nothing (HiGHS: objective coefficients of 1e20 and more are
    # infinite to it), unless it was already refused above.
    if (
        raw.status == "optimal"
        and not bound_refused
        and not (bound - claimed) <= VALUE_RTOL * max(unit, abs(claimed))
    ):
        reasons.append(f"{primary} claims optimality with a gap of {gap:.3g}")

    agreement: bool | None = None
    # A HiGHS proof on ill-conditioned costs proves nothing (ill_conditioned_reason): its
    # report and bound claim nothing a cross-check could contradict, only its store does. A
    # monotone result rests on a certified proof at another budget; the test belongs where
    # HiGHS proved (QA s41 defect 1: a proof at B = 30 on costs spanning 3e4, carried to
    # B = 1100, was blamed on costs spanning 1e7 there and labelled uncertified).
    doubt = (
        ill_conditioned_reason(inst, budget)
        if primary == "milp" and not certified_elsewhere
        else None
    )
    highs_unproven = doubt is not None
    inconclusive = ""
    # Positions in checks of cross-checks whose report was refused: they prove no bound.
    refused_checks: set[int] = set()
    better: tuple[float, tuple[int, ...], str] | None = None
    # Said in the proof, not held against the label, unless the rule itself needs the check
    # (QA s41 defect 4: asking for a cross-check lowered "OPT" where no second engine exists).
    unchecked = ""
    if second is None and explicit_cross:
        unchecked = "no second exact engine could check it"
    if second is not None and raw.status != "optimal":
        reasons.append(f"cross-check by {second} skipped: the primary result is not proven")
        second = None
    if second is not None:
        if second_raw is not None:
            raw2, t2 = second_raw
        else:
            try:
                raw2, t2 = run_engine(second, inst, budget, **limits)
            except SolverError as exc:
                unchecked = f"cross-check by {second} could not run: {exc}"
                raw2 = None
        if raw2 is not None:
            other = _check(inst, budget, second, raw2, t2)
            _require_feasible(inst, budget, other, raw2)
            checks.append(other)
            tol = VALUE_RTOL * max(unit, abs(value))
            if raw2.status == "optimal":
                pair = (
                    rel_diff(first.value, other.value, unit),
                    rel_diff(value, other.recomputed_value, unit),
                    rel_diff(other.value, other.recomputed_value, unit),
                )
                diffs.extend(pair)
                # A primary whose reported value is not its store's F (said above) is held to
                # its store only: its report (inf from HiGHS) is no claim to contradict.
                compared = pair[:2] if diffs[0] <= VALUE_RTOL else pair[1:2]
                if (
                    max(compared) > VALUE_RTOL
                    and (diffs[0] > VALUE_RTOL or highs_unproven)
                    and pair[2] <= VALUE_RTOL
                    # Its store not beaten by the primary's feasible one: a store worth more
                    # than a proven optimum contradicts that proof, and is raised below.
                    and other.recomputed_value >= value - tol
                    # Its own proof: a cross-check "optimal" with its bound above its store
                    # proved nothing (review s50 #6), and the disagreement is raised below.
                    and other.bound - other.recomputed_value
                    <= VALUE_RTOL * max(unit, abs(other.recomputed_value))
                ):
                    # Not a disagreement: the primary claims nothing beyond its store, so only
                    # its store is compared, and a feasible store worth less than a proven
                    # optimum contradicts nothing. Either its report already failed its own
                    # check (a reason above; exactness QA s50 #5: HiGHS's 1e-9 feasibility
                    # tolerance let y_r reach 1 on coverage 0.999999999, and `solve --solver
                    # milp` aborted with "please report it" where enum had proved the
                    # optimum), or it is a HiGHS proof on ill-conditioned costs, no proof
                    # (the reason below; session 51: its report within 1e-9 of its store and
                    # of enum's optimum, but the stores 1.00006e-9 apart, and `solve --solver
                    # milp` aborted the same way). The proven store is returned when it is
                    # worth more, uncertified either way, since the primary's proof is refused.
                    agreement = False
                    if other.recomputed_value > value:
                        reasons.append(
                            f"{second} proved {other.recomputed_value!r}; its store, worth "
                            f"{other.recomputed_value - value:.3g} more than {primary}'s, is "
                            "the one returned"
                        )
                        better = (other.recomputed_value, tuple(raw2.selected_idx), second)
                    else:
                        reasons.append(
                            f"{second} proved {other.recomputed_value!r}; {primary}'s store, "
                            f"worth {value - other.recomputed_value:.3g} more (within the "
                            "tolerance), is kept"
                        )
                    # Its own proven bound alone: the primary's comes from the refused run.
                    bound = max(other.bound, other.recomputed_value, value)
                elif max(compared) > VALUE_RTOL:
                    _refuse_float_edge(inst, budget, (raw.selected_idx, raw2.selected_idx))
                    raise SolverDisagreementError(
                        f"exact solvers disagree at budget {budget:.10g}: {primary} found "
                        f"{first.value!r} (store F {value!r}), {second} found {other.value!r} "
                        f"(store F {other.recomputed_value!r}); relative difference "
                        f"{max(compared):.10g} > {VALUE_RTOL:g}"
                    )
                elif pair[2] > VALUE_RTOL:
                    refused_checks.add(len(checks) - 1)
                    reasons.append(
                        f"{second} reported {other.value!r} but its store's F is "
                        f"{other.recomputed_value!r}"
                    )
                else:
                    agreement = True
                    if other.recomputed_value > value and not tied(
                        other.recomputed_value / unit, value / unit
                    ):
                        # Both proofs hold within the engines' tolerance, and the second store
                        # is feasible and worth more: it is returned (certification QA s38:
                        # HiGHS kept a start worth 9e-10 less, 9e-7 relative, and enum's
                        # better store was recorded but not returned). A store worth more by
                        # rounding only ties, in the engines' units, and the primary's
                        # tie-break stands (QA s47).
                        better = (other.recomputed_value, tuple(raw2.selected_idx), second)
            else:
                if (
                    other.recomputed_value > value + tol
                    or value > max(other.bound, other.recomputed_value) + tol
                ):
                    raise SolverDisagreementError(
                        f"exact solvers contradict each other at budget {budget:.10g}: {primary} "
                        f"proved {value!r}, {second} (stopped at a limit) has a store worth "
                        f"{other.recomputed_value!r} and a bound {other.bound!r}"
                    )
                # Consistent: the primary engine's proof stands alone, as it does without a
                # cross-check (QA s41 defect 2: asking for a check lowered "OPT" to
                # "optimal (uncertified)"). Said in the proof, not held against the label.
                inconclusive = (
                    f"; cross-check by {second} stopped at a limit, consistent but inconclusive "
                    f"(its store worth {other.recomputed_value!r}, its bound {other.bound!r})"
                )

    # An agreeing cross-check proved what HiGHS could not.
    if doubt is not None and not agreement:
        # HiGHS's bound is no proof here either (QA s48: bound 1e9 beside a store worth
        # 1e9 + 0.5): the result's bound is F of every affordable candidate, valid whatever
        # HiGHS did, or a limited cross-check's own bound where tighter. HiGHS's stays in
        # checks[0] and is named here.
        valid = [(value_ceiling(inst, budget), "F of every affordable candidate")]
        valid += [
            (c.bound, f"{c.engine}'s")
            for i, c in enumerate(checks)
            if i > 0 and i not in refused_checks
        ]
        tightest = min(valid, key=lambda item: item[0])
        reasons.append(
            f"{doubt}: use solver 'bnb' or 'auto' for a certified optimum"
            + (f" ({unchecked})" if unchecked else "")
            + f"; {primary}'s bound {checks[0].bound!r} {BOUND_REPLACED} {tightest[1]}"
        )
        unchecked = ""
        bound = max(tightest[0], value)
        gap = relative_gap(value, bound, unit)
    certified = not reasons
    if proof is None:
        proof = PROOFS.get(str(raw.detail.get("method", primary)), PROOFS.get(primary, primary))
    if agreement:
        proof += f"; cross-checked by {checks[1].engine}"
    proof += inconclusive
    if unchecked:
        proof += f"; {unchecked}"
    selected_idx: Iterable[int] = raw.selected_idx
    if better is not None:
        if agreement:
            proof += (
                f"; {better[2]}'s store, worth {better[0] - value:.3g} more (within the "
                "engines' tolerance), is the one returned"
            )
        value, selected_idx = better[0], better[1]
        bound = max(bound, value)
        gap = relative_gap(value, bound, unit)
    if certified and gap > 0:
        # QA s42 #2: HiGHS's objective and bound (1250000000.375) carry its 1e-9 feasibility
        # tolerance above the store's F (1250000000); the proof said "zero gap" beside a gap
        # of 3e-10. The proof names the gap and whose report it comes from.
        proof += (
            f"; the bound {bound!r} is above the store's recomputed F {value!r}: "
            + certified_gap_text(gap)
        )
        if first.value != first.recomputed_value:
            proof += f" ({primary} reported {first.value!r})"
    certificate = Certificate(
        certified=certified,
        reason="; ".join(reasons),
        checks=tuple(checks),
        recomputed_value=value,
        agreement=agreement,
        # One rule with the read-back check of a saved certificate (SolveResult).
        max_rel_diff=checks_rel_diff(checks, unit),
        proof=proof if raw.status == "optimal" else "",
        returned_check=int(better is not None),
    )
    sel = tuple(sorted(int(i) for i in selected_idx))
    return SolveResult(
        value=value,
        selected=inst.ids(sel),
        selected_idx=sel,
        cost=inst.selection_cost(sel),
        budget=budget,
        status=raw.status,
        bound=bound,
        gap=gap if math.isfinite(gap) else math.inf,
        solver=primary,
        time_s=time.perf_counter() - t0,
        nodes=int(raw.nodes),
        pool=inst.pool,
        saturation=inst.saturation,
        package_id=inst.package_id,
        content_hash=inst.content_hash,
        certificate=certificate,
    )
