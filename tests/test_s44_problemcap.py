"""QA s44 (problem cap): validation collected every problem without a limit.

1. A 3 MB package of a million empty candidates took 64 s and 3.2 GB to print 5,000,002
   lines (`validate`), 4 GB in the app; a Mem0 export of two million numbers did the same on
   External stores and in `score --external`. Every collector now stops at the problem past
   the cap, lists the first ones and says that the rest was not checked; the app keeps only
   what it shows.
2. A 5000-digit integer was a json-syntax problem without a line or column; a folder the user
   may not search gave a bare "Permission denied" without a rule.
"""

from __future__ import annotations

import json
import pathlib
import re

import pytest
from app_utils import open_app
from cli_utils import run_cli

from memaudit_core.errors import InvalidPackagesError, PackageError
from memaudit_core.importers.mem0 import load_mem0_store
from memaudit_core.package import load_package

#: The cap the defect asked for (one constant, a sane number): written out, not imported.
CAP = 1000
STOP = "... and more problems not checked after the first 1000 (fix these and validate again)"
STOP_RULE = "[rule: problem-limit]"
#: The fields an empty candidate misses (the package format's required candidate fields).
REQUIRED = ("id", "experience", "type", "cost", "coverage")

BASE = {
    "memaudit": 1,
    "id": "t",
    "experiences": [{"id": "e1", "time": 0}, {"id": "e2", "time": 1}],
    "units": [{"id": "u1", "weight": 1.0}, {"id": "u2", "weight": 2.0}],
    "candidates": [
        {"id": "c1", "experience": "e1", "type": "atomic_fact", "cost": 2, "coverage": {"u1": 1}},
        {"id": "c2", "experience": "e2", "type": "atomic_fact", "cost": 3, "coverage": {"u2": 1}},
    ],
    "budget": 4,
}


def _empties(n: int) -> str:
    """A package whose only problems are its ``n`` empty candidates: 5 n problems."""
    return json.dumps(
        {"memaudit": 1, "id": "x", "experiences": [], "units": [], "candidates": [{}] * n}
    )


def _write(tmp_path: pathlib.Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _problem_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if "[rule: " in line]


def test_validate_stops_after_the_cap_and_says_the_rest_was_not_checked(tmp_path) -> None:
    path = _write(tmp_path, "many.json", _empties(2000))  # 10,000 problems in the file
    rc, _out, err = run_cli("validate", path)
    assert rc == 2
    lines = _problem_lines(err)
    assert len(lines) == CAP + 1
    assert lines[-1] == f"{path}: $: {STOP} {STOP_RULE}"
    # Each listed problem is real: a required field missing from an empty candidate.
    listed = set()
    for line in lines[:-1]:
        m = re.fullmatch(
            re.escape(path) + r": \$\.candidates\[(\d+)\]\.(\w+): missing required .*", line
        )
        assert m and int(m[1]) < 2000 and m[2] in REQUIRED, line
        listed.add((m[1], m[2]))
    assert len(listed) == CAP  # no problem listed twice


