"""Speaker QA s45: presentation mode at 1024 x 768 with the sidebar open.

The speaker opens the sidebar (page links, budget slider) and it stays open: the main column
is then 524 px wide, where the charts had been laid out for 780-824 px. Legends lost their last
entries, "OPT = 1" read "OPT =", the Compare kind chart's value-axis title and kind table's
"value lost" ran past the right edge, and the cost-rule panels (62 px each) turned their ticks
and ran their "1.00" labels into the next panel. Every check below takes the figures the pages
draw for the QA's link and measures them at that width.
"""

from __future__ import annotations

import json
import math

import pytest
from app_utils import APP
from streamlit.testing.v1 import AppTest

from memaudit_ui import figures

#: The main column at 1024 px with the sidebar open in presentation mode (px, measured in
#: Chromium: 1024 - 300 px of sidebar - the page's side padding).
CHART_PX = 524
#: Width of a character (em) in Source Sans, measured in Chromium (titles ran 0.40-0.435 em a
#: character, legend entries about 0.5 em).
EM = 0.5
TITLE_EM = 0.45
#: A plotly legend entry besides its text: the symbol and the gap to the next entry (px).
ENTRY_EXTRA_PX = 70
#: Height of a legend row as plotly draws it, in legend font sizes (30 px rows at 21 px).
ROW_EM = 1.4
#: Tallest chart on one 1280 x 720 screen (px); taller ones scroll.
PRESENT_MAX_PX = 630
#: Bottom of a chart title's glyphs from the figure's top (px, Chromium): 40 px for one line,
#: 88 for two.
TITLE_BOTTOM_PX = 40
TITLE_LINE_PX = 48
#: The least plot (px) a chart keeps at 524 px with its legend's rows.
MIN_PLOT_PX = 300

QUERY = {
    "package": "sample:veg-to-pescatarian",
    "budget": "12",
    "store": "store:fact-only",
    "present": "1",
}


def _page_figures(page: str) -> tuple[list[dict], AppTest]:
    at = AppTest.from_file(str(APP), default_timeout=240)
    for name, value in QUERY.items():
        at.query_params[name] = value
    at.run()
    if page != "app.py":
        at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")], at


@pytest.fixture(scope="module")
def pages() -> dict[str, tuple[list[dict], AppTest]]:
    return {
        name: _page_figures(path)
        for name, path in (
            ("overview", "app.py"),
            ("sweep", "pages/1_Budget_sweep.py"),
            ("compare", "pages/2_Compare.py"),
            ("ablations", "pages/5_Ablations_and_sensitivity.py"),
        )
    }


def _title(fig: dict) -> str:
    title = fig["layout"].get("title") or {}
    return title.get("text", "") if isinstance(title, dict) else str(title)


def _chart(figs: list[dict], start: str) -> dict:
    (fig,) = [f for f in figs if _title(f).replace("<br>", " ").startswith(start)]
    return fig


