"""The process-pool rules of :mod:`memaudit_core.parallel`."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

import pytest

from memaudit_core.errors import MemAuditError
from memaudit_core.parallel import check_workers, init_solver_worker, pool_context, stop_pool


def test_abandoned_pool_ends_its_running_workers():
    """Without terminating, shutdown would wait the full sleep and the task would succeed."""
    pool = ProcessPoolExecutor(max_workers=2, mp_context=pool_context())
    futures = [pool.submit(time.sleep, 600) for _ in range(3)]
    while not futures[0].running():
        time.sleep(0.05)
    procs = list(pool._processes.values())
    stop_pool(pool, abandon=True)
    assert procs and not any(p.is_alive() for p in procs)
    for fut in futures:
        assert fut.cancelled() or isinstance(fut.exception(), BrokenProcessPool)


def test_finished_pool_is_shut_down_normally():
    pool = ProcessPoolExecutor(
        max_workers=2, mp_context=pool_context(), initializer=init_solver_worker
    )
    assert [f.result() for f in [pool.submit(abs, -k) for k in range(4)]] == [0, 1, 2, 3]
    stop_pool(pool, abandon=False)
    with pytest.raises(RuntimeError):
        pool.submit(abs, 1)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2", None])
def test_check_workers_refuses(bad):
    with pytest.raises(MemAuditError, match="workers must be an integer >= 1"):
        check_workers(bad)


def test_ctrl_c_on_a_parallel_cli_run_ends_cleanly(tmp_path):
    """SIGINT to the CLI while two workers solve budgets that take HiGHS tens of seconds.

    Exit status 130, the message on a line of its own, no traceback. The communicate()
    timeout is the failure mode of a CLI that keeps waiting for its workers.
    """
    pkg = tmp_path / "rc100.json"
    gen = [sys.executable, "-m", "memaudit_core", "generate", "random_coverage", "--seed", "0"]
    subprocess.run([*gen, "--param", "n_groups=100", "-o", str(pkg)], check=True)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "memaudit_core",
            "sweep",
            str(pkg),
            "--budgets",
            "90,95,100,105",
            "--writers",
            "gvt",
            "--workers",
            "2",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # A shell's background job ignores SIGINT; a terminal's Ctrl-C does not.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    time.sleep(6)  # imports, pool start-up, both workers inside HiGHS
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("the CLI kept waiting for its workers after Ctrl-C")
    assert proc.returncode == 130
    assert err.splitlines()[-1] == "memaudit: interrupted"
    assert "Traceback" not in err


def test_an_error_message_starts_below_an_open_progress_bar(capsys):
    from memaudit_core.cli import Progress

    bar = Progress("sweep", enabled=True)
    bar.start -= 1.0  # past the half second a bar waits before it is worth drawing
    bar(1, 4)
    Progress.close_line()
    err = capsys.readouterr().err
    assert err.startswith("\rsweep [") and err.endswith("1/4   1.0s\n")
    Progress.close_line()  # nothing open any more: nothing written
    bar(4, 4)
    Progress.close_line()
    assert capsys.readouterr().err.count("\n") == 1


FORKED_SOLVE = """
import multiprocessing as mp, sys
from memaudit_core.generators import generate
from memaudit_core.compiled import compile_package
from memaudit_core.solvers import solve

inst = compile_package(generate("event_graph", seed=7, n_experiences=50))

def child(queue):
    queue.put(solve(inst, 20, "milp").value)

if __name__ == "__main__":
    parent_value = solve(inst, 20, "milp").value  # HiGHS's thread pool now exists here
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    proc = ctx.Process(target=child, args=(queue,))
    proc.start()
    proc.join(timeout=60)
    if proc.is_alive():
        proc.kill()
        sys.exit(3)
    sys.exit(0 if queue.get(timeout=5) == parent_value else 4)
"""


def test_a_forked_child_of_a_process_that_ran_highs_can_solve(tmp_path):
    """Library QA: the default ProcessPoolExecutor on Linux forks; a child of a parent that had
    run HiGHS spun forever in its first MILP solve."""
    script = tmp_path / "forked_solve.py"
    script.write_text(FORKED_SOLVE)
    done = subprocess.run([sys.executable, str(script)], timeout=180, capture_output=True)
    assert done.returncode == 0, (done.returncode, done.stderr.decode()[-2000:])
