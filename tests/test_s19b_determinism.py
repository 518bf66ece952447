"""QA session 19 (helper B): the same command gives the same bytes.

Across fresh processes with different ``PYTHONHASHSEED`` values (set and dict iteration
order), and across ``--workers 1`` and ``--workers 2`` (completion order, float summation
order), every output but the timing fields and the backend's own description is identical.
A generated package records generator, params and seed, and regenerating from that record
gives the identical package.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "tests" / "fixtures" / "importers"

#: Keys that say how long or where something ran, not what it computed.
RUN_KEYS = {"elapsed_s", "backend", "executed", "reused", "bnb_time_s", "milp_time_s"}


def _run(argv: list[str], hash_seed: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONHASHSEED"] = hash_seed
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    done = subprocess.run(
        [sys.executable, "-m", "memaudit_core", *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done


def _strip(obj):
    if isinstance(obj, dict):
        return {k: _strip(v) for k, v in obj.items() if k not in RUN_KEYS}
    if isinstance(obj, list):
        return [_strip(v) for v in obj]
    return obj


GENERATE_ALL = """
import hashlib, json, sys
from memaudit_core.generators import FAMILIES, generate
from memaudit_core.package import dumps_package
PARAMS = {"event_graph": {"n_experiences": 120, "update_rate": 0.4},
          "random_coverage": {"n_groups": 30, "integer_costs": True}}
out = {}
for name in sorted(FAMILIES):
    for seed in (0, 7, 12345):
        pkg = generate(name, seed=seed, **PARAMS.get(name, {}))
        meta = pkg.meta
        again = generate(meta["generator"], seed=meta["seed"], **meta["params"])
        out[f"{name}:{seed}"] = [hashlib.sha256(dumps_package(pkg).encode()).hexdigest(),
                                 pkg.content_hash() == again.content_hash(),
                                 sorted(meta)]
json.dump(out, sys.stdout)
"""


def test_every_family_is_byte_identical_across_hash_seeds_and_rebuilds_from_its_meta(tmp_path):
    runs = []
    for hash_seed in ("0", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=hash_seed, PYTHONPATH=str(ROOT))
        done = subprocess.run(
            [sys.executable, "-c", GENERATE_ALL],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        runs.append(json.loads(done.stdout))
    assert runs[0] == runs[1]
    for key, (_, rebuilt, meta_keys) in runs[0].items():
        assert rebuilt, f"{key}: generate(**meta) is another package"
        assert {"generator", "params", "seed"} <= set(meta_keys), key


SUITE = [
    "sweep",
    "--family",
    "memaudit-small:0-7",
    "--family",
    "event_graph:0-2",
    "--family",
    "random_coverage:0-2",
    "--budgets",
    "2,4,8,16",
    "--ablations",
    "no_validity,generic",
    "--json",
    "--quiet",
]


def test_a_suite_sweep_is_identical_across_hash_seeds_and_worker_counts(tmp_path):
    outputs = {}
    for hash_seed, workers in (("0", "1"), ("12345", "1"), ("1", "2")):
        csv = tmp_path / f"rows-{hash_seed}-{workers}.csv"
        done = _run([*SUITE, "--workers", workers, "-o", str(csv)], hash_seed, tmp_path)
        outputs[(hash_seed, workers)] = (_strip(json.loads(done.stdout)), csv.read_bytes())
    first = outputs[("0", "1")]
    for key, got in outputs.items():
        assert got[0] == first[0], key
        assert got[1] == first[1], key


def test_one_package_swept_over_budgets_in_parallel_gives_the_serial_bytes(tmp_path):
    pkg = str(ROOT / "sample_packages" / "event-graph-50.json")
    argv = ["sweep", pkg, "--budgets", "5:100:5", "--json", "--quiet"]
    runs = []
    for hash_seed, workers in (("0", "1"), ("12345", "2")):
        done = _run([*argv, "--workers", workers, "-o", "rows.csv"], hash_seed, tmp_path)
        runs.append((_strip(json.loads(done.stdout)), (tmp_path / "rows.csv").read_bytes()))
    assert runs[0] == runs[1]


def test_an_imported_export_does_not_depend_on_where_the_package_lies(tmp_path):
    hashes = []
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        _run(
            [
                "import",
                "locomo",
                str(FIX / "locomo_small.json"),
                "--instance",
                "conv-a",
                "-o",
                f"{folder}/loc.json",
            ],
            "0",
            tmp_path,
        )
        done = _run(
            [
                "score",
                f"{folder}/loc.json",
                "--external",
                str(FIX / "zep_v4_edges.json"),
                "--format",
                "zep",
                "--json",
            ],
            "0",
            tmp_path,
        )
        hashes.append(json.loads(done.stdout)["content_hash"])
    assert hashes[0] == hashes[1]
