"""QA s43 (charts), defects of the fixer branch s43-figs.

1. Ablations value chart: on veg-to-pescatarian no_validity equals generic and
   "without:summary" equals the full OPT at every budget, so two legend entries had no visible
   line and a reader thought a curve was missing. The core now names the coinciding curves
   and the page says so under the chart.
2. Exported ratio bars (Overview, PNG / SVG): the bar names sat flush against the values
   inside the bars ("gvt" touching "0.969"), where the app shows a gap: Streamlit's chart
   theme pads the axes by 10 px, kaleido's export by 0.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from pathlib import Path

import pytest
from app_utils import open_linked

from memaudit_core import robustness
from memaudit_core.package import load_package
from memaudit_ui import figures, render

ROOT = Path(__file__).resolve().parents[1]
VEG = ROOT / "sample_packages" / "veg-to-pescatarian.json"
PAGE = "pages/5_Ablations_and_sensitivity.py"


# ----------------------------------------------------------------- 1. coinciding curves


@pytest.fixture(scope="module")
def veg_curves() -> list[robustness.AblationCurve]:
    pkg = load_package(VEG)
    return [
        robustness.ablation_curve(pkg, preset="no_validity"),
        robustness.ablation_curve(pkg, preset="generic"),
        robustness.ablation_curve(pkg, removed_types=["summary"]),
    ]


def _groups_from_values(curves: list[robustness.AblationCurve]) -> set[frozenset[str]]:
    """Lines (the full OPT, each pool's OPT) whose values agree at every budget, pair by pair."""
    lines = {"full": [p.full_opt for p in curves[0].points]}
    lines |= {c.pool: [p.pool_opt for p in c.points] for c in curves}
    names = list(lines)
    groups: dict[str, set[str]] = {n: {n} for n in names}
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            if all(
                math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-9)
                for x, y in zip(lines[a], lines[b], strict=True)
            ):
                groups[a] |= {b}
                groups[b] |= {a}
    return {frozenset(g) for g in groups.values() if len(g) > 1}


def test_the_coinciding_ablation_curves_of_veg_to_pescatarian(veg_curves) -> None:
    expected = _groups_from_values(veg_curves)
    # The QA case, read off the values: two pairs of lines drawn on top of each other.
    assert expected == {
        frozenset({"no_validity", "generic"}),
        frozenset({"full", "without:summary"}),
    }
    got = robustness.coinciding_ablation_curves(veg_curves)
    assert {frozenset(g) for g in got} == expected
    assert all(len(g) == len(set(g)) for g in got)


def test_coincidence_uses_the_value_tolerance_not_equality(veg_curves) -> None:
    """A last-digit difference still draws one line; a visible one does not."""
    no_validity, generic, _ = veg_curves

    def shifted(curve: robustness.AblationCurve, by: float) -> robustness.AblationCurve:
        return replace(
            curve, points=tuple(replace(p, pool_opt=p.pool_opt + by) for p in curve.points)
        )

    near = robustness.coinciding_ablation_curves([no_validity, shifted(generic, 1e-12)])
    assert {frozenset(g) for g in near} == {frozenset({"no_validity", "generic"})}
    apart = robustness.coinciding_ablation_curves([no_validity, shifted(generic, 1e-3)])
    assert apart == ()


def test_the_ablations_page_says_which_curves_hide_each_other() -> None:
    at = open_linked(
        PAGE, "sample:veg-to-pescatarian", None, presets="no_validity,generic", removed="summary"
    )
    value_chart = next(c for c in at.get("plotly_chart") if "Full vs filtered OPT" in c.proto.spec)
    names = re.findall(r'"name":\s*"([^"]+)"', value_chart.proto.spec)
    full, no_validity, generic, without_summary = names[:4]
    assert full.startswith("OPT") and "summary" in without_summary
    captions = [c.value.replace("\\", "") for c in at.caption]
    note = next(c for c in captions if "every budget" in c)
    assert f'"{without_summary}" equals "{full}" at every budget' in note
    assert f'"{no_validity}" and "{generic}" coincide at every budget' in note


# ----------------------------------------------------------------- 2. exported bar labels


@pytest.fixture
def kaleido_server():
    yield
    render._stop_kaleido()


def test_exported_ratio_bars_keep_a_gap_between_names_and_values(kaleido_server) -> None:
    """Through the download's own export path: each bar name ends at least 8 px left of the
    plot area, where the bars and their inside labels start (it was 1 px)."""
    fig = figures.ratio_bars(
        ["gvt", "Validity-aware summariser"],
        [0.969, 0.762],
        ["writer", "store"],
        "Ratio F / OPT at budget 40 words",
        present=True,
    )
    svg = render._image(fig, "svg")().decode("utf-8")
    plot_left = float(re.search(r'class="xy" transform="translate\(([\d.]+),', svg).group(1))
    ticks = re.findall(r'<g class="ytick"><text text-anchor="end" x="([\d.]+)"[^>]*>([^<]+)<', svg)
    assert {name for _, name in ticks} == {"gvt", "Validity-aware summariser"}
    for x, name in ticks:
        assert plot_left - float(x) >= 8, (name, plot_left, x)
    # The figure pads its axes itself, so Streamlit's theme cannot give the app another gap.
    assert fig.layout.margin.pad is not None
