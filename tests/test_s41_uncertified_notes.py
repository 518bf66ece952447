"""QA s41 (notes on uncertified optima): the gap text at the package's scale, the certificate's
reason in score's note, and a sweep note that blames a time limit only when one was reached.

Packages: tests/fixtures/s41_notes/tiny.json (unit weights of about 1e-13) and cs9.json (costs
spanning more than a factor 1e5, so a HiGHS proof is not certified), copied from QA's inputs.
"""

from __future__ import annotations

import json
from pathlib import Path

import memaudit_core as ma
from memaudit_core.analysis import _denominator_notes, uncertified_note
from memaudit_core.cli import main
from memaudit_core.importers import load_external_store
from memaudit_core.solvers import gap_text

HERE = Path(__file__).parent / "fixtures" / "s41_notes"
TINY = HERE / "tiny.json"
CS9 = HERE / "cs9.json"
HIGHS_REASON = "the affordable costs span more than a factor 100000"


# ------------------------------------------------------------------ defect 1: gap at scale


def test_gap_text_of_a_package_in_units_of_1e13_is_the_gap() -> None:
    # F 1.06575e-13, bound 1.2246e-13: (1.2246 - 1.06575) / 1.06575 = 14.905%.
    assert gap_text(1.06575e-13, 0.149050, 1.2246e-13) == "gap 14.905%"


def test_solve_text_gives_the_gap_of_the_json_for_a_tiny_package(capsys) -> None:
    args = ["solve", str(TINY), "--budget", "7", "--solver", "bnb", "--node-limit", "1"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "proven bound 1.2246e-13, gap 14.905%" in out
    assert "incumbent 0" not in out


def test_score_note_gives_the_gap_for_a_tiny_package() -> None:
    inst = ma.compile_package(ma.load_package(str(TINY)))
    opt = ma.solve(inst, 7, "bnb", node_limit=1)
    assert opt.status == "limit"
    notes = _denominator_notes(opt, 6.6785e-14, 7, "OPT")
    assert "proven upper bound 1.2246e-13, gap 14.905%" in notes[0]
    assert "incumbent 0" not in notes[0]


def test_store_above_a_tiny_denominator_is_noted() -> None:
    # F 1.2e-13 over a denominator 1.0e-13: 20% above it, hidden by an absolute 1e-12.
    inst = ma.compile_package(ma.load_package(str(TINY)))
    opt = ma.solve(inst, 7, "bnb", node_limit=1)
    notes = _denominator_notes(opt, 1.2e-13, 7, "OPT")
    assert any("exceeds the denominator 1.06575e-13" in n for n in notes)


def test_union_report_does_not_call_a_tiny_optimum_zero(tmp_path: Path) -> None:
    pkg = ma.load_package(str(TINY))
    export = {
        "results": [
            {"id": f"m{k}", "memory": f"memory {k}", "metadata": {"unit_ids": [f"u{k}"]}}
            for k in range(3)
        ]
    }
    path = tmp_path / "mem0.json"
    path.write_text(json.dumps(export))
    store = load_external_store(str(path), "mem0", package=pkg)
    rep = ma.union_report(ma.with_store(pkg, store), store.id, 7)
    assert rep.union_opt.value > 1e-14 and rep.union_ratio is not None
    assert not any("OPT over the union package is 0" in n for n in rep.notes)
    assert not any("upper-pruned bound is 0" in n for n in rep.notes)


# ------------------------------------------------------------- defect 2: the reason in score


def test_score_note_says_why_a_milp_optimum_is_uncertified(capsys) -> None:
    args = ["score", str(CS9), "--budget", "1010", "--solver", "milp", "--writer", "density"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "The denominator is optimal (uncertified) (15.486)" in out
    note = next(line for line in out.splitlines() if "The denominator is" in line)
    assert HIGHS_REASON in note
    assert "use solver 'bnb' or 'auto'" in note


def test_compare_view_notes_carry_the_reason() -> None:
    from memaudit_core.explain import compare_view

    pkg = ma.load_package(str(CS9))
    cv = compare_view(pkg, 1010, writer="density", solver="milp")
    assert any(
        "The denominator is optimal (uncertified)" in n and HIGHS_REASON in n for n in cv.notes
    )


# ----------------------------------------------------- defect 3: limit or refused proof


def test_sweep_note_does_not_blame_an_unreached_time_limit(capsys) -> None:
    args = ["sweep", str(CS9), "--budgets", "1010", "--solver", "milp", "--writers", "density"]
    assert main([*args, "--time-limit", "30"]) == 0
    out = capsys.readouterr().out
    note = next(line for line in out.splitlines() if line.startswith("note: 1 of 1 rows"))
    assert "time limit of 30 s" not in note
    assert "--time-limit" not in note
    assert "1 closed the gap, but the engine's proof did not meet the certification rule" in note
    assert "rerun with --solver auto or bnb" in note


def test_uncertified_note_advises_each_kind_of_row() -> None:
    class Limited:
        certified = False
        opt, opt_bound = 1.0, 1.5

    class Refused:
        certified = False
        opt = opt_bound = 15.486

    note = uncertified_note([Limited(), Refused(), Refused()], time_limit=30.0)
    assert note is not None
    assert note.startswith("3 of 3 rows compare with an optimum that was not certified (")
    assert "1 stopped with an open gap, at the time limit of 30 s" in note
    assert "2 closed the gap, but the engine's proof did not meet" in note
    assert (
        "rerun with a longer --time-limit, or none for the rows with an open gap, and "
        "--solver auto or bnb for the others" in note
    )
