"""QA s42, plugin writers:

1. the app's cached views kept an edited plugin's old results (keyed without its file stamp);
2. a plugin's offending id was echoed whole (10 MB on stderr, 20 MB in an st.error);
3. unknown ids were printed without quotes (a trailing space was invisible);
4. a link naming a MEMAUDIT_WRITER_MODULES plugin that failed to load was told it is no writer
   the server knows;
5. ``--writer-module`` reported only the first of several modules that failed to load;
and runtime plugin errors named MODULE:FUNCTION but not the plugin's file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from memaudit_core import plugins
from memaudit_core.errors import MemAuditError
from memaudit_core.package import load_package

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "sample_packages" / "update_chain.json"

CHEAPEST_FIRST = """\
def cheapest_first(view):
    kept, spent, seen = [], 0.0, set()
    for c in sorted(view.candidates, key=lambda c: (c.cost, c.id)):
        if c.experience not in seen and spent + c.cost <= view.budget:
            kept.append(c.id); spent += c.cost; seen.add(c.experience)
    return kept
"""


def _module(folder: Path, name: str, text: str) -> Path:
    path = folder / f"{name}.py"
    path.write_text(text)
    return path


def _edit(path: Path, text: str) -> None:
    """Rewrite ``path`` and move its mtime a second on (an edit within one clock tick)."""
    before = path.stat().st_mtime_ns
    path.write_text(text)
    os.utime(path, ns=(before + 10**9, before + 10**9))


# ------------------------------------------------------------------------------- defect 1


def test_app_views_rerun_an_edited_plugin(tmp_path: Path, monkeypatch) -> None:
    """Compare, Evidence, the Overview and the budget curve key on the plugin's file stamp."""
    from memaudit_ui import cached

    monkeypatch.syspath_prepend(str(tmp_path))
    path = _module(tmp_path, "good_s42_stale", CHEAPEST_FIRST)
    spec = "good_s42_stale:cheapest_first"
    plugins.register_module_writer(spec)
    st.cache_data.clear()
    pkg = load_package(SAMPLE)
    h = pkg.content_hash()

    def covered() -> float:
        view = cached.evidence_view(pkg, h, 6.0, f"writer:{spec}", None, None)
        return sum(u.store_coverage for u in view.units)

    def curve_value() -> float:
        # Method keys as the Budget sweep page passes them.
        curve = cached.budget_curve(pkg, h, (6.0,), (f"writer:{spec}",), ())
        (point,) = [p for p in curve.points if p.method_key == f"writer:{spec}"]
        return point.value

    before = cached.compare_view(pkg, h, 6.0, f"writer:{spec}").value
    assert before == pytest.approx(5.65, abs=0.01)  # QA s42's figure at budget 6
    assert covered() > 0
    assert curve_value() == pytest.approx(5.65, abs=0.01)

    _edit(path, "def cheapest_first(view):\n    return []\n")
    assert cached.compare_view(pkg, h, 6.0, f"writer:{spec}").value == 0.0
    assert covered() == 0.0
    assert curve_value() == 0.0


def test_overview_reruns_an_edited_plugin(tmp_path: Path, monkeypatch) -> None:
    from memaudit_ui import cached

    monkeypatch.syspath_prepend(str(tmp_path))
    path = _module(tmp_path, "good_s42_ov", CHEAPEST_FIRST)
    spec = "good_s42_ov:cheapest_first"
    plugins.register_module_writer(spec)
    st.cache_data.clear()
    pkg = load_package(SAMPLE)

    def value() -> float:
        ov = cached.overview(pkg, pkg.content_hash(), 6.0, (spec,))
        (row,) = [e for e in ov.evaluations if spec in e.label]
        return row.value

    assert value() == pytest.approx(5.65, abs=0.01)
    _edit(path, "def cheapest_first(view):\n    return []\n")
    assert value() == 0.0


# ---------------------------------------------------------------------------- defects 2, 3

CANDIDATES = {"version_0_atomic_fact": ("version_0", 1.0)}


def test_a_huge_offending_id_is_cut() -> None:
    payload = plugins._answer_payload(["a" * 10**7])
    with pytest.raises(plugins.PluginWriterError) as info:
        plugins.validate_answer("huge:w", payload, CANDIDATES, 6.0)
    exc = info.value
    assert len(str(exc)) < 2_000
    assert "10,000,000 characters" in str(exc)
    assert len(exc.offending) == 1 and len(exc.offending[0]) <= 1_000
    assert exc.offending[0].startswith("aaaa")
    ((rule, ids),) = exc.problems
    assert rule == "unknown_id" and len(ids[0]) <= 1_000


def test_a_huge_error_survives_pickling_uncut_twice() -> None:
    """A cut id is not cut again when the error comes back from a worker process."""
    import pickle

    exc = plugins.PluginWriterError("w", "m", reason="unknown_id", offending=["b" * 5_000])
    back = pickle.loads(pickle.dumps(exc))
    assert back.offending == exc.offending
    assert back.offending[0].endswith("... (5,000 characters)")


