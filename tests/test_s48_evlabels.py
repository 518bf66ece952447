"""Speaker QA s48 (live demo), Evidence explorer.

3. Cut labels read the same for different ids: in presentation mode the graph's experience
   s3_pref_0_update and candidate s3_pref_0_update_compound_update both read
   "s3_pref…_update", and the timeline had two "s3_pr…date" ticks (s3_pref_0_update and
   s3_pref_1_update); the 1400 px PNG / SVG exports were cut as for a 520 px column.
4. The heatmap's and the graph's downloads did not name the focus unit: the default focus and
   unit=invalid:pref:3:0 both saved memaudit-small-s3-density-coverage-heatmap-B6.png.

The checks read the figures the page draws for QA's link (gen:memaudit-small:3, budget 6,
writer density, focus unit invalid:pref:3:0) and tell a label's id by its own rule: a label is
the whole id, or a head, "…" and a tail of it that no other id shown starts and ends with.
"""

from __future__ import annotations

import re

import plotly.graph_objects as go
import pytest
from app_utils import APP, capture_downloads
from streamlit.testing.v1 import AppTest

from memaudit_core.explain import EvidenceView, evidence_view
from memaudit_ui import figures, render
from memaudit_ui.sources import load_by_key

EVIDENCE = "pages/3_Evidence_explorer.py"
PACKAGE, BUDGET, FOCUS = "gen:memaudit-small:3", 6.0, "invalid:pref:3:0"
#: The focus unit as a file name has it (":" is not a file-name character), written out.
FOCUS_IN_NAME = "invalid-pref-3-0"


@pytest.fixture(scope="module")
def views() -> dict[str, EvidenceView]:
    pkg = load_by_key(PACKAGE)
    return {
        scope: evidence_view(pkg, BUDGET, writer="density", focus_unit_id=FOCUS, graph_scope=scope)
        for scope in ("focus", "all")
    }


def _open_qa_link(**page_settings: str) -> AppTest:
    """The explorer opened by QA's link (the app first, as a browser opening the link does,
    then the page with its own settings)."""
    at = AppTest.from_file(str(APP), default_timeout=120)
    for name, value in (("package", PACKAGE), ("budget", "6"), ("store", "writer:density")):
        at.query_params[name] = value
    at.query_params["present"] = "1"
    at.run()
    for name, value in page_settings.items():
        at.query_params[name] = value
    at.switch_page(EVIDENCE).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _reads_as(label: str, ident: str) -> bool:
    """Whether ``label`` may stand for ``ident``: the id itself, or a head and a tail of it
    with at least one character cut between them."""
    if "…" not in label:
        return label == ident
    head, tail = label.split("…", 1)
    return len(ident) > len(head) + len(tail) and ident.startswith(head) and ident.endswith(tail)


def _assert_each_label_names_its_id(shown: list[tuple[str, str]], ids: set[str]) -> None:
    """``shown``: (label, id) pairs. Each label stands for its id and for no other of ``ids``,
    so no two ids read the same."""
    assert shown
    for label, ident in shown:
        assert _reads_as(label, ident), (label, ident)
        others = sorted(u for u in ids if u != ident and _reads_as(label, u))
        assert not others, f"{label!r} for {ident!r} reads as {others}"
    by_label: dict[str, set[str]] = {}
    for label, ident in shown:
        by_label.setdefault(label, set()).add(ident)
    assert {k: v for k, v in by_label.items() if len(v) > 1} == {}


def _graph_labels(view: EvidenceView, present: bool, width_px: int | None = None):
    gd = view.graph
    kwargs = {} if width_px is None else {"width_px": width_px}
    fig = figures.evidence_graph(gd, "Evidence graph", present=present, **kwargs)
    id_of = dict(zip(gd.node_hover, gd.node_labels, strict=True))
    assert len(id_of) == len(gd.node_labels)  # a label's hover names its node
    return [(a.text, id_of[a.hovertext]) for a in fig.layout.annotations if a.hovertext in id_of]


def _timeline_ticks(view: EvidenceView, present: bool, width_px: int | None = None):
    tl = view.timeline
    kwargs = {} if width_px is None else {"width_px": width_px}
    fig = figures.store_timeline(tl, "Memory written", present=present, **kwargs)
    id_at = {float(t): str(e) for e, t, _ in tl.experiences}
    assert len(id_at) == len(tl.experiences)  # one experience a time: a tick names one
    axis = fig.layout.xaxis
    # A leading line break puts an id on the second, staggered line (QA s48, e2e): not text.
    return [
        (text.replace("<br>", ""), id_at[v])
        for v, text in zip(axis.tickvals, axis.ticktext, strict=True)
    ]


@pytest.mark.parametrize("scope", ["focus", "all"])
@pytest.mark.parametrize("present", [True, False])
def test_graph_labels_of_different_ids_differ(views, present, scope) -> None:
    view = views[scope]
    shown = _graph_labels(view, present)
    assert len(shown) == view.graph.n_nodes
    _assert_each_label_names_its_id(shown, set(view.graph.node_labels))


