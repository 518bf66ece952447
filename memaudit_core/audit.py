"""Certification audit: both exact engines on many instances, every difference shown.

``memaudit audit`` (and :func:`audit`) runs the product's branch-and-bound (``bnb``), the
HiGHS MILP (``milp``) and, wherever at most :data:`ENUM_CROSS_MAX` stores fit the budget,
exhaustive enumeration (``enum``) *directly* — not through
:func:`memaudit_core.solvers.solve`, so the audit does not trust the certificate logic it
checks — on every distinct instance of a suite
(see :mod:`memaudit_core.suites` for sources, workers, Dask and resume), and reports matches,
the largest difference, times, and every disagreement.

What is counted
---------------
An *instance* is what the solvers see, identified by its instance hash
(:func:`memaudit_core.suites.instance_hash`): saturation, unit weights, groups with their
candidates' types, costs and coverage — names, texts and ``meta`` left out. So a seed-invariant
family (``update_chain``) is one instance however many seeds are listed, and identical instances
drawn by different seeds are solved once. A *check* is one ``(instance, pool, budget)``. The
report gives sources listed, distinct packages (content hash, which includes the seed in
``meta``), distinct instances, and checks (``n_tasks``, the unit of agreement).

For each check the engines run; each returned store is checked feasible and its F
recomputed (:func:`memaudit_core.objective.evaluate`). The engines *agree* when at least two
ran, every one that ran proved optimality, and the recomputed values differ by at most 1e-9
relative. Two proven optima that differ, an infeasible store or a reported value its store
does not have is a *disagreement*. A run stopped by a limit is *unproven* (not a
disagreement), and so is a HiGHS proof on affordable costs spanning more than a factor 1e5
(:func:`~memaudit_core.solvers.milp.ill_conditioned_reason`): ``solve`` certifies no such proof
on its own, so its status reads ``unproven``, its bound is left out and only its store is
checked against the other engines' proofs; an engine that cannot take the instance (``milp``
under ``log1p``) is *skipped*, and a check with fewer than two engines that ran is *skipped* as
a whole. So a ``log1p`` package small enough to enumerate is checked by ``bnb`` against
``enum`` (it read NOTHING CHECKED when only ``bnb`` and ``milp`` ran). Every disagreement is
written to ``disagreements/`` in the output folder: the package JSON with its ``budget`` set to
the instance's budget (so ``memaudit solve FILE --pool POOL --solver bnb|milp|enum`` reproduces
it) and a JSON record of the engines' answers.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, ClassVar

from .compiled import POOLS as COMPILED_POOLS
from .errors import (
    MemAuditError,
    SolverError,
    UnknownNameError,
    UsageError,
    check_budget_list,
    check_names,
    cut_repr,
)
from .package import CANDIDATE_TYPES, Package
from .shortrepr import short_repr
from .solvers import _check_limits, gap_percent
from .solvers.certify import ENUM_CROSS_MAX
from .solvers.milp import unsupported_saturation
from .suites import (
    JOURNAL,
    IndexEntry,
    PackageSource,
    Progress,
    WarningsCallback,
    _attach_saved,
    _load_checked,
    _md_table,
    _portable_errors,
    collect_sources,
    discarded_note,
    family_seed_notes,
    instance_hash,
    outputs_later_note,
    remove_stale_figures,
    repeated_sources_note,
    report_figure,
    run_suite,
    task_key,
    write_report,
    write_table,
)
from .versions import RESULT_VERSION

#: Every engine an audit may run, in the order they run and are reported.
ENGINES = ("bnb", "milp", "enum")
#: Engines that run on every check; ``enum`` runs where at most :data:`ENUM_CROSS_MAX` stores
#: fit the budget (the rule of ``solve()``'s cross-check and of the Certification page).
ALWAYS = ("bnb", "milp")
#: The status of an engine the audit did not run on a check (``enum`` above its cap).
NOT_RUN = "not run"
#: ``enum``'s status in a check saved before enumeration took part in audits.
ABSENT = "not in this audit"
#: Statuses of an engine run stopped before its proof (a limit; HiGHS unproven).
UNPROVEN_STATUSES = ("limit", "unproven")
#: The fields each engine writes to a check's record.
_ENGINE_FIELDS = ("value", "reported", "bound", "time_s", "nodes", "cost", "gap")
#: The candidate pools an audit can check (:data:`memaudit_core.compiled.POOLS`).
POOLS = tuple(COMPILED_POOLS)
#: Pool -> the pools whose candidates it holds (itself included), by candidate type: a store
#: of one of them is a store of the pool too.
POOL_WITHIN = {
    pool: tuple(
        other
        for other, keeps in COMPILED_POOLS.items()
        if all(take(t) for t in CANDIDATE_TYPES if keeps(t))
    )
    for pool, take in COMPILED_POOLS.items()
}
#: Relative tolerance of agreement (DESIGN.md section 5).
AGREE_TOL = 1e-9


def _rel_tol(v: float, unit: float = 1.0) -> float:
    """The agreement tolerance at ``v``, ``unit`` being the package's value unit
    (:func:`~memaudit_core.solvers.value_unit`): with 1, a package in units of 1e-14 had every
    pair of values "agree" (QA s41 #1)."""
    return AGREE_TOL * max(unit, abs(v))


def reported_off(value: float, reported: float, proven: bool, unit: float) -> float | None:
    """How far an engine's ``reported`` value is off its store's F ``value`` when the audit
    counts it as a finding (the check is then a disagreement), else None: any gap beyond the
    tolerance for a ``proven`` optimum, only a claim above F for a run stopped by a limit
    (HiGHS's incumbent need not push each y_r to its cap, so it may report less than its
    store is worth: QA s42 round 3). One rule for the audit and its read-back (QA s50: a
    saved "agree" row with a reported value 1 above its store's F read back as PASS).

    >>> reported_off(2.0, 2.0, True, 1.0), reported_off(2.0, 1.5, False, 1.0)
    (None, None)
    >>> reported_off(2.0, 1.5, True, 1.0), reported_off(2.0, 3.0, False, 1.0)
    (0.5, 1.0)
    """
    gap = abs(reported - value) if proven else reported - value
    return gap if gap > _rel_tol(value, unit) else None


def skipped_note(engine: str, why: str) -> str:
    """The problem a check records for an engine it did not run (its status ``skipped``);
    read back, a row with this note and another status is refused."""
    return f"{engine} skipped: {why}"


def milp_saturation_skipped(problems: Sequence[str]) -> str | None:
    """The saturation a check's ``problems`` say the MILP could not take (its
    :func:`skipped_note` of :func:`~memaudit_core.solvers.milp.unsupported_saturation`), or
    None. The saturation is the instance's, so the MILP ran on none of its checks (an audit
    row does not save the saturation: this note is how a read-back knows it).

    >>> milp_saturation_skipped([skipped_note("milp", unsupported_saturation("log1p"))])
    'log1p'
    >>> milp_saturation_skipped(["milp skipped: HiGHS is not installed"]) is None
    True
    """
    from .saturations import SATURATIONS

    for sat in SATURATIONS:
        why = unsupported_saturation(sat)
        if why is not None and any(p.startswith(skipped_note("milp", why)) for p in problems):
            return sat
    return None


def audit_engines(inst: Any, budget: float) -> tuple[str, ...]:
    """The engines an audit runs on ``inst`` at ``budget``: ``bnb`` and ``milp`` always,
    ``enum`` too where at most :data:`ENUM_CROSS_MAX` stores fit.

    Examples
    --------
    >>> from memaudit_core.generators import generate
    >>> from memaudit_core.compiled import compile_package
    >>> audit_engines(compile_package(generate("update_chain")), 6)
    ('bnb', 'milp', 'enum')
    """
    from .solvers.enum import combination_count

    if combination_count(inst, budget) <= ENUM_CROSS_MAX:
        return ENGINES
    return ALWAYS


def audit_instance(inst: Any, budget: float, time_limit: float | None = None) -> dict[str, Any]:
    """The audit's engines on one compiled instance at one budget; a flat, JSON-ready record
    (see the module docstring for the outcomes)."""
    from .objective import evaluate
    from .solvers import relative_gap, run_engine, value_unit
    from .solvers.milp import ill_conditioned_reason

    # QA s41 #1: gaps and tolerances in the package's value unit, as solve() measures them.
    unit = value_unit(inst, budget)
    to_run = audit_engines(inst, budget)
    rec: dict[str, Any] = {}
    values: dict[str, float] = {}
    errors = 0
    problems: list[str] = []
    # Kept apart from problems: a skipped engine is no finding against the others.
    skips: list[str] = []
    # Engines whose proof and bound count for nothing here (HiGHS on ill-conditioned costs).
    doubted: set[str] = set()
    for eng in ENGINES:
        if eng not in to_run:
            rec.update({f"{eng}_{name}": None for name in _ENGINE_FIELDS})
            rec[f"{eng}_status"] = NOT_RUN
            continue
        unsupported = unsupported_saturation(inst.saturation) if eng == "milp" else None
        if unsupported is not None:
            # Said here, not with solve's "use solver 'bnb' or 'auto'": audit has no solver
            # option and runs bnb already (QA s47).
            rec.update({f"{eng}_{name}": None for name in _ENGINE_FIELDS})
            rec[f"{eng}_status"] = "skipped"
            skips.append(
                skipped_note(
                    eng,
                    f"{unsupported}, so only bnb and enum are compared there "
                    "(enum where the check is small enough to enumerate)",
                )
            )
            continue
        try:
            raw, secs = run_engine(eng, inst, budget, time_limit=time_limit)
        except Exception as exc:  # an engine failure is a finding, not a reason to stop
            skipped = isinstance(exc, SolverError)
            rec.update({f"{eng}_{name}": None for name in _ENGINE_FIELDS})
            rec[f"{eng}_status"] = "skipped" if skipped else "error"
            if skipped:
                skips.append(skipped_note(eng, str(exc)))
            else:
                problems.append(f"{eng} failed: {type(exc).__name__}: {exc}")
                errors += 1
            continue
        sel = tuple(int(i) for i in raw.selected_idx)
        feasible = inst.is_feasible(sel, budget)
        value = evaluate(inst, sel)
        if not feasible:
            problems.append(f"{eng} returned an infeasible store")
        if reported_off(value, raw.value, raw.status == "optimal", unit) is not None:
            problems.append(f"{eng} reported {raw.value!r} but its store is worth {value!r}")
        status, bound = raw.status, float(raw.bound)
        doubt = ill_conditioned_reason(inst, budget) if eng == "milp" else None
        if doubt is not None:
            # solve() certifies no such HiGHS proof on its own (QA s48: HiGHS's 1e9 "agreed"
            # with bnb's 1e9 + 0.5, 5e-10 relative, and the audit said PASS): its store is
            # still checked against the others' proofs, its proof and bound are not counted.
            doubted.add(eng)
            status = "unproven" if status == "optimal" else status
            bound = math.inf
            skips.append(f"{eng}'s proof and bound not counted: {doubt}")
        rec.update(
            {
                f"{eng}_status": status if feasible else "infeasible",
                f"{eng}_value": value,
                f"{eng}_reported": raw.value,
                f"{eng}_bound": bound if math.isfinite(bound) else None,
                f"{eng}_time_s": secs,
                f"{eng}_nodes": int(raw.nodes),
                f"{eng}_cost": inst.selection_cost(sel),
                f"{eng}_selected": list(inst.ids(sel)),
                f"{eng}_gap": relative_gap(value, bound, unit) if math.isfinite(bound) else None,
            }
        )
        values[eng] = value
    if len(values) >= 2:
        statuses = {eng: rec[f"{eng}_status"] for eng in values}
        compared = compared_values(values, statuses)
        diff = max(compared.values()) - min(compared.values())
        rec["abs_diff"] = diff
        rec["rel_diff"] = diff / max(unit, *(abs(v) for v in compared.values()))
        proven_values = {e: v for e, v in values.items() if statuses[e] == "optimal"}
        if proven_values:
            # A limited run's store worth more than a proven optimum, or its bound under one,
            # contradicts that proof (QA s42 round 2: checked only when every engine proved).
            top = max(proven_values.values())
            for eng in values.keys() - proven_values.keys():
                bound = rec[f"{eng}_bound"]
                if values[eng] - top > _rel_tol(top, unit):
                    problems.append(
                        f"{eng}'s store (F {values[eng]!r}) is worth more than the proven "
                        f"optimum {top!r}"
                    )
                if bound is not None and top - bound > _rel_tol(top, unit):
                    problems.append(f"{eng}'s bound {bound!r} is below the proven optimum {top!r}")
        if errors:
            rec["outcome"] = "error"
        elif problems:
            # An infeasible store or a value its store does not have is a finding even from
            # a run stopped by a limit (it read "unproven").
            rec["outcome"] = "disagree"
        elif len(proven_values) >= 2:
            # Two proofs are compared however the third run ended (QA s42 round 2: bnb and
            # enum proving different optima read "unproven" when milp hit its limit, and equal
            # ones "NOTHING CHECKED").
            rec["outcome"] = (
                "agree" if diff <= _rel_tol(max(compared.values()), unit) else ("disagree")
            )
            skips.extend(
                f"{eng} stopped at its limit ({statuses[eng]}); the other engines' proofs agree"
                for eng in values
                if eng not in proven_values and eng not in doubted and rec["outcome"] == "agree"
            )
        else:  # fewer than two proofs: an engine stopped at a limit, or was not counted
            rec["outcome"] = "unproven"
    else:
        rec["abs_diff"] = rec["rel_diff"] = None
        rec["outcome"] = "error" if errors else "skipped"
    rec["problems"] = problems + skips
    # Saved so that read-back judges agreement in the same unit (QA s42 round 3: 0.0015 and
    # 0.00150000002 agree in a package whose value unit is 1, and read back as differing).
    rec["value_unit"] = unit
    return rec


_OUTCOMES = ("agree", "disagree", "unproven", "skipped", "error")


def compared_values(values: Mapping[str, float], statuses: Mapping[str, str]) -> dict[str, float]:
    """The engine values a check's difference is taken over: the proven optima where at least
    two engines proved theirs (a third engine's limited incumbent is no difference between
    proofs), else every value.

    >>> compared_values({"bnb": 2.0, "milp": 1.5, "enum": 2.0},
    ...                 {"bnb": "optimal", "milp": "limit", "enum": "optimal"})
    {'bnb': 2.0, 'enum': 2.0}
    """
    proven = {e: v for e, v in values.items() if statuses.get(e) == "optimal"}
    return proven if len(proven) >= 2 else dict(values)


def _audit_result_ok(key: str, result: Any) -> bool:
    """A journal line's audit check that can be reused: an outcome, its problems, and each
    engine's numbers of their JSON types, that pass the checks a saved audit's rows pass when
    read back (an edited or corrupted line runs again; QA s44: a sweep's edited line was
    reused and gave a file ``show`` refused)."""
    from .errors import ResultError

    if not isinstance(result, dict) or result.get("outcome") not in _OUTCOMES:
        return False
    problems = result.get("problems")
    if not isinstance(problems, list) or not all(isinstance(p, str) for p in problems):
        return False
    if not all(isinstance(result.get(f"{eng}_status"), str) for eng in ENGINES):
        return False
    numbers_ = ["abs_diff", "rel_diff", "value_unit"] + [
        f"{eng}_{name}"
        for eng in ENGINES
        for name in ("value", "reported", "bound", "time_s", "nodes", "cost", "gap")
    ]
    if not all(
        result.get(name) is None
        or (isinstance(result[name], (int, float)) and not isinstance(result[name], bool))
        for name in numbers_
    ):
        return False
    # The row's identity (pool, budget, source) is not what is checked: any values do.
    row = AuditRow("", "", 0.0, 1, "", "", None, **_check_fields(result))
    try:
        row._check_consistent("$")
    except ResultError:
        return False
    return True


def _check_fields(result: Mapping[str, Any]) -> dict[str, Any]:
    """An :class:`AuditRow`'s fields from a journal's check, as :func:`audit_instance` wrote
    it (enum's status "not run" where a record has none)."""
    return {
        "outcome": result["outcome"],
        "abs_diff": result.get("abs_diff"),
        "rel_diff": result.get("rel_diff"),
        "problems": tuple(result.get("problems", ())),
        "value_unit": result.get("value_unit"),
        **{
            f"{eng}_{name}": result.get(f"{eng}_{name}")
            for eng in ENGINES
            for name in ("value", "reported", "bound", "gap", "time_s", "nodes")
        },
        **{
            f"{eng}_status": result.get(f"{eng}_status", NOT_RUN if eng == "enum" else "?")
            for eng in ENGINES
        },
    }


def _audit_worker(jobs: list[tuple], spec: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    from .analysis import compile_cached

    out = []
    with _portable_errors():
        for src, text, content_hash, tasks in jobs:
            pkg = _load_checked(src, text, content_hash)
            inst = compile_cached(pkg)
            for key, budget, method in tasks:
                pool = method.removeprefix("audit:")
                rec = audit_instance(inst.pool_instance(pool), budget, spec["time_limit"])
                out.append((key, rec))
    return out


@dataclass(frozen=True)
class AuditRow:
    """One check (instance hash, pool, budget) with both engines' answers."""

    instance_hash: str
    pool: str
    budget: float
    n_sources: int
    source: str
    package_id: str
    family: str | None
    outcome: str
    bnb_value: float | None
    milp_value: float | None
    abs_diff: float | None
    rel_diff: float | None
    bnb_time_s: float | None
    milp_time_s: float | None
    bnb_status: str
    milp_status: str
    bnb_nodes: int | None
    milp_nodes: int | None
    problems: tuple[str, ...]
    #: Each engine's proven upper bound on OPT (its value when optimal; None when it has none).
    #: CLI QA: a run stopped by a limit was reported without its bound and gap.
    bnb_bound: float | None = None
    milp_bound: float | None = None
    #: Each engine's relative gap, measured when it ran in the package's value unit (QA s41
    #: #1: measured here in units of 1, a bound 5.6% above an incumbent of 2e-12 read "gap
    #: 0.00%"). None: not measured (a record from before), :meth:`gap` computes it.
    bnb_gap: float | None = None
    milp_gap: float | None = None
    #: Enumeration, the third engine where at most :data:`ENUM_CROSS_MAX` stores fit
    #: (``enum_status`` :data:`NOT_RUN` elsewhere, and in records saved before it ran).
    enum_status: str = NOT_RUN
    enum_value: float | None = None
    enum_bound: float | None = None
    enum_gap: float | None = None
    enum_time_s: float | None = None
    enum_nodes: int | None = None
    #: The package's value unit at this budget (:func:`~memaudit_core.solvers.value_unit`),
    #: the scale agreement was judged in; None in records saved before it was kept.
    value_unit: float | None = None
    #: Each engine's value as it reported it (``*_value`` is its store's F, recomputed); None
    #: where it did not run, and in records saved before it was kept.
    bnb_reported: float | None = None
    milp_reported: float | None = None
    enum_reported: float | None = None
    #: The source's package seed and generator parameters (``meta``; QA s51 M2: an audit of
    #: ``scope_shift:0 --param n_scopes=3`` said ``scope_shift:0`` only); None for a package
    #: that records none, and in records saved before they were kept.
    seed: int | None = None
    params: str | None = None

    def report_gap(self) -> float | None:
        """The largest gap between an engine's reported value and its store's F that the
        audit counts as a finding (:func:`audit_instance`'s rule), or None without one.

        QA s49: such rows FAIL while the engines' stores agree, and the header's "max
        difference 0" (between the engines) was all a reader saw of the cause."""
        gaps = self._report_gaps()
        return max(gaps.values()) if gaps else None

    def _report_gaps(self) -> dict[str, float]:
        """Each engine's :func:`reported_off` gap, where it has one."""
        unit = self.value_unit if self.value_unit is not None else 1.0
        gaps = {}
        for eng in ENGINES:
            value, reported = getattr(self, f"{eng}_value"), getattr(self, f"{eng}_reported")
            if value is None or reported is None:
                continue
            gap = reported_off(value, reported, getattr(self, f"{eng}_status") == "optimal", unit)
            if gap is not None:
                gaps[eng] = gap
        return gaps

    def store_values(self) -> dict[str, float]:
        """Each engine's store F where its store is feasible (it ran and was not found
        infeasible): a store of this instance within this check's budget and pool."""
        return {
            eng: value
            for eng in ENGINES
            if getattr(self, f"{eng}_status") in ("optimal", *UNPROVEN_STATUSES)
            and (value := getattr(self, f"{eng}_value")) is not None
        }

    def agreed_optimum(self) -> tuple[str, float] | None:
        """The engine and optimum of an ``agree`` check (the largest of its engines' equal
        proven values), else None."""
        if self.outcome != "agree":
            return None
        proven = [
            (v, eng)
            for eng in ENGINES
            if getattr(self, f"{eng}_status") == "optimal"
            and (v := getattr(self, f"{eng}_value")) is not None
        ]
        if not proven:
            return None
        value, eng = max(proven)
        return eng, value

    def ran(self, engine: str) -> bool:
        """Whether ``engine`` ran on this check (not skipped, not left out)."""
        return getattr(self, f"{engine}_status") not in (NOT_RUN, ABSENT, "skipped", "?")

    def gap(self, engine: str) -> float | None:
        """``engine``'s relative gap (bound - value) / value, or None without both."""
        from .solvers import relative_gap

        value, bound = getattr(self, f"{engine}_value"), getattr(self, f"{engine}_bound")
        if value is None or bound is None:
            return None
        stored = getattr(self, f"{engine}_gap")
        return relative_gap(value, bound) if stored is None else stored

    def to_dict(self) -> dict[str, Any]:
        return {
            "instance_hash": self.instance_hash,
            "pool": self.pool,
            "budget": self.budget,
            "n_sources": self.n_sources,
            "source": self.source,
            "package_id": self.package_id,
            "family": self.family,
            "seed": self.seed,
            "params": self.params,
            "outcome": self.outcome,
            "bnb_value": self.bnb_value,
            "milp_value": self.milp_value,
            "bnb_bound": self.bnb_bound,
            "milp_bound": self.milp_bound,
            "bnb_gap": self.gap("bnb"),
            "milp_gap": self.gap("milp"),
            "abs_diff": self.abs_diff,
            "rel_diff": self.rel_diff,
            "bnb_time_s": self.bnb_time_s,
            "milp_time_s": self.milp_time_s,
            "bnb_status": self.bnb_status,
            "milp_status": self.milp_status,
            "bnb_nodes": self.bnb_nodes,
            "milp_nodes": self.milp_nodes,
            "enum_status": self.enum_status,
            "enum_value": self.enum_value,
            "enum_bound": self.enum_bound,
            "enum_gap": self.gap("enum"),
            "enum_time_s": self.enum_time_s,
            "enum_nodes": self.enum_nodes,
            "value_unit": self.value_unit,
            "bnb_reported": self.bnb_reported,
            "milp_reported": self.milp_reported,
            "enum_reported": self.enum_reported,
            "problems": "; ".join(self.problems),
            # One string above (a CSV cell); the list too, as a problem may contain "; ".
            "problem_list": list(self.problems),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], path: str = "$") -> AuditRow:
        """The inverse of :meth:`to_dict`; a located ``ResultError`` on bad input."""
        from .results import decode, field_value, from_fields, require_object

        data = require_object(data, path)
        if "problem_list" not in data:  # saved before the list: the joined string
            joined = decode(str, field_value(data, "problems", path), f"{path}.problems")
            data = {**data, "problem_list": joined.split("; ") if joined else []}
        # Saved before the bounds were kept: unknown, not an error.
        data = {"bnb_bound": None, "milp_bound": None, "bnb_gap": None, "milp_gap": None, **data}
        if "enum_status" not in data:
            # Saved before enumeration took part (QA s42 round 2: `show` said it was "left
            # out: too many stores" of checks with a handful of stores).
            data = {**data, "enum_status": ABSENT}
        row = from_fields(
            cls,
            data,
            path,
            keys={"problems": "problem_list"},
            # Saved before enumeration took part: it did not run.
            optional=[
                f.name
                for f in fields(cls)
                if f.name.startswith("enum_")
                or f.name in ("value_unit", "bnb_reported", "milp_reported", "seed", "params")
            ],
        )
        row._check_consistent(path)
        return row

    def _check_consistent(self, path: str) -> None:
        """Refuse a read-back check whose numbers contradict its outcome (certification QA
        s38: a row edited to a limited MILP run with a bound under its value still read
        "agree", and ``show`` printed PASS)."""
        from .errors import ResultError

        if self.outcome not in _OUTCOMES:
            raise ResultError(
                f"{path}.outcome", "allowed-value", f"one of {', '.join(_OUTCOMES)}", self.outcome
            )
        self._check_values(path)
        from .solvers import check_bound_and_gap

        # Relative to the values themselves: the package's value unit is not saved, and a
        # tolerance in units of 1 passed a bound 2.5% above a value of 2e-12 (QA s41 #2).
        for eng in ENGINES:
            value, bound = getattr(self, f"{eng}_value"), getattr(self, f"{eng}_bound")
            if value is None or bound is None:
                continue
            gap = getattr(self, f"{eng}_gap")
            check_bound_and_gap(f"{path}.{eng}_bound", f"{path}.{eng}_gap", value, bound, gap)
        # QA s50 #2: a reported value off its store's F makes the audit's check "disagree"
        # (audit_instance), so an agreeing or unproven row with one was edited.
        off = self._report_gaps()
        if off and self.outcome in ("agree", "unproven"):
            eng, gap = next(iter(off.items()))
            raise ResultError(
                f"{path}.outcome",
                "inconsistent",
                f"{self.outcome}, yet {eng} reported {getattr(self, f'{eng}_reported')!r} while "
                f"its store is worth {getattr(self, f'{eng}_value')!r} (off by {gap!r}): the "
                "audit counts a reported value its store does not have as a disagreement",
                self.outcome,
            )
        if self.outcome == "agree":
            self._check_agreement(path)
        # After the outcome: an edited engine value is named there, not as the difference.
        self._check_diffs(path)
        self._check_ran(path)

    def _check_values(self, path: str) -> None:
        """Refuse numbers no audit writes (QA s50 #3: a NaN or negative budget and F of -1
        read back as PASS): a budget, F, bound, time and node count are finite and >= 0 (F
        sums saturated non-negative weights), a reported value is finite."""
        from .errors import ResultError
        from .results import check_finite

        check_finite(f"{path}.budget", self.budget, "a budget is a finite number >= 0")
        unit = self.value_unit
        if unit is not None and not (math.isfinite(unit) and unit > 0):
            raise ResultError(f"{path}.value_unit", "allowed-value", "a finite number > 0", unit)
        for eng in ENGINES:
            for name in ("value", "bound", "time_s", "nodes"):
                number = getattr(self, f"{eng}_{name}")
                if number is not None:
                    check_finite(f"{path}.{eng}_{name}", number)
            reported = getattr(self, f"{eng}_reported")
            # Not >= 0: HiGHS's objective of an empty store may be -1e-16.
            if reported is not None and not math.isfinite(reported):
                raise ResultError(
                    f"{path}.{eng}_reported", "allowed-value", "a finite number", reported
                )

    def _check_ran(self, path: str) -> None:
        """Refuse engine numbers beside a status that says the engine did not run, and the
        reverse (QA s50 #3: an enum value beside enum_status "not run", and a MILP proof in
        a log1p audit, read back as PASS): an engine the check did not run has no numbers,
        one that ran has its store's F, time and node count, and the MILP does not run on a
        check whose problems say it cannot take the instance's saturation
        (:func:`milp_saturation_skipped`)."""
        from .errors import ResultError

        sat = milp_saturation_skipped(self.problems)
        if sat is not None and self.milp_status != "skipped":
            raise ResultError(
                f"{path}.milp_status",
                "inconsistent",
                f"the check's problems say the MILP was skipped, as it cannot take the "
                f"instance's saturation {sat!r} ({unsupported_saturation(sat)}): status "
                "'skipped'",
                self.milp_status,
            )
        for eng in ENGINES:
            status = getattr(self, f"{eng}_status")
            numbers = {
                name: getattr(self, f"{eng}_{name}")
                for name in ("value", "reported", "bound", "gap", "time_s", "nodes")
            }
            if status in (NOT_RUN, ABSENT, "skipped"):
                given = next((n for n, v in numbers.items() if v is not None), None)
                if given is not None:
                    raise ResultError(
                        f"{path}.{eng}_{given}",
                        "inconsistent",
                        f"{eng}_status is {status!r}: an engine the check did not run has no "
                        "numbers (null)",
                        numbers[given],
                    )
            elif status in ("optimal", "infeasible", *UNPROVEN_STATUSES):
                missing = next(
                    (n for n in ("value", "time_s", "nodes") if numbers[n] is None), None
                )
                if missing is not None:
                    raise ResultError(
                        f"{path}.{eng}_{missing}",
                        "inconsistent",
                        f"{eng}_status is {status!r}: an engine that ran has its store's F, "
                        "its time and its node count",
                        None,
                    )

    def _check_agreement(self, path: str) -> None:
        """Refuse ``agree`` unless at least two engines ran, proved their optima (zero gap)
        and found equal values."""
        from .errors import ResultError
        from .solvers import CERTIFIED_GAP_MAX, ZERO_VALUE, read_back_gap

        ran = [eng for eng in ENGINES if self.ran(eng)]
        optimal = [eng for eng in ran if getattr(self, f"{eng}_status") == "optimal"]
        # A third engine may have stopped at its limit beside two agreeing proofs.
        wrong = [
            f"{eng}_status is {getattr(self, f'{eng}_status')!r}"
            for eng in ran
            if getattr(self, f"{eng}_status") not in ("optimal", *UNPROVEN_STATUSES)
        ]
        if len(optimal) < 2:
            wrong.append(
                f"only {' and '.join(optimal) or 'no engine'} proved an optimum"
                if len(ran) >= 2
                else f"only {' '.join(ran) or 'no engine'} ran"
            )
        for eng in optimal:
            value, bound = getattr(self, f"{eng}_value"), getattr(self, f"{eng}_bound")
            gap = self.gap(eng)
            if value is not None and bound is not None and gap is not None:
                if not (
                    read_back_gap(value, bound) <= CERTIFIED_GAP_MAX and gap <= CERTIFIED_GAP_MAX
                ):
                    wrong.append(f"{eng}'s bound {bound!r} is above its F {value!r} (gap {gap!r})")
        values = [getattr(self, f"{eng}_value") for eng in optimal]
        if any(v is None for v in values):
            wrong.append("an engine that proved its optimum has no value")
        elif values:
            a, b = min(values), max(values)
            scale = max(abs(a), abs(b), self.value_unit or ZERO_VALUE)
            if not b - a <= AGREE_TOL * scale:
                wrong.append(f"the values {a!r} and {b!r} differ")
            for eng in ran:
                v = getattr(self, f"{eng}_value")
                if eng not in optimal and v is not None and v - b > AGREE_TOL * max(abs(b), 1):
                    wrong.append(f"{eng}'s limited store (F {v!r}) is above the optimum {b!r}")
        if wrong:
            raise ResultError(
                f"{path}.outcome",
                "inconsistent",
                "agree, yet "
                + ", ".join(wrong)
                + ": an agreeing check has at least two engines' proven optima (zero gap), "
                "equal",
                self.outcome,
            )

    def _check_diffs(self, path: str) -> None:
        """Refuse an ``abs_diff`` that is not the largest minus the smallest value of the
        engines that ran, and a ``rel_diff`` that is not finite, >= 0 and at most ``abs_diff``
        over the largest |value| (QA s42 #4: ``abs_diff`` 5.0 beside equal values, and a
        ``rel_diff`` of NaN, were read back and written again). ``rel_diff`` divides by the
        package's value unit where it is larger, which is not saved: only bounded here. Both
        are None where fewer than two engines gave a value."""
        from .errors import ResultError

        by_engine = {
            eng: v
            for eng in ENGINES
            if self.ran(eng) and (v := getattr(self, f"{eng}_value")) is not None
        }
        statuses = {eng: getattr(self, f"{eng}_status") for eng in by_engine}
        values = list(compared_values(by_engine, statuses).values())
        if len(values) < 2:
            for name in ("abs_diff", "rel_diff"):
                if getattr(self, name) is not None:
                    raise ResultError(
                        f"{path}.{name}",
                        "inconsistent",
                        "fewer than two engines gave a value, so there is no difference (null)",
                        getattr(self, name),
                    )
            return
        want, top = max(values) - min(values), max(abs(v) for v in values)
        # Before session 42's round 2 the difference was taken over every engine that ran, a
        # limited one's incumbent included: such files still read back (QA s42 round 3).
        ran = list(by_engine.values())
        before = max(ran) - min(ran)
        got = self.abs_diff
        # The values are saved exactly; 1e-9 of the largest only absorbs a rewrite's rounding.
        top_all = max(abs(v) for v in ran)
        if got is None or not (
            abs(got - want) <= AGREE_TOL * top or abs(got - before) <= AGREE_TOL * top_all
        ):  # NaN fails too
            raise ResultError(
                f"{path}.abs_diff",
                "inconsistent",
                "not the largest minus the smallest value of the engines that proved their "
                f"optimum (of every engine that ran, with fewer than two proofs): {want!r}",
                got,
            )
        rel = self.rel_diff
        most = max(want / top if top > 0 else 0.0, before / top_all if top_all > 0 else 0.0) * (
            1 + AGREE_TOL
        )
        if rel is None or not (math.isfinite(rel) and 0 <= rel <= most):
            raise ResultError(
                f"{path}.rel_diff",
                "inconsistent",
                f"abs_diff over the package's value unit or the largest |value|, whichever is "
                f"larger: a finite number from 0 to {most!r}",
                rel,
            )


@dataclass(frozen=True)
class FamilyCount:
    """Sources of one family (or ``files``) and how many distinct instances they hold."""

    family: str
    n_sources: int
    n_packages: int
    n_instances: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "family": self.family,
            "n_sources": self.n_sources,
            "n_packages": self.n_packages,
            "n_instances": self.n_instances,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], path: str = "$") -> FamilyCount:
        """The inverse of :meth:`to_dict`; a located ``ResultError`` on bad input."""
        from .results import from_fields

        return from_fields(cls, data, path)