def test_unknown_ids_are_quoted() -> None:
    payload = plugins._answer_payload(["version_0_atomic_fact "])
    with pytest.raises(plugins.PluginWriterError) as info:
        plugins.validate_answer("ws:w", payload, CANDIDATES, 6.0)
    assert "unknown candidate ids: 'version_0_atomic_fact '" in str(info.value)


def _open_link(store: str) -> AppTest:
    """The app opened from a link with ``store``, at budget 6 on the update_chain sample."""
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.query_params["package"] = "sample:update_chain"
    at.query_params["budget"] = "6"
    at.query_params["store"] = store
    return at.run()


def _compare_page(store: str) -> AppTest:
    return _open_link(store).switch_page("pages/2_Compare.py").run()


def test_app_quotes_and_cuts_the_offending_ids(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    _module(tmp_path, "ws_s42", 'def w(view):\n    return ["version_0_atomic_fact "]\n')
    _module(tmp_path, "huge_s42", 'def w(view):\n    return ["a" * 10**7]\n')
    plugins.register_module_writer("ws_s42:w")
    plugins.register_module_writer("huge_s42:w")

    errors = [e.value for e in _compare_page("writer:ws_s42:w").error]
    assert any("Offending: `'version_0_atomic_fact '`" in e for e in errors), errors

    errors = [e.value for e in _compare_page("writer:huge_s42:w").error]
    assert any("huge\\_s42:w" in e for e in errors), errors
    assert max(len(e) for e in errors) < 5_000


# ------------------------------------------------------------------- runtime errors: file


def test_a_runtime_error_names_the_plugin_file(tmp_path: Path, monkeypatch) -> None:
    from memaudit_core.analysis import compile_cached
    from memaudit_core.writers import run_writer

    monkeypatch.syspath_prepend(str(tmp_path))
    path = _module(tmp_path, "raises_s42", "def w(view):\n    raise ValueError('boom')\n")
    plugins.register_module_writer("raises_s42:w")
    pkg = load_package(SAMPLE)
    with pytest.raises(plugins.PluginWriterError) as info:
        run_writer("raises_s42:w", compile_cached(pkg), 6.0, package=pkg)
    assert f"(file {path})" in str(info.value)
    assert "ValueError: boom" in str(info.value)


# ------------------------------------------------------------------------------- defect 4


def test_a_link_to_a_plugin_that_failed_to_load_says_so(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    _module(tmp_path, "missing_s42", "import nonexistent_module_s42\ndef w(view):\n    return []\n")
    monkeypatch.setenv(plugins.WRITER_MODULES_ENV, "missing_s42:w")
    monkeypatch.setattr(plugins, "_discovered", False)
    monkeypatch.setattr(plugins, "DISCOVERY_WARNINGS", [])

    at = _open_link("writer:missing_s42:w")  # the link's problems show on the first page
    warnings = [w.value for w in at.warning]
    assert any(
        "writer missing\\_s42:w failed to load" in w and "ModuleNotFoundError" in w
        for w in warnings
    ), warnings
    assert not any("a writer this server knows" in w for w in warnings), warnings


# ------------------------------------------------------------------------------- defect 5


def test_sweep_reports_every_failing_writer_module(tmp_path: Path) -> None:
    _module(tmp_path, "missing_w", "import nonexistent_module_xyz\ndef w(view):\n    return []\n")
    _module(tmp_path, "syntax_w", "def w(view)\n    return []\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop(plugins.WRITER_MODULES_ENV, None)
    base = [sys.executable, "-m", "memaudit_core.cli", "sweep", str(SAMPLE)]
    mods = ["--writer-module", "missing_w:w", "--writer-module", "syntax_w:w"]
    proc = subprocess.run(
        base + mods, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2
    assert f"missing_w:w' (file {tmp_path / 'missing_w.py'})" in proc.stderr
    assert "ModuleNotFoundError" in proc.stderr
    assert f"syntax_w:w' (file {tmp_path / 'syntax_w.py'})" in proc.stderr
    assert "SyntaxError" in proc.stderr
    assert proc.stderr.count("[reason: load]") == 2

    proc = subprocess.run(
        base + mods + ["--json"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    error = json.loads(proc.stdout)["error"]
    assert [(e["writer"], e["reason"]) for e in error["errors"]] == [
        ("missing_w:w", "load"),
        ("syntax_w:w", "load"),
    ]


def test_one_failing_writer_module_is_reported_as_before() -> None:
    """Regression guard: a single failure is still the PluginWriterError itself."""
    from memaudit_core import cli

    class Args:
        writer_module = ["no_such_module_s42:w"]
        writer_timeout = None

    with pytest.raises(MemAuditError) as info:
        cli._plugin_writers(Args())
    assert type(info.value) is plugins.PluginWriterError
    assert info.value.writer == "no_such_module_s42:w"
