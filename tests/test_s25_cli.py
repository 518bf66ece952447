"""CLI inputs an auditor broke (CLI QA, twenty-fifth session): each was an internal error, a
dishonest ``show`` or a silently overwritten input before."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_utils import run_cli as _cli

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "sample_packages"


def test_an_unparsable_scheduler_address_is_a_user_error():
    rc, _, err = _cli("sweep", str(SAMPLES / "update_chain.json"), "--scheduler", "bogus")
    assert rc == 2
    assert "Dask scheduler at 'bogus'" in err and "internal error" not in err


@pytest.mark.parametrize("timeout", ["inf", "1e308", "86401"])
def test_a_writer_timeout_beyond_a_day_is_refused(timeout):
    rc, _, err = _cli(
        "score",
        str(SAMPLES / "update_chain.json"),
        "--writer",
        "density",
        "--writer-module",
        "nonexistent_module_s25:w",
        "--writer-timeout",
        timeout,
    )
    assert rc == 2
    assert (
        f"--writer-timeout: must be a finite number of seconds > 0, at most 86400, got '{timeout}'"
        in err
    )


@pytest.fixture()
def limited_solve(tmp_path) -> dict:
    """A node-limited bnb run on event-graph-50, saved with --json: not certified."""
    rc, out, _ = _cli(
        "solve",
        str(SAMPLES / "event-graph-50.json"),
        "--solver",
        "bnb",
        "--node-limit",
        "0",
        "--json",
    )
    assert rc == 0
    doc = json.loads(out)
    assert doc["status"] == "limit" and doc["certificate"]["certified"] is False
    return doc


@pytest.mark.parametrize(
    "edit,path,rule",
    [
        ({"certified": True}, "$.certificate.certified", "inconsistent"),
        ({"value": float("nan")}, "$.value", "allowed-value"),
        ({"value": -1.0}, "$.value", "allowed-value"),
        ({"result_kind": []}, "$.result_kind", "known-kind"),
        ({"result_kind": {}}, "$.result_kind", "known-kind"),
    ],
)
def test_show_refuses_a_result_whose_numbers_contradict_it(
    tmp_path, limited_solve, edit, path, rule
):
    """An edited limited run was shown as "OPT ... proven optimal" (status limit, gap 4.9%)."""
    doc = limited_solve
    for key, value in edit.items():
        if key == "certified":
            doc["certificate"]["certified"] = value
        else:
            doc[key] = value
    f = tmp_path / "r.json"
    f.write_text(json.dumps(doc))
    rc, out, err = _cli("show", str(f))
    assert rc == 2
    assert f"{path}:" in err and f"[rule: {rule}]" in err
    assert "OPT" not in out


def test_the_unedited_limited_run_is_shown_as_an_incumbent(tmp_path, limited_solve):
    f = tmp_path / "r.json"
    f.write_text(json.dumps(limited_solve))
    rc, out, _ = _cli("show", str(f))
    # QA s42 (defect 2): a limited run keeps the better of its engine's store (58.7 here) and
    # the reference writers' (gvt's 61.4), and says where it came from.
    assert rc == 0 and "incumbent: F = 61.4" in out and "incumbent from the gvt writer" in out


def test_an_output_file_that_is_an_input_is_refused(tmp_path):
    package = tmp_path / "b.json"
    shutil.copy(SAMPLES / "update_chain.json", package)
    before = package.read_bytes()
    rc, _, err = _cli(
        "sweep", str(package), "--writers", "gvt", "--budgets", "2", "-o", str(package)
    )
    assert rc == 2 and "is the input file" in err
    assert package.read_bytes() == before
    data = tmp_path / "locomo.json"
    shutil.copy(REPO / "tests" / "fixtures" / "importers" / "locomo_small.json", data)
    before = data.read_bytes()
    rc, _, err = _cli("import", "locomo", str(data), "--instance", "conv-a", "-o", str(data))
    assert rc == 2 and "is the input file" in err
    assert data.read_bytes() == before


def test_a_closed_stdin_is_a_user_error():
    import os
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "memaudit_core", "solve", "-"],
        capture_output=True,
        text=True,
        preexec_fn=lambda: os.close(0),
        cwd=REPO,
        timeout=120,
    )
    assert done.returncode == 2
    assert "stdin is closed" in done.stderr and "internal error" not in done.stderr


def _journal_lines(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "journal.jsonl").read_text().splitlines()]


def _write_journal(out: Path, lines: list[dict]) -> None:
    (out / "journal.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))


def test_a_journal_task_of_the_wrong_type_is_run_again(tmp_path):
    """A ratio edited to "x" ended the resumed sweep in a ValueError (an internal error)."""
    package, out = str(SAMPLES / "update_chain.json"), tmp_path / "out"
    argv = ("sweep", package, "--writers", "gvt,density", "--budgets", "2,6", "--out", str(out))
    rc, first, _ = _cli(*argv)
    assert rc == 0
    lines = _journal_lines(out)
    task = next(x for x in lines if x.get("t") == "task" and x["key"].endswith("|density"))
    good_ratio = task["result"]["ratio"]
    task["result"]["ratio"] = "x"
    _write_journal(out, lines)
    rc, again, err = _cli(*argv)
    assert rc == 0 and "internal error" not in err
    assert "1 torn or unreadable journal line(s) dropped" in again
    rerun = next(x for x in _journal_lines(out)[len(lines) :] if x.get("key") == task["key"])
    assert rerun["result"]["ratio"] == good_ratio


def test_a_journal_of_another_version_is_refused(tmp_path):
    package, out = str(SAMPLES / "update_chain.json"), tmp_path / "out"
    argv = ("sweep", package, "--writers", "gvt", "--budgets", "2", "--out", str(out))
    assert _cli(*argv)[0] == 0
    lines = _journal_lines(out)
    lines[0]["version"] = 99
    _write_journal(out, lines)
    rc, _, err = _cli(*argv)
    assert rc == 2 and "journal version 99" in err
    assert _journal_lines(out) == lines  # nothing appended to it


def test_an_unproven_optimum_store_is_not_called_the_optimum():
    rc, out, _ = _cli(
        "score",
        str(SAMPLES / "event-graph-500.json"),
        "--writer",
        "gvt",
        "--solver",
        "bnb",
        "--time-limit",
        "0.01",
    )
    assert rc == 0
    assert "incumbent store: " in out and "\noptimum:" not in out
    rc, out, _ = _cli(
        "score", str(SAMPLES / "update_chain.json"), "--writer", "gvt", "--budget", "6"
    )
    assert rc == 0 and "\noptimum:  update_1_tombstone" in out


def test_the_backend_names_no_more_processes_than_budgets():
    rc, out, _ = _cli(
        "sweep",
        str(SAMPLES / "update_chain.json"),
        "--budgets",
        "2,6",
        "--writers",
        "gvt",
        "--workers",
        "1000",
        "--json",
    )
    assert rc == 0
    assert json.loads(out)["backend"] == "up to 2 process(es), budgets in parallel"


@pytest.mark.parametrize("suite", [False, True])
def test_a_store_missing_from_some_packages_is_said(tmp_path, suite):
    with_store = json.loads((SAMPLES / "update_chain.json").read_text())
    with_store["id"] = "with-s1"
    with_store["stores"] = [{"id": "s1", "select": [with_store["candidates"][0]["id"]]}]
    a = tmp_path / "a.json"
    a.write_text(json.dumps(with_store))
    argv = ["sweep", str(a), str(SAMPLES / "update_chain.json"), "--stores", "s1"]
    argv += ["--budgets", "2,6", "--json"]
    if suite:
        argv += ["--out", str(tmp_path / "out")]
    rc, out, _ = _cli(*argv)
    assert rc == 0
    doc = json.loads(out)
    # A suite names a file by its path as given (QA s39 round 2), a plain sweep by its id.
    lacking = str(SAMPLES / "update_chain.json") if suite else "update_chain"
    assert any(
        f"store 's1' is in 1 of 2 swept packages (not in {lacking})" in n for n in doc["notes"]
    )
    assert len([r for r in doc["rows"] if r["method"] == "s1"]) == 2  # one package x 2 budgets


def test_audit_refuses_seeds_given_twice_as_sweep_does():
    # QA s41: --seeds goes to each --family without its own; here there is none, so it
    # would apply to nothing and is refused (no longer called "seeds given twice").
    rc, _, err = _cli("audit", "--family", "memaudit-small:0-1", "--seeds", "3")
    assert rc == 2 and "memaudit audit: error: --seeds 3 applies to no family" in err
    rc, _, err = _cli("audit", str(SAMPLES / "update_chain.json"), "--seeds", "3")
    assert rc == 2 and "memaudit audit: error: --seeds and --param apply to --family only" in err


@pytest.mark.parametrize(
    "argv,named",
    [
        (["memaudit-small", "--list"], "FAMILY"),
        (["--list", "--seed", "4", "--param", "x=1"], "--seed, --param"),
    ],
)
def test_generate_list_refuses_what_it_would_ignore(argv, named):
    rc, out, err = _cli("generate", *argv)
    assert rc == 2 and f"takes no {named}" in err and out == ""


@pytest.mark.parametrize(
    "argv", [["solve", "--budget"], ["sweep", "--writers", "gvt", "--budgets"]]
)
def test_a_subnormal_budget_is_refused_as_in_a_package(argv):
    rc, _, err = _cli(argv[0], str(SAMPLES / "update_chain.json"), *argv[1:], "1e-320")
    assert rc == 2 and "at least 2.23e-308" in err


def test_control_characters_in_ids_never_reach_the_terminal_raw(tmp_path):
    doc = json.loads((SAMPLES / "update_chain.json").read_text())
    old_id, new_id = "update_1_compound_update", "upd\nFAKE LINE\x1b[31m"
    (candidate,) = [c for c in doc["candidates"] if c["id"] == old_id]
    candidate["id"] = new_id
    for store in doc.get("stores", []):
        store["select"] = [new_id if c == old_id else c for c in store.get("select", [])]
    f = tmp_path / "ansi.json"
    f.write_text(json.dumps(doc))
    rc, out, _ = _cli("solve", str(f), "--budget", "13")
    assert rc == 0
    assert "\x1b" not in out and "\nFAKE LINE" not in out
    assert repr(new_id) in out  # the optimum at 13 keeps every update: this id is listed


@pytest.mark.parametrize(
    "make,rule",
    [
        (lambda d: d / "missing.json", "file-exists"),
        # A folder exists: it is not a result file (QA s48: it was named rule file-exists),
        # file-type as to the package loader (QA s51 #7: it was result-json).
        (lambda d: d, "file-type"),
        (lambda d: (d / "bin.json").write_bytes(b"\xff\xfe\x00x") and d / "bin.json", "utf-8"),
    ],
)
def test_show_names_the_file_and_rule_of_a_result_it_cannot_read(tmp_path, make, rule):
    target = make(tmp_path)
    rc, out, _ = _cli("show", str(target), "--json")
    assert rc == 2
    error = json.loads(out)["error"]
    assert error["file"] == str(target)
    assert [p["rule"] for p in error["problems"]] == [rule]


def test_a_budget_grid_beyond_ten_thousand_is_refused(tmp_path):
    doc = json.loads((SAMPLES / "update_chain.json").read_text())
    doc["budgets"] = list(range(1, 10_002))
    f = tmp_path / "many.json"
    f.write_text(json.dumps(doc))
    rc, _, err = _cli("validate", str(f))
    assert rc == 2 and "$.budgets: 10,001 budgets" in err and "[rule: max-budgets]" in err
    doc["budgets"] = list(range(1, 10_001))
    f.write_text(json.dumps(doc))
    assert _cli("validate", str(f))[0] == 0


@pytest.mark.parametrize(
    "argv,message",
    [
        (
            ["sweep", "--writers", "gvt,,density", "--budgets", "2"],
            "--writers: empty item in 'gvt,,density'",
        ),
        (
            ["sweep", "--writers", "gvt", "--ablations", "generic,", "--budgets", "2"],
            "--ablations: empty item",
        ),
        (["score", "--store", "raw-logger", "--salience-field", ""], "--salience-field needs"),
    ],
)
def test_empty_names_are_refused_not_dropped(argv, message):
    package = "travel-assistant.json" if argv[0] == "score" else "update_chain.json"
    rc, _, err = _cli(argv[0], str(SAMPLES / package), *argv[1:])
    assert rc == 2 and message in err
