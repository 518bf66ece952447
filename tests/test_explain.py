"""Compare / Evidence-explorer views (memaudit_core.explain) and their two app pages.

Numbers are checked against :func:`memaudit_core.analysis.score` and against independent
plain-Python recomputations from the package objects (never against the views' own output).
"""

from __future__ import annotations

import json
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from memaudit_core.analysis import kind_sort_key, score
from memaudit_core.errors import MemAuditError
from memaudit_core.explain import (
    GRAPH_MAX_NODES,
    HEATMAP_FILTER_ROWS,
    HEATMAP_MAX_COLS,
    HEATMAP_MAX_ROWS,
    HEATMAP_ROWS,
    bucket_of,
    compare_view,
    evidence_view,
    parse_store_key,
    view_for_key,
)
from memaudit_core.package import Package, load_package, parse_package

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "sample_packages"


def sample(stem: str) -> Package:
    return load_package(SAMPLES / f"{stem}.json")


# --------------------------------------------------------------------------- independent oracle


def _coverage_rows(pkg: Package) -> dict[str, dict[str, float]]:
    rows = {c.id: dict(c.coverage) for c in pkg.candidates}
    for store in pkg.stores:
        rows.update({m.id: dict(m.coverage) for m in store.memories})
    return rows


def plain_f(pkg: Package, ids) -> float:
    """F (cap1) from the package's own dicts, no compiled arrays."""
    assert pkg.saturation == "cap1"
    rows = _coverage_rows(pkg)
    z: dict[str, float] = {}
    for cid in ids:
        for u, a in rows[cid].items():
            z[u] = z.get(u, 0.0) + a
    weights = pkg.unit_weights()
    return sum(w * min(1.0, z.get(u, 0.0)) for u, w in weights.items())


def plain_unit_values(pkg: Package, ids) -> dict[str, float]:
    rows = _coverage_rows(pkg)
    z: dict[str, float] = {}
    for cid in ids:
        for u, a in rows[cid].items():
            z[u] = z.get(u, 0.0) + a
    return {u: w * min(1.0, z.get(u, 0.0)) for u, w in pkg.unit_weights().items()}


CASES = [
    ("update_chain", 6, {"writer": "density"}),
    ("veg-to-pescatarian", 12, {"store_id": "fact-only"}),
    ("veg-to-pescatarian", 6, {"store_id": "raw-logger"}),
    ("travel-assistant", 40, {"store_id": "raw-logger"}),
    ("travel-assistant", 20, {"store_id": "validity-aware"}),  # over budget: pruned
    ("memaudit-small-s0", 6, {"writer": "density"}),
    ("temporal_interval", 13, {"writer": "gvt"}),
]


# --------------------------------------------------------------------------- CompareView


@pytest.mark.parametrize(("stem", "budget", "who"), CASES)
def test_compare_view_agrees_with_score(stem, budget, who):
    pkg = sample(stem)
    cv = compare_view(pkg, budget, **who)
    ev = score(pkg, budget, **who)
    assert cv.value == pytest.approx(ev.value, abs=1e-12)
    assert cv.opt_value == pytest.approx(ev.opt_value, abs=1e-12)
    assert cv.ratio_text == ev.ratio_text and cv.opt_label == ev.opt_label
    assert cv.cost == pytest.approx(ev.cost) and cv.notes == ev.notes
    by_id = {u.unit_id: u for u in cv.unit_rows}
    assert set(by_id) == {u.unit_id for u in ev.unit_rows}
    for ur in ev.unit_rows:
        assert by_id[ur.unit_id].lost == pytest.approx(ur.lost, abs=1e-12)
        assert by_id[ur.unit_id].store_value == pytest.approx(ur.store_value, abs=1e-12)
    for kr in ev.kind_rows:  # bucket sums agree with score's kind rows
        bucket = next(b for b in cv.bucket_rows if b.bucket == bucket_of(kr.kind))
        assert kr.kind in bucket.kinds


@pytest.mark.parametrize(("stem", "budget", "who"), CASES)
def test_compare_view_independent_recomputation(stem, budget, who):
    pkg = sample(stem)
    cv = compare_view(pkg, budget, **who)
    store_ids = cv.evaluation.selected
    opt_ids = cv.evaluation.opt_selected
    # F and OPT from plain dicts.
    assert cv.value == pytest.approx(plain_f(pkg, store_ids), abs=1e-9)
    assert cv.opt_value == pytest.approx(plain_f(pkg, opt_ids), abs=1e-9)
    # Unit losses add up to OPT - F and each matches the plain per-unit values.
    assert sum(u.lost for u in cv.unit_rows) == pytest.approx(cv.opt_value - cv.value, abs=1e-9)
    s_vals, o_vals = plain_unit_values(pkg, store_ids), plain_unit_values(pkg, opt_ids)
    for u in cv.unit_rows:
        assert u.lost == pytest.approx(o_vals[u.unit_id] - s_vals[u.unit_id], abs=1e-9)
    # Sorted by loss.
    losses = [u.lost for u in cv.unit_rows]
    assert losses == sorted(losses, reverse=True)
    # Bucket rows add up to the totals.
    assert sum(b.store_value for b in cv.bucket_rows) == pytest.approx(cv.value, abs=1e-9)
    assert sum(b.opt_value for b in cv.bucket_rows) == pytest.approx(cv.opt_value, abs=1e-9)
    # Marginal values by brute evaluation: F(X) - F(X - u).
    for side, ids in (("store", store_ids), ("opt", opt_ids)):
        cells = [m for r in cv.experience_rows for m in getattr(r, side) if m.kept]
        assert sorted(m.candidate_id for m in cells) == sorted(ids)
        full = plain_f(pkg, ids)
        for m in cells:
            rest = [c for c in ids if c != m.candidate_id]
            assert m.marginal == pytest.approx(full - plain_f(pkg, rest), abs=1e-9), m
        # Submodularity: marginals add up to at most F.
        assert sum(m.marginal for m in cells) <= full + 1e-9
    # Experience rows follow arrival order (time, id).
    exp_rows = [r for r in cv.experience_rows if not r.external]
    order = sorted(pkg.experiences, key=lambda e: (e.time, e.id))
    assert [r.experience_id for r in exp_rows] == [e.id for e in order]
    # Table helpers: one row per experience / unit.
    assert len(cv.experience_table()) == len(cv.experience_rows)
    assert [r["unit"] for r in cv.unit_table()] == [u.unit_id for u in cv.unit_rows]


