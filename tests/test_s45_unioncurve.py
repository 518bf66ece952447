"""QA s45: a union curve is a result like the library's others. It was a bare tuple of rows:
``read_result`` and ``memaudit show`` refused its saved file ("$.result_kind: missing
field"), the file did not say which package, cost unit or keep rule it was solved for, an
edited row read back was not checked, and two curves with other notes compared equal. Its
chart's legend called incumbents "OPT over P+", and its overrun note blamed writers that a
union curve never runs.

Unproven points are forced as in tests/test_s45_overrun.py: the shared total's clock moves
100 s per reading, so each run gets the floor MIN_RUN_S (no timing assert), on a 100-group
package no engine proves in that time.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_utils import run_cli
from package_utils import random_groups_with_store

from memaudit_core import robustness, union
from memaudit_core.errors import ResultError
from memaudit_core.package import load_package
from memaudit_core.results import read_result
from memaudit_ui import figures

SAMPLES = Path(__file__).resolve().parent.parent / "sample_packages"
DEMO = SAMPLES / "external-stores-demo.json"
TOTAL = 1e-9


@pytest.fixture(scope="module")
def demo():
    return load_package(DEMO)


@pytest.fixture(scope="module")
def demo_curve(demo):
    return union.union_curve(demo, budgets=[4, 8])


@pytest.fixture
def unproven_curve(late_clock):
    hard = random_groups_with_store()
    curve = union.union_curve(hard, ["ext"], hard.budget_grid()[2:4], total_time_limit=TOTAL)
    assert not all(r.certified for r in curve)  # the fake clock left a point unproven
    return hard, curve


def _saved(curve) -> dict:
    return json.loads(json.dumps(curve.to_dict()))


# --------------------------------------------------------------------------- round trip


def test_a_union_curve_says_its_package_and_reads_back_equal(demo, demo_curve):
    saved = _saved(demo_curve)
    assert saved["result_kind"] == "union_curve"
    assert (saved["package_id"], saved["content_hash"], saved["cost_unit"], saved["keep"]) == (
        demo.id,
        demo.content_hash(),
        demo.cost_unit,
        "recency",
    )
    again = read_result(saved)
    assert type(again) is union.UnionCurve and again == demo_curve
    assert again.to_dict() == demo_curve.to_dict()
    # Code written for the tuple it was keeps working.
    assert again == tuple(demo_curve) and again[0] == demo_curve[0] and len(again) == 6


def test_an_unproven_curve_reads_back_with_its_notes(unproven_curve):
    _, curve = unproven_curve
    assert curve.notes and curve.n_unproven > 0
    again = read_result(_saved(curve))
    assert again == curve and again.notes == curve.notes
    # Equality counts the notes (it compared the rows alone).
    assert again.replace(notes=()) != curve


def test_show_prints_a_saved_union_curve(demo_curve, tmp_path):
    path = tmp_path / "uc.json"
    path.write_text(json.dumps(demo_curve.to_dict()))
    code, out, err = run_cli("show", str(path))
    assert code == 0, err
    assert f"saved union_curve {path}: package external-stores-demo" in out
    for store in ("mem0", "letta", "amem"):
        assert store in out
    code, out, _ = run_cli("show", str(path), "--json")
    assert code == 0 and json.loads(out)["rows"] == demo_curve.to_dict()["rows"]


def test_show_says_which_points_are_unproven(unproven_curve, tmp_path):
    _, curve = unproven_curve
    path = tmp_path / "uc.json"
    path.write_text(json.dumps(curve.to_dict()))
    code, out, _ = run_cli("show", str(path))
    assert code == 0
    n_unproven = sum(1 for r in curve if not r.certified)
    assert f"note: {n_unproven} of {len(curve)} points rest on an optimum" in out
    assert f"note: The curve's solves shared a total of {TOTAL:g} s; it took" in out


# --------------------------------------------------------------------------- tampering


def _edit_row(key: str, value):
    def edit(saved: dict) -> None:
        saved["rows"][1][key] = value(saved["rows"][1])

    return edit


@pytest.mark.parametrize(
    ("edit", "json_path", "rule"),
    [
        (_edit_row("union_ratio", lambda r: r["union_ratio"] / 2), "$.rows[1].union_ratio",
         "inconsistent"),
        (_edit_row("kept_value", lambda r: r["upper_value"] + 1), "$.rows[1].kept_value",
         "inconsistent"),
        (_edit_row("union_opt_value", lambda r: r["package_opt_value"] - 1),
         "$.rows[1].upper_value", "inconsistent"),
        (_edit_row("union_opt_bound", lambda r: r["union_opt_value"] * 2),
         "$.rows[1].union_opt_bound", "inconsistent"),
        (_edit_row("upper_bound", lambda r: r["upper_value"] - 1), "$.rows[1].upper_bound",
         "inconsistent"),
        (_edit_row("kept_value", lambda r: -1.0), "$.rows[1].kept_value", "allowed-value"),
        (lambda saved: saved.update(n_unproven=3), "$.n_unproven", "inconsistent"),
        (lambda saved: saved.update(keep="newest"), "$.keep", "allowed-value"),
        (lambda saved: saved.pop("package_id"), "$.package_id", "required"),
        (lambda saved: saved.update(hacked=1), "$.hacked", "known-field"),
    ],
)  # fmt: skip
def test_an_edited_curve_is_refused_with_its_path_and_rule(
    demo_curve, tmp_path, edit, json_path, rule
):
    saved = _saved(demo_curve)
    edit(saved)
    with pytest.raises(ResultError) as info:
        read_result(saved)
    assert (info.value.path, info.value.rule) == (json_path, rule)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(saved))
    code, out, err = run_cli("show", str(path))
    assert code != 0 and out == ""
    assert f"{path}: {json_path}:" in err and f"[rule: {rule}]" in err
    assert "Traceback" not in err


def test_a_curve_saved_before_it_said_its_kind_is_named(demo_curve):
    # What to_dict() wrote on the base commit: no kind, no package.
    old = {k: v for k, v in _saved(demo_curve).items() if k in ("result_version", "n_unproven",
                                                               "notes", "rows")}  # fmt: skip
    with pytest.raises(ResultError, match=r"union\.UnionCurve \('union_curve'\)") as info:
        read_result(old)
    assert (info.value.path, info.value.rule) == ("$.result_kind", "required")


# --------------------------------------------------------------------------- chart legend


def _legend(fig) -> list[str]:
    return [t.name for t in fig.data if t.showlegend is not False]


@pytest.mark.parametrize("present", [False, True])
def test_the_legend_calls_unproven_optima_the_best_found(unproven_curve, present):
    _, curve = unproven_curve
    legend = _legend(figures.union_curve_lines(curve, "t", "words", present=present))
    assert "best over P+ (not all proven)" in legend
    assert "best (package candidates) (not all proven)" in legend
    assert not [name for name in legend if "OPT" in name], legend


def test_the_legend_of_a_proven_curve_still_says_opt(demo_curve):
    assert all(r.certified for r in demo_curve)
    legend = _legend(figures.union_curve_lines(demo_curve, "t", "words"))
    assert "OPT over P+" in legend and "OPT (package candidates)" in legend
    assert not [name for name in legend if "not all proven" in name]


# --------------------------------------------------------------------------- note wording


def test_the_overrun_note_of_a_curve_blames_no_writers(unproven_curve):
    _, curve = unproven_curve
    (note,) = [n for n in curve.notes if "shared a total" in n]
    assert "writer" not in note
    assert re.search(r"as the least each of its \d+ solves needs is not interrupted\.$", note)


def test_a_caller_that_runs_writers_still_names_them(late_clock):
    pkg = load_package(SAMPLES / "update_chain.json")
    ns = robustness.noise_sensitivity(
        pkg, "shrink", 0.2, draws=1, budgets=[6], writers=["density"], total_time_limit=TOTAL
    )
    (note,) = [n for n in ns.notes if "shared a total" in n]
    assert re.search(r"as its writers and the least each of its \d+ solves needs are not", note)
