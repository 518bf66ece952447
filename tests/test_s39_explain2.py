"""QA s39 round 2 (h4): the Compare explanation's loss story, one loss order, linear cover.

1. A store can lose more than the comparison tolerance while no single unit loses more than it
   (h4-sum: three units losing 0.9 each, tolerance ~1, 2.7 lost in all). "Why this score" said
   nothing about the loss and the kind table's "units losing value" read 0 beside "value lost"
   2.7. The verdict stays per unit; the explanation now names the spread, and the kind table's
   count is called what it is, "units missed".
2. On a tie in loss Compare listed u:dates:invalid first (package order) and the Evidence
   explorer focused u:hotel:current (kind order); both now use largest loss, then package order.
3. Under linear / log1p saturation a unit the store covers fully but the optimum covers twice
   read "only partly covered. The optimum covered it with a (...); b (...)" though the store
   holds a.

Expected values are worked out by hand in the comments (QA's packages of /tmp/qa39b/h4/hm,
copied here inline), never taken from memaudit.
"""

from __future__ import annotations

import copy
from pathlib import Path

from memaudit_core.explain import compare_view, evidence_view
from memaudit_core.package import load_package, parse_package

REPO = Path(__file__).resolve().parent.parent


def _exp(n: int) -> list[dict]:
    return [{"id": f"e{t}", "time": t, "text": f"experience e{t}"} for t in range(n)]


def _cand(cid: str, exp: str, cov: dict, cost: float = 1) -> dict:
    return {
        "id": cid,
        "experience": exp,
        "type": "atomic_fact",
        "cost": cost,
        "coverage": cov,
        "text": f"memory {cid}",
    }


def _unit(uid: str, weight: float, kind: str = "current_truth") -> dict:
    return {"id": uid, "kind": kind, "weight": weight, "text": f"unit {uid}"}


#: QA's h4-sum.json: cap1, budget 2. OPT = {B, A} = 1e9 + 3 x 0.9 = 1000000002.7; the store
#: {B} = 1e9. Tolerance 1e-9 x 1000000002.7 = 1.0000000027: each of s1..s3 loses 0.9 (not
#: missed), 2.7 in all.
H4_SUM = {
    "memaudit": 1,
    "id": "h4-sum",
    "cost_unit": "words",
    "objective": {"saturation": "cap1"},
    "experiences": _exp(2),
    "units": [_unit("big", 1e9), _unit("s1", 0.9), _unit("s2", 0.9), _unit("s3", 0.9)],
    "candidates": [
        _cand("B", "e0", {"big": 1}),
        _cand("A", "e1", {"s1": 1, "s2": 1, "s3": 1}),
    ],
    "stores": [{"id": "s", "select": ["B"]}],
    "budget": 2,
}

#: QA's h9-linear.json: linear, budget 2. OPT = {a, b}: u covered 2 -> 2; the store {a} -> 1.
H9_LINEAR = {
    "memaudit": 1,
    "id": "h9-linear",
    "cost_unit": "words",
    "objective": {"saturation": "linear"},
    "experiences": _exp(2),
    "units": [_unit("u", 1)],
    "candidates": [_cand("a", "e0", {"u": 1}), _cand("b", "e1", {"u": 1})],
    "stores": [{"id": "s", "select": ["a"]}],
    "budget": 2,
}


# --------------------------------------------------------------------------- 1: the spread


def test_a_loss_spread_below_the_tolerance_is_explained():
    cv = compare_view(parse_package(H4_SUM), 2, store_id="s")
    assert cv.n_missed == 0  # the verdict stays per unit: each loses 0.9 <= 1.0000000027
    assert cv.explanation[1] == (
        "The store loses 2.7 in all against the optimum, spread over 3 units each losing at "
        "most the comparison tolerance of 1 (1e-9 of the larger of OPT and F), so none counts "
        "as a missed unit: s1 (0.9), s2 (0.9), s3 (0.9)."
    )
    assert "It left 1 word of the budget unused." in cv.explanation


def test_the_kind_table_counts_missed_units_beside_the_value_lost():
    cv = compare_view(parse_package(H4_SUM), 2, store_id="s")
    (row,) = cv.bucket_table()
    # "units losing value: 0" beside "value lost: 2.7" contradicted itself.
    assert "units losing value" not in row
    assert row["units missed"] == 0
    assert abs(row["value lost"] - 2.7) < 1e-6


def test_a_long_spread_names_five_units_and_the_rest_as_a_count():
    # Seven units of 0.3 under the big one: OPT = 1e9 + 2.1, tolerance ~1, each loses 0.3.
    doc = copy.deepcopy(H4_SUM)
    small = [f"t{k}" for k in range(1, 8)]
    doc["units"] = [_unit("big", 1e9)] + [_unit(t, 0.3) for t in small]
    doc["candidates"][1]["coverage"] = {t: 1 for t in small}
    cv = compare_view(parse_package(doc), 2, store_id="s")
    assert cv.explanation[1] == (
        "The store loses 2.1 in all against the optimum, spread over 7 units each losing at "
        "most the comparison tolerance of 1 (1e-9 of the larger of OPT and F), so none counts "
        "as a missed unit: t1 (0.3), t2 (0.3), t3 (0.3), t4 (0.3), t5 (0.3) and 2 more."
    )