@short_repr
@dataclass(frozen=True)
class AuditReport:
    """The audit's counts, agreement, differences and times.

    Attributes
    ----------
    n_sources, n_packages, n_instances : int
        Sources listed; distinct packages (content hash); distinct instances (instance hash).
    n_tasks : int
        Checks: distinct ``(instance hash, pool, budget)``; ``n_agree +
        n_disagree + n_unproven + n_skipped == n_tasks`` when complete.
    max_abs_diff, max_rel_diff : float or None
        Largest difference between the engines' recomputed values over the checks where both
        proved their optimum (``agree`` or ``disagree``); None when there is none.
    bnb_time_s, milp_time_s : tuple (total, mean, max)
    disagreements : tuple of AuditRow
        Every disagreement (also written to ``disagreements/`` when there is an output folder).
    """

    n_sources: int
    n_packages: int
    n_instances: int
    n_tasks: int
    pools: tuple[str, ...]
    budgets: tuple[float, ...]
    n_agree: int
    n_disagree: int
    n_unproven: int
    n_skipped: int
    max_abs_diff: float | None
    max_rel_diff: float | None
    bnb_time_s: tuple[float, float, float]
    milp_time_s: tuple[float, float, float]
    families: tuple[FamilyCount, ...]
    rows: tuple[AuditRow, ...]
    disagreements: tuple[AuditRow, ...]
    executed: int
    reused: int
    complete: bool
    elapsed_s: float
    backend: str
    out: str | None
    files: tuple[str, ...]
    notes: tuple[str, ...]
    #: Enumeration's times over the checks it ran on (zeros where it ran on none).
    enum_time_s: tuple[float, float, float] = (0.0, 0.0, 0.0)

    #: ``result_kind`` in ``to_dict()`` (:data:`memaudit_core.results.RESULT_KINDS`).
    RESULT_KIND: ClassVar[str] = "audit"

    @property
    def ok(self) -> bool:
        """Complete, no disagreement, and at least one check actually cross-checked."""
        return self.complete and self.n_disagree == 0 and self.n_agree > 0

    @property
    def verdict(self) -> str:
        """PASS, FAIL, INCOMPLETE, or NOTHING CHECKED (every check skipped or unproven)."""
        if not self.complete:
            return "INCOMPLETE"
        if self.n_disagree:
            return "FAIL"
        return "PASS" if self.n_agree else "NOTHING CHECKED"

    @property
    def max_report_gap(self) -> float | None:
        """The largest :meth:`AuditRow.report_gap` (an engine's reported value off its store's
        F), or None without one: a finding the engines' difference (:attr:`max_abs_diff`) does
        not show, as their stores may agree."""
        gaps = [g for r in self.rows or self.disagreements if (g := r.report_gap()) is not None]
        return max(gaps) if gaps else None

    @property
    def headline(self) -> str:
        """:attr:`verdict` as the CLI and report.md lead with it: a PASS with checks left
        unproven or skipped says so up front, ``PASS (1 unproven)`` (QA s41 #3: ``PASS: 5 of
        6 checks`` read as a clean pass; the exit code stays 0)."""
        verdict = self.verdict
        left = [
            f"{n} {what}"
            for n, what in ((self.n_unproven, "unproven"), (self.n_skipped, "skipped"))
            if n
        ]
        return f"{verdict} ({', '.join(left)})" if verdict == "PASS" and left else verdict

    def to_dict(self, rows: bool = True) -> dict[str, Any]:
        out = {
            "result_version": RESULT_VERSION,
            "result_kind": self.RESULT_KIND,
            "suite": "audit",
            "ok": self.ok,
            "n_sources": self.n_sources,
            "n_packages": self.n_packages,
            "n_instances": self.n_instances,
            "n_tasks": self.n_tasks,
            "pools": list(self.pools),
            "budgets": list(self.budgets),
            "n_agree": self.n_agree,
            "n_disagree": self.n_disagree,
            "n_unproven": self.n_unproven,
            "n_skipped": self.n_skipped,
            "max_abs_diff": self.max_abs_diff,
            "max_rel_diff": self.max_rel_diff,
            "bnb_time_s": dict(zip(("total", "mean", "max"), self.bnb_time_s, strict=True)),
            "milp_time_s": dict(zip(("total", "mean", "max"), self.milp_time_s, strict=True)),
            "enum_time_s": dict(zip(("total", "mean", "max"), self.enum_time_s, strict=True)),
            "families": [f.to_dict() for f in self.families],
            "disagreements": [d.to_dict() for d in self.disagreements],
            "executed": self.executed,
            "reused": self.reused,
            "complete": self.complete,
            # The text's verdict word(s), for a script that reads --json (s53: only ok and
            # complete, from which NOTHING CHECKED and INCOMPLETE had to be worked out).
            "verdict": self.verdict,
            "elapsed_s": self.elapsed_s,
            "backend": self.backend,
            "out": self.out,
            "files": list(self.files),
            "notes": list(self.notes),
        }
        if rows:
            out["rows"] = [r.to_dict() for r in self.rows]
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], path: str = "$") -> AuditReport:
        """The report whose :meth:`to_dict` (with its rows, as ``memaudit audit --json``
        writes it) is ``data`` (see :func:`memaudit_core.read_result`); a located
        ``ResultError`` on bad input."""
        from .errors import ResultError
        from .results import check_saved_flag, child, decode, from_fields

        report = from_fields(
            cls,
            data,
            path,
            kind=cls.RESULT_KIND,
            convert={
                "bnb_time_s": _times_from_dict,
                "milp_time_s": _times_from_dict,
                "enum_time_s": _times_from_dict,
            },
            optional=["enum_time_s"],  # saved before enumeration took part
        )
        # QA s42 #4: ``ok: false`` (or "abc", a list, null) was read back and written again as
        # the report's own True; it is what the counts give, not a second verdict.
        check_saved_flag(
            data,
            path,
            "ok",
            report.ok,
            "the report's counts (ok: complete, no disagreement, at least one agreeing check)",
        )
        report._check_grid(path)
        report._check_optima(path)
        if "rows" in data:
            # The verdict is read from the counts: they must be the rows' (QA s38).
            seen = {o: sum(1 for r in report.rows if r.outcome == o) for o in _OUTCOMES}
            for name, count in (
                ("n_agree", seen["agree"]),
                ("n_disagree", seen["disagree"] + seen["error"]),
                ("n_unproven", seen["unproven"]),
                ("n_skipped", seen["skipped"]),
            ):
                if getattr(report, name) != count:
                    raise ResultError(
                        f"{path}.{name}",
                        "inconsistent",
                        f"the rows hold {count} such check(s)",
                        getattr(report, name),
                    )
            # QA s47: max_abs_diff edited to 2.0 beside rows that all agree was shown as
            # "PASS ... max difference 2". The rows are saved exactly, so are their maxima.
            maxima = _max_diffs(report.rows)
            for name, want in zip(("max_abs_diff", "max_rel_diff"), maxima, strict=True):
                got = getattr(report, name)
                if got != want:  # NaN differs too
                    expected = "null: there is none" if want is None else repr(want)
                    raise ResultError(
                        f"{path}.{name}",
                        "inconsistent",
                        "not the largest of the rows' "
                        f"{name.removeprefix('max_')} over the checks where the engines proved "
                        f"their optima (expected {expected})",
                        got,
                    )
        report._check_tasks(path)
        # s53: as ``ok``, the saved verdict is the one the counts give (a file saved before
        # s53 has none). Checked last: an edited count is refused where it was edited.
        if "verdict" in data:
            got = decode(str, data["verdict"], child(path, "verdict"))
            if got != report.verdict:
                raise ResultError(
                    child(path, "verdict"),
                    "inconsistent",
                    "not the verdict the report's counts give (PASS, FAIL, INCOMPLETE or "
                    f"NOTHING CHECKED; expected {report.verdict!r})",
                    got,
                )
        return report

    def _check_grid(self, path: str) -> None:
        """Refuse pools and budgets no audit runs (QA s50 #3: a pool "bogus", and rows at a
        budget of NaN, -4 or one outside ``budgets``, read back as PASS): pools are
        :data:`POOLS`, budgets finite and >= 0, and each check (row or disagreement) is at
        one of the report's pools and budgets, once."""
        from .errors import ResultError
        from .results import check_choice, check_finite, check_row_budget

        for i, pool in enumerate(self.pools):
            check_choice(f"{path}.pools[{i}]", pool, POOLS)
        for i, budget in enumerate(self.budgets):
            check_finite(f"{path}.budgets[{i}]", budget, "a budget is a finite number >= 0")
        for name in ("rows", "disagreements"):
            seen: set[tuple[str, str, float]] = set()
            for k, row in enumerate(getattr(self, name)):
                at = f"{path}.{name}[{k}]"
                check_choice(f"{at}.pool", row.pool, self.pools)
                check_row_budget(at, row.budget, self.budgets, "audit")
                key = (row.instance_hash, row.pool, row.budget)
                if key in seen:
                    raise ResultError(
                        at,
                        "inconsistent",
                        f"a second {name[:-1]} for instance {row.instance_hash[:12]}, pool "
                        f"{row.pool}, budget {row.budget:.10g}: each check is counted once",
                    )
                seen.add(key)
            # The saturation is the instance's: a MILP skipped for it on one check ran on none
            # (a row edited to a MILP proof, its skip note deleted, still has its siblings').
            skipped_for = {}
            for k, row in enumerate(getattr(self, name)):
                sat = milp_saturation_skipped(row.problems)
                if sat is not None:
                    skipped_for.setdefault(row.instance_hash, (k, sat))
            for k, row in enumerate(getattr(self, name)):
                if row.instance_hash in skipped_for and row.milp_status != "skipped":
                    j, sat = skipped_for[row.instance_hash]
                    raise ResultError(
                        f"{path}.{name}[{k}].milp_status",
                        "inconsistent",
                        f"{name}[{j}] of the same instance says the MILP was skipped, as it "
                        f"cannot take the instance's saturation {sat!r} "
                        f"({unsupported_saturation(sat)}): it ran on none of its checks",
                        row.milp_status,
                    )

    def _check_optima(self, path: str) -> None:
        """Refuse agreed optima that another check of the same instance contradicts
        (:func:`~memaudit_core.results.check_optima_order`): a store an engine found at a
        budget, in a pool, fits every larger budget and every pool that holds that pool's
        candidates (:data:`POOL_WITHIN`), so it is worth at most the optimum proven there
        (s51: every engine's value, bound and reported value at one check moved by the same
        amount read back as PASS). A row keeps neither its stores' ids nor its package, so
        its F cannot be recomputed: a shift that keeps these orders (every check of an
        instance moved alike, or one check moved within them) is not seen here."""
        from .results import check_optima_order

        by_instance: dict[str, list[int]] = {}
        for k, row in enumerate(self.rows):
            by_instance.setdefault(row.instance_hash, []).append(k)
        for members in by_instance.values():
            for pool in dict.fromkeys(self.rows[k].pool for k in members):
                entries = []
                for k in members:
                    row = self.rows[k]
                    if row.pool not in POOL_WITHIN.get(pool, (pool,)):
                        continue
                    stores = {
                        f"rows[{k}]'s {eng} store (pool {row.pool})": value
                        for eng, value in row.store_values().items()
                    }
                    agreed = row.agreed_optimum() if row.pool == pool else None
                    at = None if agreed is None else f"{path}.rows[{k}].{agreed[0]}_value"
                    opt = None if agreed is None else agreed[1]
                    unit = row.value_unit if row.value_unit is not None else 1.0
                    entries.append((row.budget, stores, at, opt, unit))
                check_optima_order(entries)

    def _check_tasks(self, path: str) -> None:
        """Refuse a report whose counts do not fit ``n_tasks`` and ``complete`` (QA s50 #1: an
        INCOMPLETE audit edited to ``complete: true`` read "PASS: 10 of 40 checks", and
        ``n_tasks`` 400 beside 315 rows "PASS: 315 of 400"). Every check that ran is counted
        once (``n_agree`` ... ``n_skipped``, errors with the disagreements); a complete audit
        ran all ``n_tasks`` of them, an incomplete one fewer."""
        from .errors import ResultError

        counts = ("n_agree", "n_disagree", "n_unproven", "n_skipped", "n_tasks")
        for name in counts:
            if getattr(self, name) < 0:
                raise ResultError(
                    f"{path}.{name}",
                    "allowed-value",
                    "a count of checks, >= 0",
                    getattr(self, name),
                )
        done = sum(getattr(self, name) for name in counts[:-1])
        if done > self.n_tasks:
            raise ResultError(
                f"{path}.n_tasks",
                "inconsistent",
                f"fewer than the {done} checks counted (n_agree + n_disagree + n_unproven + "
                "n_skipped): n_tasks counts every check",
                self.n_tasks,
            )
        if self.complete != (done == self.n_tasks):
            raise ResultError(
                f"{path}.complete",
                "inconsistent",
                f"{done} of n_tasks {self.n_tasks} checks counted (n_agree + n_disagree + "
                "n_unproven + n_skipped): a complete audit ran every check, an incomplete one "
                f"fewer (expected {str(not self.complete).lower()})",
                self.complete,
            )


