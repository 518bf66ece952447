"""Plugin writers: blind isolation, discovery, answer validation, sweeps, CLI and app.

Blind writers run in a worker process (``memaudit_core.plugins``). The hostile writer in
``plugin_fixtures/snoop_writer.py`` tries every route to hidden package data it can; the package
used here hides a marker (``NEEDLE``) in unit ids / texts, queries, title, meta and the package
file's directory, plus two distinctive numbers (a weight and a coverage value).
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest
from cli_utils import run_cli as _cli
from plugin_fixtures.snoop_writer import NEEDLE, SECRET_COVERAGE, SECRET_WEIGHT
from streamlit.testing.v1 import AppTest

from memaudit_core import plugins
from memaudit_core.analysis import compile_cached, score, sweep
from memaudit_core.errors import MemAuditError, UnknownNameError, WriterError
from memaudit_core.generators import generate
from memaudit_core.package import load_package
from memaudit_core.plugins import (
    BUNDLED,
    WORKER_STATS,
    PluginWriterError,
    blind_view,
    run_blind_batch,
    validate_answer,
    view_payload,
)
from memaudit_core.writers import PLUGIN_WRITERS, WRITERS, all_writers, get_writer, run_writer

REPO = Path(__file__).resolve().parent.parent
FIX = "plugin_fixtures.fixture_writers"
SNOOP = "plugin_fixtures.snoop_writer:snoop"
VEG = REPO / "sample_packages" / "veg-to-pescatarian.json"


# --------------------------------------------------------------------------- helpers


def _secret_doc() -> dict:
    return {
        "memaudit": 1,
        "id": "pkg-" + NEEDLE,
        "title": "title " + NEEDLE,
        "description": "description " + NEEDLE,
        "cost_unit": "words",
        "budget": 5,
        "experiences": [
            {"id": "e1", "time": 0, "session": "s1", "text": "I like green tea in the morning."},
            {"id": "e2", "time": 1, "session": "s1", "text": "Booked a flight to Oslo on 3 May."},
            {"id": "e3", "time": 2, "session": "s2", "text": "Now I drink coffee, not tea."},
        ],
        "units": [
            {"id": "u:tea:" + NEEDLE, "kind": "stale", "text": "tea " + NEEDLE, "weight": 0.15},
            {
                "id": "u:coffee:" + NEEDLE,
                "kind": "current_truth",
                "text": NEEDLE,
                "weight": SECRET_WEIGHT,
            },
            {"id": "u:inval", "kind": "invalidation", "text": "tea no longer " + NEEDLE},
            {"id": "u:flight", "kind": "fact", "text": "flight " + NEEDLE, "weight": 1.2},
        ],
        "queries": [
            {
                "id": "q1",
                "text": "What does the user drink? " + NEEDLE,
                "answer": NEEDLE,
                "requires": ["u:inval"],
                "weight": 1.75,
            },
        ],
        "candidates": [
            {
                "id": "e1:fact",
                "experience": "e1",
                "type": "atomic_fact",
                "text": "likes tea",
                "cost": 2,
                "coverage": {"u:tea:" + NEEDLE: 1.0},
            },
            {
                "id": "e1:raw",
                "experience": "e1",
                "type": "raw_span",
                "text": "I like green tea in the morning.",
                "cost": 7,
                "coverage": {"u:tea:" + NEEDLE: 1.0},
            },
            {
                "id": "e2:fact",
                "experience": "e2",
                "type": "atomic_fact",
                "text": "flight to Oslo",
                "cost": 3,
                "coverage": {"u:flight": 1.0},
            },
            {
                "id": "e3:fact",
                "experience": "e3",
                "type": "atomic_fact",
                "text": "drinks coffee",
                "cost": 2,
                "coverage": {"u:coffee:" + NEEDLE: SECRET_COVERAGE},
            },
            {
                "id": "e3:tomb",
                "experience": "e3",
                "type": "tombstone",
                "text": "no longer tea",
                "cost": 1,
                "coverage": {"u:inval": 1.0},
            },
            {
                "id": "e3:upd",
                "experience": "e3",
                "type": "compound_update",
                "text": "coffee now, not tea",
                "cost": 3,
                "coverage": {"u:coffee:" + NEEDLE: 1.0, "u:inval": 1.0},
            },
        ],
        "stores": [{"id": "s-" + NEEDLE, "label": NEEDLE, "select": ["e1:fact"]}],
        "meta": {"secret": NEEDLE, "generator": "hand", "seed": 7},
    }


@pytest.fixture(scope="module")
def secret_path(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("pkgs") / ("pkgdir-" + NEEDLE)
    folder.mkdir()
    path = folder / "secret.json"
    path.write_text(json.dumps(_secret_doc()), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def secret_pkg(secret_path):
    return load_package(str(secret_path))


@pytest.fixture(scope="module")
def landlock() -> bool:
    """Whether this machine's workers run under Landlock (the filesystem / /proc sandbox)."""
    inst = compile_cached(load_package(str(VEG)))
    plugins.clear_cache()
    run_writer("recency", inst, 6, package=load_package(str(VEG)))
    return WORKER_STATS.last_sandbox.startswith("landlock")