def test_compare_view_covered_by_lists_match_the_coverage_dicts():
    pkg = sample("travel-assistant")
    cv = compare_view(pkg, 40, store_id="raw-logger")
    rows = _coverage_rows(pkg)
    for u in cv.unit_rows:
        expect = sorted(c for c in cv.evaluation.opt_selected if rows[c].get(u.unit_id, 0) > 0)
        assert sorted(u.opt_covered_by) == expect
        expect = sorted(c for c in cv.evaluation.selected if rows[c].get(u.unit_id, 0) > 0)
        assert sorted(u.store_covered_by) == expect


def test_explanation_for_density_on_update_chain_names_the_missed_units():
    pkg = sample("update_chain")
    cv = compare_view(pkg, 6, writer="density")
    # The paper's density ratio on update_chain at budget 6.
    assert cv.ratio_text == "0.730" and cv.opt_label == "OPT"
    text = "\n".join(cv.explanation)
    missed = [u for u in cv.unit_rows if u.lost > 1e-9]
    assert missed
    for u in missed:  # every unit the store lost value on is named ...
        assert u.unit_id in text
        for cid in u.opt_covered_by:  # ... with the optimum's memory that covered it
            assert cid in text
    # What the store spent its budget on instead: its memories outside the optimum.
    for cid in set(cv.evaluation.selected) - set(cv.evaluation.opt_selected):
        assert cid in text
    assert "0.730" in text and "Instead" in text


def test_explanation_names_missed_invalidation_units_and_the_optimums_memories():
    # memaudit-small seed 0, density at B = 6: both preference invalidations are missed.
    pkg = sample("memaudit-small-s0")
    cv = compare_view(pkg, 6, writer="density")
    inval = [u for u in cv.unit_rows if u.kind == "invalidation" and u.lost > 1e-9]
    assert {u.unit_id for u in inval} == {"invalid:pref:0:0", "invalid:pref:0:1"}
    para = next(p for p in cv.explanation if "invalidation unit" in p)
    assert "missed 2 invalidation units" in para
    lost = sum(u.lost for u in inval)
    assert f"losing {lost:.4g}" in para
    for u in inval:
        assert u.unit_id in para
        for cid in u.opt_covered_by:
            assert cid in para
    # The store spent its budget on atomic facts the optimum did not keep.
    spent = next(p for p in cv.explanation if p.startswith("Instead"))
    assert "atomic_fact" in spent


def test_explanation_for_the_fact_only_store_on_the_paper_example():
    cv = compare_view(sample("veg-to-pescatarian"), 12, store_id="fact-only")
    text = " ".join(cv.explanation)
    assert "u:meal:invalid" in text and "e4:update" in text


def test_pruned_store_lists_dropped_memories_and_notes_verbatim():
    pkg = sample("travel-assistant")
    cv = compare_view(pkg, 20, store_id="validity-aware")
    assert cv.evaluation.over_budget and cv.evaluation.dropped
    dropped = [m.candidate_id for r in cv.experience_rows for m in r.store if not m.kept]
    assert sorted(dropped) == sorted(cv.evaluation.dropped)
    assert any("pruned by recency" in n for n in cv.notes)
    assert cv.store_cost > 20 >= cv.cost


def test_zero_budget_ratio_is_na_and_explained():
    cv = compare_view(sample("update_chain"), 0, writer="gvt")
    assert cv.ratio is None and cv.ratio_text == "n/a"
    assert "undefined (n/a)" in cv.explanation[0]


def test_optimal_store_loses_nothing():
    cv = compare_view(sample("update_chain"), 6, writer="gvt")
    assert cv.ratio_text == "1.000"
    assert any("loses nothing" in p for p in cv.explanation)


def _external_package() -> Package:
    doc = json.loads((SAMPLES / "veg-to-pescatarian.json").read_text())
    doc["stores"].append(
        {
            "id": "mem0",
            "label": "Mem0 export",
            "system": "mem0",
            "memories": [
                {
                    "id": "m1",
                    "text": "pescatarian now, no longer vegetarian",
                    "cost": 4,
                    "coverage": {"u:meal:current": 1, "u:meal:invalid": 1},
                },
                {"id": "m2", "text": "window seat", "cost": 2, "coverage": {"u:seat": 1}},
            ],
        }
    )
    return parse_package(doc)


