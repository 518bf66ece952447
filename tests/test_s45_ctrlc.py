"""QA s45: Ctrl-C on ``memaudit sweep --workers 2`` printed a traceback.

A terminal's Ctrl-C (SIGINT to the whole process group) while a pool worker was starting cut
the pickled package the CLI was writing to it: the worker printed ``UnpicklingError: pickle
data was truncated`` with a traceback after ``memaudit: interrupted``. A Ctrl-C while the CLI
was still importing its solvers printed a ``KeyboardInterrupt`` traceback and ended by the
signal, not with exit status 130.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return env


def _cli(*argv: str) -> subprocess.Popen:
    """The CLI in its own process group, with Ctrl-C handled as in a terminal's foreground
    job (a background job ignores it)."""
    return subprocess.Popen(
        [sys.executable, "-m", "memaudit_core", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        env=_env(),
    )


def _children(pid: int) -> list[int]:
    kids: list[int] = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return kids
    for tid in tids:
        try:
            kids += [int(k) for k in Path(f"/proc/{pid}/task/{tid}/children").read_text().split()]
        except (OSError, ValueError):
            continue
    return kids


def _first_worker_forked(pid: int, timeout: float = 60.0) -> bool:
    """Waits until a grandchild of ``pid`` exists: the forkserver (a child) has forked the
    first pool worker, which is then reading its start-up data from the CLI."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if any(_children(kid) for kid in _children(pid)):
            return True
        time.sleep(0.002)
    return False


def _ctrl_c(proc: subprocess.Popen) -> tuple[int, str, str]:
    os.killpg(proc.pid, signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
    return proc.returncode, out, err


def test_ctrl_c_while_a_sweep_worker_starts_prints_no_traceback(tmp_path):
    # 150 groups: the compiled package the workers get is over 100 KB, more than a pipe holds,
    # so the CLI is still writing it when the first worker exists.
    pkg = tmp_path / "p.json"
    gen = [sys.executable, "-m", "memaudit_core", "generate", "random_coverage", "--seed", "1"]
    made = subprocess.run(
        [*gen, "--param", "n_groups=150", "-o", str(pkg)], capture_output=True, env=_env()
    )
    assert made.returncode == 0, made.stderr
    sweep = ("sweep", str(pkg), "--budgets", "5,10,15,20", "--writers", "gvt", "--workers", "2")
    runs = []
    for _ in range(5):
        proc = _cli(*sweep, "--json")
        forked = _first_worker_forked(proc.pid)
        runs.append((forked, *_ctrl_c(proc)))
    for forked, rc, out, err in runs:
        assert forked, err
        assert "Traceback" not in err, err
        assert rc == 130, err
        assert err.splitlines()[-1] == "memaudit: interrupted", err
        assert '"type": "Interrupted"' in out


def test_ctrl_c_while_the_cli_imports_its_solvers_prints_no_traceback():
    # `memaudit validate` builds its parser first, which imports NumPy, SciPy and HiGHS; the
    # CLI has started once its module is imported (a 20 ms window before this is Python's own
    # start-up, which no program can handle).
    proc = _cli("validate", str(ROOT / "sample_packages" / "travel-assistant.json"), "--json")
    end = time.monotonic() + 60
    while time.monotonic() < end:
        maps = Path(f"/proc/{proc.pid}/maps").read_text()
        if "numpy" in maps:  # inside build_parser's imports
            break
        time.sleep(0.001)
    rc, out, err = _ctrl_c(proc)
    assert "Traceback" not in err, err
    assert rc == 130, err
    assert err.splitlines()[-1] == "memaudit: interrupted"
    assert '"type": "Interrupted"' in out
