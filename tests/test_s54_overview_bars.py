"""The Overview's ratio bars are drawn once per budget change (s54).

The chart's title names the budget, so Streamlit draws it from scratch on every budget change.
Its figure asked for plotly's 70 px left margin: plotly's automargin measured the writer names,
widened the margin (113 px, 146 px in presentation mode, 345 px for an external store's name
and cut mark) and drew the chart again; a legend of two rows pushed the bottom margin the same
way. The figure now asks for the margins automargin finds (figures._ratio_bars_margins).
Checked in Chromium, in the app's font: the margins plotly used are the ones asked for, and
every name is inside the chart.
"""

from __future__ import annotations

import pytest
from browser_utils import chart_margins

EVENT_GRAPH = "package=sample:event-graph-50&budget=130&store=writer:gvt"
# External stores cut to fit: the longest names the Overview draws, and a legend of two kinds
# that wraps to two rows at 1024 px.
EXTERNAL = "package=sample:external-stores-demo&budget=12"


@pytest.mark.parametrize(
    ("query", "present"),
    [(EVENT_GRAPH, False), (EVENT_GRAPH, True), (EXTERNAL, False), (EXTERNAL, True)],
    ids=["writers", "writers-present", "external", "external-present"],
)
def test_overview_ratio_bars_need_no_second_draw(streamlit_server, page, query, present) -> None:
    charts = chart_margins(
        page, f"{streamlit_server}/?{query}" + ("&present=1" if present else ""), 6
    )
    (chart,) = [c for c in charts if c["title"].startswith("Ratio F / OPT")]
    if query == EXTERNAL:
        assert any("Letta (core memory + archival)" in n for n in chart["names"]), chart
        assert chart["legend"] == 2, chart
    # Plotly kept the margins the figure asked for: nothing to push, so one draw.
    assert chart["used"] == chart["asked"], chart
    # ... and every name is inside the chart, a little room to spare at most.
    assert chart["lefts"] and all(left >= 0 for left in chart["lefts"]), chart
    assert min(chart["lefts"]) <= 22, chart
