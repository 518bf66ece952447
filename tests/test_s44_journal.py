"""QA s44: the journal of a sweep or audit ``--out`` folder.

Two runs into one folder both ran, the journal holding each task twice (the later line won);
a journal line edited into numbers that contradict each other was reused, and ``show`` then
refused the sweep file it gave.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading

from cli_utils import run_cli

from memaudit_core.suites import sweep_suite

FAMILY = ["--family", "random_coverage:0-3", "--param", "n_groups=20"]
SWEEP = ["sweep", *FAMILY, "--budgets", "10,20,40", "--writers", "gvt,density"]


def _task_lines(journal):
    lines = journal.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if '"t": "task"' in line]


def test_a_second_run_into_a_folder_in_use_is_refused_until_the_first_ends(tmp_path):
    out = tmp_path / "cc"
    started, release = threading.Event(), threading.Event()
    first: list = []

    def pause(done, total):  # the first run, holding the folder, waits for the second
        started.set()
        release.wait(120)

    def run_first():
        try:
            first.append(
                sweep_suite(
                    families=["random_coverage:0-3"],
                    params={"n_groups": "20"},
                    budgets=[10, 20, 40],
                    writers=["gvt", "density"],
                    out=out,
                    figures=False,
                    progress=pause,
                )
            )
        except BaseException as exc:  # shown by the assert below
            first.append(exc)

    thread = threading.Thread(target=run_first)
    thread.start()
    try:
        assert started.wait(120)
        code, _, err = run_cli(*SWEEP, "--out", str(out), "--quiet")
    finally:
        release.set()
        thread.join(120)
    assert code == 2
    assert (
        f"{out} is in use by another memaudit run (pid {os.getpid()}); wait for it or use "
        "another --out" in err
    )
    assert first[0].complete, first[0]
    # 4 packages x 3 budgets x 2 writers, each once.
    tasks = _task_lines(out / "journal.jsonl")
    assert len(tasks) == 24
    assert len({t["key"] for t in tasks}) == 24

    # Released when a run ends in an exception (Ctrl-C in the library: KeyboardInterrupt).
    def interrupt(done, total):
        raise KeyboardInterrupt

    try:
        sweep_suite(
            families=["random_coverage:0-3"],
            params={"n_groups": "20"},
            budgets=[10, 20, 40, 50],
            writers=["gvt", "density"],
            out=out,
            figures=False,
            progress=interrupt,
        )
    except KeyboardInterrupt:
        pass
    code, _, err = run_cli(*SWEEP, "--out", str(out), "--quiet", "--workers", "2")
    assert (code, err) == (0, "")


def test_a_folder_is_free_again_once_its_holder_is_killed(tmp_path):
    out = tmp_path / "k"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from memaudit_core.suites import out_lock\n"
            "with out_lock(sys.argv[1]):\n"
            "    print('held', flush=True)\n"
            "    time.sleep(600)\n",
            str(out),
        ],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    try:
        assert holder.stdout.readline() == "held\n"
        code, _, err = run_cli(*SWEEP, "--out", str(out), "--quiet")
        assert code == 2
        assert f"{out} is in use by another memaudit run (pid {holder.pid})" in err
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(60)
        holder.stdout.close()
    code, _, err = run_cli(*SWEEP, "--out", str(out), "--quiet")
    assert (code, err) == (0, "")
    assert len(_task_lines(out / "journal.jsonl")) == 24


def test_a_journal_line_whose_numbers_disagree_is_run_again(tmp_path):
    out = tmp_path / "w"
    argv = ["sweep", "--family", "memaudit-small:0-9", "--budgets", "2,4", "--writers", "gvt"]
    assert run_cli(*argv, "--out", str(out), "--quiet")[0] == 0
    journal = out / "journal.jsonl"
    lines = journal.read_text(encoding="utf-8").splitlines()
    at = next(
        i
        for i, line in enumerate(lines)
        if '"t": "task"' in line and json.loads(line)["result"]["value"] > 0
    )
    record = json.loads(lines[at])
    original = dict(record["result"])
    record["result"]["value"] /= 2
    record["result"]["ratio"] /= 2
    lines[at] = json.dumps(record)
    journal.write_text("\n".join(lines) + "\n", encoding="utf-8")

    code, text, _ = run_cli(*argv, "--out", str(out), "--json")
    assert code == 0
    again = json.loads(text)
    assert (again["executed"], again["reused"]) == (1, 19)
    assert any(n.startswith("1 torn or unreadable journal line(s) dropped") for n in again["notes"])
    content_hash, budget, _ = record["key"].split("|")
    (row,) = [
        r
        for r in again["rows"]
        if r["content_hash"] == content_hash and r["budget"] == float(budget)
    ]
    assert row["value"] == original["value"]
    assert row["ratio"] == original["value"] / original["opt"]
    saved = tmp_path / "ed.json"
    saved.write_text(text, encoding="utf-8")
    assert run_cli("show", str(saved))[0] == 0


def test_an_audit_journal_line_whose_numbers_disagree_is_run_again(tmp_path):
    out = tmp_path / "a"
    argv = ["audit", "--family", "memaudit-small:0-2", "--budgets", "2,4"]
    assert run_cli(*argv, "--out", str(out), "--quiet")[0] == 0
    journal = out / "journal.jsonl"
    lines = journal.read_text(encoding="utf-8").splitlines()
    at = next(i for i, line in enumerate(lines) if '"outcome": "agree"' in line)
    record = json.loads(lines[at])
    record["result"]["abs_diff"] = 5.0  # beside equal values: no difference at all
    lines[at] = json.dumps(record)
    journal.write_text("\n".join(lines) + "\n", encoding="utf-8")

    code, text, _ = run_cli(*argv, "--out", str(out), "--json")
    assert code == 0
    again = json.loads(text)
    assert again["executed"] == 1
    assert any(n.startswith("1 torn or unreadable journal line(s) dropped") for n in again["notes"])
    assert all(r["abs_diff"] != 5.0 for r in again["rows"])
    saved = tmp_path / "audit.json"
    saved.write_text(text, encoding="utf-8")
    assert run_cli("show", str(saved))[0] == 0
