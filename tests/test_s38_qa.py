"""Defects found by the thirty-eighth session's audit (charts' labels, and the findings of its
report-only reviewers: ablations, certification, generators, external stores, sweeps,
saturations, the package schema, deep links).

Each test fails on the code before its fix (checked against a worktree of the commit before).
"""

from __future__ import annotations

import pytest

from memaudit_core.curves import budget_curve
from memaudit_core.generators import generate
from memaudit_ui.figures import budget_ratio_curve, budget_value_curve

# --------------------------------------------------------------------------- charts


@pytest.fixture(scope="module")
def chain_curve():
    return budget_curve(generate("update_chain"), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], ["writer:gvt"])


def _budget_label(fig):
    return next(a for a in fig.layout.annotations if a.text.startswith("sidebar B = "))


def _opt_label(fig):
    return next(a for a in fig.layout.annotations if a.text == "OPT = 1")


@pytest.mark.parametrize("draw", [budget_value_curve, budget_ratio_curve])
def test_the_sidebar_budget_label_runs_towards_the_middle_of_the_plot(chain_curve, draw):
    # The label ran right of the line: at a budget near the right end it covered the largest
    # budgets' points (and widened the x-axis to fit itself).
    assert _budget_label(draw(chain_curve, "t", current_budget=5.5)).xanchor == "right"
    assert _budget_label(draw(chain_curve, "t", current_budget=1.5)).xanchor == "left"


def test_the_opt_line_label_sits_away_from_the_sidebar_budget_label(chain_curve):
    # "sidebar B = ..." and "OPT = 1" were drawn over each other at a budget near the right end.
    at_right = _opt_label(budget_ratio_curve(chain_curve, "t", current_budget=5.5))
    assert (at_right.x, at_right.xanchor) == (0, "left")
    at_left = _opt_label(budget_ratio_curve(chain_curve, "t", current_budget=1.5))
    assert (at_left.x, at_left.xanchor) == (1, "right")
    unmarked = _opt_label(budget_ratio_curve(chain_curve, "t"))
    assert (unmarked.x, unmarked.xanchor) == (1, "right")
