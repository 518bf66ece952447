"""Speaker QA s50: presentation mode at 1024 px with the sidebar open, and the timeline's ids.

1. The Overview's ratio bars had about 140 of the 524 px column for 0..1 (gvt 0.969 and
   density 0.725 35 px apart): an empty y title kept plotly's title room beside the names, and
   "OPT = 1" right of the line took ~110 px of range and margin past 1. The table below
   repeated "OPT = 16.3" on every row, wrapped onto three lines (10 rows, ~900 px).
2. The Evidence explorer's timeline left e09 (no store wrote it) without its label at every
   width, although the 13 ids fit on two staggered lines.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from app_utils import APP, capture_downloads
from streamlit.testing.v1 import AppTest

QUERY = {
    "package": "sample:travel-assistant",
    "budget": "40",
    "store": "store:fact-extractor",
    "present": "1",
}
PACKAGE = Path(__file__).resolve().parent.parent / "sample_packages" / "travel-assistant.json"
#: The main column at 1024 px with the sidebar open in presentation mode (px, Chromium).
CHART_PX = 524
#: The timeline's design width in presentation mode (px): the same column less its padding.
TIMELINE_PX = 520
#: Width of a character (em) in Source Sans (Chromium: "Validity-aware summariser", 25
#: characters at 19 px, is 212 px; ids about 0.5 em).
EM = 0.5
#: Space between the names and the plot (plotly's pad and tick standoff, px).
NAMES_GAP_PX = 12
#: Least width (px) for 0..1 at 524 px: 0.969 and 0.725 then stand at least 50 px apart.
MIN_UNIT_PX = 210


def _run(page: str, monkeypatch=None) -> tuple[AppTest, list[dict], dict]:
    offered = capture_downloads(monkeypatch) if monkeypatch is not None else {}
    at = AppTest.from_file(str(APP), default_timeout=240)
    for name, value in QUERY.items():
        at.query_params[name] = value
    at.run()
    if page != "app.py":
        at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at, [json.loads(c.proto.spec) for c in at.get("plotly_chart")], offered


def _chart(charts: list[dict], start: str) -> dict:
    (fig,) = [f for f in charts if f["layout"]["title"]["text"].startswith(start)]
    return fig


@pytest.fixture(scope="module")
def overview():
    mp = pytest.MonkeyPatch()
    try:
        yield _run("app.py", mp)
    finally:
        mp.undo()


def test_ratio_bars_take_the_column_at_1024_with_the_sidebar_open(overview) -> None:
    _, charts, _ = overview
    layout = _chart(charts, "Ratio F / OPT at budget 40")["layout"]
    # No y title, not an empty one: plotly keeps an empty title's standoff and line.
    assert layout["yaxis"].get("title", {}).get("text") is None, layout["yaxis"]["title"]
    names = [str(y) for t in _chart(charts, "Ratio F")["data"] for y in t["y"]]
    tick_px = layout["yaxis"]["tickfont"]["size"]
    names_px = EM * tick_px * max(map(len, names)) + NAMES_GAP_PX
    start, end = layout["xaxis"]["range"]
    plot_px = CHART_PX - names_px - layout["margin"]["r"]
    unit_px = plot_px / (end - start)
    assert unit_px >= MIN_UNIT_PX, (unit_px, layout["margin"]["r"], end)


def test_opt_label_stands_above_the_plot_inside_the_chart(overview) -> None:
    _, charts, _ = overview
    layout = _chart(charts, "Ratio F / OPT at budget 40")["layout"]
    (label,) = [a for a in layout["annotations"] if a["text"] == "OPT = 1"]
    # On the plot's top edge, drawn upwards: above every bar.
    assert (label["yref"], label["y"], label["yanchor"]) == ("y domain", 1, "bottom")
    # And below the title (one line, its glyphs end 40 px down: test_s45_present1024).
    font = layout["font"]["size"]
    assert layout["margin"]["t"] - label.get("yshift", 0) >= 40 + 1.25 * font
    # Ending at the line, within the column.
    assert label["x"] == 1.0 and label["xanchor"] == "right"
    names = [str(y) for t in _chart(charts, "Ratio F")["data"] for y in t["y"]]
    names_px = EM * layout["yaxis"]["tickfont"]["size"] * max(map(len, names)) + NAMES_GAP_PX
    start, end = layout["xaxis"]["range"]
    line_px = names_px + (CHART_PX - names_px - layout["margin"]["r"]) * (1 - start) / (end - start)
    width = EM * font * len(label["text"]) + 8
    assert 0 <= line_px + label.get("xshift", 0) - width and line_px <= CHART_PX


def test_overview_table_says_the_denominator_once(overview) -> None:
    at, _, offered = overview
    (metric,) = [m.value for m in at.metric if m.label == "OPT"]
    opt = f"{float(metric):g}"  # "16.3000" on the metric
    (table,) = [t.value for t in at.table if "writer / store" in t.value.columns]
    # No column of "OPT = 16.3" on every row, each wrapped onto three lines.
    assert "ratio of F to" not in table.columns, list(table.columns)
    assert len(table) == 10
    # Markdown's escapes ("OPT \\= 16\\.3") taken out.
    captions = [c.value.replace("\\", "") for c in at.caption if c.value.startswith("On every")]
    assert f"On every row: ratio of F to OPT = {opt}" in captions, captions
    # The CSV keeps the column on every row.
    csv = offered["overview_table_csv"]["data"]
    text = (csv() if callable(csv) else csv).decode("utf-8")
    header, *rows = text.strip().splitlines()
    assert "ratio of F to" in header.split(",")
    assert len(rows) == 10 and all(f"OPT = {opt}" in row for row in rows), rows


def test_timeline_labels_every_experience_when_they_fit() -> None:
    _, charts, _ = _run("pages/3_Evidence_explorer.py")
    fig = _chart(charts, "Memory written per experience")
    axis = fig["layout"]["xaxis"]
    ids = [e["id"] for e in json.loads(PACKAGE.read_text())["experiences"]]
    assert len(ids) == 13
    shown = [t.replace("<br>", "") for t in axis["ticktext"]]
    # e09, which no store wrote, too.
    assert shown == ids, shown
    # Room for them: on each line, neighbours' labels stand apart at the design width.
    font = axis["tickfont"]["size"]
    margin = fig["layout"]["margin"]
    per_px = (TIMELINE_PX - margin["l"] - margin["r"]) / (axis["range"][1] - axis["range"][0])
    lines: dict[int, list[tuple[float, str]]] = {}
    for value, text in zip(axis["tickvals"], axis["ticktext"], strict=True):
        lines.setdefault(text.count("<br>"), []).append((value * per_px, text))
    for line in lines.values():
        for (a, ta), (b, tb) in zip(line, line[1:], strict=False):
            half = EM * font * (len(ta.replace("<br>", "")) + len(tb.replace("<br>", ""))) / 2
            assert b - a >= half + 4, (ta, tb, b - a)
