"""The budget's one feasibility rule: a store fits a budget B when the correctly rounded sum
of its costs is at most B (1 + 1e-9), and the engines prune against a slightly looser limit
so that no store that fits is dropped.

Kept apart from :mod:`memaudit_core.compiled` (which re-exports it) because that module loads
scipy: reading and validating a package checks its default budget with this rule, and
``memaudit validate`` need not load scipy for it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

#: Relative tolerance of the budget: a store fits when its cost <= B (1 + 1e-9). Relative
#: only (no absolute floor), so a package priced in tiny units keeps its budget.
BUDGET_RTOL = 1e-9


def budget_with_tolerance(budget: float) -> float:
    """The largest store cost that fits ``budget``: B plus its 1e-9 relative tolerance.

    Examples
    --------
    >>> budget_with_tolerance(10.0) - 10.0 < 1e-7
    True
    >>> budget_with_tolerance(4e-11) < 5e-11
    True
    """
    budget = float(budget)
    return budget + BUDGET_RTOL * abs(budget)


#: Ulps of the limit per summed term that a running cost sum may stray from the store's
#: correctly rounded cost. Each float addition of non-negative costs errs by at most half an
#: ulp of the partial sum (<= the limit's), so n terms stray by < n ulps; 8x leaves room for
#: the engines' subtractions (``limit - cost``) and item sums of capacity-k subsets.
SEARCH_SLACK_ULPS = 8


def search_limit(limit: float, n_terms: int) -> float:
    """The limit the engines prune against: ``limit`` plus a slack of
    :data:`SEARCH_SLACK_ULPS` x (``n_terms`` + 2) ulps of it.

    QA s42 round 3 (exactness): a store whose correctly rounded cost (``math.fsum``) equals
    B (1 + 1e-9) exactly had a running sum one ulp above it, and bnb and enum dropped it while
    ``score`` kept it. Engines prune by running sums against this looser limit, so no store
    that fits is ever dropped, and accept a store only when :func:`fits_limit` holds.

    Examples
    --------
    >>> search_limit(1.0, 3) > 1.0, search_limit(1.0, 3) - 1.0 < 1e-13
    (True, True)
    """
    if not math.isfinite(limit):
        return limit
    return limit + SEARCH_SLACK_ULPS * (int(n_terms) + 2) * math.ulp(limit)


def fits_limit(costs: Sequence[float], limit: float) -> bool:
    """The one feasibility predicate: a store fits iff the correctly rounded sum of its
    costs (``math.fsum``, as :meth:`CompiledInstance.selection_cost`) is <= ``limit``
    (:func:`budget_with_tolerance` of the budget)."""
    return math.fsum(costs) <= limit
