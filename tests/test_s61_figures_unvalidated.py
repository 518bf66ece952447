"""Every chart the app draws is built by :func:`memaudit_ui.figures.new_figure`, which plotly
does not validate again after the builder's traces, and is exactly what plotly's validating
constructor makes of it: same JSON, the app's template in full. A builder that relied on a
coercion only validation makes (a title given as a bare string, a template by name) would draw
differently, and fails here (sixty-first session: validating them again made the chart pages'
reruns 1.2-1.7x slower, ``bench/exp_figure_build.py``)."""

from __future__ import annotations

import base64
import json

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest
from app_utils import APP
from streamlit.testing.v1 import AppTest

from memaudit_core import curves, load_package
from memaudit_core.robustness import (
    capacity_sensitivity,
    cost_rule_sensitivity,
    noise_sensitivity,
)
from memaudit_ui import figures, render

SAMPLES = APP.parent / "sample_packages"

PAGES = [
    "app.py",
    "pages/1_Budget_sweep.py",
    "pages/2_Compare.py",
    "pages/3_Evidence_explorer.py",
    "pages/4_External_stores.py",
    "pages/5_Ablations_and_sensitivity.py",
    "pages/6_Certification.py",
    "pages/7_Generator.py",
]


def _json(fig: go.Figure) -> dict:
    return json.loads(pio.to_json(fig, validate=False))


def _drawn(
    monkeypatch, package: str, present: bool, store: str | None
) -> list[tuple[str, str, go.Figure]]:
    """(page, chart key, figure) for every chart and its export that the app's pages draw,
    opened one after another in one session by a link naming ``package``."""
    drawn: list[tuple[str, str, go.Figure]] = []
    page_now = [""]
    real_chart = render.chart

    def recording_chart(fig, key, filename, **kwargs):
        drawn.append((page_now[0], key, fig))
        if kwargs.get("export") is not None:
            drawn.append((page_now[0], f"{key} (export)", kwargs["export"]()))
        return real_chart(fig, key, filename, **kwargs)

    monkeypatch.setattr(render, "chart", recording_chart)
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.query_params["package"] = package
    if store is not None:
        at.query_params["store"] = store
    if present:
        at.query_params["present"] = "1"
    for page in PAGES:
        page_now[0] = page
        (at if page == "app.py" else at.switch_page(page)).run()
        assert not at.exception, (page, [e.value for e in at.exception])
        assert not at.error, (page, [e.value for e in at.error])
    assert at.session_state["ma_package"] == package
    return drawn


@pytest.mark.parametrize("present", [False, True], ids=["screen", "projector"])
@pytest.mark.parametrize(
    ("package", "store"),
    [("sample:event-graph-50", None), ("sample:external-stores-demo", "store:mem0")],
)
def test_every_drawn_chart_is_what_validation_makes_of_it(monkeypatch, package, store, present):
    drawn = _drawn(monkeypatch, package, present, store)
    pages_with_charts = {page for page, _, _ in drawn}
    # Not vacuous: the overview, the sweep, Compare, the evidence views, the ablations and the
    # certification all draw charts on these packages.
    assert len(drawn) >= 15 and len(pages_with_charts) >= 6, sorted(pages_with_charts)
    for page, key, fig in drawn:
        _assert_as_validated(fig, (page, key))


def _assert_as_validated(fig: go.Figure, where: object) -> None:
    assert getattr(fig, "_validate", True) is False, where  # the fast path is used
    got = _json(fig)
    validated = go.Figure(fig.to_dict())  # plotly's validating constructor; raises if invalid
    assert _json(validated) == got, where
    assert got["layout"]["template"] == pio.templates[figures.TEMPLATE].to_plotly_json(), where


@pytest.mark.parametrize("present", [False, True], ids=["screen", "projector"])
def test_the_sensitivity_and_family_charts_are_what_validation_makes_of_them(present) -> None:
    """The charts the page runs above do not reach: they wait for a button or a family."""
    veg = load_package(SAMPLES / "veg-to-pescatarian.json")
    budgets = [8.0, 12.0]
    writers = ["gvt", "density"]
    built = {
        "capacity": figures.capacity_chart(
            capacity_sensitivity(veg, budgets, k=2), "capacity", "words", present=present
        ),
        "cost rules": figures.cost_rule_ratio_chart(
            cost_rule_sensitivity(veg, budgets, writers=writers), "rules", present=present
        ),
        "noise": figures.noise_delta_bars(
            noise_sensitivity(veg, draws=3, budgets=budgets, writers=writers),
            "noise",
            present=present,
        ),
        "family band": figures.family_band_curve(
            curves.family_band(
                "memaudit-small", range(10), {}, [4, 8], ["writer:density", "writer:gvt"]
            ),
            "band",
            present=present,
        ),
    }
    for name, fig in built.items():
        _assert_as_validated(fig, name)


def test_the_check_catches_a_coercion_only_validation_makes() -> None:
    """The comparison above is not blind: a bare-string title, which validation turns into
    ``{"text": ...}``, differs."""
    fig = figures.new_figure(go.Bar(x=["a"], y=[1]))
    fig.layout.title = "bare"
    assert _json(go.Figure(fig.to_dict())) != _json(fig)
    fig = figures.new_figure(go.Bar(x=["a"], y=[1]))
    fig.update_layout(title={"text": "whole"})
    assert _json(go.Figure(fig.to_dict())) == _json(fig)


def test_base_layout_gives_a_new_figure_its_own_copy_of_the_template() -> None:
    a = figures.base_layout(figures.new_figure(), "a")
    b = figures.base_layout(figures.new_figure(), "b")
    a.layout.template.layout.font.size = 99  # a figure's change reaches neither the other
    assert b.layout.template.layout.font.size is None  # figure nor the cached template
    assert figures.base_layout(figures.new_figure(), "c").layout.template.layout.font.size is None
    validated = figures.base_layout(go.Figure(), "d")  # a validating figure: by name, as before
    assert _json(validated)["layout"]["template"] == _json(b)["layout"]["template"]


def _decoded(value):
    """A JSON value with plotly's typed arrays ({"dtype", "bdata", "shape"}) read back."""
    if isinstance(value, dict) and {"dtype", "bdata"} <= value.keys():
        flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = [int(n) for n in str(value.get("shape", len(flat))).split(",")]
        return flat.reshape(shape).tolist()
    return value


def test_the_heatmap_cells_are_the_views_to_the_last_bit() -> None:
    """The coverage heatmap hands plotly arrays (a list is validated cell by cell): the JSON
    the browser gets holds z as a typed array, and it reads back as the view's coverage and
    hover texts exactly."""
    from memaudit_core import explain

    package = load_package(SAMPLES / "event-graph-50.json")
    view = explain.view_for_key(
        package, package.default_budget(), "writer:gvt", view="evidence", time_limit=20
    )
    hm = view.heatmap
    for present in (False, True):
        fig = figures.coverage_heatmap(hm, "t", present=present)
        cells = _json(fig)["data"][1]
        assert isinstance(cells["z"], dict) and cells["z"]["dtype"] == "f8"  # a typed array
        # A projector draws the rows a screen holds (HeatmapData.first_rows), a screen all.
        drawn = hm.first_rows(len(cells["y"]))
        assert (len(drawn.row_ids) == len(hm.row_ids)) is not present
        assert cells["y"] == list(drawn.row_labels)
        assert _decoded(cells["z"]) == [list(r) for r in drawn.z]
        assert cells["text"] == [list(r) for r in drawn.hover]
        _assert_as_validated(fig, ("heatmap", present))
