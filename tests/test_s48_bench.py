"""QA s48: target 1's benchmark (``bench/bench_speed.py``) and the experiment scripts.

Target 1's ">= 20x" was measured only against a baseline that recomputes F at every complete
store; "0 mismatches" compared values only (a baseline breaking ties the other way passed,
and a row the baseline lacked raised KeyError); the report printed the load at the start only
and folded the pool's cold start into a median; two experiment scripts ran the whole
experiment when asked for ``--help``.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from memaudit_core.analysis import sweep
from memaudit_core.compiled import compile_package
from memaudit_core.generators import generate
from memaudit_core.writers import run_writers

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
BUDGETS = [2.0, 4.0, 8.0, 16.0]
WRITERS = ["gvt", "density", "greedy", "fact_only", "summary_only", "recency_raw"]


@pytest.fixture(scope="module")
def bench_speed():
    # The script puts bench/ first on sys.path to import its siblings; keep that to the load.
    saved = list(sys.path)
    try:
        spec = importlib.util.spec_from_file_location("s48_bench_speed", BENCH / "bench_speed.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = saved
    return module


@pytest.fixture(scope="module")
def small():
    """Three memaudit-small packages with the product's sweep rows and writer stores."""
    packages = [generate("memaudit-small", seed=s) for s in range(3)]
    rows = sweep(packages, BUDGETS, WRITERS, ablations=["no_validity", "generic"]).rows
    stores = {}
    for pkg in packages:
        found = run_writers(WRITERS, compile_package(pkg), BUDGETS)
        for name, results in found.items():
            for b, res in zip(BUDGETS, results, strict=True):
                stores[(pkg.id, b, name)] = set(res.selected)
    return packages, rows, stores


def close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, abs(a))


def test_the_incremental_baseline_finds_the_products_optima_and_stores(bench_speed, small):
    packages, rows, stores = small
    base = bench_speed.baseline_pure_python.run(packages, BUDGETS, variant="incremental")
    assert set(base) == {(r.package_id, r.budget, r.method) for r in rows}
    assert len(base) == 3 * 4 * (6 + 2)
    for row in rows:
        b = base[(row.package_id, row.budget, row.method)]
        assert close(b.value, row.value), (row.package_id, row.budget, row.method)
        assert close(b.opt, row.opt), (row.package_id, row.budget, row.method)
        if row.method in WRITERS:
            assert set(b.store) == stores[(row.package_id, row.budget, row.method)]
            assert close(b.cost, row.cost)
        else:
            assert b.store is None


def test_the_mismatch_check_counts_wrong_stores_costs_and_rows_on_one_side(bench_speed, small):
    packages, rows, stores = small
    base = bench_speed.baseline_pure_python.run(packages, BUDGETS)
    product = {k: tuple(sorted(v)) for k, v in stores.items()}
    clean = bench_speed.mismatches(base, rows, product)
    assert clean == dict.fromkeys(clean, 0)

    pid = packages[0].id
    wrong = dict(base)
    # A different store with the same value and cost: a tie broken the other way.
    row = wrong[(pid, 4.0, "density")]
    assert row.store
    wrong[(pid, 4.0, "density")] = row._replace(store=(*row.store[:-1], "not-a-candidate"))
    row = wrong[(pid, 16.0, "gvt")]
    wrong[(pid, 16.0, "gvt")] = row._replace(cost=row.cost + 1.0)
    del wrong[(pid, 8.0, "greedy")]  # a row only the sweep has
    dropped = [r for r in rows if (r.package_id, r.budget, r.method) != (pid, 2.0, "generic_opt")]
    assert len(dropped) == len(rows) - 1  # and one only the baseline has
    found = bench_speed.mismatches(wrong, [*dropped, dropped[0]], product)
    assert found == {
        "value": 0,
        "opt": 0,
        "store": 1,
        "cost": 1,
        "only_in_sweep": 1,  # the deleted baseline row
        "only_in_baseline": 1,
        "duplicate_in_sweep": 1,  # the repeated sweep row (review s48: was only_in_sweep)
    }


def test_the_report_gives_end_and_peak_load_both_baselines_and_the_cold_run(
    bench_speed, tmp_path, monkeypatch, capsys
):
    out = tmp_path / "speed.json"
    monkeypatch.setattr(
        sys,
        "argv",
        ["bench_speed.py", "--targets", "1", "--seeds", "2", "--repeats", "2"]
        + ["--small-workers", "1", "--eg-seeds", "0", "--out", str(out)],
    )
    bench_speed.main()
    printed = capsys.readouterr().out
    payload = json.loads(out.read_text())
    # The peak is over samples that include the end's (printed to one decimal).
    assert round(payload["load_max_1min"], 1) >= float(payload["load_end"].split()[0])
    assert f"at end: {payload['load_end']}" in printed
    assert f"sampled between runs and targets: {payload['load_max_1min']:.1f}" in printed
    t1 = payload["small"]
    (config,) = t1["configs"]
    assert config["cold_wall_s"] == config["runs"][0][0]
    assert f"| 1 | {config['wall_s']:.2f} s | {config['cold_wall_s']:.2f} s |" in printed
    assert (
        f"incremental, coverage sums carried down the search, {t1['incremental_wall_s']:.1f}"
        in (printed)
    )
    assert config["mismatches"] == config["incremental_mismatches"] == 0
    assert t1["writer_stores_checked"] == 2 * 4 * 6


@pytest.mark.parametrize(
    "script", ["exp_bnb_nonbinding.py", "exp_limited_start.py", "exp_compare_timeline.py"]
)
def test_help_prints_help_and_runs_nothing(script, tmp_path):
    # The timeout only stops a script that starts its experiment instead of answering.
    done = subprocess.run(
        [sys.executable, str(BENCH / script), "--help"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: {script}")
    assert list(tmp_path.iterdir()) == []