@pytest.mark.parametrize("present", [True, False])
def test_timeline_ticks_of_different_experiences_differ(views, present) -> None:
    tl = views["focus"].timeline
    shown = _timeline_ticks(views["focus"], present)
    _assert_each_label_names_its_id(shown, {str(e) for e, _, _ in tl.experiences})


def test_the_qa_collisions_are_gone_on_the_projector(views) -> None:
    """QA's own readings: the experience and its compound update, and the two updates."""
    graph = dict((ident, label) for label, ident in _graph_labels(views["focus"], True))
    assert graph["s3_pref_0_update"] != graph["s3_pref_0_update_compound_update"]
    ticks = [label for label, _ in _timeline_ticks(views["focus"], False)]
    assert len(ticks) == len(set(ticks)), ticks


@pytest.mark.parametrize("present", [True, False])
def test_exports_show_whole_ids_where_1400_px_hold_them(views, present) -> None:
    # 7 experiences of at most 16 characters, 8 or 43 nodes: room for every whole id.
    for scope in ("focus", "all"):
        view = views[scope]
        shown = _graph_labels(view, present, figures.EXPORT_WIDTH_PX)
        assert sorted(label for label, _ in shown) == sorted(map(str, view.graph.node_labels))
    tl = views["focus"].timeline
    ticks = _timeline_ticks(views["focus"], present, figures.EXPORT_WIDTH_PX)
    assert [label for label, _ in ticks] == [str(e) for e, _, _ in tl.experiences]


def test_heatmap_and_graph_downloads_name_the_focus_unit(monkeypatch) -> None:
    named = capture_downloads(monkeypatch)
    at = _open_qa_link(unit=FOCUS)
    assert at.session_state["ev_focus"] == FOCUS
    offered_named = dict(named)
    monkeypatch.undo()

    default = capture_downloads(monkeypatch)
    at = _open_qa_link()
    monkeypatch.undo()
    default_focus = at.session_state["ev_focus"]
    assert default_focus != FOCUS
    default_in_name = render.safe_filename(default_focus)

    base = "memaudit-small-s3-density"
    for offered, unit in ((offered_named, FOCUS_IN_NAME), (default, default_in_name)):
        for fmt in ("png", "svg"):
            assert offered[f"evidence_heatmap_{fmt}"]["file_name"] == (
                f"{base}-{unit}-coverage-heatmap-B6.{fmt}"
            )
            assert offered[f"evidence_graph_{fmt}"]["file_name"] == f"{base}-{unit}-graph-B6.{fmt}"
        # The timeline does not depend on the focus unit: its name stays.
        assert offered["evidence_timeline_png"]["file_name"] == f"{base}-timeline-B6.png"


def test_the_pages_graph_export_is_laid_out_for_1400_px(monkeypatch) -> None:
    """The page's SVG download draws the figure laid out for the export's width: whole ids
    (the screen's, for a 520 px column, are cut)."""
    offered = capture_downloads(monkeypatch)
    at = _open_qa_link(unit=FOCUS)
    assert at.session_state["ev_focus"] == FOCUS
    drawn: list[go.Figure] = []
    monkeypatch.setattr(render, "_start_kaleido", lambda: None)
    monkeypatch.setattr(go.Figure, "to_image", lambda fig, **kw: drawn.append(fig) or b"<svg/>")
    assert offered["evidence_graph_svg"]["data"]() == b"<svg/>"
    assert offered["evidence_timeline_svg"]["data"]() == b"<svg/>"
    graph, timeline = drawn
    expected_nodes = {
        "s3_pref_0_update",
        "s3_pref_0_update_tombstone",
        "s3_pref_0_update_compound_update",
        "s3_pref_0_update_summary",
        "s3_pref_0_update_raw_span",
        "current:pref:3:0",
        "invalid:pref:3:0",
        "stale:pref:3:0:old",
    }
    assert {a.text for a in graph.layout.annotations} == expected_nodes
    assert "s3_pref_1_update" in timeline.layout.xaxis.ticktext


@pytest.fixture
def kaleido_server():
    yield
    render._stop_kaleido()


@pytest.mark.parametrize("present", [True, False])
def test_exported_svgs_draw_every_whole_id(views, present, kaleido_server) -> None:
    """Through the download's own export path (kaleido at the export's width): plotly drops a
    tick label that would leave the figure, as it did the last id, s3_pref_1_update."""
    view = views["focus"]
    tl_fig = figures.store_timeline(
        view.timeline, "Memory written", present=present, width_px=figures.EXPORT_WIDTH_PX
    )
    svg = render._image(tl_fig, "svg")().decode("utf-8")
    ticks = re.findall(r'<g class="xtick"><text[^>]*>([^<]+)<', svg)
    assert ticks == [str(e) for e, _, _ in view.timeline.experiences]
    graph_fig = figures.evidence_graph(
        view.graph, "Evidence graph", present=present, width_px=figures.EXPORT_WIDTH_PX
    )
    svg = render._image(graph_fig, "svg")().decode("utf-8")
    texts = set(re.findall(r"<text[^>]*>([^<]+)</text>", svg))
    assert set(map(str, view.graph.node_labels)) <= texts
