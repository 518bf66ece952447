"""QA s47: the derived fields of a saved score (the union metrics copied to the top level of a
union score, a union report's summaries of its optima, an evaluation's package-only ratio) were
rebuilt on read-back and the saved ones never read, so any value or type read back and ``show``
printed the recomputed one; ``time_s: "NaN"`` read back too. Each is now compared with what the
result's own fields give and refused with its JSON path and rule; genuine files still read."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import pytest
from cli_utils import run_cli

import memaudit_core as ma
from memaudit_core.errors import ResultError

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_packages"
IMPORTERS = ROOT / "tests" / "fixtures" / "importers"
DEMO = str(SAMPLES / "external-stores-demo.json")
VEG = str(SAMPLES / "veg-to-pescatarian.json")


def _score(*argv: str) -> dict[str, Any]:
    rc, out, err = run_cli("score", *argv, "--json")
    assert rc == 0, err
    return json.loads(out)


@pytest.fixture(scope="module")
def qa_file() -> dict[str, Any]:
    """The QA's repro: an unannotated Mem0 export, over the budget (ratios 0, selection n/a)."""
    return _score(
        VEG, "--budget", "6", "--external", str(IMPORTERS / "mem0_v2_results.json"),
        "--format", "mem0",
    )  # fmt: skip


@pytest.fixture(scope="module")
def covered_file() -> dict[str, Any]:
    """An annotated store over the budget: every ratio defined, both pruned selections."""
    return _score(DEMO, "--store", "amem", "--budget", "20")


@pytest.fixture(scope="module")
def plain_file() -> dict[str, Any]:
    """A package store (no union metrics, no package-only optimum)."""
    return _score(str(SAMPLES / "travel-assistant.json"), "--store", "raw-logger", "--budget", "40")


