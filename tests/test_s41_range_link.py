"""QA s41 (docs conformance): a Budget sweep link whose range the core refuses (``step=0``,
``step=-1``, ``from=-5``, ``from=10&to=2``) showed only a red error, no charts, and kept the
bad values in the URL; the README says a link value the app cannot use is named in a warning
and the view falls back to a valid one. The seed band's ``first_seed`` / ``last_seed`` had the
same gap (a last seed below the first, more seeds than allowed).

AppTest runs ``app.py`` first, so the page's link is given on the switch to the page (the
pattern of tests/test_s39_links.py).
"""

from __future__ import annotations

import pytest
from app_utils import open_linked
from streamlit.testing.v1 import AppTest

SWEEP = "pages/1_Budget_sweep.py"
PACKAGE = "sample:update_chain"  # budgets 3, 6, 13 and whole costs: default range 3..13 step 1
GENERATED = "sample:event-graph-50"  # names its generator family: the seed band is offered
RANGE_KEYS = ("sweep_start", "sweep_stop", "sweep_step")
DEFAULT_RANGE = [3.0, 13.0, 1.0]
DEFAULT_BUDGETS = "Budgets: 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13"


def open_sweep(package: str = PACKAGE, **settings: str) -> AppTest:
    return open_linked(SWEEP, package, "6", **settings)


def warnings(at: AppTest) -> list[str]:
    # The text as read: without Markdown escapes and the backticks of the values' code spans.
    return [w.value.replace("\\", "").replace("`", "") for w in at.warning]


@pytest.mark.parametrize(
    "link, expected",
    [
        (
            {"from": "2", "to": "10", "step": "0"},
            "ignored from='2', to='10', step='0' in the link: budget range: step must be > 0, "
            "got 0",
        ),
        (
            {"from": "2", "to": "10", "step": "-1"},
            "ignored from='2', to='10', step='-1' in the link: budget range: step must be > 0, "
            "got -1",
        ),
        (
            {"from": "-5", "to": "10", "step": "2"},
            "ignored from='-5', to='10', step='2' in the link: budget range: start must be "
            ">= 0, got -5",
        ),
        (
            {"from": "10", "to": "2", "step": "2"},
            "ignored from='10', to='2', step='2' in the link: budget range runs backwards: "
            "stop (2) is below start (10); a range goes from start up to stop",
        ),
        (
            {"step": "0"},
            "ignored step='0' in the link: budget range: step must be > 0, got 0",
        ),
        (
            {"from": "0", "to": "1000", "step": "0.5"},
            "ignored from='0', to='1000', step='0.5' in the link: budget range: 0..1000 step "
            "0.5 makes 2,001 budgets, more than the 200 allowed; use a larger step",
        ),
    ],
)
def test_a_range_the_core_refuses_in_a_link_is_named_and_the_default_range_is_used(link, expected):
    at = open_sweep(grid="range", **link)
    # QA s49: the warning says what is shown instead.
    assert warnings(at) == [expected + "; showing the default range 3 to 13 step 1"]
    assert [e.value for e in at.error] == []
    assert [at.number_input(key=k).value for k in RANGE_KEYS] == DEFAULT_RANGE
    assert DEFAULT_BUDGETS in [c.value for c in at.caption]
    assert at.subheader  # the charts are drawn, not stopped on an error
    # The link no longer carries the refused values; the range mode it asked for stays.
    for name in ("from", "to", "step"):
        assert name not in at.query_params
    assert at.query_params["grid"] in ("range", ["range"])


def test_a_bad_step_typed_into_the_box_stays_an_error():
    """Regression guard: the box (not a link) keeps its located error (QA s25)."""
    at = open_sweep(grid="range", **{"from": "2", "to": "10", "step": "2"})
    assert warnings(at) == []
    at.number_input(key="sweep_step").set_value(0.0).run()
    assert [e.value for e in at.error] == ["budget range: step must be > 0, got 0"]
    assert warnings(at) == []


@pytest.mark.parametrize(
    "link, expected",
    [
        (
            {"first_seed": "5", "last_seed": "2"},
            "ignored seed_band='1', first_seed='5', last_seed='2' in the link: the last seed (2) "
            "is below the first (5)",
        ),
        (
            {"first_seed": "100"},  # the default last seed is 49
            "ignored seed_band='1', first_seed='100' in the link: the last seed (49) is below "
            "the first (100)",
        ),
        (
            {"first_seed": "0", "last_seed": "600"},
            "ignored seed_band='1', first_seed='0', last_seed='600' in the link: at most 500 "
            "seeds at once; 601 asked for",
        ),
    ],
)
def test_a_seed_range_the_page_refuses_in_a_link_is_named_and_the_default_is_used(link, expected):
    # QA s49: the band goes off with the refused range (the default seeds are a long run the
    # link did not ask for) and the warning says so; turned on, it has the default seeds.
    at = open_sweep(GENERATED, seed_band="1", methods="", ablation="0", **link)
    off = "; the seed band is off until you turn it on (default seeds 0 to 49)"
    assert warnings(at) == [expected + off]
    assert [e.value for e in at.error] == []
    assert at.toggle(key="sweep_seed_range").value is False
    for name in ("seed_band", "first_seed", "last_seed"):
        assert name not in at.query_params
    # No method chosen: the band (50 seeds of the default range) is not computed.
    at.toggle(key="sweep_seed_range").set_value(True).run()
    assert at.number_input(key="sweep_seed_from").value == 0
    assert at.number_input(key="sweep_seed_to").value == 49


def test_a_bad_seed_range_typed_into_the_boxes_stays_an_error():
    """Regression guard: the boxes (not a link) keep the page's error, worded as before."""
    at = open_sweep(GENERATED, seed_band="1", methods="", ablation="0")
    assert warnings(at) == []
    at.number_input(key="sweep_seed_from").set_value(10).run()
    at.number_input(key="sweep_seed_to").set_value(5).run()
    assert [e.value for e in at.error] == ["The last seed (5) is below the first (10)."]
    assert warnings(at) == []
