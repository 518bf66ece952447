"""Compare views saved by earlier MemAudit versions read back (QA s46 code review).

The s46 read-back check rebuilt a view's explanation in today's words and refused any other
text, so genuine views saved by s41 (unit lists of the catch-all bucket called '"other"-kind
units') and s42 (lists ending '... and 1 more') were refused as edited: 54 and 3 of 102
sample views. The fixtures are views written by those commits' ``compare_view(...).to_dict()``
(no ``explanation_wording``); they must read back and ``show`` must print them, while a new
view stays held to every word and an old view to its headline numbers.

F is recomputed here from the package file (the oracle), so the headline each fixture must
keep is shown independently of the code under test.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from cli_utils import run_cli

import memaudit_core as ma
from memaudit_core.errors import ResultError
from memaudit_core.explain import compare_view
from memaudit_core.versions import EXPLANATION_WORDING

REPO = Path(__file__).resolve().parent.parent
OLD = REPO / "tests" / "fixtures" / "s46_oldcv"
#: fixture -> (package, the wording only that version used)
FIXTURES = {
    "s41_veg_recency_raw_B11.2.json": ("veg-to-pescatarian", '"other"-kind unit'),
    "s42_travel_validity-aware_B130.2.json": ("travel-assistant", "u:companion and 1 more."),
}


def package_f(package: str, ids: list[str]) -> float:
    """F = sum_u w_u min(1, sum of the memories' coverage of u), from the package JSON; a
    unit without a weight weighs the sum of the weights (default 1) of the queries needing it."""
    doc = json.loads((REPO / "sample_packages" / f"{package}.json").read_text(encoding="utf-8"))
    assert doc["objective"]["saturation"] == "cap1"
    cover = {c["id"]: c["coverage"] for c in doc["candidates"]}

    def weight(u: dict) -> float:
        if "weight" in u:
            return u["weight"]
        return sum(q.get("weight", 1.0) for q in doc["queries"] if u["id"] in q["requires"])

    return sum(
        weight(u) * min(1.0, sum(cover[i].get(u["id"], 0.0) for i in ids)) for u in doc["units"]
    )


def holds(written: object, saved: object) -> bool:
    """Whether ``written`` has every key of ``saved``, at any depth, with the same value."""
    if isinstance(saved, dict):
        return isinstance(written, dict) and all(
            k in written and holds(written[k], v) for k, v in saved.items()
        )
    if isinstance(saved, list):
        return (
            isinstance(written, list)
            and len(written) == len(saved)
            and all(holds(w, v) for w, v in zip(written, saved, strict=True))
        )
    return written == saved


def old_doc(name: str) -> dict:
    doc = json.loads((OLD / name).read_text(encoding="utf-8"))
    package, old_words = FIXTURES[name]
    # A genuine file of its version: no wording marker, the old words, F the package gives.
    assert "explanation_wording" not in doc and "memaudit_version" not in doc
    assert doc["result_version"] == 2
    assert any(old_words in p for p in doc["explanation"])
    assert doc["value"] == pytest.approx(package_f(package, doc["evaluation"]["selected"]))
    return doc


@pytest.mark.parametrize("name", FIXTURES)
def test_an_old_view_reads_back_as_saved(name):
    doc = old_doc(name)
    view = ma.read_result(OLD / name)
    assert view.explanation == tuple(doc["explanation"])
    assert view.explanation_wording is None
    again = view.to_dict()
    assert again.pop("explanation_wording") is None
    # Every saved key is written back as saved (keys added since, such as the optimum's
    # ``budget_note``, are written too).
    assert again.keys() == doc.keys()
    assert holds(again, doc)
    # Saved again by this version it keeps saying it is old, so it still reads back.
    assert ma.read_result(json.loads(json.dumps(view.to_dict()))) == view


@pytest.mark.parametrize("name", FIXTURES)
def test_show_prints_an_old_view(name):
    doc = old_doc(name)
    rc, out, err = run_cli("show", str(OLD / name))
    assert (rc, err) == (0, "")
    # Wrapped at 100 columns as `score` wraps it (s56): the same words.
    assert " ".join(doc["explanation"][0].split()) in " ".join(out.split())
    assert f"F {doc['value']:g} of OPT {doc['opt_value']:g}, ratio {doc['ratio_text']}" in out


@pytest.mark.parametrize("name", FIXTURES)
def test_an_old_view_with_an_edited_headline_f_is_refused(name, tmp_path):
    doc = old_doc(name)
    head = doc["explanation"][0]
    true_f = f"F = {doc['value']:g} "
    assert head.count(true_f) == 1
    doc["explanation"][0] = head.replace(true_f, "F = 22.4 ")
    path = tmp_path / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ResultError) as info:
        ma.read_result(path)
    assert (info.value.path, info.value.rule) == ("$.explanation[0]", "inconsistent")
    assert head in info.value.detail
    rc, out, err = run_cli("show", str(path))
    assert (rc, out) == (2, "")
    assert err.startswith(f"{path}: $.explanation[0]: ")
    assert err.rstrip().endswith("[rule: inconsistent]")


@pytest.fixture(scope="module")
def new_doc() -> dict:
    cv = compare_view(ma.load_package(REPO / "sample_packages" / "update_chain.json"), 6,
                      writer="density")  # fmt: skip
    doc = json.loads(json.dumps(cv.to_dict()))
    assert doc["explanation_wording"] == EXPLANATION_WORDING
    assert ma.read_result(doc) == cv
    return doc


def test_a_new_view_is_still_held_to_every_word(new_doc):
    doc = copy.deepcopy(new_doc)
    k, para = next((k, p) for k, p in enumerate(doc["explanation"]) if "losing 2.185" in p)
    doc["explanation"][k] = para.replace("losing 2.185", "losing 0.5")
    with pytest.raises(ResultError) as info:
        ma.read_result(doc)
    assert (info.value.path, info.value.rule) == (f"$.explanation[{k}]", "inconsistent")


def test_a_new_view_without_its_marker_is_still_held_to_its_headline(new_doc):
    doc = copy.deepcopy(new_doc)
    del doc["explanation_wording"]
    assert ma.read_result(doc).explanation == tuple(new_doc["explanation"])
    doc["explanation"][0] = doc["explanation"][0].replace("F = 5.65 ", "F = 7.7 ")
    with pytest.raises(ResultError) as info:
        ma.read_result(doc)
    assert (info.value.path, info.value.rule) == ("$.explanation[0]", "inconsistent")


@pytest.mark.parametrize(("value", "rule"), [(0, "allowed-value"), ("1", "type"), (True, "type")])
def test_a_bad_wording_marker_is_refused(new_doc, value, rule):
    doc = dict(new_doc, explanation_wording=value)
    with pytest.raises(ResultError) as info:
        ma.read_result(doc)
    assert (info.value.path, info.value.rule) == ("$.explanation_wording", rule)


def test_a_view_saved_with_todays_wording_still_reads_back():
    # A view written at s46 (wording 1). If this fails after a change to the explanation's
    # words, raise versions.EXPLANATION_WORDING: files saved before the change must then be
    # checked as older files, not refused as tampered.
    path = OLD / "s46_travel_fact-extractor_B40.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["explanation_wording"] == 1
    view = ma.read_result(path)
    assert view.to_dict()["explanation"] == doc["explanation"]
