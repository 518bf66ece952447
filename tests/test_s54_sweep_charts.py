"""The Budget sweep's two charts are drawn once per budget change (s54).

Their figures change with the sidebar's budget (the dotted line), so Streamlit draws them from
scratch on every budget change. They asked for a 70 px left margin and a bottom margin a few
px short of the x axis's ticks and title: plotly's automargin widened both and drew each chart
again. The figures now ask for the margins automargin finds (figures.label_margin_px). Checked
in Chromium, in the app's font: the margins plotly used are the ones asked for (no push), and
every y tick label is inside the chart.
"""

from __future__ import annotations

import pytest
from browser_utils import chart_margins


@pytest.mark.parametrize("present", [False, True])
def test_sweep_charts_need_no_second_draw(streamlit_server, page, present) -> None:
    query = "package=sample:event-graph-50&budget=130&store=writer:gvt"
    charts = chart_margins(
        page, f"{streamlit_server}/Budget_sweep?{query}" + ("&present=1" if present else ""), 8
    )
    assert [c["title"].split(" vs ")[0] for c in charts] == ["F and OPT", "Ratio F / OPT"]
    for chart in charts:
        # Plotly kept the left and bottom margins the figure asked for: nothing to push, so
        # one draw (the top and right ones are not pushed here).
        (asked_l, _, _, asked_b), (used_l, _, _, used_b) = chart["asked"], chart["used"]
        assert [used_l, used_b] == [asked_l, round(asked_b)], chart
        # ... and the tick labels fit in the left one, a little room to spare at most.
        assert chart["lefts"] and all(left >= 0 for left in chart["lefts"]), chart
        assert min(chart["lefts"]) <= (80 if present else 65), chart
