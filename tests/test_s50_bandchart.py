"""QA s50 (bandchart): the seed band's interval at a lone budget, and one palette per writer.

Researcher QA s50 found, on the Budget sweep's seed band over memaudit-small seeds 0-9 at the
one budget 6, markers only, with no interval drawn, under a legend that said "shaded: 95%
bootstrap CI of the mean" (density's CI is [0.364, 0.415], some 10% of the axis): the band is
a fill between two lines, with no area at a lone budget. Such a point now has an error bar in
its line's colour, and the legend says so.

The same QA found gvt's ochre and recency_raw's olive 24 apart (CIE76), one colour on a
projector, and the CLI report drawing gvt blue and density red (plotly's colour cycle) where
the app draws them in its own palette. Both now read one palette, its reference writers at
least 40 apart.
"""

from __future__ import annotations

import itertools
import subprocess
import sys
from dataclasses import replace

import pytest
from test_s46_smalln import _boot, _density_ratios
from test_s47_cvd import CVD, _delta_e

import memaudit_core as ma
from memaudit_core import curves
from memaudit_core.curves import ABLATION_LABELS
from memaudit_core.suites import sweep_family_figure, sweep_figure, sweep_suite
from memaudit_core.writers import BUILTIN_WRITERS
from memaudit_ui import figures

SEEDS = range(10)
WRITERS = ["writer:gvt", "writer:density", "writer:recency_raw"]
#: The reference writers' least CIE76 distance asked for by the QA ("clearly distinct on a
#: projector"), and under a colour-vision deficiency (the project's floor is 12).
MIN_WRITER_DELTA_E = 40.0
MIN_WRITER_DELTA_E_CVD = 15.0


def _bars(fig) -> dict[str, object]:
    """Legend group (method key) -> its error-bar trace, for traces that draw error bars."""
    return {
        t.legendgroup: t
        for t in fig.data
        if t.error_y is not None and t.error_y.array is not None and t.error_y.visible is not False
    }


# --------------------------------------------------------------------------- the band chart


def test_a_one_budget_band_draws_each_interval_as_an_error_bar() -> None:
    band = curves.family_band("memaudit-small", SEEDS, {}, [6], WRITERS)
    fig = figures.family_band_curve(band, "t")
    bars = _bars(fig)
    assert set(bars) == {*WRITERS, "ablation:no_validity_opt"}
    colors = {t.legendgroup: t.line.color for t in fig.data if t.mode == "lines+markers"}
    for key, bar in bars.items():
        (row,) = band.series(key)
        assert list(bar.x) == [6]
        assert bar.error_y.color == colors[key]
        assert bar.y[0] + bar.error_y.array[0] == pytest.approx(row.ci_high)
        assert bar.y[0] - bar.error_y.arrayminus[0] == pytest.approx(row.ci_low)
    # density's interval, bootstrapped here from score()'s ratios: the QA's [0.364, 0.415] drew
    # from the ratios in row order; since session 51 the draws are from the sorted ratios (the
    # interval no longer depends on the order the packages are listed in): [0.365, 0.413].
    lo, hi = _boot(_density_ratios([ma.generate("memaudit-small", seed=s) for s in SEEDS], 6))
    density = bars["writer:density"]
    assert density.y[0] + density.error_y.array[0] == pytest.approx(hi)
    assert density.y[0] - density.error_y.arrayminus[0] == pytest.approx(lo)
    assert round(lo, 3) == 0.365 and round(hi, 3) == 0.413
    names = [t.name for t in fig.data if t.name]
    assert "bars: 95% bootstrap CI of the mean" in names
    assert not any(n.startswith("shaded") for n in names)


def test_a_budget_next_to_an_n_a_budget_gets_a_bar() -> None:
    # Budget 0: OPT = 0 at every seed, so no mean and no interval beside budget 2.
    band = curves.family_band("memaudit-small", SEEDS, {}, [0, 2], ["writer:density"], ablations=())
    assert band.series("writer:density")[0].mean_ratio is None
    fig = figures.family_band_curve(band, "t")
    (bar,) = _bars(fig).values()
    row = band.series("writer:density")[1]
    assert list(bar.x) == [2]
    assert bar.y[0] + bar.error_y.array[0] == pytest.approx(row.ci_high)
    assert bar.y[0] - bar.error_y.arrayminus[0] == pytest.approx(row.ci_low)
    assert "bars: 95% bootstrap CI of the mean" in [t.name for t in fig.data]


