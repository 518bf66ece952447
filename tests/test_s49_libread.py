"""Saved results read back as saved, and small API refusals (QA s49, libapi report).

1. A sweep's, a suite's and a seed band's ``bootstrap`` record (how their intervals were
   drawn) was dropped on read: an edited seed or resample count read back, and ``show``
   printed "1000 resamples, seed 0" in its place.
2. A library sweep read back an ``n_packages`` or ``budgets`` its own rows contradict; so did
   the CLI's sweep file's ``n_sources`` / ``n_packages``.
3. A solve result read back ``selected_idx`` repeating a position.
5. ``unregister_writer("gvt")`` of a reference writer never replaced: a no-op (review s49 #7).
6. ``solve_budgets(inst, [])`` returned [] where every other budget list refuses [].
7. ``read_result`` of a package file did not say it is a package.

Expected counts come from the sweeps' inputs (packages given, budgets asked), not from the
code under test.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_utils import run_cli

import memaudit_core as ma
from memaudit_core.curves import family_band
from memaudit_core.suites import sweep_suite

UPDATE_CHAIN = "sample_packages/update_chain.json"
TEMPORAL = "sample_packages/temporal_interval.json"


def _refused(doc: dict) -> ma.ResultError:
    with pytest.raises(ma.ResultError) as info:
        ma.read_result(json.loads(json.dumps(doc)))
    return info.value


@pytest.fixture(scope="module")
def lib_sweep() -> ma.SweepResult:
    # Three packages given, one of them twice: n_packages counts what was given.
    chain = ma.load_package(UPDATE_CHAIN)
    return ma.sweep([chain, ma.load_package(TEMPORAL), chain], [3, 6], ["gvt", "density"])


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> ma.SweepSuiteResult:
    copy = tmp_path_factory.mktemp("s49libread") / "copy.json"
    copy.write_text(Path(UPDATE_CHAIN).read_text())
    # Three sources, two of them one content.
    return sweep_suite([UPDATE_CHAIN, str(copy), TEMPORAL], budgets=[3, 6], writers=["gvt"])


# --------------------------------------------------------------------------- 1 bootstrap


@pytest.mark.parametrize(
    ("key", "value"),
    [("seed", 7), ("resamples", 50), ("interval", "90% percentile bootstrap"), ("min_n", 2)],
)
def test_an_edited_bootstrap_record_is_refused_in_a_library_sweep(lib_sweep, key, value):
    doc = lib_sweep.to_dict()
    doc["bootstrap"][key] = value
    exc = _refused(doc)
    assert (exc.path, exc.rule) == (f"$.bootstrap.{key}", "inconsistent")


def test_an_edited_bootstrap_record_is_refused_in_a_suite_and_a_band(suite):
    doc = suite.to_dict()
    doc["bootstrap"]["seed"] = 7
    exc = _refused(doc)
    assert (exc.path, exc.rule) == ("$.bootstrap.seed", "inconsistent")

    band = family_band("memaudit-small", [0, 1], None, [4], ["writer:gvt"])
    doc = band.to_dict()
    doc["bootstrap"]["resamples"] = 50
    exc = _refused(doc)
    assert (exc.path, exc.rule) == ("$.bootstrap.resamples", "inconsistent")
    assert ma.read_result(json.loads(json.dumps(band.to_dict()))) == band


def test_a_bootstrap_record_saved_before_min_n_still_reads(lib_sweep):
    doc = json.loads(json.dumps(lib_sweep.to_dict()))
    del doc["bootstrap"]["min_n"]  # files saved before QA s46
    assert ma.read_result(doc) == lib_sweep


def test_show_refuses_the_reports_edited_seed(lib_sweep, tmp_path):
    doc = lib_sweep.to_dict()
    doc["bootstrap"]["seed"] = 7
    path = tmp_path / "sw.json"
    path.write_text(json.dumps(doc))
    rc, out, err = run_cli("show", str(path))
    assert rc == 2
    assert "$.bootstrap.seed" in err and "seed 0" not in out


# --------------------------------------------------------------------------- 2 counts


def test_a_library_sweep_counts_the_packages_given(lib_sweep):
    assert lib_sweep.n_packages == 3  # as given, the repeat included
    assert ma.read_result(json.loads(json.dumps(lib_sweep.to_dict()))) == lib_sweep
    for edited in (5, 2, 1):
        doc = lib_sweep.to_dict()
        doc["n_packages"] = edited
        exc = _refused(doc)
        assert (exc.path, exc.rule) == ("$.n_packages", "inconsistent")
        assert "3 package(s) given" in str(exc)


def test_the_reports_single_package_sweep_with_n_packages_5_is_refused():
    sw = ma.sweep([ma.load_package(UPDATE_CHAIN)], [3, 6], ["gvt", "density"])
    doc = sw.to_dict()
    doc["n_packages"] = 5
    exc = _refused(doc)
    assert (exc.path, exc.rule) == ("$.n_packages", "inconsistent")


def test_a_budget_without_rows_summary_or_failure_is_refused(lib_sweep, suite):
    for result in (lib_sweep, suite):
        doc = result.to_dict()
        doc["budgets"] = [3.0, 6.0, 9.0]
        exc = _refused(doc)
        assert (exc.path, exc.rule) == ("$.budgets[2]", "inconsistent")


def test_a_suite_counts_its_sources_and_distinct_contents(suite):
    assert (suite.n_sources, suite.n_packages) == (3, 2)
    assert ma.read_result(json.loads(json.dumps(suite.to_dict()))) == suite
    for key, edited in (("n_sources", 5), ("n_sources", 2), ("n_packages", 3), ("n_packages", 1)):
        doc = suite.to_dict()
        doc[key] = edited
        exc = _refused(doc)
        assert (exc.path, exc.rule) == (f"$.{key}", "inconsistent")


def test_a_stores_only_sweep_of_a_package_without_the_store_reads_back():
    # update_chain holds no store, so it has no row: n_packages 2 beside one package's rows.
    veg = ma.load_package("sample_packages/veg-to-pescatarian.json")
    sw = ma.sweep([veg, ma.load_package(UPDATE_CHAIN)], [3, 6], [], stores=["fact-only"])
    assert sw.n_packages == 2 and {r.package_id for r in sw.rows} == {veg.id}
    assert ma.read_result(json.loads(json.dumps(sw.to_dict()))) == sw


# --------------------------------------------------------------------------- 3 solve


def test_a_solve_with_a_repeated_position_is_refused():
    opt = ma.solve(ma.compile_package(ma.load_package(UPDATE_CHAIN)), 6)
    assert len(opt.selected_idx) == 3
    doc = opt.to_dict()
    doc["selected_idx"] = [doc["selected_idx"][0]] * 3
    exc = _refused(doc)
    assert (exc.path, exc.rule) == ("$.selected_idx[1]", "inconsistent")
    doc["selected_idx"] = [-1, *opt.selected_idx[1:]]
    exc = _refused(doc)
    assert (exc.path, exc.rule) == ("$.selected_idx[0]", "allowed-value")


# --------------------------------------------------------------------------- 5, 6, 7


def test_unregistering_a_reference_writer_never_replaced_leaves_it_in_place():
    # Review s49 #7: a no-op (it raised, breaking try/finally teardowns); see test_s49_revb.
    gvt = ma.WRITERS["gvt"]
    ma.unregister_writer("gvt")
    assert ma.WRITERS["gvt"] is gvt


def test_solve_budgets_refuses_an_empty_budget_list():
    inst = ma.compile_package(ma.load_package(UPDATE_CHAIN))
    with pytest.raises(ma.UsageError, match="no budgets given"):
        ma.solve_budgets(inst, [])


def test_read_result_and_show_of_a_package_name_load_package():
    with pytest.raises(ma.ResultError) as info:
        ma.read_result(UPDATE_CHAIN)
    assert info.value.rule == "result-json"
    assert "package" in str(info.value) and "ma.load_package" in str(info.value)
    rc, _, err = run_cli("show", UPDATE_CHAIN)
    assert rc == 2 and "ma.load_package" in err and "result-json" in err
