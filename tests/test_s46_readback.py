"""Saved scores and Compare views are checked against their own numbers when read back (QA s46).

(a) A ``memaudit score --json`` file whose ``selected`` was edited to the optimum's memories,
its F left at the writer's 5.65, was shown by ``memaudit show`` as "F = 5.65" beside
"OPT = 7.735" and a store identical to the optimum's. (b) A saved Compare view whose first
explanation paragraph was edited to another F and ratio was printed under the true headline.
Each edited file must be refused naming the file, the JSON path and the rule; the genuine
files still read back equal.

F of a set of memories is recomputed here from the package file itself (the oracle), so the
contradiction each edit makes is shown independently of the code under test.
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
from memaudit_core.generators import generate

REPO = Path(__file__).resolve().parent.parent
CHAIN = REPO / "sample_packages" / "update_chain.json"
OPT_IDS = ["update_1_tombstone", "update_2_tombstone", "update_3_compound_update"]


def package_f(ids: list[str]) -> float:
    """F = sum_u w_u min(1, sum of the memories' coverage of u), from the package JSON."""
    doc = json.loads(CHAIN.read_text(encoding="utf-8"))
    assert doc["objective"]["saturation"] == "cap1"
    cover = {c["id"]: c["coverage"] for c in doc["candidates"]}
    return sum(
        u["weight"] * min(1.0, sum(cover[i].get(u["id"], 0.0) for i in ids)) for u in doc["units"]
    )


def package_coverage(ids: list[str], unit: str) -> float:
    doc = json.loads(CHAIN.read_text(encoding="utf-8"))
    return sum(c["coverage"].get(unit, 0.0) for c in doc["candidates"] if c["id"] in ids)


@pytest.fixture(scope="module")
def score_doc() -> dict:
    rc, out, err = run_cli(
        "score", str(CHAIN), "--budget", "6", "--writer", "density", "--json"
    )  # fmt: skip
    assert rc == 0, err
    doc = json.loads(out)
    # The writer's store is not an optimum; its F is what the package gives its memories.
    assert doc["value"] == pytest.approx(package_f(doc["selected"])) == pytest.approx(5.65)
    assert sorted(doc["opt"]["selected"]) == sorted(OPT_IDS)
    return doc


def refused_file(tmp_path: Path, doc: dict) -> ResultError:
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ResultError) as info:
        ma.read_result(path)
    exc = info.value
    assert exc.file == str(path) and exc.rule == "inconsistent"
    rc, out, err = run_cli("show", str(path))
    assert rc == 2 and out == ""
    assert err.startswith(f"{path}: {exc.path}: ")
    assert err.rstrip().endswith("[rule: inconsistent]")
    return exc


def test_a_score_selecting_the_optimums_memories_below_its_f_is_refused(score_doc, tmp_path):
    assert ma.read_result(json.loads(json.dumps(score_doc))).value == score_doc["value"]
    doc = copy.deepcopy(score_doc)
    doc["selected"] = list(doc["opt"]["selected"])  # value stays the writer's 5.65
    assert package_f(doc["selected"]) == pytest.approx(doc["opt_value"]) != doc["value"]
    assert refused_file(tmp_path, doc).path == "$.value"


def test_qa_file_with_opt_selected_edited_too_is_refused(score_doc, tmp_path):
    """The QA's file: ``selected`` the optimum's, ``opt_selected`` cut to one memory."""
    doc = copy.deepcopy(score_doc)
    doc["selected"] = list(doc["opt"]["selected"])
    doc["opt_selected"] = ["update_1_tombstone"]
    assert refused_file(tmp_path, doc).path == "$.value"


