"""Session 42, QA round 4 (the app after the merges): a title with a generated package's
long id is wrapped to the chart's width, and a ratio chart of budget 0 alone shows no
negative budgets."""

from __future__ import annotations

from pathlib import Path

import pytest

import memaudit_core as ma
from memaudit_core.curves import budget_curve
from memaudit_ui import figures

REPO = Path(__file__).resolve().parents[1]

#: The title QA met on the Budget sweep of a Generator package with non-default parameters.
LONG = (
    "F and OPT vs budget · event-graph-n20-s3-n_entities=3-update_rate=0.5-distractor_rate=0.1-"
    "candidate_types=atomic_fact+summary+raw_span+tombstone-cost_rule=bytes_overhead"
)


@pytest.mark.parametrize(
    ("present", "half", "limit"), [(False, False, 59), (True, False, 52), (False, True, 44)]
)
def test_a_title_without_spaces_is_wrapped_to_the_width(present, half, limit):
    lines = figures.wrap_title(LONG, present, half).split("<br>")
    assert len(lines) >= 2
    assert all(len(line) <= limit for line in lines), [len(x) for x in lines]
    assert "".join(line.rstrip() + " " if line.endswith("·") else line for line in lines) == LONG


def test_a_title_that_breaks_well_keeps_its_breaks():
    """Regression guard: the docstring's example breaks after its colon, as before."""
    title = "Value kept by unit kind at budget 24 words: Letta vs OPT over P+"
    assert figures.wrap_title(title, False) == (
        "Value kept by unit kind at budget 24 words:<br>Letta vs OPT over P+"
    )
    # Presentation lines are too short for the colon (s45): the break falls before the number,
    # never between "24" and its unit.
    lines = figures.wrap_title(title, True).split("<br>")
    assert lines == ["Value kept by unit kind at budget", "24 words: Letta vs OPT over P+"]
    assert all(len(line) <= figures.title_line_limit(True) for line in lines)


def test_a_ratio_chart_of_budget_0_alone_shows_no_negative_budget():
    pkg = ma.load_package(REPO / "sample_packages" / "update_chain.json")
    curve = budget_curve(pkg, [0.0], ["writer:gvt"])
    fig = figures.budget_ratio_curve(curve, "t", False, current_budget=1.0)
    low, high = fig.layout.xaxis.range
    assert low == 0.0 and high > 0.0, (low, high)
