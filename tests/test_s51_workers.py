"""A researcher's own writer (``register_writer`` in a script or notebook, or a module's) and
saturation run in sweep worker processes and on Dask workers as in the calling process (QA
s51): before, a suite's workers refused such a writer as unknown (a replaced ``gvt`` ran there
as the reference one), ``sweep(workers=2)`` swept the packages one after another in the
calling process, and a saturation defined under the script's main guard killed each worker
with multiprocessing's traceback and a "guard your entry point" hint. A writer or saturation
no worker can load is a clear error naming it and what to do."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from cli_utils import run_cli
from dask_utils import local_cluster

import memaudit_core as ma
from memaudit_core.errors import MemAuditError
from memaudit_core.suites import sweep_suite

ROOT = Path(__file__).resolve().parent.parent
FAMILY = ["memaudit-small:0-2"]
BUDGETS = [2, 4]


class NotingFirst:
    """A writer keeping the first candidate (in canonical order) and noting, in ``path``, the
    id of each process it ran in."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)

    def __call__(self, inst, budget):
        with open(self.path, "a", encoding="ascii") as fh:
            fh.write(f"{os.getpid()}\n")
        return inst.indices(list(inst.candidate_ids[:1]))


def first_two(inst, budget):
    """A replacement of ``gvt``: the first two candidates (an infeasible store at small
    budgets, which the reference gvt never returns)."""
    return inst.indices(list(inst.candidate_ids[:2]))


def _make_nested():
    def nested(inst, budget):
        return ()

    return nested


@contextlib.contextmanager
def registered(*infos: ma.WriterInfo):
    try:
        for info in infos:
            ma.register_writer(info, replace=True)
        yield
    finally:
        for info in infos:
            with contextlib.suppress(ma.MemAuditError):
                ma.unregister_writer(info.name)


def _pids(path: Path) -> set[int]:
    return {int(line) for line in path.read_text().split()} if path.exists() else set()


def _rows(res) -> list[tuple]:
    return sorted(dataclasses.astuple(r) for r in res.rows)


def _errors(res) -> list[tuple]:
    return sorted((e.package_id, e.budget, e.writer, e.message) for e in res.errors)


def test_sweep_with_workers_runs_a_registered_writer_in_the_workers(tmp_path):
    # Before: any writer not the product's own kept every package in this process.
    pids = tmp_path / "pids"
    packages = [ma.generate("memaudit-small", seed=s) for s in range(3)]
    with registered(ma.WriterInfo("s51_noting", "first", "oracle", NotingFirst(pids))):
        alone = ma.sweep(packages, BUDGETS, ["s51_noting", "gvt"], workers=1)
        assert _pids(pids) == {os.getpid()}
        pids.unlink()
        pooled = ma.sweep(packages, BUDGETS, ["s51_noting", "gvt"], workers=2)
    ran_in = _pids(pids)
    assert ran_in and os.getpid() not in ran_in
    assert _rows(pooled) == _rows(alone) and not pooled.errors
    assert {r.method for r in pooled.rows} == {"s51_noting", "gvt"}


def test_a_suite_with_workers_runs_registered_and_replaced_writers_as_here(tmp_path):
    # Before: "unknown writer 's51_noting'" from the workers; and a gvt replaced with
    # replace=True ran there as the reference gvt.
    pids = tmp_path / "pids"
    infos = (
        ma.WriterInfo("s51_noting", "first", "oracle", NotingFirst(pids)),
        ma.WriterInfo("gvt", "first two", "oracle", first_two),
    )
    with registered(*infos):
        kw = {"families": FAMILY, "budgets": BUDGETS, "writers": ["s51_noting", "gvt"]}
        alone = sweep_suite(**kw, workers=1)
        pids.unlink()
        pooled = sweep_suite(**kw, workers=2)
    assert os.getpid() not in _pids(pids)
    assert _rows(pooled) == _rows(alone) and _errors(pooled) == _errors(alone)
    assert {r.method for r in pooled.rows} == {"s51_noting"}
    # The replacement's infeasible stores are its failures, in both runs.
    assert {e.writer for e in pooled.errors} == {"gvt"} and len(pooled.errors) == 6