def _max_diffs(rows: Sequence[AuditRow]) -> tuple[float | None, float | None]:
    """The report's ``max_abs_diff`` and ``max_rel_diff``: the rows' largest, over the checks
    where the engines proved their optima (None where there is none)."""
    # Only where both engines proved their optimum: a time-limited incumbent's distance to the
    # other engine's optimum is not a difference between the engines (it read as "max
    # difference 1.63" next to PASS).
    proven = [r for r in rows if r.outcome in ("agree", "disagree")]
    diffs = [r.abs_diff for r in proven if r.abs_diff is not None]
    rdiffs = [r.rel_diff for r in proven if r.rel_diff is not None]
    return (max(diffs) if diffs else None, max(rdiffs) if rdiffs else None)


def _times_from_dict(value: Any, path: str) -> tuple[float, float, float]:
    """``{"total", "mean", "max"}`` (how :meth:`AuditReport.to_dict` writes engine times) as
    the model's (total, mean, max)."""
    from .results import decode, field_value, require_object

    times = require_object(value, path)
    return tuple(  # type: ignore[return-value]
        decode(float, field_value(times, key, path), f"{path}.{key}")
        for key in ("total", "mean", "max")
    )


def _times(values: Sequence[float | None]) -> tuple[float, float, float]:
    vals = [v for v in values if v is not None]
    if not vals:
        return (0.0, 0.0, 0.0)
    return (float(sum(vals)), float(sum(vals) / len(vals)), float(max(vals)))


