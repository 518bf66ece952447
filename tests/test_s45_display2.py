"""QA s45 (CLI display): candidate and unit ids printed raw in the Compare explanation and in
score's table of missed units; ``show`` dropping a saved result's package warnings; a tampered
union curve read back; a Ctrl-C while the result was written adding an error object after it.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json

import pytest
from cli_utils import run_cli

import memaudit_core as ma
from memaudit_core import cli, explain
from memaudit_core.union import union_curve

SAMPLES = "sample_packages"
LONG_CAND = "L" * 300
LONG_UNIT = "U" * 300


def _lookalike_package() -> dict:
    """Look-alike, comma-holding, multi-line and 300-character ids; store s2 keeps c2 only,
    so the optimum covers what it misses with the others."""
    return {
        "memaudit": 1,
        "id": "ids",
        "cost_unit": "words",
        "budget": 8,
        "experiences": [{"id": f"e{i}", "time": i} for i in range(1, 5)],
        "units": [
            {"id": "u1 ", "kind": "current_truth", "weight": 2},
            {"id": "u1", "kind": "fact", "weight": 1},
            {"id": "u, 2", "kind": "invalidation", "weight": 1.5},
            {"id": "u\n3", "kind": "fact", "weight": 0.7},
            {"id": LONG_UNIT, "kind": "fact", "weight": 1.1},
        ],
        "candidates": [
            {"id": "c2 ", "experience": "e1", "type": "atomic_fact", "cost": 2,
             "coverage": {"u1 ": 1}},
            {"id": "c2", "experience": "e1", "type": "raw_span", "cost": 1, "coverage": {"u1": 1}},
            {"id": "a, b", "experience": "e2", "type": "tombstone", "cost": 1,
             "coverage": {"u, 2": 1}},
            {"id": "x\ny", "experience": "e3", "type": "atomic_fact", "cost": 2,
             "coverage": {"u\n3": 1, "u1": 0.5}},
            {"id": LONG_CAND, "experience": "e4", "type": "summary", "cost": 2,
             "coverage": {LONG_UNIT: 1}},
        ],
        "stores": [{"id": "s2", "select": ["c2"]}],
    }  # fmt: skip


@pytest.fixture
def lookalike(tmp_path):
    path = tmp_path / "ids.json"
    path.write_text(json.dumps(_lookalike_package()))
    return path


def test_the_explanation_quotes_the_optimums_odd_candidate_ids(lookalike, tmp_path):
    pkg = ma.load_package(str(lookalike))
    view = explain.compare_view(pkg, 8, store_id="s2")
    saved = tmp_path / "cv.json"
    saved.write_text(json.dumps(view.to_dict()))
    rc, out, err = run_cli("show", str(saved))
    assert rc == 0, err
    # The explanation is wrapped at 100 columns, as `score` wraps it (s56): read its words.
    out = " ".join(out.split())
    # 'c2 ' is not the store's own c2, 'a, b' one memory, x\ny one line.
    assert "covered it with 'c2 ' (atomic_fact" in out
    assert "covered it with 'a, b' (tombstone" in out
    assert "'x\\ny' (atomic_fact" in out
    assert "L" * 100 not in out
    assert "(300 characters) (summary" in out


def test_score_names_the_missed_units_as_its_lists_do(lookalike):
    rc, out, err = run_cli("score", str(lookalike), "--store", "s2")
    assert rc == 0, err
    table = out.split("units the store missed (by value lost)\n", 1)[1].split("\ncov:")[0]
    firsts = [line.split("  ")[0] for line in table.splitlines()[2:]]
    assert firsts[0] == "'u1 '"  # the look-alike of u1, which the store covers
    assert "u1" not in firsts and "'u, 2'" in firsts and "'u\\n3'" in firsts
    assert "U" * 100 not in out
    # Each long id cut, the unit's and (QA s49's "covered in OPT by" column) the optimum's
    # memory covering it, both 300 characters long here.
    assert max(len(line) for line in table.splitlines()) < 250


def test_show_says_and_keeps_the_saved_package_warnings(lookalike, tmp_path):
    rc, out, solve_err = run_cli("solve", str(lookalike), "--budget", "3", "--json")
    assert rc == 0, solve_err
    doc = json.loads(out)
    assert [w["file"] for w in doc["package_warnings"]] == [str(lookalike)]
    saved = tmp_path / "s3.json"
    saved.write_text(out)
    # Said on stderr as the solve said them.
    said = [line for line in solve_err.splitlines() if ": warning: " in line]
    assert len(said) == len(doc["package_warnings"][0]["warnings"]) > 0
    rc, text, err = run_cli("show", str(saved))
    assert rc == 0, err
    assert [line for line in err.splitlines() if ": warning: " in line] == said
    rc, again, err = run_cli("show", str(saved), "--json")
    assert rc == 0, err
    assert json.loads(again) == doc


def test_a_malformed_package_warnings_list_is_refused(lookalike, tmp_path):
    _, out, _ = run_cli("solve", str(lookalike), "--budget", "3", "--json")
    doc = json.loads(out)
    doc["package_warnings"][0]["warnings"] = "all fine"
    with pytest.raises(ma.ResultError) as caught:
        ma.read_result(doc)
    assert (caught.value.path, caught.value.rule) == (
        "$.package_warnings[0].warnings",
        "type",
    )


@pytest.fixture(scope="module")
def demo_curve_doc():
    pkg = ma.load_package(f"{SAMPLES}/external-stores-demo.json")
    return json.loads(json.dumps(union_curve(pkg, budgets=[6, 24, 48]).to_dict()))


def test_a_curve_edited_to_no_cost_effect_is_refused(demo_curve_doc, tmp_path):
    with open(f"{SAMPLES}/external-stores-demo.json") as fh:
        stores = {s["id"]: s for s in json.load(fh)["stores"]}
    smallest = min(m["cost"] for m in stores["amem"]["memories"])
    assert smallest > 6  # nothing of amem fits budget 6: a cost effect there
    doc = copy.deepcopy(demo_curve_doc)
    k = next(i for i, r in enumerate(doc["rows"]) if (r["store_id"], r["budget"]) == ("amem", 6))
    assert doc["rows"][k]["cost_effect"] is True
    doc["rows"][k]["cost_effect"] = False
    with pytest.raises(ma.ResultError) as caught:
        ma.read_result(doc)
    assert (caught.value.path, caught.value.rule) == (f"$.rows[{k}].cost_effect", "inconsistent")
    saved = tmp_path / "uc.json"
    saved.write_text(json.dumps(doc))
    rc, _, err = run_cli("show", str(saved))
    assert rc == 2 and "cost_effect" in err and "inconsistent" in err


def test_a_curve_with_a_point_twice_is_refused(demo_curve_doc):
    doc = copy.deepcopy(demo_curve_doc)
    doc["rows"].append(copy.deepcopy(doc["rows"][0]))
    with pytest.raises(ma.ResultError) as caught:
        ma.read_result(doc)
    n = len(demo_curve_doc["rows"])
    assert (caught.value.path, caught.value.rule) == (f"$.rows[{n}]", "unique-row")
    assert "$.rows[0]" in str(caught.value)


class _CutStdout(io.StringIO):
    """A stdout on which one Ctrl-C comes after ``after`` characters of the output; what is
    written after it is kept."""

    def __init__(self, after: int) -> None:
        super().__init__()
        self.after: int | None = after

    def write(self, s: str) -> int:
        if self.after is not None and len(s) > self.after - self.tell():
            super().write(s[: self.after - self.tell()])
            self.after = None
            raise KeyboardInterrupt
        return super().write(s)


def _run_cut(after: int, *argv: str) -> tuple[int, str, str]:
    out, err = _CutStdout(after), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = cli.main(list(argv))
    return rc, out.getvalue(), err.getvalue()


def test_ctrl_c_while_a_sweep_result_is_written_adds_no_second_object(tmp_path):
    folder = tmp_path / "o"
    argv = (
        "sweep", "--family", "memaudit-small:0-1", "--writers", "greedy", "--out", str(folder),
        "--no-figures", "--json",
    )  # fmt: skip
    rc, out, err = _run_cut(400, *argv)
    assert rc == 130
    assert len(out) == 400  # the cut-off result, and nothing after it
    assert out.count("json_output_version") == 1 and "Interrupted" not in out
    assert "the run had finished" in err and "cut off" in err
    assert str(folder) in err and "run the same command again" in err
    # As the message says: the folder holds every task, and the same command prints it all.
    rc, again, err = run_cli(*argv)
    assert rc == 0, err
    doc = json.loads(again)
    assert again.startswith(out[: out.index('"memaudit_version"')])
    assert doc["result_kind"] == "sweep_suite"
    assert (doc["executed"], doc["reused"]) == (0, doc["n_tasks"])


def test_ctrl_c_while_a_solve_result_is_written_says_how_to_keep_it():
    rc, out, err = _run_cut(60, "solve", f"{SAMPLES}/travel-assistant.json", "--json")
    assert rc == 130
    assert len(out) == 60 and "Interrupted" not in out
    assert "the run had finished" in err and "memaudit show" in err
