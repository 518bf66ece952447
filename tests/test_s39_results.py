"""Saved results read back (QA s39 h5): edited numbers are refused, failed writers are listed.

Every file here is written by the real CLI into a temporary folder; a test edits one field
with ``json`` and checks that ``memaudit show`` and ``ma.read_result`` refuse it with the rule
``inconsistent`` at the JSON path of the edited field. Each test fails on the code before the
fix (checked against a worktree of 187beb5), except the one marked as a regression guard.
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

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "sample_packages"
IMPORTERS = REPO / "tests" / "fixtures" / "importers"
UPDATE_CHAIN = str(SAMPLES / "update_chain.json")
EVENT_GRAPH = str(SAMPLES / "event-graph-500.json")
DEMO = str(SAMPLES / "external-stores-demo.json")
TRAVEL = str(SAMPLES / "travel-assistant.json")

#: name -> the CLI arguments whose --json output is saved as name.json.
COMMANDS: dict[str, tuple[str, ...]] = {
    "solve": ("solve", UPDATE_CHAIN, "--budget", "6", "--json"),
    "solve_b0": ("solve", UPDATE_CHAIN, "--budget", "0", "--json"),
    "solve_lim": (
        "solve",
        EVENT_GRAPH,
        "--budget",
        "300",
        "--solver",
        "bnb",
        "--time-limit",
        "0.05",
        "--json",
    ),  # fmt: skip
    "score_w": ("score", UPDATE_CHAIN, "--budget", "6", "--writer", "gvt", "--json"),
    "score_w_b0": ("score", UPDATE_CHAIN, "--budget", "0", "--writer", "gvt", "--json"),
    "score_over": ("score", TRAVEL, "--budget", "20", "--store", "raw-logger", "--json"),
    "score_u": ("score", DEMO, "--budget", "24", "--store", "mem0", "--json"),
    "score_u_b0": ("score", DEMO, "--budget", "0", "--store", "mem0", "--json"),
    "sweep": (
        "sweep",
        UPDATE_CHAIN,
        "--budgets",
        "0,4,8",
        "--writers",
        "gvt,density",
        "--ablations",
        "no_validity",
        "--json",
        "--quiet",
    ),  # fmt: skip
    "sweep_stores": (
        "sweep",
        DEMO,
        "--budgets",
        "0,12,24",
        "--writers",
        "gvt",
        "--stores",
        "mem0,letta",
        "--json",
        "--quiet",
    ),  # fmt: skip
    "sweep_lim": (
        "sweep",
        EVENT_GRAPH,
        "--budgets",
        "150,300",
        "--writers",
        "gvt",
        "--solver",
        "bnb",
        "--time-limit",
        "0.05",
        "--json",
        "--quiet",
    ),  # fmt: skip
}


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> dict[str, Path]:
    """The CLI's --json results, one file each (and a --external score of a mem0 export)."""
    folder = tmp_path_factory.mktemp("s39_results")
    files: dict[str, Path] = {}
    for name, argv in COMMANDS.items():
        rc, out, err = run_cli(*argv)
        assert rc == 0, (name, err)
        files[name] = folder / f"{name}.json"
        files[name].write_text(out, encoding="utf-8")
    pkg = folder / "conv-a.json"
    rc, _, err = run_cli(
        "import", "locomo", str(IMPORTERS / "locomo_small.json"), "--instance", "conv-a",
        "-o", str(pkg),
    )  # fmt: skip
    assert rc == 0, err
    rc, out, err = run_cli(
        "score", str(pkg), "--external", str(IMPORTERS / "mem0_v2_results.json"),
        "--format", "mem0", "--budget", "10", "--json",
    )  # fmt: skip
    assert rc == 0, err
    files["score_ext"] = folder / "score_ext.json"
    files["score_ext"].write_text(out, encoding="utf-8")
    return files


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def _edited(saved: dict[str, Path], name: str, edit: Callable[[dict], None], tmp_path) -> Path:
    doc = copy.deepcopy(_load(saved[name]))
    edit(doc)
    path = tmp_path / f"edited-{name}.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _assert_refused(path: Path, json_path: str) -> None:
    with pytest.raises(ResultError) as info:
        ma.read_result(path)
    assert (info.value.path, info.value.rule) == (json_path, "inconsistent")
    rc, out, err = run_cli("show", str(path))
    assert rc == 2 and out == ""
    assert f"{path}: {json_path}: " in err and "[rule: inconsistent]" in err


def _row(doc: dict, **where: Any) -> int:
    """The index of the first sweep row with these field values."""
    return next(i for i, r in enumerate(doc["rows"]) if all(r[k] == v for k, v in where.items()))


# --------------------------------------------------------------------------- regression guard


@pytest.mark.parametrize("name", [*COMMANDS, "score_ext"])
def test_every_unedited_cli_result_still_reads_back(saved, name):
    """Regression guard (passes before the fix too): the new checks refuse no genuine file,
    limited runs, budget 0, over-budget stores, OPT = 0 rows and external stores included."""
    res = ma.read_result(saved[name])
    assert res.to_dict() == ma.read_result(res.to_dict()).to_dict()
    rc, _, err = run_cli("show", str(saved[name]))
    assert rc == 0, err