@pytest.mark.parametrize(
    ("fn", "why"),
    [
        (lambda inst, budget: (), "its function is a lambda"),
        (_make_nested(), "its function is defined inside another function"),
    ],
)
def test_a_writer_no_worker_can_load_is_refused_naming_it(fn, why):
    # Before: sweep() ran it in this process, workers or not; a suite's workers called it
    # an unknown writer.
    packages = [ma.generate("memaudit-small", seed=s) for s in range(2)]
    with registered(ma.WriterInfo("s51_unsendable", "x", "oracle", fn)):
        for run in (
            lambda: ma.sweep(packages, [2], ["s51_unsendable"], workers=2),
            lambda: sweep_suite(
                families=FAMILY, budgets=[2], writers=["s51_unsendable"], workers=2
            ),
        ):
            with pytest.raises(MemAuditError) as caught:
                run()
            text = str(caught.value)
            assert text.startswith("writer 's51_unsendable' (added with register_writer) cannot")
            assert why in text and "top level of a module" in text and "workers=1" in text
        # One process needs nothing sent.
        assert len(ma.sweep(packages, [2], ["s51_unsendable"], workers=1).rows) == 2


def test_the_cli_plugin_module_writer_runs_with_workers():
    # Before: `memaudit: error: memaudit-small:0: unknown writer 's51_pm_first'`.
    argv = ["--family", *FAMILY, "--budgets", "2,4", "--writers", "s51_pm_first,gvt"]
    mod = "plugin_fixtures.s51_registers"
    try:
        out = {}
        for workers in ("1", "2"):
            rc, stdout, err = run_cli(
                "--plugin-module", mod, "sweep", *argv, "--workers", workers, "--json", "--quiet"
            )
            assert rc == 0, err
            out[workers] = sorted(json.dumps(r, sort_keys=True) for r in json.loads(stdout)["rows"])
        assert out["1"] == out["2"]
        assert sum('"s51_pm_first"' in r for r in out["2"]) == 6
    finally:
        with contextlib.suppress(ma.MemAuditError):
            ma.unregister_writer("s51_pm_first")
        sys.modules.pop(mod, None)


SCRIPT = """
import dataclasses, json, math, sys
import numpy as np
import memaudit_core as ma
from memaudit_core.saturations import Saturation, register_saturation
from memaudit_core.suites import sweep_suite


def top(inst, budget):
    return inst.indices(list(inst.candidate_ids[:1]))


def attempt(fn):
    try:
        return fn()
    except ma.MemAuditError as exc:
        return "ERROR " + str(exc)


def suite(writer, workers):
    res = sweep_suite(families=["memaudit-small:0-2"], budgets=[2, 4], writers=[writer],
                      workers=workers)
    return sorted((r.seed, r.budget, r.value, r.opt) for r in res.rows)


if __name__ == "__main__":
    def guarded(inst, budget):
        return ()

    def h(z):
        return np.log1p(2 * np.asarray(z, float))

    def h1(z):
        return math.log1p(2 * z)

    ma.register_writer(ma.WriterInfo("top", "t", "oracle", top))
    ma.register_writer(ma.WriterInfo("guarded", "g", "oracle", guarded))
    out = {"top": [attempt(lambda: suite("top", w)) for w in (1, 2)],
           "guarded": attempt(lambda: suite("guarded", 2))}
    register_saturation(Saturation("s51_log2", h, h1, "h(z) = ln(1 + 2z)", math.inf))
    pkg = dataclasses.replace(ma.generate("memaudit-small", seed=0), saturation="s51_log2")
    inst = ma.compile_package(pkg)
    out["saturation"] = attempt(
        lambda: ma.solve_budgets(inst, [2, 4, 6], solver="bnb", workers=2)
    )
    print(json.dumps(out))
"""