def test_exactly_the_cap_is_listed_in_full_and_one_more_stops(tmp_path) -> None:
    # 200 empty candidates: 1000 problems, all listed, no claim of more.
    rc, _out, err = run_cli("validate", _write(tmp_path, "at.json", _empties(CAP // 5)))
    lines = _problem_lines(err)
    assert rc == 2 and len(lines) == CAP and not any("problem-limit" in x for x in lines)
    # 201: 1005 problems; the first 1000 listed, then the stop.
    path = _write(tmp_path, "past.json", _empties(CAP // 5 + 1))
    with pytest.raises(PackageError) as info:
        load_package(path)
    exc = info.value
    assert len(exc.problems) == CAP + 1 and exc.problems[-1].rule == "problem-limit"
    assert str(exc).splitlines()[0] == f"{path}: 1000 problem(s) found, then checking stopped"
    assert exc.count_text() == "1000 problem(s), then checking stopped"


def test_validate_json_lists_the_stop_as_its_last_problem(tmp_path) -> None:
    rc, out, _err = run_cli("validate", "--json", _write(tmp_path, "m.json", _empties(2000)))
    doc = json.loads(out)
    assert rc == 2 and doc["valid"] is False
    assert len(doc["problems"]) == CAP + 1
    assert doc["problems"][-1] == {
        "path": "$",
        "rule": "problem-limit",
        "message": STOP,
        "value": None,
    }


def test_a_mem0_export_of_numbers_stops_at_the_cap(tmp_path) -> None:
    export = _write(tmp_path, "x.json", json.dumps([0] * 3000))
    with pytest.raises(PackageError) as info:
        load_mem0_store(export)
    problems = info.value.problems
    assert len(problems) == CAP + 1
    assert [p.path for p in problems[:CAP]] == [f"$[{i}]" for i in range(CAP)]
    assert problems[-1].message == STOP
    # The CLI's score --external says the same.
    package = _write(tmp_path, "ok.json", json.dumps(BASE))
    rc, _out, err = run_cli(
        "score", package, "--budget", "4", "--external", export, "--format", "mem0"
    )
    lines = _problem_lines(err)
    assert rc == 2 and len(lines) == CAP + 1 and lines[-1].endswith(f"{STOP} {STOP_RULE}")


def test_an_artifact_with_many_bad_lines_stops_at_the_cap(tmp_path) -> None:
    folder = tmp_path / "art"
    folder.mkdir()
    for name in ("experiences", "evidence_units", "coverage_matrix"):
        (folder / f"{name}.jsonl").write_text("")
    (folder / "candidate_memories.jsonl").write_text("not json\n" * 1500)
    with pytest.raises(PackageError) as info:
        load_package(folder)
    problems = info.value.problems
    assert len(problems) == CAP + 1
    assert [p.path for p in problems[:CAP]] == [
        f"candidate_memories.jsonl:{n}" for n in range(1, CAP + 1)
    ]
    assert problems[-1].rule == "problem-limit"


def test_a_sweep_summary_says_at_least_for_a_file_whose_check_stopped(tmp_path) -> None:
    with pytest.raises(PackageError) as info:
        load_package(_write(tmp_path, "m.json", _empties(2000)))
    lines = InvalidPackagesError("sweep", [info.value], 1).lines()
    # 50 lines shown of the 1000 problems and the stop line: 951 left, at least.
    assert lines[-2].startswith("... and at least 951 more problem(s) in ")


def test_the_app_shows_the_stop_and_keeps_only_what_it_shows() -> None:
    at = open_app()
    data = _empties(2000).encode()
    at.file_uploader(key="w_upload").upload("many.json", data, "application/json").run()
    assert not at.exception, [e.value for e in at.exception]
    errors = [e.value for e in at.error]
    sidebar = [e for e in errors if "the previous package stays open.\n\n" in e]
    assert len(sidebar) == 1
    assert "**many.json was not loaded** (1000 problem(s), then checking stopped)" in sidebar[0]
    assert sidebar[0].endswith(f"- `many.json: $: {STOP} {STOP_RULE}`")
    assert "- … and 970 more" in sidebar[0]  # 30 shown of the 1000 found
    # The session keeps the 30 lines shown, the stop and the first line again (the page's
    # "First:"), not the 1000 (or 10,000) lines.
    kept = str(at.session_state["ma_upload_error"])
    assert kept.count("[rule: ") == 32


def test_a_huge_integer_is_located_by_line_and_column(tmp_path) -> None:
    text = json.dumps(BASE, indent=2).replace('"time": 1', '"time": ' + "9" * 5000)
    pos = text.index("9" * 5000)
    line = text[:pos].count("\n") + 1
    column = pos - text[:pos].rfind("\n")
    path = _write(tmp_path, "huge.json", text)
    rc, _out, err = run_cli("validate", path)
    assert rc == 2
    assert err.strip() == (
        f"{path}: $ (line {line}, column {column}): not valid JSON: a number has too many "
        "digits to read [rule: json-syntax]"
    )


def test_an_artifact_member_that_cannot_be_looked_at_names_the_rule(tmp_path, monkeypatch):
    folder = tmp_path / "adir"
    folder.mkdir()
    for name in ("experiences", "evidence_units", "candidate_memories", "coverage_matrix"):
        (folder / f"{name}.jsonl").write_text("")
    real_is_file = pathlib.Path.is_file

    def is_file(self: pathlib.Path) -> bool:
        # As in a folder the user may not search (the tests run as root, which chmod can't stop).
        if self.name == "experiences.jsonl":
            raise PermissionError(13, "Permission denied", str(self))
        return real_is_file(self)

    monkeypatch.setattr(pathlib.Path, "is_file", is_file)
    rc, _out, err = run_cli("validate", str(folder))
    assert rc == 2
    assert err.strip() == (
        f"{folder}: experiences.jsonl: cannot read: [Errno 13] Permission denied: "
        f"'{folder / 'experiences.jsonl'}' [rule: readable]"
    )
