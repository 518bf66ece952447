"""Exact solvers behind one entry point, :func:`solve`, and the solver registry.

:func:`solve_budgets` answers many budgets of one instance, reusing work across them.

Every engine (``bnb``, ``milp``, ``enum``, ``brute``) is a function
``engine(inst, budget, *, time_limit, node_limit, incumbent_idx) -> RawSolution`` registered in
:data:`ENGINES`. :func:`solve` runs the chosen engine (``auto`` picks by size), re-evaluates F on
the returned selection, optionally cross-checks with a second exact engine, and attaches a
:class:`~memaudit_core.solvers.certify.Certificate`. Only a proven result is certified; a
disagreement between exact engines raises :class:`~memaudit_core.errors.SolverDisagreementError`.
"""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, ClassVar

import numpy as np

from .. import heartbeat
from ..compiled import CompiledInstance
from ..errors import (
    MemAuditError,
    UnknownNameError,
    UsageError,
    check_budget_list,
    check_type,
    cut_repr,
)
from ..objective import evaluate, value_ceiling
from ..shortrepr import brief, count, num, short_repr
from ..specs import SOLVER_CHOICES  # the solver names, kept where the CLI reads them cheaply
from ..versions import RESULT_VERSION

#: A value at or below this is 0 for relative gaps (:func:`relative_gap` divides by at least it).
ZERO_VALUE = 1e-12
#: OPT at or below this is 0 and a ratio over it undefined. F is a sum of non-negative terms,
#: exactly 0.0 only when nothing is covered, so no floor is needed; a floor of 1e-12 called
#: a package in units of 1e-13 "OPT = 0" (QA).
ZERO_OPT = 0.0


@dataclass(frozen=True)
class RawSolution:
    """What an engine returns before certification.

    ``status`` is ``"optimal"`` only when the engine *proved* optimality; otherwise ``"limit"``
    (a node / time limit stopped it) with ``bound`` a proven upper bound on OPT.
    """

    selected_idx: tuple[int, ...]
    value: float
    bound: float
    status: str
    nodes: int = 0
    detail: dict[str, Any] = field(default_factory=dict)


Engine = Callable[..., RawSolution]


