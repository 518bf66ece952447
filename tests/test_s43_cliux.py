"""QA s43 CLI defects: numeric options named with the text typed; a package given as an export.

1. ``--budget 1e309`` said "budget must be a finite number >= 0, got inf": neither the option
   nor what was typed. Every numeric option of every command now refuses its value while
   parsing, as ``--budgets`` does: ``--budget: must be ..., got '1e309'``, exit 2, and under
   ``--json`` the UsageError object.
2. A MemAudit package given as an export (``--external``, ``import FORMAT``) got only the
   format's shape error; it now gets a ``format-hint`` first, the mirror of the hint an export
   given as the package gets.

The expected messages are written out here from the rules each option documents.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_utils import run_cli

from memaudit_core.errors import PackageError
from memaudit_core.importers import load_external_store

REPO = Path(__file__).resolve().parent.parent
PKG = str(REPO / "sample_packages" / "update_chain.json")

BUDGET = "must be a finite number >= 0"
SECONDS = "must be a finite number of seconds > 0"

# (command and its other arguments, option, value typed, the rule the message states)
CASES = [
    (["solve", PKG], "--budget", "1e309", BUDGET),
    (["solve", PKG], "--budget", "nan", BUDGET),
    (["solve", PKG], "--budget", "-1", BUDGET),
    (["score", PKG, "--writer", "gvt"], "--budget", "inf", BUDGET),
    (["solve", PKG], "--time-limit", "-1", SECONDS),
    (["solve", PKG], "--time-limit", "0", SECONDS),
    (["score", PKG, "--writer", "gvt"], "--time-limit", "nan", SECONDS),
    (["sweep", PKG, "--budgets", "2", "--quiet"], "--time-limit", "1e309", SECONDS),
    (["audit", PKG, "--budgets", "2", "--quiet"], "--time-limit", "-1", SECONDS),
    (["sweep", PKG, "--budgets", "2", "--quiet"], "--total-time-limit", "-1", SECONDS),
    (["sweep", PKG, "--budgets", "2", "--quiet"], "--total-time-limit", "inf", SECONDS),
    (
        ["sweep", PKG, "--budgets", "2", "--quiet"],
        "--writer-timeout",
        "nan",
        f"{SECONDS}, at most 86400",
    ),
    (
        ["score", PKG, "--writer", "gvt"],
        "--writer-timeout",
        "-5",
        f"{SECONDS}, at most 86400",
    ),
    (["solve", PKG], "--node-limit", "-1", "must be an integer >= 0"),
    (["sweep", PKG, "--budgets", "2", "--quiet"], "--workers", "0", "must be an integer >= 1"),
    (["audit", PKG, "--budgets", "2", "--quiet"], "--workers", "0", "must be an integer >= 1"),
    (
        ["sweep", "--family", "update_chain", "--budgets", "2", "--quiet"],
        "--max-tasks",
        "0",
        "must be an integer >= 1",
    ),
]
IDS = [f"{argv[0]}{opt}={value}" for argv, opt, value, _ in CASES]


@pytest.mark.parametrize(("argv", "option", "value", "rule"), CASES, ids=IDS)
def test_a_refused_number_names_its_option_and_the_text_typed(argv, option, value, rule):
    code, out, err = run_cli(*argv, option, value)
    assert code == 2 and out == ""
    assert f"argument {option}: {rule}, got '{value}'" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(("argv", "option", "value", "rule"), CASES, ids=IDS)
def test_a_refused_number_under_json_is_the_usage_error_object(argv, option, value, rule):
    code, out, _ = run_cli(*argv, option, value, "--json")
    assert code == 2
    error = json.loads(out)["error"]
    assert error["type"] == "UsageError"
    assert error["message"] == f"memaudit {argv[0]}: argument {option}: {rule}, got '{value}'"


def test_the_budget_is_quoted_as_typed_not_as_parsed():
    """The QA command: the float read from "1e309" is inf, which the message used to show."""
    code, _, err = run_cli("solve", PKG, "--budget", "1e309")
    assert code == 2
    assert "--budget: must be a finite number >= 0, got '1e309'" in err
    assert "got inf" not in err


@pytest.fixture()
def package_copy(tmp_path) -> Path:
    path = tmp_path / "uc.json"
    shutil.copy(PKG, path)
    return path


def _hint(fmt: str) -> str:
    return (
        f"this is a MemAudit package, not an export of format '{fmt}': give it as the "
        "PACKAGE argument"
    )


@pytest.mark.parametrize("fmt", ["mem0", "letta", "amem", "zep"])
def test_a_package_given_as_the_external_export_gets_a_format_hint(package_copy, fmt):
    pkg = str(package_copy)
    code, out, err = run_cli("score", pkg, "--external", pkg, "--format", fmt)
    assert code == 2 and out == ""
    first = err.strip().splitlines()[0]
    assert first.startswith(f"{pkg}: $: {_hint(fmt)}") and first.endswith("[rule: format-hint]")

    code, out, _ = run_cli("score", pkg, "--external", pkg, "--format", fmt, "--json")
    assert code == 2
    problems = json.loads(out)["error"]["problems"]
    assert problems[0]["rule"] == "format-hint" and problems[0]["path"] == "$"
    assert problems[0]["message"].startswith(_hint(fmt))
    # Only the hint (QA s43 recheck: the format's own problems read the package's keys as
    # notes or edges, 13 lines of noise for amem).
    assert len(problems) == 1


@pytest.mark.parametrize("fmt", ["mem0", "letta", "amem", "zep"])
def test_a_package_imported_as_an_export_gets_the_format_hint(package_copy, tmp_path, fmt):
    pkg = str(package_copy)
    out_file = tmp_path / "out.json"
    code, _, err = run_cli("import", fmt, pkg, "--package", pkg, "-o", str(out_file))
    assert code == 2 and not out_file.exists()
    assert err.strip().splitlines()[0].startswith(f"{pkg}: $: {_hint(fmt)}")


def test_the_library_and_the_app_get_the_hint_too(package_copy):
    """The External stores page reads uploads with load_external_store."""
    with pytest.raises(PackageError) as info:
        load_external_store(package_copy, "mem0")
    first = info.value.problems[0]
    assert first.rule == "format-hint" and first.message.startswith(_hint("mem0"))
