"""QA s44: the resume journal of ``sweep --out`` / ``audit --out``.

1. The incomplete note counted every journal entry ("63 of 10 tasks done"), not the plan's.
2. An incomplete run left an earlier complete run's report, rows and summary in place,
   unmarked, beside a journal of other tasks.
3. Ctrl-C said only "memaudit: interrupted": not that the finished tasks were saved.
"""

from __future__ import annotations

import csv
import json

from cli_utils import run_cli

import memaudit_core.suites as suites

SWEEP_OUTPUTS = ("report.md", "rows.csv", "rows.parquet", "summary.csv", "summary.parquet")
AUDIT_OUTPUTS = ("report.md", "instances.csv", "instances.parquet", "sources.csv")


def _journal_tasks(out) -> list[str]:
    lines = (out / "journal.jsonl").read_text(encoding="utf-8").splitlines()
    return [rec["key"] for rec in map(json.loads, lines) if rec.get("t") == "task"]


def test_the_incomplete_note_counts_only_the_tasks_of_this_run(tmp_path):
    out = str(tmp_path / "w")
    fam = "memaudit-small:0-3"
    code, _, _ = run_cli(
        "sweep",
        "--family",
        fam,
        "--budgets",
        "2,4",
        "--writers",
        "gvt,density",
        "--out",
        out,
        "--quiet",
        "--no-figures",
    )
    assert code == 0
    code, stdout, stderr = run_cli(
        "sweep",
        "--family",
        fam,
        "--budgets",
        "8",
        "--writers",
        "density",
        "--out",
        out,
        "--quiet",
        "--max-tasks",
        "1",
    )
    assert code == 3  # tasks left (s52: exit 0)
    # 4 packages x 1 budget x 1 writer = 4 tasks, 1 of them run now; the journal holds the
    # 16 tasks of the first run besides (4 x 2 x 2), none of this plan's.
    assert len(_journal_tasks(tmp_path / "w")) == 17
    assert "incomplete: 1 of 4 tasks done" in stdout + stderr


def test_an_incomplete_sweep_removes_the_outputs_of_an_earlier_run(tmp_path):
    out = tmp_path / "st"
    fam = "memaudit-small:0-2"
    code, _, _ = run_cli(
        "sweep",
        "--family",
        fam,
        "--budgets",
        "2",
        "--writers",
        "gvt",
        "--out",
        str(out),
        "--no-figures",
        "--quiet",
    )
    assert code == 0 and all((out / name).is_file() for name in SWEEP_OUTPUTS)
    argv = (
        "sweep",
        "--family",
        fam,
        "--budgets",
        "2,4",
        "--writers",
        "gvt,density",
        "--out",
        str(out),
        "--no-figures",
        "--quiet",
    )
    code, stdout, stderr = run_cli(*argv, "--max-tasks", "2")
    assert code == 3  # tasks left (s52: exit 0)
    # The old report described 3 of these 12 tasks: it is gone, and the note says why and when
    # the outputs come.
    assert [name for name in SWEEP_OUTPUTS if (out / name).exists()] == []
    assert (out / "journal.jsonl").is_file()
    text = stdout + stderr
    assert "incomplete: 5 of 12 tasks done" in text
    assert "written when every task is done" in text
    assert "earlier run's report and tables were removed" in text
    # The run completed: every output back, with all 3 x 2 x 2 rows.
    code, _, _ = run_cli(*argv)
    assert code == 0 and all((out / name).is_file() for name in SWEEP_OUTPUTS)
    with (out / "rows.csv").open(newline="", encoding="utf-8") as fh:
        assert len(list(csv.DictReader(fh))) == 3 * 2 * 2


def test_an_incomplete_audit_removes_the_outputs_of_an_earlier_run(tmp_path):
    out = tmp_path / "au"
    fam = "memaudit-small:0-1"
    code, _, _ = run_cli(
        "audit", "--family", fam, "--budgets", "2", "--out", str(out), "--no-figures", "--quiet"
    )
    assert code == 0 and all((out / name).is_file() for name in AUDIT_OUTPUTS)
    code, stdout, stderr = run_cli(
        "audit",
        "--family",
        fam,
        "--budgets",
        "2,4",
        "--out",
        str(out),
        "--no-figures",
        "--quiet",
        "--max-tasks",
        "1",
    )
    assert [name for name in AUDIT_OUTPUTS if (out / name).exists()] == []
    assert "written when every task is done" in stdout + stderr


def test_ctrl_c_says_how_many_tasks_the_journal_kept(tmp_path, monkeypatch):
    real = suites._sweep_worker
    ran: list[int] = []

    def interrupted_on_the_third_chunk(jobs, **kwargs):
        if len(ran) == 2:
            raise KeyboardInterrupt
        ran.append(sum(len(job[3]) for job in jobs))
        return real(jobs, **kwargs)

    monkeypatch.setattr(suites, "_sweep_worker", interrupted_on_the_third_chunk)
    out = tmp_path / "w"
    code, stdout, stderr = run_cli(
        "sweep",
        "--family",
        "memaudit-small:0-3",
        "--budgets",
        "2,4",
        "--writers",
        "gvt",
        "--out",
        str(out),
        "--quiet",
    )
    assert code == 130
    saved = len(_journal_tasks(out))
    assert saved == sum(ran) and 0 < saved < 8
    # 4 packages x 2 budgets x 1 writer = 8 tasks in the plan.
    assert (
        f"memaudit: interrupted; {saved} of 8 tasks are saved in {out / 'journal.jsonl'}: run "
        "the same command again to resume"
    ) in stderr
    # --json: the same message in the error object.
    monkeypatch.setattr(
        suites, "_sweep_worker", lambda jobs, **kw: (_ for _ in ()).throw(KeyboardInterrupt())
    )
    code, stdout, _ = run_cli(
        "sweep",
        "--family",
        "memaudit-small:0-3",
        "--budgets",
        "2,4",
        "--writers",
        "gvt",
        "--out",
        str(out),
        "--quiet",
        "--json",
    )
    assert code == 130
    assert json.loads(stdout)["error"]["message"] == (
        f"interrupted; {saved} of 8 tasks are saved in {out / 'journal.jsonl'}: run the same "
        "command again to resume"
    )
