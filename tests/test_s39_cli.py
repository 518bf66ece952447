"""QA session 39 (fixer B): the CLI walkthrough's defects, one or more tests each.

1. a sweep row's ``source`` for members of a .txt list or a folder kept the base name only;
2. plugins from MEMAUDIT_WRITER_MODULES were labelled ``--writer-module SPEC``;
3. the README's audit exit 1 left out checks that were skipped (log1p packages);
4. a single-value option given twice kept the last value without a word;
5. ``--seeds 3,3`` was merged without the note repeated --budgets items get;
6. ``--writer-timeout`` with a writer that has no timeout was accepted silently;
7. ``memaudit --json solve x`` did not say where --json goes;
8. after a limited solve the score tables still said "optimum";
9. stdin was "-" in validate / solve / sweep output and "<stdin>" in package errors;
10. "1 of them (...) cover nothing" in the union note;
11. budget_curve's unknown-writer message listed the reference writers only;
12. ``parse_package("not a dict")`` said "(got 'string')".
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_utils import run_cli
from package_utils import write_json

import memaudit_core as ma
from memaudit_core.curves import budget_curve
from memaudit_core.errors import PackageError, UnknownNameError
from memaudit_core.importers import load_external_store

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_packages"
UPDATE_CHAIN = SAMPLES / "update_chain.json"


# --------------------------------------------------------------------------- 1: list sources


def test_list_and_folder_members_keep_their_path_as_source(tmp_path, monkeypatch):
    # Two files named p.json in two folders of one list gave two rows with source "p.json".
    # The list is named from its own folder, so its entries' labels are the entries as the
    # list writes them (QA s39 round 2 defect B2 prefixes them with the list's folder as
    # the user named it, which is empty here).
    (tmp_path / "l2" / "a").mkdir(parents=True)
    (tmp_path / "l2" / "b").mkdir(parents=True)
    shutil.copy(UPDATE_CHAIN, tmp_path / "l2" / "a" / "p.json")
    shutil.copy(SAMPLES / "memaudit-small-s0.json", tmp_path / "l2" / "b" / "p.json")
    (tmp_path / "l2" / "list.txt").write_text("a/p.json\nb/p.json\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path / "l2")
    rc, out, err = run_cli(
        "sweep", "list.txt", "--budgets", "4", "--writers", "gvt", "--json", "--quiet"
    )
    assert rc == 0, err
    assert [r["source"] for r in json.loads(out)["rows"]] == ["a/p.json", "b/p.json"]

    # A list naming a folder: the folder's members under the list's name for it.
    (tmp_path / "l2" / "folders.txt").write_text("a\nb\n", encoding="utf-8")
    rc, out, err = run_cli(
        "sweep", "folders.txt", "--budgets", "4", "--writers", "gvt", "--json", "--quiet"
    )
    assert rc == 0, err
    assert [r["source"] for r in json.loads(out)["rows"]] == ["a/p.json", "b/p.json"]


def test_list_sources_resume_from_the_journal(tmp_path):
    """Regression guard: the journal keys on the file, not on its shown name, so a list
    sweep resumes (nothing runs again) and keeps the names."""
    (tmp_path / "a").mkdir()
    shutil.copy(UPDATE_CHAIN, tmp_path / "a" / "p.json")
    listing = tmp_path / "list.txt"
    listing.write_text("a/p.json\n", encoding="utf-8")
    args = ("sweep", str(listing), "--budgets", "4", "--writers", "gvt", "--quiet")
    out_dir = str(tmp_path / "out")
    rc, _, err = run_cli(*args, "--out", out_dir, "--no-figures")
    assert rc == 0, err
    rc, out, err = run_cli(*args, "--out", out_dir, "--no-figures", "--json")
    assert rc == 0, err
    res = json.loads(out)
    # The list was named by its absolute path: its entry under the list's folder (QA s39
    # round 2 defect B2).
    assert [r["source"] for r in res["rows"]] == [str(tmp_path / "a" / "p.json")]
    assert res["executed"] == 0 and res["reused"] == 1


def test_a_file_named_on_the_command_line_keeps_its_source():
    """Regression guard: a file given directly is labelled as given (QA s39 round 2
    defect B2: suite mode showed its base name, the plain sweep the path as given)."""
    rc, out, err = run_cli(
        "sweep",
        str(UPDATE_CHAIN),
        "--family",
        "update_chain",
        "--budgets",
        "4",
        "--writers",
        "gvt",
        "--json",
        "--quiet",
    )
    assert rc == 0, err
    assert [r["source"] for r in json.loads(out)["rows"]] == [
        str(UPDATE_CHAIN),
        "update_chain:0",
    ]


# --------------------------------------------------------------------------- 2: env plugins


def test_writers_from_the_environment_are_labelled_by_it(tmp_path):
    # In a fresh process: the registry is per process, and discovery reads the variable once.
    spec = "plugin_fixtures.fixture_writers:unnamed"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")]),
        "MEMAUDIT_WRITER_MODULES": spec,
    }
    done = subprocess.run(
        [sys.executable, "-m", "memaudit_core", "writers", "--json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    sources = {w["spec"]: w["source"] for w in json.loads(done.stdout)["writers"]}
    assert sources[spec] == f"MEMAUDIT_WRITER_MODULES={spec}"


# --------------------------------------------------------------------------- 3: README exit 1


def test_readme_says_audit_exits_1_when_every_check_was_skipped(tmp_path):
    # Too large to enumerate at 125 (s42: enumeration checks log1p packages it can take).
    doc = json.loads((ROOT / "sample_packages" / "event-graph-50.json").read_text("utf-8"))
    doc["objective"] = {"saturation": "log1p"}
    path = write_json(tmp_path, "log1p.json", doc)
    rc, out, err = run_cli("audit", str(path), "--budgets", "125", "--quiet", "--json")
    assert rc == 1, err
    rep = json.loads(out)
    assert (rep["n_tasks"], rep["n_skipped"], rep["n_agree"], rep["n_unproven"]) == (1, 1, 0, 0)
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert (
        "`audit` verdict of FAIL or NOTHING CHECKED (nothing cross-checked: every check "
        "stopped at its limit or was skipped" in readme
    )


# --------------------------------------------------------------------------- 4: given twice

P = str(UPDATE_CHAIN)

#: (command line, the option named in the refusal): every single-value option of every
#: command, given twice.
TWICE = [
    (["solve", P, "--budget", "6", "--budget", "7"], "--budget"),
    (["solve", P, "--solver", "enum", "--solver", "milp"], "--solver"),
    (["solve", P, "--pool", "full", "--pool", "generic"], "--pool"),
    (["solve", P, "--node-limit", "5", "--node-limit", "9"], "--node-limit"),
    (["solve", P, "--time-limit", "5", "--time-limit", "9"], "--time-limit"),
    (["score", P, "--budget", "6", "--budget", "7", "--writer", "gvt"], "--budget"),
    (["score", P, "--writer", "gvt", "--solver", "enum", "--solver", "bnb"], "--solver"),
    (["score", P, "--writer", "gvt", "--time-limit", "1", "--time-limit", "2"], "--time-limit"),
    (
        ["score", P, "--writer", "gvt", "--writer-timeout", "1", "--writer-timeout", "2"],
        "--writer-timeout",
    ),
    (["score", P, "--external", "a.json", "--external", "b.json"], "--external"),
    (["score", P, "--format", "mem0", "--format", "zep"], "--format"),
    (["score", P, "--cost-rule", "words", "--cost-rule", "chars"], "--cost-rule"),
    (["score", P, "--history", "a.db", "--history", "b.db"], "--history"),
    (["score", P, "--salience-field", "a", "--salience-field", "b"], "--salience-field"),
    (["sweep", P, "--budgets", "2", "--budgets", "4"], "--budgets"),
    (["sweep", P, "--writers", "gvt", "--writers", "density"], "--writers"),
    (["sweep", P, "--stores", "a", "--stores", "b"], "--stores"),
    (["sweep", P, "--ablations", "generic", "--ablations", "no_validity"], "--ablations"),
    (["sweep", P, "-o", "a.csv", "-o", "b.csv"], "-o"),
    (["sweep", P, "-o", "a.csv", "--output", "b.csv"], "--output"),
    (["sweep", P, "--solver", "enum", "--solver", "milp"], "--solver"),
    (["sweep", P, "--time-limit", "1", "--time-limit", "2"], "--time-limit"),
    (["sweep", P, "--total-time-limit", "1", "--total-time-limit", "2"], "--total-time-limit"),
    (["sweep", "--family", "update_chain", "--seeds", "1", "--seeds", "2"], "--seeds"),
    (["sweep", P, "--out", "a", "--out", "b"], "--out"),
    (["sweep", P, "--workers", "1", "--workers", "2"], "--workers"),
    (["sweep", P, "--scheduler", "a", "--scheduler", "b"], "--scheduler"),
    (["sweep", P, "--max-tasks", "1", "--max-tasks", "2"], "--max-tasks"),
    (["sweep", P, "--writer-timeout", "1", "--writer-timeout", "2"], "--writer-timeout"),
    (["audit", P, "--budgets", "2", "--budgets", "4"], "--budgets"),
    (["audit", P, "--pools", "full", "--pools", "generic"], "--pools"),
    (["audit", P, "--time-limit", "1", "--time-limit", "2"], "--time-limit"),
    (["audit", "--family", "update_chain", "--seeds", "1", "--seeds", "2"], "--seeds"),
    (["audit", P, "--out", "a", "--out", "b"], "--out"),
    (["audit", P, "--workers", "1", "--workers", "2"], "--workers"),
    (["audit", P, "--scheduler", "a", "--scheduler", "b"], "--scheduler"),
    (["audit", P, "--max-tasks", "1", "--max-tasks", "2"], "--max-tasks"),
    (["generate", "update_chain", "--seed", "1", "--seed", "2"], "--seed"),
    (["generate", "update_chain", "-o", "a.json", "-o", "b.json"], "-o"),
    (["import", "locomo", "x.json", "-o", "a.json", "--output", "b.json"], "--output"),
    (["import", "locomo", "x.json", "--instance", "a", "--instance", "b"], "--instance"),
    (["import", "mem0", "x.json", "--cost-rule", "words", "--cost-rule", "chars"], "--cost-rule"),
    (["import", "mem0", "x.json", "--package", "a.json", "--package", "b.json"], "--package"),
    (["import", "mem0", "x.json", "--history", "a.db", "--history", "b.db"], "--history"),
    (["import", "mem0", "x.json", "--store-id", "a", "--store-id", "b"], "--store-id"),
]


@pytest.mark.parametrize(("argv", "flag"), TWICE, ids=[" ".join(a[:1] + [f]) for a, f in TWICE])
def test_a_single_value_option_given_twice_is_refused(argv, flag):
    rc, out, err = run_cli(*argv)
    assert rc == 2
    assert f"{flag} given twice" in err, err
    assert out == ""


def test_every_single_value_option_is_given_once_only():
    # Structural: an option added later without action="append" is covered as well.
    import argparse

    from memaudit_core import cli

    parser = cli.build_parser()
    subs = cli._subparsers(parser)
    assert {"solve", "score", "sweep", "audit", "generate", "import", "writers"} <= set(subs)
    loose = [
        f"{name} {action.option_strings[0]}"
        for name, sub in subs.items()
        for action in sub._actions
        if action.option_strings and action.nargs is None and type(action) is argparse._StoreAction
    ]
    assert loose == []
    assert {a.dest for a in subs["solve"]._actions if isinstance(a, cli._Once)} == {
        "budget",
        "pool",
        "node_limit",
        "solver",
        "time_limit",
    }


def test_given_twice_names_both_values_and_keeps_the_writer_hint():
    rc, _, err = run_cli("solve", P, "--budget", "6", "--budget", "7")
    assert rc == 2 and "--budget given twice (6 and 7); give it once" in err
    rc, _, err = run_cli("solve", P, "--solver", "enum", "--solver", "milp")
    assert rc == 2 and "--solver given twice ('enum' and 'milp')" in err
    rc, _, err = run_cli("score", P, "--writer", "gvt", "--writer", "density")
    assert rc == 2 and "score one writer or store per call" in err


def test_given_twice_is_the_json_error_object_with_json():
    rc, out, _ = run_cli("sweep", P, "--budgets", "2", "--budgets", "4", "--json")
    assert rc == 2
    error = json.loads(out)["error"]
    assert error["type"] == "UsageError"
    assert "--budgets given twice ('2' and '4')" in error["message"]


def test_repeatable_options_still_repeat():
    """Regression guard: --family and --param are repeatable by design."""
    rc, out, err = run_cli(
        "sweep",
        "--family",
        "update_chain:0",
        "--family",
        "memaudit-small:0",
        "--budgets",
        "4",
        "--writers",
        "gvt",
        "--json",
        "--quiet",
    )
    assert rc == 0, err
    assert [r["source"] for r in json.loads(out)["rows"]] == ["update_chain:0", "memaudit-small:0"]


# --------------------------------------------------------------------------- 5: seeds twice


def test_repeated_seeds_are_noted_like_repeated_budgets():
    rc, out, err = run_cli(
        "sweep",
        "--family",
        "memaudit-small",
        "--seeds",
        "3,3",
        "--budgets",
        "2",
        "--writers",
        "gvt",
        "--json",
        "--quiet",
    )
    assert rc == 0, err
    # QA s44: among the result's notes (it was on stderr only).
    notes = json.loads(out)["notes"]
    assert "1 family seed(s) given more than once: memaudit-small:3 (2 times); each is " in (
        "\n".join(notes)
    )
    assert [r["seed"] for r in json.loads(out)["rows"]] == [3]


def test_repeated_seeds_of_a_family_spec_are_noted():
    # A seeded family (QA s44: update_chain's seeds are all its one package, with that note).
    rc, out, err = run_cli(
        "audit", "--family", "memaudit-small:0-2,1", "--budgets", "2", "--quiet", "--json"
    )
    assert rc == 0, err
    assert (
        "1 family seed(s) given more than once: memaudit-small:1 (2 times); each is audited once"
    ) in json.loads(out)["notes"]


# --------------------------------------------------------------------------- 6: writer timeout


def test_writer_timeout_with_a_reference_writer_is_refused():
    rc, out, err = run_cli("score", P, "--budget", "6", "--writer", "gvt", "--writer-timeout", "5")
    assert rc == 2 and out == ""
    assert "--writer-timeout limits the calls of a blind plugin writer" in err
    assert "(gvt)" in err
    rc, out, err = run_cli(
        "sweep", P, "--budgets", "6", "--writers", "gvt,density", "--writer-timeout", "5"
    )
    assert rc == 2 and out == ""
    assert "--writer-timeout limits the calls of a blind plugin writer" in err
    assert "(gvt, density)" in err


def test_writer_timeout_with_a_blind_writer_is_accepted():
    """Regression guard: the bundled blind writer recency takes the timeout."""
    rc, out, err = run_cli(
        "score", P, "--budget", "6", "--writer", "recency", "--writer-timeout", "30", "--json"
    )
    assert rc == 0, err
    result = json.loads(out)
    assert (result["writer"], result["writer_kind"]) == ("recency", "blind")


# --------------------------------------------------------------------------- 7: --json first


def test_json_before_the_command_says_where_it_goes():
    rc, out, err = run_cli("--json", "solve", "x.json")
    assert rc == 2
    message = json.loads(out)["error"]["message"]
    assert "unrecognized arguments: --json" in message
    assert "goes after the command: memaudit solve x.json --json" in message
    assert "memaudit solve x.json --json" in err


def test_json_alone_before_no_command_says_where_it_goes():
    rc, _, err = run_cli("--json")
    assert rc == 2
    assert "--json go after the command, e.g. memaudit solve PACKAGE --json" in err


# --------------------------------------------------------------------------- 8: incumbent


def test_score_tables_say_incumbent_after_a_limited_solve():
    # event-graph-500 at 1000 needs about 0.15 s of HiGHS: 0.001 s cannot prove it, and the
    # header's "incumbent =" checks that the run was limited.
    rc, out, err = run_cli(
        "score",
        str(SAMPLES / "event-graph-500.json"),
        "--budget",
        "1000",
        "--writer",
        "density",
        "--time-limit",
        "0.001",
    )
    assert rc == 0, err
    lines = out.splitlines()
    assert "incumbent = " in lines[1] and "OPT = " not in lines[1]
    kind_header = lines[lines.index("value by unit kind") + 1].split()
    assert kind_header == ["kind", "bucket", "weight", "store", "incumbent", "lost"]
    assert "lost = incumbent - store" in out
    unit_header = lines[lines.index("units the store missed (by value lost)") + 1]
    assert unit_header.split() == (
        ["unit", "kind", "weight", "store", "cov", "inc", "cov", "lost"]
        + ["covered", "in", "incumbent", "by"]
    )
    assert "in the store / the incumbent" in out
    tables = "\n".join(lines[lines.index("value by unit kind") :])
    assert "optimum" not in tables and "opt cov" not in tables


def test_score_tables_say_optimum_when_proven():
    """Regression guard: a proven optimum keeps its words."""
    rc, out, err = run_cli("score", P, "--budget", "6", "--writer", "density")
    assert rc == 0, err
    lines = out.splitlines()
    kind_header = lines[lines.index("value by unit kind") + 1].split()
    assert kind_header == ["kind", "bucket", "weight", "store", "optimum", "lost"]
    assert "lost = optimum - store" in out and "opt cov" in out


# --------------------------------------------------------------------------- 9: stdin


def _stdin(monkeypatch, path: Path) -> None:
    data = path.read_bytes()

    class In:
        buffer = io.BytesIO(data)

    monkeypatch.setattr(sys, "stdin", In())


def test_stdin_is_named_stdin_everywhere(monkeypatch):
    _stdin(monkeypatch, UPDATE_CHAIN)
    rc, out, err = run_cli("validate", "-", "--json")
    assert rc == 0, err
    assert json.loads(out)["file"] == "<stdin>"
    _stdin(monkeypatch, UPDATE_CHAIN)
    rc, out, err = run_cli("validate", "-")
    assert rc == 0 and out.startswith("<stdin>: valid package 'update_chain'"), err
    _stdin(monkeypatch, UPDATE_CHAIN)
    rc, out, err = run_cli("solve", "-", "--budget", "6")
    assert rc == 0 and out.startswith("package 'update_chain' (<stdin>)"), err
    _stdin(monkeypatch, UPDATE_CHAIN)
    rc, out, err = run_cli("sweep", "-", "--budgets", "4", "--writers", "gvt", "--json", "--quiet")
    assert rc == 0, err
    assert [r["source"] for r in json.loads(out)["rows"]] == ["<stdin>"]
    _stdin(monkeypatch, UPDATE_CHAIN)
    rc, _, err = run_cli("sweep", "-", "-", "--budgets", "4", "--writers", "gvt", "--quiet")
    assert rc == 2 and err.startswith("memaudit sweep: error: <stdin>: stdin holds one package")
    rc, _, err = run_cli("audit", "-", "--budgets", "4", "--quiet")
    assert rc == 2 and "<stdin>: audit reads its packages from files" in err


def test_readme_names_stdin_as_the_output_does():
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert "their output and messages then name it `<stdin>`" in readme


# --------------------------------------------------------------------------- 10: covers


def _mini_doc() -> dict:
    """Four experiences, four units, a fact and a raw span each."""
    return {
        "memaudit": 1,
        "id": "mini",
        "cost_unit": "words",
        "budget": 10,
        "experiences": [{"id": f"e{k}", "time": k, "text": f"turn {k}"} for k in range(1, 5)],
        "units": [{"id": f"u{k}", "kind": "fact", "text": "t", "weight": 1} for k in range(1, 5)],
        "candidates": [
            {
                "id": f"e{k}:{form}",
                "experience": f"e{k}",
                "type": "raw_span" if form == "raw" else "atomic_fact",
                "text": "x",
                "cost": 6 if form == "raw" else 2,
                "coverage": {f"u{k}": 1.0},
            }
            for k in range(1, 5)
            for form in ("raw", "fact")
        ],
    }


def _union_notes(tmp_path: Path, links: dict[str, list[str]]) -> list[str]:
    pkg = ma.parse_package(_mini_doc())
    export = {
        "results": [
            # dia_id links: a unit id the package lacks is refused since QA s47.
            {"id": mid, "memory": f"memory {mid}", "metadata": {"dia_id": units}}
            for mid, units in links.items()
        ]
    }
    store = load_external_store(write_json(tmp_path, "mem0.json", export), "mem0", package=pkg)
    return list(ma.union_report(ma.with_store(pkg, store), store.id, 10).notes)


def test_one_unannotated_memory_covers_nothing(tmp_path):
    notes = " ".join(_union_notes(tmp_path, {"m1": ["u1"], "m2": ["u99"]}))
    assert "1 of them (m2) covers nothing until annotated" in notes


def test_two_unannotated_memories_cover_nothing(tmp_path):
    """Regression guard: the plural keeps "cover"."""
    notes = " ".join(_union_notes(tmp_path, {"m1": ["u1"], "m2": ["u98"], "m3": ["u99"]}))
    assert "2 of them (m2, m3) cover nothing until annotated" in notes


# --------------------------------------------------------------------------- 11: known writers


def test_budget_curve_lists_every_writer_it_accepts():
    pkg = ma.load_package(UPDATE_CHAIN)
    with pytest.raises(UnknownNameError) as info:
        budget_curve(pkg, [4], ["writer:nope"])
    message = str(info.value)
    for name in ["gvt", "density", "recency", "compact_validity", "estimated_gvt"]:
        assert name in message, name
    # The bundled blind writers do run there.
    curve = budget_curve(pkg, [4], ["writer:recency"], ablations=())
    assert [m.key for m in curve.methods] == ["writer:recency"]


# --------------------------------------------------------------------------- 12: got a string


def test_a_package_that_is_not_an_object_names_the_json_type():
    with pytest.raises(PackageError) as info:
        ma.parse_package("not a dict")
    (line,) = info.value.lines()
    assert "a package must be a JSON object, not a JSON string (got 'not a dict')" in line
    assert "(got 'string')" not in line
    with pytest.raises(PackageError) as info:
        ma.parse_package([1, 2])
    (line,) = info.value.lines()
    assert line.endswith("$: a package must be a JSON object, not a JSON array [rule: type]")