def _set(doc: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    *parents, last = [int(k) if k.isdigit() else k for k in path.split(".")]
    node: Any = out
    for key in parents:
        node = node[key]
    node[last] = value
    return out


def _json_path(path: str) -> str:
    return "$" + "".join(f"[{k}]" if k.isdigit() else f".{k}" for k in path.split("."))


def _refused(doc: dict[str, Any], path: str, rule: str) -> None:
    with pytest.raises(ResultError) as info:
        ma.read_result(doc)
    assert (info.value.path, info.value.rule) == (_json_path(path), rule)


QA_MUTATIONS = [
    ("union_ratio", -7, "inconsistent"),
    ("upper_pruned", "x", "type"),
    ("extraction", {"a": 1}, "type"),
    ("selection", 99, "inconsistent"),
    ("recency_pruned", None, "inconsistent"),
    ("union.upper_pruned.value", "zzz", "type"),
    ("union.upper_pruned.certified", 7, "type"),
    ("package_ratio", -1, "inconsistent"),
    ("package_opt_value", -1, "allowed-value"),
    ("package_opt_value", "NaN", "allowed-value"),
    ("package_opt_value", 1e300, "inconsistent"),
    ("opt.time_s", "NaN", "allowed-value"),
    ("opt.certificate.checks.0.time_s", "NaN", "allowed-value"),
    ("union.upper.time_s", "Infinity", "allowed-value"),
    ("union.union_opt.time_s", -1, "allowed-value"),
]


@pytest.mark.parametrize(("path", "value", "rule"), QA_MUTATIONS)
def test_qa_mutations_are_refused(
    qa_file: dict[str, Any], path: str, value: Any, rule: str
) -> None:
    _refused(_set(qa_file, path, value), path, rule)


COVERED_MUTATIONS = [
    ("union_ratio", 0.5, "inconsistent"),
    ("union_ratio", "NaN", "inconsistent"),
    ("extraction", None, "inconsistent"),
    ("selection", 99, "inconsistent"),
    ("selection", "1", "type"),
    ("notes", [], "inconsistent"),
    ("notes", "x", "type"),
    ("upper_pruned.value", 1e300, "inconsistent"),
    ("upper_pruned.selected", [], "inconsistent"),
    ("upper_pruned.label", "incumbent", "inconsistent"),
    ("upper_pruned.gap", "NaN", "inconsistent"),
    ("recency_pruned.value", 99, "inconsistent"),
    ("recency_pruned.kept", [], "inconsistent"),
    ("recency_pruned.union_ratio", None, "inconsistent"),
    ("salience_pruned.rule", 5, "type"),
    ("salience_pruned.dropped", [], "inconsistent"),
    ("salience_pruned", None, "inconsistent"),
    ("union.upper_pruned.cost", -1, "inconsistent"),
    ("union.upper_pruned.solver", "gurobi", "inconsistent"),
    ("union.union_opt_value", 3, "inconsistent"),
    ("union.union_opt_label", "incumbent", "inconsistent"),
    ("union.union_opt_selected", [], "inconsistent"),
    ("union.package_opt_value", {"a": 1}, "type"),
    ("union.package_opt_label", "zz", "inconsistent"),
    ("union.certified", False, "inconsistent"),
    ("evaluation_package_ratio", 5, "inconsistent"),
    ("package_ratio_text", "9.000", "inconsistent"),
    ("package_opt_value", math.nan, "allowed-value"),
]


@pytest.mark.parametrize(("path", "value", "rule"), COVERED_MUTATIONS)
def test_covered_store_mutations_are_refused(
    covered_file: dict[str, Any], path: str, value: Any, rule: str
) -> None:
    _refused(_set(covered_file, path, value), path, rule)


@pytest.mark.parametrize(
    ("path", "value"),
    [("package_opt_value", 1.0), ("package_ratio", 0.5), ("package_ratio_text", "0.500")],
)
def test_package_store_has_no_package_only_ratio(
    plain_file: dict[str, Any], path: str, value: Any
) -> None:
    assert plain_file[path] is None  # a package store is scored against OPT_P only
    _refused(_set(plain_file, path, value), path, "inconsistent")


def test_show_refuses_with_file_path_and_rule(qa_file: dict[str, Any], tmp_path: Path) -> None:
    bad = tmp_path / "score_ext.json"
    bad.write_text(json.dumps(_set(qa_file, "union_ratio", -7)))
    rc, out, err = run_cli("show", str(bad))
    assert (rc, out) == (2, "")
    assert f"{bad}: $.union_ratio:" in err and "[rule: inconsistent]" in err
    # --json writes the error, not the file with the recomputed ratio.
    rc, out, _ = run_cli("show", str(bad), "--json")
    assert rc == 2
    error = json.loads(out)["error"]
    assert error["type"] == "ResultError"
    assert f"{bad}: $.union_ratio:" in error["message"]
    assert "union_ratio" not in json.loads(out)


def _cli_keys_dropped(doc: dict[str, Any]) -> dict[str, Any]:
    return {
        k: v
        for k, v in doc.items()
        if k not in ("json_output_version", "memaudit_version", "package_warnings", "cost_unit")
    }


GENUINE = [
    (VEG, "--budget", "6", "--external", str(IMPORTERS / name), "--format", fmt)
    for name, fmt in (
        ("mem0_v2_results.json", "mem0"),
        ("mem0_v10_list.json", "mem0"),
        ("mem0_v11_graph.json", "mem0"),
        ("mem0_platform_page.json", "mem0"),
        ("letta_v2.af", "letta"),
        ("letta_legacy.af", "letta"),
        ("letta_passages.json", "letta"),
        ("amem_notes.json", "amem"),
        ("amem_chroma.json", "amem"),
        ("zep_graphiti.json", "zep"),
        ("zep_v4_edges.json", "zep"),
    )
] + [
    (DEMO, "--store", "mem0", "--budget", "200"),  # the store fits: no pruned selections
    (DEMO, "--store", "letta", "--budget", "8"),
    (DEMO, "--store", "amem", "--budget", "20", "--time-limit", "0.001"),
    (str(SAMPLES / "travel-assistant.json"), "--store", "validity-aware", "--budget", "130"),
    (str(SAMPLES / "update_chain.json"), "--writer", "gvt", "--budget", "6"),
    (str(SAMPLES / "event-graph-50.json"), "--writer", "density", "--time-limit", "0.01"),
]


@pytest.mark.parametrize("argv", GENUINE, ids=lambda a: "-".join(Path(x).stem for x in a[:5]))
def test_genuine_scores_read_back(argv: tuple[str, ...]) -> None:
    saved = _score(*argv)
    again = ma.read_result(saved)
    assert again.to_dict() == _cli_keys_dropped(saved)


def test_saved_without_the_summaries_still_reads(covered_file: dict[str, Any]) -> None:
    # The copies and summaries are derived: a file that lacks them (as files of an earlier
    # release may) reads back to the same score.
    older = copy.deepcopy(covered_file)
    for key in ("union_ratio", "upper_pruned", "recency_pruned", "salience_pruned", "notes"):
        del older[key]
    for key in ("upper_pruned", "union_opt_value", "union_opt_label", "certified"):
        del older["union"][key]
    assert ma.read_result(older) == ma.read_result(covered_file)


@pytest.mark.parametrize(
    "name", sorted(p.name for p in (ROOT / "tests/fixtures/s46_oldcv").iterdir())
)
def test_older_saved_views_read_back(name: str) -> None:
    view = ma.read_result(ROOT / "tests/fixtures/s46_oldcv" / name)
    assert type(view).__name__ == "CompareView"


def test_curve_time_s_nan_is_refused() -> None:
    pkg = ma.load_package(str(SAMPLES / "update_chain.json"))
    saved = json.loads(json.dumps(ma.budget_curve(pkg, [3, 6], ["density"]).to_dict()))
    assert ma.read_result(saved).time_s >= 0
    _refused(_set(saved, "time_s", "NaN"), "time_s", "allowed-value")