def test_external_store_is_compared_in_the_union_package():
    pkg = _external_package()
    cv = compare_view(pkg, 6, store_id="mem0")
    assert cv.source_kind == "external"
    ext = [r for r in cv.experience_rows if r.external]
    assert {m.candidate_id for r in ext for m in r.store} == {"m1", "m2"}
    assert sum(u.lost for u in cv.unit_rows) == pytest.approx(cv.opt_value - cv.value)
    assert cv.value == pytest.approx(plain_f(pkg, ["m1", "m2"]))
    assert any("union package" in n for n in cv.notes)
    # Evidence view on the same store: external memories are covering candidates.
    view = evidence_view(pkg, 6, store_id="mem0", focus_unit_id="u:meal:invalid")
    ids = {c.candidate_id for c in view.focus_candidates}
    assert "m1" in ids and any(c.in_store for c in view.focus_candidates if c.candidate_id == "m1")
    assert "external memories" in view.timeline.message


def test_store_key_parsing():
    assert parse_store_key("writer:gvt") == ("gvt", None)
    assert parse_store_key("store:a:b") == (None, "a:b")
    with pytest.raises(MemAuditError):
        parse_store_key("gvt")
    with pytest.raises(MemAuditError):
        view_for_key(sample("update_chain"), 6, "writer:gvt", view="nope")


# --------------------------------------------------------------------------- EvidenceView


def test_covering_candidates_match_the_coverage_dicts():
    pkg = sample("veg-to-pescatarian")
    exp_of = {c.id: c.experience for c in pkg.candidates}
    ev = score(pkg, 12, store_id="fact-only")
    for unit in pkg.units:
        view = evidence_view(pkg, 12, store_id="fact-only", focus_unit_id=unit.id)
        assert view.focus_unit_id == unit.id
        expect = {
            c.id: c.coverage[unit.id] for c in pkg.candidates if c.coverage.get(unit.id, 0) > 0
        }
        got = {c.candidate_id: c.coverage for c in view.focus_candidates}
        assert got == pytest.approx(expect)
        for c in view.focus_candidates:
            assert c.experience_id == exp_of[c.candidate_id]
            assert c.in_store == (c.candidate_id in ev.selected)
            assert c.in_opt == (c.candidate_id in ev.opt_selected)
        queries = {q.id for q in pkg.queries if unit.id in q.requires}
        assert {q.query_id for q in view.focus_queries} == queries


def test_heatmap_equals_the_dense_coverage():
    pkg = sample("veg-to-pescatarian")
    view = evidence_view(pkg, 12, store_id="raw-logger")
    hm = view.heatmap
    # Rows: every candidate, experiences in arrival order then (cost, id).
    t = {e.id: e.time for e in pkg.experiences}
    rows = sorted(pkg.candidates, key=lambda c: (t[c.experience], c.experience, c.cost, c.id))
    assert hm.row_ids == tuple(c.id for c in rows)
    # Columns: every unit grouped by kind (kind order, then package order).
    units = sorted(enumerate(pkg.units), key=lambda iu: (kind_sort_key(iu[1].kind), iu[0]))
    assert hm.col_ids == tuple(u.id for _, u in units)
    dense = np.array([[c.coverage.get(u.id, 0.0) for _, u in units] for c in rows])
    assert np.array_equal(np.array(hm.z), dense)
    ev = score(pkg, 12, store_id="raw-logger")
    for rid, label, s, o in zip(
        hm.row_ids, hm.row_labels, hm.row_in_store, hm.row_in_opt, strict=True
    ):
        assert s == (rid in ev.selected) and o == (rid in ev.opt_selected)
        tag = "+".join(t for t, on in (("S", s), ("O", o)) if on)
        assert label == (f"{rid} [{tag}]" if tag else rid)
    spans = [k for k, _, _ in hm.kind_spans]
    assert len(spans) == len(set(spans))  # each kind is one contiguous group
    assert hm.message == ""
    assert hm.col_ids[hm.focus_col_idx] == view.focus_unit_id
    # Hover text describes covering cells only (the viewer names the others by their ids).
    described = np.array([[bool(text) for text in row] for row in hm.hover])
    assert np.array_equal(described, dense > 0)
    c, u = rows[0], next(iter(rows[0].coverage))
    cell = hm.hover[hm.row_ids.index(c.id)][hm.col_ids.index(u)]
    unit = next(x for x in pkg.units if x.id == u)
    assert cell.startswith(f"{c.type}, cost {c.cost:g}: ") and f"<br>{unit.kind}: " in cell


def test_kind_filter_restricts_units_heatmap_and_graph():
    pkg = sample("travel-assistant")
    view = evidence_view(pkg, 40, store_id="raw-logger", kinds=["invalidation"])
    assert view.kinds == ("invalidation",)
    assert {u.kind for u in view.units} == {"invalidation"}
    assert set(view.heatmap.col_kinds) == {"invalidation"}
    unit_nodes = [
        lab
        for lab, ly in zip(view.graph.node_labels, view.graph.node_layers, strict=True)
        if ly == "unit"
    ]
    assert set(unit_nodes) <= set(view.unit_ids)
    # The default focus is the filtered unit with the largest loss.
    assert view.focus.lost == max(u.lost for u in view.units)
    # A focus outside the filter falls back to the default.
    other = evidence_view(
        pkg, 40, store_id="raw-logger", kinds=["invalidation"], focus_unit_id="u:trip"
    )
    assert other.focus_unit_id == view.focus_unit_id
    # Empty filter: nothing; a filter from another package: everything.
    assert evidence_view(pkg, 40, store_id="raw-logger", kinds=[]).units == ()
    assert len(evidence_view(pkg, 40, store_id="raw-logger", kinds=["nope"]).units) == len(
        pkg.units
    )


