"""QA s51 (cli report), defects 6 and 10.

6: a MemAudit file given where an export or a benchmark file goes gets the hint that says what
it is, through a UTF-8 byte order mark too: a package with a BOM given as a Mem0 export got
only "needs a 'results' array" (without the BOM: "this is a MemAudit package"), a saved result
given as an export got no hint that it is a result, and ``import locomo PKG.json`` only "a
LoCoMo file must be an array of samples".

10: help that said less than the command takes or refuses: ``audit --pools`` took the pools'
method names (no_validity_opt) unlisted, ``sweep --writers`` took plugin MODULE:FUNCTION
writers unlisted, ``--total-time-limit`` and ``--max-tasks`` did not say what they need,
``solve --node-limit`` not that enum and brute refuse it, and ``generate --json`` promised one
JSON object on stdout, where without ``-o`` the package is printed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_utils import run_cli

from memaudit_core import cli
from memaudit_core.importers import guess_store_format

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "sample_packages" / "update_chain.json"
LOCOMO = ROOT / "tests" / "fixtures" / "importers" / "locomo_small.json"
BOM = b"\xef\xbb\xbf"


def _problems(out: str) -> list[tuple[str, str, str]]:
    """The ``--json`` error object's problems as (path, rule, message)."""
    error = json.loads(out)["error"]
    return [(p["path"], p["rule"], p["message"]) for p in error["problems"]]


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    """A package and a saved solve result, each plain and with a BOM."""
    folder = tmp_path_factory.mktemp("hints")
    code, out, err = run_cli("solve", str(PKG), "--budget", "6", "--json")
    assert code == 0, err
    made = {"package": PKG.read_bytes(), "result": out.encode()}
    paths = {}
    for name, data in made.items():
        for bom in (False, True):
            path = folder / f"{name}{'-bom' if bom else ''}.json"
            path.write_bytes(BOM + data if bom else data)
            paths[f"{name}{'-bom' if bom else ''}"] = path
    return paths


CASES = ["package", "package-bom", "result", "result-bom"]


def _hint_for(name: str, wanted: str) -> str:
    if name.startswith("package"):
        return f"this is a MemAudit package, not {wanted}: give it as the PACKAGE argument"
    return f"this is a saved MemAudit result ('solve'), not {wanted}: `memaudit show FILE`"


# The plain package was told before this session (QA s43); the other three were not.
@pytest.mark.parametrize("name", ["package-bom", "result", "result-bom"])
@pytest.mark.parametrize("fmt", ["mem0", "zep"])
def test_a_memaudit_file_given_as_the_export_gets_the_hint_alone(files, name, fmt):
    code, out, err = run_cli(
        "score", str(PKG), "--external", str(files[name]), "--format", fmt, "--json"
    )
    assert code == 2, err
    [(path, rule, message)] = _problems(out)
    assert (path, rule) == ("$", "format-hint")
    assert message.startswith(_hint_for(name, f"an export of format {fmt!r}")), message


@pytest.mark.parametrize("name", ["package-bom", "result", "result-bom"])
def test_import_of_a_memaudit_file_as_an_export_gets_the_hint(files, tmp_path, name):
    out_file = tmp_path / "o.json"
    code, out, err = run_cli(
        "import", "mem0", str(files[name]), "--package", str(PKG), "-o", str(out_file), "--json"
    )
    assert code == 2, err
    [(_, rule, message)] = _problems(out)
    assert rule == "format-hint" and message.startswith(
        _hint_for(name, "an export of format 'mem0'")
    ), message
    assert not out_file.exists()


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("fmt", ["locomo", "longmemeval"])
def test_import_of_a_memaudit_file_as_a_benchmark_file_gets_the_hint(files, tmp_path, name, fmt):
    code, out, err = run_cli(
        "import", fmt, str(files[name]), "-o", str(tmp_path / "x.json"), "--json"
    )
    assert code == 2, err
    wanted = "a LoCoMo file" if fmt == "locomo" else "a LongMemEval file"
    [(path, rule, message)] = _problems(out)
    assert (path, rule) == ("$", "format-hint")
    assert message.startswith(_hint_for(name, wanted)), message


def test_the_guess_sees_through_a_bom(files):
    assert [guess_store_format(files[n]) for n in CASES] == [
        "package",
        "package",
        "result",
        "result",
    ]


def test_a_benchmark_file_still_imports_and_its_own_problems_are_kept(tmp_path):
    code, _, said = run_cli(
        "import", "locomo", str(LOCOMO), "--instance", "conv-a", "-o", str(tmp_path / "a.json")
    )
    assert code == 0, said
    # A real LoCoMo problem (an unknown instance) is not replaced by a hint.
    code, out, err = run_cli(
        "import", "locomo", str(LOCOMO), "--instance", "nope", "-o", str(tmp_path / "b.json"),
        "--json",
    )  # fmt: skip
    assert code == 2 and all(rule != "format-hint" for _, rule, _ in _problems(out)), out
    # The package's own warnings cite paths of the written package, so they are named by it.
    assert f"{tmp_path / 'a.json'}: warning: $.queries[6].requires: " in said, said


# --------------------------------------------------------------------------- defect 10


def _help(command: str, option: str) -> str:
    sub = cli._subparsers(cli.build_parser())[command]
    [action] = [a for a in sub._actions if option in a.option_strings]
    return action.help or ""


def test_audit_pools_help_lists_every_name_the_command_takes():
    from memaudit_core.audit import _check_pools

    said = _help("audit", "--pools")
    for name in ("full", "no_validity", "generic", "no_validity_opt", "generic_opt"):
        _check_pools([name])  # taken
        assert name in said, said


def test_sweep_writers_help_says_plugin_writers_are_taken(tmp_path):
    said = _help("sweep", "--writers")
    assert "MODULE:FUNCTION" in said, said
    code, _, err = run_cli(
        "sweep", str(PKG), "--writers", "memaudit_core.example_writers:recency", "--budgets",
        "6", "--quiet",
    )  # fmt: skip
    assert code == 0, err


@pytest.mark.parametrize(
    ("command", "option", "needs", "argv"),
    [
        ("sweep", "--total-time-limit", "--family", ["--family", "update_chain",
                                                     "--total-time-limit", "5"]),
        ("sweep", "--total-time-limit", "worker", [str(PKG), "--workers", "2",
                                                      "--total-time-limit", "5"]),
        ("sweep", "--max-tasks", "--out", [str(PKG), "--max-tasks", "1"]),
        ("audit", "--max-tasks", "--out", [str(PKG), "--max-tasks", "1"]),
        ("solve", "--node-limit", "enum", [str(PKG), "--solver", "enum", "--node-limit", "5"]),
        ("solve", "--node-limit", "brute", [str(PKG), "--solver", "brute", "--node-limit", "5"]),
    ],
)  # fmt: skip
def test_an_option_refused_without_another_says_so_in_its_help(command, option, needs, argv):
    code, _, err = run_cli(command, *argv, "--budgets" if command != "solve" else "--budget", "6")
    assert code == 2 and needs in err, err
    assert needs in _help(command, option), _help(command, option)


def test_generate_json_help_says_what_it_prints(tmp_path):
    said = _help("generate", "--json")
    assert "with -o" in said and "without -o the package" in said, said
    code, out, _ = run_cli("generate", "update_chain", "--json")
    assert code == 0 and json.loads(out)["memaudit"] == 1  # the package, not a summary
    code, out, _ = run_cli("generate", "update_chain", "-o", str(tmp_path / "g.json"), "--json")
    assert code == 0 and "generated" in json.loads(out)
