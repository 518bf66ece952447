"""Figures built from plain dicts (``figures.prevalidated_figure``) are what plotly's validating
constructor would build, and never share or change the cached template."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest

from memaudit_ui import figures

CASES = [
    (
        ["current truth", "invalidation / tombstones", "temporal order", "stale", "other"],
        [1.2, 0.5, 0.3, 0.0, 0.7],
        [1.5, 0.9, 0.3, 0.1, 0.8],
        "writer · gvt (oracle)",
        "OPT",
        "Value kept by unit kind at budget 12 tokens: gvt vs OPT",
    ),
    (["other"], [0.0], [0.0], "store · <b>x</b>", "incumbent", "nothing fits"),
    (["a", "b"], list(np.array([0.1234567, 2.5])), list(np.array([0.2, 2.5])), "s", "OPT", "t"),
    ([], [], [], "s", "OPT", "empty"),
]


def _json(fig: go.Figure) -> dict:
    return json.loads(pio.to_json(fig, validate=False))


@pytest.mark.parametrize("present", [False, True])
@pytest.mark.parametrize("case", CASES)
def test_bucket_value_bars_equals_the_validated_figure(case, present) -> None:
    fig = figures.bucket_value_bars(*case, present=present)
    validated = go.Figure(fig.to_dict())  # plotly's validating constructor; raises if invalid
    assert _json(validated) == _json(fig)
    layout = _json(fig)["layout"]
    assert layout["template"] == pio.templates[figures.TEMPLATE].to_plotly_json()
    assert layout["height"] == (621 if present else 460)
    assert [t["type"] for t in _json(fig)["data"]] == ["bar", "bar"]


def test_bucket_value_bars_matches_base_layout() -> None:
    """The dict layout agrees with base_layout + _explain_fonts on an equivalent figure."""
    buckets, store, opt, store_name, opt_name, title = CASES[0]
    fig = figures.bucket_value_bars(*CASES[0])
    ref = go.Figure()
    ref.add_bar(x=buckets, y=opt, name=opt_name)
    figures.base_layout(ref, title, height=460)
    figures._explain_fonts(ref)
    got, want = _json(fig)["layout"], _json(ref)["layout"]
    for key in ("title", "font", "height", "template"):
        assert got[key] == want[key], key
    # Its legend sits below the plot (a long store name met the title, projector QA), with
    # the bottom margin to hold it; fonts as everywhere else.
    assert {k: v for k, v in got["margin"].items() if k not in "bl"} == {
        k: v for k, v in want["margin"].items() if k not in "bl"
    }
    assert got["margin"]["b"] > want["margin"]["b"]
    # The left margin holds the kind names, as plotly's automargin would widen it (s53: one
    # draw per budget change, not two); automargin stays on for a wider font.
    assert got["margin"]["l"] == figures.bucket_margin_px(buckets, 14) > want["margin"]["l"]
    assert got["yaxis"]["automargin"] is True
    assert got["legend"]["font"] == want["legend"]["font"]
    assert got["legend"]["yanchor"] == "top" and got["legend"]["y"] < 0
    for axis in ("xaxis", "yaxis"):
        assert got[axis]["tickfont"] == want[axis]["tickfont"]
        assert got[axis]["title"]["font"] == want[axis]["title"]["font"]


def test_cached_template_is_not_shared_with_figures() -> None:
    before = json.dumps(figures._template_json(figures.TEMPLATE), sort_keys=True)
    fig = figures.bucket_value_bars(*CASES[0])
    fig.layout.template.layout.font.color = "red"
    fig.update_layout(template=None)
    assert json.dumps(figures._template_json(figures.TEMPLATE), sort_keys=True) == before
    again = figures.bucket_value_bars(*CASES[0])
    assert again.layout.template.layout.font.color != "red"


def test_a_reference_writer_keeps_its_colour_across_charts():
    """App QA: gvt was green on one sweep chart and orange on the next (colours followed the
    position in the chosen list)."""
    from types import SimpleNamespace as M

    from memaudit_ui.figures import _method_colors

    one = _method_colors(
        [M(key="writer:density", kind="writer"), M(key="writer:gvt", kind="writer")]
    )
    two = _method_colors(
        [M(key="writer:gvt", kind="writer"), M(key="store:a", kind="store"),
         M(key="ablation:no_validity_opt", kind="ablation")]
    )  # fmt: skip
    assert one["writer:gvt"] == two["writer:gvt"] != one["writer:density"]
    assert two["store:a"] not in (two["writer:gvt"], two["ablation:no_validity_opt"])


def test_ratios_over_an_unproven_incumbent_are_drawn_hollow_with_their_range():
    """App QA: the ratio chart drew a budget whose optimum was only an incumbent like the
    certified ones."""
    from dataclasses import replace

    from memaudit_core import curves
    from memaudit_core.generators import generate

    curve = curves.budget_curve(generate("update_chain"), [3, 6], ["gvt"], ablations=())
    opt = tuple(
        replace(o, certified=False, label="incumbent", bound=o.value * 1.25) if o.budget == 6 else o
        for o in curve.opt
    )
    points = tuple(replace(p, certified=False) if p.budget == 6 else p for p in curve.points)
    fig = figures.budget_ratio_curve(replace(curve, opt=opt, points=points), "ratios")
    [gvt] = [t for t in fig.data if t.name == "gvt"]
    assert tuple(gvt.marker.symbol) == ("circle", "circle-open")
    low = gvt.y[1] - gvt.error_y.arrayminus[1]
    assert low == pytest.approx(points[-1].value / opt[-1].bound)
    assert gvt.error_y.arrayminus[0] == 0
    assert any(t.name and "unproven incumbent" in t.name for t in fig.data)
    assert "incumbent" in fig.layout.yaxis.title.text
    proven = figures.budget_ratio_curve(curve, "ratios")
    assert not any(t.name and "unproven" in t.name for t in proven.data)


def test_interactive_grids_show_no_float_noise_and_projector_tables_drop_free_text():
    import pandas as pd

    from memaudit_ui import render

    df = pd.DataFrame({"cost": [9.871099999999996, 2.0], "n": [1, 2]})
    assert render._denoised(df)["cost"].tolist() == [9.8711, 2.0]
    # Built by position: order, index, other columns' types and a repeated name all kept.
    twin = pd.DataFrame(
        [[0.30000000000000004, "x", 0.1 + 0.2, 3]], columns=["v", "id", "v", "n"], index=[7]
    )
    shown = render._denoised(twin)
    assert list(shown.columns) == ["v", "id", "v", "n"] and list(shown.index) == [7]
    assert shown.iloc[0].tolist() == [0.3, "x", 0.3, 3] and shown["n"].dtype == twin["n"].dtype
    wide = pd.DataFrame({c: [1] for c in ["a", "b", "c", "d", "e"]} | {"text": ["long words"]})
    assert "text" not in render._fit_projector(wide).columns
    narrow = pd.DataFrame({"a": [1], "text": ["kept"]})
    assert "text" in render._fit_projector(narrow).columns