def test_dense_timeline_draws_smaller_markers():
    """500 experiences on one axis: full-size markers would merge into a solid band."""
    from memaudit_ui.figures import TIMELINE_DENSE, store_timeline

    def sizes(name):
        pkg = sample(name)
        tl = evidence_view(pkg, pkg.default_budget(), writer="gvt").timeline
        fig = store_timeline(tl, "t")
        return len(tl.experiences), {tr.name: tr.marker.size for tr in fig.data}

    n_small, small = sizes("travel-assistant")
    n_big, big = sizes("event-graph-500")
    assert n_small <= TIMELINE_DENSE < n_big
    assert big["experience"] < small["experience"]
    shared = (set(small) & set(big)) - {"experience"}
    assert shared and all(big[t] < small[t] for t in shared)


def test_timeline_rows_and_points():
    pkg = sample("travel-assistant")
    view = evidence_view(pkg, 40, store_id="raw-logger")
    tl = view.timeline
    # The chosen store, the optimum, and every other package store.
    assert len(tl.rows) == 2 + len(pkg.stores) - 1
    assert tl.rows[0].startswith("Raw logger") and tl.rows[1] == "OPT"
    ev = score(pkg, 40, store_id="raw-logger")
    chosen = sorted(p.candidate_id for p in tl.points if p.row == tl.rows[0])
    assert chosen == sorted(ev.selected)
    assert sorted(p.candidate_id for p in tl.points if p.row == "OPT") == sorted(ev.opt_selected)
    exp_time = {e.id: e.time for e in pkg.experiences}
    cand_exp = {c.id: c.experience for c in pkg.candidates}
    for p in tl.points:
        assert p.experience_id == cand_exp[p.candidate_id] and p.time == exp_time[p.experience_id]
    assert len(tl.experiences) == len(pkg.experiences)
    # A writer as the chosen store: every package store is listed after the optimum.
    wv = evidence_view(pkg, 40, writer="gvt")
    assert len(wv.timeline.rows) == 2 + len(pkg.stores)


def test_graph_counts_on_veg_to_pescatarian():
    pkg = sample("veg-to-pescatarian")
    view = evidence_view(pkg, 12, store_id="validity-aware")
    gd = view.graph
    unit_ids = {u.id for u in pkg.units}
    covering = [c for c in pkg.candidates if any(a > 0 for a in c.coverage.values())]
    n_exp = len({c.experience for c in covering})
    n_queries = len([q for q in pkg.queries if set(q.requires) & unit_ids])
    assert gd.n_nodes == n_exp + len(covering) + len(pkg.units) + n_queries
    n_cov = sum(1 for c in covering for a in c.coverage.values() if a > 0)
    n_req = sum(len(q.requires) for q in pkg.queries)
    assert gd.n_edges == len(covering) + n_cov + n_req
    assert gd.message == ""
    # Edge polylines: three entries per edge (x0, x1, None).
    assert len(gd.edge_x) + len(gd.focus_edge_x) == 3 * gd.n_edges
    assert {ly for ly in gd.node_layers} == {"experience", "candidate", "unit", "query"}
    # Rebuild the same graph with networkx directly and compare degree sequences.
    g = nx.DiGraph()
    for c in covering:
        g.add_edge(("e", c.experience), ("c", c.id))
        for u, a in c.coverage.items():
            if a > 0:
                g.add_edge(("c", c.id), ("u", u))
    for q in pkg.queries:
        for u in q.requires:
            g.add_edge(("u", u), ("q", q.id))
    g.add_nodes_from(("u", u) for u in unit_ids)
    assert (g.number_of_nodes(), g.number_of_edges()) == (gd.n_nodes, gd.n_edges)


def test_graph_of_the_focus_units_neighbourhood():
    pkg = sample("travel-assistant")
    whole = evidence_view(pkg, 40, writer="density").graph
    view = evidence_view(pkg, 40, writer="density", graph_scope="focus")
    focus = view.focus_unit_id
    near = [c for c in pkg.candidates if c.coverage.get(focus, 0) > 0]
    units = {u for c in near for u, a in c.coverage.items() if a > 0}
    queries = {q.id for q in pkg.queries if units & set(q.requires)}
    expect = {c.experience for c in near} | {c.id for c in near} | units | queries
    gd = view.graph
    assert set(gd.node_labels) == expect and gd.n_nodes == len(expect) < whole.n_nodes
    assert f"showing {gd.n_nodes} of them, the neighbourhood of the focus unit {focus}" in (
        gd.message
    )
    with pytest.raises(MemAuditError, match="graph_scope 'near'.*known: all, focus"):
        evidence_view(pkg, 40, writer="density", graph_scope="near")


