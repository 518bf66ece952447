"""QA s44: a sweep or audit over a folder with several invalid packages stopped at the first
bad file and named only it (k bad files took k reruns), named folder members by absolute
path, said nothing of the run not happening, and still wrote a header-only journal."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_utils import run_cli

SAMPLES = Path(__file__).resolve().parents[1] / "sample_packages"

#: What each invalid file breaks, written by hand from how the files are made below.
BROKEN = ("badf/broken.json", "truncated")
Z_BAD = [
    ("badf/z_bad.json", "$.candidates[0].cost", "cost-positive"),
    ("badf/z_bad.json", '$.candidates[0].coverage["v_0"]', "coverage-range"),
]


def _z_bad_doc() -> dict:
    doc = json.loads((SAMPLES / "update_chain.json").read_text(encoding="utf-8"))
    cand = doc["candidates"][0]
    cand["cost"] = -1
    assert "v_0" in cand["coverage"]  # the fixture's premise
    cand["coverage"]["v_0"] = 1.7
    return doc


@pytest.fixture
def badf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """badf/ with a truncated file, a file with two problems and two good packages; the
    working folder is tmp_path, so that "badf" is typed relative."""
    folder = tmp_path / "badf"
    folder.mkdir()
    (folder / "broken.json").write_text('{"format": "memaudit-package", "ver', encoding="utf-8")
    (folder / "z_bad.json").write_text(json.dumps(_z_bad_doc()), encoding="utf-8")
    shutil.copy(SAMPLES / "update_chain.json", folder / "a_good.json")
    shutil.copy(SAMPLES / "travel-assistant.json", folder / "b_good.json")
    monkeypatch.chdir(tmp_path)
    return folder


def _assert_all_problems_listed(err: str, command: str, tmp_path: Path) -> None:
    lines = err.strip().splitlines()
    assert lines[-1].startswith(f"{command} not run: 2 of 4 package files are invalid"), err
    assert any(
        line.startswith(f"{BROKEN[0]}: $ (line 1") and line.endswith(f"[rule: {BROKEN[1]}]")
        for line in lines
    ), err
    for file, path, rule in Z_BAD:
        assert any(
            line.startswith(f"{file}: {path}: ") and line.endswith(f"[rule: {rule}]")
            for line in lines
        ), err
    # Named as typed (badf/...), never by absolute path.
    assert str(tmp_path) not in err


@pytest.mark.parametrize("workers", ["1", "2"])
def test_sweep_of_a_folder_lists_every_invalid_file_and_writes_nothing(badf, tmp_path, workers):
    rc, out, err = run_cli(
        "sweep", "badf", "--budgets", "6", "--writers", "gvt", "--out", "res",
        "--workers", workers, "--quiet",
    )  # fmt: skip
    assert rc == 2
    _assert_all_problems_listed(err, "sweep", tmp_path)
    assert not (tmp_path / "res").exists()  # no header-only journal, no folder made


def test_audit_of_a_folder_lists_every_invalid_file(badf, tmp_path):
    rc, out, err = run_cli("audit", "badf", "--budgets", "6", "--quiet")
    assert rc == 2
    _assert_all_problems_listed(err, "audit", tmp_path)


def test_audit_json_has_one_error_object_per_invalid_file(badf):
    rc, out, _ = run_cli("audit", "badf", "--budgets", "6", "--quiet", "--json")
    error = json.loads(out)["error"]
    assert rc == 2 and error["type"] == "InvalidPackagesError"
    assert error["message"] == "audit not run: 2 of 4 package files are invalid"
    got = [(e["file"], [p["rule"] for p in e["problems"]]) for e in error["errors"]]
    assert got == [(BROKEN[0], [BROKEN[1]]), (Z_BAD[0][0], [r for _, _, r in Z_BAD])]


def test_invalid_packages_leave_an_earlier_out_folder_as_it_was(badf, tmp_path):
    good = tmp_path / "good"
    good.mkdir()
    shutil.copy(SAMPLES / "update_chain.json", good / "a.json")
    argv = ("sweep", "good", "--budgets", "6", "--writers", "gvt", "--out", "res", "--quiet")
    assert run_cli(*argv)[0] == 0
    before = {p: p.read_bytes() for p in (tmp_path / "res").rglob("*") if p.is_file()}
    assert (tmp_path / "res" / "journal.jsonl") in before
    shutil.copy(badf / "z_bad.json", good / "z_bad.json")
    rc, _, err = run_cli(*argv, "--fresh")
    assert rc == 2 and "sweep not run: 1 of 2 package files are invalid" in err
    after = {p: p.read_bytes() for p in (tmp_path / "res").rglob("*") if p.is_file()}
    assert after == before


def test_plain_sweep_of_files_lists_every_invalid_file(badf, tmp_path):
    rc, _, err = run_cli(
        "sweep", "badf/a_good.json", "badf/broken.json", "badf/b_good.json", "badf/z_bad.json",
        "--budgets", "6", "--writers", "gvt",
    )  # fmt: skip
    assert rc == 2
    _assert_all_problems_listed(err, "sweep", tmp_path)


def test_many_problems_are_capped_and_the_rest_counted(tmp_path, monkeypatch):
    folder = tmp_path / "many"
    folder.mkdir()
    text = json.dumps(_z_bad_doc())
    for i in range(30):  # 30 files x 2 problems = 60 problems
        (folder / f"b{i:02d}.json").write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    rc, _, err = run_cli("audit", "many", "--budgets", "6", "--quiet")
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 50 + 2
    assert all(line.startswith("many/b") and "[rule: " in line for line in lines[:50])
    # Files b00..b24 fill the 50 lines; b25..b29 hold the 10 left out.
    names = ", ".join(f"many/b{i}.json" for i in range(25, 30))
    assert lines[50].startswith(f"... and 10 more problem(s) in {names} ")
    assert lines[51].startswith("audit not run: 30 of 30 package files are invalid")


def test_library_sweep_suite_raises_one_error_naming_every_invalid_file(badf):
    from memaudit_core.errors import InvalidPackagesError, MemAuditError
    from memaudit_core.suites import sweep_suite

    with pytest.raises(InvalidPackagesError) as info:
        sweep_suite(paths=["badf"], budgets=[6], writers=["gvt"])
    exc = info.value
    assert isinstance(exc, MemAuditError)
    assert [e.file for e in exc.errors] == [BROKEN[0], Z_BAD[0][0]]
    assert [[p.rule for p in e.problems] for e in exc.errors] == [
        [BROKEN[1]],
        [r for _, _, r in Z_BAD],
    ]
