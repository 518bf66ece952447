"""QA s44 (charts2): the sweep report's figure and the cost-rule chart on a projector.

1. ``memaudit sweep`` over memaudit-small:0-49, update_chain and temporal_interval wrote one
   figure, "Mean ratio F / OPT by method over 52 package(s) (95% bootstrap CI)": it averaged
   50 packages of one family with one of each other, unsaid, with no figure per family; and
   its +-0.02 CI whiskers were drawn under 10-13 px markers, so no CI showed.
2. The cost-rule chart in presentation mode printed "words", "as_stored on bytes_overhead's
   5 budgets" and "bytes_overhead" on top of each other, and at 1024 px its axis text lost
   "> 0"; in normal mode at 1024 px the axis title was cut the same way.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from memaudit_core import load_package, suites
from memaudit_core.robustness import cost_rule_sensitivity
from memaudit_core.suites import sweep_figure, sweep_suite, write_sweep_outputs
from memaudit_ui import figures

SAMPLES = Path(__file__).resolve().parent.parent / "sample_packages"
#: The height the report's PNGs are written at (1100 x 560).
PNG_HEIGHT = 560
#: Average glyph width of the app's sans font, in em (measured on screenshots: "bytes_overhead"
#: at 18 px is about 120 px wide).
EM_PER_CHAR = 0.5


# --------------------------------------------------------------------------- 1. sweep figure


@pytest.fixture(scope="module")
def mixed():
    # 10 + 1 + 1 packages: the counts the figure must name, from the spec itself (10: the
    # fewest a CI is drawn over, QA s46).
    return sweep_suite(
        families=["memaudit-small:0-9", "update_chain", "temporal_interval"],
        budgets=[3, 6],
        writers=["gvt", "density"],
    )


def _lines(fig):
    return [t for t in fig.data if not t.name.endswith(": 95% CI")]


def _whiskers(fig):
    return [t for t in fig.data if t.name.endswith(": 95% CI")]


def test_the_pooled_figure_says_it_pools_families_with_their_sizes(mixed) -> None:
    title = sweep_figure(mixed).layout.title.text
    first = title.split("<br>")[0]
    assert "3 families pooled" in first
    assert "memaudit-small 10" in title
    assert "update_chain 1" in title and "temporal_interval 1" in title
    assert "mean_ratio_by_family.png" in title


def test_ci_whiskers_are_drawn_above_markers_and_wider_than_them(mixed) -> None:
    fig = sweep_figure(mixed)
    lines, whiskers = _lines(fig), _whiskers(fig)
    assert lines and whiskers
    last_line = max(fig.data.index(t) for t in lines)
    assert all(fig.data.index(w) > last_line for w in whiskers)  # drawn later: on top
    biggest = max(t.marker.size for t in lines)
    for w in whiskers:
        assert w.error_y.thickness >= 2
        assert 2 * w.error_y.width > biggest  # the caps reach past every marker
    # Every pooled point (n = 12 >= 10) has a whisker: 2 methods x 2 budgets.
    assert sum(len(w.x) for w in whiskers) == 4


def test_a_ci_narrower_than_its_marker_is_said(mixed) -> None:
    fig = sweep_figure(mixed)
    layout = fig.layout
    lo, hi = layout.yaxis.range
    px_per_ratio = (PNG_HEIGHT - layout.margin.t - layout.margin.b) / (hi - lo)
    size = {t.name: t.marker.size for t in _lines(fig)}
    hidden = 0
    for w in _whiskers(fig):
        marker = size[w.name.removesuffix(": 95% CI")]
        for up, down in zip(w.error_y.array, w.error_y.arrayminus, strict=True):
            hidden += (up + down) * px_per_ratio < marker
    assert hidden >= 1  # gvt's CI at budget 6 is [1, 1]
    assert f"at {hidden} of 4 point(s) the CI is narrower than the marker" in layout.title.text


def test_a_figure_per_family_has_each_familys_own_means(mixed) -> None:
    fig = suites.sweep_family_figure(mixed)
    titles = [a.text for a in fig.layout.annotations if a.text.endswith("package(s))")]
    assert titles == [
        "memaudit-small (10 package(s))",
        "temporal_interval (1 package(s))",
        "update_chain (1 package(s))",
    ]
    want: dict[tuple[str, str, float], list[float]] = defaultdict(list)
    for r in mixed.rows:
        if r.ratio is not None:
            want[(r.family, r.method, r.budget)].append(r.ratio)
    axis_family = {"x": "memaudit-small", "x2": "temporal_interval", "x3": "update_chain"}
    got = {}
    for t in _lines(fig):
        for b, y in zip(t.x, t.y, strict=True):
            got[(axis_family[t.xaxis], t.name, b)] = y
    assert got.keys() == want.keys()
    for key, ratios in want.items():
        assert got[key] == pytest.approx(sum(ratios) / len(ratios), abs=1e-12)
    # Whiskers only where a family has ten packages or more (QA s46).
    assert {w.xaxis for w in _whiskers(fig)} == {"x"}


def test_the_report_links_the_per_family_figure(mixed, tmp_path) -> None:
    files, notes = write_sweep_outputs(mixed, tmp_path)
    assert not notes
    png = tmp_path / "figures" / "mean_ratio_by_family.png"
    assert str(png) in files and png.stat().st_size > 0
    report = (tmp_path / "report.md").read_text()
    assert "](figures/mean_ratio_by_family.png)" in report
    assert report.index("## By family") < report.index("figures/mean_ratio_by_family.png")


def test_one_family_gets_no_pooled_wording_and_no_family_figure() -> None:
    res = sweep_suite(families=["memaudit-small:0-2"], budgets=[3], writers=["gvt"])
    assert suites.sweep_family_figure(res) is None
    assert "pooled" not in sweep_figure(res).layout.title.text


# --------------------------------------------------------------------------- 2. cost rules

#: The chart's width in a 1024 x 768 window (presentation / normal), both with the sidebar open
#: (the speaker opens it, speaker QA s45), and the writer names' room left of the plot
#: (measured on screenshots).
PRESENT_1024_PX, NORMAL_1024_PX, NAMES_PX = 524, 564, 180


@pytest.fixture(scope="module")
def veg_sens():
    veg = load_package(SAMPLES / "veg-to-pescatarian.json")
    return cost_rule_sensitivity(veg, veg.budget_grid())


def _width(line: str, px: float) -> float:
    return len(line) * EM_PER_CHAR * px


def test_projector_panel_titles_do_not_run_into_each_other(veg_sens) -> None:
    fig = figures.cost_rule_ratio_chart(veg_sens, "t", present=True)
    plot_px = PRESENT_1024_PX - NAMES_PX - (fig.layout.margin.r or 0)
    panel = [a for a in fig.layout.annotations if "mean ratio" not in a.text]
    assert len(panel) == 5
    assert any("budgets of" in a.text for a in panel)
    # Titles rise from their panel: their last lines share a row with the neighbours' in the
    # same row of panels.
    rows = defaultdict(list)
    for a in panel:
        rows[round(a.y, 6)].append(a)
    for row in rows.values():
        row.sort(key=lambda a: a.x)
        last = [(a.text.split("<br>")[-1], a.font.size, a.x) for a in row]
        for (left, lpx, lx), (right, rpx, rx) in zip(last, last[1:], strict=False):
            room = (rx - lx) * plot_px
            assert (_width(left, lpx) + _width(right, rpx)) / 2 < room, (left, right)
    # Every line inside the chart, the right-hand panel's too.
    for a in panel:
        for line in a.text.split("<br>"):
            half = _width(line, a.font.size) / 2
            assert 0 <= NAMES_PX + a.x * plot_px - half, line
            assert NAMES_PX + a.x * plot_px + half <= PRESENT_1024_PX, line


def test_projector_axis_text_keeps_its_end(veg_sens) -> None:
    fig = figures.cost_rule_ratio_chart(veg_sens, "t", present=True)
    (axis,) = [a for a in fig.layout.annotations if "mean ratio" in a.text]
    margin_r = fig.layout.margin.r or 0
    # Centred where the annotation puts it: the plot's middle, shifted.
    centre = NAMES_PX + (PRESENT_1024_PX - NAMES_PX - margin_r) / 2 + (axis.xshift or 0)
    assert axis.text.endswith("have OPT > 0")
    lines = axis.text.split("<br>")
    for line in lines:
        half = _width(line, axis.font.size) / 2
        assert 0 <= centre - half and centre + half <= PRESENT_1024_PX, line
    # Under the ticks the lines must fit the bottom margin.
    assert fig.layout.margin.b >= -(axis.yshift or 0) + 1.2 * axis.font.size * len(lines)


def test_normal_axis_title_fits_a_1024_window(veg_sens) -> None:
    fig = figures.cost_rule_ratio_chart(veg_sens, "t")
    title = fig.layout.xaxis.title
    plot_px = NORMAL_1024_PX - NAMES_PX + 30
    assert title.text.endswith("have OPT > 0")
    assert all(_width(line, title.font.size) < plot_px for line in title.text.split("<br>"))