def test_big_package_caps_heatmap_and_restricts_graph():
    pkg = sample("event-graph-50")
    assert len(pkg.candidates) > HEATMAP_FILTER_ROWS
    view = evidence_view(pkg, pkg.default_budget(), writer="density")
    hm = view.heatmap
    assert len(hm.row_ids) <= HEATMAP_MAX_ROWS and len(hm.col_ids) <= HEATMAP_MAX_COLS
    assert "candidates" in hm.message
    assert all(max(row) > 0 for row in hm.z)  # only candidates covering a shown unit
    # Rows covering the focus unit are kept first.
    focus_cov = {c.candidate_id for c in view.focus_candidates}
    assert focus_cov <= set(hm.row_ids)
    gd = view.graph
    assert gd.n_nodes <= GRAPH_MAX_NODES and view.focus_unit_id in gd.node_labels
    assert "neighbourhood" in gd.message


def test_heatmap_rows_kept_and_focus_views():
    pkg = sample("event-graph-50")
    budget = pkg.default_budget()
    ev = score(pkg, budget, writer="density")
    t = {e.id: e.time for e in pkg.experiences}
    arrival = [
        c.id
        for c in sorted(pkg.candidates, key=lambda c: (t[c.experience], c.experience, c.cost, c.id))
    ]
    kept = evidence_view(pkg, budget, writer="density", heatmap_rows="kept")
    expect = set(ev.selected) | set(ev.opt_selected)
    assert expect and set(kept.heatmap.row_ids) == expect
    assert list(kept.heatmap.row_ids) == [c for c in arrival if c in expect]
    assert all(
        s or o for s, o in zip(kept.heatmap.row_in_store, kept.heatmap.row_in_opt, strict=True)
    )
    assert f"{len(expect)} of {len(pkg.candidates)}" in kept.heatmap.message
    # The rows' cells are still the package's coverage.
    col = {u: j for j, u in enumerate(kept.heatmap.col_ids)}
    by_id = {c.id: c for c in pkg.candidates}
    for rid, row in zip(kept.heatmap.row_ids, kept.heatmap.z, strict=True):
        for u, j in col.items():
            assert row[j] == by_id[rid].coverage.get(u, 0.0)
    unit_id = max(pkg.units, key=lambda u: sum(u.id in c.coverage for c in pkg.candidates)).id
    focus = evidence_view(
        pkg, budget, writer="density", focus_unit_id=unit_id, heatmap_rows="focus"
    ).heatmap
    covering = {c.id for c in pkg.candidates if c.coverage.get(unit_id, 0) > 0}
    assert len(covering) > 1 and set(focus.row_ids) == covering
    assert unit_id in focus.col_ids and unit_id in focus.message
    assert focus.col_ids[focus.focus_col_idx] == unit_id
    # "all" is the default view.
    assert (
        evidence_view(pkg, budget, writer="density").heatmap
        == evidence_view(pkg, budget, writer="density", heatmap_rows="all").heatmap
    )
    assert set(HEATMAP_ROWS) == {"all", "kept", "focus"}
    with pytest.raises(MemAuditError, match="heatmap_rows 'opt'.*known: all, kept, focus"):
        evidence_view(pkg, budget, writer="density", heatmap_rows="opt")


def test_heatmap_figure_outlines_the_focus_column():
    from memaudit_ui.figures import FOCUS_COLOR, coverage_heatmap

    pkg = sample("veg-to-pescatarian")
    hm = evidence_view(pkg, 12, store_id="raw-logger", focus_unit_id="u:meal:invalid").heatmap
    fig = coverage_heatmap(hm, "t")
    outlines = [sh for sh in fig.layout.shapes if sh.line.color == FOCUS_COLOR]
    j = hm.col_ids.index("u:meal:invalid")
    assert [(sh.xref, sh.x0, sh.x1) for sh in outlines] == [("x2", j - 0.5, j + 0.5)]
    ticks = fig.layout.xaxis2.ticktext
    assert "<b>u:meal:invalid</b>" in ticks[j] and FOCUS_COLOR in ticks[j]
    assert [t for k, t in enumerate(ticks) if k != j] == [
        c for k, c in enumerate(hm.col_ids) if k != j
    ]


def test_evidence_view_says_why_the_focus_is_not_the_unit_asked_for():
    """Library QA: a misspelt focus unit silently showed another unit."""
    pkg = sample("veg-to-pescatarian")
    typo = evidence_view(pkg, 12, store_id="raw-logger", focus_unit_id="u:meal:invalidd")
    assert typo.notes == (
        "focus unit 'u:meal:invalidd' is not an evidence unit of package 'veg-to-pescatarian': "
        f"showing {typo.focus_unit_id!r} instead",
    )
    kind = next(u.kind for u in pkg.units if u.id == "u:meal:invalid")
    other = next(u.kind for u in pkg.units if u.kind != kind)
    filtered = evidence_view(
        pkg, 12, store_id="raw-logger", focus_unit_id="u:meal:invalid", kinds=[other]
    )
    assert filtered.focus_unit_id != "u:meal:invalid"
    assert filtered.notes == (
        f"focus unit 'u:meal:invalid' is outside the kind filter (its kind {kind} is not "
        f"shown): showing {filtered.focus_unit_id!r} instead",
    )
    assert evidence_view(pkg, 12, store_id="raw-logger", focus_unit_id="u:meal:invalid").notes == ()
    assert evidence_view(pkg, 12, store_id="raw-logger").notes == ()