def _check_pools(pools: Sequence[str]) -> tuple[str, ...]:
    # The names memaudit audit --help lists for --pools: one registry for both.
    from .analysis import AUDIT_POOL_NAMES

    out = []
    for p in check_names(pools, "pools"):
        if p not in AUDIT_POOL_NAMES:
            known = ", ".join(AUDIT_POOL_NAMES)
            raise UnknownNameError(f"unknown pool {cut_repr(p)} (known: {known})")
        out.append(AUDIT_POOL_NAMES[p])
    if not out:
        raise UsageError("no pools given")
    return tuple(dict.fromkeys(out))


def _budgets(budgets: Sequence[float] | None) -> tuple[float, ...] | None:
    if budgets is None:
        return None
    from .solvers import check_budget

    grid = tuple(sorted({check_budget(b) for b in check_budget_list(budgets, "audit()")}))
    if not grid:
        raise UsageError("audit(): no budgets given")
    return grid


def audit(
    paths: Sequence[str] = (),
    families: Sequence[str] = (),
    *,
    seeds: Sequence[int] | None = None,
    params: dict[str, str] | None = None,
    budgets: Sequence[float] | None = None,
    pools: Sequence[str] = ("full",),
    time_limit: float | None = None,
    out: str | Path | None = None,
    workers: int = 1,
    scheduler: Any = None,
    resume: bool = True,
    max_tasks: int | None = None,
    figures: bool = True,
    progress: Progress = None,
    sources: Sequence[PackageSource] | None = None,
    on_warnings: WarningsCallback = None,
) -> AuditReport:
    """Run ``bnb`` and ``milp`` on every distinct instance of a suite and compare.

    Parameters are those of :func:`memaudit_core.suites.sweep_suite` (sources, workers, Dask
    scheduler, output folder, resume, task limit, figures, ``on_warnings``) plus ``pools``
    (``full``, ``no_validity``, ``generic``) and ``time_limit`` per engine run. Without
    ``budgets`` each package's own budget grid is used.

    Examples
    --------
    >>> rep = audit(families=["update_chain:0-4"], budgets=[3, 6])  # one package: seed-invariant
    >>> rep.n_sources, rep.n_instances, rep.n_tasks, rep.n_agree, rep.n_disagree
    (1, 1, 2, 2, 0)
    """
    srcs = (
        tuple(sources) if sources is not None else collect_sources(paths, families, seeds, params)
    )
    pool_names = _check_pools(pools)
    grid = _budgets(budgets)
    _check_limits(time_limit, None)
    spec = {"time_limit": time_limit}
    config = {"time_limit": time_limit, "engines": list(ENGINES)}

    def plan(entry: IndexEntry) -> list[tuple[str, float, str]]:
        bs = grid if grid is not None else entry.budgets
        return [(entry.instance_hash, b, f"audit:{p}") for p in pool_names for b in bs]

    # The lock is held until the outputs are written: another run would rewrite them
    # (out_lock()).
    with ExitStack() as held:
        run = run_suite(
            "audit",
            srcs,
            plan,
            _audit_worker,
            spec,
            config,
            out=out,
            workers=workers,
            scheduler=scheduler,
            resume=resume,
            max_tasks=max_tasks,
            progress=progress,
            result_ok=_audit_result_ok,
            hold=held,
            on_warnings=on_warnings,
        )
        return _report(run, srcs, pool_names, grid, out, figures)