@short_repr
@dataclass(frozen=True)
class SolveResult:
    """A frozen, versioned solve result (``to_dict()`` gives plain JSON).

    Examples
    --------
    >>> from memaudit_core import compile_package, generate, read_result, solve
    >>> opt = solve(compile_package(generate("update_chain")), 6)
    >>> opt.label, round(opt.value, 3), opt.cost, opt.selected
    ('OPT', 7.735, 5.0, ('update_1_tombstone', 'update_2_tombstone', 'update_3_compound_update'))
    >>> opt.certificate.proof
    'exhaustive enumeration; cross-checked by bnb'
    >>> read_result(opt.to_dict()) == opt  # saved as JSON, read back
    True
    """

    value: float
    selected: tuple[str, ...]
    selected_idx: tuple[int, ...]
    cost: float
    budget: float
    status: str
    bound: float
    gap: float
    solver: str
    time_s: float
    nodes: int
    pool: str
    saturation: str
    package_id: str
    content_hash: str
    certificate: Any  # Certificate (kept loose to avoid an import cycle)
    result_version: int = RESULT_VERSION

    #: ``result_kind`` in ``to_dict()`` (:data:`memaudit_core.results.RESULT_KINDS`).
    RESULT_KIND: ClassVar[str] = "solve"

    def _repr_summary(self) -> str:
        # QA s40 (defect 2): the numbers a reader looks for, not every row (the generated
        # repr was 6.5 KB for 500 experiences); shortrepr.short_repr caps the line.
        return (
            f"{self.label} F={num(self.value)} at budget {num(self.budget)}: cost "
            f"{num(self.cost)}, {count(len(self.selected), 'candidate')}, status "
            f"{brief(self.status)}, bound {num(self.bound)}, gap {num(self.gap)}, solver "
            f"{brief(self.solver)}, package {brief(self.package_id)}"
        )

    @property
    def certified(self) -> bool:
        return bool(self.certificate is not None and self.certificate.certified)

    @property
    def is_optimal(self) -> bool:
        return self.status == "optimal"

    @property
    def label(self) -> str:
        """'OPT' only when certified; otherwise say what the number is."""
        if self.certified:
            return "OPT"
        if self.status == "optimal":
            return "optimal (uncertified)"
        return "incumbent"

    @property
    def budget_note(self) -> str | None:
        """Says when the store costs more than its budget by more than float rounding, inside
        the budget tolerance (:func:`~memaudit_core.compiled.budget_excess_note`); None
        otherwise. Derived from ``cost``, ``budget`` and ``selected``, so a saved result
        reads back with the same note (QA s42 #1: "cost 1000000000.5" at B = 1e9 went unsaid).
        """
        from ..compiled import budget_excess_note

        return budget_excess_note(self.cost, self.budget, len(self.selected_idx))

    @property
    def saturation_note(self) -> str | None:
        """Says that OPT is proven on the assumption that a registered (not built-in)
        saturation's h is concave and nondecreasing, which MemAudit checked at sample points
        only (:func:`~memaudit_core.saturations.assumed_saturation_note`); None otherwise.
        Derived from ``saturation``, so a saved result reads back with the same note."""
        from ..saturations import assumed_saturation_note

        return assumed_saturation_note(self.saturation)

    @property
    def notes(self) -> tuple[str, ...]:
        """What a reader of the value must know besides its label: :attr:`budget_note` and
        :attr:`saturation_note`, those that apply."""
        return tuple(n for n in (self.budget_note, self.saturation_note) if n)

    def to_dict(self) -> dict[str, Any]:
        out = {
            "result_version": self.result_version,
            "result_kind": self.RESULT_KIND,
            "package_id": self.package_id,
            "content_hash": self.content_hash,
            "pool": self.pool,
            "saturation": self.saturation,
            "budget": self.budget,
            "value": self.value,
            "selected": list(self.selected),
            "selected_idx": list(self.selected_idx),
            "cost": self.cost,
            "status": self.status,
            "certified": self.certified,
            "label": self.label,
            "bound": self.bound,
            "gap": self.gap,
            "solver": self.solver,
            "time_s": self.time_s,
            "nodes": self.nodes,
            # Derived, like "label": read back from cost, budget and selected.
            "budget_note": self.budget_note,
            "saturation_note": self.saturation_note,
        }
        out["certificate"] = self.certificate.to_dict() if self.certificate is not None else None
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], path: str = "$") -> SolveResult:
        """The result whose :meth:`to_dict` is ``data`` (see :func:`memaudit_core.read_result`);
        a :class:`~memaudit_core.errors.ResultError` at ``path`` when ``data`` is not one."""
        from ..compiled import POOLS, UNION_POOL_PREFIX
        from ..errors import ResultError
        from ..results import (
            check_choice,
            check_copy,
            check_saved_flag,
            child,
            decode,
            from_fields,
        )
        from ..saturations import SATURATIONS
        from .certify import Certificate

        res = from_fields(
            cls,
            data,
            path,
            kind=cls.RESULT_KIND,
            types_={"certificate": Certificate | None},
            # The engine that ran (``auto`` is resolved before a solve), by the registry.
            choices={"solver": ENGINES},
        )
        if res.saturation not in SATURATIONS:
            from ..plugins import SATURATION_ROUTE

            raise ResultError(
                f"{path}.saturation",
                "allowed-value",
                f"not one of {', '.join(SATURATIONS)}; {SATURATION_ROUTE}",
                res.saturation,
            )
        if not res.pool.startswith(UNION_POOL_PREFIX) or res.pool == UNION_POOL_PREFIX:
            # A named pool, or a union package's (the prefix and the external store's id).
            check_choice(f"{path}.pool", res.pool, (*POOLS, f"{UNION_POOL_PREFIX}STORE"))
        res._check_consistent(path)
        # QA s43: a certified result edited to "incumbent" was turned back into OPT unsaid.
        check_saved_flag(data, path, "certified", res.certified, "its certificate")
        # QA s50 #7: an edited budget_note was rebuilt unsaid; like the label, the notes are
        # derived (from cost, budget and selected; from saturation), and a file without them
        # reads.
        for name, source in (
            ("budget_note", "the note its cost, budget and selection give"),
            ("saturation_note", "the note its saturation gives"),
        ):
            if name in data:
                check_copy(child(path, name), data[name], getattr(res, name), source, str | None)
        if "label" in data:
            at = child(path, "label")
            if decode(str, data["label"], at) != res.label:
                raise ResultError(
                    at,
                    "inconsistent",
                    f"does not match its certificate and status (expected {res.label!r})",
                    data["label"],
                )
        return res

    def _check_consistent(self, path: str) -> None:
        """Refuse a read-back result whose numbers contradict its label.

        A saved limited run edited to ``certified: true`` was shown as "OPT ... proven
        optimal" with its status still ``limit`` and a 4.9% gap (CLI QA).
        """
        from ..errors import ResultError
        from ..results import check_finite

        for name, value in (("value", self.value), ("budget", self.budget), ("cost", self.cost)):
            if not (math.isfinite(value) and value >= 0):
                raise ResultError(
                    f"{path}.{name}", "allowed-value", "a finite number >= 0 is expected", value
                )
        # QA s47: a time of "NaN" was read back and written out again; a run takes >= 0 s.
        check_finite(f"{path}.time_s", self.time_s)
        if not (self.gap >= 0 and self.nodes >= 0):  # NaN fails too
            name, value = ("gap", self.gap) if not self.gap >= 0 else ("nodes", self.nodes)
            raise ResultError(f"{path}.{name}", "allowed-value", "a number >= 0 is expected", value)
        # Library QA: a cost of 1e9 at budget 6, a bound under F and ids that do not match
        # their positions were read back as they were, some labelled OPT.
        if self.cost > self.budget + 1e-9 * max(1.0, self.budget):
            raise ResultError(
                f"{path}.cost",
                "inconsistent",
                f"the store costs more than the budget {self.budget:.10g}; every solve "
                "returns a store that fits",
                self.cost,
            )
        if self.bound < self.value - 1e-9 * max(1.0, self.value):
            raise ResultError(
                f"{path}.bound",
                "inconsistent",
                f"the bound is below F = {self.value:.10g}; a bound is at least every store's F",
                self.bound,
            )
        if len(self.selected) != len(self.selected_idx) or len(set(self.selected)) != len(
            self.selected
        ):
            raise ResultError(
                f"{path}.selected_idx",
                "inconsistent",
                f"{len(self.selected)} ids selected ({len(set(self.selected))} distinct) "
                f"beside {len(self.selected_idx)} positions; each selected candidate has one",
            )
        # Library QA s49: positions [0, 0, 2] beside three distinct ids were read back. Which
        # candidate a position is needs the package (a result file alone cannot tie them), but
        # positions are distinct counts from 0 whatever the package.
        seen: dict[int, int] = {}
        for i, pos in enumerate(self.selected_idx):
            at = f"{path}.selected_idx[{i}]"
            if pos < 0:
                raise ResultError(at, "allowed-value", "a candidate's position, >= 0", pos)
            if pos in seen:
                raise ResultError(
                    at,
                    "inconsistent",
                    f"position {pos} is selected_idx[{seen[pos]}] too: a store holds each "
                    "candidate once",
                    pos,
                )
            seen[pos] = i
        self._check_status(path)
        if not self.certified:
            self._check_primary(path)
            # Last: an edited value or bound is named by the checks above, not as the gap.
            self._check_gaps(path)
            self._check_certificate_summary(path)
            return
        wrong = []
        if self.status != "optimal":
            wrong.append(f"its status is {self.status!r}")
        if not self.gap <= CERTIFIED_GAP_MAX:
            wrong.append(f"its gap is {self.gap!r}")
        recomputed = self.certificate.recomputed_value
        if not abs(recomputed - self.value) <= CERTIFIED_GAP_MAX * max(1.0, abs(self.value)):
            wrong.append(f"its recomputed F is {recomputed!r}")
        if wrong:
            raise ResultError(
                f"{path}.certificate.certified",
                "inconsistent",
                "certified, yet "
                + ", ".join(wrong)
                + ": a certified optimum has status 'optimal', zero gap and a recomputed F "
                "equal to its value",
                True,
            )
        self._check_certificate_checks(path)
        self._check_certificate_record(path)
        self._check_gaps(path)
        self._check_certificate_summary(path)

    def _check_certificate_record(self, path: str) -> None:
        """Refuse a certified result whose certificate records what certification never
        certifies (QA s43: ``agreement: false``, an infeasible check, a reason, or a store
        of 7 candidates beside 3 selected were read back and shown as "engines agree").

        :func:`~memaudit_core.solvers.certify.finish` certifies only without a reason, with
        every check's store within the budget (an infeasible one raises), and records
        ``agreement: true`` exactly when a second engine proved the optimum too (null when
        none did). The store returned is the primary's, or the cross-check's when the engines
        agree (its store worth more within their tolerance), so the check
        ``certificate.returned_check`` names counts the candidates selected.
        """
        from ..errors import ResultError
        from ..results import check_saved_flag

        cert = self.certificate
        at = f"{path}.certificate"
        if cert.reason:
            raise ResultError(
                f"{at}.reason",
                "inconsistent",
                "certified, yet the certificate gives a reason it is not: certification "
                "records no reason",
                cert.reason,
            )
        for i, check in enumerate(cert.checks):
            check_saved_flag(
                check.to_dict(),
                f"{at}.checks[{i}]",
                "feasible",
                True,
                f"the certified label: every engine's store fits the budget ({check.engine!r} "
                "returned one that does not, which certification refuses)",
            )
        proven = [c.engine for c in cert.checks if c.status == "optimal"]
        if len(proven) > 1:
            said = f"the certified label: {' and '.join(proven)} proved it, so they agree"
        else:
            said = "the certified label: one engine's proof, no cross-check concluded"
        check_saved_flag(
            cert.to_dict(),
            at,
            "agreement",
            True if len(proven) > 1 else None,
            said + " (a disagreement is never certified)",
            nullable=True,
        )
        # The engine whose store is returned (certificate.returned_check): the primary's, or
        # the cross-check's where it proved a store worth more.
        k = cert.returned_check
        check = cert.checks[k]
        if check.n_selected != len(self.selected):
            raise ResultError(
                f"{at}.checks[{k}].n_selected",
                "inconsistent",
                f"certified, yet {count(len(self.selected), 'candidate')} selected beside "
                f"{check.engine}'s store of {check.n_selected}: the certified store is the one "
                "that engine returned",
                check.n_selected,
            )

    def _check_status(self, path: str) -> None:
        """Refuse ``status: "optimal"`` beside an open gap (QA s39 h5 #1f: a limited run
        edited to ``optimal`` was read back). An uncertified result keeps ``optimal`` with a
        gap only where its primary engine claimed optimality with a gap (its check says
        ``optimal``; the certificate's reason says why it is not certified)."""
        from ..errors import ResultError

        if self.status != "optimal":
            return
        tol = CERTIFIED_GAP_MAX * max(1.0, abs(self.value))
        open_gap = not self.gap <= CERTIFIED_GAP_MAX or not self.bound <= self.value + tol
        cert = self.certificate
        primary = cert.checks[0].status if cert is not None and cert.checks else None
        if cert is not None and cert.checks and primary != "optimal":
            raise ResultError(
                f"{path}.status",
                "inconsistent",
                f"'optimal', yet its engine {cert.checks[0].engine!r} reported status "
                f"{primary!r} (certificate.checks[0].status)",
                self.status,
            )
        if open_gap and not (cert is not None and not cert.certified and primary == "optimal"):
            gap_open = not self.gap <= CERTIFIED_GAP_MAX
            name, got = ("gap", self.gap) if gap_open else ("bound", self.bound)
            raise ResultError(
                f"{path}.{name}",
                "inconsistent",
                f"status 'optimal', yet the bound {self.bound!r} is above F = {self.value!r} "
                f"(gap {self.gap!r}): an optimum has its bound at its value",
                got,
            )

    def _check_gaps(self, path: str) -> None:
        """Refuse a gap that is not the one its value and bound give (QA s39 h2 #2: a limited
        run's gap edited to 0 or 0.01 beside F 120.76 and bound 129.911, a gap of 0.0758, was
        read back), for the result and each engine check, whatever the status."""
        items = [(f"{path}.gap", self.value, self.bound, self.gap)]
        if self.certificate is not None:
            items += [
                (f"{path}.certificate.checks[{i}].gap", c.value, c.bound, c.gap)
                for i, c in enumerate(self.certificate.checks)
            ]
        for at, value, bound, gap in items:
            check_bound_and_gap(None, at, value, bound, gap)

    def _check_primary(self, path: str) -> None:
        """Refuse an uncertified result whose primary engine check contradicts it (QA s39 h2
        #2: ``certificate.checks[0].value`` or ``certificate.recomputed_value`` edited by -50
        and ``checks[0].bound`` edited to 1e9 were read back).

        Certification records the store's F (``recomputed_value``: the primary's, or a
        cross-check's better store), an engine's report differing from its store's F only
        with a reason saying so, and a bound of ``max(checks[0].bound, F)`` (infinite when
        the engine's bound was below F). Later steps only improve the result: a store found
        elsewhere raises F (:func:`~memaudit_core.solvers.budgets.lift_store`, status
        ``limit``) and a second run may lower the bound
        (:func:`~memaudit_core.solvers.budgets.better_of`).
        """
        from ..errors import ResultError
        from .milp import bound_unproven, highs_bound_refused

        cert = self.certificate
        if cert is None or not cert.checks:
            return
        first = cert.checks[0]

        def near(a: float, b: float) -> bool:
            return abs(a - b) <= CERTIFIED_GAP_MAX * max(1.0, abs(b))  # NaN fails too

        at = f"{path}.certificate"
        # The primary only: certification gives a reason for its report alone whatever its
        # status (a limited cross-check's report is not compared).
        if not near(first.value, first.recomputed_value) and (
            f"{first.engine} reported {first.value!r}" not in cert.reason
        ):
            raise ResultError(
                f"{at}.checks[0].value",
                "inconsistent",
                f"not its store's F, recomputed_value {first.recomputed_value!r}, and the "
                "certificate's reason does not say so",
                first.value,
            )
        # The store returned is the one certificate.returned_check names (a cross-check's
        # proven store where it is worth more; read from the wording in older files).
        k = cert.returned_check
        returned = cert.checks[k]
        if not near(cert.recomputed_value, returned.recomputed_value):
            raise ResultError(
                f"{at}.recomputed_value",
                "inconsistent",
                f"not the F its engine check recomputed ({returned.recomputed_value!r}, "
                f"certificate.checks[{k}], {returned.engine}'s store, the one returned)",
                cert.recomputed_value,
            )
        if self.status != "limit" and returned.n_selected != len(self.selected):
            # (A limited run's store may be a reference writer's: lift_with_writers.)
            raise ResultError(
                f"{at}.checks[{k}].n_selected",
                "inconsistent",
                f"{count(len(self.selected), 'candidate')} selected beside "
                f"{returned.engine}'s store of {returned.n_selected}: the store returned is the "
                f"one that engine returned (certificate.returned_check {k})",
                returned.n_selected,
            )
        if k == 1 and not returned.recomputed_value > first.recomputed_value:
            raise ResultError(
                f"{at}.returned_check",
                "inconsistent",
                f"the cross-check {returned.engine}'s store is returned, yet it is worth "
                f"{returned.recomputed_value!r}, no more than {first.engine}'s "
                f"{first.recomputed_value!r}: it is returned only when worth more",
                k,
            )
        lifted = self.status == "limit"
        if not (
            near(self.value, cert.recomputed_value)
            or (lifted and self.value > cert.recomputed_value)
        ):
            raise ResultError(
                f"{path}.value",
                "inconsistent",
                f"not the F the certificate recomputed ({cert.recomputed_value!r})",
                self.value,
            )
        # A bound below the store's F (by any amount: the refusal's tolerance rests on the
        # package's value unit, which is not saved) may have been refused, making it infinite.
        refused = not first.bound >= first.recomputed_value
        # HiGHS's bound on ill-conditioned costs bounds nothing: certification gave a valid
        # bound of its own instead (QA s49), F of every affordable candidate (not saved) or a
        # cross-check's where tighter. Results saved before kept HiGHS's and its check.
        replaced = highs_bound_refused(self) and not bound_unproven(self)
        top = max(first.bound, self.value)
        if (
            not refused
            and not replaced
            and not self.bound <= top + CERTIFIED_GAP_MAX * max(1.0, abs(top))
        ):
            raise ResultError(
                f"{path}.bound",
                "inconsistent",
                f"above the bound its engine proved, certificate.checks[0].bound "
                f"{first.bound!r} (or F)",
                self.bound,
            )
        if replaced:
            if not self.bound >= self.value:  # NaN fails too
                raise ResultError(
                    f"{path}.bound",
                    "inconsistent",
                    f"below the store's F {self.value!r}: the bound certification gave in "
                    "place of HiGHS's is at least F",
                    self.bound,
                )
            # A cross-check whose report certification refused proves no bound (QA s49).
            proving = [
                (i, c)
                for i, c in enumerate(cert.checks)
                if i > 0 and f"{c.engine} reported {c.value!r} but" not in cert.reason
            ]
            if proving:
                i, c = min(proving, key=lambda item: item[1].bound)
                top = max(c.bound, self.value)
                if not self.bound <= top + CERTIFIED_GAP_MAX * max(1.0, abs(top)):
                    raise ResultError(
                        f"{path}.bound",
                        "inconsistent",
                        f"above certificate.checks[{i}].bound {c.bound!r} ({c.engine}'s), the "
                        "tightest proven bound certification could give in place of HiGHS's",
                        self.bound,
                    )

    def _check_certificate_checks(self, path: str) -> None:
        """Refuse a certified result whose engine checks disagree with its value (QA s39 h5
        #1c: ``certificate.checks[0].value`` edited to 11 beside a certified F of 9.8 was
        read back). Certification holds every proving engine's reported and recomputed F to
        the store's F within 1e-9 relative; read back, within :data:`CERTIFIED_GAP_MAX`.

        A cross-check stopped at a limit keeps a proven optimum certified when it is
        consistent with it (:func:`~memaudit_core.solvers.certify.finish`): its store worth at
        most F and F at most the larger of its bound and its store's F. Read back, such a
        check is held to the same rule, and its reported value to at most F (QA s42 round 2
        #1: a certified enum optimum beside bnb's limited store worth 6.8125 was refused).
        At least one check must have proven optimality."""
        from ..errors import ResultError

        tol = CERTIFIED_GAP_MAX * max(1.0, abs(self.value))
        checks = self.certificate.checks
        if not any(check.status == "optimal" for check in checks):
            raise ResultError(
                f"{path}.certificate.checks",
                "inconsistent",
                "certified, yet no engine check proved optimality (none has status 'optimal')",
                [check.status for check in checks],
            )
        for i, check in enumerate(checks):
            at = f"{path}.certificate.checks[{i}]"
            if check.status != "optimal":
                # finish: refused when its store is worth more than F, or when F is above
                # both its bound and its store's F (a limited engine proves bound >= OPT).
                for name in ("value", "recomputed_value"):
                    got = getattr(check, name)
                    if not got <= self.value + tol:  # NaN fails too
                        raise ResultError(
                            f"{at}.{name}",
                            "inconsistent",
                            f"certified F = {self.value!r}, yet {check.engine!r}, stopped at "
                            f"a {check.status!r}, reports a store worth {got!r}: a limited "
                            "cross-check's store is worth at most the proven optimum",
                            got,
                        )
                if not self.value <= max(check.bound, check.recomputed_value) + tol:
                    raise ResultError(
                        f"{at}.bound",
                        "inconsistent",
                        f"certified F = {self.value!r}, yet {check.engine!r}, stopped at a "
                        f"{check.status!r}, proved a bound {check.bound!r} below it: a "
                        "limited cross-check's bound is at least the proven optimum",
                        check.bound,
                    )
                continue
            for name in ("value", "recomputed_value"):
                got = getattr(check, name)
                if not abs(got - self.value) <= tol:  # NaN fails too
                    raise ResultError(
                        f"{at}.{name}",
                        "inconsistent",
                        f"the certificate says the engines agree on F = {self.value!r} "
                        f"(certified), yet {check.engine!r} reports {got!r}",
                        got,
                    )
            # QA s47: both checks edited to a bound 20% above F with gap 0.2 (a gap that
            # fits them) were read back as "proven optimal: zero gap". Certification takes
            # a proof only where the bound meets the value; _check_gaps then holds the gap
            # to the one value and bound give.
            check_bound_and_gap(f"{at}.bound", f"{at}.gap", check.value, check.bound, None)
            if not check.gap <= CERTIFIED_GAP_MAX:  # NaN fails too
                raise ResultError(
                    f"{at}.gap",
                    "inconsistent",
                    f"certified, yet {check.engine!r} proved its optimum with a gap of "
                    f"{check.gap!r} (bound {check.bound!r}, F {check.value!r}): a certifying "
                    f"proof has its bound at its value (a gap of at most {CERTIFIED_GAP_MAX:g})",
                    check.gap,
                )
            if not read_back_gap(check.value, check.bound) <= CERTIFIED_GAP_MAX:
                raise ResultError(
                    f"{at}.bound",
                    "inconsistent",
                    f"certified, yet {check.engine!r}'s bound is above its F {check.value!r}: "
                    "a certifying proof has its bound at its value",
                    check.bound,
                )

    def _check_certificate_summary(self, path: str) -> None:
        """Refuse a certificate whose summaries are not its checks' (QA s47: a certified
        result's ``max_rel_diff`` edited to 0.5 beside two equal engine values, its ``solver``
        to ``milp`` where only enum and bnb ran, and its ``proof`` to "" were read back, and
        ``show`` printed "solver milp ... proof: exhaustive enumeration").

        :func:`~memaudit_core.solvers.certify.finish` records the primary engine as the
        result's ``solver`` and first check, a proof (certified, or proven and uncertified)
        beginning with that engine's (:func:`~memaudit_core.solvers.certify.proof_engine`)
        and naming the cross-check exactly when ``agreement`` is true, and ``max_rel_diff``
        as :func:`~memaudit_core.solvers.certify.checks_rel_diff` in the package's value
        unit. The unit is not saved; relative to the values alone the difference is at least
        as large, so that bounds it.
        """
        from ..errors import ResultError
        from .certify import PROOFS, checks_rel_diff, proof_engine

        cert = self.certificate
        if cert is None or not cert.checks:
            return
        at = f"{path}.certificate"
        first = cert.checks[0]
        if self.solver != first.engine:
            raise ResultError(
                f"{path}.solver",
                "inconsistent",
                f"the solver is the primary engine, certificate.checks[0].engine "
                f"{first.engine!r}, whose run the certificate records",
                self.solver,
            )
        if self.certified and not cert.proof:
            raise ResultError(
                f"{at}.proof",
                "inconsistent",
                f"certified, yet no proof is named: a certificate names its engine's proof "
                f"(for {first.engine}, {PROOFS.get(first.engine, first.engine)!r})",
                cert.proof,
            )
        if cert.proof:
            engine = proof_engine(cert.proof)
            if engine != first.engine:
                raise ResultError(
                    f"{at}.proof",
                    "inconsistent",
                    f"not a proof by the primary engine {first.engine!r}, whose proof begins "
                    f"{PROOFS.get(first.engine, first.engine)!r}"
                    + (f" (this one is {engine}'s)" if engine else ""),
                    cert.proof,
                )
            if cert.agreement:
                said = f"; cross-checked by {cert.checks[-1].engine}"
                if said not in cert.proof:
                    raise ResultError(
                        f"{at}.proof",
                        "inconsistent",
                        f"agreement is true, yet the proof does not say {said[2:]!r}",
                        cert.proof,
                    )
            elif "; cross-checked by" in cert.proof and not cert.proof.startswith("monotonicity:"):
                # (A proof carried over by monotonicity names its own budget's cross-check.)
                raise ResultError(
                    f"{at}.proof",
                    "inconsistent",
                    "names a cross-check, yet agreement is not true: a proof names the "
                    "cross-check that proved the same optimum",
                    cert.proof,
                )
        most = checks_rel_diff(cert.checks, 0.0)
        got = cert.max_rel_diff
        if not (0 <= got <= most * (1 + 1e-9)):  # NaN fails too; inf <= inf holds
            raise ResultError(
                f"{at}.max_rel_diff",
                "inconsistent",
                f"not the largest relative difference of the checks' values: at most {most!r} "
                "(relative to the values; the package's value unit, where larger, divides)",
                got,
            )


