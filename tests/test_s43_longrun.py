"""QA s43 (long runs): a single solve that runs long says so on stderr, and --json stdout stays
one object."""

from __future__ import annotations

import json

import pytest
from cli_utils import run_cli

from memaudit_core.generators import generate
from memaudit_core.package import save_package


@pytest.fixture
def slow_package(tmp_path):
    # 40 random groups: HiGHS takes a second or more to prove it, past a 0.05 s threshold.
    path = tmp_path / "rc40.json"
    save_package(generate("random_coverage", 0, n_groups=40), path)
    return path


def test_solve_prints_progress_on_stderr_and_keeps_json_stdout(slow_package, monkeypatch):
    monkeypatch.setenv("MEMAUDIT_PROGRESS_AFTER", "0.05")
    rc, out, err = run_cli("solve", str(slow_package), "--solver", "milp", "--json")
    assert rc == 0
    result = json.loads(out)  # one JSON object, no progress line mixed in
    assert result["result_kind"] == "solve"
    lines = [line for line in err.splitlines() if line.startswith("memaudit: solve running")]
    assert lines, err
    assert "engine milp" in lines[0]
    assert "--time-limit S stops with the best store found, its bound and gap" in lines[0]
    assert not any("--time-limit S" in line for line in lines[1:])


def test_limited_solve_progress_names_the_limit(slow_package, monkeypatch):
    monkeypatch.setenv("MEMAUDIT_PROGRESS_AFTER", "0.05")
    rc, out, err = run_cli(
        "solve", str(slow_package), "--solver", "bnb", "--time-limit", "2", "--json"
    )
    assert rc == 0
    assert json.loads(out)["status"] in ("limit", "optimal")
    lines = [line for line in err.splitlines() if line.startswith("memaudit: solve running")]
    assert lines, err
    assert "engine bnb" in lines[0]
    assert lines[0].endswith("; --time-limit 2 s per engine run")
    assert "--time-limit S stops" not in err


def test_progress_off_by_default_in_tests(slow_package):
    rc, out, err = run_cli("solve", str(slow_package), "--solver", "milp", "--json")
    assert rc == 0 and json.loads(out)["result_kind"] == "solve"
    assert "running" not in err


def test_bad_progress_setting_is_a_clear_error(slow_package, monkeypatch):
    monkeypatch.setenv("MEMAUDIT_PROGRESS_AFTER", "soon")
    rc, out, err = run_cli("solve", str(slow_package), "--json")
    assert rc == 2
    assert "MEMAUDIT_PROGRESS_AFTER" in err and "'soon'" in err
    assert "error" in json.loads(out)