def _report(
    run: Any,
    srcs: Sequence[PackageSource],
    pool_names: tuple[str, ...],
    grid: tuple[float, ...] | None,
    out: str | Path | None,
    figures: bool,
) -> AuditReport:
    entries = run.entries
    share: dict[str, int] = {}
    for e in entries:
        share[e.instance_hash] = share.get(e.instance_hash, 0) + 1
    rows: list[AuditRow] = []
    for t in run.tasks:
        res = run.results.get(t.key)
        if res is None:
            continue
        e = entries[t.source_index]
        rows.append(
            AuditRow(
                instance_hash=e.instance_hash,
                pool=t.method.removeprefix("audit:"),
                budget=t.budget,
                n_sources=share[e.instance_hash],
                source=e.label,
                package_id=e.package_id,
                family=e.family,
                **_check_fields(res),
                seed=e.seed,
                params=e.params,
            )
        )
    count = {
        o: sum(1 for r in rows if r.outcome == o)
        for o in ("agree", "disagree", "unproven", "skipped", "error")
    }
    max_abs_diff, max_rel_diff = _max_diffs(rows)
    fams: dict[str, list[IndexEntry]] = {}
    for e in entries:
        fams.setdefault(e.family or "files", []).append(e)
    families = tuple(
        FamilyCount(
            name, len(es), len({e.content_hash for e in es}), len({e.instance_hash for e in es})
        )
        for name, es in fams.items()
    )
    disagreements = tuple(r for r in rows if r.outcome in ("disagree", "error"))
    notes: list[str] = []
    if run.discarded_lines:
        notes.append(discarded_note(run.discarded_lines))
    if not run.complete:
        notes.append(
            f"incomplete: {len(rows)} of {len(run.tasks)} checks run; rerun with the same "
            "--out to resume" + ("" if out is None else outputs_later_note(run))
        )
    skipped_why = sorted({p for r in rows for p in r.problems if "skipped" in p})
    notes.extend(skipped_why[:5])
    if rows:
        notes.append(engines_ran_note(rows))
    # As a sweep suite says it (QA s39 round 2: a file named twice was counted once silently).
    repeated = repeated_sources_note(srcs)
    if repeated:
        notes.append(repeated)
    notes.extend(family_seed_notes(srcs, "audited"))
    budgets_used = grid if grid is not None else tuple(sorted({t.budget for t in run.tasks}))
    report = AuditReport(
        n_sources=len(srcs),
        n_packages=len({e.content_hash for e in entries}),
        n_instances=len({e.instance_hash for e in entries}),
        n_tasks=len(run.tasks),
        pools=pool_names,
        budgets=budgets_used,
        n_agree=count["agree"],
        n_disagree=count["disagree"] + count["error"],
        n_unproven=count["unproven"],
        n_skipped=count["skipped"],
        max_abs_diff=max_abs_diff,
        max_rel_diff=max_rel_diff,
        bnb_time_s=_times([r.bnb_time_s for r in rows]),
        milp_time_s=_times([r.milp_time_s for r in rows]),
        enum_time_s=_times([r.enum_time_s for r in rows]),
        families=families,
        rows=tuple(rows),
        disagreements=disagreements,
        executed=run.executed,
        reused=run.reused,
        complete=run.complete,
        elapsed_s=run.elapsed_s,
        backend=run.backend,
        out=None if out is None else str(out),
        files=(),
        notes=tuple(notes),
    )
    if out is not None and run.complete:
        try:
            files, more = write_audit_outputs(report, run, srcs, Path(out), figures=figures)
        except KeyboardInterrupt as exc:  # while writing: every check is saved
            _attach_saved(exc, run.n_done, len(run.tasks), Path(out) / JOURNAL)
            raise
        report = replace(report, files=tuple(files), notes=report.notes + tuple(more))
    return report