#: The largest gap a read-back certified result may carry (certification allows 1e-9
#: relative rounding; anything near a real gap is a contradiction).
CERTIFIED_GAP_MAX = 1e-6


class _EngineRegistry(dict):
    """A dict of engines that imports the engine modules on its first read.

    QA s40: ENGINES read ``{}`` until the first solve, although every engine is said to be
    registered in it; importing the engine modules with this package instead cost every
    ``import memaudit_core`` (each CLI command, each worker pool's server) 0.2 s of SciPy
    imports. Registration writes with ``dict.__setitem__`` and never triggers the import.
    """

    _loaded = False

    def _load(self) -> None:
        if not _EngineRegistry._loaded:
            _EngineRegistry._loaded = True
            _load_engines()

    def __getitem__(self, key: str) -> Engine:
        self._load()
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self._load()
        return super().__contains__(key)

    def __iter__(self):  # noqa: ANN204 - dict's own signature
        self._load()
        return super().__iter__()

    def __len__(self) -> int:
        self._load()
        return super().__len__()

    def __repr__(self) -> str:
        self._load()
        return super().__repr__()

    def get(self, key: str, default: Any = None) -> Any:
        self._load()
        return super().get(key, default)

    def keys(self):  # noqa: ANN201 - dict's own signature
        self._load()
        return super().keys()

    def values(self):  # noqa: ANN201 - dict's own signature
        self._load()
        return super().values()

    def items(self):  # noqa: ANN201 - dict's own signature
        self._load()
        return super().items()


