"""Where the product and its documents disagreed, found by the eighteenth session's conformance
pass (README and DESIGN read claim by claim against the CLI and the library).

Each test failed on the code before its fix.
"""

from __future__ import annotations

import json

import pytest

from memaudit_core.cli import main
from memaudit_core.errors import PackageError
from memaudit_core.package import load_package, parse_package
from memaudit_core.plugins import oracle_writer


def test_a_package_error_names_its_file_as_the_readme_says(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"memaudit": 1}', encoding="utf-8")
    with pytest.raises(PackageError) as caught:
        load_package(bad)
    assert caught.value.file == str(bad) == caught.value.source


def test_an_object_without_meta_does_not_point_the_user_to_its_meta():
    """ "$.objective.meta: unknown field (put extra data under 'meta')" contradicted itself."""
    doc = {"memaudit": 1, "id": "x", "objective": {"saturation": "cap1", "meta": {}},
           "experiences": [], "units": [], "candidates": []}  # fmt: skip
    with pytest.raises(PackageError) as caught:
        parse_package(doc)
    (problem,) = caught.value.problems
    assert problem.path == "$.objective.meta" and problem.rule == "known-field"
    assert "this object takes only 'saturation'" in problem.message
    assert "under the package's 'meta'" in problem.message


def test_an_item_with_meta_still_points_there():
    doc = {"memaudit": 1, "id": "x", "experiences": [{"id": "e", "time": 0, "note": 1}],
           "units": [], "candidates": []}  # fmt: skip
    with pytest.raises(PackageError) as caught:
        parse_package(doc)
    assert "(put extra data under 'meta')" in caught.value.problems[0].message


def test_the_bare_oracle_writer_decorator_marks_the_function():
    """Bare ``@oracle_writer`` failed later with "super(type, obj): obj must be an instance"."""

    @oracle_writer
    def best_single(inst, budget):
        return []

    assert best_single.kind == "oracle" and best_single(None, 1.0) == []


def test_version_and_schema_answer_json_when_asked(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version", "--json"])
    assert exc.value.code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["json_output_version"] == 1 and out["memaudit_version"]
    assert main(["schema", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["$id"].endswith("package-v1.json")


def test_the_default_budget_lets_the_cheapest_candidate_fit():
    """App QA: costs 1 and 3 opened at budget 0.4 (grid 0.04 .. 2), where nothing fits."""
    doc = {"memaudit": 1, "id": "one", "experiences": [{"id": "e", "time": 0}],
           "units": [{"id": "u", "weight": 1}],
           "candidates": [
               {"id": "a", "experience": "e", "type": "raw_span", "cost": 1, "coverage": {"u": 1}},
               {"id": "b", "experience": "e", "type": "summary", "cost": 3, "coverage": {"u": 1}},
           ]}  # fmt: skip
    pkg = parse_package(doc)
    assert pkg.default_budget() == 1.0
    assert pkg.budget_grid() == (1.0, 2.0)
    fractional = parse_package({**doc, "candidates": [
        {"id": "a", "experience": "e", "type": "raw_span", "cost": 0.25, "coverage": {"u": 1}},
        {"id": "b", "experience": "e", "type": "summary", "cost": 40, "coverage": {"u": 1}},
    ]})  # fmt: skip
    assert fractional.default_budget() == 5.0  # 10% of 40.25, rounded up: above the cheapest
    assert min(fractional.budget_grid()) == 0.41  # 1% is 0.4025, already above 0.25


def test_a_query_that_requires_nothing_is_warned_about():
    doc = {"memaudit": 1, "id": "x", "experiences": [{"id": "e", "time": 0}],
           "units": [{"id": "u", "weight": 1}],
           "queries": [{"id": "q", "requires": []}],
           "candidates": [{"id": "c", "experience": "e", "type": "raw_span", "cost": 1,
                           "coverage": {"u": 1}}]}  # fmt: skip
    assert (
        "$.queries[0].requires: query 'q' requires no unit: its weight goes nowhere "
        "(rule: query-requires-nothing)"
    ) in parse_package(doc).warnings
