"""Session 52 (exit statuses and gaps).

1. ``memaudit audit`` exited 0 on an INCOMPLETE verdict (a run stopped by ``--max-tasks``),
   which a CI script read as a pass; an incomplete ``sweep`` exited 0 too, and ``show`` of
   either saved result exited 0. Now every verdict but PASS exits non-zero with one stderr
   line saying why: 3 for tasks left (the same command resumes), 1 for FAIL or NOTHING
   CHECKED, and ``show`` exits as the run did.
2. The app showed MIP gaps as fractions (0.0123) where the CLI printed percent (1.23%), and
   the charts' hover, the audit report and ``show`` of a saved record each had their own
   digits. Every face now prints a gap through ``solvers.gap_percent``.
"""

from __future__ import annotations

import dataclasses
import json
import math
import types
from pathlib import Path

import pandas as pd
import pytest
from app_utils import open_app
from cli_utils import run_cli
from test_s48_milpill import _package as ill_conditioned_package
from test_s53_gapsort import _sprintf_js

from memaudit_core import curves
from memaudit_core.cli import EXIT_INCOMPLETE, EXIT_NOT_PASSED
from memaudit_core.generators import generate
from memaudit_core.solvers import gap_percent, gap_text
from memaudit_core.solvers.certify import certified_gap_text
from memaudit_ui import figures, render

PKG = "sample_packages/update_chain.json"


# ------------------------------------------------------------------ 1: exit statuses


def test_an_incomplete_audit_exits_3_and_says_why_and_show_exits_alike(tmp_path: Path) -> None:
    out = tmp_path / "a"
    args = ("audit", PKG, "--budgets", "2,4,6", "--out", str(out), "--quiet")
    code, text, err = run_cli(*args, "--max-tasks", "1")
    assert text.startswith("INCOMPLETE: ")
    assert code == EXIT_INCOMPLETE == 3
    (line,) = [ln for ln in err.splitlines() if "exit 3" in ln]
    assert line == (
        "memaudit: exit 3: audit: INCOMPLETE, 1 of 3 checks run; the same command with the "
        f"same --out resumes it ({out})"
    )
    code, text, err = run_cli(*args, "--max-tasks", "1", "--json")
    data = json.loads(text)
    assert (data["ok"], data["complete"], data["n_disagree"]) == (False, False, 0) and code == 3
    assert "INCOMPLETE, 2 of 3 checks run" in err
    saved = tmp_path / "incomplete.json"
    saved.write_text(text)
    for extra in ((), ("--json",)):
        code, _, err = run_cli("show", str(saved), *extra)
        assert code == 3
        assert f"exit 3: the audit saved in {saved}: INCOMPLETE, 2 of 3 checks run" in err
    # Resumed to the end: PASS, exit 0, and no reason line; show of it exits 0 too.
    code, text, err = run_cli(*args, "--json")
    assert json.loads(text)["ok"] is True and code == 0 and "exit " not in err
    saved.write_text(text)
    assert run_cli("show", str(saved))[0] == 0


def test_an_incomplete_sweep_exits_3_and_show_of_it_too(tmp_path: Path) -> None:
    out = tmp_path / "s"
    args = ("sweep", PKG, "--budgets", "2,4", "--out", str(out), "--quiet", "--json")
    code, text, err = run_cli(*args, "--max-tasks", "1")
    assert json.loads(text)["complete"] is False
    assert code == 3
    assert "memaudit: exit 3: sweep: incomplete, 1 of " in err and str(out) in err
    saved = tmp_path / "sweep.json"
    saved.write_text(text)
    code, _, err = run_cli("show", str(saved))
    assert code == 3 and f"the sweep saved in {saved}: incomplete" in err
    code, text, _ = run_cli(*args)
    assert json.loads(text)["complete"] is True and code == 0
    saved.write_text(text)
    assert run_cli("show", str(saved))[0] == 0


def test_nothing_checked_says_why_and_show_of_it_exits_1(tmp_path: Path) -> None:
    path = tmp_path / "ill.json"
    path.write_text(json.dumps(ill_conditioned_package()))
    code, text, err = run_cli("audit", str(path), "--budgets", "1000000", "--quiet", "--json")
    data = json.loads(text)
    assert (data["complete"], data["n_agree"], data["n_disagree"]) == (True, 0, 0)
    assert code == EXIT_NOT_PASSED
    assert "exit 1: audit: NOTHING CHECKED, none of the 1 checks was cross-checked" in err
    saved = tmp_path / "nothing.json"
    saved.write_text(text)
    code, _, err = run_cli("show", str(saved))
    assert code == 1 and "NOTHING CHECKED" in err


@pytest.mark.parametrize("command", ["audit", "sweep", "show", None])
def test_help_lists_exit_status_3_where_a_command_gives_it(command: str | None) -> None:
    _, out, _ = run_cli(*([command] if command else []), "--help")
    flat = " ".join(out[out.index("exit status:") :].split())
    assert " 3 " in flat and "left" in flat.split(" 3 ", 1)[1].split(" 130 ")[0]
    if command == "audit":
        assert "PASS" in flat and "INCOMPLETE" in flat
        # A command without tasks to leave lists no 3.
        _, solve_help, _ = run_cli("solve", "--help")
        assert " 3 " not in " ".join(solve_help[solve_help.index("exit status:") :].split())