def _fail(name: str, pkg, budget: float, **kw) -> PluginWriterError:
    with pytest.raises(PluginWriterError) as exc:
        run_writer(name, compile_cached(pkg), budget, package=pkg, **kw)
    return exc.value


def _snoop_report(err: PluginWriterError) -> dict:
    assert err.reason == "unknown_id", err
    (report,) = err.offending
    assert report.startswith("SNOOP-REPORT:")
    return json.loads(report.split(":", 1)[1])


IN_PROCESS_ROUTES = {
    "view_walk",
    "gc",
    "sys.modules_walk",
    "sys.modules",
    "argv",
    "environ",
    "cwd",
    "fd_list",
    "fd_read",
}


# --------------------------------------------------------------------------- isolation


def test_view_payload_carries_no_hidden_data(secret_pkg, secret_path):
    text = json.dumps(view_payload(secret_pkg))
    assert NEEDLE not in text
    assert str(secret_path) not in text and "secret.json" not in text
    for word in ("coverage", "weight", "units", "queries", "requires", "meta", "title"):
        assert f'"{word}"' not in text
    assert repr(SECRET_WEIGHT) not in text and repr(SECRET_COVERAGE) not in text
    view = blind_view(secret_pkg, 5)
    assert [e.id for e in view.experiences] == ["e1", "e2", "e3"]
    assert [c.id for c in view.candidates_of("e3")] == ["e3:tomb", "e3:fact", "e3:upd"]
    assert view.budget == 5.0 and view.cost_unit == "words" and view.group_capacity == 1


def test_view_is_immutable(secret_pkg):
    view = blind_view(secret_pkg, 5)
    with pytest.raises(AttributeError):
        view.budget = 99  # type: ignore[misc]
    with pytest.raises(AttributeError):
        view.candidates[0].cost = 0  # type: ignore[misc]
    with pytest.raises(TypeError):
        view.candidates[0] = None  # type: ignore[index]
    with pytest.raises(TypeError):
        view._candidate_index["x"] = None  # type: ignore[index]
    # And inside the worker (the view there is rebuilt from JSON and just as frozen).
    err = _fail(f"{FIX}:mutate_view", secret_pkg, 5)
    assert err.offending == (
        "MUTATE:FrozenInstanceError,FrozenInstanceError,AttributeError,AttributeError",
    )


def test_nothing_sent_to_the_worker_points_to_the_package(secret_pkg, secret_path, monkeypatch):
    seen: list[dict] = []
    real = subprocess.Popen

    class Spy(real):  # type: ignore[misc, valid-type]
        def __init__(self, args, **kw):
            super().__init__(args, **kw)
            record = {
                "args": list(args),
                "env": dict(kw.get("env") or {}),
                "cwd": kw.get("cwd"),
                "data": b"",
            }
            seen.append(record)
            inner = self.stdin

            class Tap:
                def write(self, data):
                    record["data"] += data
                    return inner.write(data)

                def close(self):
                    inner.close()

            self.stdin = Tap()

    monkeypatch.setattr(subprocess, "Popen", Spy)
    plugins.clear_cache()
    run_writer("recency", compile_cached(secret_pkg), 5, package=secret_pkg)
    assert len(seen) == 1
    rec = seen[0]
    blob = json.dumps({k: v for k, v in rec.items() if k != "data"}) + rec["data"].decode()
    assert NEEDLE not in blob and str(secret_path) not in blob and ".json" not in blob
    assert rec["args"][:4] == [sys.executable, "-P", "-s", "-c"]
    assert set(rec["env"]) == set(plugins._worker_env())  # built from scratch, nothing inherited
    assert os.path.basename(rec["cwd"]).startswith("memaudit-writer-")
    assert not os.path.exists(rec["cwd"])  # the scratch directory is removed afterwards