#: Every engine by name: the engine modules register themselves when it is first read.
ENGINES: dict[str, Engine] = _EngineRegistry()


def register_engine(name: str) -> Callable[[Engine], Engine]:
    def deco(fn: Engine) -> Engine:
        dict.__setitem__(ENGINES, name, fn)
        return fn

    return deco


def _load_engines() -> None:
    # Import for side effects: each module registers its engine (on ENGINES' first read).
    from . import bnb, brute, enum, milp  # noqa: F401


def relative_gap(value: float, bound: float, unit: float = 1.0) -> float:
    """(bound - value) / max(|value|, 1e-12 unit), 0 when bound <= value (up to rounding).

    ``unit`` is the size of a value of 1 in the package's own units (see
    :func:`value_unit`), so that the floors scale with the package.
    """
    if not math.isfinite(bound):
        return math.inf
    diff = bound - value
    if diff <= 1e-12 * max(unit, abs(value)):
        return 0.0
    return diff / max(abs(value), ZERO_VALUE * unit)


def gap_fits(value: float, bound: float, gap: float) -> bool:
    """Whether ``gap`` is :func:`relative_gap` of ``value`` and ``bound`` for a value unit a
    read-back result may have used (the unit is not saved; QA s39 h2 #2).

    With a unit of 1 (in-band packages) or below it (``bound - value`` over ``value``, the
    unit's floor being under ``value``), or 0 for a difference within rounding
    (:data:`CERTIFIED_GAP_MAX` relative to the value, whatever its scale). Over an incumbent
    below 1e-12 units the floor divides instead, giving a gap above 1 and at most the plain
    quotient.
    """
    if not math.isfinite(bound):
        return gap == math.inf
    if not (math.isfinite(value) and gap >= 0 and math.isfinite(gap)):
        # An infinite (or NaN) report, e.g. HiGHS's: the rule itself, NaN matching NaN.
        want = relative_gap(value, bound)
        return want == gap or (math.isnan(want) and math.isnan(gap))
    diff, size = bound - value, abs(value)
    if gap == 0.0:
        # Relative to the value, at any scale: with a floor of 1 (and a unit of 1 above), a
        # bound 3% above a value of 2e-12 fitted a gap of 0 (QA s41 #2).
        return diff <= (CERTIFIED_GAP_MAX * size if size > 0 else ZERO_VALUE)
    want = relative_gap(value, bound)
    if abs(gap - want) <= 1e-9 * max(1.0, want):
        return True
    if size > 0 and abs(gap - diff / size) <= 1e-9 * max(1.0, diff / size):
        return True
    return gap > 1.0 and (size == 0 or gap <= diff / size * (1 + 1e-9))


