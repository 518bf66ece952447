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
    for key in ("title", "font", "height", "margin", "template"):
        assert got[key] == want[key], key
    assert got["legend"] == want["legend"]
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
