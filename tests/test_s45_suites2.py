"""QA s45 (suites, round 2).

1. A folder sweep counted a package's repeated budget twice: ``budgets: [3, 3, 5]`` gave each
   (package, 3) row twice, so n at budget 3 was twice n at 5 and its confidence interval too
   narrow, in the table, ``--json``, ``-o`` and ``--out`` alike (files named one by one were
   right). The in-app audit of such a package checked budget 3 twice.
2. A folder's dangling symbolic link or FIFO named ``*.json`` was dropped without a word.
3. A package list (``.txt``) that is not UTF-8 stopped the run with a bare error, before the
   other invalid files were listed.
4. ``--budgets 5:1:1`` (and the other refused ranges) and ``audit --pools ''`` were reported
   as MemAuditError under ``--json``, not UsageError.
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pytest
from cli_utils import run_cli

from memaudit_core.audit import audit_summary_for_package
from memaudit_core.generators import generate
from memaudit_core.package import load_package, package_to_dict

GRID = [3, 3, 5]
N_PACKAGES = 3


def _folder(tmp_path: Path) -> Path:
    """A folder of generated packages whose ``budgets`` repeat 3."""
    folder = tmp_path / "many"
    folder.mkdir()
    for seed in range(N_PACKAGES):
        doc = package_to_dict(generate("memaudit-small", seed=seed))
        doc["budgets"] = GRID
        (folder / f"p{seed}.json").write_text(json.dumps(doc))
    return folder


def _sweep(*argv: str) -> dict:
    rc, out, err = run_cli("sweep", *argv, "--writers", "greedy", "--json")
    assert rc == 0, err
    return json.loads(out)


def test_a_folder_sweep_counts_a_repeated_budget_once(tmp_path, monkeypatch):
    folder = _folder(tmp_path)
    monkeypatch.chdir(tmp_path)
    # One row per distinct (package, budget) pair, for the one writer.
    expected = N_PACKAGES * len(set(GRID))
    doc = _sweep("many", "-o", "rows.csv")
    keys = [(r["source"], r["budget"], r["method"]) for r in doc["rows"]]
    assert len(keys) == expected
    assert len(set(keys)) == expected
    assert doc["n_tasks"] == expected
    assert {s["budget"]: s["n"] for s in doc["summary"]} == dict.fromkeys(set(GRID), N_PACKAGES)
    with open("rows.csv", newline="") as fh:
        assert len(list(csv.DictReader(fh))) == expected
    # The same packages named one by one: the summary (mean, CI) matches.
    one_by_one = _sweep(*sorted(str(p.relative_to(tmp_path)) for p in folder.iterdir()))
    assert one_by_one["summary"] == doc["summary"]


def test_a_folder_sweep_out_and_its_resume_keep_each_task_once(tmp_path, monkeypatch):
    _folder(tmp_path)
    monkeypatch.chdir(tmp_path)
    expected = N_PACKAGES * len(set(GRID))
    first = _sweep("many", "--out", "o")
    again = _sweep("many", "--out", "o")
    assert (first["executed"], again["reused"], again["executed"]) == (expected, expected, 0)
    for doc in (first, again):
        assert len(doc["rows"]) == expected
    lines = [json.loads(x) for x in Path("o/journal.jsonl").read_text().splitlines()]
    assert sum(1 for x in lines if x["t"] == "task") == expected
    with open("o/rows.csv", newline="") as fh:
        assert len(list(csv.DictReader(fh))) == expected


def test_audits_check_a_repeated_budget_once(tmp_path, monkeypatch):
    folder = _folder(tmp_path)
    monkeypatch.chdir(tmp_path)
    rc, out, err = run_cli("audit", "many", "--json")
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["n_tasks"] == N_PACKAGES * len(set(GRID))
    rep = audit_summary_for_package(load_package(folder / "p0.json"))
    assert rep.n_tasks == len(set(GRID))
    assert sorted(rep.budgets) == sorted(set(GRID))


def test_a_folders_dangling_link_and_fifo_are_listed(tmp_path, monkeypatch):
    folder = _folder(tmp_path)
    for p in list(folder.iterdir())[1:]:
        p.unlink()
    (folder / "broken.json").symlink_to(tmp_path / "nonexistent")
    os.mkfifo(folder / "fifo.json")
    monkeypatch.chdir(tmp_path)
    rc, out, err = run_cli("sweep", "many", "--writers", "greedy", "--json")
    assert rc == 2, err
    error = json.loads(out)["error"]
    assert error["message"] == "sweep not run: 2 of 3 package files are invalid"
    found = {e["file"]: e["problems"][0] for e in error["errors"]}
    assert set(found) == {"many/broken.json", "many/fifo.json"}
    assert found["many/broken.json"]["rule"] == "file-exists"
    assert "no such file: a dangling symbolic link" in found["many/broken.json"]["message"]
    assert found["many/fifo.json"]["rule"] == "regular-file"
    assert "not a regular file (named pipe)" in found["many/fifo.json"]["message"]
    rc, out, err = run_cli("audit", "many", "--workers", "2", "--out", "o", "--quiet")
    assert rc == 2
    assert "audit not run: 2 of 3 package files are invalid" in err
    assert "many/broken.json: $: no such file: a dangling symbolic link" in err
    assert "many/fifo.json: $: not a regular file (named pipe)" in err
    assert not (tmp_path / "o").exists()


def test_a_non_utf8_package_list_is_listed_with_the_invalid_files(tmp_path, monkeypatch):
    folder = _folder(tmp_path)
    monkeypatch.chdir(tmp_path)
    Path("latin.txt").write_bytes(b"many/p0.json\n\xff\xfe\n")
    assert not folder.joinpath("missing.json").exists()
    rc, out, err = run_cli("audit", "missing.json", "latin.txt", "--out", "o_lat")
    assert rc == 2
    assert "memaudit: error:" not in err, err
    assert "audit not run: 2 of 2 package files are invalid" in err
    assert "missing.json: $: no such file or folder [rule: file-exists]" in err
    # b"many/p0.json\n" is 13 bytes: the 14th (offset 13) is the first that is not UTF-8.
    assert "latin.txt: $: a package list must be UTF-8 text (byte 13 is not) [rule: utf-8]" in err
    assert not (tmp_path / "o_lat").exists()


@pytest.mark.parametrize("command", ["sweep", "audit"])
@pytest.mark.parametrize(
    ("budgets", "message"),
    [
        (
            "5:1:1",
            "--budgets: '5:1:1' runs backwards: stop (1) is below start (5); a range goes "
            "from start up to stop",
        ),
        ("1:5:0", "--budgets: '1:5:0': step must be > 0, got 0"),
        ("1:5:-1", "--budgets: '1:5:-1': step must be > 0, got -1"),
        (
            "0:1e9:1",
            "--budgets: '0:1e9:1': 0..1000000000 step 1 makes 1,000,000,001 budgets, more than "
            "the 10,000 allowed; use a larger step",
        ),
    ],
    ids=["backwards", "step-0", "step-negative", "too-many"],
)
def test_a_refused_budget_range_is_a_usage_error(tmp_path, command, budgets, message):
    pkg = _folder(tmp_path) / "p0.json"
    extra = ("--writers", "greedy") if command == "sweep" else ()
    rc, out, _ = run_cli(command, str(pkg), *extra, "--budgets", budgets, "--json")
    assert rc == 2
    assert json.loads(out)["error"] == {"type": "UsageError", "message": message}


def test_audit_with_no_pools_is_a_usage_error(tmp_path):
    pkg = _folder(tmp_path) / "p0.json"
    rc, out, _ = run_cli("audit", str(pkg), "--pools", "", "--json")
    assert rc == 2
    assert json.loads(out)["error"] == {"type": "UsageError", "message": "no pools given"}
