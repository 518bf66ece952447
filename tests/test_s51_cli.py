"""QA s51 (the CLI in shell pipelines and CI): what each defect was, and the test that holds it.

1. No ``--help`` showed an example or the exit statuses: every help ends with examples (run
   from the repository's root, parsed here) and the statuses 0 / 1 / 2 / 130.
2. ``-`` where stdin is not read (``show -``, ``score --external -``, ``import mem0 -``,
   ``import locomo -``) said "-: $: no such file or folder": they say they read files only.
3. ``show`` of a saved ``validate --json`` verdict called it "a MemAudit package".
4. A limited run's certificate reason printed ``F 61.400000000000006`` in the text.
9. ``score --json``'s ``kind_rows`` lacked the ``bucket`` column of the text table.
10. Option prefixes were accepted (``--budg 6``; ``sweep --budget 6`` ran as ``--budgets``),
    ``solve --budgets`` got no "did you mean", ``sweep --help`` listed 2 of the 4 ablations,
    and ``score --help`` did not say that one of --writer / --store / --external is needed.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from cli_utils import run_cli

from memaudit_core.analysis import ABLATIONS
from memaudit_core.cli import HELP_EXAMPLES, _subparsers, build_parser

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "sample_packages"
UPDATE_CHAIN = str(SAMPLES / "update_chain.json")
IMPORTERS = REPO / "tests" / "fixtures" / "importers"
COMMANDS = sorted(_subparsers(build_parser()))


def _flat(text: str) -> str:
    """Help text with argparse's line wrapping undone."""
    return " ".join(text.split())


# ------------------------------------------------------------------------------ 1: help


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_every_help_ends_with_examples_and_exit_statuses(command):
    rc, out, _ = run_cli(*([command] if command else []), "--help")
    assert rc == 0
    examples = out.index("\nexamples:\n")
    statuses = out.index("\nexit status:\n")
    assert examples < statuses
    for line in HELP_EXAMPLES[command]:
        assert f"  {line}\n" in out  # one line each, as typed (the raw epilog keeps it)
    flat = _flat(out[statuses:])
    for code in ("0", "1", "2", "130"):
        assert f" {code} " in f" {flat} "
    assert "143 after SIGTERM" in flat


def test_exit_one_is_said_where_the_command_can_give_it():
    _, out, _ = run_cli("audit", "--help")
    assert "nothing could be cross-checked" in _flat(out)
    _, out, _ = run_cli("solve", "--help")
    assert "the exact engines disagree" in _flat(out)
    _, out, _ = run_cli("validate", "--help")
    flat = _flat(out[out.index("exit status:") :])
    assert "the package is invalid" in flat and "disagree" not in flat


def _commands_of(example: str) -> list[list[str]]:
    """The ``memaudit`` argv of each command in an example line (pipes and ``>`` split off)."""
    found = []
    for part in example.split("|"):
        words = shlex.split(part.split(">")[0])
        assert words[0] == "memaudit", example
        found.append(words[1:])
    return found


@pytest.mark.parametrize(
    "example", sorted({line for lines in HELP_EXAMPLES.values() for line in lines})
)
def test_each_help_example_parses_and_reads_shipped_files(example):
    parser = build_parser()
    for argv in _commands_of(example):
        args, unknown = parser.parse_known_args(argv)
        assert unknown == [] and args.command == argv[0], example
        # Files read from the repository ship with it (files it writes, as conv-a.json made by
        # the import example before, are not checked).
        for word in argv:
            if word.startswith(("sample_packages/", "tests/fixtures/")):
                assert (REPO / word).is_file(), word


