"""The Compare page's kind bars are drawn once per budget change (s53).

A new figure is a new chart to Streamlit, so the chart is drawn from scratch on every budget
change. With plotly's default left margin, automargin found the kind names too wide, widened
the margin and drew the chart again (42 ms of the browser's time, against 20 ms when the margin
fits). The figure now asks for the margin automargin would find. Checked in Chromium, where
plotly measures the names in the app's own font: the margin plotly used is the one the figure
asked for (no push), and every name is inside the chart.
"""

from __future__ import annotations

import pytest
from browser_utils import wait_idle

MEASURE_JS = """() => {
    const g = document.querySelector('[data-testid="stPlotlyChart"] .js-plotly-plot');
    const svg = g.querySelector('.main-svg').getBoundingClientRect();
    const names = [...g.querySelectorAll('.ytick text')].map(t => {
        const r = t.getBoundingClientRect();
        return [t.textContent, r.left - svg.left];
    });
    return {used: g._fullLayout._size.l, asked: g.layout.margin.l, names};
}"""


@pytest.mark.parametrize("present", [False, True])
def test_compare_kind_bars_need_no_second_draw(streamlit_server, page, present) -> None:
    query = "package=sample:event-graph-50&budget=130" + ("&present=1" if present else "")
    page.set_viewport_size({"width": 1024, "height": 900})
    page.goto(f"{streamlit_server}/Compare?{query}")
    page.locator("[data-testid=stPlotlyChart] .main-svg").first.wait_for(timeout=120_000)
    wait_idle(page, timeout_ms=120_000)
    got = page.evaluate(MEASURE_JS)
    assert sorted(n for n, _ in got["names"]) == sorted(
        ["current truth", "invalidation / tombstones", "temporal order", "stale", "other"]
    ), got
    # Plotly kept the margin the figure asked for: nothing to push, so one draw.
    assert got["used"] == got["asked"], got
    # ... and the names fit in it, left of the plot, none cut at the chart's left edge.
    assert all(left >= 0 for _, left in got["names"]), got
    # Not much wider than needed either: left of the widest name only the rotated axis title
    # and its standoff (about 40 px at 14 px, 50 px at 20 px).
    assert min(left for _, left in got["names"]) <= (70 if present else 55), got
