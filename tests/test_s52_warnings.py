"""QA s51 (cli report, defect 8): every warning a package can get names its JSON path and a
kebab-case rule, as the README says (``FILE: warning: JSON-PATH: ... (rule: RULE)``), in the
library's ``pkg.warnings``, the CLI's text and ``--json`` (``warning_details``), and the app.

Before: "query 'q7' requires no unit: its weight goes nowhere", "the package has no
candidates", "unit ... has no weight", "no evidence units", "every unit weighs 0", "store ...
selects nothing", an unknown candidate type and the precision warning had neither, and the
JSON listed plain strings only.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from app_utils import open_app, upload_file
from cli_utils import run_cli

from memaudit_core.package import parse_package

RULE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
#: One warning line of the CLI, as the README words it.
LINE = re.compile(r"(?P<file>.+?): warning: (?P<path>\$\S*?): .* \(rule: (?P<rule>[a-z0-9-]+)\)")


def warning_parts(warning: str) -> dict[str, str] | None:
    """Path, message and rule of a warning in the README's form (read here, not with the
    library's own reader, so that a base without one fails on the assertions)."""
    match = re.fullmatch(
        r"(?P<path>\$\S*?): (?P<message>.*) \(rule: (?P<rule>[a-z0-9]+(?:-[a-z0-9]+)*)\)", warning
    )
    return match.groupdict() if match else None


def base() -> dict:
    """A valid package without warnings: two units, two candidates."""
    return {
        "memaudit": 1,
        "id": "w",
        "budget": 3,
        "experiences": [{"id": "e1", "time": 0}, {"id": "e2", "time": 1}],
        "units": [
            {"id": "u1", "kind": "fact", "weight": 1},
            {"id": "u2", "kind": "fact", "weight": 2},
        ],
        "queries": [],
        "candidates": [
            {"id": "c1", "experience": "e1", "type": "atomic_fact", "cost": 1,
             "coverage": {"u1": 1.0}},
            {"id": "c2", "experience": "e2", "type": "atomic_fact", "cost": 2,
             "coverage": {"u2": 0.5}},
        ],
    }  # fmt: skip


def _set(**fields: object) -> Callable[[dict], None]:
    def change(doc: dict) -> None:
        doc.update(copy.deepcopy(fields))

    return change


def _orphan_unit(doc: dict) -> None:
    doc["units"].append({"id": "u3", "kind": "fact"})


def _no_units(doc: dict) -> None:
    doc["units"] = []
    for cand in doc["candidates"]:
        cand["coverage"] = {}


def _zero_weights(doc: dict) -> None:
    for unit in doc["units"]:
        unit["weight"] = 0


def _unknown_type(doc: dict) -> None:
    doc["candidates"][1]["type"] = "Tombstone"


def _huge_weight(doc: dict) -> None:
    doc["units"][1]["weight"] = 1e20


def _lookalike(doc: dict) -> None:
    doc["candidates"][1]["id"] = "c1 "


def _many_lookalikes(doc: dict) -> None:
    template = doc["candidates"][0]
    doc["candidates"] = [{**template, "id": f"k{i} "} for i in range(7)]


#: Each warning the validator says, how to make a package get it, and the path it names.
TRIGGERS: dict[str, tuple[Callable[[dict], None], str]] = {
    "unit-weighs-nothing": (_orphan_unit, "$.units[2]"),
    "query-requires-nothing": (
        _set(queries=[{"id": "q1", "weight": 1, "requires": []}]),
        "$.queries[0].requires",
    ),
    "no-candidates": (_set(candidates=[]), "$.candidates"),
    "no-units": (_no_units, "$.units"),
    "all-weights-zero": (_zero_weights, "$.units"),
    "store-empty": (_set(stores=[{"id": "blank"}]), "$.stores[0]"),
    "candidate-type": (_unknown_type, "$.candidates[1].type"),
    "value-span": (_huge_weight, "$.units[0]"),
    "budgets-grid": (_set(budgets=[]), "$.budgets"),
    "budgets-distinct": (_set(budgets=[2, 4, 2]), "$.budgets[2]"),
    "budget-fits-nothing": (_set(budget=0.5), "$.budget"),
    "id-lookalike": (_lookalike, "$.candidates[1].id"),
    # Past five look-alikes of one list, the rest are counted under the list's path.
    "id-lookalike-more": (_many_lookalikes, "$.candidates"),
}