def test_a_score_selecting_part_of_the_optimum_shown_covers_no_more_than_it(score_doc, tmp_path):
    """Only memories of the optimum shown, yet v_0 (which none of them covers) covered."""
    doc = copy.deepcopy(score_doc)
    doc["selected"] = ["update_1_tombstone"]
    assert doc["unit_rows"][0]["unit_id"] == "v_0"
    assert package_coverage(doc["selected"], "v_0") == 0.0
    assert doc["unit_rows"][0]["store_coverage"] == 1.0 > doc["unit_rows"][0]["opt_coverage"]
    assert refused_file(tmp_path, doc).path == "$.unit_rows[0].store_coverage"


def test_a_unit_value_is_recomputed_from_its_weight_and_coverage(score_doc, tmp_path):
    doc = copy.deepcopy(score_doc)
    row = doc["unit_rows"][1]
    assert (row["unit_id"], row["weight"], row["store_value"]) == ("v_1", 0.1, 0.0)
    row["store_coverage"] = 1.0  # worth 0.1 * min(1, 1) = 0.1 under cap1, not 0
    assert refused_file(tmp_path, doc).path == "$.unit_rows[1].store_value"


@pytest.fixture(scope="module")
def view_doc() -> dict:
    cv = compare_view(ma.load_package(CHAIN), 6, writer="density")
    doc = json.loads(json.dumps(cv.to_dict()))
    assert ma.read_result(doc) == cv
    assert doc["explanation"][0].startswith(
        "density scores F = 5.65 against OPT = 7.735 at budget 6 words (ratio 0.730)."
    )
    return doc


def test_a_view_with_an_edited_headline_paragraph_is_refused(view_doc, tmp_path):
    doc = copy.deepcopy(view_doc)
    doc["explanation"][0] = (
        "density scores F = 7.7 against OPT = 7.735 at budget 6 words (ratio 0.995). "
        "It keeps 3 memories."
    )
    exc = refused_file(tmp_path, doc)
    assert exc.path == "$.explanation[0]"
    assert view_doc["explanation"][0] in exc.detail


def test_a_view_with_an_edited_loss_in_a_later_paragraph_is_refused(view_doc, tmp_path):
    doc = copy.deepcopy(view_doc)
    k, para = next((k, p) for k, p in enumerate(doc["explanation"]) if "losing 2.185" in p)
    doc["explanation"][k] = para.replace("losing 2.185", "losing 0.5")
    assert refused_file(tmp_path, doc).path == f"$.explanation[{k}]"


def test_a_view_with_a_paragraph_dropped_is_refused(view_doc, tmp_path):
    doc = copy.deepcopy(view_doc)
    doc["explanation"].pop()
    assert refused_file(tmp_path, doc).path == "$.explanation"


def _sample(name: str) -> ma.Package:
    return ma.load_package(REPO / "sample_packages" / f"{name}.json")


VIEWS = {
    "gvt at 3": lambda: compare_view(_sample("update_chain"), 3, writer="gvt"),
    "recency_raw at 12": lambda: compare_view(_sample("update_chain"), 12, writer="recency_raw"),
    "travel fact_only": lambda: compare_view(_sample("travel-assistant"), 20, writer="fact_only"),
    "external store": lambda: compare_view(_sample("external-stores-demo"), 12, store_id="mem0"),
    # A limited solve: the denominator is an incumbent, named so in the explanation.
    "incumbent": lambda: compare_view(
        generate("random_coverage", seed=0), 107.8155, writer="gvt", time_limit=0.05
    ),
}


@pytest.mark.parametrize("case", VIEWS)
def test_genuine_views_read_back_and_refuse_an_edited_headline(case):
    cv = VIEWS[case]()
    assert cv.opt_certified == (case != "incumbent")
    doc = json.loads(json.dumps(cv.to_dict()))
    assert ma.read_result(doc) == cv
    head = doc["explanation"][0]
    f_text = head.split(" scores F = ")[1].split(" ")[0]
    doc["explanation"][0] = head.replace(f"F = {f_text} ", "F = 123.4 ", 1)
    assert doc["explanation"][0] != head
    with pytest.raises(ResultError) as info:
        ma.read_result(doc)
    assert (info.value.path, info.value.rule) == ("$.explanation[0]", "inconsistent")
