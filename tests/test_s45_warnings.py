"""QA s45: a package's warnings (look-alike ids, repeated budgets) were said only by
``validate`` and ``import``; ``solve``, ``score``, ``sweep`` and ``audit`` scored a package
whose "c2" and "c2 " are two candidates without a word. Every command that reads a package
now says them on stderr, once per file, and lists them in its ``--json`` object."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_utils import run_cli

from memaudit_core import cli
from memaudit_core.package import warning_parts

#: The JSON path of the look-alike id in the package below: the second candidate.
LOOKALIKE_PATH = "$.candidates[1].id"


def write_package(path: Path, lookalike: bool = True) -> Path:
    """Two candidates "c2" and "c2 " (trailing space), or "c2" and "c3", and a store of the
    first."""
    second = "c2 " if lookalike else "c3"
    doc = {
        "memaudit": 1,
        "id": path.stem,
        "budget": 5,
        # Up to the total cost (7): a budget above it has its own note (QA s46).
        "budgets": [5, 7],
        "experiences": [{"id": "e1", "time": 0}, {"id": "e2", "time": 1}],
        "units": [{"id": "u1", "weight": 1}, {"id": "u2", "weight": 2}],
        "candidates": [
            {"id": "c2", "experience": "e1", "type": "raw_span", "cost": 4,
             "coverage": {"u1": 1}},
            {"id": second, "experience": "e2", "type": "raw_span", "cost": 3,
             "coverage": {"u2": 1}},
        ],
        "stores": [{"id": "w", "select": ["c2"]}],
    }  # fmt: skip
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def warning_lines(err: str, path: Path) -> list[str]:
    """The stderr lines that say the look-alike id of ``path``, as validate says it."""
    return [
        line
        for line in err.splitlines()
        if line.startswith(f"{path}: warning: {LOOKALIKE_PATH}") and "(rule: id-lookalike)" in line
    ]


COMMANDS = {
    "solve": ["solve"],
    "score": ["score", "--store", "w"],
    "sweep": ["sweep", "--writers", "gvt"],
    "audit": ["audit", "--budgets", "5"],
}


@pytest.fixture
def bad(tmp_path: Path) -> Path:
    return write_package(tmp_path / "bad.json")


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_command_says_the_packages_lookalike_ids_on_stderr_only(bad, command):
    head, *rest = COMMANDS[command]
    code, out, err = run_cli(head, str(bad), *rest)
    assert code == 0, err
    assert len(warning_lines(err, bad)) == 1, err
    assert "id-lookalike" not in out and "warning" not in out


@pytest.mark.parametrize("command", list(COMMANDS))
def test_json_lists_the_warnings_as_validate_does(bad, command):
    code, out, err = run_cli("validate", str(bad), "--json")
    assert code == 0, err
    said = json.loads(out)["warnings"]
    assert any(w.startswith(LOOKALIKE_PATH) and "id-lookalike" in w for w in said)
    head, *rest = COMMANDS[command]
    code, out, err = run_cli(head, str(bad), *rest, "--json")
    assert code == 0, err
    obj = json.loads(out)  # one object: the warnings did not break stdout
    details = [warning_parts(w) for w in said]
    assert obj["package_warnings"] == [
        {"file": str(bad), "warnings": said, "warning_details": details}
    ]
    assert len(warning_lines(err, bad)) == 1, err
    # The key is the CLI's, as json_output_version: show reads the saved result back.
    saved = bad.with_name(f"{command}.json")
    saved.write_text(out, encoding="utf-8")
    code, _, err = run_cli("show", str(saved))
    assert code == 0, err


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_clean_package_has_an_empty_list_and_no_warning(tmp_path, command):
    clean = write_package(tmp_path / "clean.json", lookalike=False)
    head, *rest = COMMANDS[command]
    code, out, err = run_cli(head, str(clean), *rest, "--json")
    assert code == 0, err
    assert json.loads(out)["package_warnings"] == []
    assert "warning" not in err


def test_a_file_swept_twice_is_warned_of_once(bad):
    code, out, err = run_cli("sweep", str(bad), str(bad), "--writers", "gvt", "--json")
    assert code == 0, err
    assert len(warning_lines(err, bad)) == 1, err
    assert [w["file"] for w in json.loads(out)["package_warnings"]] == [str(bad)]


def test_a_folder_sweep_names_each_file_and_caps_the_files_shown(tmp_path):
    folder = tmp_path / "pkgs"
    folder.mkdir()
    n = cli.MAX_WARNED_FILES + 2
    paths = [write_package(folder / f"p{i}.json") for i in range(n)]
    code, out, err = run_cli("sweep", str(folder), "--writers", "gvt", "--json")
    assert code == 0, err
    listed = json.loads(out)["package_warnings"]
    assert sorted(w["file"] for w in listed) == sorted(str(p) for p in paths)
    shown = [p for p in paths if warning_lines(err, p)]
    assert len(shown) == cli.MAX_WARNED_FILES, err
    assert "... and 2 more package(s) with warnings" in err


def test_quiet_keeps_them_off_stderr_but_json_lists_them(bad):
    code, out, err = run_cli("sweep", str(bad), "--writers", "gvt", "--quiet", "--json")
    assert code == 0, err
    assert "id-lookalike" not in err
    assert json.loads(out)["package_warnings"][0]["file"] == str(bad)