def _legend_rows_at(fig: dict, width_px: float) -> int:
    """The rows plotly's horizontal legend takes ``width_px`` wide: one row if every entry fits
    side by side, else a grid with columns as wide as the widest entry."""
    font = fig["layout"]["legend"]["font"]["size"]
    names = [
        t["name"]
        for t in fig["data"]
        if t.get("name") and t.get("showlegend", True) and t.get("visible", True) is not False
    ]
    widths = [ENTRY_EXTRA_PX + EM * font * len(n) for n in names]
    if sum(widths) <= width_px:
        return 1
    return math.ceil(len(names) / max(1, int(width_px // max(widths))))


@pytest.mark.parametrize(
    "page, start, entries, above",
    [
        ("sweep", "F and OPT vs budget", 5, False),
        # Its two-line title and 4 rows at 524 px with a 300 px plot need more than a screen.
        ("sweep", "Ratio F / OPT vs budget", 4, True),
        ("overview", "Candidate cost distribution", 5, False),
    ],
)
def test_every_legend_entry_is_inside_the_chart(pages, page, start, entries, above) -> None:
    fig = _chart(pages[page][0], start)
    layout = fig["layout"]
    legend = layout["legend"]
    shown = [t for t in fig["data"] if t.get("name") and t.get("showlegend", True)]
    assert len(shown) == entries
    # From the figure's edge, where plotly keeps the whole legend and takes the rows it wraps
    # to at the chart's width from the plot (speaker QA s46: the bottom margin held the rows
    # of 524 px at every width, and nine curves left the Budget sweep a 159 px plot).
    assert legend["yref"] == "container" and legend["x"] == 0 and legend["xanchor"] == "left"
    height = layout["height"]
    scrolls = (layout.get("meta") or {}).get(figures.SCROLLS_META) is True
    assert (height > PRESENT_MAX_PX) == above == scrolls, (start, height)
    if above:
        # Past one screen: under the title, on screen with it, and the chart scrolls.
        lines = _title(fig).count("<br>") + 1
        title_px = TITLE_BOTTOM_PX + TITLE_LINE_PX * (lines - 1)
        assert legend["yanchor"] == "top"
        assert title_px <= (1 - legend["y"]) * height < layout["margin"]["t"], start
    else:
        # Along the bottom edge, under the x axis's ticks and title.
        assert legend["yanchor"] == "bottom" and legend["y"] == 0
    # The x axis's room is measured in the browser (the legend's rows come under it) and the
    # bottom margin holds no legend row.
    axis = layout["xaxis"]
    axis_px = axis["tickfont"]["size"] + 8 + 1.3 * axis["title"]["font"]["size"]
    assert axis["automargin"] is True
    row_px = ROW_EM * legend["font"]["size"]
    assert axis_px <= layout["margin"]["b"] < axis_px + row_px
    # Every row the legend takes at 524 px, and the plot stays readable: plotly puts the plot's
    # top under a legend above it, and the legend's rows under the axis otherwise.
    rows = _legend_rows_at(fig, CHART_PX - layout["margin"]["l"])
    legend_px = rows * row_px
    if above:
        top_px = max(layout["margin"]["t"], (1 - legend["y"]) * height + legend_px)
        plot_px = height - top_px - layout["margin"]["b"]
    else:
        plot_px = height - layout["margin"]["t"] - layout["margin"]["b"] - legend_px
    assert plot_px >= MIN_PLOT_PX, (start, rows, plot_px)


def test_opt_line_label_is_inside_the_chart(pages) -> None:
    fig = _chart(pages["overview"][0], "Ratio F / OPT at budget")
    layout = fig["layout"]
    names = [str(y) for t in fig["data"] for y in t["y"]]
    tick_px = layout["yaxis"]["tickfont"]["size"]
    names_px = max(layout["margin"]["l"], EM * tick_px * max(map(len, names)) + 10)
    plot_px = CHART_PX - layout["margin"]["r"] - names_px
    start, end = layout["xaxis"]["range"]
    line_px = names_px + plot_px * (1.0 - start) / (end - start)
    (label,) = [a for a in layout["annotations"] if a["text"] == "OPT = 1"]
    font = layout["font"]["size"]
    width = EM * font * len(label["text"]) + 8
    # Right of the line, or ending at it above the plot (speaker QA s50).
    left = line_px + label.get("xshift", 0) - (width if label["xanchor"] == "right" else 0)
    assert 0 <= left and left + width <= CHART_PX, (left, width, CHART_PX)


def test_compare_value_axis_title_is_inside_the_chart(pages) -> None:
    fig = _chart(pages["compare"][0], "Value kept by kind bucket")
    layout = fig["layout"]
    y = layout["yaxis"]
    names = [str(v) for t in fig["data"] for v in t["y"]]
    names_px = (
        EM * y["tickfont"]["size"] * max(map(len, names))
        + y.get("ticklabelstandoff", 0)
        + 1.3 * y["title"]["font"]["size"]
    )
    plot_px = CHART_PX - layout["margin"]["r"] - names_px
    centre = names_px + plot_px / 2  # an axis title is centred on the plot
    title = layout["xaxis"]["title"]
    for line in title["text"].split("<br>"):
        half = EM * title["font"]["size"] * len(line) / 2
        assert centre + half <= CHART_PX, (line, centre + half)
    # Every title line sits above the legend.
    lines = title["text"].count("<br>") + 1
    legend_top_px = -layout["legend"]["y"] * (
        layout["height"] - layout["margin"]["t"] - layout["margin"]["b"]
    )
    under_px = y["tickfont"]["size"] + 8 + 1.3 * title["font"]["size"] * lines
    assert legend_top_px >= under_px, (legend_top_px, under_px)


def test_compare_kind_table_keeps_value_lost_on_screen(pages) -> None:
    at = pages["compare"][1]
    (kinds,) = [t.value for t in at.table if "bucket" in t.value.columns]
    columns = list(kinds.columns)
    # The values right after the bucket (QA s49: after the unit kinds they were off screen).
    assert columns[:4] == ["bucket", "store value", "OPT value", "value lost"], columns
    # The bucket's unit kinds (a list, the widest column) are in the caption and the CSV.
    assert "unit kinds" not in columns, columns


def test_cost_rule_panels_keep_labels_and_ticks_inside(pages) -> None:
    fig = _chart(pages["ablations"][0], "Mean ratio per writer and cost rule")
    layout = fig["layout"]
    writers = [str(w) for w in fig["data"][0]["y"]]
    tick_px = layout["yaxis"]["tickfont"]["size"]
    names_px = EM * tick_px * max(map(len, writers)) + 20
    plot_px = CHART_PX - names_px - layout["margin"]["r"]
    bars = [t for t in fig["data"] if t["type"] == "bar"]
    assert len(bars) == 5
    axes = {k: v for k, v in layout.items() if k.startswith("xaxis")}
    used = {("xaxis" + t.get("xaxis", "x")[1:]) for t in bars}
    domains = sorted(axes[a]["domain"] for a in used)
    starts = sorted({d[0] for d in domains})
    pitch_px = min((b - a) for a, b in zip(starts, starts[1:], strict=False)) * plot_px
    for name in used:
        axis = axes[name]
        panel_px = (axis["domain"][1] - axis["domain"][0]) * plot_px
        end = axis["range"][1]
        # A full bar and its longest label ("1.000" since QA s50) end before the next panel.
        chars = max(len(text) for t in bars for text in t["text"])
        label_px = EM * bars[0]["textfont"]["size"] * chars + 4
        assert panel_px / end + label_px <= pitch_px, (name, panel_px, end)
        # Tick labels side by side, upright: room between ticks for the widest label.
        ticks = axis["tickvals"]
        widest = max(len(str(t)) for t in axis["ticktext"])
        step_px = min(b - a for a, b in zip(ticks, ticks[1:], strict=False)) * panel_px / end
        assert step_px >= EM * tick_px * widest + 8, (name, step_px)


@pytest.mark.parametrize("page", ["overview", "sweep", "compare", "ablations"])
def test_chart_titles_fit_the_chart(pages, page) -> None:
    for fig in pages[page][0]:
        font = fig["layout"]["title"]["font"]["size"]
        for line in _title(fig).split("<br>"):
            assert TITLE_EM * font * len(line) <= 0.95 * CHART_PX, line
