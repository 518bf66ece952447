"""Saved Compare and Evidence views read back (session 41): ``ma.compare_view(...)`` and
``ma.evidence_view(...)`` named their kind in ``to_dict()``, but ``read_result`` and
``memaudit show`` refused them as "not readable", and their files left out what rebuilding
them needs (the Compare view's evaluation, the heatmap's hover texts, the graph's edges and
node hover texts, the units' package positions, the score's notes).

Views are built from sample packages for a reference writer and for an external store, with
and without a focus unit; each must read back equal to the view saved. Expected figures are
the packages' own (update_chain at budget 6: density F 5.65 against OPT 7.735, ratio 0.730,
missing unit v_3; external-stores-demo at budget 24: mem0 F 13 against OPT over P+ 13.1).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_utils import run_cli

import memaudit_core as ma
from memaudit_core.errors import ResultError
from memaudit_core.explain import CompareView, EvidenceView

SAMPLES = Path(__file__).resolve().parent.parent / "sample_packages"


@pytest.fixture(scope="module")
def views() -> dict[str, Any]:
    chain = ma.load_package(str(SAMPLES / "update_chain.json"))
    demo = ma.load_package(str(SAMPLES / "external-stores-demo.json"))
    return {
        "chain_compare": ma.compare_view(chain, 6, writer="density"),
        "chain_evidence": ma.evidence_view(chain, 6, writer="density"),
        "chain_evidence_focus": ma.evidence_view(chain, 6, writer="density", focus_unit_id="inv_1"),
        # A kind filter leaving the asked-for unit out: the view says so in its notes.
        "chain_evidence_filtered": ma.evidence_view(
            chain, 6, writer="gvt", kinds=["stale"], focus_unit_id="v_3"
        ),
        "demo_compare": ma.compare_view(demo, 24, store_id="mem0"),
        "demo_evidence": ma.evidence_view(demo, 24, store_id="mem0"),
        "demo_evidence_focus": ma.evidence_view(
            demo, 24, store_id="mem0", focus_unit_id="u:hotel", heatmap_rows="kept"
        ),
    }


def _saved(tmp_path: Path, name: str, doc: dict[str, Any]) -> Path:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("name", "model"),
    [
        ("chain_compare", CompareView),
        ("chain_evidence", EvidenceView),
        ("chain_evidence_focus", EvidenceView),
        ("chain_evidence_filtered", EvidenceView),
        ("demo_compare", CompareView),
        ("demo_evidence", EvidenceView),
        ("demo_evidence_focus", EvidenceView),
    ],
)
def test_saved_views_read_back_equal(views, tmp_path, name, model):
    view = views[name]
    doc = view.to_dict()
    again = ma.read_result(_saved(tmp_path, name, doc))
    assert type(again) is model
    assert again == view
    # A parsed dict reads back the same way, and so does the model's own from_dict.
    assert ma.read_result(json.loads(json.dumps(doc))) == view
    assert model.from_dict(json.loads(json.dumps(doc))) == view


def test_read_back_views_keep_their_figures(views, tmp_path):
    cv = ma.read_result(_saved(tmp_path, "cv", views["chain_compare"].to_dict()))
    assert (cv.label, cv.budget, cv.value, cv.ratio_text) == ("density", 6.0, 5.65, "0.730")
    assert cv.unit_rows[0].unit_id == "v_3" and cv.n_missed == 1
    assert cv.evaluation.writer == "density" and cv.evaluation.value == 5.65

    ext = ma.read_result(_saved(tmp_path, "ext", views["demo_compare"].to_dict()))
    # The figure read back is the saved one to the bit; 13.1 itself is the package's OPT up to
    # the last bit of a dot product, which depends on the BLAS build (NumPy 2.4: 13.100000000000001).
    assert (ext.source_kind, ext.value) == ("external", 13.0)
    assert ext.opt_value == views["demo_compare"].opt_value == pytest.approx(13.1, rel=1e-12)
    assert ext.opt_name == "OPT over P+"

    ev = ma.read_result(_saved(tmp_path, "ev", views["chain_evidence_focus"].to_dict()))
    assert ev.focus_unit_id == "inv_1" and ev.focus is not None and ev.focus.unit_id == "inv_1"
    # The hover texts and the graph's edges are kept (the viewer draws them).
    assert ev.heatmap.hover == views["chain_evidence_focus"].heatmap.hover
    assert any(h for row in ev.heatmap.hover for h in row)
    assert ev.graph.edge_x and ev.graph.focus_edge_x

    filtered = ma.read_result(_saved(tmp_path, "f", views["chain_evidence_filtered"].to_dict()))
    assert filtered.kinds == ("stale",) and filtered.focus_unit_id != "v_3"
    assert filtered.notes[0].startswith("focus unit 'v_3' is outside the kind filter")

    demo = ma.read_result(_saved(tmp_path, "d", views["demo_evidence"].to_dict()))
    assert demo.score_notes and demo.score_notes == views["demo_evidence"].score_notes


def test_show_prints_saved_views(views, tmp_path):
    path = _saved(tmp_path, "compare", views["chain_compare"].to_dict())
    rc, out, err = run_cli("show", str(path))
    assert (rc, err) == (0, "")
    first = out.splitlines()[0]
    assert first.startswith(f"saved compare_view {path}: package update_chain; density (writer)")
    assert "budget 6 words: F 5.65 of OPT 7.735, ratio 0.730; 1 unit(s) missed" in first
    # The bucket table: current truth lost 2.185 (v_3).
    assert any(line.startswith("current truth") and "2.185" in line for line in out.splitlines())
    rc, out, err = run_cli("show", str(path), "--json")
    assert rc == 0 and ma.read_result(json.loads(out)) == views["chain_compare"]

    path = _saved(tmp_path, "evidence", views["chain_evidence_focus"].to_dict())
    rc, out, err = run_cli("show", str(path))
    assert (rc, err) == (0, "")
    assert out.startswith(
        f"saved evidence_view {path}: package update_chain; density (writer) against OPT at "
        "budget 6 words; kinds current_truth, invalidation, stale; focus unit inv_1"
    )
    assert "candidates covering inv_1:" in out
    assert any(line.startswith("v_3 ") and "2.185" in line for line in out.splitlines())

    path = _saved(tmp_path, "external", views["demo_compare"].to_dict())
    rc, out, err = run_cli("show", str(path))
    assert (rc, err) == (0, "")
    assert "(external) at budget 24 words: F 13 of OPT over P+ 13.1, ratio 0.992" in out


def _set(keys: list[str | int], value: Any) -> Callable[[dict], None]:
    def edit(doc: dict) -> None:
        node: Any = doc
        for key in keys[:-1]:
            node = node[key]
        node[keys[-1]] = value

    return edit


def _drop(keys: list[str | int]) -> Callable[[dict], None]:
    def edit(doc: dict) -> None:
        node: Any = doc
        for key in keys[:-1]:
            node = node[key]
        del node[keys[-1]]

    return edit


@pytest.mark.parametrize(
    ("name", "edit", "json_path", "rule"),
    [
        # Compare: the headline is the evaluation's, and its ratio is value / opt.
        ("chain_compare", _set(["value"], 6.0), "$.value", "inconsistent"),
        ("chain_compare", _set(["ratio"], 0.9), "$.ratio", "inconsistent"),
        ("chain_compare", _set(["ratio_text"], "0.900"), "$.ratio_text", "inconsistent"),
        ("chain_compare", _set(["opt_cost"], 1.0), "$.opt_cost", "inconsistent"),
        # The evaluation checks itself against its optimum (a nested, located path).
        ("chain_compare", _set(["evaluation", "ratio"], 0.9), "$.evaluation.ratio", "inconsistent"),
        # Rows: a memory not in the store, a unit not in the evaluation, a wrong verdict.
        (
            "chain_compare",
            _set(["experience_rows", 3, "opt", 0, "candidate_id"], "nope"),
            "$.experience_rows[3].opt[0].candidate_id",
            "inconsistent",
        ),
        (
            "chain_compare",
            _set(["unit_rows", 0, "unit_id"], "u?"),
            "$.unit_rows[0].unit_id",
            "inconsistent",
        ),  # fmt: skip
        (
            "chain_compare",
            _set(["unit_rows", 0, "missed"], False),
            "$.unit_rows[0].missed",
            "inconsistent",
        ),  # fmt: skip
        (
            "chain_compare",
            _set(["bucket_rows", 0, "n_units"], 5),
            "$.bucket_rows[0].n_units",
            "inconsistent",
        ),  # fmt: skip
        (
            "chain_compare",
            _set(["bucket_rows", 0, "lost"], 0.5),
            "$.bucket_rows[0].lost",
            "inconsistent",
        ),  # fmt: skip
        (
            "chain_compare",
            _set(["unit_rows", 0, "lost"], "a lot"),
            "$.unit_rows[0].lost",
            "type",
        ),  # fmt: skip
        ("chain_compare", _drop(["evaluation"]), "$.evaluation", "required"),
        # Evidence: the focus is one of the view's units, and its tables match its counts.
        (
            "chain_evidence_focus",
            _set(["focus_unit_id"], "zzz"),
            "$.focus_unit_id",
            "inconsistent",
        ),  # fmt: skip
        (
            "chain_evidence_focus",
            _set(["units", 0, "kind"], "fact"),
            "$.units[0].kind",
            "inconsistent",
        ),  # fmt: skip
        (
            "chain_evidence_focus",
            _set(["focus_candidates"], []),
            "$.focus_candidates",
            "inconsistent",
        ),  # fmt: skip
        (
            "demo_evidence_focus",
            _set(["focus_queries", 0, "requires"], ["u:seat"]),
            "$.focus_queries[0].requires",
            "inconsistent",
        ),  # fmt: skip
        ("chain_evidence", _set(["heatmap", "z", 1], [0.5]), "$.heatmap.z[1]", "inconsistent"),
        (
            "chain_evidence",
            _set(["heatmap", "row_types"], ["x"]),
            "$.heatmap.row_types",
            "inconsistent",
        ),  # fmt: skip
        ("chain_evidence", _set(["graph", "n_nodes"], 1), "$.graph.n_nodes", "inconsistent"),
        ("chain_evidence", _set(["graph", "n_edges"], 1), "$.graph.n_edges", "inconsistent"),
        (
            "chain_evidence",
            _set(["graph", "nodes", 2, "x"], "left"),
            "$.graph.nodes[2].x",
            "type",
        ),  # fmt: skip
        (
            "chain_evidence",
            _set(["timeline", "points", 0, "row"], "mine"),
            "$.timeline.points[0].row",
            "inconsistent",
        ),  # fmt: skip
        ("chain_evidence", _drop(["score_notes"]), "$.score_notes", "required"),
    ],
)
def test_tampered_views_are_refused_where_they_break(views, tmp_path, name, edit, json_path, rule):
    doc = copy.deepcopy(views[name].to_dict())
    edit(doc)
    path = _saved(tmp_path, name, doc)
    with pytest.raises(ResultError) as info:
        ma.read_result(path)
    assert (info.value.path, info.value.rule) == (json_path, rule)
    assert str(info.value).startswith(f"{path}: {json_path}: ")
    # show says the same, with a non-zero exit and no traceback.
    rc, out, err = run_cli("show", str(path))
    assert rc == 2 and out == "" and f"{json_path}: " in err and "Traceback" not in err


def test_view_saved_before_it_read_back_is_told_so(views, tmp_path):
    # As session 40 wrote an Evidence view: no score notes, hover texts or edges.
    doc = copy.deepcopy(views["chain_evidence"].to_dict())
    del doc["score_notes"], doc["heatmap"]["hover"], doc["graph"]["edge_x"]
    with pytest.raises(ResultError) as info:
        ma.read_result(_saved(tmp_path, "old", doc))
    assert (info.value.path, info.value.rule) == ("$.score_notes", "required")
    assert "EvidenceView saved before it could be read back" in str(info.value)
