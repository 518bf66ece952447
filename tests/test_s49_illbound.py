"""QA s49: an explicit ``--solver milp`` result on ill-conditioned costs was not certified and
its text said HiGHS's bound was no proof, yet the result itself still carried HiGHS's bound and
a gap of 0: ``solve --json`` printed "bound": 1e9 where a store worth 1e9 + 0.5 fits, and sweep
rows derived ratio_low from that invalid bound. Package and exact oracle: test_s48_milpill.
"""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path

import pytest
from cli_utils import run_cli
from test_s48_milpill import BUDGET, _exact_optimum, _package

OPT = _exact_optimum(_package(), BUDGET)


@pytest.fixture(scope="module")
def pkg_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("ill") / "ill.json"
    path.write_text(json.dumps(_package()))
    return path


def test_solve_json_bound_is_at_least_the_exact_optimum(pkg_path: Path, tmp_path: Path) -> None:
    code, out, _ = run_cli("solve", str(pkg_path), "--solver", "milp", "--json")
    assert code == 0
    doc = json.loads(out)
    assert doc["certified"] is False
    bound, value = Fraction(doc["bound"]), Fraction(doc["value"])
    assert bound >= OPT  # base: 1e9 < 1e9 + 0.5
    assert doc["gap"] > 0 and Fraction(doc["gap"]) >= (OPT - value) / value
    # HiGHS's own figure is kept in the certificate, apart from the bound given. (Before its
    # objective was scaled, QA s49 milptol, that figure was 1e9, below the true optimum.)
    highs_bound = Fraction(doc["certificate"]["checks"][0]["bound"])
    assert highs_bound != bound and highs_bound >= value
    # A saved result reads back, with the same bound and its text.
    saved = tmp_path / "res.json"
    saved.write_text(out)
    code, shown, err = run_cli("show", str(saved))
    assert code == 0, err
    (line,) = [ln for ln in shown.splitlines() if ln.startswith("NOT certified")]
    assert re.search(r"\(HiGHS's bound [0-9.]+ is no proof here\)", line)
    assert "proven bound 1000000000," not in line


def test_sweep_row_lower_ratio_is_at_most_the_true_ratio(pkg_path: Path) -> None:
    code, out, _ = run_cli(
        "sweep", str(pkg_path), "--budgets", "1000000", "--solver", "milp", "--json"
    )
    assert code == 0
    rows = json.loads(out)["rows"]
    assert rows
    for row in rows:
        assert row["certified"] is False
        assert Fraction(row["opt_bound"]) >= OPT
        assert Fraction(row["ratio_low"]) <= Fraction(row["value"]) / OPT


def test_sweep_note_does_not_blame_only_the_time_limit(pkg_path: Path) -> None:
    args = ["sweep", str(pkg_path), "--budgets", "1000000", "--solver", "milp"]
    code, out, _ = run_cli(*args, "--writers", "density", "--time-limit", "30")
    assert code == 0
    note = next(ln for ln in out.splitlines() if ln.startswith("note: 1 of 1 rows"))
    assert "HiGHS's proof and bound were not counted" in note
    assert "--solver auto or bnb" in note