def test_snoop_finds_nothing_in_the_worker(secret_pkg, landlock):
    report = _snoop_report(_fail(SNOOP, secret_pkg, 5))
    # The worker never loads the package model, the instance, the analysis or numpy
    # (saturation_caches, where plugins registers its run cache, holds only hooks: stdlib).
    assert set(report["modules"]) <= {
        "memaudit_core",
        "memaudit_core.errors",
        "memaudit_core.plugins",
        "memaudit_core.saturation_caches",
    }, report["modules"]
    assert not any(a.endswith(".json") for a in report["argv"])
    assert set(report["environ_keys"]) == set(plugins._worker_env())
    # Not vacuous: the probes walked a real heap.
    assert report["gc_objects"] > 1000 and report["view_nodes"] > 1000
    in_process = [f for f in report["found"] if f["route"] in IN_PROCESS_ROUTES]
    assert in_process == [], in_process
    if landlock:
        assert report["found"] == [], report["found"]
        for route in (
            "parent_cmdline",
            "parent_environ",
            "parent_fds",
            "parent_memory",
            "fd_list",
            "fs:/tmp",
        ):
            assert report["routes"][route].startswith("denied"), (route, report["routes"])


def test_snoop_positive_control_finds_the_data_in_this_process(secret_pkg):
    from plugin_fixtures.snoop_writer import scan

    compile_cached(secret_pkg)  # hold the package and its instance, as the parent does
    report = scan(None, parent=False, filesystem=False)
    routes = {f["route"] for f in report["found"]}
    assert "gc" in routes and "sys.modules" in routes
    assert any("coverage" in f["what"] for f in report["found"])


def test_snoop_with_the_package_path_on_the_parents_command_line(secret_path, landlock):
    """The parent's cmdline holds the package path here; the sandbox must keep it out."""
    if not landlock:
        # Documented threat model: without Landlock a same-user worker can read the parent's
        # /proc; the product must then say so rather than claim a sandbox.
        assert WORKER_STATS.last_sandbox.startswith("none (")
        return
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), str(REPO / "tests")]))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "memaudit_core",
            "score",
            str(secret_path),
            "--budget",
            "5",
            "--writer-module",
            SNOOP,
            "--json",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 2, proc.stderr
    # The report is the offending id (QA s42: the stderr message quotes ids cut to 200
    # characters; the error object keeps up to 1,000).
    (report_id,) = json.loads(proc.stdout)["error"]["offending"]
    match = re.fullmatch(r"SNOOP-REPORT:(\{.*\})", report_id)
    assert match, report_id
    report = json.loads(match.group(1))
    assert report["found"] == [], report["found"]
    assert report["routes"]["parent_cmdline"].startswith("denied")


def test_sandbox_blocks_files_and_the_parents_proc(tmp_path, landlock):
    if not landlock:  # nothing to block without Landlock; the product must say so
        assert WORKER_STATS.last_sandbox.startswith("none (")
        return
    secret = tmp_path / "secret.txt"
    secret.write_text("the hidden weights", encoding="utf-8")
    for target in (str(secret), f"/proc/{os.getpid()}/environ", f"/proc/{os.getpid()}/cmdline"):
        doc = _secret_doc()
        doc["experiences"][0]["text"] = f"PROBE={target}"
        path = tmp_path / "probe.json"
        path.write_text(json.dumps(doc), encoding="utf-8")
        pkg = load_package(str(path))
        (res,) = run_blind_batch(
            "probe", f"{FIX}:probe_file", compile_cached(pkg), [5], package=pkg
        )
        assert isinstance(res, PluginWriterError) and res.offending[0].startswith("DENIED:"), res
        # Without the sandbox the same probe succeeds: this is what Landlock adds.
        (open_res,) = run_blind_batch(
            "probe-open", f"{FIX}:probe_file", compile_cached(pkg), [5], package=pkg, sandbox=False
        )
        assert open_res.offending[0].startswith("READ:"), open_res


