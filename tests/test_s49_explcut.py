"""QA s49 (research area): the Evidence explorer's charts drew a package store after its
recency cut, so a memory the store wrote and the budget cut looked never written; the
Budget sweep's seed-band table cut "seeds unproven" off a 1400 px screen; the unit-kind
chips used other names than the tables.

Expected cuts come from a recency cut written here (newest experience first, then cheaper,
then id; each memory kept if it still fits), not from the code under test.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from app_utils import open_app, open_linked

from memaudit_core import curves, load_package
from memaudit_core.explain import EvidenceView, evidence_view
from memaudit_ui import figures

SAMPLES = Path(__file__).resolve().parent.parent / "sample_packages"
EVIDENCE = "pages/3_Evidence_explorer.py"
SWEEP = "pages/1_Budget_sweep.py"

#: Three experiences, one memory each; the store keeps all three. At budget 5 the recency
#: cut keeps e2 (3), cannot fit e1 (3 + 5 > 5) and keeps e0 (3 + 1).
PACKAGE = {
    "memaudit": 1,
    "id": "s49-cut",
    "cost_unit": "tokens",
    "budget": 5,
    "experiences": [{"id": f"e{i}", "time": i, "text": f"turn {i}"} for i in range(3)],
    "units": [{"id": f"u{i}", "kind": "fact", "text": f"unit {i}", "weight": 1} for i in range(3)],
    "queries": [],
    "candidates": [
        {
            "id": f"e{i}:{t}",
            "experience": f"e{i}",
            "type": t,
            "text": f"{t} {i}",
            "cost": c,
            "coverage": {f"u{i}": 1.0},
        }
        for i, (t, c) in enumerate((("atomic_fact", 1), ("raw_span", 5), ("summary", 3)))
    ],
    "stores": [
        {
            "id": "mine",
            "label": "My writer",
            "select": ["e0:atomic_fact", "e1:raw_span", "e2:summary"],
        }
    ],
}
BUDGET = 5.0


def _recency_cut(raw: dict, select: list[str], budget: float) -> set[str]:
    """The memories of ``select`` a recency cut drops at ``budget`` (the oracle)."""
    cand = {c["id"]: c for c in raw["candidates"]}
    time = {e["id"]: e["time"] for e in raw["experiences"]}
    order = sorted(
        select, key=lambda c: (-time[cand[c]["experience"]], cand[c]["cost"], cand[c]["id"])
    )
    spent, dropped = 0.0, set()
    for c in order:
        if spent + cand[c]["cost"] <= budget:
            spent += cand[c]["cost"]
        else:
            dropped.add(c)
    return dropped


def _view(tmp_path: Path, **kw) -> EvidenceView:
    path = tmp_path / "cut.json"
    path.write_text(json.dumps(PACKAGE))
    return evidence_view(load_package(str(path)), BUDGET, store_id="mine", **kw)


def test_the_oracle_cuts_the_raw_span() -> None:
    assert _recency_cut(PACKAGE, PACKAGE["stores"][0]["select"], BUDGET) == {"e1:raw_span"}


def test_timeline_draws_the_cut_memory_crossed_with_a_legend_entry(tmp_path: Path) -> None:
    view = _view(tmp_path)
    cut = _recency_cut(PACKAGE, PACKAGE["stores"][0]["select"], BUDGET)
    for present, width in ((False, None), (True, None), (False, figures.EXPORT_WIDTH_PX)):
        fig = figures.store_timeline(view.timeline, "t", present=present, width_px=width)
        marked = [t for t in fig.data if t.name == "written, cut at this budget"]
        # The hollow marker of its type and the cross, one legend entry between them.
        assert len(marked) == 2
        assert sum(t.showlegend is not False for t in marked) == 1
        for trace in marked:
            # At e1's time (1), on the chosen store's row.
            assert list(trace.x) == [1.0]
            assert [y.replace("<br>", " ") for y in trace.y] == ["My writer (chosen)"]
            assert all("e1:raw_span" in h for h in trace.hovertext)
        hollow = next(t for t in marked if t.showlegend is False)
        assert list(hollow.marker.symbol) == ["square-open"]  # raw_span's square, hollow
        # Its type keeps a legend entry though no kept memory has it.
        assert any(t.name == "raw_span" for t in fig.data)
        # No kept memory of the chosen row is drawn at e1.
        kept = [t for t in fig.data if t.name in ("atomic_fact", "summary", "raw_span")]
        chosen = [
            x
            for t in kept
            for x, y in zip(t.x, t.y, strict=True)
            if y is not None and "chosen" in y
        ]
        assert sorted(chosen) == [0.0, 2.0]
    assert {p.candidate_id for p in view.timeline.points if p.cut} == cut


def test_heatmap_strip_and_tag_mark_the_cut_memory(tmp_path: Path) -> None:
    for rows in ("all", "kept"):
        hm = _view(tmp_path, heatmap_rows=rows).heatmap
        # The kept view shows it too: what the store wrote is the question.
        assert "e1:raw_span [S cut]" in hm.row_labels
        fig = figures.coverage_heatmap(hm, "t")
        strip = fig.data[0]
        k = list(strip.y).index("e1:raw_span [S cut]")
        assert strip.text[k][0] == "✕"
        assert "cut to fit the budget" in strip.hovertext[k][0]
        others = [i for i, y in enumerate(strip.y) if i != k]
        assert all(strip.text[i][0] == "" for i in others)
        # Its S cell has a value of its own, neither "not in the store" nor "in it".
        s_values = {strip.z[i][0] for i in others}
        assert strip.z[k][0] not in s_values


def test_graph_marks_the_cut_candidate(tmp_path: Path) -> None:
    gd = _view(tmp_path).graph
    fig = figures.evidence_graph(gd, "t", width_px=figures.EXPORT_WIDTH_PX)
    (trace,) = [t for t in fig.data if t.name == "written by the store, cut at this budget"]
    node = gd.node_labels.index("e1:raw_span")
    assert list(trace.y) == [gd.node_y[node]]
    assert trace.marker.symbol == "square-x-open"
    # The store's squares are only its kept memories.
    (held,) = [t for t in fig.data if t.name == "held by the store"]
    assert len(held.y) == 2 and gd.node_y[node] not in list(held.y)


def test_saved_view_reads_back_with_its_cut_marks(tmp_path: Path) -> None:
    view = _view(tmp_path)
    back = EvidenceView.from_dict(json.loads(json.dumps(view.to_dict())))
    assert back == view and any(back.graph.node_cut) and any(back.heatmap.row_cut)


def _raw(stem: str) -> dict:
    return json.loads((SAMPLES / f"{stem}.json").read_text())


def test_evidence_page_charts_show_a_package_store_s_cut_memory() -> None:
    raw = _raw("travel-assistant")
    (store,) = [s for s in raw["stores"] if s["id"] == "raw-logger"]
    cut = _recency_cut(raw, store["select"], 20)
    assert len(cut) == 1 and len(store["select"]) == 2
    at = open_app(
        EVIDENCE, 120, package="sample:travel-assistant", budget="20", store="store:raw-logger"
    )
    assert not at.exception and not at.error
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    (timeline,) = [s for s in specs if s["layout"]["title"]["text"].startswith("Memory written")]
    marked = [t for t in timeline["data"] if t.get("name") == "written, cut at this budget"]
    assert len(marked) == 2
    # On the chosen store's row, the one memory the oracle cuts (other package stores' rows
    # have their own cuts).
    chosen = {
        h.split("→ ")[1].split("<br>")[0]
        for h in marked[0]["hovertext"]
        if h.startswith(f"{store['label']} (chosen)<br>")
    }
    assert chosen == cut
    (heatmap,) = [s for s in specs if s["layout"]["title"]["text"].startswith("Each candidate")]
    assert f"{next(iter(cut))} [S cut]" in heatmap["data"][0]["y"]


def test_band_table_puts_the_honesty_column_before_the_ratios() -> None:
    band = curves.family_band(
        "memaudit-small", range(3), {}, [4, 8], ["writer:density"], ablations=()
    )
    keys = list(band.table_rows()[0])
    assert keys[:4] == ["budget", "method", "seeds unproven", "mean ratio"]


def test_sweep_page_band_table_says_constant_counts_once() -> None:
    at = open_linked(SWEEP, "sample:memaudit-small-s0", "6", seed_band="1", last_seed="2")
    table = next(d for d in at.dataframe if "mean ratio" in d.value.columns)
    columns = list(table.value.columns)
    assert columns[:3] == ["budget", "method", "mean ratio"]
    # Every seed's optimum is proven on this small family: zero on every row, said once.
    (once,) = [c.value for c in at.caption if c.value.startswith("On every row")]
    once = re.sub(r"\\(.)", r"\1", once)
    assert "seeds unproven 0" in once
    assert "seeds unproven" not in columns


def test_kind_chips_use_the_tables_kind_names() -> None:
    at = open_app(EVIDENCE, 120, package="sample:travel-assistant")
    kinds = at.multiselect(key="ev_kinds")
    pkg = load_package(str(SAMPLES / "travel-assistant.json"))
    names = sorted({u.kind for u in pkg.units})
    assert sorted(kinds.options) == names
    for long in ("current_truth", "invalidation", "temporal_order", "preference"):
        assert long in kinds.options
    # The units table says the same names.
    units = next(d for d in at.dataframe if "kind" in d.value.columns)
    assert set(units.value["kind"]) <= set(kinds.options)