def test_the_fixture_files_cover_the_cases_they_are_meant_to(saved):
    """Regression guard: the runs above really are limited, at budget 0, over budget."""
    assert _load(saved["solve_lim"])["status"] == "limit"
    assert not any(r["certified"] for r in _load(saved["sweep_lim"])["rows"])
    assert _load(saved["solve_b0"])["value"] == 0
    assert any(r["opt"] == 0 and r["ratio"] is None for r in _load(saved["sweep"])["rows"])
    assert {r["method"] for r in _load(saved["sweep"])["rows"]} >= {"gvt", "no_validity_opt"}
    assert _load(saved["score_over"])["over_budget"] is True
    assert _load(saved["score_u"])["union"]["over_budget"] is True
    assert _load(saved["score_ext"])["external_store"]["format"] == "mem0"


# --------------------------------------------------------------------------- 1a, 1b: sweep rows


def test_an_edited_sweep_row_ratio_is_refused_at_the_row_not_the_summary(saved, tmp_path):
    # QA s39 h5 #1a: a row ratio edited to 0.3 was reported at $.summary[0].mean_ratio.
    k = _row(_load(saved["sweep"]), method="gvt", budget=4.0)
    path = _edited(saved, "sweep", lambda d: d["rows"][k].update(ratio=0.3), tmp_path)
    _assert_refused(path, f"$.rows[{k}].ratio")


def test_an_edited_sweep_row_value_is_refused(saved, tmp_path):
    k = _row(_load(saved["sweep"]), method="gvt", budget=8.0)

    def edit(d):
        d["rows"][k]["value"] = d["rows"][k]["value"] / 2

    _assert_refused(_edited(saved, "sweep", edit, tmp_path), f"$.rows[{k}].value")


def test_an_edited_sweep_row_opt_is_refused(saved, tmp_path):
    k = _row(_load(saved["sweep"]), method="density", budget=8.0)

    def edit(d):
        d["rows"][k]["opt"] = d["rows"][k]["opt"] * 0.9  # still >= value: only the ratio tells

    _assert_refused(_edited(saved, "sweep", edit, tmp_path), f"$.rows[{k}].opt")


def test_a_ratio_on_a_row_whose_opt_is_zero_is_refused(saved, tmp_path):
    # OPT = 0: the ratio is undefined (null, n/a), never a number.
    k = _row(_load(saved["sweep"]), method="gvt", budget=0.0)
    path = _edited(saved, "sweep", lambda d: d["rows"][k].update(ratio=1.0), tmp_path)
    _assert_refused(path, f"$.rows[{k}].ratio")


def test_an_edited_ratio_low_is_refused(saved, tmp_path):
    k = _row(_load(saved["sweep_lim"]), method="gvt", budget=300.0)
    path = _edited(saved, "sweep_lim", lambda d: d["rows"][k].update(ratio_low=0.5), tmp_path)
    _assert_refused(path, f"$.rows[{k}].ratio_low")


def test_a_limited_sweep_row_edited_to_certified_is_refused(saved, tmp_path):
    # QA s39 h5 #1b: certified: true beside opt_bound > opt was read back as proven.
    k = _row(_load(saved["sweep_lim"]), method="gvt", budget=150.0)
    path = _edited(saved, "sweep_lim", lambda d: d["rows"][k].update(certified=True), tmp_path)
    _assert_refused(path, f"$.rows[{k}].certified")


def test_a_store_row_of_a_sweep_with_an_edited_ratio_is_refused(saved, tmp_path):
    k = _row(_load(saved["sweep_stores"]), method="mem0", budget=24.0)
    path = _edited(saved, "sweep_stores", lambda d: d["rows"][k].update(ratio=0.99), tmp_path)
    _assert_refused(path, f"$.rows[{k}].ratio")


# --------------------------------------------------------------------------- 1c, 1f: solves


def test_an_engine_check_edited_away_from_a_certified_value_is_refused(saved, tmp_path):
    # QA s39 h5 #1c: checks[0].value = 11 beside a certified F of 7.735 was read back.
    def edit(d):
        d["certificate"]["checks"][1]["value"] = 11.0

    _assert_refused(_edited(saved, "solve", edit, tmp_path), "$.certificate.checks[1].value")


def test_an_engine_checks_recomputed_value_edited_is_refused(saved, tmp_path):
    def edit(d):
        d["certificate"]["checks"][0]["recomputed_value"] = 5.0

    path = _edited(saved, "solve", edit, tmp_path)
    _assert_refused(path, "$.certificate.checks[0].recomputed_value")


def test_a_limited_solve_edited_to_status_optimal_is_refused(saved, tmp_path):
    # QA s39 h5 #1f: status "optimal" beside a gap of 0.7% was read back.
    path = _edited(saved, "solve_lim", lambda d: d.update(status="optimal"), tmp_path)
    _assert_refused(path, "$.status")


def test_status_optimal_with_a_gap_and_no_certificate_is_refused(saved, tmp_path):
    path = _edited(
        saved, "solve_lim", lambda d: d.update(status="optimal", certificate=None), tmp_path
    )
    _assert_refused(path, "$.gap")