def test_plugins_can_import_their_dependencies_in_the_sandbox(secret_pkg):
    res = run_writer(f"{FIX}:uses_numpy", compile_cached(secret_pkg), 5, package=secret_pkg)
    assert res.cost <= 5 and res.selected


# --------------------------------------------------------------------------- answers


@pytest.mark.parametrize(
    ("fn", "reason", "offending"),
    [
        ("unknown_ids", "unknown_id", ("no-such-candidate", "also-missing")),
        ("two_per_group", "group_capacity", ("e1:fact", "e1:raw")),
        ("over_budget", "over_budget", ("e1:fact", "e2:fact", "e3:tomb")),
        ("duplicates", "duplicate_id", ("e1:fact",)),
        ("not_a_list", "not_a_list", ("'e1:fact'",)),
        ("a_dict", "not_a_list", ("{'keep': ['e1:fact']}",)),
        ("non_string_items", "not_a_string", ("1", "None")),
    ],
)
def test_invalid_answers_name_the_offending_ids(secret_pkg, fn, reason, offending):
    err = _fail(f"{FIX}:{fn}", secret_pkg, 3)
    assert isinstance(err, WriterError)
    assert err.reason == reason and err.offending == offending
    assert err.budget == 3.0
    for cid in offending:
        assert cid in str(err)


def test_validate_answer_reports_every_broken_rule():
    cands = {"a": ("g1", 2.0), "b": ("g1", 2.0), "c": ("g2", 5.0)}
    payload = {"type": "list", "items": ["a", "b", "a", "zz", "c"], "bad": []}
    with pytest.raises(PluginWriterError) as exc:
        validate_answer("w", payload, cands, budget=4)
    rules = [rule for rule, _ in exc.value.problems]
    assert rules == ["duplicate_id", "unknown_id", "group_capacity", "over_budget"]
    assert exc.value.offending[:4] == ("a", "zz", "b", "c")
    assert validate_answer("w", {"type": "list", "items": ["b", "c"], "bad": []}, cands, 7) == (
        "b",
        "c",
    )
    # Budget tolerance is the instance's (1e-9 relative).
    assert validate_answer("w", {"type": "list", "items": ["c"], "bad": []}, cands, 5 - 1e-12)


def test_raising_plugin_reports_its_traceback(secret_pkg):
    err = _fail(f"{FIX}:raises", secret_pkg, 4)
    assert err.reason == "raised" and "boom from plugin at budget 4" in str(err)
    tb = err.plugin_traceback
    assert "fixture_writers.py" in tb and "_deep_helper" in tb
    assert "plugins.py" not in tb  # the worker's own frames are not the plugin's business


def test_timeout_is_reported_and_cached(secret_pkg):
    plugins.clear_cache()
    t0 = time.perf_counter()
    err = _fail(f"{FIX}:slow", secret_pkg, 4, timeout=1.0)
    assert time.perf_counter() - t0 < 15
    assert err.reason == "timeout" and "timed out after 1 s" in str(err)
    spawns = WORKER_STATS.spawns
    again = _fail(f"{FIX}:slow", secret_pkg, 4, timeout=1.0)
    assert again.reason == "timeout" and WORKER_STATS.spawns == spawns


@pytest.mark.parametrize("timeout", ["10", -1, 0, math.nan, True])
def test_bad_timeouts_are_refused_before_any_worker_starts(secret_pkg, timeout):
    """QA: -1 raised a bare ValueError, 0 blamed the writer, "10" and NaN were accepted."""
    plugins.clear_cache()
    spawns = WORKER_STATS.spawns
    with pytest.raises(MemAuditError, match="timeout must be a finite number of seconds > 0"):
        plugins.run_blind_batch(
            "recency",
            f"{FIX}:slow",
            compile_cached(secret_pkg),
            [4],
            package=secret_pkg,
            timeout=timeout,
        )
    assert WORKER_STATS.spawns == spawns


