"""Session 43 QA (browser-measured layout): chart titles cut off at 1024 x 768 with the
sidebar open, the ablation charts' titles wrapped on a full-width chart at 1920 px, and the
"Open Compare at budget" button read "Open Compare at …"."""

from __future__ import annotations

import pytest
from app_utils import open_linked

from memaudit_ui import figures

#: The narrowest normal-mode chart: full width at 1024 px with the sidebar open, as QA measured
#: every chart's SVG there (564 px).
CHART_PX_1024 = 564
#: Plotly starts a title 5 % into the figure (its default ``title.x``).
TITLE_LEFT_PX = 0.05 * CHART_PX_1024
#: The title font in normal mode (px).
TITLE_FONT_PX = 20
#: QA's widest measured title ran 0.435 em a character in Chromium (661 px for the 76
#: characters of the Compare title, from x = 28 px to 125 px past a 564 px SVG); a margin
#: for capitals and digits on top.
EM_PER_CHAR = 0.45

#: The titles QA found cut, each with how it must read at 1024 px (a word boundary, the same
#: break presentation mode makes).
QA_TITLES = {
    "Value kept by unit kind at budget 40 words: Validity-aware summariser vs OPT": [
        "Value kept by unit kind at budget 40 words:",
        "Validity-aware summariser vs OPT",
    ],
    "Value kept by unit kind at budget 40 words: Fact extractor vs OPT": [
        "Value kept by unit kind at budget 40 words:",
        "Fact extractor vs OPT",
    ],
    "Evidence graph · Validity-aware summariser, B = 40 words: 84 nodes, 116 links": [
        "Evidence graph · Validity-aware summariser, B = 40 words:",
        "84 nodes, 116 links",
    ],
    "Coverage a_ur · S = Fact extractor, B = 40 words: 39 candidates × 20 units": [
        "Coverage a_ur · S = Fact extractor, B = 40 words:",
        "39 candidates × 20 units",
    ],
    "Coverage a_ur · S = gvt, B = 1310 words: 150 candidates × 120 units": [
        "Coverage a_ur · S = gvt, B = 1310 words:",
        "150 candidates × 120 units",
    ],
}

#: Titles that fit at 1024 px (measured on one line there) and must stay on one line.
FITTING_TITLES = [
    "Evidence graph · gvt, B = 1310 words: 13 nodes, 22 links",
    "Memory written per experience at budget 1310 words",
    "Drop 1 − pool OPT / OPT · event-graph-n500-s7",
]


def _fits_at_1024(line: str) -> bool:
    return TITLE_LEFT_PX + len(line) * EM_PER_CHAR * TITLE_FONT_PX <= CHART_PX_1024


@pytest.mark.parametrize("title", QA_TITLES)
def test_every_line_of_a_qa_title_fits_a_1024_px_chart_with_the_sidebar_open(title: str):
    lines = figures.wrap_title(title, present=False).split("<br>")
    assert all(_fits_at_1024(line) for line in lines), [(len(x), x) for x in lines]
    assert lines == QA_TITLES[title]


@pytest.mark.parametrize("title", FITTING_TITLES)
def test_a_title_that_fits_at_1024_px_stays_on_one_line(title: str):
    assert _fits_at_1024(title)
    assert figures.wrap_title(title, present=False) == title


@pytest.mark.parametrize("chart", [figures.ablation_drop_chart, figures.ablation_value_chart])
def test_the_full_width_ablation_charts_keep_a_fitting_title_on_one_line(chart):
    """QA: "Drop 1 − pool OPT / OPT · event-graph-n500-s7" wrapped on a 1,460 px chart: the
    chart was sized as one of two columns though the page draws it full width."""
    title = "Drop 1 − pool OPT / OPT · event-graph-n500-s7"
    assert chart([], title, "words").layout.title.text == title


def test_the_open_compare_button_is_not_squeezed_into_a_column():
    """QA: in the last quarter of a [1, 2, 1] row its label read "Open Compare at …" at
    1024 px; it now sits beside the two boxes, as wide as its label."""
    at = open_linked("pages/1_Budget_sweep.py", "sample:update_chain")
    assert at.button(key="sweep_open").label == "Open Compare at budget"
    in_columns = [b.key for col in at.columns for b in col.button]
    assert "sweep_open" not in in_columns
    assert {"sweep_open_budget", "sweep_open_method"} <= {
        s.key for col in at.columns for s in col.selectbox
    }
