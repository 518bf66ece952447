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


def test_the_kind_bars_lie_flat_with_one_line_labels_that_fit():
    # Upright bars rotated the kind names at 1024 px and a narrow bar's "(lost x)" label ran
    # into its neighbour's on a projector.
    from memaudit_ui.figures import KIND_BARS_PLOT_PX, bucket_value_bars

    kinds = ["current truth", "invalidation / tombstones", "temporal order", "stale", "other"]
    for present in (False, True):
        fig = bucket_value_bars(
            kinds, [4, 0, 0, 0.9, 3.146], [33, 1.5, 0, 0.3, 0], "density", "OPT", "t", present
        )
        assert [t.orientation for t in fig.data] == ["h", "h"]
        assert list(fig.data[0].y) == kinds and fig.layout.yaxis.autorange == "reversed"
        assert fig.data[1].text[0] == "4 (lost 29)"
        assert not any("<br>" in text for t in fig.data for text in t.text)
        end = fig.layout.xaxis.range[1]
        font = fig.data[0].textfont.size
        for t in fig.data:
            for value, text in zip(t.x, t.text, strict=True):
                # The label's right end (about 0.6 em per character) stays inside the plot.
                assert value / end * KIND_BARS_PLOT_PX + 0.6 * font * len(text) <= KIND_BARS_PLOT_PX