def test_crashing_plugin(secret_pkg):
    err = _fail(f"{FIX}:crash", secret_pkg, 4)
    assert err.reason == "crashed" and "exit status 3" in str(err)
    assert "about to crash" in (err.plugin_traceback or "")


def test_printing_plugin_does_not_corrupt_the_protocol(secret_pkg, capsys):
    res = run_writer(f"{FIX}:noisy", compile_cached(secret_pkg), 5, package=secret_pkg)
    assert res.selected and res.cost <= 5
    # ... and its author sees the prints, on our stderr, labelled (QA: they were dropped).
    err = capsys.readouterr().err
    assert f"[{FIX}:noisy] hello from a noisy plugin on stdout" in err


def test_blind_run_without_the_package_finds_it_by_hash(secret_pkg):
    inst = compile_cached(secret_pkg)  # registers the package for its content hash
    a = run_writer("recency", inst, 5)
    b = run_writer("recency", inst, 5, package=secret_pkg)
    assert a == b


def test_pool_instances_show_only_their_candidates(secret_pkg):
    pool = compile_cached(secret_pkg).pool_instance("no_validity")
    view = blind_view(secret_pkg, 5, pool)
    assert {c.type for c in view.candidates} <= {"atomic_fact", "raw_span"}
    res = run_writer("compact_validity", pool, 5, package=secret_pkg)
    assert all(
        pool.candidate_types[i] not in ("tombstone", "compound_update") for i in res.selected_idx
    )


# --------------------------------------------------------------------------- registry


def test_registry_kinds_and_sources():
    writers = all_writers()
    assert list(writers)[:7] == list(WRITERS)  # reference writers first, iteration unchanged
    for b in BUNDLED:
        info = writers[b.name]
        assert info.kind == "blind" and info.spec == b.spec and info.source == "bundled example"
        assert b.name in WRITERS and WRITERS[b.name] is info  # lookups see plugins
    assert {w.kind for w in writers.values()} == {"oracle", "blind"}


def test_writer_module_names_and_kinds():
    info = plugins.register_module_writer(f"{FIX}:rich")
    assert (info.name, info.kind) == ("fixture_rich", "blind")
    assert info.source == f"--writer-module {FIX}:rich"
    assert get_writer(f"{FIX}:rich") is info  # the spec resolves too
    unnamed = get_writer(f"{FIX}:unnamed")  # registered on first use
    assert unnamed.name == f"{FIX}:unnamed" and unnamed.description.startswith("Test: no name")
    oracle = plugins.register_module_writer(f"{FIX}:oracle_gvt")
    assert (oracle.name, oracle.kind) == ("fixture_oracle", "oracle")
    pkg = generate("update_chain")
    inst = compile_cached(pkg)
    assert run_writer("fixture_oracle", inst, 6).selected == run_writer("gvt", inst, 6).selected


def test_unknown_and_broken_modules():
    with pytest.raises(UnknownNameError):
        get_writer("no_such_writer")
    with pytest.raises(PluginWriterError, match="cannot find module"):
        plugins.register_module_writer("no_such_module_xyz:fn")
    with pytest.raises(PluginWriterError, match="AttributeError") as exc:
        plugins.register_module_writer(f"{FIX}:missing_function")
    assert exc.value.reason == "load"
    with pytest.raises(PluginWriterError, match="module:function"):
        plugins.register_module_writer("not a spec")