def check_bound_and_gap(
    bound_at: str | None, gap_at: str, value: float, bound: float, gap: float | None
) -> None:
    """Refuse a read-back ``bound`` below its ``value`` (relative to the value,
    :func:`read_back_gap`) at ``bound_at`` (unless None), and a ``gap`` (when given) that is
    not the one they give (:func:`gap_fits`) at ``gap_at``; rule ``inconsistent``. One rule
    for a solve's gaps, a certification run's and an audit row's engines.

    Examples
    --------
    >>> check_bound_and_gap("$.bound", "$.gap", 2.0, 2.5, 0.25)
    >>> check_bound_and_gap("$.bound", "$.gap", 2.0, 1.5, None)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    memaudit_core.errors.ResultError: $.bound: below the store's value 2.0; ...
    """
    from ..errors import ResultError

    if bound_at is not None and read_back_gap(value, bound) < -CERTIFIED_GAP_MAX:
        raise ResultError(
            bound_at,
            "inconsistent",
            f"below the store's value {value!r}; a bound is at least every store's F",
            bound,
        )
    if gap is not None and not gap_fits(value, bound, gap):
        raise ResultError(
            gap_at,
            "inconsistent",
            f"the relative gap of F = {value!r} and bound {bound!r} is "
            f"{relative_gap(value, bound)!r}",
            gap,
        )


