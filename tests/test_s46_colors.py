"""QA s46 (speaker demo): a store's or plugin writer's line took another writer's colour and
marker depending on which writers were chosen ("Fact extractor" was pink triangles beside
density, green squares, and density's green squares once density was removed), and an
external store was drawn in one style on the Budget sweep and another on External stores.

Each series must keep one (colour, marker) on every chart, page and selection, distinct from
the other series of a chart. Read from the charts the app draws. Fails on 7f150fe.
"""

from __future__ import annotations

import json
from collections import defaultdict

from app_utils import open_linked

SWEEP = "pages/1_Budget_sweep.py"
EXTERNAL = "pages/4_External_stores.py"


def _base(symbol) -> str:
    """A trace's marker shape (a ratio chart lists one per point, "-open" where unproven)."""
    shapes = {s.removesuffix("-open") for s in (symbol if isinstance(symbol, list) else [symbol])}
    assert len(shapes) == 1, shapes
    return shapes.pop()


def _sweep_styles(package: str, methods: str, **extra: str) -> list[dict[str, tuple[str, str]]]:
    """Per Budget sweep chart: method key -> (line colour, marker) of its line."""
    at = open_linked(SWEEP, package, None, methods=methods, **extra)
    charts = []
    for chart in at.get("plotly_chart"):
        styles: dict[str, tuple[str, str]] = {}
        for trace in json.loads(chart.proto.spec)["data"]:
            # Method lines carry their key: on the band their legend group, on the sweep
            # charts their points' click key (customdata).
            key = trace.get("legendgroup") or (trace.get("customdata") or [[""]])[0][0]
            if key and "marker" in trace and "symbol" in trace["marker"]:
                style = (trace["line"]["color"], _base(trace["marker"]["symbol"]))
                assert styles.setdefault(key, style) == style, (key, styles[key], style)
        charts.append(styles)
    return charts


def _assert_one_style_each(charts: list[dict[str, tuple[str, str]]]) -> None:
    seen: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for styles in charts:
        # Distinct on one chart: no two series alike.
        assert len(set(styles.values())) == len(styles), styles
        for key, style in styles.items():
            seen[key].add(style)
    changed = {key: styles for key, styles in seen.items() if len(styles) > 1}
    assert not changed, changed


def test_each_series_keeps_its_style_whatever_else_the_sweep_shows():
    selections = [
        "store:fact-extractor,writer:gvt,writer:density",  # the repro: density beside it
        "store:fact-extractor,writer:gvt",  # density removed
        "store:raw-logger,store:fact-extractor,writer:recency",
        "writer:recency,writer:greedy,store:validity-aware,store:fact-extractor,writer:density",
        "writer:compact_validity,store:validity-aware",
    ]
    charts = [
        chart
        for methods in selections
        for chart in _sweep_styles("sample:travel-assistant", methods)
    ]
    assert len(charts) == 2 * len(selections)  # F and ratio per selection
    _assert_one_style_each(charts)
    # Every key of every selection was drawn (a missing line would pass the above).
    drawn = set().union(*charts)
    chosen = {k for methods in selections for k in methods.split(",")}
    assert chosen <= drawn, chosen - drawn


def test_a_plugin_writer_keeps_its_style_on_the_seed_band():
    # memaudit-small has no stores: recency (a bundled blind writer) took greedy's free slot.
    charts = [
        chart
        for methods in ("writer:recency,writer:gvt", "writer:recency,writer:density,writer:gvt")
        for chart in _sweep_styles(
            "sample:memaudit-small-s0", methods, seed_band="1", first_seed="0", last_seed="1"
        )
    ]
    assert len(charts) == 6  # F, ratio and the band, twice
    assert all("writer:recency" in chart for chart in charts)
    _assert_one_style_each(charts)
    # Not greedy's pink triangles (greedy drawn on its own, with nothing else to move it).
    (greedy, _ratio) = _sweep_styles("sample:memaudit-small-s0", "writer:greedy")
    assert charts[0]["writer:recency"] != greedy["writer:greedy"]


def test_an_external_store_has_its_sweep_style_on_the_external_stores_page():
    sweep = [
        chart
        for methods in ("store:letta,writer:gvt,writer:density", "store:amem,store:letta")
        for chart in _sweep_styles("sample:external-stores-demo", methods)
    ]
    _assert_one_style_each(sweep)
    at = open_linked(EXTERNAL, "sample:external-stores-demo", "24")
    (union,) = [
        json.loads(c.proto.spec) for c in at.get("plotly_chart") if "Each store" in c.proto.spec
    ]
    # The store's legend entry: its colour and marker (the line-style keys are grey).
    legend = {
        t["legendgroup"]: (t["line"]["color"], _base(t["marker"]["symbol"]))
        for t in union["data"]
        if t.get("legendgroup") and t.get("showlegend", True)
    }
    assert set(legend) == {"mem0", "letta", "amem"}
    assert len(set(legend.values())) == 3, legend
    for chart in sweep:
        for store in ("letta", "amem"):
            if f"store:{store}" in chart:
                assert chart[f"store:{store}"] == legend[store], (store, chart, legend)
