"""Defects found by the thirty-ninth session's QA round and fixed in the main tree (the
helpers' fixes have test files of their own: test_s39_importers, _cli, _explain, _results,
_plugins)."""

from __future__ import annotations

import numpy as np
import pytest

import memaudit_core as ma
from memaudit_core.analysis import compile_cached
from memaudit_core.errors import MemAuditError
from memaudit_core.writers import WriterInfo, register_writer, unregister_writer

SAMPLES = "sample_packages"


def _one_per_group(inst) -> tuple[int, ...]:
    return tuple(int(inst.group_start[g]) for g in range(inst.n_groups))


def test_an_oracle_writer_cannot_unlock_the_shared_instance():
    """Plugin QA s39 h6 #1: ``inst.cost.setflags(write=True); inst.cost[:] = 1e-6`` in an
    oracle writer changed the instance every caller of that content hash shares, and the
    optima after it were wrong and labelled certified (22.7 at budget 10, true OPT 5.5)."""
    pkg = ma.load_package(f"{SAMPLES}/travel-assistant.json")
    before = ma.solve(compile_cached(pkg), 10)

    def sneaky(inst, budget):
        inst.cost.setflags(write=True)
        inst.cost[:] = 1e-6
        return _one_per_group(inst)

    register_writer(WriterInfo("s39_sneaky", "unlocks costs", "oracle", sneaky))
    try:
        with pytest.raises(MemAuditError, match="WRITEABLE"):
            ma.score(pkg, 10, writer="s39_sneaky")
    finally:
        unregister_writer("s39_sneaky")
    after = ma.solve(compile_cached(pkg), 10)
    assert after.value == before.value == pytest.approx(5.5)
    assert after.certified
    assert ma.score(pkg, 10, writer="gvt").ratio == pytest.approx(4.5 / 5.5)


@pytest.mark.parametrize(
    "path",
    [
        "cost",
        "weight",
        "group_idx",
        "group_start",
        "candidate_times",
        "is_external",
        "coverage.data",
        "coverage.indices",
        "coverage.indptr",
        "coverage_dense",
        "nnz_row",
        "coverage_csc.data",
    ],
)
def test_every_array_of_a_compiled_instance_stays_read_only(path):
    import pickle

    pkg = ma.load_package(f"{SAMPLES}/update_chain.json")
    for inst in (compile_cached(pkg), pickle.loads(pickle.dumps(compile_cached(pkg)))):
        arr = inst
        for part in path.split("."):
            arr = getattr(arr, part)
        assert isinstance(arr, np.ndarray)
        with pytest.raises(ValueError, match="WRITEABLE"):
            arr.setflags(write=True)


def test_the_library_and_the_cli_name_a_writer_and_its_kind_alike(tmp_path):
    """QA s39 (full-suite run after the fix branches merged): the CLI wrote its label as
    "density (oracle)" while ma.score labelled the same evaluation "density", so a saved
    score no longer read back equal to the library's. The kind is a field of the result."""
    import json

    from cli_utils import run_cli

    pkg = ma.load_package(f"{SAMPLES}/update_chain.json")
    ev = ma.score(pkg, 6, writer="density")
    assert (ev.label, ev.writer, ev.writer_kind, ev.title) == (
        "density",
        "density",
        "oracle",
        "density (oracle)",
    )
    rc, out, err = run_cli(
        "score", f"{SAMPLES}/update_chain.json", "--budget", "6", "--writer", "density", "--json"
    )
    assert rc == 0, err
    saved = tmp_path / "s.json"
    saved.write_text(out)
    back = ma.read_result(saved)
    assert (back.label, back.writer_kind) == ("density", "oracle")
    assert json.loads(out)["writer_kind"] == "oracle"
    travel = ma.load_package(f"{SAMPLES}/travel-assistant.json")
    store = ma.score(travel, 40, store_id="fact-extractor")
    assert store.writer_kind is None and store.title == store.label


# --------------------------------------------------------------------------- QA round 2 (CLI)

FIXTURE_WRITERS = "plugin_fixtures.fixture_writers"


def test_a_sweep_names_a_plugin_spec_by_its_registered_name():
    """QA s39 round 2 h3 #1: ``sweep --writers gvt,MOD:rich`` stopped with "internal error:
    KeyError: 'plugin_fixtures.fixture_writers:rich'" (the writer registers as
    fixture_rich)."""
    import json

    from cli_utils import run_cli

    rc, out, err = run_cli(
        "sweep",
        f"{SAMPLES}/travel-assistant.json",
        "--writers",
        f"gvt,{FIXTURE_WRITERS}:rich",
        "--budgets",
        "10",
        "--json",
        "--quiet",
    )
    assert rc == 0, err
    methods = {row["method"] for row in json.loads(out)["rows"]}
    assert {"gvt", "fixture_rich"} <= methods, methods


