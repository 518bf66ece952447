"""QA s46: the CLI sweep report's ratio figures (figures/mean_ratio.png, mean_ratio_by_family.png).

1. ``memaudit sweep --family random_coverage:0-3``: each seed has its own budget grid, so every
   point was one package, yet the figure was titled a mean over 4 packages and the points of
   four packages were joined into a sawtooth (only equal n was checked). Points are joined
   only when they average the same packages, and the figure says why they are not.
2. The "OPT = 1" label of the dashed line sat left of the plot, on the y-axis tick "1".
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict

import pytest

from memaudit_core.generators import generate
from memaudit_core.package import save_package
from memaudit_core.suites import sweep_family_figure, sweep_figure, sweep_suite

#: The height the report writes its figures at (suites.render_figures).
PNG_HEIGHT = 560


def _lines(fig):
    return [t for t in fig.data if not t.name.endswith(": 95% CI")]


def _packages_per_point(res) -> dict[tuple[str, float], set[str]]:
    """(method, budget) -> the packages with a defined ratio there, from the rows."""
    out: dict[tuple[str, float], set[str]] = defaultdict(set)
    for r in res.rows:
        if r.ratio is not None:
            out[(r.method, r.budget)].add(r.source)
    return out


@pytest.fixture(scope="module")
def own_grids():
    """Three random_coverage packages: each seed's budgets are its own."""
    return sweep_suite(
        families=["random_coverage:0-2"],
        params={"n_groups": "12", "candidates_per_group": "3"},
        writers=["gvt", "density"],
        figures=False,
    )


def test_points_of_different_packages_are_not_joined_nor_called_a_mean(own_grids) -> None:
    behind = _packages_per_point(own_grids)
    # The premise: every point is one package, and the packages differ along a line.
    assert all(len(p) == 1 for p in behind.values())
    for method in ("gvt", "density"):
        assert len(set().union(*(p for (m, _), p in behind.items() if m == method))) == 3
    fig = sweep_figure(own_grids)
    lines = _lines(fig)
    assert {t.name for t in lines} == {"gvt", "density"}
    assert all(t.mode == "markers" for t in lines)
    title, *subtitle = fig.layout.title.text.split("<br>")
    assert "over 3 package(s)" not in title
    assert "mean" not in title.lower()
    assert "one package per point (3 packages)" in title
    assert any("each point is one package" in t and "not joined" in t for t in subtitle)
    assert fig.layout.yaxis.title.text == "ratio F / OPT"


def _folder_of_two_grids(tmp_path):
    """Four packages: two with budgets 1, 2 and two with budgets 3, 4 (n = 2 at every point)."""
    for seed in range(4):
        pkg = generate("memaudit-small", seed=seed)
        pkg = dataclasses.replace(pkg, budgets=(1.0, 2.0) if seed < 2 else (3.0, 4.0))
        save_package(pkg, tmp_path / f"p{seed}.json")
    return sweep_suite([str(tmp_path)], writers=["gvt"], figures=False)


def test_points_of_equal_n_but_other_packages_are_not_joined(tmp_path) -> None:
    res = _folder_of_two_grids(tmp_path)
    behind = _packages_per_point(res)
    assert {len(p) for p in behind.values()} == {2}  # the same n everywhere
    assert behind[("gvt", 1.0)] != behind[("gvt", 3.0)]
    fig = sweep_figure(res)
    (line,) = _lines(fig)
    assert line.mode == "markers"
    assert "points average different packages (n = 2): points not joined" in (fig.layout.title.text)


def test_points_of_the_same_packages_are_still_joined() -> None:
    res = sweep_suite(families=["memaudit-small:0-2"], writers=["gvt"], figures=False)
    behind = _packages_per_point(res)
    assert len({frozenset(p) for p in behind.values()}) == 1
    fig = sweep_figure(res)
    (line,) = _lines(fig)
    assert line.mode == "lines+markers"
    assert "not joined" not in fig.layout.title.text
    assert fig.layout.title.text.startswith("gvt: mean ratio F / OPT over 3 package(s)")


def test_the_family_figure_says_why_its_points_are_not_joined() -> None:
    res = sweep_suite(
        families=["event_graph:0-1", "update_chain:0"],
        writers=["gvt"],
        figures=False,
    )
    grids: dict[str, set[float]] = defaultdict(set)
    for r in res.rows:
        if r.family == "event_graph":
            grids[r.source].add(r.budget)
    assert len(grids) == 2 and not set.intersection(*grids.values())  # their own grids
    fig = sweep_family_figure(res)
    modes = {t.xaxis: t.mode for t in _lines(fig)}
    # event_graph (first panel, x): two seeds' own grids; update_chain (x2): one package.
    assert modes == {"x": "markers", "x2": "lines+markers"}
    assert "each point is one package" in fig.layout.title.text
    # The title block starts at the top: three subtitle lines no longer reach the panels.
    assert fig.layout.title.yanchor == "top"


def test_the_opt_label_stands_clear_of_the_ticks_and_the_points(own_grids) -> None:
    fig = sweep_figure(own_grids)
    layout = fig.layout
    (label,) = [a for a in layout.annotations if "OPT = 1" in a.text]
    # At the plot's right end (the y-axis ticks are at its left), inside the plot.
    assert (label.xref, label.x, label.xanchor) == ("paper", 1.0, "right")
    assert label.yanchor == "bottom"
    # Above every point and CI end of the sweep, by more than a marker's half height.
    top = max(
        max(s.mean_ratio, s.ci_high or 0.0) for s in own_grids.summary if s.mean_ratio is not None
    )
    assert label.y >= max(top, 1.0)
    biggest = max(t.marker.size + 2 * t.marker.line.width for t in _lines(fig))
    assert label.yshift > biggest / 2
    # And the axis leaves room for the label's 16 px line above that.
    lo, hi = layout.yaxis.range
    px_per_ratio = (PNG_HEIGHT - layout.margin.t - layout.margin.b) / (hi - lo)
    assert (hi - label.y) * px_per_ratio >= label.yshift + 16