def read_back_gap(value: float, bound: float) -> float:
    """How far a read-back ``bound`` is above its ``value``, relative to the value: signed
    ``(bound - value) / |value|`` (NaN for NaN). For a value of 0, a bound within
    :data:`ZERO_VALUE` of it is at it (an engine's rounding) and one further is divided by it.

    A saved result does not record its package's value unit, so a read-back check measures
    the distance relative to the value itself: an absolute tolerance let a bound 3% above a
    value of 2e-12 pass as "no gap" (QA s41 #2). Above :data:`CERTIFIED_GAP_MAX` is an open
    gap; below ``-CERTIFIED_GAP_MAX`` a bound below its value.
    """
    if value == 0 and abs(bound) <= ZERO_VALUE:
        return 0.0
    return (bound - value) / (abs(value) or ZERO_VALUE)


def value_unit(inst: CompiledInstance, budget: float | None = None) -> float:
    """What a value of 1 is for the tolerance floors of ``inst``: 1, except for a package
    whose weights are out of band (:attr:`CompiledInstance.scaled_view`), where it is the
    weights' own scale, so a package in units of 1e-12 is checked as strictly as one in 1s.

    With a ``budget``, the scale of the candidates that fit it
    (:meth:`CompiledInstance.value_scale_at`: a unit nobody can afford does not loosen it),
    and no more than the best affordable candidate's F alone
    (:meth:`CompiledInstance.best_single_at`), a proven lower bound on OPT there, so that
    "within 1e-9 of the unit" is within 1e-9 of OPT. This is the one unit every comparison of
    engines' values at a budget uses (solve's certification, the audit, the Certification
    report, the sweep): with a unit of 1, an optimum of 1e-5 agreed with a store 2e-10 better
    (exactness QA s50), and the audit called 0.002 and 0.0020000003 equal where solve did not
    (review s50 #1). When no affordable candidate is worth anything, OPT is 0 exactly and the
    scale's unit stays.
    """
    if budget is None:
        return 1.0 / inst.scaled_view[1]
    unit = 1.0 / inst.value_scale_at(budget)
    floor = inst.best_single_at(budget)
    return min(unit, floor) if floor > 0.0 else unit


def incumbent_is_zero(value: float, gap: float | None, bound: float | None) -> bool:
    """Whether a run's incumbent ``value`` is 0 at its package's scale, so that its relative
    gap means nothing: not positive, or a ``gap`` below ``(bound - value) / value``, which
    :func:`relative_gap` gives only when it divided by the package's zero floor instead of
    the value (see :func:`gap_text`).

    >>> incumbent_is_zero(0.0, math.inf, 5.0), incumbent_is_zero(1e-20, 5e12, 5.0)
    (True, True)
    >>> incumbent_is_zero(1.06575e-13, 0.1491, 1.2246e-13)
    False
    """
    if not value > 0:
        return True
    return (
        gap is not None
        and 0 < gap < math.inf
        and bound is not None
        and math.isfinite(bound)
        and gap * value < (bound - value) * (1 - 1e-6)
    )