# ------------------------------------------------------------------ 2: gaps in percent

#: A gap whose two-decimal percent (8.93%) and three-decimal one (8.927%) differ, as a
#: bnb stopped at one node leaves on random_coverage seed 0 (30 groups of 4) at B = 15.77.
GAP = 0.0892739751


def test_gap_percent_is_one_rule() -> None:
    assert gap_percent(GAP) == "8.927%"
    assert gap_percent(0.0123) == "1.23%"
    assert gap_percent(0.0) == gap_percent(-0.0) == "0%"
    assert gap_percent(None) == gap_percent(math.nan) == gap_percent(math.inf) == "n/a"
    # Never "0%" for a gap that is not 0 (HiGHS's certified 4.4e-10, QA s43).
    assert gap_percent(4.4e-10) == "4.4e-8%" and gap_percent(4e-6) == "0.0004%"
    assert gap_percent(6.915) == "691.5%"
    # The CLI's limited-run text and the certified text say the gap the same way.
    assert gap_text(58.7, GAP, 58.7 * (1 + GAP)) == f"gap {gap_percent(GAP)}"
    assert certified_gap_text(3e-10).startswith(f"gap {gap_percent(3e-10)}, ")


def test_charts_hover_the_gap_as_the_cli_prints_it() -> None:
    curve = curves.budget_curve(generate("update_chain"), [2.0, 4.0], [], ablations=())
    first = curve.opt[0]
    open_point = dataclasses.replace(
        first,
        bound=first.value * (1 + GAP),
        gap=GAP,
        status="limit",
        certified=False,
        label="incumbent",
    )
    curve = dataclasses.replace(curve, opt=(open_point, *curve.opt[1:]))
    fig = figures.budget_value_curve(curve, "t")
    (trace,) = [t for t in fig.data if t.name.startswith("not proven")]
    assert "(gap %{customdata[4]})" in trace.hovertemplate
    assert trace.customdata[0][4] == "8.927%"
    # The ablation chart's hover line of an unproven optimum (was "gap 8.93%").
    point = types.SimpleNamespace(full_label="incumbent", bound_and_gap=lambda _: (2.0, GAP))
    assert figures._bound_hover(point, "full") == "<br>proven bound 2 (gap 8.927%)"


def test_show_of_a_saved_certification_record_prints_gaps_in_percent(tmp_path: Path) -> None:
    rep = curves.certification_report(generate("update_chain"), [2.0, 4.0])
    saved = tmp_path / "cert.json"
    saved.write_text(json.dumps(rep.to_dict()))
    code, out, _ = run_cli("show", str(saved))
    assert code == 0
    lines = out.splitlines()
    header = next(ln for ln in lines if "bnb gap" in ln)
    col = header.index("bnb gap")
    cells = [ln[col:].split()[0] for ln in lines[lines.index(header) + 2 :][:2]]
    assert cells == ["0%", "0%"], out


def test_app_tables_show_gaps_in_percent_and_the_csv_keeps_fractions() -> None:
    at = open_app("pages/1_Budget_sweep.py", 300, package="sample:update_chain")
    assert not at.exception, [e.value for e in at.exception]
    grid = next(d for d in at.dataframe if "gap" in d.value.columns and "bound" in d.value)
    # Numbers the grid's printf writes in percent since s53 (test_s53_gapsort): as text, a
    # click on the header sorted them by character.
    fmt = json.loads(grid.proto.columns)["gap"]["type_config"]["format"]
    assert set(grid.value["gap"]) == {0.0} and _sprintf_js(fmt, 0.0) == "0%"
    # Presentation mode's static table shows gap_percent's text.
    df = pd.DataFrame({"budget": [1.0, 2.0, 3.0], "gap": [GAP, 0.0, None]})
    shown = render._gap_cells(df, render._gap_columns({"gap": render.gap_column("gap")}))
    assert shown["gap"].tolist() == ["8.927%", "0%", "n/a"]
    assert df["gap"].tolist()[:2] == [GAP, 0.0]  # the CSV's frame is left as it was


def test_the_exit_line_starts_below_a_bar_left_short_of_its_end(tmp_path: Path) -> None:
    # Lead s52: with the progress bar on, a run stopped by --max-tasks left the bar without its
    # newline, and the exit line was glued to it ("0/3   0.1smemaudit: exit 3: ...").
    args = ("audit", PKG, "--budgets", "2,4,6", "--out", str(tmp_path / "a"), "--max-tasks", "1")
    code, _, err = run_cli(*args)
    assert code == 3
    assert "[" in err  # the bar was drawn (not --quiet)
    lines = err.replace("\r", "\n").splitlines()
    assert any(ln.startswith("memaudit: exit 3: audit: INCOMPLETE") for ln in lines), err
