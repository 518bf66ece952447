"""QA s44 (sweep figures): the sweep report's figures, read by a reviewer.

1. The per-family figure's legend was the first panel's: a sweep of chars-unit event_graph
   packages and memaudit-small (words) listed only the chars lines; and every panel's axis
   title named the whole sweep's units.
2. From four families on, a panel title sat on the axis title of the row above (the rows'
   gap was 0.12 / rows of the figure, about 37 px).
3. CI whiskers were all one dark colour at the budget itself: two overlapping CIs read as
   one bar with four caps.
4. A run that no longer drew the per-family figure, or a --no-figures run, into the same
   --out left the earlier run's PNGs beside the new report.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from memaudit_core.audit import audit
from memaudit_core.generators import generate
from memaudit_core.package import save_package
from memaudit_core.suites import sweep_family_figure, sweep_figure, sweep_suite

#: plotly's fonts in these figures: layout font 16 px for tick labels, axis titles at
#: round(1.2 x 16) (plotly.js "bigFont"), panel titles 16 px (make_subplots); a text line is
#: about 1.2 em high. plotly.js sets an x axis title about 10 px + 1.5 em below its tick
#: labels (its baseline; the descent is 0.3 em more).
TICK_FONT, AXIS_TITLE_FONT, PANEL_TITLE_FONT, LINE_EM = 16, 19, 16, 1.2


def _lines(fig):
    return [t for t in fig.data if not t.name.endswith(": 95% CI")]


def _whiskers(fig):
    return [t for t in fig.data if t.name.endswith(": 95% CI")]


@pytest.fixture(scope="module")
def mixed_units(tmp_path_factory):
    # Ten chars-unit event_graph packages (files) beside ten memaudit-small (words): ten is
    # the fewest a CI is drawn over (QA s46).
    folder = tmp_path_factory.mktemp("chars")
    paths = []
    for seed in range(1, 11):
        pkg = generate("event_graph", seed, n_experiences=12, cost_rule="chars")
        save_package(pkg, folder / f"c{seed}.json")
        paths.append(str(folder / f"c{seed}.json"))
    return sweep_suite(
        paths, ["memaudit-small:0-9"], budgets=[4, 8, 20], writers=["density", "recency"]
    )


# --------------------------------------------------------------------------- 1. legend


def test_the_family_legend_lists_every_line_drawn_in_any_panel(mixed_units) -> None:
    fig = sweep_family_figure(mixed_units)
    units = {(r.method, r.cost_unit) for r in mixed_units.rows if r.ratio is not None}
    assert {u for _, u in units} == {"chars", "words"}
    want = sorted(f"{m} [budget in {u}]" for m, u in units)
    shown = sorted(t.name for t in fig.data if t.showlegend is not False)
    assert shown == want  # each line once, whichever panel draws it
    # The whisker traces share their line's group, so that a click hides both.
    groups = {t.name: t.legendgroup for t in _lines(fig)}
    assert all(w.legendgroup == groups[w.name.removesuffix(": 95% CI")] for w in _whiskers(fig))


def test_each_panel_names_its_own_cost_unit(mixed_units) -> None:
    fig = sweep_family_figure(mixed_units)
    unit_of = {}
    for r in mixed_units.rows:
        unit_of.setdefault(r.family or "package files", set()).add(r.cost_unit)
    titles = [a.text for a in fig.layout.annotations if a.text.endswith("package(s))")]
    assert len(titles) == len(unit_of) == 2
    # make_subplots numbers its panels as it orders their titles: x, x2, ...
    for i, title in enumerate(titles):
        (unit,) = unit_of[title.split(" (")[0]]
        axis = fig.layout[f"xaxis{i + 1 if i else ''}"]
        assert axis.title.text == f"budget ({unit})", (title, axis.title.text)


# --------------------------------------------------------------------------- 2. spacing


@pytest.fixture(scope="module")
def small_sweep():
    return sweep_suite(families=["memaudit-small:0-1"], budgets=[3, 6], writers=["gvt", "density"])


def _as_families(res, n: int):
    # The same rows under n family names: a sweep of n families of two packages each.
    rows = [
        replace(r, family=f"family_{i}", source=f"{r.source}#{i}")
        for i in range(n)
        for r in res.rows
    ]
    return replace(res, rows=tuple(rows))


#: The room plotly needs between the bottom of a row's plots and the top of the next row's:
#: tick labels, the axis title under them (standoff, line, descent) and the panel title.
NEEDED_GAP_PX = (
    LINE_EM * TICK_FONT
    + 10
    + 1.5 * AXIS_TITLE_FONT
    + 0.3 * AXIS_TITLE_FONT
    + LINE_EM * PANEL_TITLE_FONT
    + 2
)


@pytest.mark.parametrize("n_families", range(2, 11))
def test_panel_titles_keep_clear_of_the_row_above(small_sweep, n_families) -> None:
    fig = sweep_family_figure(_as_families(small_sweep, n_families))
    layout = fig.layout
    assert layout.font.size == TICK_FONT
    panel_titles = [a for a in layout.annotations if a.text.endswith("package(s))")]
    assert len(panel_titles) == n_families
    plot_area_px = layout.height - layout.margin.t - layout.margin.b
    y_axes = [layout[k] for k in layout if k.startswith("yaxis")]
    rows = sorted({tuple(a.domain) for a in y_axes}, reverse=True)
    assert len(rows) == -(-n_families // 3)
    for upper, lower in zip(rows, rows[1:], strict=False):
        gap_px = (upper[0] - lower[1]) * plot_area_px
        assert gap_px >= NEEDED_GAP_PX, (gap_px, NEEDED_GAP_PX)
    for bottom, top in rows:  # the figure grows a row at a time: panels stay readable
        assert (top - bottom) * plot_area_px >= 250
    # Panel titles stand on their row's top edge (the room above is theirs), and the top
    # margin holds the title's lines and the first row's panel titles.
    assert {a.y for a in panel_titles} == {top for _, top in rows}
    assert {a.yanchor for a in panel_titles} == {"bottom"}
    title_lines = layout.title.text.count("<br>") + 1
    title_px = LINE_EM * 22 + 20 * (title_lines - 1)
    assert layout.margin.t >= title_px + LINE_EM * PANEL_TITLE_FONT + 40
    # Under the last row: its tick labels and axis title.
    assert layout.margin.b >= NEEDED_GAP_PX - LINE_EM * PANEL_TITLE_FONT - 2


# --------------------------------------------------------------------------- 3. whiskers


def _check_whiskers(fig, *, log: bool = False) -> None:
    colour = {t.name: t.line.color for t in _lines(fig)}
    whiskers = _whiskers(fig)
    assert whiskers
    for w in whiskers:
        assert w.error_y.color == colour[w.name.removesuffix(": 95% CI")]
    for w in whiskers:  # drawn after every line of their panel: over every marker
        panel = [fig.data.index(t) for t in _lines(fig) if t.xaxis == w.xaxis]
        assert fig.data.index(w) > max(panel)
    # At one budget of one panel, each line's whisker has an x of its own, beside its point.
    by_point: dict[tuple[str, float], list[float]] = {}
    budgets = sorted({b for t in _lines(fig) for b in t.x})
    for w in whiskers:
        line = next(t for t in _lines(fig) if t.name == w.name.removesuffix(": 95% CI"))
        same_panel = [t for t in _lines(fig) if t.name == line.name and t.xaxis == w.xaxis]
        assert len(same_panel) == 1
        for x, b in zip(w.x, same_panel[0].x, strict=True):
            by_point.setdefault((w.xaxis, b), []).append(x)
            if log:
                assert 0.9 < x / b < 1.1
            elif len(budgets) > 1:
                gap = min(b2 - b1 for b1, b2 in zip(budgets, budgets[1:], strict=False))
                assert abs(x - b) < 0.4 * gap
    shared = [xs for xs in by_point.values() if len(xs) > 1]
    assert shared  # the sweep has points whose whiskers would merge
    for xs in shared:
        assert len(set(xs)) == len(xs)


def test_whiskers_take_their_lines_colour_and_stand_apart(mixed_units) -> None:
    _check_whiskers(sweep_figure(mixed_units))
    _check_whiskers(sweep_family_figure(mixed_units))


def test_whiskers_stand_apart_on_a_log_budget_axis() -> None:
    res = sweep_suite(
        families=["memaudit-small:0-9"], budgets=[1, 10, 1000], writers=["gvt", "density"]
    )
    fig = sweep_figure(res)
    assert fig.layout.xaxis.type == "log"
    _check_whiskers(fig, log=True)


def test_whiskers_of_a_lone_budget_stay_inside_its_axis() -> None:
    res = sweep_suite(families=["memaudit-small:0-9"], budgets=[6], writers=["gvt", "density"])
    fig = sweep_figure(res)
    lo, hi = fig.layout.xaxis.range
    xs = [x for w in _whiskers(fig) for x in w.x]
    assert len(xs) == 2 and len(set(xs)) == 2
    assert all(lo < x < hi for x in xs) and lo < 6 < hi
    # A few pixels apart on a plot of some 600 px: well within a tenth of the range.
    assert abs(xs[0] - xs[1]) < (hi - lo) / 10


# --------------------------------------------------------------------------- 4. stale PNGs


def _pngs(out: Path) -> set[str]:
    return {p.name for p in (out / "figures").iterdir()}


def test_a_run_removes_the_figures_it_no_longer_draws(tmp_path) -> None:
    out = tmp_path / "out"
    two = ["memaudit-small:0-1", "update_chain"]
    sweep_suite(families=two, budgets=[3], writers=["gvt"], out=out)
    assert _pngs(out) == {"mean_ratio.png", "mean_ratio_by_family.png"}
    (out / "figures" / "mine.png").write_bytes(b"a user's own file")
    (out / "figures" / "notes.txt").write_text("kept")
    # One family of the same journal: no per-family figure now.
    sweep_suite(families=two[:1], budgets=[3], writers=["gvt"], out=out)
    assert _pngs(out) == {"mean_ratio.png", "mine.png", "notes.txt"}
    assert "mean_ratio_by_family" not in (out / "report.md").read_text()
    # --no-figures: the report says no figure was rendered, and none is left to contradict it.
    sweep_suite(families=two[:1], budgets=[3], writers=["gvt"], out=out, figures=False)
    assert "figures not rendered" in (out / "report.md").read_text()
    assert _pngs(out) == {"mine.png", "notes.txt"}
    # New settings replace the journal and the outputs: a user's files stay.
    sweep_suite(families=two, budgets=[4], writers=["gvt"], out=out, figures=False)
    assert _pngs(out) == {"mine.png", "notes.txt"}


def test_an_audit_without_figures_removes_its_earlier_figure(tmp_path) -> None:
    out = tmp_path / "out"
    audit(families=["memaudit-small:0-1"], budgets=[3], out=out)
    assert _pngs(out) == {"solve_times.png"}
    audit(families=["memaudit-small:0-1"], budgets=[3], out=out, figures=False)
    assert "figures not rendered" in (out / "report.md").read_text()
    assert _pngs(out) == set()