def gap_text(value: float, gap: float, bound: float) -> str:
    """How a limited run's relative gap reads in text: the one rule for the CLI, notes and app.

    Over an incumbent of 0 a relative gap is meaningless (a bound of 5 gives 5e14 %), so it is
    ``n/a``; the gap itself reads as :func:`gap_percent` prints it (a positive gap too small for
    3 decimals in significant digits, never a ``0%`` that would contradict "stopped at a
    limit").

    "0" is 0 in the package's own units, as in :func:`relative_gap`: the result's ``gap``
    already divides by the value or, for a value below :data:`ZERO_VALUE` of the package's
    unit (:func:`value_unit`), by that floor, so a gap below ``(bound - value) / value`` says
    the incumbent is 0 at the package's scale. A fixed 1e-12 read a package in units of
    1e-13 as "incumbent 0" next to the JSON's gap of 0.149 (QA s41 defect 1); saved results
    and the app have no unit to pass, but always have the gap and the bound.

    >>> gap_text(58.7, 0.048552, 61.55), gap_text(6.4, 2e-9, 6.4000000128)
    ('gap 4.855%', 'gap 2e-7%')
    >>> gap_text(0.0, math.inf, 5.0)
    'gap n/a (incumbent 0)'
    >>> gap_text(1.06575e-13, 0.1491, 1.2246e-13), gap_text(1e-20, 5e12, 5.0)
    ('gap 14.91%', 'gap n/a (incumbent 0)')
    """
    if incumbent_is_zero(value, gap, bound):
        return "gap n/a (incumbent 0)"
    if not math.isfinite(gap):
        return "gap n/a (no finite bound)"
    return "gap " + gap_percent(gap)


def gap_percent(gap: float | None) -> str:
    """A relative gap (bound − value) / value as every face prints it: in percent, the one
    rule for the CLI, the app's tables, charts and notes, and the reports (s52: the app showed
    fractions, 0.0123, where the CLI printed 1.23%).

    Up to three decimals, trailing zeros stripped; a gap that is not 0 never reads 0 (QA s43:
    HiGHS's certified 4.4e-10 read "0%"), so below 0.001% it takes two significant digits
    (``4.4e-8%``); exactly 0 reads ``0%``; an unknown gap (None, NaN, or infinite: no finite
    bound) reads ``n/a``.

    >>> gap_percent(0.0123), gap_percent(0.048552), gap_percent(0.0), gap_percent(None)
    ('1.23%', '4.855%', '0%', 'n/a')
    >>> gap_percent(4.4e-10), gap_percent(2e-9), gap_percent(6.915), gap_percent(math.inf)
    ('4.4e-8%', '2e-7%', '691.5%', 'n/a')
    """
    if gap is None or not math.isfinite(gap):
        return "n/a"
    pct = float(gap) * 100
    if pct == 0:
        return "0%"
    if abs(pct) < 0.0005 or abs(pct) >= 1e9:
        # Significant digits: three decimals would round it to 0 (or print float noise).
        text = f"{pct:.2g}".replace("e-0", "e-").replace("e+0", "e+")
        return text + "%"
    return f"{pct:.3f}".rstrip("0").rstrip(".") + "%"


def value_text(x: float, digits: int = 4, *, strip: bool = True) -> str:
    """A value as text, the one rule for the CLI and the app: ``digits`` decimals (trailing
    zeros stripped unless ``strip`` is False, as in the app's aligned metrics); magnitudes of
    1e16 and beyond (where fixed notation prints float noise) or too small for ``digits``
    decimals in six significant digits, so a package in small units does not read 0.

    >>> value_text(6.0), value_text(2.123456), value_text(1e308), value_text(1.63e-11)
    ('6', '2.1235', '1e+308', '1.63e-11')
    >>> value_text(7.735, strip=False)
    '7.7350'
    """
    if not math.isfinite(x):
        return repr(x)
    if abs(x) >= 1e16 or 0.0 < abs(x) < 0.5 * 10.0**-digits:
        return f"{x:.6g}"
    text = f"{x:.{digits}f}"
    return text.rstrip("0").rstrip(".") if strip else text


def check_budget(budget: float) -> float:
    """The one check of a budget given to the library: a real number (not a bool, not a
    string), finite and >= 0; returns it as a float.

    >>> check_budget(np.int64(6)), check_budget(2.5)
    (6.0, 2.5)
    """
    if isinstance(budget, bool) or not isinstance(budget, numbers.Real):
        # Cut: library QA found a 100,000-character string echoed whole.
        raise MemAuditError(
            f"budget must be a real number, got {type(budget).__name__} {cut_repr(budget)}"
        )
    try:
        b = float(budget)
    except OverflowError:  # an int beyond the float range
        b = math.inf
    if not math.isfinite(b) or b < 0:
        raise MemAuditError(f"budget must be a finite number >= 0, got {cut_repr(budget)}")
    return b + 0.0  # -0.0 -> 0.0: it was echoed as "budget -0" (CLI QA)


def check_time_limit(time_limit: float | None, what: str = "time limit") -> None:
    """Refuse a time limit that is not a finite number of seconds > 0 (None: no limit);
    ``what`` names it in the message (e.g. "total time limit")."""
    if time_limit is None:
        return
    # A string "1" would pass float() here and then break HiGHS's option setter.
    if isinstance(time_limit, bool) or not isinstance(time_limit, numbers.Real):
        raise MemAuditError(f"{what} must be a number of seconds, got {cut_repr(time_limit)}")
    try:
        t = float(time_limit)
    except OverflowError:  # an int too large for a float (10**400)
        t = math.inf
    if not math.isfinite(t) or t <= 0:
        raise MemAuditError(
            f"{what} must be a finite number of seconds > 0, got {cut_repr(time_limit)}"
        )


def _check_limits(time_limit: float | None, node_limit: int | None) -> None:
    """Reject limits an engine would otherwise have to clamp (a negative time, a NaN)."""
    check_time_limit(time_limit)
    if node_limit is not None and (
        isinstance(node_limit, bool)
        or not isinstance(node_limit, (int, np.integer))
        or node_limit < 0
    ):
        raise MemAuditError(f"node limit must be an integer >= 0, got {cut_repr(node_limit)}")


def run_engine(
    name: str,
    inst: CompiledInstance,
    budget: float,
    *,
    time_limit: float | None = None,
    node_limit: int | None = None,
    incumbent_idx: tuple[int, ...] | None = None,
) -> tuple[RawSolution, float]:
    """Run one registered engine; returns the raw solution and its wall time in seconds."""
    if name not in ENGINES:
        raise UnknownNameError(
            f"unknown solver {cut_repr(name)} (known: {', '.join(SOLVER_CHOICES)})"
        )
    t0 = time.perf_counter()
    view, value_scale, cost_scale = inst.scaled_view_at(budget)
    # The engines report in the view's units; the watcher divides by the scale.
    heartbeat.note(engine=name, scale=value_scale, stage=None, incumbent=None, bound=None)
    scaled_budget = budget * cost_scale
    if not scaled_budget < 1e20:
        # Costs in band are at most 1 each, so such a budget fits every store; as a number
        # it overflowed to inf (budget 1e12 over a cost of 1e-300), which HiGHS refused
        # (exactness QA: "HiGHS rejected the model"). The total cost admits the same stores.
        scaled_budget = float(view.cost.sum())
    # Costs near the float maximum (1e308) overflow the bounds' products to inf, which the
    # bounds handle (an infinite term never wins a min); NumPy's warnings about it only
    # cluttered stderr (CLI QA). The certificate rechecks every answer.
    with np.errstate(over="ignore", invalid="ignore"):
        raw = ENGINES[name](
            view,
            scaled_budget,
            time_limit=time_limit,
            node_limit=node_limit,
            incumbent_idx=incumbent_idx,
        )
    if view is not inst:
        raw = _unscaled(raw, value_scale, cost_scale)
    if raw.status != "optimal":
        raw = _capped_bound(inst, budget, raw)
    return raw, time.perf_counter() - t0