def triggered(name: str) -> dict:
    doc = base()
    change, _ = TRIGGERS[name]
    change(doc)
    return doc


def rule_of(name: str) -> str:
    return name.removesuffix("-more")


def resolve(doc: object, path: str) -> object:
    """The value at a ``$.a[0].b`` path of ``doc`` (KeyError / IndexError if none)."""
    for key, index in re.findall(r"\.([A-Za-z_]\w*)|\[(\d+)\]", path[1:]):
        doc = doc[key] if key else doc[int(index)]  # type: ignore[index]
    return doc


def test_every_validator_warning_names_its_json_path_and_rule():
    """All in one walk: the base package is clean, so each warning below is the trigger's."""
    assert parse_package(base()).warnings == ()
    said = {}
    for name, (_, wanted_path) in TRIGGERS.items():
        doc = triggered(name)
        pkg = parse_package(doc, "w.json")
        for warning in pkg.warnings:
            parts = warning_parts(warning)
            assert parts is not None, (name, warning)  # every one, not only the one triggered
            resolve(doc, parts["path"])  # the path points into the file
        found = [(p["path"], p["rule"]) for p in map(warning_parts, pkg.warnings)]
        assert (wanted_path, rule_of(name)) in found, (name, pkg.warnings)
        said[name] = pkg.warnings
    assert any(w.startswith("$.candidates: ... and 2 more") for w in said["id-lookalike-more"])


@pytest.mark.parametrize("name", list(TRIGGERS))
def test_the_cli_says_each_warning_with_path_and_rule_in_text_and_json(tmp_path: Path, name):
    doc = triggered(name)
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    code, _, err = run_cli("validate", str(path))
    assert code == 0, err
    lines = [line for line in err.splitlines() if ": warning: " in line]
    assert lines, err
    for line in lines:
        assert LINE.fullmatch(line), line
    wanted_path, wanted_rule = TRIGGERS[name][1], rule_of(name)
    assert any(
        (m["path"], m["rule"]) == (wanted_path, wanted_rule) for m in map(LINE.fullmatch, lines)
    ), lines

    code, out, err = run_cli("validate", str(path), "--json")
    assert code == 0, err
    obj = json.loads(out)
    assert len(obj["warning_details"]) == len(obj["warnings"]) == len(lines)
    for text, detail in zip(obj["warnings"], obj["warning_details"], strict=True):
        assert set(detail) == {"path", "rule", "message"}
        assert detail["path"].startswith("$") and RULE.fullmatch(detail["rule"]), detail
        assert text == f"{detail['path']}: {detail['message']} (rule: {detail['rule']})"
    assert any(
        (d["path"], d["rule"]) == (wanted_path, wanted_rule) for d in obj["warning_details"]
    ), obj["warning_details"]


def test_solve_json_lists_the_package_warnings_with_path_and_rule(tmp_path: Path):
    path = tmp_path / "q.json"
    path.write_text(json.dumps(triggered("query-requires-nothing")), encoding="utf-8")
    code, out, err = run_cli("solve", str(path), "--budget", "3", "--json")
    assert code == 0, err
    [entry] = json.loads(out)["package_warnings"]
    assert [(d["path"], d["rule"]) for d in entry["warning_details"]] == [
        ("$.queries[0].requires", "query-requires-nothing")
    ]
    # show reads the saved object back and lists the same.
    saved = tmp_path / "solve.json"
    saved.write_text(out, encoding="utf-8")
    code, shown, err = run_cli("show", str(saved), "--json")
    assert code == 0, err
    assert json.loads(shown)["package_warnings"] == [entry]


def test_the_app_shows_each_warning_with_its_path_and_rule():
    doc = triggered("query-requires-nothing")
    doc["stores"] = [{"id": "blank"}]
    doc["units"][1]["weight"] = 1e20  # the precision warning cites two $ paths
    at = open_app()
    upload_file(at, "warned.json", json.dumps(doc).encode())
    shown = [w.value for w in at.warning]
    for path, rule in [
        ("$.queries[0].requires", "query-requires-nothing"),
        ("$.stores[0]", "store-empty"),
        ("$.units[0]", "value-span"),
    ]:
        assert any(s.startswith(f"`{path}`: ") and s.endswith(f"(rule: {rule})") for s in shown), (
            path,
            shown,
        )
