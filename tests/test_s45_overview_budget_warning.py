"""The Overview says "no candidate fits the default budget" only at that budget (s45)."""

from app_utils import open_app

from memaudit_core.generators import generate

KEY = "gen:random_coverage:1:n_groups=3;units_per_group=1"


def _fits_nothing(at) -> list[str]:
    return [w.value for w in at.warning if "budget-fits-nothing" in w.value]


def test_the_warning_shows_at_the_default_budget_and_not_at_one_that_fits():
    pkg = generate("random_coverage", seed=1, n_groups=3, units_per_group=1)
    cheapest = min(c.cost for c in pkg.candidates)
    assert pkg.budget < cheapest  # the package the warning is about

    at = open_app("app.py", package=KEY)
    assert not at.exception
    assert len(_fits_nothing(at)) == 1

    at = open_app("app.py", package=KEY, budget=f"{cheapest * 2:.4f}")
    assert not at.exception
    assert _fits_nothing(at) == []
