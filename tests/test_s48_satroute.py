"""QA s48 (library, finding 2): a saturation registered with ``register_saturation`` had no
route into the CLI or the app. ``solve`` could not load the module that registers it, ``show``
refused ``score --json``'s own output under it, and the ``known-saturation`` refusal did not
say how to register one. ``--plugin-module`` / ``MEMAUDIT_PLUGIN_MODULES`` is that route."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest
from app_utils import open_app
from cli_utils import run_cli
from oracles import opt_by_enumeration

import memaudit_core as ma

ROOT = Path(__file__).resolve().parents[1]
SAT = "s48_route_log2"
MODULE = "s48_satroute_log2"
MODULE_SOURCE = f"""
import math

import numpy as np

import memaudit_core as ma


def h(z):
    return np.log1p(2 * np.asarray(z, dtype=float))


def h_scalar(z):
    return math.log1p(2 * z)


ma.register_saturation(ma.Saturation({SAT!r}, h, h_scalar, "h(z) = ln(1 + 2z)", math.inf))
"""


@pytest.fixture(scope="module")
def plugin_dir(tmp_path_factory: pytest.TempPathFactory):
    """A folder on sys.path holding the module that registers ``SAT`` on import; the CLI
    imports it (the test never does), and it is unregistered afterwards."""
    folder = tmp_path_factory.mktemp("s48_satroute")
    (folder / f"{MODULE}.py").write_text(MODULE_SOURCE, encoding="utf-8")
    sys.path.insert(0, str(folder))
    yield folder
    sys.path.remove(str(folder))
    sys.modules.pop(MODULE, None)
    if SAT in ma.SATURATIONS:
        ma.unregister_saturation(SAT)


def _package(folder: Path, saturation: str) -> tuple[Path, dict]:
    doc = json.loads((ROOT / "sample_packages" / "update_chain.json").read_text("utf-8"))
    doc["objective"] = {"saturation": saturation}
    path = folder / f"update_chain_{saturation}.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path, doc


def _brute_force_opt(doc: dict, budget: float) -> float:
    """OPT with h(z) = ln(1 + 2 z) written out (the plugin module's saturation)."""
    return opt_by_enumeration(doc, budget, lambda z: math.log1p(2 * z))


def test_solve_and_show_through_plugin_module(plugin_dir: Path, tmp_path: Path) -> None:
    path, doc = _package(plugin_dir, SAT)
    for budget in (3, 6, 13):
        expected = _brute_force_opt(doc, budget)
        # After the command, as its other options go.
        rc, out, err = run_cli(
            "solve", str(path), "--budget", str(budget), "--plugin-module", MODULE, "--json"
        )
        assert rc == 0, err
        res = json.loads(out)
        assert res["saturation"] == SAT
        assert res["certified"] is True
        assert res["value"] == pytest.approx(expected, rel=1e-9, abs=1e-12)

    # score --json under it, then show of that file: before the command this time.
    rc, out, err = run_cli(
        "--plugin-module", MODULE, "score", str(path), "--budget", "6", "--writer", "gvt", "--json"
    )
    assert rc == 0, err
    saved = tmp_path / "score.json"
    saved.write_text(out, encoding="utf-8")
    rc, shown, err = run_cli("--plugin-module", MODULE, "show", str(saved), "--json")
    assert rc == 0, err
    assert json.loads(shown)["opt"]["saturation"] == SAT
    assert json.loads(shown)["opt"]["value"] == pytest.approx(
        _brute_force_opt(doc, 6), rel=1e-9, abs=1e-12
    )


def test_environment_variable_route(plugin_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path, doc = _package(plugin_dir, SAT)
    monkeypatch.setenv("MEMAUDIT_PLUGIN_MODULES", f" {MODULE} ,")
    rc, out, err = run_cli("validate", str(path), "--json")
    assert rc == 0, err
    rc, out, err = run_cli("solve", str(path), "--budget", "13", "--json")
    assert rc == 0, err
    assert json.loads(out)["value"] == pytest.approx(_brute_force_opt(doc, 13), rel=1e-9, abs=1e-12)


def test_unknown_saturation_refusals_name_the_route(tmp_path: Path) -> None:
    path, doc = _package(tmp_path, "s48_never_registered")
    rc, _, err = run_cli("solve", str(path), "--budget", "6")
    assert rc == 2
    assert "[rule: known-saturation]" in err
    assert "--plugin-module MODULE" in err and "MEMAUDIT_PLUGIN_MODULES" in err
    assert "register_saturation" in err

    # A saved result naming a saturation this process does not know (show, read_result).
    doc["objective"] = {"saturation": "cap1"}
    cap1 = tmp_path / "cap1.json"
    cap1.write_text(json.dumps(doc), encoding="utf-8")
    rc, out, err = run_cli("solve", str(cap1), "--budget", "6", "--json")
    assert rc == 0, err
    saved = json.loads(out)
    saved["saturation"] = "s48_never_registered"
    result = tmp_path / "solve.json"
    result.write_text(json.dumps(saved), encoding="utf-8")
    rc, _, err = run_cli("show", str(result))
    assert rc == 2
    assert "$.saturation" in err and "[rule: allowed-value]" in err
    assert "--plugin-module MODULE" in err and "MEMAUDIT_PLUGIN_MODULES" in err


def test_plugin_module_errors_are_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "s48_satroute_boom.py").write_text("raise ValueError('boom')\n", "utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    rc, out, err = run_cli(
        "solve", "x.json", "--plugin-module", "s48_satroute_boom", "--plugin-module", "s48_no_such"
    )
    assert rc == 2
    assert "Traceback" not in err
    assert "s48_satroute_boom (--plugin-module) could not be imported" in err
    assert "ValueError: boom" in err
    assert "cannot find module 's48_no_such'" in err
    rc, out, err = run_cli("schema", "--plugin-module", "mod.py")
    assert rc == 2
    assert "not a module name" in err and "e.g. mod" in err


def test_app_imports_plugin_modules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import memaudit_ui.frame as frame

    sat = "s48_app_log2"
    (tmp_path / "s48_satroute_app.py").write_text(
        MODULE_SOURCE.replace(repr(SAT), repr(sat)), "utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("MEMAUDIT_PLUGIN_MODULES", "s48_satroute_app,s48_app_missing")
    monkeypatch.setattr(frame, "_plugin_module_errors", None)
    try:
        at = open_app()
        assert not at.exception, [e.value for e in at.exception]
        assert sat in ma.SATURATIONS
        errors = [e.value for e in at.sidebar.error]
        assert any("s48_app_missing" in e and "could not be imported" in e for e in errors)
    finally:
        sys.modules.pop("s48_satroute_app", None)
        if sat in ma.SATURATIONS:
            ma.unregister_saturation(sat)