def test_a_spread_beside_missed_units_is_said_too():
    # h4-sum plus m (weight 5) covered by C in e2, budget 3. OPT = {B, A, C} = 1e9 + 7.7,
    # tolerance ~1: m is missed (5), s1..s3 lose 0.9 each (2.7) without being missed.
    doc = copy.deepcopy(H4_SUM)
    doc["experiences"] = _exp(3)
    doc["units"].append(_unit("m", 5))
    doc["candidates"].append(_cand("C", "e2", {"m": 1}))
    doc["budget"] = 3
    cv = compare_view(parse_package(doc), 3, store_id="s")
    assert cv.n_missed == 1
    text = "\n".join(cv.explanation)
    assert "The store missed 1 current-truth unit, losing 5 of the" in text
    assert (
        "Besides the missed units, the store loses 2.7 over 3 more units, each losing at most "
        "the comparison tolerance of 1 (1e-9 of the larger of OPT and F), so none counts as a "
        "missed unit: s1 (0.9), s2 (0.9), s3 (0.9)."
    ) in text


# --------------------------------------------------------------------------- 2: one order


def test_compare_and_evidence_break_a_tie_in_loss_by_package_order():
    # QA's link: travel-assistant, budget 20, store fact-extractor. u:dates:invalid,
    # u:hotel:current and u:hotel:invalid each lose 2; u:dates:invalid comes first in the
    # package (4th unit, u:hotel:current 7th).
    pkg = load_package(REPO / "sample_packages" / "travel-assistant.json")
    cv = compare_view(pkg, 20, store_id="fact-extractor")
    view = evidence_view(pkg, 20, store_id="fact-extractor")
    assert [u.unit_id for u in cv.unit_rows[:3]] == [
        "u:dates:invalid",
        "u:hotel:current",
        "u:hotel:invalid",
    ]
    assert view.focus_unit_id == "u:dates:invalid"
    assert [r["unit"] for r in view.unit_table()[:3]] == [
        "u:dates:invalid",
        "u:hotel:current",
        "u:hotel:invalid",
    ]


def test_a_tie_between_kinds_follows_the_package_not_the_kind_order():
    # An invalidation unit before a current-truth one in the package, each weight 1, the store
    # empty: both lose 1. Kind order would put current truth (c) first; package order puts t.
    doc = {
        "memaudit": 1,
        "id": "tie",
        "cost_unit": "words",
        "experiences": _exp(2),
        "units": [_unit("t", 1, "invalidation"), _unit("c", 1)],
        "candidates": [_cand("x", "e0", {"t": 1}), _cand("y", "e1", {"c": 1})],
        "stores": [{"id": "s", "select": []}],
        "budget": 2,
    }
    pkg = parse_package(doc)
    cv = compare_view(pkg, 2, store_id="s")
    view = evidence_view(pkg, 2, store_id="s")
    assert [u.unit_id for u in cv.unit_rows] == ["t", "c"]
    assert view.focus_unit_id == "t"
    assert [r["unit"] for r in view.unit_table()] == ["t", "c"]


# --------------------------------------------------------------------------- 3: covered again


def test_linear_unit_covered_again_is_not_called_partly_covered():
    cv = compare_view(parse_package(H9_LINEAR), 2, store_id="s")
    assert cv.explanation[1] == (
        "The store missed 1 current-truth unit, losing 1 of the 2 that OPT gets from "
        "current-truth units: u. Of these, u is covered by the store too, but under linear "
        "saturation every further cover adds value, and the optimum gets more from it by "
        "covering it again. The optimum covered it with b (atomic_fact, cost 1 word; covers u), "
        "besides a, which the store keeps too."
    )


def test_log1p_unit_covered_again_is_not_called_partly_covered():
    # log1p: OPT ln(3) = 1.0986, the store ln(2) = 0.6931, u loses 0.4055.
    doc = copy.deepcopy(H9_LINEAR)
    doc["objective"] = {"saturation": "log1p"}
    cv = compare_view(parse_package(doc), 2, store_id="s")
    text = cv.explanation[1]
    assert "only partly covered" not in text
    assert "under log1p saturation every further cover adds value" in text
    assert "covered it with b (atomic_fact, cost 1 word; covers u), besides a, which" in text
    assert "a (atomic_fact" not in text


def test_cap1_partial_unit_lists_only_what_the_store_lacks():
    # cap1: a and b each cover u by 0.5. The store {a} gets 0.5, OPT {a, b} 1: u is only
    # partly covered, and only b is what the optimum covered it with beyond the store.
    doc = copy.deepcopy(H9_LINEAR)
    doc["objective"] = {"saturation": "cap1"}
    doc["candidates"] = [_cand("a", "e0", {"u": 0.5}), _cand("b", "e1", {"u": 0.5})]
    cv = compare_view(parse_package(doc), 2, store_id="s")
    assert cv.explanation[1] == (
        "The store missed 1 current-truth unit, losing 0.5 of the 1 that OPT gets from "
        "current-truth units: u. Of these, u is only partly covered. The optimum covered it "
        "with b (atomic_fact, cost 1 word; covers u), besides a, which the store keeps too."
    )