def test_timeline_counts_each_external_memory_once():
    """QA: memories kept by both the store and the union optimum were counted twice."""
    pkg = sample("external-stores-demo")
    view = evidence_view(pkg, 24, store_id="mem0", heatmap_rows="kept")
    memories = {m.id for s in pkg.stores for m in s.memories}
    # The kept view also shows what the store cut to fit the budget (QA s49): not kept.
    kept_external = [
        r
        for r, cut in zip(view.heatmap.row_ids, view.heatmap.row_cut, strict=True)
        if r in memories and not cut
    ]
    assert len(kept_external) > 1
    assert view.timeline.message.startswith(f"{len(kept_external)} external memories ")


def test_cost_rule_chart_fits_a_projector():
    from types import SimpleNamespace as NS

    from memaudit_ui.figures import cost_rule_ratio_chart

    writers = ["gvt", "density", "greedy", "fact_only", "summary_only", "recency_raw", "nv"]
    rules = [
        NS(
            rule=name,
            available=True,
            mean_ratio=tuple((w, 0.5) for w in writers),
            compared_budgets=(2.0, 4.0),
            stored_mean_ratio=tuple((w, 0.5) for w in writers),
        )
        for name in ("as_stored", "words", "bytes_overhead", "tokens_o200k")
    ]
    sens = NS(writers=tuple(writers), rules=rules)
    assert cost_rule_ratio_chart(sens, "t", present=True).layout.height <= 680
    assert cost_rule_ratio_chart(sens, "t").layout.height >= 420


def test_evidence_page_draws_no_empty_heatmap():
    at = _page("pages/3_Evidence_explorer.py", "sample:update_chain", "writer:density", 0)
    _no_errors(at)
    n_charts = len(at.get("plotly_chart"))
    at.radio(key="ev_heatmap_rows").set_value("kept").run()
    _no_errors(at)
    assert any("keeps a candidate" in i.value for i in at.info)
    assert len(at.get("plotly_chart")) == n_charts - 1


def test_heatmap_rows_when_nothing_is_kept():
    pkg = sample("veg-to-pescatarian")
    hm = evidence_view(pkg, 0, store_id="raw-logger", heatmap_rows="kept").heatmap
    # Only what the store wrote and cut to fit budget 0: every memory it selects (QA s49).
    (store,) = [s for s in pkg.stores if s.id == "raw-logger"]
    assert hm.row_ids == store.select and all(hm.row_cut)
    assert "keeps a candidate" in hm.message
    assert evidence_view(pkg, 0, writer="gvt", heatmap_rows="kept").heatmap.row_ids == ()


def test_views_serialise():
    pkg = sample("veg-to-pescatarian")
    json.dumps(compare_view(pkg, 12, store_id="raw-logger").to_dict())
    json.dumps(evidence_view(pkg, 12, store_id="raw-logger").to_dict())


# --------------------------------------------------------------------------- app pages

PAGE_SAMPLES = [
    "veg-to-pescatarian",
    "travel-assistant",
    "update_chain",
    "memaudit-small-s0",
    "temporal_interval",
]


def _page(
    page: str, package_key: str, store: str | None = None, budget: float | None = None
) -> AppTest:
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.query_params["package"] = package_key
    if store:
        at.query_params["store"] = store
    if budget is not None:
        at.query_params["budget"] = str(budget)
    at.run()
    at.switch_page(page).run()
    return at