def test_a_help_example_runs_as_written(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    rc, out, err = run_cli(*shlex.split(HELP_EXAMPLES["solve"][0])[1:])
    assert rc == 0 and "OPT: F = 7.735" in out, err


# ------------------------------------------------------------------------------ 2: stdin


@pytest.mark.parametrize(
    ("argv", "who"),
    [
        (["show", "-"], "show reads the saved result"),
        (
            ["score", UPDATE_CHAIN, "--external", "-", "--format", "mem0"],
            "score --external reads the export",
        ),
        (
            [
                "score",
                UPDATE_CHAIN,
                "--external",
                str(IMPORTERS / "mem0_v2_results.json"),
                "--format",
                "mem0",
                "--history",
                "-",
            ],
            "score --history reads the history",
        ),
        (["import", "mem0", "-", "--package", UPDATE_CHAIN], "import mem0 reads the export"),
        (["import", "locomo", "-", "--instance", "conv-a"], "import locomo reads its source"),
    ],
)
@pytest.mark.parametrize("as_json", [False, True])
def test_a_dash_where_only_files_are_read_says_so(tmp_path, argv, who, as_json):
    if argv[0] == "import":
        argv = [*argv, "-o", str(tmp_path / "out.json")]
    rc, out, err = run_cli(*argv, *(["--json"] if as_json else []))
    assert rc == 2
    assert f"<stdin>: {who} from a file, not from stdin (-)" in err
    assert "no such file" not in err
    if as_json:
        assert json.loads(out)["error"]["type"] == "UsageError"
    assert not (tmp_path / "out.json").exists()


# ------------------------------------------------------------------------------ 3: show


@pytest.mark.parametrize("valid", [True, False])
def test_show_names_a_saved_validate_verdict(tmp_path, valid):
    package = UPDATE_CHAIN
    if not valid:
        package = str(tmp_path / "bad.json")
        Path(package).write_text('{"memaudit": 1}')
    _, out, _ = run_cli("validate", package, "--json")
    verdict = tmp_path / "v.json"
    verdict.write_text(out)
    rc, _, err = run_cli("show", str(verdict))
    assert rc == 2
    assert "validate's verdict on a package" in err
    assert ("is valid" if valid else "is invalid") in err
    assert "MemAudit package" not in err and "error object" not in err
    assert "[rule: result-json]" in err


# ------------------------------------------------------------------------------ 4: rounding


def test_a_limited_runs_reason_prints_its_values_as_the_text_does():
    argv = ["solve", str(SAMPLES / "event-graph-50.json"), "--solver", "bnb", "--node-limit", "1"]
    rc, out, err = run_cli(*argv)
    assert rc == 0, err
    assert "incumbent from the gvt writer (F 61.4; bnb's store 58.7)" in out
    assert "61.400000000000006" not in out
    rc, out, _ = run_cli(*argv, "--json")
    data = json.loads(out)
    assert data["value"] == 61.400000000000006  # the result's own fields keep full precision


# ------------------------------------------------------------------------------ 9: bucket


def test_score_json_kind_rows_have_the_text_tables_bucket(tmp_path):
    argv = ["score", UPDATE_CHAIN, "--budget", "6", "--writer", "density"]
    _, text, _ = run_cli(*argv)
    rc, out, _ = run_cli(*argv, "--json")
    assert rc == 0
    data = json.loads(out)
    rows = json.loads(out)["kind_rows"]  # a copy: data's rows are edited below
    assert [r["bucket"] for r in rows[:2]] == ["current truth", "invalidation / tombstones"]
    for r in rows:
        assert f"{r['kind']}  " in text and r["bucket"] in text
    saved = tmp_path / "score.json"
    saved.write_text(out)
    rc, again, _ = run_cli("show", str(saved), "--json")
    assert rc == 0 and json.loads(again)["kind_rows"] == rows
    # Saved before the column: still read, the bucket derived from the kind.
    for r in data["kind_rows"]:
        del r["bucket"]
    saved.write_text(json.dumps(data))
    rc, again, _ = run_cli("show", str(saved), "--json")
    assert rc == 0 and json.loads(again)["kind_rows"] == rows
    # An edited bucket is refused, not replaced without a word.
    data["kind_rows"][0]["bucket"] = "stale"
    saved.write_text(json.dumps(data))
    rc, _, err = run_cli("show", str(saved))
    assert rc == 2 and "$.kind_rows[0].bucket" in err and "[rule: inconsistent]" in err


# ------------------------------------------------------------------------------ 10: options


def test_no_parser_accepts_an_option_prefix():
    parser = build_parser()
    assert parser.allow_abbrev is False
    assert all(p.allow_abbrev is False for p in _subparsers(parser).values())


@pytest.mark.parametrize(
    ("argv", "hint"),
    [
        (["solve", UPDATE_CHAIN, "--budg", "6"], "did you mean --budget?"),
        (["solve", UPDATE_CHAIN, "--budgets", "6"], "did you mean --budget?"),
        (["sweep", UPDATE_CHAIN, "--budget", "6"], "did you mean --budgets?"),
        (
            ["solve", UPDATE_CHAIN, "--budg", "6", "--time", "5"],
            "did you mean --budget for --budg, --time-limit for --time?",
        ),
    ],
)
def test_an_option_prefix_or_slip_is_refused_with_the_option_meant(argv, hint):
    rc, out, err = run_cli(*argv)
    assert rc == 2 and out == ""
    assert "unrecognized arguments" in err and hint in err


def test_sweep_help_lists_every_ablation_it_takes():
    _, out, _ = run_cli("sweep", "--help")
    flat = _flat(out)
    for name in [*ABLATIONS, *ABLATIONS.values()]:
        assert name in flat
    rc, _, err = run_cli(
        "sweep", UPDATE_CHAIN, "--budgets", "6", "--writers", "gvt", "--ablations", "generic_opt"
    )
    assert rc == 0, err


def test_score_help_says_one_of_writer_store_external_is_needed():
    _, out, _ = run_cli("score", "--help")
    assert "Give exactly one of --writer NAME, --store ID or --external EXPORT" in _flat(out)
