"""QA s44, review of the session's change: three inputs that still escaped as tracebacks or
miscounted.

- An artifact table line or manifest holding an integer past Python's 4,300-digit limit ended
  in "internal error: ValueError"; the package loader locates it (json-syntax).
- A deeply nested JSON text inside an A-Mem Chroma list field ended in RecursionError; like
  any text that is not JSON it stays the text it is.
- A saved result repeating more keys than checking collects said "(1000 more repeated key(s))",
  an exact count that included the stop line.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_utils import run_cli

from memaudit_core.errors import MAX_PROBLEMS, PackageError, ResultError
from memaudit_core.importers.amem import coerce_chroma_metadata
from memaudit_core.importers.artifact import load_artifact_package
from memaudit_core.results import read_result

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "importers"
HUGE = "9" * 5000


def artifact_copy(tmp_path: Path) -> Path:
    folder = tmp_path / "art"
    shutil.copytree(FIXTURES / "artifact_pkg", folder)
    return folder


def test_a_huge_integer_in_an_artifact_table_is_located(tmp_path):
    folder = artifact_copy(tmp_path)
    table = folder / "candidate_memories.jsonl"
    lines = table.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[0])
    lines[0] = json.dumps(record)[:-1] + ', "x": ' + HUGE + "}"
    table.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(PackageError) as info:
        load_artifact_package(folder)
    got = [(p.path, p.rule, p.message) for p in info.value.problems]
    # The unread line's candidate is then unknown to the coverage that cites it, as after any
    # line that is not JSON.
    assert got[0] == (
        "candidate_memories.jsonl:1",
        "json-syntax",
        "not valid JSON: a number has too many digits to read",
    )
    rc, _out, err = run_cli("validate", str(folder))
    assert rc == 2
    assert "internal error" not in err and "[rule: json-syntax]" in err


def test_a_huge_integer_in_an_artifact_manifest_is_located(tmp_path):
    folder = artifact_copy(tmp_path)
    manifest = next(p for p in folder.iterdir() if p.suffix == ".json")
    text = manifest.read_text(encoding="utf-8").rstrip()
    assert text.endswith("}")
    manifest.write_text(text[:-1] + ', "big": ' + HUGE + "}", encoding="utf-8")
    with pytest.raises(PackageError) as info:
        load_artifact_package(folder)
    assert [(p.path, p.rule) for p in info.value.problems] == [(manifest.name, "json-syntax")]


def test_deeply_nested_text_in_an_amem_list_field_stays_text():
    deep = "[" * 100_000
    meta = coerce_chroma_metadata({"keywords": deep, "links": deep, "tags": '["a"]'})
    assert meta == {"keywords": deep, "links": deep, "tags": ["a"]}


def test_repeated_keys_past_the_cap_are_counted_as_at_least(tmp_path):
    n = MAX_PROBLEMS + 200
    path = tmp_path / "dups.json"
    path.write_text("{" + ",".join(f'"k{i}": 1, "k{i}": 2' for i in range(n)) + "}")
    with pytest.raises(ResultError) as info:
        read_result(path)
    # The first key is the error; checking stopped after MAX_PROBLEMS keys, so at least
    # MAX_PROBLEMS - 1 more were seen, and more may follow.
    assert (info.value.path, info.value.rule) == ("$.k0", "duplicate-key")
    assert f"(at least {MAX_PROBLEMS - 1} more repeated key(s) in this file; checking stopped)" in (
        str(info.value)
    )


def compare_page(budget: str, store: str):
    from app_utils import open_app

    at = open_app(
        "pages/2_Compare.py", package="sample:veg-to-pescatarian", budget=budget, store=store
    )
    assert not at.exception
    labels = [m.label for m in at.metric]
    (kinds,) = [
        json.loads(c.proto.spec)
        for c in at.get("plotly_chart")
        if "Value kept by kind bucket" in c.proto.spec
    ]
    return labels, kinds


def test_compare_marks_a_store_cut_to_fit_in_its_chart_and_card():
    # Raw logger costs 10 words as written (the sample's JSON): at budget 8 it is cut to nothing.
    package = json.loads(
        (FIXTURES.parents[2] / "sample_packages" / "veg-to-pescatarian.json").read_text()
    )
    raw = next(s for s in package["stores"] if s["id"] == "raw-logger")
    cost = {c["id"]: c["cost"] for c in package["candidates"]}
    assert sum(cost[c] for c in raw["select"]) > 8
    labels, kinds = compare_page("8", "store:raw-logger")
    assert "F (store, cut to fit)" in labels
    names = [t["name"] for t in kinds["data"]]
    assert any(n.endswith("(cut to fit)") for n in names), names
    assert "(cut to fit)" in kinds["layout"]["title"]["text"]
    # Whole at 24 words: no mark.
    labels, kinds = compare_page("24", "store:raw-logger")
    assert "F (store)" in labels
    assert not any("(cut to fit)" in t["name"] for t in kinds["data"])


def test_a_store_in_no_swept_package_is_refused_before_any_task(tmp_path):
    # QA s44: the whole suite ran and wrote its journal, then said the store was unknown.
    out = tmp_path / "sto"
    rc, _out, err = run_cli(
        *("sweep", "--family", "memaudit-small:0-3", "--budgets", "2,4"),
        *("--stores", "typo", "--out", str(out), "--quiet"),
    )
    assert rc == 2
    assert "store(s) 'typo' found in none of the swept packages" in err
    assert not (out / "journal.jsonl").exists()
