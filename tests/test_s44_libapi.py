"""QA s44 (library API): registered writers' answers, sweeps with nothing to sweep or a string
of budgets, infeasible incumbents, the note on an overrun total, and the uncertified-rows note.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import memaudit_core as ma
from memaudit_core.analysis import uncertified_note
from memaudit_core.cli import main
from memaudit_core.curves import budget_curve
from memaudit_core.errors import MemAuditError
from memaudit_core.suites import sweep_suite
from memaudit_core.writers import WriterError

SAMPLE = Path(__file__).resolve().parents[1] / "sample_packages" / "update_chain.json"


@pytest.fixture
def pkg() -> ma.Package:
    return ma.load_package(SAMPLE)


@pytest.fixture
def registered():
    """Register writers for one test and remove them afterwards (the registry is global)."""
    names: list[str] = []

    def add(name, fn):
        ma.register_writer(ma.WriterInfo(name, "QA s44", "oracle", fn), replace=True)
        names.append(name)

    yield add
    for name in names:
        ma.unregister_writer(name)


# ------------------------------------------------------------ 1: a registered writer's answer


def test_a_registered_writer_returning_none_is_not_said_to_have_raised(pkg, registered):
    registered("s44_none", lambda inst, b: None)
    with pytest.raises(WriterError) as exc:
        ma.score(pkg, 6, writer="s44_none")
    text = str(exc.value)
    assert "must return a list of candidate positions" in text
    assert "got NoneType None" in text
    assert "raised" not in text


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        (lambda inst, b: {0}, ["got set {0}", "a set has no order"]),
        (lambda inst, b: frozenset({0}), ["got frozenset"]),
        (lambda inst, b: (i for i in [0]), ["got generator"]),
        (lambda inst, b: np.array([[0]]), ["got ndarray"]),
    ],
)
def test_a_registered_writer_must_answer_a_sequence_as_a_blind_plugin(
    pkg, registered, answer, words
):
    registered("s44_unordered", answer)
    with pytest.raises(WriterError, match="must return a list of candidate positions") as exc:
        ma.score(pkg, 6, writer="s44_unordered")
    for word in words:
        assert word in str(exc.value)


@pytest.mark.parametrize("kind", [list, tuple, np.array])
def test_lists_tuples_and_arrays_of_positions_are_scored(pkg, registered, kind):
    # The package's first candidate (read from its JSON, in the compiled order) alone.
    first = json.loads(SAMPLE.read_text())["candidates"][0]["id"]
    registered("s44_seq", lambda inst, b: kind([inst.candidate_idx(first)]))
    ev = ma.score(pkg, 6, writer="s44_seq")
    assert ev.selected == (first,)


# ------------------------------------------------------------ 2 and 6: sweep's arguments


def test_a_library_sweep_with_nothing_to_sweep_is_refused(pkg):
    with pytest.raises(MemAuditError, match=r"sweep\(\): nothing to sweep \(no writers"):
        ma.sweep([pkg], [3], [])


def test_a_suite_with_nothing_to_sweep_is_refused():
    with pytest.raises(MemAuditError, match="nothing to sweep"):
        sweep_suite(families=["update_chain"], seeds=[0], budgets=[3], writers=[])


def test_the_cli_keeps_its_message(capsys):
    assert main(["sweep", str(SAMPLE), "--budgets", "3", "--writers", "", "--quiet"]) == 2
    err = capsys.readouterr().err
    # The command named once, in the error line's head (QA s51 #11).
    assert "memaudit sweep: error: nothing to sweep (no writers, ablations or stores named)" in err


def test_a_string_of_budgets_is_refused_as_not_a_list(pkg):
    with pytest.raises(MemAuditError, match=r"sweep\(\): expected a list of budgets, got '36'"):
        ma.sweep([pkg], "36", ["gvt"])
    # QA s47: a lone number is refused too, as budget_curve and union_curve refuse it.
    with pytest.raises(ma.UsageError, match=r"sweep\(\): expected a list of budgets, got 6 "):
        ma.sweep([pkg], 6, ["gvt"])


# ------------------------------------------------------------ 3: an infeasible incumbent


def _positions(inst, ids):
    return tuple(inst.candidate_idx(c) for c in ids)


def test_an_incumbent_over_the_budget_is_refused(pkg):
    raw = json.loads(SAMPLE.read_text())
    first_three = raw["candidates"][:3]
    cost = sum(c["cost"] for c in first_three)
    assert cost > 1  # from the JSON: the three cost more than the budget 1
    inst = ma.compile_package(pkg)
    inc = _positions(inst, [c["id"] for c in first_three])
    with pytest.raises(MemAuditError, match="incumbent_idx is not a feasible selection") as exc:
        ma.solve(inst, 1, incumbent_idx=inc)
    assert f"it costs {cost:g}, over the budget 1" in str(exc.value)


def test_two_candidates_of_one_experience_are_refused(pkg):
    raw = json.loads(SAMPLE.read_text())
    exp = raw["candidates"][0]["experience"]
    same = [c["id"] for c in raw["candidates"] if c["experience"] == exp][:2]
    assert len(same) == 2
    inst = ma.compile_package(pkg)
    inc = _positions(inst, same)
    with pytest.raises(MemAuditError, match=f"2 candidates of experience '{exp}'"):
        ma.solve(inst, 100, incumbent_idx=inc)
    with pytest.raises(MemAuditError, match=f"2 candidates of experience '{exp}'"):
        ma.solve_budgets(inst, [100], incumbents=[inc])
    with pytest.raises(MemAuditError, match="repeats position"):
        ma.solve(inst, 100, incumbent_idx=(inc[0], inc[0]))


def test_a_feasible_incumbent_is_still_taken(pkg):
    raw = json.loads(SAMPLE.read_text())
    first = raw["candidates"][0]
    inst = ma.compile_package(pkg)
    plain = ma.solve(inst, 6)
    started = ma.solve(inst, 6, incumbent_idx=_positions(inst, [first["id"]]))
    assert first["cost"] <= 6
    assert started.value == pytest.approx(plain.value, rel=1e-12)


# ------------------------------------------------------------ 4: an overrun total is said


def _slow(inst, budget):
    # Writers are not stopped by a total time limit; this one alone overruns 0.01 s.
    time.sleep(0.6)
    return ()


def test_a_sweep_that_overran_its_total_says_how_long(pkg, registered):
    registered("s44_slow", _slow)
    res = ma.sweep([pkg], [6], ["s44_slow"], total_time_limit=0.01)
    took = [n for n in res.notes if "s in all" in n]
    assert len(took) == 1
    assert "shared a total of 0.01 s; it took" in took[0]


def test_a_budget_curve_that_overran_its_total_says_how_long(pkg, registered):
    registered("s44_slow", _slow)
    curve = budget_curve(pkg, [6], ["s44_slow"], ablations=(), total_time_limit=0.01)
    assert any("0.01 s; it took" in n and "s in all" in n for n in curve.notes)


# ------------------------------------------------------------ 7: the uncertified-rows note


def test_the_closed_gap_note_names_a_limit_cut_proof_too():
    # QA's row: event_graph 300 at B = 10, OPT 14.5 against a bound 14.500000011671673
    # (a relative gap of 8e-10, within CERTIFIED_GAP_MAX) after a 0.05 s total.
    row = SimpleNamespace(certified=False, opt=14.5, opt_bound=14.500000011671673)
    note = uncertified_note([row], 0.05)
    assert "a relative gap left within HiGHS's tolerance when a limit cut the proof short" in note