def _capped_bound(inst: CompiledInstance, budget: float, raw: RawSolution) -> RawSolution:
    """``raw`` with its bound lowered to :func:`~memaudit_core.objective.value_ceiling` when
    that is tighter.

    An engine stopped early can hold a bound far above anything F can reach (QA s43: HiGHS
    killed before its root LP summed its objective column by column, 68,207.5 on an event
    graph whose units weigh 22,583.1, "gap 691.5%"; the B&B's root bound without its coverage
    caps, 65,204.3 on random groups weighing 30,059.4). Proven runs are left as they are.
    """
    ceiling = value_ceiling(inst, budget)
    if not ceiling < raw.bound:
        return raw
    detail = {**raw.detail, "engine_bound": raw.bound, "bound_from": "F of every candidate"}
    return replace(raw, bound=max(ceiling, raw.value), detail=detail)


def _unscaled(raw: RawSolution, value_scale: float, cost_scale: float) -> RawSolution:
    """An engine's solution on :attr:`CompiledInstance.scaled_view`, in the package's units."""
    detail = {**raw.detail, "scaled": {"values": value_scale, "costs": cost_scale}}
    return replace(raw, value=raw.value / value_scale, bound=raw.bound / value_scale, detail=detail)


def solve(
    inst: CompiledInstance,
    budget: float,
    solver: str = "auto",
    *,
    time_limit: float | None = None,
    node_limit: int | None = None,
    cross_check: bool | None = None,
    incumbent_idx: tuple[int, ...] | None = None,
) -> SolveResult:
    """Exact optimum of F over budget-feasible stores, with a certificate.

    Parameters
    ----------
    inst : CompiledInstance
    budget : float
        Storage budget B >= 0.
    solver : {'auto', 'bnb', 'milp', 'enum', 'brute'}
        ``auto`` picks by size and saturation (see :func:`memaudit_core.solvers.certify.choose`).
    time_limit, node_limit : optional
        Limits; a limited run reports incumbent, proven bound and gap, status ``"limit"``.
        ``node_limit`` counts search nodes: the branch-and-bound's root heuristics (greedy
        and add / swap local search) run before the first node and stop at ``time_limit``
        only (library QA: ``node_limit=10`` took 7.3 s on 2,000 groups, 2.5 s with
        ``time_limit=2``).
    cross_check : bool, optional
        Also run a second exact engine and require agreement. ``None`` (default) runs the
        cheap checks: ``auto``'s, and enumeration after a named engine on tiny instances.
    incumbent_idx : tuple of int, optional
        A known feasible selection (e.g. the optimum at a smaller budget) to start from.

    Returns
    -------
    SolveResult

    Examples
    --------
    >>> from memaudit_core.generators import generate
    >>> from memaudit_core.compiled import compile_package
    >>> res = solve(compile_package(generate("update_chain")), 6)
    >>> round(res.value, 6), res.certified
    (7.735, True)
    """
    from .certify import solve_certified

    check_type(inst, CompiledInstance, "solve()", "a CompiledInstance (compile_package(package))")
    if cross_check is not None and not isinstance(cross_check, bool):
        # Library QA: "no" (truthy) ran a cross-check; "sample" is for many budgets.
        raise MemAuditError(
            f"solve(): cross_check must be True, False or None, got {cut_repr(cross_check)}"
            + (" ('sample' is for solve_budgets and sweep)" if cross_check == "sample" else "")
        )
    budget = check_budget(budget)
    return solve_certified(
        inst,
        budget,
        solver,
        time_limit=time_limit,
        node_limit=node_limit,
        cross_check=cross_check,
        incumbent_idx=incumbent_idx,
    )


def solve_budgets(
    inst: CompiledInstance,
    budgets: Sequence[float],
    solver: str = "auto",
    **kwargs: Any,
) -> list[SolveResult]:
    """Certified OPT at many budgets, reusing work across them (see :mod:`.budgets`).

    Keyword arguments: ``time_limit``, ``node_limit``, ``cross_check`` (``"sample"`` by
    default: a deterministic sample of instances is cross-checked) and ``incumbents``.

    Examples
    --------
    >>> from memaudit_core.generators import generate
    >>> from memaudit_core.compiled import compile_package
    >>> res = solve_budgets(compile_package(generate("update_chain")), [3, 6, 13])
    >>> [round(r.value, 6) for r in res], {r.label for r in res}
    ([5.55, 7.735, 8.025], {'OPT'})
    """
    from .budgets import solve_budgets as _solve_budgets

    check_type(
        inst, CompiledInstance, "solve_budgets()", "a CompiledInstance (compile_package(package))"
    )
    budgets = check_budget_list(budgets, "solve_budgets()")
    if not budgets:
        # Library QA s49: [] returned [] while sweep, budget_curve and the rest refuse it.
        raise UsageError("solve_budgets(): no budgets given")
    return _solve_budgets(inst, budgets, solver, **kwargs)


def recompute(inst: CompiledInstance, selected_idx: tuple[int, ...]) -> float:
    return evaluate(inst, np.asarray(selected_idx, dtype=np.int64))


__all__ = [
    "check_time_limit",
    "ENGINES",
    "RESULT_VERSION",
    "RawSolution",
    "SOLVER_CHOICES",
    "SolveResult",
    "asdict",
    "check_budget",
    "check_bound_and_gap",
    "gap_fits",
    "incumbent_is_zero",
    "gap_percent",
    "gap_text",
    "value_text",
    "register_engine",
    "read_back_gap",
    "relative_gap",
    "run_engine",
    "value_unit",
    "solve",
    "solve_budgets",
]
