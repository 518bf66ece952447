"""Budget grids: the one START..STOP..STEP rule that the CLI's ``--budgets 1:2:0.3`` and the
app's Budget sweep range share (review: the two copies gave 4 and 5 budgets for one range).

A range runs ``start, start + step, ...`` up to ``stop`` and ends on ``stop`` itself when the
steps miss it (app QA: 10..120 step 6 ended at 118). The steps are taken in decimal from the
numbers as written, so floating noise never makes a new budget (0:1:0.1 gives 0.3, not
0.30000000000000004).

Examples
--------
>>> budget_range(0, 10, 2.5)
(0.0, 2.5, 5.0, 7.5, 10.0)
>>> budget_range(1, 2, 0.3)
(1.0, 1.3, 1.6, 1.9, 2.0)
>>> budget_range(0, 1, 0.1)[3]
0.3
>>> len(budget_range(1e15, 1e15 + 10, 1))
11
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from decimal import Decimal

from .errors import UsageError, count_text, cut_repr

#: Most budgets one range may make unless the caller sets a smaller cap (the app's sweep
#: allows 200): a range like 0:1e9:1 would not fit in memory.
MAX_RANGE_BUDGETS = 10_000


def budget_range(
    start: float,
    stop: float,
    step: float,
    *,
    max_budgets: int = MAX_RANGE_BUDGETS,
    what: str = "budget range",
) -> tuple[float, ...]:
    """The budgets of one range, ``stop`` included.

    Parameters
    ----------
    start, stop, step : float
        Finite, ``0 <= start <= stop`` and ``step > 0``.
    max_budgets : int, default MAX_RANGE_BUDGETS
        Refuse, before building anything, a range of more budgets than this.
    what : str
        How the messages name the range (``"--budgets: '1:2:0.3'"`` in the CLI).

    Raises
    ------
    UsageError
        For a non-finite value, a negative start, a non-positive step, ``stop < start``,
        more than ``max_budgets`` budgets, or a step below floating-point resolution at
        ``stop`` (budgets that would collapse into one): a mistake in the range asked for,
        so the CLI reports it as one under ``--json`` (QA s45: it was a MemAuditError).

    Examples
    --------
    >>> budget_range(10, 20, 4, max_budgets=10)
    (10.0, 14.0, 18.0, 20.0)
    >>> try:
    ...     budget_range(0, 100, 1, max_budgets=10)
    ... except UsageError as exc:
    ...     print(exc)
    budget range: 0..100 step 1 makes 101 budgets, more than the 10 allowed; use a larger step
    """
    vals = []
    for name, value in (("start", start), ("stop", stop), ("step", step)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise UsageError(f"{what}: {name} must be a number, got {cut_repr(value)}")
        vals.append(float(value))
    if not all(math.isfinite(v) for v in vals):
        raise UsageError(f"{what}: start, stop and step must be finite numbers")
    start, stop, step = vals
    if start < 0:
        raise UsageError(f"{what}: start must be >= 0, got {start:.10g}")
    if step <= 0:
        raise UsageError(f"{what}: step must be > 0, got {step:.10g}")
    if stop < start:
        raise UsageError(
            f"{what} runs backwards: stop ({stop:.10g}) is below start ({start:.10g}); a range "
            "goes from start up to stop"
        )
    # In decimal, from the numbers as written: 0:1:0.1 steps to 0.3, not 0.30000000000000004,
    # and 1e15:1e15+10:1 keeps its eleven budgets (a rounding to significant digits did not).
    d_start, d_stop, d_step = (Decimal(repr(v)) for v in vals)
    n = int((d_stop - d_start) / d_step) + 1  # steps that stay at or below stop
    n_total = n + (d_start + (n - 1) * d_step < d_stop)  # and stop itself when they miss it
    if n_total > max_budgets:
        raise UsageError(
            f"{what}: {start:.10g}..{stop:.10g} step {step:.10g} makes {count_text(n_total)} "
            f"budgets, more than the {max_budgets:,} allowed; use a larger step"
        )
    grid = [float(d_start + i * d_step) for i in range(n)]
    if n_total > n:
        grid.append(stop)
    distinct = tuple(dict.fromkeys(grid))
    if len(distinct) < len(grid):
        # CLI QA: 1e17..1e17+100 step 1 became 7 budgets, all printed as 1e+17, silently.
        raise UsageError(
            f"{what}: {start!r}..{stop!r} step {step:.10g} asks for {len(grid):,} budgets but "
            f"floating point holds only {len(distinct):,} distinct values there; use a step "
            "of at least "
            f"{math.ulp(stop):.3g}"
        )
    return distinct


def nearest_index(budgets: Sequence[float], budget: float) -> int:
    """The position of the budget in ``budgets`` closest to ``budget`` (the first on a tie;
    0 for an empty grid), e.g. to preselect the sidebar's budget in a grid picker.

    >>> nearest_index([3, 6, 9], 6), nearest_index([3, 6, 9], 7.9), nearest_index([], 5)
    (1, 2, 0)
    """
    if not budgets:
        return 0
    return min(range(len(budgets)), key=lambda i: (abs(budgets[i] - budget), i))


__all__ = ["MAX_RANGE_BUDGETS", "budget_range", "nearest_index"]
