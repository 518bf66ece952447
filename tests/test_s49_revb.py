"""Review s49 (revb): findings 1, 3, 6 and 7.

1. The package-count read-back check refused genuine sweep files: a writer failure names no
   content, so a package seen only through failures was missed or merged with a namesake.
3. The Zep importer read every link key of an edge's ``attributes`` (Graphiti's LLM-extracted
   domain fields) as a link: ``{"unit": "kg"}`` refused the import and ``{"experience": "5
   years"}`` replaced the episode's coverage with nothing.
6. ``read_result`` and the importers disagreed on what looks like a package.
7. ``unregister_writer`` of a reference writer in place raised, breaking try/finally teardowns.

Expected counts come from the packages built here (how many were given, which differ).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from cli_utils import run_cli
from package_utils import write_json

import memaudit_core as ma
from memaudit_core.compiled import compile_package
from memaudit_core.errors import UnknownNameError
from memaudit_core.importers import load_external_store
from memaudit_core.package import load_package
from memaudit_core.suites import sweep_suite

REPO = Path(__file__).resolve().parents[1]
UPDATE_CHAIN = REPO / "sample_packages" / "update_chain.json"
DEMO = REPO / "sample_packages" / "external-stores-demo.json"
FAILS = "s49_revb_fails"


def _roundtrip(res: object) -> object:
    return ma.read_result(json.loads(json.dumps(res.to_dict())))


@pytest.fixture
def same_id_copy(tmp_path: Path):
    """update_chain.json and an edited copy with the same id; a writer failing on the copy."""
    doc = json.loads(UPDATE_CHAIN.read_text())
    doc["candidates"][0]["cost"] += 1
    other = tmp_path / "uc2.json"
    other.write_text(json.dumps(doc))
    a, b = ma.load_package(UPDATE_CHAIN), ma.load_package(other)
    assert a.id == b.id and a.content_hash() != b.content_hash()
    bad = compile_package(b).fingerprint

    def fn(inst, budget):
        if inst.fingerprint == bad:
            raise RuntimeError("fails on the copy")
        return ()

    ma.register_writer(ma.WriterInfo(FAILS, "fails on the copy", "oracle", fn), replace=True)
    try:
        yield a, b, other
    finally:
        ma.unregister_writer(FAILS)


# --------------------------------------------------------------------------- 1


def test_a_suite_whose_writer_fails_on_a_same_id_package_reads_back(same_id_copy):
    _, _, other = same_id_copy
    res = sweep_suite([str(UPDATE_CHAIN), str(other)], budgets=[3, 6], writers=[FAILS])
    assert res.errors and res.complete
    assert (res.n_sources, res.n_packages) == (2, 2)  # two files, two contents
    back = _roundtrip(res)
    assert (back.n_sources, back.n_packages) == (2, 2)


def test_a_library_sweep_whose_writer_fails_on_a_same_id_package_reads_back(same_id_copy):
    a, b, _ = same_id_copy
    res = ma.sweep([a, b], [3, 6], [FAILS])
    assert res.errors and res.n_packages == 2
    assert _roundtrip(res).n_packages == 2


def test_show_reads_the_clis_sweep_file_of_it(same_id_copy, tmp_path):
    _, _, other = same_id_copy
    argv = (str(UPDATE_CHAIN), str(other), "--writers", FAILS, "--budgets", "3,6")
    rc, out, err = run_cli("sweep", *argv, "--json", "--quiet")
    # A failing writer is exit 2, after the sweep file is written with its failures.
    assert rc == 2 and "fails on the copy" in err, err
    doc = json.loads(out)
    assert (doc["n_sources"], doc["n_packages"]) == (2, 2) and doc["errors"]
    path = tmp_path / "saved.json"
    path.write_text(out)
    rc, shown, err = run_cli("show", str(path))
    assert rc == 0, err
    assert shown.splitlines()[0].startswith(f"saved sweep {path}: 2 package(s)")


def test_same_id_packages_on_different_grids_with_failures_read_back(tmp_path):
    doc = json.loads(UPDATE_CHAIN.read_text())
    doc["budgets"], doc["budget"] = [4, 7, 12], 7
    a = ma.load_package(UPDATE_CHAIN)
    b = ma.load_package(write_json(tmp_path, "uc3.json", doc))
    assert a.id == b.id and not set(a.budgets) & {4, 7, 12}

    def fn(inst, budget):
        if budget in (4, 7, 12):
            raise RuntimeError("fails on b's grid")
        return ()

    ma.register_writer(ma.WriterInfo(FAILS, "fails on b", "oracle", fn), replace=True)
    try:
        res = ma.sweep([a, b], None, [FAILS])
    finally:
        ma.unregister_writer(FAILS)
    assert len(res.errors) == 3 and res.n_packages == 2
    assert _roundtrip(res).n_packages == 2


def test_a_count_provably_wrong_is_still_refused(same_id_copy):
    a, b, other = same_id_copy
    # No failure, every row names its content: the counts are exact.
    clean = ma.sweep([a, b, a], [3, 6], ["gvt"]).to_dict()
    assert clean["n_packages"] == 3
    for edited in (2, 4):
        doc = copy.deepcopy(clean)
        doc["n_packages"] = edited
        with pytest.raises(ma.ResultError) as exc:
            ma.read_result(doc)
        assert (exc.value.path, exc.value.rule) == ("$.n_packages", "inconsistent")
    # With failures only the lower bounds hold, and they still refuse: the failures at (3,
    # FAILS) and the row there come from two packages given.
    suite = sweep_suite([str(UPDATE_CHAIN), str(other)], budgets=[3, 6], writers=[FAILS])
    doc = copy.deepcopy(suite.to_dict())
    doc["n_sources"] = 1
    with pytest.raises(ma.ResultError) as exc:
        ma.read_result(doc)
    assert (exc.value.path, exc.value.rule) == ("$.n_sources", "inconsistent")
    doc = copy.deepcopy(suite.to_dict())
    doc["n_packages"] = 3  # more distinct contents than sources
    with pytest.raises(ma.ResultError) as exc:
        ma.read_result(doc)
    assert (exc.value.path, exc.value.rule) == ("$.n_packages", "inconsistent")


# --------------------------------------------------------------------------- 3


def _edge(uuid: str, fact: str, **extra: object) -> dict:
    return {"uuid": uuid, "fact": fact, "created_at": "2025-05-03T18:25:00Z", **extra}


def _zep(tmp_path: Path, attributes: dict) -> dict[str, dict]:
    doc = {
        "edges": [_edge("edge-1", "Alice", episodes=["ep1"], attributes=attributes)],
        "episodes": [
            {"uuid": "ep1", "name": "chat 1", "episode_metadata": {"unit_ids": ["u:seat"]}}
        ],
    }
    store = load_external_store(
        write_json(tmp_path, "zep.json", doc), "zep", package=load_package(DEMO)
    )
    return {m.id: m.coverage for m in store.memories}


@pytest.mark.parametrize(
    "attributes", [{"quantity": 3, "unit": "kg"}, {"experience": "5 years"}, {"session": "x"}]
)
def test_zep_domain_attributes_keep_the_episodes_coverage(tmp_path, attributes):
    assert _zep(tmp_path, attributes) == {"edge-1": {"u:seat": 1.0}}


def test_zep_attribute_unit_ids_are_still_the_edges_own_links(tmp_path):
    assert _zep(tmp_path, {"unit_ids": ["u:meal:current"], "unit": "kg"}) == {
        "edge-1": {"u:meal:current": 1.0}
    }


# --------------------------------------------------------------------------- 6


def test_read_result_and_the_importers_share_one_package_rule(tmp_path):
    from memaudit_core import results
    from memaudit_core.importers import _common, guess_store_format

    # Two of a package's three arrays: neither reader calls it a package.
    half = {"candidates": [], "experiences": [], "id": "x"}
    path = write_json(tmp_path, "half.json", half)
    assert guess_store_format(path) != "package"
    with pytest.raises(ma.ResultError) as exc:
        ma.read_result(half)
    assert "MemAudit package" not in str(exc.value)
    assert not hasattr(_common, "looks_like_package")
    assert results.looks_like_package is ma.package.looks_like_package


# --------------------------------------------------------------------------- 7


def test_a_teardown_may_unregister_a_reference_writer_twice():
    gvt = ma.WRITERS["gvt"]
    mine = ma.WriterInfo("gvt", "mine", gvt.kind, lambda inst, b: ())
    try:
        ma.register_writer(mine, replace=True)
        assert ma.WRITERS["gvt"].description == "mine"
    finally:
        ma.unregister_writer("gvt")
    ma.unregister_writer("gvt")  # already its own: nothing to undo, no error
    assert ma.WRITERS["gvt"] is gvt
    with pytest.raises(UnknownNameError):
        ma.unregister_writer("s49_revb_no_such_writer")
