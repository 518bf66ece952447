"""Plugin writers on every path (QA s39, h6): a sweep's Dask workers get each plugin writer's
module:function and the --writer-timeout, names stay lists, every sweep says its writers'
kinds, score names a writer as sweep does, the Budget sweep page shows failures as errors, and
a writer's load errors say what to do.

The writer modules are QA's (tests/plugin_fixtures/s39_writers.py, s39_sibling/,
s39_pkg_writer/). The Dask tests start their own local cluster on free ports (as
tests/test_audit_suites.py does).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from cli_utils import run_cli
from dask_utils import local_cluster
from streamlit.testing.v1 import AppTest

import memaudit_core as ma
from memaudit_core import plugins
from memaudit_core.curves import budget_curve
from memaudit_core.suites import sweep_suite
from memaudit_core.writers import PLUGIN_WRITERS

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
APP = REPO / "app.py"
UPDATE_CHAIN = str(REPO / "sample_packages" / "update_chain.json")
MOD = "plugin_fixtures.s39_writers"
OWN_NAMES = ("s39_cheap_first", "s39 has space, comma", f"{MOD}:slow", "s39_boom")


@pytest.fixture(autouse=True)
def _clean(monkeypatch):
    """The CLI sets the timeout and the module list for its pool processes in this process:
    restored after each test, as are the writers registered here."""
    monkeypatch.setattr(plugins, "DEFAULT_TIMEOUT", plugins.DEFAULT_TIMEOUT)
    monkeypatch.delenv(plugins.WRITER_TIMEOUT_ENV, raising=False)
    monkeypatch.delenv(plugins.WRITER_MODULES_ENV, raising=False)
    yield
    for name in OWN_NAMES:
        PLUGIN_WRITERS.pop(name, None)
    if "s39_boom" in ma.WRITERS:
        ma.unregister_writer("s39_boom")


@pytest.fixture(scope="module")
def scheduler():
    """A local Dask cluster started before any test registers a writer or sets a timeout:
    its worker processes know only what a sweep sends them."""
    with local_cluster() as address:
        yield address


def _sweep_json(*argv: str) -> tuple[int, dict, str]:
    rc, out, err = run_cli("sweep", *argv, "--json", "--quiet")
    return rc, (json.loads(out) if out.strip() else {}), err


# --------------------------------------------------------------------------- defect 2


def test_a_dask_sweep_stops_a_slow_writer_at_writer_timeout(scheduler):
    # Before: the workers ran the writer with the default 60 s, it returned [] after 20 s and
    # its rows were kept with value 0.
    t0 = time.perf_counter()
    rc, doc, err = _sweep_json(
        "--family",
        "memaudit-small:0",
        "--budgets",
        "2",
        "--writers",
        "",
        "--writer-module",
        f"{MOD}:slow",
        "--writer-timeout",
        "1",
        "--scheduler",
        scheduler,
    )
    elapsed = time.perf_counter() - t0
    assert rc == 2, err
    assert doc["rows"] == []
    assert [(e["writer"], e["budget"]) for e in doc["errors"]] == [(f"{MOD}:slow", 2.0)]
    assert doc["errors"][0]["reason"] == "timeout"
    assert "timed out after 1 s" in doc["errors"][0]["error"]
    assert elapsed < 15  # the writer sleeps 20 s


# --------------------------------------------------------------------------- defect 3


def test_a_dask_sweep_runs_a_writer_named_by_its_decorator(scheduler):
    # Before: "memaudit-small:0: unknown writer 's39_cheap_first'" (workers got names only).
    rc, doc, err = _sweep_json(
        "--family",
        "memaudit-small:0",
        "--budgets",
        "2,4",
        "--writers",
        "gvt",
        "--writer-module",
        f"{MOD}:named",
        "--scheduler",
        scheduler,
    )
    assert rc == 0, err
    assert doc["errors"] == []
    rows = sorted((r["method"], r["budget"]) for r in doc["rows"])
    assert rows == [("gvt", 2.0), ("gvt", 4.0), ("s39_cheap_first", 2.0), ("s39_cheap_first", 4.0)]
    assert doc["method_kinds"] == {"gvt": "oracle", "s39_cheap_first": "blind"}


def test_a_process_pool_suite_runs_a_writer_registered_in_the_library():
    # A library user's registration reaches pool processes too (before: only the CLI's
    # MEMAUDIT_WRITER_MODULES did, so sweep_suite failed with an unknown writer).
    plugins.register_module_writer(f"{MOD}:named")
    res = sweep_suite(
        families=["memaudit-small:0-1"], budgets=[2], writers=["s39_cheap_first"], workers=2
    )
    assert res.errors == ()
    assert sorted((r.seed, r.method) for r in res.rows) == [
        (0, "s39_cheap_first"),
        (1, "s39_cheap_first"),
    ]


# --------------------------------------------------------------------------- defect 4


@pytest.mark.parametrize(
    "source",
    [[UPDATE_CHAIN, "--budgets", "4,6"], ["--family", "update_chain:0", "--budgets", "4,6"]],
    ids=["package-file", "family"],
)
def test_a_plugin_named_with_a_comma_is_refused_at_loading(source):
    # Before: joined with "," and split again into "s39 has space" and "comma" (unknown). It
    # then swept under its name only when no --writers named it (`--writers 's39 has space,
    # comma'` is two names): since QA s46 such a name is refused when the plugin loads.
    rc, doc, err = _sweep_json(*source, "--writers", "gvt", "--writer-module", f"{MOD}:comma")
    assert rc == 2 and doc["error"]["type"] == "PluginWriterError", err
    assert f"writer '{MOD}:comma' (file " in doc["error"]["message"]
    assert "'s39 has space, comma' contains a comma" in doc["error"]["message"]
    assert "s39 has space, comma" not in PLUGIN_WRITERS


# --------------------------------------------------------------------------- defect 5


def test_a_sweep_of_package_files_says_its_method_kinds():
    # Before: "method_kinds": {} on this path (the suite path filled it).
    rc, doc, err = _sweep_json(
        UPDATE_CHAIN,
        "--budgets",
        "6",
        "--writers",
        "gvt",
        "--writer-module",
        f"{MOD}:named",
        "--ablations",
        "no_validity",
    )
    assert rc == 0, err
    assert doc["method_kinds"] == {
        "gvt": "oracle",
        "s39_cheap_first": "blind",
        "no_validity_opt": "ablation",
    }


# --------------------------------------------------------------------------- defect 7


def test_score_names_a_plugin_by_its_registered_name_and_kind(tmp_path):
    # Before: labelled "plugin_fixtures.s39_writers:named", and no kind anywhere.
    rc, out, err = run_cli("score", UPDATE_CHAIN, "--budget", "6", "--writer", f"{MOD}:named")
    assert rc == 0, err
    assert out.splitlines()[0] == "s39_cheap_first (blind) on 'update_chain' at budget 6 words"
    rc, raw, err = run_cli(
        "score", UPDATE_CHAIN, "--budget", "6", "--writer", f"{MOD}:named", "--json"
    )
    doc = json.loads(raw)
    assert (doc["label"], doc["writer"], doc["writer_kind"]) == (
        "s39_cheap_first",
        "s39_cheap_first",
        "blind",
    )
    saved = tmp_path / "score.json"
    saved.write_text(raw)
    rc, shown, err = run_cli("show", str(saved))
    assert rc == 0, err
    assert shown.splitlines()[0] == "s39_cheap_first (blind) on 'update_chain' at budget 6 words"


def test_score_labels_a_reference_writer_oracle():
    rc, out, err = run_cli("score", UPDATE_CHAIN, "--budget", "6", "--writer", "density")
    assert rc == 0, err
    assert out.splitlines()[0] == "density (oracle) on 'update_chain' at budget 6 words"


# --------------------------------------------------------------------------- defect 8


def _boom(inst, budget):
    raise ValueError("s39 boom")


def test_a_curve_keeps_writer_failures_apart_from_its_notes():
    # Before: the failure was one of the notes, which the page showed with st.info.
    ma.register_writer(ma.WriterInfo("s39_boom", "fails on purpose", "oracle", _boom))
    curve = budget_curve(ma.load_package(UPDATE_CHAIN), [3, 6], ["gvt", "s39_boom"])
    assert len(curve.errors) == 1
    assert curve.errors[0].startswith("Writer 's39_boom' failed at budget(s) 3, 6")
    assert "raised ValueError: s39 boom" in curve.errors[0]
    assert not any("s39_boom" in n for n in curve.notes)
    assert curve.to_dict()["errors"] == list(curve.errors)


def test_the_budget_sweep_page_shows_a_failed_writer_as_an_error():
    ma.register_writer(ma.WriterInfo("s39_boom", "fails on purpose", "oracle", _boom))
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.query_params["package"] = "sample:update_chain"
    at.run()
    at.query_params["methods"] = "writer:gvt,writer:s39_boom"
    at.switch_page("pages/1_Budget_sweep.py").run()
    assert not at.exception, [e.value for e in at.exception]
    errors = [e.value.replace("\\", "") for e in at.error]
    assert any(e.startswith("Writer 's39_boom' failed at budget(s)") for e in errors), errors
    assert not any("s39_boom" in i.value.replace("\\", "") for i in at.info)


# --------------------------------------------------------------------------- defect 9


def test_a_writer_that_imports_a_sibling_module_is_told_to_become_a_package(monkeypatch):
    # Before: "cannot load the writer: PermissionError: [Errno 13] Permission denied: ...".
    monkeypatch.syspath_prepend(str(TESTS / "plugin_fixtures" / "s39_sibling"))
    with pytest.raises(plugins.PluginWriterError) as info:
        plugins.register_module_writer("usesib:w")
    text = str(info.value)
    assert "PermissionError" in text and "helper.py" in text
    assert "may read only its own module file, or its own package's folder" in text
    assert "make the writer a package" in text


def test_a_writer_package_reads_its_helper_module(monkeypatch):
    """Regression guard: the way README's plugin section now tells (a package) works."""
    monkeypatch.syspath_prepend(str(TESTS / "plugin_fixtures"))
    pkg = ma.load_package(UPDATE_CHAIN)
    try:
        ev = ma.score(pkg, 6, writer="s39_pkg_writer:w")
    finally:
        PLUGIN_WRITERS.pop("s39_pkg_writer:w", None)
    # helper.pick: the cheapest candidate (ties by id) of the first experience, version_0.
    first = min(pkg.experiences, key=lambda e: (e.time, e.id)).id
    cheapest = min((c.cost, c.id) for c in pkg.candidates if c.experience == first)[1]
    assert ev.selected == (cheapest,)


def test_a_curve_method_naming_a_missing_function_says_so():
    # Before: "method 'plugin_fixtures.s39_writers:nosuch' must look like writer:NAME or
    # store:ID", while ":named" in the same form is accepted.
    pkg = ma.load_package(UPDATE_CHAIN)
    with pytest.raises(ma.MemAuditError) as info:
        budget_curve(pkg, [6], [f"{MOD}:nosuch"])
    text = str(info.value)
    assert "has no attribute 'nosuch'" in text and "must look like" not in text


def test_a_malformed_curve_method_still_says_the_form():
    """Regression guard: "writr:gvt" (no module writr) keeps the message on the form."""
    pkg = ma.load_package(UPDATE_CHAIN)
    with pytest.raises(ma.MemAuditError, match="must look like writer:NAME or store:ID"):
        budget_curve(pkg, [6], ["writr:gvt"])
