"""The objective, kept apart from every optimiser: saturations, F and marginal gains.

F(X) = sum_r w_r * h(sum_{u in X} a_ur) with h concave, nondecreasing and h(0) = 0, so F is
normalised, monotone and submodular. :data:`SATURATIONS` is the one saturation registry
(defined in :mod:`memaudit_core.saturations`, which package validation reads too).
:class:`CoverageState` holds the running coverage z of a partial store and gives the
marginal gain of every candidate in one vectorised pass.

Examples
--------
>>> import numpy as np
>>> SATURATIONS["cap1"].h(np.array([0.0, 0.5, 1.7]))
array([0. , 0.5, 1. ])
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .compiled import CompiledInstance, budget_with_tolerance, entry_positions

# Re-exported: the objective is where readers look for the saturations.
from .saturations import SATURATIONS, Saturation, get_saturation  # noqa: F401

#: Gains at or below this are treated as zero by writers and solvers.
GAIN_EPS = 1e-12


def coverage_of(inst: CompiledInstance, selected_idx: Sequence[int] | np.ndarray) -> np.ndarray:
    """z_r = sum of a_ur over the selection (one entry per unit)."""
    idx = np.asarray(selected_idx, dtype=np.int64).ravel()
    if idx.size == 0:
        return np.zeros(inst.n_units)
    # Gather the selected rows' CSR entries directly: scipy's fancy row indexing costs ~60 us
    # per call, which dominated writer and sweep runs on small packages.
    cov = inst.coverage
    pos, _ = entry_positions(cov.indptr, idx)
    if pos.size == 0:
        return np.zeros(inst.n_units)
    return np.bincount(cov.indices[pos], weights=cov.data[pos], minlength=inst.n_units)


def evaluate(inst: CompiledInstance, selected_idx: Sequence[int] | np.ndarray) -> float:
    """F of a selection given by candidate positions."""
    h = get_saturation(inst.saturation).h
    return float(np.dot(inst.weight, h(coverage_of(inst, selected_idx))))


def evaluate_many(
    inst: CompiledInstance, selections: Sequence[Sequence[int] | np.ndarray]
) -> list[float]:
    """F of many selections: the same numbers as :func:`evaluate` on each, in one pass.

    Coverage is summed per selection in the same order as :func:`coverage_of` (one
    ``bincount`` over all selections, offset per selection) and each value is the same dot
    product, so every result equals ``evaluate(inst, sel)`` bit for bit.

    Examples
    --------
    >>> from memaudit_core.generators import generate
    >>> from memaudit_core.compiled import compile_package
    >>> inst = compile_package(generate("update_chain"))
    >>> evaluate_many(inst, [[0], [], [0, 5]]) == [evaluate(inst, s) for s in [[0], [], [0, 5]]]
    True
    """
    if not selections:
        return []
    h = get_saturation(inst.saturation).h
    R = inst.n_units
    idx = [np.asarray(s, dtype=np.int64).ravel() for s in selections]
    sizes = np.array([i.size for i in idx], dtype=np.int64)
    if not sizes.any():
        return [0.0] * len(idx)
    flat = np.concatenate(idx)
    owner = np.repeat(np.arange(len(idx)), sizes)
    cov = inst.coverage
    pos, lens = entry_positions(cov.indptr, flat)
    bins = np.repeat(owner, lens) * R + cov.indices[pos]
    z = np.bincount(bins, weights=cov.data[pos], minlength=len(idx) * R).reshape(len(idx), R)
    hz = h(z)
    w = inst.weight
    return [float(np.dot(w, hz[k])) if sizes[k] else 0.0 for k in range(len(idx))]


#: Relative margin on :func:`value_ceiling`: F of a feasible store and F of every candidate
#: sum their coverage in different orders, so the ceiling carries rounding slack.
CEILING_RTOL = 1e-9


def value_ceiling(inst: CompiledInstance, budget: float) -> float:
    """An upper bound on F of every store that fits ``budget``, valid for every saturation.

    F is monotone (h nondecreasing, weights nonnegative), so no store beats the one holding
    every candidate that fits the budget alone, ignoring the budget and the group capacity
    together. Under ``cap1`` that is at most the total weight of the units those candidates
    cover. Limited solves report it when their own bound is looser (QA s43: HiGHS stopped
    before its root LP reported 68,207.5 on an event graph whose units weigh 22,583.1).

    Examples
    --------
    >>> from memaudit_core.generators import generate
    >>> from memaudit_core.compiled import compile_package
    >>> inst = compile_package(generate("update_chain"))
    >>> bool(value_ceiling(inst, 6) >= 7.735)  # OPT(6)
    True
    """
    fits = np.flatnonzero(inst.cost <= budget_with_tolerance(budget))
    full = evaluate(inst, fits)
    return full + CEILING_RTOL * abs(full)


def unit_values(inst: CompiledInstance, selected_idx: Sequence[int] | np.ndarray) -> np.ndarray:
    """Per-unit contribution w_r * h(z_r); sums to F."""
    h = get_saturation(inst.saturation).h
    return inst.weight * h(coverage_of(inst, selected_idx))


def singleton_values(inst: CompiledInstance) -> np.ndarray:
    """F({u}) for every candidate."""
    return CoverageState(inst).gains()


class CoverageState:
    """Incremental coverage of a partial store, with vectorised marginal gains.

    Examples
    --------
    >>> from memaudit_core.generators import generate
    >>> from memaudit_core.compiled import compile_package
    >>> inst = compile_package(generate("update_chain"))
    >>> state = CoverageState(inst)
    >>> g = state.gains()
    >>> gain = state.add(int(g.argmax()))
    >>> bool(state.value == gain == g.max())
    True
    """

    __slots__ = ("inst", "z", "value", "selected", "_h", "_wd", "_cols", "_data", "_rows")

    def __init__(self, inst: CompiledInstance, selected_idx: Sequence[int] = ()):
        self.inst = inst
        self._h = get_saturation(inst.saturation).h
        self._cols = inst.coverage.indices
        self._data = inst.coverage.data
        self._rows = inst.nnz_row
        self.z = np.zeros(inst.n_units)
        self.value = 0.0
        self.selected: list[int] = []
        for i in selected_idx:
            self.add(int(i))

    def gains(self, candidate_idx: np.ndarray | None = None) -> np.ndarray:
        """Marginal gain F(X + u) - F(X) of every candidate (or of the given ones)."""
        inst = self.inst
        zc = self.z[self._cols]
        per_entry = inst.weight[self._cols] * (self._h(zc + self._data) - self._h(zc))
        all_gains = np.bincount(self._rows, weights=per_entry, minlength=inst.n_candidates)
        if candidate_idx is None:
            return all_gains
        return all_gains[np.asarray(candidate_idx, dtype=np.int64)]

    def gain(self, candidate_idx: int) -> float:
        inst = self.inst
        lo, hi = inst.coverage.indptr[candidate_idx], inst.coverage.indptr[candidate_idx + 1]
        cols = self._cols[lo:hi]
        zc = self.z[cols]
        return float(np.dot(inst.weight[cols], self._h(zc + self._data[lo:hi]) - self._h(zc)))

    def add(self, candidate_idx: int) -> float:
        """Add a candidate; returns its marginal gain."""
        inst = self.inst
        lo, hi = inst.coverage.indptr[candidate_idx], inst.coverage.indptr[candidate_idx + 1]
        cols = self._cols[lo:hi]
        zc = self.z[cols]
        new = zc + self._data[lo:hi]
        delta = float(np.dot(inst.weight[cols], self._h(new) - self._h(zc)))
        self.z[cols] = new
        self.value += delta
        self.selected.append(int(candidate_idx))
        return delta

    def copy(self) -> CoverageState:
        other = CoverageState.__new__(CoverageState)
        other.inst = self.inst
        other._h, other._cols, other._data, other._rows = (
            self._h,
            self._cols,
            self._data,
            self._rows,
        )
        other.z = self.z.copy()
        other.value = self.value
        other.selected = list(self.selected)
        return other
