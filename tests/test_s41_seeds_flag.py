"""QA s41 (docs conformance): ``--seeds`` gives the seeds of each ``--family`` without its own.

The help of ``memaudit sweep`` and ``memaudit audit`` says ``--seeds SEEDS  seeds for --family
without its own``, but ``sweep --family memaudit-small:0-2 --family density_trap --seeds 5``
was refused as "seeds given twice (--family NAME:A-B and --seeds)", untrue for density_trap.
Now density_trap runs seed 5 and memaudit-small its own seeds 0-2; ``--seeds`` is refused only
when every ``--family`` names its own seeds (it would apply to nothing), and the refusal says
so, naming the flags.
"""

from __future__ import annotations

import json

import pytest

from memaudit_core.cli import main


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    code = main([*argv, "--json", "--quiet"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def test_sweep_gives_seeds_to_the_family_without_its_own(capsys):
    out = _run(capsys, "sweep", "--family", "memaudit-small:0-2", "--family", "density_trap",
               "--seeds", "5", "--budgets", "6", "--writers", "gvt")  # fmt: skip
    rows = [(r["source"], r["family"], r["seed"], r["method"]) for r in out["rows"]]
    assert sorted(rows) == [
        ("density_trap:5", "density_trap", 5, "gvt"),
        ("memaudit-small:0", "memaudit-small", 0, "gvt"),
        ("memaudit-small:1", "memaudit-small", 1, "gvt"),
        ("memaudit-small:2", "memaudit-small", 2, "gvt"),
    ]
    # density_trap got --seeds, so the "ran seed 0 only" note would be untrue.
    assert not any("without seeds" in n for n in out["notes"]), out["notes"]


def test_audit_gives_seeds_to_the_family_without_its_own(capsys):
    out = _run(capsys, "audit", "--family", "memaudit-small:0-1", "--family", "density_trap",
               "--seeds", "5", "--budgets", "6")  # fmt: skip
    assert sorted(r["source"] for r in out["rows"]) == [
        "density_trap:5",
        "memaudit-small:0",
        "memaudit-small:1",
    ]
    assert out["n_sources"] == 3
    assert not any("without seeds" in n for n in out["notes"]), out["notes"]


@pytest.mark.parametrize("command", ["sweep", "audit"])
def test_seeds_that_apply_to_no_family_are_refused_saying_so(capsys, command):
    argv = [command, "--family", "memaudit-small:0-1", "--family", "density_trap:3",
            "--seeds", "5", "--budgets", "6", "--quiet"]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    # The command named once, in the error line's head (QA s51 #11).
    assert err.startswith(
        f"memaudit {command}: error: --seeds 5 applies to no family: every --family names its "
        "own seeds (--family memaudit-small:0-1, --family density_trap:3)"
    ), err
    assert "given twice" not in err


def test_a_family_without_seeds_next_to_a_seeded_one_is_noted(capsys):
    """Regression guard (passes before the fix too): with no --seeds, the family without
    its own still runs seed 0 only, and the note names it (not the seeded family)."""
    out = _run(capsys, "sweep", "--family", "memaudit-small:0-1", "--family", "density_trap",
               "--budgets", "6", "--writers", "gvt")  # fmt: skip
    assert sorted(r["source"] for r in out["rows"]) == [
        "density_trap:0",
        "memaudit-small:0",
        "memaudit-small:1",
    ]
    notes = [n for n in out["notes"] if "without seeds" in n]
    assert notes == [
        "--family density_trap without seeds ran seed 0 only: pass --seeds A-B "
        "(or NAME:A-B) for a seed range"
    ]
