"""QA s47 (cmpjson): the Compare page could not save the record that explains its score.

It offered PNG, SVG and CSV downloads only, and no CSV holds the "Why this score" paragraphs
or the Notes (the pruning note, "not every equally good store was compared"), although the
library saves a Compare view (``compare_view(...).to_dict()``) that ``read_result`` and
``memaudit show`` read back. The page now offers "Compare result (JSON)" for the view it shows,
named by package, store and budget like its CSVs. Here the file of each kind of store (a
writer, a package store, an external store) is read back with ``read_result`` and with
``memaudit show`` and compared with the library's own view for the same link and with the
paragraphs the page drew; the file names are written out by hand from the link.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from app_utils import capture_downloads, open_app
from cli_utils import run_cli

import memaudit_core as ma

ROOT = Path(__file__).resolve().parent.parent
COMPARE = "pages/2_Compare.py"

#: (sample, budget, store key, library keywords, file name, source kind, a note's words).
CASES = {
    "writer": (
        "update_chain",
        "6",
        "writer:density",
        {"writer": "density"},
        "update_chain-density-compare-B6.json",
        "writer",
        None,
    ),
    "package store": (
        "travel-assistant",
        "40",
        "store:raw-logger",
        {"store_id": "raw-logger"},
        "travel-assistant-Raw-logger-compare-B40.json",
        "store",
        "Not every equally good store was compared",
    ),
    "external store": (
        "external-stores-demo",
        "24",
        "store:mem0",
        {"store_id": "mem0"},
        "external-stores-demo-Mem0-extracted-facts-compare-B24.json",
        "external",
        "more than the budget 24 words",
    ),
}


@pytest.fixture(scope="module", params=list(CASES))
def shown(request) -> tuple[str, Any, dict[str, dict[str, Any]]]:
    """The page opened by a link to one store at one budget: the case, the run and what it
    offers to download."""
    sample, budget, store = CASES[request.param][:3]
    mp = pytest.MonkeyPatch()
    try:
        offered = capture_downloads(mp)
        # The store is a sidebar setting: the link names it on the app's first run.
        at = open_app(COMPARE, package=f"sample:{sample}", budget=budget, store=store)
    finally:
        mp.undo()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return request.param, at, offered


def _text(offer: dict[str, Any]) -> str:
    data = offer["data"]
    data = data() if callable(data) else data
    return data.decode() if isinstance(data, bytes) else data


def _run_free(data: Any) -> Any:
    """``data`` without the per-run measurements (``time_s``, ``nodes``) at any depth."""
    if isinstance(data, dict):
        return {k: _run_free(v) for k, v in data.items() if k not in ("time_s", "nodes")}
    if isinstance(data, list | tuple):
        return [_run_free(v) for v in data]
    return data


def test_compare_offers_its_view_as_json(shown, tmp_path) -> None:
    case, at, offered = shown
    sample, budget, _, kwargs, file_name, source_kind, note_words = CASES[case]
    assert "compare_json" in offered, sorted(offered)
    offer = offered["compare_json"]
    assert offer["label"] == "Compare result (JSON)"
    assert offer["mime"] == "application/json"
    assert offer["file_name"] == file_name

    path = tmp_path / file_name
    path.write_text(_text(offer))
    got = ma.read_result(path)
    pkg = ma.load_package(ROOT / "sample_packages" / f"{sample}.json")
    want = ma.compare_view(pkg, float(budget), **kwargs)
    assert isinstance(got, type(want))
    # Equal but for how long each engine ran and how many nodes it searched: the page's view
    # may come from a solve made earlier in the test process than this fresh one (a full run,
    # s50: an earlier file's view was in Streamlit's cache, its solve gone from the core's).
    assert _run_free(got.to_dict()) == _run_free(want.to_dict())
    assert got.source_kind == source_kind and got.budget == float(budget)
    # The paragraphs the page drew, Notes first, then "Why this score".
    assert [t.value for t in at.text] == [*got.notes, *got.explanation]
    assert got.explanation
    if note_words is not None:
        assert any(note_words in note for note in got.notes), got.notes

    rc, out, err = run_cli("show", str(path))
    assert rc == 0, err
    for note in got.notes:
        assert note in out
    # The explanation is wrapped at 100 columns, as `score` wraps it (s56): its words.
    words = " ".join(out.split())
    for paragraph in got.explanation:
        assert " ".join(paragraph.split()) in words
    rc, out, err = run_cli("show", str(path), "--json")
    assert rc == 0, err
    assert ma.read_result(json.loads(out)) == got  # the file, as show re-emits it


def test_record_sits_under_why_this_score(shown) -> None:
    """Beside the paragraphs only it saves, before the chart's PNG (and a unit-less package's
    stop): the first download on the page."""
    _, _, offered = shown
    # The app's first run (Overview) offers its own downloads first.
    keys = [k for k in offered if k.startswith("compare_")]
    assert keys[:2] == ["compare_json", "compare_kinds_png"], keys