def test_score_with_one_writer_module_given_twice_scores_it():
    """QA s39 round 2 h3 #5: "give exactly one of --writer NAME, --store ID ..."."""
    from cli_utils import run_cli

    spec = f"{FIXTURE_WRITERS}:rich"
    rc, out, err = run_cli(
        "score",
        f"{SAMPLES}/travel-assistant.json",
        "--writer-module",
        spec,
        "--writer-module",
        spec,
        "--budget",
        "10",
    )
    assert rc == 0, err
    assert out.startswith("fixture_rich (blind) on 'travel-assistant'"), out


def test_the_json_placement_hint_is_shell_quoted():
    """QA s39 round 2 h3 #6: ``memaudit solve a b.json --budget 5 --json`` was suggested for
    a file named "a b.json"."""
    from cli_utils import run_cli

    rc, _, err = run_cli("--json", "solve", "a b.json", "--budget", "5")
    assert rc == 2
    assert "memaudit solve 'a b.json' --budget 5 --json" in err, err


def test_show_json_keeps_the_cost_unit_and_the_writer_kind(tmp_path):
    """QA s39 round 2 h3 #4: ``show --json`` of a saved score dropped cost_unit and
    writer_kind."""
    import json

    from cli_utils import run_cli

    rc, out, err = run_cli(
        "score", f"{SAMPLES}/travel-assistant.json", "--writer", "gvt", "--budget", "10", "--json"
    )
    assert rc == 0, err
    saved = tmp_path / "s.json"
    saved.write_text(out)
    rc, again, err = run_cli("show", str(saved), "--json")
    assert rc == 0, err
    doc = json.loads(again)
    assert (doc["cost_unit"], doc["writer_kind"]) == ("words", "oracle")
    assert doc == json.loads(out)


def test_an_empty_export_is_said_once(tmp_path):
    """QA s39 (fix A's note): `score --external` of an empty Mem0 export printed both
    "note: the export holds no memories" and the importer's warning saying the same."""
    from cli_utils import run_cli

    empty = tmp_path / "empty.json"
    empty.write_text("[]")
    rc, _, err = run_cli(
        "score",
        f"{SAMPLES}/external-stores-demo.json",
        "--external",
        str(empty),
        "--format",
        "mem0",
        "--budget",
        "10",
    )
    assert rc == 0, err
    assert err.count("holds no memories") == 1, err


def test_an_audit_of_a_file_named_twice_says_so(tmp_path):
    """QA s39 round 2 (suites B3, for audit as for sweep): the same file named twice was read
    once without a word."""
    from cli_utils import run_cli

    path = f"{SAMPLES}/update_chain.json"
    rc, out, err = run_cli("audit", path, path, "--budgets", "3", "--out", str(tmp_path / "a"))
    assert rc == 0, err
    assert f"1 package file(s) named more than once: {path} (2 times)" in out + err


def test_a_score_saved_before_writer_kind_still_reads_back(tmp_path):
    """QA s39 round 2 (fix H's finding): 2,628 score files saved before writer_kind existed
    were refused with "$.writer_kind: missing field"; the result version did not change, so
    they must read back (without a kind)."""
    import json

    from cli_utils import run_cli

    rc, out, err = run_cli(
        "score", f"{SAMPLES}/update_chain.json", "--writer", "gvt", "--budget", "6", "--json"
    )
    assert rc == 0, err
    doc = json.loads(out)
    del doc["writer_kind"]
    saved = tmp_path / "old.json"
    saved.write_text(json.dumps(doc))
    back = ma.read_result(saved)
    assert (back.label, back.writer_kind, back.value) == ("gvt", None, doc["value"])
    rc, shown, err = run_cli("show", str(saved))
    assert rc == 0, err
    assert shown.startswith("gvt on 'update_chain' at budget 6 words"), shown


def test_a_cli_sweep_summary_with_a_mean_over_no_ratio_is_refused(tmp_path):
    """QA s39 (fix H's note): the CLI sweep file check accepted a mean on a summary row with
    no defined ratio (n = 0), which library sweep files already refused."""
    import json

    from cli_utils import run_cli

    from memaudit_core.errors import ResultError

    rc, out, err = run_cli(
        "sweep", f"{SAMPLES}/update_chain.json", "--budgets", "0", "--writers", "gvt", "--json"
    )
    assert rc == 0, err
    doc = json.loads(out)
    (row,) = [s for s in doc["summary"] if s["method"] == "gvt"]
    assert row["n"] == 0 and row["mean_ratio"] is None
    genuine = tmp_path / "sweep.json"
    genuine.write_text(out)
    ma.read_result(genuine)  # the genuine file reads back
    row["mean_ratio"] = 0.5
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(doc))
    with pytest.raises(ResultError, match=r"summary\[\d+\]\.mean_ratio.*inconsistent"):
        ma.read_result(edited)