def save_disagreement(package: Package, row: AuditRow, folder: Path) -> list[str]:
    """Write the package (budget set to the instance's) and a record of both answers."""
    import json

    from .package import dumps_package

    stem = f"{row.instance_hash[:12]}-{row.pool}-B{row.budget:.10g}"
    pkg_path = folder / f"{stem}.package.json"
    rec_path = folder / f"{stem}.json"
    rec = row.to_dict()
    rec["reproduce"] = (
        f"memaudit solve {pkg_path.name} --pool {row.pool} --solver bnb ; "
        f"memaudit solve {pkg_path.name} --pool {row.pool} --solver milp"
        + (
            f" ; memaudit solve {pkg_path.name} --pool {row.pool} --solver enum"
            if row.ran("enum")
            else ""
        )
    )
    path = folder
    try:
        folder.mkdir(parents=True, exist_ok=True)
        path = pkg_path
        pkg_path.write_text(dumps_package(replace(package, budget=row.budget)), encoding="utf-8")
        path = rec_path
        rec_path.write_text(json.dumps(rec, indent=2) + "\n", encoding="utf-8")
    except OSError as exc:
        raise MemAuditError(f"cannot write {path}: {exc.strerror or exc}") from None
    return [str(pkg_path), str(rec_path)]


def _other_times(row: AuditRow) -> list[tuple[str, float]]:
    """The engines whose times a check is plotted against bnb's, with those times: the MILP
    and enumeration, each where it ran; none without bnb's time."""
    if not row.bnb_time_s:
        return []
    return [(eng, t) for eng in ("milp", "enum") if (t := getattr(row, f"{eng}_time_s"))]