def test_a_gap_in_the_band_leaves_the_run_shaded_and_the_lone_budget_barred() -> None:
    band = curves.family_band(
        "memaudit-small", SEEDS, {}, [2, 4, 6, 8], ["writer:density"], ablations=()
    )
    # No interval at 6 (as where fewer than ten seeds have OPT > 0): 2-4 is a band, 8 alone.
    rows = tuple(replace(r, ci_low=None, ci_high=None) if r.budget == 6 else r for r in band.rows)
    fig = figures.family_band_curve(replace(band, rows=rows), "t")
    (bar,) = _bars(fig).values()
    eight = rows[-1]
    assert list(bar.x) == [8]
    assert bar.y[0] + bar.error_y.array[0] == pytest.approx(eight.ci_high)
    assert bar.y[0] - bar.error_y.arrayminus[0] == pytest.approx(eight.ci_low)
    upper = next(t for t in fig.data if t.line.width == 0 and t.fill is None)
    assert list(upper.y[:2]) == pytest.approx([r.ci_high for r in rows[:2]])
    names = [t.name for t in fig.data if t.name]
    assert "95% bootstrap CI of the mean: shaded, or bars at isolated budgets" in names


def test_a_band_over_a_run_of_budgets_has_no_bars() -> None:
    band = curves.family_band("memaudit-small", SEEDS, {}, [4, 6], ["writer:density"])
    fig = figures.family_band_curve(band, "t")
    assert _bars(fig) == {}
    assert "shaded: 95% bootstrap CI of the mean" in [t.name for t in fig.data]


# --------------------------------------------------------------------------- the palette


def _writer_colours() -> dict[str, str]:
    """Each reference writer's line colour as the app's band chart draws it, with OPT's line
    and the ablation's grey (all on one chart)."""
    keys = [f"writer:{w}" for w in BUILTIN_WRITERS]
    band = curves.family_band("memaudit-small", [0], {}, [4], keys)
    fig = figures.family_band_curve(band, "t")
    colours = {t.legendgroup: t.line.color for t in fig.data if t.mode == "lines+markers"}
    assert set(colours) == {*keys, "ablation:no_validity_opt"}
    (opt,) = [s.line.color for s in fig.layout.shapes]
    return {**colours, "OPT": opt}


@pytest.mark.parametrize("vision", list(CVD))
def test_the_reference_writers_opt_and_the_ablation_are_far_apart(vision: str) -> None:
    floor = MIN_WRITER_DELTA_E if vision == "normal" else MIN_WRITER_DELTA_E_CVD
    colours = _writer_colours()
    close = [
        f"{a} {ca} / {b} {cb}: {d:.1f}"
        for (a, ca), (b, cb) in itertools.combinations(colours.items(), 2)
        # OPT's navy and the ablation grey are not this fix's: they stay as they were.
        if {a, b} != {"OPT", "ablation:no_validity_opt"} and (d := _delta_e(ca, cb, vision)) < floor
    ]
    assert close == [], f"under {vision}: {close}"


def test_gvt_and_recency_raw_no_longer_look_alike() -> None:
    colours = _writer_colours()
    assert _delta_e(colours["writer:gvt"], colours["writer:recency_raw"], "normal") >= 40
    assert colours["OPT"] == "#1b4f8a"  # OPT keeps its established navy


def test_the_cli_report_draws_each_method_in_the_app_s_colour_and_marker() -> None:
    writers = ["gvt", "density", "greedy", "fact_only", "summary_only", "recency_raw"]
    writers.append("no_validity_gvt")
    res = sweep_suite(
        families=["memaudit-small:0-9", "update_chain"],
        budgets=[2, 4],
        writers=writers,
        ablations=["no_validity"],
    )
    band = curves.family_band("memaudit-small", [0], {}, [2, 4], [f"writer:{w}" for w in writers])
    app = {
        t.name: (t.line.color, t.marker.symbol[0])
        for t in figures.family_band_curve(band, "t").data
        if t.mode == "lines+markers"
    }
    app["no_validity_opt"] = app.pop(ABLATION_LABELS["no_validity_opt"])
    assert set(app) == {*writers, "no_validity_opt"}
    for fig in (sweep_figure(res), sweep_family_figure(res)):
        cli = {
            t.name: (t.line.color, t.marker.symbol[0].removesuffix("-open"))
            for t in fig.data
            if t.name in app and t.showlegend is not False
        }
        assert cli == app
        # The CI whiskers take their line's colour.
        whiskers = {
            t.name.removesuffix(": 95% CI"): t.error_y.color
            for t in fig.data
            if t.error_y.array is not None
        }
        assert whiskers and all(c == app[m][0] for m, c in whiskers.items())


def test_the_report_figures_need_no_streamlit() -> None:
    code = (
        "import sys, memaudit_core.suites, memaudit_core.palette, memaudit_core.cli; "
        "assert 'streamlit' not in sys.modules and 'memaudit_ui' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