def _python(*argv: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, *argv], capture_output=True, text=True, cwd=cwd, env=env, timeout=300
    )


def test_a_scripts_writers_and_saturations_in_workers(tmp_path):
    """A function at the script's top level reaches the workers (they import the script
    again); one defined under its main guard does not, and is said so, naming it."""
    (tmp_path / "script.py").write_text(SCRIPT)
    done = _python("script.py", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    out = json.loads(done.stdout)
    one, two = out["top"]
    assert isinstance(one, list) and len(one) == 6 and two == one
    for key, what in (("guarded", "writer 'guarded'"), ("saturation", "saturation 's51_log2'")):
        text = out[key]
        assert text.startswith("ERROR "), text
        assert f"{what}" in text and "could not be loaded in a worker process" in text
        assert "if __name__ == '__main__':" in text and "workers=1" in text
        assert "died" not in text


def test_a_notebooks_writer_and_saturation_are_refused_before_any_worker(tmp_path):
    """A notebook's (here python -c's) functions live in a __main__ no worker can import."""
    code = textwrap.dedent(
        """
        import dataclasses, json, math
        import numpy as np
        import memaudit_core as ma
        from memaudit_core.saturations import Saturation, register_saturation

        def mine(inst, budget):
            return ()

        def h(z):
            return np.log1p(2 * np.asarray(z, float))

        def h1(z):
            return math.log1p(2 * z)

        def attempt(fn):
            try:
                return repr(fn())
            except ma.MemAuditError as exc:
                return "ERROR " + str(exc)

        ma.register_writer(ma.WriterInfo("mine", "m", "oracle", mine))
        pkgs = [ma.generate("memaudit-small", seed=s) for s in range(2)]
        out = {"writer": attempt(lambda: ma.sweep(pkgs, [2], ["mine"], workers=2))}
        register_saturation(Saturation("s51_log2", h, h1, "h(z) = ln(1 + 2z)", math.inf))
        inst = ma.compile_package(dataclasses.replace(pkgs[0], saturation="s51_log2"))
        out["saturation"] = attempt(lambda: ma.solve_budgets(inst, [2, 4], solver="bnb", workers=2))
        print(json.dumps(out))
        """
    )
    done = _python("-c", code, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    out = json.loads(done.stdout)
    for key, what in (("writer", "writer 'mine'"), ("saturation", "saturation 's51_log2'")):
        text = out[key]
        assert text.startswith(f"ERROR {what}"), text
        assert "is defined in __main__ (a notebook" in text and "workers=1" in text


@pytest.fixture(scope="module")
def scheduler():
    """A local Dask cluster of one worker process, started before any writer is registered:
    it knows only what a sweep sends it."""
    with local_cluster() as address:
        yield address


def test_dask_workers_run_registered_writers_closures_included(tmp_path, scheduler):
    # Before: "unknown writer" from the Dask worker. Dask sends a closure by value
    # (cloudpickle), so what processes refuse runs there.
    infos = (
        ma.WriterInfo("s51_noting", "first", "oracle", NotingFirst(tmp_path / "pids")),
        ma.WriterInfo("s51_nested", "none", "oracle", _make_nested()),
        ma.WriterInfo("gvt", "first two", "oracle", first_two),
    )
    with registered(*infos):
        kw = {"families": FAMILY, "budgets": BUDGETS, "writers": [i.name for i in infos]}
        alone = sweep_suite(**kw)
        on_dask = sweep_suite(**kw, scheduler=scheduler)
    assert _rows(on_dask) == _rows(alone) and _errors(on_dask) == _errors(alone)
    assert {r.method for r in on_dask.rows} == {"s51_noting", "s51_nested"}
    assert {e.writer for e in on_dask.errors} == {"gvt"}