def audit_figure(report: AuditReport) -> Any:
    """bnb's time against the MILP's and enumeration's, each where it ran, per check, coloured
    by outcome; the title counts the checks plotted (QA s42 round 2: "636 checks" over 612
    points, log1p checks left out silently, and an empty chart). QA s50: enumeration ran on
    every check of a cap1 audit but only bnb against the MILP was drawn."""
    import plotly.graph_objects as go

    from .palette import log_axis

    pts = [(r, eng, t) for r in report.rows for eng, t in _other_times(r)]
    n_plotted = sum(1 for r in report.rows if _other_times(r))
    against = sorted({eng for _, eng, _ in pts}, key=ENGINES.index)
    fig = go.Figure()
    for outcome, color in (
        ("agree", "#3a9d5d"),
        ("unproven", "#e07b39"),
        ("disagree", "#c43c39"),
        ("error", "#c43c39"),
    ):
        for eng, symbol in (("milp", "circle"), ("enum", "diamond")):
            sel = [(r, t) for r, e, t in pts if r.outcome == outcome and e == eng]
            if not sel:
                continue
            fig.add_scatter(
                x=[r.bnb_time_s * 1000 for r, _ in sel],
                y=[t * 1000 for _, t in sel],
                mode="markers",
                name=f"{outcome} ({len(sel)})" + ("" if len(against) == 1 else f", bnb vs {eng}"),
                marker={"color": color, "size": 7, "symbol": symbol},
                text=[f"{r.source} {r.pool} B={r.budget:.10g}" for r, _ in sel],
            )
    times = [ms for r, _, t in pts for ms in (r.bnb_time_s * 1000, t * 1000)]
    if pts:
        fig.add_scatter(
            x=[min(times), max(times)],
            y=[min(times), max(times)],
            mode="lines",
            name="equal time",
            line={"dash": "dash", "color": "#888"},
        )
    else:
        fig.add_annotation(
            text="No check has bnb's time and another engine's to plot "
            "(every check skipped, or stopped before a second engine ran)",
            xref="paper",
            yref="paper",
            x=0.5,
            y=0.5,
            showarrow=False,
        )
    # One range on both axes, so "equal time" is the diagonal; plain-number labels (plotly's
    # minor log labels read "3 4 5 … 9 1 2", a "3" left of "1" meaning 0.3 ms; QA s50).
    axis = log_axis(times)
    fig.update_xaxes(title_text="bnb time (ms)", **axis)
    fig.update_yaxes(title_text=" or ".join(against or ["milp"]) + " time (ms)", **axis)
    shown = (
        f"{n_plotted} checks"
        if n_plotted == report.n_tasks
        else f"{n_plotted} of {report.n_tasks} checks plotted"
    )
    fig.update_layout(title=f"Solve time per check ({shown})", template="plotly_white")
    return fig


def write_audit_outputs(
    report: AuditReport,
    run: Any,
    srcs: Sequence[PackageSource],
    out: Path,
    *,
    figures: bool = True,
) -> tuple[list[str], list[str]]:
    """instances / sources tables (CSV + Parquet), disagreement files, report.md, figure."""
    from .solvers.milp import SUPPORTED_SATURATIONS

    out.mkdir(parents=True, exist_ok=True)
    files = write_table(
        [r.to_dict() for r in report.rows], out / "instances", list(AuditRow.__dataclass_fields__)
    )
    files += write_table(
        [
            e.to_dict()
            | {"budgets": ",".join(f"{b:.10g}" for b in e.budgets), "stores": ",".join(e.stores)}
            for e in run.entries
        ],
        out / "sources",
        # The notes and warnings are not columns (to_dict leaves them out).
        [f for f in IndexEntry.__dataclass_fields__ if f not in ("grid_notes", "warnings")],
    )
    by_hash = {e.instance_hash: i for i, e in enumerate(run.entries)}
    for row in report.disagreements:
        i = by_hash[row.instance_hash]
        pkg = srcs[i].load()
        files += save_disagreement(pkg, row, out / "disagreements")
    notes, fig_line, written = (
        report_figure(
            figures, lambda: audit_figure(report), out, "solve_times", "Solve time per check"
        )
        if report.rows or not figures
        else ([], "", [])
    )
    files += written
    remove_stale_figures(out, "audit", written)
    fam_table = _md_table(
        ["family / files", "sources", "distinct packages", "distinct instances"],
        [
            [f.family, str(f.n_sources), str(f.n_packages), str(f.n_instances)]
            for f in report.families
        ],
    )
    dis = (
        "\n".join(
            f"- {r.source} ({r.instance_hash[:12]}), pool {r.pool}, budget {r.budget:.10g}: "
            f"{engine_values(r)} — "
            f"{'; '.join(r.problems) or 'values differ'}"
            for r in report.disagreements
        )
        or "None."
    )
    text = (
        "# MemAudit certification audit\n\n"
        f"**{report.headline}** — "
        f"{report.n_agree} of {report.n_tasks} checks (instance x pool x budget) agree, "
        f"{report.n_disagree} disagree, {report.n_unproven} unproven (limits, HiGHS proofs "
        "not counted), "
        f"{report.n_skipped} skipped.\n\n"
        f"- sources listed: {report.n_sources}; distinct packages (content hash): "
        f"{report.n_packages}; distinct instances (instance hash): {report.n_instances}\n"
        f"- checks = instance x pool ({', '.join(report.pools)}) x budget "
        f"({', '.join(f'{b:.10g}' for b in report.budgets)}): {report.n_tasks}\n"
        f"- largest difference between the engines: {_g(report.max_abs_diff)} absolute, "
        f"{_g(report.max_rel_diff)} relative (tolerance {AGREE_TOL:g} relative)\n"
        + (
            ""
            if (gap := report.max_report_gap) is None
            else f"- largest gap between an engine's reported value and its store's F: "
            f"{_g(gap)} (a disagreement even where the engines' stores agree)\n"
        )
        + "".join(f"- {line}\n" for line in engine_time_lines(report))
        + f"- ran on: {report.backend}; wall time {report.elapsed_s:.2f} s; {report.executed} "
        f"check(s) run now, {report.reused} reused from the journal\n\n"
        "An instance is identified by its instance hash, which leaves out names, texts and meta, "
        "so seed-invariant families count once and identical instances across seeds are solved "
        "once; a check is one instance at one pool and budget. bnb runs on every check, milp on "
        f"those whose saturation it takes ({', '.join(SUPPORTED_SATURATIONS)}), enum where at "
        f"most {ENUM_CROSS_MAX:,} stores fit the budget; each engine is run "
        "directly and F is recomputed on each store.\n\n"
        f"{fam_table}\n\n## Disagreements\n\n{dis}\n\n"
        f"## Unproven checks ({UNPROVEN_WHY})\n\n{unproven_lines(report) or 'None.'}"
        f"\n\n{fig_line}"
        + "".join(f"\n> Note: {n}\n" for n in [*report.notes, *notes])
        + "\nFiles: instances.csv / instances.parquet (one row per check), "
        "sources.csv / sources.parquet (each source's hashes), disagreements/ (package + "
        "budget for each disagreement), journal.jsonl (resume).\n"
    )
    write_report(out / "report.md", text)
    files.append(str(out / "report.md"))
    return files, notes