def test_a_certified_solve_whose_bound_was_raised_is_refused(saved, tmp_path):
    path = _edited(saved, "solve", lambda d: d.update(bound=12.0), tmp_path)
    _assert_refused(path, "$.bound")


# --------------------------------------------------------------------------- 1d: union reports


@pytest.mark.parametrize("name", ["score_u", "score_ext"])
@pytest.mark.parametrize("key", ["union_ratio", "extraction", "selection", "package_ratio"])
def test_an_edited_union_ratio_is_refused(saved, tmp_path, name, key):
    # QA s39 h5 #1d: union.union_ratio = 0.5 beside kept F / OPT_P+ of 0.99 was read back.
    path = _edited(saved, name, lambda d: d["union"].update({key: 0.123}), tmp_path)
    _assert_refused(path, f"$.union.{key}")


def test_an_edited_pruned_selection_ratio_is_refused(saved, tmp_path):
    def edit(d):
        d["union"]["recency_pruned"]["union_ratio"] = 0.01

    path = _edited(saved, "score_u", edit, tmp_path)
    _assert_refused(path, "$.union.recency_pruned.union_ratio")


def test_an_edited_over_budget_flag_of_a_union_report_is_refused(saved, tmp_path):
    path = _edited(saved, "score_ext", lambda d: d["union"].update(over_budget=True), tmp_path)
    _assert_refused(path, "$.union.over_budget")


# --------------------------------------------------------------------------- 1e: attribution


@pytest.mark.parametrize("name", ["score_w", "score_over", "score_u"])
def test_an_edited_unit_rows_lost_is_refused(saved, tmp_path, name):
    # QA s39 h5 #1e: unit_rows[0].lost = 3 beside 0 - 0 was printed as genuine.
    path = _edited(saved, name, lambda d: d["unit_rows"][0].update(lost=3.0), tmp_path)
    _assert_refused(path, "$.unit_rows[0].lost")


@pytest.mark.parametrize("field", ["lost", "store_value", "opt_value", "weight"])
def test_an_edited_kind_total_is_refused(saved, tmp_path, field):
    def edit(d):
        d["kind_rows"][0][field] += 1.5

    _assert_refused(_edited(saved, "score_w", edit, tmp_path), f"$.kind_rows[0].{field}")


def test_unit_rows_edited_consistently_but_not_summing_to_the_value_are_refused(saved, tmp_path):
    def edit(d):
        row = next(r for r in d["unit_rows"] if r["store_value"] > 0)
        row["store_value"] -= 0.5
        row["lost"] += 0.5
        kind = next(k for k in d["kind_rows"] if k["kind"] == row["kind"])
        kind["store_value"] -= 0.5
        kind["lost"] += 0.5

    _assert_refused(_edited(saved, "score_w", edit, tmp_path), "$.unit_rows")


# --------------------------------------------------------------------------- 2: failed writers


def _failed_sweep(tmp_path) -> Path:
    rc, out, err = run_cli(
        "sweep", UPDATE_CHAIN, "--budgets", "4,8", "--writers", "gvt",
        "--writer-module", "plugin_fixtures.fixture_writers:raises", "--json", "--quiet",
    )  # fmt: skip
    assert rc == 2, err
    path = tmp_path / "e.json"
    path.write_text(out, encoding="utf-8")
    return path


#: The fixture writers' file, which a plugin's runtime error names (QA s42).
FIXTURE_FILE = Path(__file__).resolve().parent / "plugin_fixtures" / "fixture_writers.py"


def test_show_lists_the_failed_writer_runs_of_a_saved_sweep(tmp_path):
    # QA s39 h5 #2: show printed only "2 writer run(s) failed; their rows are missing".
    rc, out, err = run_cli("show", str(_failed_sweep(tmp_path)))
    assert rc == 0, err
    lines = out.splitlines()
    start = lines.index("2 writer run(s) failed; their rows are missing:")
    assert lines[start + 1 : start + 3] == [
        f"  update_chain: writer 'plugin_fixtures.fixture_writers:raises' (file {FIXTURE_FILE}) "
        f"at budget {b}: raised ValueError: boom from plugin at budget {b}"
        for b in (4, 8)
    ]


def test_show_caps_the_list_of_failed_writer_runs(tmp_path):
    path = _failed_sweep(tmp_path)
    doc = _load(path)
    first = doc["errors"][0]
    doc["errors"] = [
        {**first, "budget": float(b), "error": f"writer {first['writer']!r} at budget {b}: boom"}
        for b in range(1, 14)
    ]
    path.write_text(json.dumps(doc), encoding="utf-8")
    rc, out, err = run_cli("show", str(path))
    assert rc == 0, err
    lines = out.splitlines()
    start = lines.index("13 writer run(s) failed; their rows are missing:")
    assert lines[start + 1] == (
        "  update_chain: writer 'plugin_fixtures.fixture_writers:raises' at budget 1: boom"
    )
    assert lines[start + 10].endswith("at budget 10: boom")
    assert lines[start + 11 :] == ["  ... and 3 more"]
