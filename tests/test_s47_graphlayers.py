"""QA s47 (graphlayers): the Evidence explorer after the colour change.

1. The evidence graph coloured its layers with unit-kind colours: every unit the "fact" green,
   every candidate the "context" tan, every experience the "stale" grey, beside a heatmap whose
   legend maps those colours to kinds and a timeline drawing atomic_fact / summary in them.
2. With the external store Letta chosen at budget 30 on external-stores-demo, Letta's timeline
   row was blank (its memories are external, with no experience to place them at) and no
   "Empty rows" note named it; and the optimum's row said "OPT" where the rest of the page says
   "OPT over P+".

Expected values come from the package JSON: Letta's memories kept newest ``created_at`` first
while they fit (the rule README and :func:`_store_members` document), none of them a package
candidate.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_s47_cvd import _delta_e

from memaudit_core.explain import evidence_view
from memaudit_core.package import load_package
from memaudit_ui import figures

SAMPLES = Path(__file__).resolve().parent.parent / "sample_packages"
DEMO = SAMPLES / "external-stores-demo.json"


def _hex6(color: str) -> str:
    h = color.lower().lstrip("#")
    return "#" + ("".join(c * 2 for c in h) if len(h) == 3 else h)


def _page_colours() -> dict[str, str]:
    """Colours that mean a unit kind (heatmap) or a memory type (timeline) on the page."""
    return {
        **{f"kind {k}": c for k, c in figures.KIND_COLORS.items()},
        **{f"type {t}": c for t, c in figures.TYPE_COLORS.items()},
        "unknown kind / type": "#555",
    }


def test_graph_layer_colours_are_not_kind_or_type_colours() -> None:
    taken = {_hex6(c): name for name, c in _page_colours().items()}
    clash = {
        layer: taken[_hex6(c)] for layer, c in figures.LAYER_COLORS.items() if _hex6(c) in taken
    }
    assert clash == {}
    # Neutral greys: no hue a reader could take for a kind or a type.
    for layer, color in figures.LAYER_COLORS.items():
        h = _hex6(color)
        assert h[1:3] == h[3:5] == h[5:7], (layer, color)
    # ... and not one of those charts' greys to the eye either (JND about 2.3).
    near = [
        (layer, name, vision)
        for layer, c in figures.LAYER_COLORS.items()
        for name, o in _page_colours().items()
        for vision in ("normal", "protanopia", "deuteranopia", "tritanopia")
        if _delta_e(c, o, vision) < 4.0
    ]
    assert near == []


def test_graph_nodes_are_drawn_in_the_layer_colours() -> None:
    view = evidence_view(load_package(SAMPLES / "veg-to-pescatarian.json"), 8, writer="density")
    fig = figures.evidence_graph(view.graph, "Evidence graph")
    taken = {_hex6(c) for c in _page_colours().values()}
    layers = {t.name: t.marker.color for t in fig.data if t.name in figures.LAYER_COLORS}
    assert set(layers) == {"experience", "candidate", "unit", "query"}
    assert {name: _hex6(c) in taken for name, c in layers.items()} == dict.fromkeys(layers, False)


def _letta_kept(budget: float) -> list[str]:
    """Letta's memories at ``budget``: newest created_at first (ties: later in the list
    first), each kept while it still fits."""
    data = json.loads(DEMO.read_text())
    (letta,) = [s for s in data["stores"] if s["id"] == "letta"]
    mems = list(enumerate(letta["memories"]))
    mems.sort(key=lambda jm: (jm[1]["created_at"], jm[0]), reverse=True)
    kept, used = [], 0.0
    for _, m in mems:
        if used + m["cost"] <= budget:
            kept.append(m["id"])
            used += m["cost"]
    package_ids = {c["id"] for c in data["candidates"]}
    assert not package_ids & set(kept)  # external: none is a package candidate
    return kept


@pytest.fixture(scope="module")
def letta_view():
    return evidence_view(load_package(DEMO), 30, store_id="letta")


def test_external_store_row_is_named_in_the_empty_rows_note(letta_view) -> None:
    kept = _letta_kept(30)
    assert len(kept) == 4
    tl = letta_view.timeline
    chosen = "Letta (core memory + archival) (chosen)"
    assert tl.rows[0] == chosen
    assert [p for p in tl.points if p.row == chosen] == []
    assert (
        f"Empty rows at budget 30 words: {chosen}: its {len(kept)} kept memories belong to no "
        "experience (external), so its row is empty." in tl.message
    )


def test_optimum_row_is_labelled_over_p_plus_with_an_external_store(letta_view) -> None:
    assert letta_view.opt_label == "OPT"  # certified on this small package
    assert letta_view.timeline.rows[1] == "OPT over P+" == letta_view.opt_name
    assert "OPT over P+" in {p.row for p in letta_view.timeline.points}


def test_optimum_row_stays_opt_without_an_external_store() -> None:
    view = evidence_view(load_package(DEMO), 30, writer="density")
    assert view.timeline.rows[1] == "OPT" == view.opt_name