#: Why a check is unproven, as the CLI and report.md head their list.
UNPROVEN_WHY = "a limit stopped an engine, or HiGHS's proof was not counted"


def unproven_lines(report: AuditReport, limit: int | None = None) -> str:
    """One line per unproven check: each engine's status, incumbent (its optimum where it
    proved one), bound and gap, and why a proof was not counted."""
    rows = [r for r in report.rows if r.outcome == "unproven"]
    shown = rows if limit is None else rows[:limit]
    lines = []
    for r in shown:
        parts = []
        for eng in ENGINES:
            if not r.ran(eng):
                continue
            gap = r.gap(eng)
            status = getattr(r, f"{eng}_status")
            # QA s50: "bnb optimal incumbent 102.388" called a proven optimum an incumbent.
            what = "optimum" if status == "optimal" else "incumbent"
            parts.append(
                f"{eng} {status} {what} {_g6(getattr(r, f'{eng}_value'))} "
                f"bound {_g6(getattr(r, f'{eng}_bound'))} gap " + gap_percent(gap)
            )
        why = "".join(f" ({p})" for p in r.problems if "not counted" in p)
        lines.append(
            f"- {r.source}, pool {r.pool}, budget {r.budget:.10g}: {'; '.join(parts)}{why}"
        )
    if len(rows) > len(shown):
        lines.append(f"- ... {len(rows) - len(shown)} more (every row: --json, instances.csv)")
    return "\n".join(lines)


def engine_values(row: AuditRow) -> str:
    """The values of the engines that ran on a check, ``bnb 1.5 vs milp 1.5 vs enum 1.5``."""
    return (
        " vs ".join(f"{eng} {getattr(row, f'{eng}_value')!r}" for eng in ENGINES if row.ran(eng))
        or "no engine ran"
    )


def engine_time_lines(report: AuditReport) -> list[str]:
    """One line per engine: its total, mean and max time over the checks it ran on, or that
    it did not run (CLI QA: "milp 0.000 s total" where the MILP took no log1p instance)."""
    lines = []
    for eng in ENGINES:
        t = getattr(report, f"{eng}_time_s")
        n = sum(1 for r in report.rows if getattr(r, f"{eng}_time_s") is not None)
        if eng == "enum" and report.rows and all(r.enum_status == ABSENT for r in report.rows):
            lines.append("enum not part of this audit (saved before enumeration took part)")
        elif n or not report.rows:
            lines.append(
                f"{eng} time: total {t[0]:.3f} s, mean {t[1] * 1000:.2f} ms, max "
                f"{t[2] * 1000:.2f} ms ({n} check(s))"
            )
        else:
            why = "left out: too many stores to enumerate" if eng == "enum" else "skipped"
            lines.append(f"{eng} did not run ({why} on every check)")
    return lines


def engines_ran_note(rows: Sequence[AuditRow]) -> str:
    """Which engines ran on how many of ``rows``, as counted, not as planned: QA s47 (after
    milp stopped taking log1p checks) "bnb and milp are tried on every check" stood under
    "milp skipped" on a log1p package.

    The engines go by their display names with their ids
    (:func:`~memaudit_core.curves.engine_name`): the app shows this note beside
    "branch-and-bound" and "HiGHS MILP" (speaker QA s49: "bnb and milp" there), the CLI beside
    ``--solver bnb``.

    >>> row = {f: None for f in AuditRow.__dataclass_fields__} | {"problems": ()}
    >>> ran = AuditRow(**row | {"bnb_status": "optimal", "milp_status": "optimal",
    ...                         "enum_status": "optimal"})
    >>> log1p = replace(ran, milp_status="skipped", enum_status=NOT_RUN)
    >>> engines_ran_note([ran, ran])  # doctest: +NORMALIZE_WHITESPACE
    'enumeration (enum) ran on 2 of 2 check(s), those where at most 100,000 stores fit the
    budget; branch-and-bound (bnb) and HiGHS MILP (milp) ran on every check'
    >>> engines_ran_note([ran, log1p])  # doctest: +NORMALIZE_WHITESPACE
    'enumeration (enum) ran on 1 of 2 check(s), those where at most 100,000 stores fit the
    budget; branch-and-bound (bnb) ran on every check; HiGHS MILP (milp) on 1 of 2 (it takes
    saturations cap1, linear only)'
    """
    from .curves import engine_name
    from .solvers.milp import SUPPORTED_SATURATIONS

    n = len(rows)
    ran = {eng: sum(1 for r in rows if r.ran(eng)) for eng in ENGINES}
    head = (
        f"{engine_name('enum', with_id=True)} ran on {ran['enum']} of {n} check(s), those "
        f"where at most {ENUM_CROSS_MAX:,} stores fit the budget"
    )
    every = [eng for eng in ALWAYS if ran[eng] == n]
    parts = (
        [f"{' and '.join(engine_name(e, with_id=True) for e in every)} ran on every check"]
        if every
        else []
    )
    for eng in ALWAYS:
        if eng in every:
            continue
        part = (
            f"{engine_name(eng, with_id=True)} on "
            f"{'none' if not ran[eng] else f'{ran[eng]} of {n}'}"
        )
        skipped = any(getattr(r, f"{eng}_status") == "skipped" for r in rows)
        if eng == "milp" and skipped:
            # The one engine an instance's saturation can rule out (its own skip note names it).
            part += f" (it takes saturations {', '.join(SUPPORTED_SATURATIONS)} only)"
        parts.append(part)
    return "; ".join([head, *parts])


def _g6(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.6g}"


def _g(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3g}"


def audit_summary_for_package(
    package: Package,
    budgets: Sequence[float] | None = None,
    pools: Sequence[str] = ("full",),
    *,
    time_limit: float | None = None,
    progress: Progress = None,
) -> AuditReport:
    """The audit of one package in this process (for the Certification page).

    Budgets default to the package's grid. Same counts and rows as :func:`audit` (one source,
    so one package and one instance, checked at each pool and budget); nothing is written.

    Examples
    --------
    >>> from memaudit_core.generators import generate
    >>> rep = audit_summary_for_package(generate("temporal_interval"), [3, 6, 13])
    >>> rep.n_tasks, rep.n_agree, rep.max_abs_diff < 1e-9
    (3, 3, True)
    """
    from .analysis import compile_cached
    from .suites import SuiteRun, TaskSpec, _index_one

    t0 = time.perf_counter()
    pool_names = _check_pools(pools)
    _check_limits(time_limit, None)
    src = PackageSource("file", f"<{package.id}>")
    entry = replace(_index_one(_Given(package), None), source=src.key, label=package.id)
    # The index's grid, each budget once: the package's own repeated 3 ran twice (QA s45).
    grid = _budgets(budgets) or entry.budgets
    inst = compile_cached(package)
    tasks, results = [], {}
    total = len(pool_names) * len(grid)
    for p in pool_names:
        pool_inst = inst.pool_instance(p)
        for b in grid:
            key = task_key(entry.instance_hash, b, f"audit:{p}")
            tasks.append(TaskSpec(key, 0, b, f"audit:{p}"))
            results[key] = audit_instance(pool_inst, b, time_limit)
            if progress is not None:
                progress(len(tasks), total)
    run = SuiteRun(
        (entry,),
        tuple(tasks),
        results,
        len(tasks),
        0,
        True,
        time.perf_counter() - t0,
        "1 process (in-app)",
        0,
    )
    return _report(run, (src,), pool_names, grid, None, False)


class _Given:
    """A stand-in source that returns a package already in memory."""

    def __init__(self, package: Package):
        self.package = package
        self.key = f"<{package.id}>"
        self.label = self.full_label = package.id

    def load(self, text: str | None = None) -> Package:
        return self.package


__all__ = [
    "AGREE_TOL",
    "AuditReport",
    "AuditRow",
    "ENGINES",
    "FamilyCount",
    "POOLS",
    "audit",
    "audit_instance",
    "audit_summary_for_package",
    "instance_hash",
    "save_disagreement",
]
