"""QA session 19 (helper B): the CLI as a process — signals, orphans, output paths, stdin.

Found here (each test below failed before the fix it names):

- Ctrl-C during an in-process HiGHS solve did nothing until HiGHS returned (146 s on a
  100-group random-coverage package at budget 100): Python raises KeyboardInterrupt only
  between bytecodes of the main thread. The CLI now ends such a run from a watcher thread.
- ``kill`` (SIGTERM) or ``kill -9`` of ``memaudit sweep --workers 2`` left its forkserver and
  both workers alive for good, holding the command's stdout and stderr, so a caller waiting
  for the end of the output (``$(...)``, ``| tee``, ``communicate()``) hung forever. SIGTERM
  now takes the Ctrl-C path (exit 143, "memaudit: terminated"); pool workers watch their
  parent and end with it; a blind writer's worker (its own session) does the same.
- ``sweep -o``, ``generate -o`` and ``import -o`` said a path could not be written only after
  all the work; an existing read-only ``--out`` folder, an unwritable journal or report.md
  and a file name too long for the file system ended in "internal error" (exit 1).
- ``-`` as the package (stdin) was "no such file or folder".

Only Linux process tables are read (``/proc``); the signal tests are skipped elsewhere.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memaudit_core.cli import main
from memaudit_core.errors import MemAuditError, PackageError
from memaudit_core.package import load_package

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_packages"
LINUX = sys.platform.startswith("linux") and Path("/proc/self/stat").exists()
needs_proc = pytest.mark.skipif(not LINUX, reason="reads the Linux process table")


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env.update(extra)
    return env


def _cli(*argv: str, **kw) -> subprocess.Popen:
    """The CLI in a new session (so that its whole process tree can be found), with Ctrl-C
    handled as a terminal's (a background job would ignore it)."""
    return subprocess.Popen(
        [sys.executable, "-m", "memaudit_core", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        env=kw.pop("env", None) or _env(),
        **kw,
    )


def _stat(pid: int) -> list[str] | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return raw[raw.rindex(")") + 2 :].split()  # fields from the state on


def _alive(pid: int) -> bool:
    fields = _stat(pid)
    return fields is not None and fields[0] not in ("Z", "X")


def _session(sid: int) -> list[int]:
    """Live processes of session ``sid`` (zombies left for init to reap do not count)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat(int(entry))
            if fields is not None and fields[3] == str(sid) and fields[0] not in ("Z", "X"):
                found.append(int(entry))
    return found


def _wait_until(pred, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.1)
    return pred()


def _kill_session(sid: int) -> None:
    for pid in _session(sid):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


@pytest.fixture(scope="module")
def rc100(tmp_path_factory) -> Path:
    """A package whose MILP at budget 100 takes HiGHS minutes (and tens of seconds at 90)."""
    path = tmp_path_factory.mktemp("rc") / "rc100.json"
    assert (
        main(
            [
                "generate",
                "random_coverage",
                "--seed",
                "0",
                "--param",
                "n_groups=100",
                "-o",
                str(path),
            ]
        )
        == 0
    )
    return path


def _until_running(proc: subprocess.Popen, n_procs: int, timeout: float = 60) -> None:
    """Until the command's session holds ``n_procs`` processes (imports and pool start-up)."""
    ok = _wait_until(lambda: proc.poll() is not None or len(_session(proc.pid)) >= n_procs, timeout)
    assert ok and proc.poll() is None, proc.communicate()


# --------------------------------------------------------------------------- signals


@needs_proc
@pytest.mark.parametrize(
    ("sig", "code", "word"),
    [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")],
)
def test_a_signal_during_an_in_process_milp_solve_ends_the_command(rc100, sig, code, word):
    proc = _cli("solve", str(rc100), "--budget", "100", "--solver", "milp", "--json")
    try:
        time.sleep(4)  # imports, model build, HiGHS running in the main thread
        assert proc.poll() is None, proc.communicate()
        t0 = time.monotonic()
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
        took = time.monotonic() - t0
    finally:
        _kill_session(proc.pid)
    assert proc.returncode == code, err
    assert took < 20, f"{took:.1f} s after the signal (HiGHS alone takes minutes)"
    assert err.splitlines()[-1] == f"memaudit: {word}" and "Traceback" not in err
    assert json.loads(out)["error"] == {"type": "Interrupted", "message": word}
    assert _wait_until(lambda: not _session(proc.pid), 10)


@needs_proc
def test_sigterm_on_a_parallel_sweep_ends_its_workers_and_releases_its_output(rc100):
    proc = _cli(
        "sweep", str(rc100), "--budgets", "90,95,100,105", "--writers", "gvt", "--workers", "2"
    )
    try:
        _until_running(proc, 5)  # the CLI, the resource tracker, the forkserver, two workers
        time.sleep(1)
        proc.send_signal(signal.SIGTERM)
        # communicate() waits for EOF on stdout / stderr, which every leftover process holds.
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 143
        assert err.splitlines()[-1] == "memaudit: terminated" and "Traceback" not in err
        assert _wait_until(lambda: not _session(proc.pid), 10), _session(proc.pid)
    finally:
        _kill_session(proc.pid)


@needs_proc
def test_pool_workers_end_when_the_command_is_killed_outright(rc100):
    """``kill -9`` of the command alone: nothing can clean up but the workers themselves."""
    proc = _cli(
        "sweep", str(rc100), "--budgets", "90,95,100,105", "--writers", "gvt", "--workers", "2"
    )
    try:
        _until_running(proc, 5)
        time.sleep(1)
        proc.kill()
        proc.communicate(timeout=60)  # returns once the workers let go of the pipes
        assert _wait_until(lambda: not _session(proc.pid), 15), _session(proc.pid)
    finally:
        _kill_session(proc.pid)


SLOW_WRITER = '''
import os, time

def slow(view):
    """Blind: notes its pid in its working folder, then takes ten minutes."""
    with open("pid", "w") as fh:
        fh.write(str(os.getpid()))
    time.sleep(600)
    return []
'''


def _slow_writer_run(tmp_path: Path) -> tuple[subprocess.Popen, Path]:
    (tmp_path / "slow_s19b_writer.py").write_text(SLOW_WRITER)
    scratch_root = tmp_path / "tmp"
    scratch_root.mkdir()
    proc = _cli(
        "score",
        str(SAMPLES / "update_chain.json"),
        "--writer",
        "slow_s19b_writer:slow",
        cwd=tmp_path,
        env=_env(TMPDIR=str(scratch_root)),
    )
    return proc, scratch_root


def _writer_pid(scratch_root: Path) -> int:
    found: list[int] = []

    def look() -> bool:
        found[:] = [
            int(p.read_text()) for p in scratch_root.glob("memaudit-writer-*/pid") if p.read_text()
        ]
        return bool(found)

    assert _wait_until(look, 60), "the writer never started"
    return found[0]


@needs_proc
def test_ctrl_c_during_a_blind_writer_ends_its_worker_at_once(tmp_path):
    proc, scratch = _slow_writer_run(tmp_path)
    try:
        pid = _writer_pid(scratch)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        took = time.monotonic() - t0
        assert proc.returncode == 130 and err.splitlines()[-1] == "memaudit: interrupted"
        assert took < 4, f"{took:.1f} s (the worker was waited for 5 s)"
        assert _wait_until(lambda: not _alive(pid), 5)
    finally:
        _kill_session(proc.pid)


@needs_proc
def test_a_blind_writers_worker_ends_when_the_command_is_killed_outright(tmp_path):
    proc, scratch = _slow_writer_run(tmp_path)
    pid = None
    try:
        pid = _writer_pid(scratch)
        proc.kill()
        proc.communicate(timeout=30)
        # It leads its own session; it used to sleep on for the writer's ten minutes.
        assert _wait_until(lambda: not _alive(pid), 10)
    finally:
        _kill_session(proc.pid)
        if pid is not None and _alive(pid):
            os.kill(pid, signal.SIGKILL)


def test_the_cli_restores_the_signal_handlers_it_installed():
    before = signal.getsignal(signal.SIGTERM), signal.set_wakeup_fd(-1)
    signal.set_wakeup_fd(before[1])
    assert main(["schema"]) == 0
    assert signal.getsignal(signal.SIGTERM) is before[0]
    assert signal.set_wakeup_fd(before[1]) == before[1]


def test_a_sigterm_raised_inside_a_command_is_reported_as_terminated(monkeypatch, capsys):
    from memaudit_core import cli

    def terminated(args):
        raise cli.Terminated(signal.SIGTERM)

    monkeypatch.setattr(cli, "cmd_schema", terminated)  # build_parser binds it per call
    assert main(["schema", "--json"]) == 143
    captured = capsys.readouterr()
    assert captured.err.splitlines()[-1] == "memaudit: terminated"
    assert json.loads(captured.out)["error"] == {"type": "Interrupted", "message": "terminated"}


# --------------------------------------------------------------------------- output paths


def test_sweep_dash_o_into_a_missing_folder_fails_before_the_sweep(tmp_path, monkeypatch, capsys):
    import memaudit_core.analysis as analysis
    import memaudit_core.suites as suites

    def never(*a, **k):
        raise AssertionError("the sweep ran before the output path was checked")

    monkeypatch.setattr(analysis, "sweep", never)
    monkeypatch.setattr(suites, "sweep_suite", never)
    bad = tmp_path / "missing" / "rows.csv"
    pkg = str(SAMPLES / "update_chain.json")
    for argv in (
        ["sweep", pkg, "-o", str(bad)],
        ["sweep", "--family", "memaudit-small:0-2", "--budgets", "2", "-o", str(bad)],
        ["sweep", pkg, "-o", str(tmp_path)],  # a folder
    ):
        assert main([*argv, "--quiet"]) == 2
        err = capsys.readouterr().err
        assert err.startswith("memaudit sweep: error: cannot write ") and "internal" not in err
    assert not bad.parent.exists()


def test_generate_and_import_check_dash_o_before_the_work(tmp_path, monkeypatch, capsys):
    import memaudit_core.generators as generators
    import memaudit_core.importers as importers

    def never(*a, **k):
        raise AssertionError("the work ran before the output path was checked")

    monkeypatch.setattr(generators, "generate", never)
    monkeypatch.setattr(importers, "import_package", never)
    bad = str(tmp_path / "missing" / "p.json")
    locomo = str(ROOT / "tests" / "fixtures" / "importers" / "locomo_small.json")
    assert main(["generate", "memaudit-small", "-o", bad]) == 2
    assert main(["import", "locomo", locomo, "--instance", "conv-a", "-o", bad, "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.err.count(f"memaudit generate: error: cannot write {bad}: ") == 1
    assert captured.err.count(f"memaudit import: error: cannot write {bad}: ") == 1
    assert json.loads(captured.out)["error"]["message"].startswith(f"cannot write {bad}")


def test_the_preflight_leaves_no_file_behind_and_keeps_an_existing_one(tmp_path, capsys):
    new = tmp_path / "new.json"
    assert main(["generate", "update_chain", "-o", str(new)]) == 0
    assert load_package(new).id == "update_chain"
    kept = tmp_path / "kept.csv"
    kept.write_text("old")
    from memaudit_core.cli import check_output_file

    check_output_file(str(kept))
    assert kept.read_text() == "old"  # opened for writing, not truncated
    check_output_file(str(tmp_path / "probe.csv"))
    assert not (tmp_path / "probe.csv").exists()
    check_output_file("-")
    check_output_file(os.devnull)


def test_an_out_folder_that_cannot_be_written_in_is_a_user_error(tmp_path, monkeypatch, capsys):
    import tempfile

    def refuse(*a, **k):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(tempfile, "TemporaryFile", refuse)
    out = tmp_path / "out"
    out.mkdir()
    argv = ["--family", "memaudit-small:0-1", "--budgets", "2", "--quiet", "--out", str(out)]
    assert main(["sweep", *argv]) == 2
    assert main(["audit", *argv]) == 2  # audit's 1 means a disagreement: not this
    err = capsys.readouterr().err
    assert err.count(f"--out {out}: cannot write in the folder (Read-only file system)") == 2


def test_suite_files_that_cannot_be_written_are_named(tmp_path):
    from memaudit_core import suites

    out = tmp_path / "journal-is-a-folder"
    (out / suites.JOURNAL).mkdir(parents=True)
    with pytest.raises(MemAuditError, match=r"cannot write the journal .*journal\.jsonl"):
        suites.Journal(out, "sweep", {}, resume=True)
    (tmp_path / "file").write_text("x")
    with pytest.raises(MemAuditError, match=r"cannot write the journal"):
        suites.Journal(tmp_path / "file" / "sub", "sweep", {}, resume=True)
    (tmp_path / "r" / "report.md").mkdir(parents=True)
    with pytest.raises(MemAuditError, match=r"cannot write .*report\.md"):
        suites.write_report(tmp_path / "r" / "report.md", "text")
    (tmp_path / "t" / "rows.csv").mkdir(parents=True)
    with pytest.raises(MemAuditError, match=r"cannot write .*rows\.csv:"):
        suites.write_table([{"a": 1}], tmp_path / "t" / "rows", ["a"])
    (tmp_path / "t" / "rows.csv").rmdir()
    (tmp_path / "t" / "rows.parquet").mkdir()
    with pytest.raises(MemAuditError, match=r"cannot write .*rows\.parquet:"):
        suites.write_table([{"a": 1}], tmp_path / "t" / "rows", ["a"])


def test_report_md_that_cannot_be_written_is_a_user_error(tmp_path, capsys):
    out = tmp_path / "out"
    (out / "report.md").mkdir(parents=True)
    argv = ["--family", "memaudit-small:0-1", "--budgets", "2", "--quiet", "--no-figures"]
    assert main(["sweep", *argv, "--out", str(out)]) == 2
    assert main(["audit", *argv, "--out", str(out / "audit")]) == 0
    (out / "audit" / "report.md").unlink()
    (out / "audit" / "report.md").mkdir()
    assert main(["audit", *argv, "--out", str(out / "audit")]) == 2
    err = capsys.readouterr().err
    assert "internal error" not in err and err.count("report.md: Is a directory") == 2


LONG = "x" * 300  # one name longer than any file system allows (255 bytes)


@pytest.mark.parametrize(
    "argv",
    [
        ["validate", f"{LONG}.json"],
        ["solve", f"{LONG}.json"],
        ["score", f"{LONG}.json", "--writer", "gvt"],
        ["sweep", f"{LONG}.json"],
        ["sweep", f"{LONG}.json", "--workers", "2"],
        ["audit", f"{LONG}.json"],
        ["import", "locomo", f"{LONG}.json"],
        ["import", "artifact", LONG],
        ["sweep", "--family", "memaudit-small", "--out", LONG],
        ["generate", "memaudit-small", "-o", f"{LONG}.json"],
    ],
)
def test_a_file_name_too_long_is_a_user_error(argv, capsys):
    assert main([*argv, "--json"]) == 2
    captured = capsys.readouterr()
    assert "internal error" not in captured.err
    # The name is named, cut past 200 characters (s37 library QA: a JSON text given as a path
    # was repeated whole).
    assert "too long" in captured.err and LONG[:72] in captured.err
    assert json.loads(captured.out)["error"]["type"] != "InternalError"


def test_load_package_says_a_name_is_too_long():
    with pytest.raises(PackageError) as info:
        load_package(f"{LONG}.json")
    assert info.value.problems[0].rule == "readable"
    assert "too long" in info.value.problems[0].message


# --------------------------------------------------------------------------- stdin


def _with_stdin(monkeypatch, data: bytes) -> None:
    import io

    class In:
        buffer = io.BytesIO(data)

    monkeypatch.setattr(sys, "stdin", In())


def test_a_package_on_stdin(monkeypatch, capsys):
    text = (SAMPLES / "update_chain.json").read_bytes()
    for argv in (
        ["validate", "-", "--json"],
        ["solve", "-", "--budget", "6", "--json"],
        ["score", "-", "--budget", "6", "--writer", "gvt", "--json"],
        ["sweep", "-", "--budgets", "6", "--writers", "gvt", "--json", "--quiet"],
    ):
        _with_stdin(monkeypatch, text)
        assert main(argv) == 0, capsys.readouterr().err
        out = json.loads(capsys.readouterr().out)
        assert "error" not in out
    _with_stdin(monkeypatch, text)
    assert main(["sweep", "-", "-", "--budgets", "6", "--writers", "gvt", "--quiet"]) == 2
    assert "stdin holds one package" in capsys.readouterr().err
    _with_stdin(monkeypatch, b"")
    assert main(["validate", "-"]) == 2
    assert capsys.readouterr().err.startswith("<stdin>: $: the file is empty")
    assert main(["audit", "-", "--quiet"]) == 2
    assert "reads its packages from files, not from stdin" in capsys.readouterr().err


# --------------------------------------------------------------------------- workers


def test_a_pool_worker_watches_the_process_that_made_it():
    """:func:`memaudit_core.parallel.watch_parent` in a worker; nothing in the main process."""
    from concurrent.futures import ProcessPoolExecutor

    from memaudit_core.parallel import pool_context, watch_parent

    assert watch_parent() is False  # no parent process to watch here
    with ProcessPoolExecutor(1, mp_context=pool_context()) as pool:
        assert pool.submit(watch_parent).result(timeout=60) is True


# --------------------------------------------------------------------------- closed streams


def _closing(fd: int):
    def pre() -> None:
        os.close(fd)

    return pre


@needs_proc
def test_a_closed_stderr_leaves_stdout_pure_json():
    """``2>&-``: the progress bar was an internal error whose message went into stdout."""
    done = subprocess.run(
        [sys.executable, "-m", "memaudit_core", "sweep", "--family", "memaudit-small:0-200"]
        + ["--budgets", "2,4", "--json"],
        stdout=subprocess.PIPE,
        stderr=None,
        preexec_fn=_closing(2),
        env=_env(),
        timeout=300,
        text=True,
    )
    assert done.returncode == 0
    assert "rows" in json.loads(done.stdout)


@needs_proc
def test_a_closed_stdout_sends_nothing_to_stderr():
    """``>&-``: the JSON went to stderr."""
    done = subprocess.run(
        [sys.executable, "-m", "memaudit_core", "solve", str(SAMPLES / "update_chain.json")]
        + ["--json"],
        stdout=None,
        stderr=subprocess.PIPE,
        preexec_fn=_closing(1),
        env=_env(),
        timeout=300,
        text=True,
    )
    assert done.returncode == 0 and done.stderr == ""


def _many_problems(tmp_path: Path) -> Path:
    bad = tmp_path / "bad.json"
    candidates = [
        {"id": f"c{i}", "experience": "nope", "type": "raw_span", "cost": -1, "coverage": {}}
        for i in range(3000)
    ]
    doc = {"memaudit": 1, "id": "x", "experiences": [], "units": [], "candidates": candidates}
    bad.write_text(json.dumps(doc))
    return bad


@pytest.mark.parametrize("command", ["validate", "solve"])
def test_an_error_cut_short_by_a_closed_pipe_keeps_its_exit_status(tmp_path, command):
    """``memaudit validate bad.json 2>&1 | head -1`` exited 0 (``set -o pipefail`` passed)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "memaudit_core", command, str(_many_problems(tmp_path))],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=_env(),
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()
    proc.stdout.close()  # head -1 is done
    assert proc.wait(timeout=120) == 2
    assert b"refers to an unknown experience" in first
