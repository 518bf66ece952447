"""Speed, fifty-fifth session. A sweep's process pool: chunks, the window of chunks in flight,
the chunk pickle loaded with the collector paused, the hashes the workers compute for the
notes. Imports: the core and the generators without scipy.optimize, scipy's graph routines or
networkx, which load where they are used (every command, app start and pool worker of a
script paid for them)."""

from __future__ import annotations

import gc
import pickle
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

import memaudit_core.analysis as analysis
from memaudit_core import generate
from memaudit_core.analysis import sweep
from memaudit_core.package import replace_package
from memaudit_core.parallel import chunk_spans, loads_gc_paused


@pytest.mark.parametrize(
    ("n_items", "slots", "per_slot", "max_size"),
    [(500, 2, 16, None), (10, 2, 2, None), (3, 4, 4, None), (7, 1, 1, None), (101, 3, 4, 5),
     (1, 2, 16, None), (64, 2, 16, 50), (1000, 2, 4, 50)],
)  # fmt: skip
def test_chunk_spans_cover_every_item_once_in_balanced_contiguous_chunks(
    n_items, slots, per_slot, max_size
):
    spans = chunk_spans(n_items, slots, per_slot, max_size)
    assert spans[0][0] == 0 and spans[-1][1] == n_items
    assert all(a < b for a, b in spans)
    assert all(spans[k][1] == spans[k + 1][0] for k in range(len(spans) - 1))
    sizes = [b - a for a, b in spans]
    assert max(sizes) - min(sizes) <= 1
    if max_size is not None:
        assert max(sizes) <= max_size
    # As many chunks as asked for, unless the items or the size cap say otherwise.
    wanted = min(n_items, slots * per_slot)
    assert len(spans) == (wanted if max_size is None else max(wanted, -(-n_items // max_size)))
    assert chunk_spans(0, 2, 16) == []


class _Probe:
    """Notes whether the cyclic collector was on while it was unpickled."""

    seen: list[bool] = []

    def __init__(self) -> None:
        self.tag = "probe"  # a state to set, so that __setstate__ is called

    def __setstate__(self, state: dict) -> None:
        _Probe.seen.append(gc.isenabled())
        self.__dict__.update(state)


@pytest.mark.parametrize("enabled_before", [True, False])
def test_loads_gc_paused_loads_with_the_collector_off_and_restores_its_state(enabled_before):
    blob = pickle.dumps([_Probe(), {"a": [1, 2]}])
    _Probe.seen = []
    was = gc.isenabled()
    try:
        (gc.enable if enabled_before else gc.disable)()
        out = loads_gc_paused(blob)
        assert gc.isenabled() is enabled_before
    finally:
        (gc.enable if was else gc.disable)()
    assert _Probe.seen == [False] and out[0].tag == "probe" and out[1] == {"a": [1, 2]}
    with pytest.raises(pickle.UnpicklingError):
        loads_gc_paused(b"not a pickle")
    assert gc.isenabled() is was


class _CountingPool(ThreadPoolExecutor):
    """The sweep's pool in threads: counts chunks handed out and the most not yet done."""

    lock = threading.Lock()
    submitted = 0
    running = 0
    most = 0

    def __init__(self, max_workers=None, mp_context=None, initializer=None, **_ignored):
        super().__init__(max_workers)

    def submit(self, fn, /, *args, **kwargs):
        cls = type(self)
        with cls.lock:
            cls.submitted += 1
            cls.running += 1
            cls.most = max(cls.most, cls.running)

        def done(_):
            with cls.lock:
                cls.running -= 1

        fut = super().submit(fn, *args, **kwargs)
        fut.add_done_callback(done)
        return fut


def test_sweep_pool_hands_out_a_window_of_chunks_and_keeps_package_order(monkeypatch):
    """At most SWEEP_CHUNKS_IN_FLIGHT chunks per worker are handed out at once (each pickled
    as one leaves): the old pool pickled every chunk first, holding the interpreter lock its
    threads needed to send the first one. Rows come back in package order."""
    packages = [generate("memaudit-small", seed=s) for s in range(40)]
    serial = sweep(packages, [2, 6], ["gvt", "density"], ablations=["generic"])
    monkeypatch.setattr(analysis, "SolverPool", _CountingPool)
    monkeypatch.setattr(analysis, "pool_context", lambda: None)
    monkeypatch.setattr(_CountingPool, "submitted", 0)
    monkeypatch.setattr(_CountingPool, "most", 0)
    progress = []
    pooled = sweep(
        packages,
        [2, 6],
        ["gvt", "density"],
        ablations=["generic"],
        workers=2,
        progress=lambda d, n: progress.append((d, n)),
    )
    assert _CountingPool.submitted == len(chunk_spans(40, 2, analysis.SWEEP_CHUNKS_PER_WORKER))
    assert _CountingPool.submitted == 32
    assert 1 <= _CountingPool.most <= analysis.SWEEP_CHUNKS_IN_FLIGHT * 2
    assert pooled.rows == serial.rows and pooled.summary == serial.summary
    assert progress[-1] == (80, 80) and [d for d, _ in progress] == sorted(d for d, _ in progress)


def test_pooled_sweep_notes_count_instances_and_saturations_as_the_serial_one_does():
    """The workers hash their own packages for the notes (repeated instances, mixed
    saturations): the notes of workers=2 are those of workers=1."""
    base = generate("update_chain")
    packages = [replace_package(base, id=f"copy{s}") for s in range(3)]
    packages += [replace_package(generate("memaudit-small", seed=1), saturation="log1p")]
    packages += [generate("memaudit-small", seed=s) for s in range(2, 5)]
    serial = sweep(packages, [3, 6], ["gvt"])
    pooled = sweep(packages, [3, 6], ["gvt"], workers=2)
    assert pooled.notes == serial.notes
    assert any("hold only 5 distinct optimisation instance" in n for n in pooled.notes)
    assert any("2 saturations (cap1: 6 packages, log1p: 1 package)" in n for n in pooled.notes)
    assert pooled.rows == serial.rows


def test_core_imports_leave_scipy_optimize_csgraph_and_networkx_until_used():
    """scipy.optimize (0.4 s), scipy.sparse.csgraph and networkx (0.18 s) load where they
    are used: `memaudit --help` took 0.99 s and `memaudit score` 1.31 s, now 0.65 s and
    0.83 s. A script that generates packages is imported again by each pool worker, and every
    worker imported networkx before its first chunk."""
    heavy = ("scipy.optimize", "scipy.sparse.csgraph", "networkx")
    code = (
        "import sys\n"
        "import memaudit_core.analysis, memaudit_core.cli, memaudit_core.generators as g\n"
        f"heavy = {heavy!r}\n"
        "print(*[m in sys.modules for m in heavy])\n"
        "g.generate('event_graph', seed=0, n_experiences=20)\n"
        "print('networkx' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["False", "False", "False", "True"]


def _counting_generate(monkeypatch):
    import memaudit_core.generators as generators

    calls = []
    real = generators.generate

    def counted(*args, **kwargs):
        calls.append(args[0] if args else kwargs.get("family"))
        return real(*args, **kwargs)

    monkeypatch.setattr(generators, "generate", counted)
    return calls


def test_a_suite_in_one_process_generates_each_package_once(monkeypatch):
    """`memaudit sweep --family` (the suites' engine) in one process generated every package
    twice, to index it and to run its tasks; the run now takes the index's package. The rows
    are those of a run that generates them again (nothing kept: REUSE_MAX_ENTRIES = 0)."""
    from memaudit_core import suites

    kw = {"families": ["memaudit-small"], "seeds": range(12), "budgets": [2, 6],
          "writers": ["gvt", "density"], "ablations": ["generic"], "figures": False}  # fmt: skip
    calls = _counting_generate(monkeypatch)
    once = suites.sweep_suite(**kw)
    assert calls == ["memaudit-small"] * 12
    calls.clear()
    monkeypatch.setattr(suites, "REUSE_MAX_ENTRIES", 0)
    twice = suites.sweep_suite(**kw)
    assert calls == ["memaudit-small"] * 24
    assert once.rows == twice.rows and once.summary == twice.summary and len(once.rows) == 72
    # Under a cap that holds some packages only, the others are generated again.
    calls.clear()
    one_size = sum(1 + len(c.coverage) for c in generate("memaudit-small", seed=0).candidates)
    monkeypatch.setattr(suites, "REUSE_MAX_ENTRIES", 3 * one_size)
    capped = suites.sweep_suite(**kw)
    assert 12 + 1 <= len(calls) <= 12 + 10 and capped.rows == once.rows


def test_kept_packages_are_generated_ones_taken_once_and_only_for_their_content():
    from memaudit_core.suites import PackageSource, _Loaded

    family = PackageSource(kind="family", ref="memaudit-small", seed=3)
    pkg = family.load()
    kept = _Loaded()
    kept.keep(family, pkg)
    assert kept.take(family, "another hash") is None  # dropped: its content was not this
    kept.keep(family, pkg)
    assert kept.take(family, pkg.content_hash()) is pkg
    assert kept.take(family, pkg.content_hash()) is None  # handed out once
    # A file is read again when its tasks run (it may have changed since the index).
    file_src = PackageSource(kind="file", ref="sample_packages/update_chain.json")
    kept.keep(file_src, pkg)
    assert kept.packages == {}