def test_entry_points_are_discovered(tmp_path, monkeypatch):
    dist = tmp_path / "fake_writers-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-writers\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        f"[memaudit.writers]\nfixture_ep = {FIX}:unnamed\ngvt = {FIX}:rich\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        plugins.discover(force=True)
        info = get_writer("fixture_ep")
        assert info.kind == "blind" and info.source == "entry point (fake-writers)"
        assert any("gvt" in w and "taken" in w for w in plugins.DISCOVERY_WARNINGS)
        rc, out, _ = _cli("writers", "--json")
        listing = {w["name"]: w for w in json.loads(out)["writers"]}
        assert listing["fixture_ep"]["source"] == "entry point (fake-writers)"
        assert listing["gvt"]["kind"] == "oracle" and listing["recency"]["kind"] == "blind"
    finally:
        PLUGIN_WRITERS.pop("fixture_ep", None)
        plugins.DISCOVERY_WARNINGS.clear()


def test_pyproject_declares_the_bundled_examples():
    data = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    declared = data["project"]["entry-points"][plugins.ENTRY_POINT_GROUP]
    assert declared == {b.name: b.spec for b in BUNDLED}


def test_cache_follows_the_plugin_file(tmp_path, monkeypatch):
    mod = tmp_path / "editable_plugin.py"
    mod.write_text("def w(view):\n    return [view.candidates[0].id]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    pkg = generate("update_chain")
    inst = compile_cached(pkg)
    first = run_writer("editable_plugin:w", inst, 6, package=pkg)
    spawns = WORKER_STATS.spawns
    assert run_writer("editable_plugin:w", inst, 6, package=pkg) == first
    assert WORKER_STATS.spawns == spawns  # cached
    mod.write_text("def w(view):\n    return [view.candidates[1].id]\n")
    os.utime(mod, ns=(time.time_ns() + 10**9, time.time_ns() + 10**9))
    assert run_writer("editable_plugin:w", inst, 6, package=pkg).selected != first.selected


# --------------------------------------------------------------------------- example writers


@pytest.mark.parametrize("name", [b.name for b in BUNDLED])
def test_bundled_examples_match_in_process_and_stay_feasible(name):
    from memaudit_core import example_writers

    fn = getattr(example_writers, name)
    for sample in ("veg-to-pescatarian", "update_chain", "event-graph-50"):
        pkg = load_package(str(REPO / "sample_packages" / f"{sample}.json"))
        inst = compile_cached(pkg)
        budgets = pkg.budget_grid()
        results = run_blind_batch(name, get_writer(name).spec, inst, budgets, package=pkg)
        for b, ids in zip(budgets, results, strict=True):
            assert isinstance(ids, tuple), ids
            assert tuple(fn(blind_view(pkg, b, inst))) == ids  # the worker is faithful
            assert inst.is_feasible(inst.indices(ids), b)


def test_example_writer_behaviour():
    pkg = generate("update_chain")
    inst = compile_cached(pkg)
    rec = run_writer("recency", inst, 6, package=pkg)
    # Newest first, each experience's cheapest candidate: the three tombstones, then the
    # cheapest of version_0.
    assert set(rec.selected) == {
        "update_1_tombstone",
        "update_2_tombstone",
        "update_3_tombstone",
        "version_0_atomic_fact",
    }
    cv = run_writer("compact_validity", inst, 6, package=pkg)
    assert "update_3_compound_update" in cv.selected
    est = run_writer("estimated_gvt", inst, 13, package=pkg)
    assert est.cost <= 13 and est.value > rec.value


def test_example_writers_are_blind():
    import ast

    tree = ast.parse((REPO / "memaudit_core" / "example_writers.py").read_text(encoding="utf-8"))
    imports = {
        "." * n.level + (n.module or "") for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
    }
    imports |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert imports <= {"__future__", "re", ".plugins"}, imports


# --------------------------------------------------------------------------- sweeps


def test_sweep_continues_past_a_failing_writer():
    packages = [generate("memaudit-small", seed=s) for s in range(3)]
    get_writer(f"{FIX}:over_budget_small")  # registered (described) before counting
    spawns = WORKER_STATS.spawns
    plugins.clear_cache()
    res = sweep(packages, [4, 8, 16], ["gvt", "recency", f"{FIX}:over_budget_small"])
    # One worker per (package, blind writer), all budgets at once.
    assert WORKER_STATS.spawns - spawns == 2 * len(packages)
    methods = {(r.method, r.budget) for r in res.rows}
    assert {("gvt", b) for b in (4.0, 8.0, 16.0)} <= methods
    assert {("recency", b) for b in (4.0, 8.0, 16.0)} <= methods
    assert ("plugin_fixtures.fixture_writers:over_budget_small", 16.0) in methods
    failed = {(e.package_id, e.budget) for e in res.errors}
    assert failed == {(p.id, b) for p in packages for b in (4.0, 8.0)}
    for e in res.errors:
        assert e.reason == "over_budget" and e.offending and e.kind == "blind"
    d = res.to_dict()
    assert d["errors"] and d["errors"][0]["offending"]
    summary = {(s.method, s.budget): s for s in res.summary}
    assert summary[("plugin_fixtures.fixture_writers:over_budget_small", 4.0)].n == 0
    assert summary[("recency", 4.0)].n == 3


def test_cli_sweep_reports_the_error_and_keeps_the_rest():
    rc, out, err = _cli(
        "sweep",
        "--family",
        "update_chain",
        "--budgets",
        "3,6",
        "--writers",
        "gvt",
        "--writer-module",
        f"{FIX}:unknown_ids",
        "--writer-module",
        f"{FIX}:rich",
        "--json",
        "--quiet",
    )
    assert rc == 2  # a failing writer is a user error, as in a suite; the rest is printed
    data = json.loads(out)
    assert {r["method"] for r in data["rows"]} == {"gvt", "fixture_rich"}
    assert len(data["errors"]) == 2
    assert data["errors"][0]["offending"] == ["no-such-candidate", "also-missing"]
    assert "no-such-candidate" in err and "Traceback" not in err
    rc, out, err = _cli(
        "--debug",
        "sweep",
        "--family",
        "update_chain",
        "--budgets",
        "3",
        "--writers",
        "gvt",
        "--writer-module",
        f"{FIX}:raises",
        "--quiet",
    )
    assert rc == 2 and "boom from plugin" in err and "_deep_helper" in err


# --------------------------------------------------------------------------- CLI


def test_cli_score_with_a_writer_module():
    rc, out, _ = _cli(
        "score", str(VEG), "--budget", "12", "--writer-module", f"{FIX}:rich", "--json"
    )
    assert rc == 0
    data = json.loads(out)
    assert data["writer"] == "fixture_rich" and data["source_kind"] == "writer"
    pkg = load_package(str(VEG))
    ev = score(pkg, 12, writer="fixture_rich")
    assert data["value"] == ev.value and data["ratio"] == ev.ratio


def test_cli_shows_plugin_traceback_only_with_debug():
    rc, _, err = _cli("score", str(VEG), "--budget", "6", "--writer-module", f"{FIX}:raises")
    assert rc == 2
    assert "boom from plugin at budget 6" in err and "Traceback" not in err
    assert "--debug" in err
    rc, _, err = _cli(
        "--debug", "score", str(VEG), "--budget", "6", "--writer-module", f"{FIX}:raises"
    )
    assert rc == 2 and "Traceback" in err and "_deep_helper" in err
    rc, _, err = _cli("score", str(VEG), "--budget", "6", "--writer-module", f"{FIX}:two_per_group")
    assert rc == 2 and "e1:fact" in err and "e1:summary" in err and "more than 1 candidate" in err
    rc, _, err = _cli("score", str(VEG), "--budget", "6", "--writer-module", "nope_mod:fn")
    assert rc == 2 and "cannot find module 'nope_mod'" in err


def test_cli_writers_lists_kind_and_source():
    rc, out, _ = _cli("writers", "--writer-module", f"{FIX}:rich")
    assert rc == 0
    assert re.search(r"fixture_rich\s+blind\s+--writer-module", out)
    assert re.search(r"estimated_gvt\s+blind\s+bundled example", out)
    assert re.search(r"gvt\s+oracle\s+reference", out)


# --------------------------------------------------------------------------- app


def _app(page: str, store: str, budget: float) -> AppTest:
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.query_params["package"] = "sample:veg-to-pescatarian"
    at.query_params["budget"] = str(budget)
    at.query_params["store"] = store
    at.run()
    at.switch_page(page).run()
    return at


def test_app_and_cli_agree_on_a_plugin_writer():
    plugins.register_module_writer(f"{FIX}:rich")
    plugins.clear_cache()
    at = _app("pages/2_Compare.py", "writer:fixture_rich", 12)
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    metrics = {m.label: m.value for m in at.metric}
    rc, out, _ = _cli(
        "score", str(VEG), "--budget", "12", "--writer-module", f"{FIX}:rich", "--json"
    )
    data = json.loads(out)
    assert metrics["F (store)"] == f"{data['value']:.4f}"
    assert metrics[next(k for k in metrics if k.startswith("Ratio"))] == data["ratio_text"]
    # The picker lists plugin writers with their kind.
    labels = at.selectbox(key="w_store").options
    assert "writer · recency (blind)" in labels and "writer · fixture_rich (blind)" in labels
    assert "writer · gvt (oracle)" in labels
    # Reruns reuse the cached run: no new worker.
    spawns = WORKER_STATS.spawns
    at.run()
    assert WORKER_STATS.spawns == spawns


def test_app_shows_a_failing_plugin_without_a_traceback():
    name = f"{FIX}:unknown_ids"
    plugins.register_module_writer(name)
    at = _app("pages/2_Compare.py", f"writer:{name}", 6)
    assert not at.exception, [e.value for e in at.exception]
    text = " ".join(e.value for e in at.error)
    assert "failed at budget 6" in text and "no-such-candidate" in text
    assert "Traceback" not in text


def test_blind_writers_in_robustness_checks():
    from memaudit_core import robustness

    pkg = generate("update_chain")
    compile_cached(pkg)
    spawns = WORKER_STATS.spawns
    robustness.noise_sensitivity(pkg, draws=4, budgets=[6], writers=["gvt", "recency"])
    # Perturbed coverage leaves the blind view unchanged: one run serves every draw.
    assert WORKER_STATS.spawns - spawns <= 1
    robustness.cost_rule_sensitivity(pkg, budgets=[6], writers=["gvt", "recency"])


def test_a_sweep_suite_records_a_failing_writer_and_keeps_the_rest(tmp_path):
    """CLI QA: `sweep --family A:B` with a failing plugin writer stopped with exit 2 and no
    output, where the plain sweep kept the other rows and listed the failures."""
    # Two packages of a seeded family (QA s44: update_chain's seeds are one package).
    argv = ["sweep", "--family", "memaudit-small:0-1", "--budgets", "3,6", "--writers", "gvt"]
    argv += ["--writer-module", f"{FIX}:raises", "--json", "--quiet"]
    rc, out, err = _cli(*argv, "--out", str(tmp_path / "run"), "--no-figures")
    assert rc == 2 and "boom from plugin" in err and "Traceback" not in err
    data = json.loads(out)
    assert {r["method"] for r in data["rows"]} == {"gvt"} and len(data["rows"]) == 4
    assert len(data["errors"]) == 4 and {e["writer"] for e in data["errors"]} == {f"{FIX}:raises"}
    # Resumed from the journal: the rows are reused and only the failed tasks run again
    # (researcher QA: a failure, e.g. a timeout, was reused for ever), failing the same way.
    rc, out, _ = _cli(*argv, "--out", str(tmp_path / "run"), "--no-figures")
    again = json.loads(out)
    assert rc == 2 and again["executed"] == 4 and again["reused"] == 4
    assert again["rows"] == data["rows"] and again["errors"] == data["errors"]


def test_sweep_of_package_files_exits_2_when_a_writer_fails():
    """The plain sweep of a package file, not only the suite path of ``--family`` above."""
    rc, out, err = _cli(
        "sweep",
        str(REPO / "sample_packages" / "update_chain.json"),
        "--budgets",
        "3,6",
        "--writers",
        "gvt",
        "--writer-module",
        f"{FIX}:unknown_ids",
        "--json",
        "--quiet",
    )
    data = json.loads(out)
    assert data["errors"], "the fixture writer must fail for this test to mean anything"
    assert {r["method"] for r in data["rows"]} == {"gvt"}
    assert rc == 2, err
    assert "no-such-candidate" in err and "Traceback" not in err
