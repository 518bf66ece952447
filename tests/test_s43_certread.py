"""QA s43 (certread): a certified solve whose own certificate contradicts certification was
read back and shown as "proven optimal ... engines agree".

The edits QA made to ``memaudit solve update_chain.json --budget 6 --json``: the
certificate's ``agreement`` set to false, a check's ``feasible`` to false, a check's
``n_selected`` to 7 beside 3 selected ids, a non-empty ``reason``, and ``selected`` /
``selected_idx`` cut to one candidate (consistent with each other, not with the checks).
Certification never records any of these (``solvers.certify.finish``). A score result's F
rests on the package, which a saved result does not hold; what its own counts give (an empty
store is worth 0 and costs 0) is held.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from cli_utils import run_cli

import memaudit_core as ma
from memaudit_core.errors import ResultError

REPO = Path(__file__).resolve().parents[1]
UPDATE_CHAIN = REPO / "sample_packages" / "update_chain.json"


def _json_of(*argv: str) -> dict:
    rc, out, err = run_cli(*argv, "--json")
    assert rc == 0, err
    return json.loads(out)


@pytest.fixture(scope="module")
def solve_doc() -> dict:
    doc = _json_of("solve", str(UPDATE_CHAIN), "--budget", "6")
    # QA's file: enum proved 7.735 on three candidates, bnb agreed on the same store.
    assert doc["certified"] is True
    assert doc["selected"] == [
        "update_1_tombstone",
        "update_2_tombstone",
        "update_3_compound_update",
    ]
    assert [c["engine"] for c in doc["certificate"]["checks"]] == ["enum", "bnb"]
    assert doc["certificate"]["agreement"] is True
    assert doc["certificate"]["reason"] == ""
    assert ma.read_result(doc).certified  # the genuine file reads back
    return doc


@pytest.fixture(scope="module")
def score_doc() -> dict:
    doc = _json_of("score", str(UPDATE_CHAIN), "--budget", "6", "--writer", "density")
    assert doc["result_kind"] == "store_evaluation" and len(doc["selected"]) == 4
    return doc


def _set(doc: dict, dotted: str, value) -> dict:
    doc = copy.deepcopy(doc)
    *head, last = [int(k) if k.isdigit() else k for k in dotted.split(".")]
    here = doc
    for key in head:
        here = here[key]
    here[last] = value
    return doc


def _show_refuses(tmp_path: Path, doc: dict, at: str) -> str:
    """``memaudit show`` of ``doc`` exits 2 naming the file, ``at`` and the rule; the
    library's read_result refuses it at ``at`` too."""
    with pytest.raises(ResultError) as info:
        ma.read_result(doc)
    assert (info.value.path, info.value.rule) == (at, "inconsistent"), str(info.value)
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    rc, out, err = run_cli("show", str(path))
    assert rc == 2, out
    assert "s.json" in err and f"{at}:" in err and "[rule: inconsistent]" in err, err
    assert "engines agree" not in out
    return err


@pytest.mark.parametrize(
    ("edit", "value", "at"),
    [
        ("certificate.agreement", False, "$.certificate.agreement"),
        # Two engines proved it: certification records their agreement, never null.
        ("certificate.agreement", None, "$.certificate.agreement"),
        ("certificate.checks.0.feasible", False, "$.certificate.checks[0].feasible"),
        ("certificate.checks.1.feasible", False, "$.certificate.checks[1].feasible"),
        ("certificate.checks.0.n_selected", 7, "$.certificate.checks[0].n_selected"),
        ("certificate.reason", "edited", "$.certificate.reason"),
    ],
)
def test_certified_solve_contradicting_its_certificate_is_refused(
    tmp_path, solve_doc, edit, value, at
) -> None:
    _show_refuses(tmp_path, _set(solve_doc, edit, value), at)


def test_certified_solve_with_fewer_selected_than_its_engine_returned_is_refused(
    tmp_path, solve_doc
) -> None:
    doc = _set(_set(solve_doc, "selected", ["update_1_tombstone"]), "selected_idx", [3])
    err = _show_refuses(tmp_path, doc, "$.certificate.checks[0].n_selected")
    assert "1 candidate selected" in err and "store of 3" in err


def test_nested_optimum_of_a_score_is_held_to_the_same_rules(score_doc) -> None:
    doc = _set(score_doc, "opt.certificate.agreement", False)
    with pytest.raises(ResultError) as info:
        ma.read_result(doc)
    assert info.value.path == "$.opt.certificate.agreement"


def test_one_engine_certificate_cannot_claim_agreement(tmp_path) -> None:
    inst = ma.compile_package(ma.load_package(UPDATE_CHAIN))
    doc = json.loads(json.dumps(ma.solve(inst, 6, cross_check=False).to_dict()))
    assert [c["engine"] for c in doc["certificate"]["checks"]] == ["enum"]
    assert doc["certificate"]["agreement"] is None
    path = tmp_path / "one.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    rc, out, _ = run_cli("show", str(path))
    assert rc == 0 and "no second engine run" in out and "engines agree" not in out
    for value in (True, False):
        _show_refuses(
            tmp_path, _set(doc, "certificate.agreement", value), "$.certificate.agreement"
        )


def test_cross_checks_store_returned_is_counted_by_its_own_check(solve_doc) -> None:
    """finish returns the cross-check's store when the engines agree and it is worth more
    (within their tolerance): that check, not the primary's, counts the selected ids. The
    certificate's ``returned_check`` says so (session 51)."""
    doc = _set(solve_doc, "certificate.checks.0.n_selected", 7)
    doc = _set(doc, "certificate.returned_check", 1)
    value = doc["value"]
    doc = _set(doc, "certificate.checks.0.recomputed_value", value - 1e-12)
    doc = _set(doc, "certificate.checks.0.value", value - 1e-12)
    assert ma.read_result(doc).certificate.checks[0].n_selected == 7
    with pytest.raises(ResultError) as info:
        ma.read_result(_set(doc, "certificate.checks.1.n_selected", 2))
    assert info.value.path == "$.certificate.checks[1].n_selected"


def test_score_with_an_empty_store_worth_more_than_zero_is_refused(tmp_path, score_doc) -> None:
    assert ma.read_result(score_doc).value == pytest.approx(5.65)
    doc = _set(score_doc, "selected", [])
    with pytest.raises(ResultError) as info:
        ma.read_result(doc)
    assert (info.value.path, info.value.rule) == ("$.value", "inconsistent")
    path = tmp_path / "score.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    rc, out, err = run_cli("show", str(path))
    assert rc == 2 and "score.json" in err and "$.value:" in err, (out, err)
