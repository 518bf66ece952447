"""QA s46 (ablexport): none of the Ablations page's downloads could be read back.

The page offered PNG, SVG and CSV only: ``memaudit show X.csv`` refuses ("not valid JSON"),
although every result behind the page (ablation curves, cost-rule, capacity and noise
sensitivity) has a ``result_kind`` that ``show`` reads, and the noise CSV held per-writer
aggregates only (no seed, no draws, no per-draw tau) under a name giving mode and level alone.

Each analysis now offers "Result (JSON)": its ``to_dict()``, named by package, budgets and (for
noise) mode, level, draws and seed. Here each file is read back with ``read_result`` and with
``memaudit show`` and compared with the library's own computation for the same inputs; names
and the noise settings are checked against values written out by hand from the link.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from app_utils import capture_downloads, open_linked
from cli_utils import run_cli

import memaudit_core as ma
from memaudit_core import robustness as rb
from memaudit_core.curves import certification_report

ROOT = Path(__file__).resolve().parent.parent
UPDATE_CHAIN = ROOT / "sample_packages" / "update_chain.json"
ABLATIONS = "pages/5_Ablations_and_sensitivity.py"
CERTIFICATION = "pages/6_Certification.py"
#: update_chain's own grid (its "budgets"), written out: the file names must carry it.
GRID = [3.0, 6.0, 13.0]
GRID_NAME = "B3_6_13"
RULES = ["as_stored", "words"]
#: The noise settings the link asks for.
MODE, LEVEL, DRAWS, SEED = "flip", 0.3, 3, 7


def _saved(offer: dict[str, Any], tmp_path: Path) -> Path:
    data = offer["data"]
    data = data() if callable(data) else data
    path = tmp_path / offer["file_name"]
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def _read_back(offer: dict[str, Any], tmp_path: Path) -> Any:
    """The typed result in the offered file, after ``memaudit show`` read it too."""
    assert offer["mime"] == "application/json"
    path = _saved(offer, tmp_path)
    rc, out, err = run_cli("show", str(path))
    assert rc == 0, err
    rc, out, err = run_cli("show", str(path), "--json")
    assert rc == 0, err
    result = ma.read_result(path)
    # What show --json prints is the same result again.
    assert ma.read_result(json.loads(out)) == result
    return result


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> dict[str, dict[str, Any]]:
    """The page on update_chain (small: every analysis runs on sight) with two presets, one
    removal, two cost rules, k = 2 and three noise draws."""
    mp = pytest.MonkeyPatch()
    try:
        offered = capture_downloads(mp)
        open_linked(
            ABLATIONS,
            "sample:update_chain",
            presets="no_validity,generic",
            removed="summary",
            rules=",".join(RULES),
            k="2",
            noise=MODE,
            level=str(LEVEL),
            draws=str(DRAWS),
            seed=str(SEED),
        )
    finally:
        mp.undo()
    return offered


@pytest.fixture(scope="module")
def pkg() -> ma.Package:
    p = ma.load_package(UPDATE_CHAIN)
    assert list(p.budget_grid()) == GRID
    return p


def test_every_analysis_offers_its_result_as_json(page) -> None:
    want = {
        "abl_json_no_validity": "update_chain-ablation-no_validity-B3_6_13.json",
        "abl_json_generic": "update_chain-ablation-generic-B3_6_13.json",
        "abl_json_without:summary": "update_chain-ablation-without-summary-B3_6_13.json",
        "abl_cost_json": "update_chain-cost-rules-as_stored_words-B3_6_13.json",
        "abl_cap_json": "update_chain-capacity-k2-B3_6_13.json",
        "abl_noise_json": "update_chain-noise-flip-level0.3-draws3-seed7-B3_6_13.json",
    }
    got = {key: page[key]["file_name"] for key in want if key in page}
    assert got == want
    assert all("Result (JSON)" in page[key]["label"] for key in want)


def test_ablation_records_read_back_as_the_library_curves(page, pkg, tmp_path) -> None:
    lib = rb.ablation_curves(pkg, GRID, ["no_validity", "generic"], [["summary"]])
    for key, want in zip(
        ("abl_json_no_validity", "abl_json_generic", "abl_json_without:summary"), lib, strict=True
    ):
        got = _read_back(page[key], tmp_path)
        assert isinstance(got, rb.AblationCurve)
        assert got == want
    # Removing "summary" removes update_chain's summary candidates, counted from the file.
    doc = json.loads(UPDATE_CHAIN.read_text())
    n_summary = sum(c["type"] == "summary" for c in doc["candidates"])
    assert _read_back(page["abl_json_without:summary"], tmp_path).n_removed == n_summary


def test_cost_rule_record_reads_back(page, pkg, tmp_path) -> None:
    got = _read_back(page["abl_cost_json"], tmp_path)
    assert got == rb.cost_rule_sensitivity(pkg, GRID, RULES)
    assert [r.rule for r in got.rules] == RULES and list(got.budgets) == GRID


def test_capacity_record_reads_back(page, pkg, tmp_path) -> None:
    got = _read_back(page["abl_cap_json"], tmp_path)
    want = rb.capacity_sensitivity(pkg, GRID, 2)
    # Engine wall times differ run to run; everything else is the same computation.
    assert [[e for e, _ in p.engine_times] for p in got.points] == [
        [e for e, _ in p.engine_times] for p in want.points
    ]
    timed = replace(
        want,
        points=tuple(
            replace(w, engine_times=g.engine_times)
            for w, g in zip(want.points, got.points, strict=True)
        ),
    )
    assert got == timed
    assert got.k == 2 and [p.budget for p in got.points] == GRID


def test_noise_record_holds_seed_draws_and_every_tau(page, pkg, tmp_path) -> None:
    offer = page["abl_noise_json"]
    raw = json.loads(offer["data"] if isinstance(offer["data"], str) else offer["data"]())
    assert (raw["mode"], raw["level"], raw["draws"], raw["seed"]) == (MODE, LEVEL, DRAWS, SEED)
    # One tau per (budget, draw).
    assert len(raw["taus"]) == DRAWS * len(GRID)
    got = _read_back(offer, tmp_path)
    assert got == rb.noise_sensitivity(pkg, MODE, LEVEL, DRAWS, SEED, GRID)
    # The chart and the per-writer CSV carry the same settings in their names.
    stem = "update_chain-noise-flip-level0.3-draws3-seed7-B3_6_13"
    assert page["abl_noise_table_csv"]["file_name"] == f"{stem}.csv"
    assert page["abl_noise_chart_png"]["file_name"] == f"{stem}.png"


def test_certification_record_still_reads_back(monkeypatch, pkg, tmp_path) -> None:
    """The Certification page's record goes through the same helper now."""
    offered = capture_downloads(monkeypatch)
    open_linked(CERTIFICATION, "sample:update_chain")
    offer = offered["cert_json"]
    assert offer["label"] == "Certificate record (JSON)"
    assert offer["file_name"] == "update_chain-certification.json"
    got = _read_back(offer, tmp_path)
    want = certification_report(pkg, GRID)
    assert (got.package_id, got.content_hash) == (want.package_id, want.content_hash)
    assert [(r.budget, r.certified) for r in got.rows] == [(b, True) for b in GRID]
    assert [(r.budget, r.certified) for r in want.rows] == [(b, True) for b in GRID]