def _no_errors(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


@pytest.mark.parametrize("stem", PAGE_SAMPLES)
def test_compare_page_renders(stem):
    at = _page("pages/2_Compare.py", f"sample:{stem}")
    _no_errors(at)
    labels = [m.label for m in at.metric]
    assert "F (store)" in labels and ("OPT" in labels or "incumbent" in labels)
    assert len(at.dataframe) >= 3


def test_compare_page_numbers_match_the_core():
    at = _page("pages/2_Compare.py", "sample:update_chain", store="writer:density", budget=6)
    _no_errors(at)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["OPT"] == "7.7350" and metrics["Ratio F / OPT"] == "0.730"
    texts = " ".join(t.value for t in at.text)
    assert "missed" in texts and "v_3" in texts
    units = at.dataframe[1].value
    assert list(units["value lost"]) == sorted(units["value lost"], reverse=True)


def test_compare_page_switching_store_in_the_sidebar():
    at = _page("pages/2_Compare.py", "sample:travel-assistant", store="store:raw-logger", budget=40)
    _no_errors(at)
    before = {m.label: m.value for m in at.metric}["Ratio F / OPT"]
    at.selectbox(key="w_store").select("store:validity-aware").run()
    _no_errors(at)
    after = {m.label: m.value for m in at.metric}["Ratio F / OPT"]
    expect = score(sample("travel-assistant"), 40, store_id="validity-aware").ratio_text
    assert before != after == expect


@pytest.mark.parametrize("stem", PAGE_SAMPLES)
def test_evidence_page_kind_filter_and_focus(stem):
    at = _page("pages/3_Evidence_explorer.py", f"sample:{stem}")
    _no_errors(at)
    kinds = at.multiselect(key="ev_kinds")
    # Every kind is picked at first; the chips say the kinds as the tables do (QA s49).
    all_kinds = list(kinds.value)
    assert list(kinds.options) == all_kinds
    assert set(all_kinds) == {u.kind for u in sample(stem).units}
    # Filter to one kind (invalidation when the package has it).
    kind = "invalidation" if "invalidation" in all_kinds else all_kinds[0]
    kinds.set_value([kind]).run()
    _no_errors(at)
    focus = at.selectbox(key="ev_focus")
    pkg = sample(stem)
    of_kind = [u.id for u in pkg.units if u.kind == kind]
    assert sorted(focus.options) == sorted(f"{u} · {kind}" for u in of_kind)
    # Pick the last unit of that kind as the focus.
    focus.select(of_kind[-1]).run()
    _no_errors(at)
    assert at.session_state["ev_focus"] == of_kind[-1]
    assert any(of_kind[-1] in t.value for t in at.text)
    # Clearing the filter shows a message, not an error.
    at.multiselect(key="ev_kinds").set_value([]).run()
    _no_errors(at)
    assert any("kind filter" in i.value for i in at.info)


def test_evidence_page_keeps_its_focus_and_filter_across_a_visit_to_another_page():
    at = _page("pages/3_Evidence_explorer.py", "sample:veg-to-pescatarian", store="store:fact-only")
    _no_errors(at)
    kind = next(u.kind for u in sample("veg-to-pescatarian").units if u.id == "u:meal:invalid")
    at.multiselect(key="ev_kinds").set_value([kind]).run()
    at.selectbox(key="ev_focus").select("u:meal:invalid").run()
    default_focus = at.session_state["ev_focus"]
    assert default_focus == "u:meal:invalid"
    at.switch_page("pages/2_Compare.py").run()
    _no_errors(at)
    at.switch_page("pages/3_Evidence_explorer.py").run()
    _no_errors(at)
    assert at.multiselect(key="ev_kinds").value == [kind]
    assert at.selectbox(key="ev_focus").value == "u:meal:invalid"


def test_evidence_page_candidate_table_matches_the_package():
    at = _page("pages/3_Evidence_explorer.py", "sample:veg-to-pescatarian", store="store:fact-only")
    _no_errors(at)
    at.selectbox(key="ev_focus").select("u:meal:invalid").run()
    _no_errors(at)
    pkg = sample("veg-to-pescatarian")
    expect = {c.id for c in pkg.candidates if c.coverage.get("u:meal:invalid", 0) > 0}
    tables = [d.value for d in at.dataframe]
    cand = next(t for t in tables if "coverage a_ur" in t.columns)
    assert set(cand["candidate"]) == expect
    queries = next(t for t in tables if "answer" in t.columns)
    assert set(queries["query"]) == {"q1", "q2"}


def test_evidence_page_big_sample_shows_cap_messages():
    at = _page("pages/3_Evidence_explorer.py", "sample:event-graph-50", store="writer:density")
    _no_errors(at)
    infos = " ".join(i.value for i in at.info)
    assert "candidates" in infos and "neighbourhood" in infos


def test_evidence_page_heatmap_rows_choice_is_kept():
    at = _page("pages/3_Evidence_explorer.py", "sample:veg-to-pescatarian", store="store:fact-only")
    _no_errors(at)
    rows = at.radio(key="ev_heatmap_rows")
    assert rows.value == "all" and list(rows.options) == list(HEATMAP_ROWS.values())
    rows.set_value("kept").run()
    _no_errors(at)
    ev = score(sample("veg-to-pescatarian"), at.session_state["ma_budget"], store_id="fact-only")
    n_kept = len(set(ev.selected) | set(ev.opt_selected))
    assert any(f"Showing the {n_kept} of " in i.value for i in at.info)
    at.switch_page("pages/2_Compare.py").run()
    at.switch_page("pages/3_Evidence_explorer.py").run()
    _no_errors(at)
    assert at.radio(key="ev_heatmap_rows").value == "kept"


def test_evidence_page_opens_the_short_heatmap_in_presentation_mode():
    """Speaker QA: in presentation mode the 39-row heatmap was 1,826 px tall."""
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.query_params["package"] = "sample:travel-assistant"
    at.query_params["present"] = "1"
    at.run()
    at.switch_page("pages/3_Evidence_explorer.py").run()
    _no_errors(at)
    assert at.radio(key="ev_heatmap_rows").value == "kept"
    assert any("kept by the store or the" in i.value for i in at.info)
    assert at.radio(key="ev_graph_scope").value == "focus"
    assert any("the neighbourhood of the focus unit" in i.value for i in at.info)


@pytest.mark.parametrize("page", ["pages/2_Compare.py", "pages/3_Evidence_explorer.py"])
def test_pages_with_an_external_store(page):
    assert (SAMPLES / "external-stores-demo.json").exists()
    at = _page(page, "sample:external-stores-demo", store="store:mem0")
    _no_errors(at)
    if page.endswith("Compare.py"):
        table = next(d.value for d in at.dataframe if "match" in d.value.columns)
        assert any(str(e).startswith("mem0/") for e in table["experience"])


def test_a_limited_view_calls_its_denominator_the_incumbent():
    """The app passes its time limit (a hard package's Compare page took 107 s); a limited
    denominator is then the incumbent everywhere in the explanation, never "the optimum"."""
    from memaudit_core.explain import compare_view
    from memaudit_core.generators import generate

    pkg = generate("random_coverage", seed=0)
    cv = compare_view(pkg, 107.8155, writer="gvt", time_limit=0.05)
    assert not cv.opt_certified and cv.opt_bound >= cv.opt_value
    text = " ".join(cv.explanation)
    assert "the incumbent keeps" in text and "the optimum" not in text


# Kept memories that share a unit: marginals are leave-one-out differences, not singleton
# values (mutation testing: in every sample the kept memories cover disjoint units). Expected
# values by hand from DESIGN.md (cap1: h(z) = min(1, z)).
OVERLAP_DOC = {
    "memaudit": 1,
    "id": "overlap",
    "experiences": [{"id": "e1", "time": 0}, {"id": "e2", "time": 1}, {"id": "e3", "time": 2}],
    "units": [
        {"id": "shared", "kind": "current_truth", "weight": 2.0},
        {"id": "own", "kind": "fact", "weight": 1.0},
    ],
    "candidates": [
        {
            "id": "a",
            "experience": "e1",
            "type": "atomic_fact",
            "cost": 1,
            "coverage": {"shared": 0.75},
        },
        {
            "id": "b",
            "experience": "e2",
            "type": "atomic_fact",
            "cost": 1,
            "coverage": {"shared": 0.75, "own": 0.5},
        },
        {"id": "c", "experience": "e3", "type": "summary", "cost": 1, "coverage": {"own": 1.0}},
    ],
    "stores": [
        {"id": "both", "label": "overlapping", "select": ["a", "b"]},
        {"id": "only-c", "label": "summary only", "select": ["c"]},
    ],
}


def test_marginals_of_overlapping_memories_are_leave_one_out_differences():
    cv = compare_view(parse_package(OVERLAP_DOC), 2, store_id="both")
    # F({a, b}) = 2 * min(1, 1.5) + 1 * 0.5 = 2.5
    assert cv.value == pytest.approx(2.5)
    cells = {m.candidate_id: m.marginal for r in cv.experience_rows for m in r.store if m.kept}
    # a: F({a,b}) - F({b}) = 2.5 - (2 * 0.75 + 0.5) = 0.5   (its singleton value is 1.5)
    # b: F({a,b}) - F({a}) = 2.5 - 2 * 0.75 = 1.0           (its singleton value is 2.0)
    assert cells == pytest.approx({"a": 0.5, "b": 1.0})


def test_n_missed_counts_units_that_lose_value():
    # Mutant M43 (CompareView.n_missed counts lost >= 0 instead of lost > 1e-9) survived.
    # Budget 2: {a,b}, {a,c}, {b,c} are all worth 2.5 at cost 2; the tie goes to ids (a, b),
    # so the store "both" is the optimum and misses nothing.
    pkg = parse_package(OVERLAP_DOC)
    cv = compare_view(pkg, 2, store_id="both")
    assert sorted(cv.evaluation.opt_selected) == ["a", "b"]
    assert cv.n_missed == 0
    # "only-c" (F = 1) is compared with an optimum closest to it: {a, c} and {b, c} are both
    # 2.5 (2 * 0.75 + min(1, 1) and 2 * 0.75 + min(1, 0.5 + 1)), one memory from it, touch
    # its experience and cost 2; the tie rule (QA s40) takes the smaller ids, {a, c}, whichever
    # optimum the solver returned. "shared" loses 2 * 0.75 - 0 = 1.5; "own" is covered alike
    # (lost 0, not a miss).
    cv = compare_view(pkg, 2, store_id="only-c")
    assert sorted(cv.evaluation.opt_selected) == ["a", "c"]
    lost = {u.unit_id: u.lost for u in cv.unit_rows}
    assert lost == pytest.approx({"shared": 1.5, "own": 0.0})
    assert cv.n_missed == 1


def test_bucket_rows_lose_opt_minus_store_per_bucket():
    # Mutant M58 (explain.py BucketRow.lost = s - o instead of o - s) survived: no test reads
    # a bucket's "value lost" (Compare page table and CSV export).
    # "both" = {a, b} against "only-c" = {c}: the solver's optimum is {a, b} itself.
    cv = compare_view(parse_package(OVERLAP_DOC), 2, store_id="only-c")
    rows = {b.bucket: b for b in cv.bucket_rows}
    # The optimum shown is {a, c}. current truth: unit "shared" (weight 2): store 0, optimum
    # 2 * 0.75 = 1.5. other: unit "own" (kind fact, weight 1): 1 * min(1, 1) on both sides.
    assert rows["current truth"].lost == pytest.approx(1.5)
    assert rows["other"].lost == pytest.approx(0.0)
    table = {r["bucket"]: r for r in cv.bucket_table()}  # the exported table / CSV
    assert table["current truth"]["value lost"] == pytest.approx(1.5)
    assert table["other"]["value lost"] == pytest.approx(0.0)
    # A store that covers a unit better than the optimum gains there (negative loss): {c} at
    # budget 1 (F 1) against the optimum {b} (F 2): "own" 1.0 against 0.5.
    cv = compare_view(parse_package(OVERLAP_DOC), 1, store_id="only-c")
    rows = {b.bucket: b for b in cv.bucket_rows}
    assert cv.evaluation.opt_selected == ("b",)
    assert rows["current truth"].lost == pytest.approx(1.5)
    assert rows["other"].lost == pytest.approx(-0.5)
