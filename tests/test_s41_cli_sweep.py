"""QA s41, CLI and sweep defects: a package's own ``budgets`` changed unsaid (1), ``-o`` names
of another format written anyway (2), and a resumed suite's report stating a rate for work it
did not do (3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from app_utils import upload_file
from cli_utils import run_cli
from streamlit.testing.v1 import AppTest

REPO = Path(__file__).resolve().parents[1]
UPDATE_CHAIN = REPO / "sample_packages" / "update_chain.json"
LOCOMO = REPO / "tests" / "fixtures" / "importers" / "locomo_small.json"
# update_chain costs 51 words in all, its cheapest candidate 1: the default grid is
# ceil(max(f * 51, 1)) for f = 1%, 2%, 5%, 10%, 20%, 50% -> 1, 2, 3, 6, 11, 26.
DEFAULT_GRID = "1, 2, 3, 6, 11, 26 words"


def _package(tmp_path: Path, name: str, budgets: list) -> Path:
    doc = json.loads(UPDATE_CHAIN.read_text())
    doc["id"] = name
    doc["budgets"] = budgets
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(doc))
    return path


# ------------------------------------------------------------- defect 1: the budgets field


def test_validate_warns_about_a_repeated_package_budget_by_its_json_path(tmp_path):
    pkg = _package(tmp_path, "dup", [4, 4, 6])
    rc, out, err = run_cli("validate", str(pkg))
    assert rc == 0, err
    assert "$.budgets[1]: 4 repeats $.budgets[0]; a sweep runs each budget once" in out + err
    assert "(rule: budgets-distinct)" in out + err


def test_a_sweep_at_a_package_grid_with_a_repeat_says_so(tmp_path):
    pkg = _package(tmp_path, "dup", [4, 4, 6])
    rc, out, err = run_cli("sweep", str(pkg), "--writers", "gvt", "--quiet")
    assert rc == 0, err
    assert "1 package(s) x 2 budget(s)" in out
    assert (
        f"note: {pkg}: $.budgets gives 4 more than once ($.budgets[1]; rule: budgets-distinct)"
        in out
    )


def test_an_empty_budgets_list_is_warned_about_and_the_default_grid_said(tmp_path):
    pkg = _package(tmp_path, "empty", [])
    rc, out, err = run_cli("validate", str(pkg))
    assert rc == 0, err
    assert "$.budgets: the list is empty" in out + err and "(rule: budgets-grid)" in out + err
    rc, out, err = run_cli("sweep", str(pkg), "--writers", "gvt", "--quiet")
    assert rc == 0, err
    assert (
        f"note: {pkg}: $.budgets is empty, read as no grid given: the default grid is used "
        f"({DEFAULT_GRID})" in out
    )


def test_a_suite_report_says_which_sources_had_a_repeated_or_empty_grid(tmp_path):
    folder = tmp_path / "pkgs"
    folder.mkdir()
    _package(folder, "dup", [4, 4, 6])
    _package(folder, "empty", [])
    out = tmp_path / "out"
    rc, stdout, err = run_cli(
        "sweep", str(folder), "--writers", "gvt", "--out", str(out), "--no-figures", "--quiet"
    )
    assert rc == 0, err
    report = (out / "report.md").read_text()
    for text in (report, stdout):
        assert "dup.json: $.budgets gives 4 more than once ($.budgets[1]" in text
        assert (
            f"empty.json: $.budgets is empty, read as no grid given: the default grid is used ({DEFAULT_GRID})"
            in text
        )  # noqa: E501


def test_the_budget_sweep_page_says_an_empty_package_grid_is_the_default(tmp_path):
    doc = json.loads(_package(tmp_path, "empty-grid", []).read_text())
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.query_params["package"] = "sample:update_chain"
    at.run()
    upload_file(at, "empty-grid.json", json.dumps(doc).encode())
    at.switch_page("pages/1_Budget_sweep.py").run()
    assert not at.exception, [e.value for e in at.exception]
    infos = [i.value.replace("\\", "") for i in at.info]  # markdown escapes dropped
    wanted = (
        "empty-grid.json: $.budgets is empty, read as no grid given: the default grid is used "
        f"({DEFAULT_GRID})"
    )
    assert wanted in infos, infos


# ------------------------------------------------------- defect 2: -o names another format


@pytest.mark.parametrize(
    ("argv", "name", "wanted"),
    [
        (["sweep", str(UPDATE_CHAIN), "--writers", "gvt", "--budgets", "3"], "x.parquet", ".csv"),
        (["sweep", "--family", "update_chain:0-1", "--budgets", "3"], "x.parquet", ".csv"),
        (["generate", "update_chain"], "u.csv", ".json"),
        (["import", "locomo", str(LOCOMO), "--instance", "conv-a"], "p.parquet", ".json"),
    ],
)
def test_an_output_name_of_another_format_is_refused(tmp_path, argv, name, wanted):
    target = tmp_path / name
    rc, _, err = run_cli(*argv, "--quiet" if argv[0] == "sweep" else "--json", "-o", str(target))
    assert rc == 2
    assert f"the file name must end in {wanted}, not {target.suffix} (rule: output-suffix)" in err
    assert not target.exists()


def test_output_names_of_the_format_or_without_a_suffix_are_written(tmp_path):
    """Regression guard (passes before the fix too): the rule refuses only a wrong suffix."""
    for name in ("rows.CSV", "rows"):
        target = tmp_path / name
        rc, _, err = run_cli(
            "sweep", str(UPDATE_CHAIN), "--writers", "gvt", "--budgets", "3", "--quiet",
            "-o", str(target),
        )  # fmt: skip
        assert rc == 0, err
        header = target.read_text().splitlines()[0].split(",")
        assert {"method", "budget", "ratio"} <= set(header), header


# ------------------------------------------- defect 3: a resumed suite's rate in report.md


def test_a_resumed_suite_report_states_no_rate_for_reused_work(tmp_path):
    out = tmp_path / "out"
    argv = ["sweep", "--family", "memaudit-small:0-3", "--budgets", "3", "--no-figures"]
    rc, _, err = run_cli(*argv, "--writers", "gvt", "--out", str(out), "--quiet")
    assert rc == 0, err
    assert "packages/s)" in (out / "report.md").read_text()  # all 4 tasks ran now
    rc, _, err = run_cli(*argv, "--writers", "gvt", "--out", str(out), "--quiet")
    assert rc == 0, err
    report = (out / "report.md").read_text()
    assert "0 run now, 4 reused from the journal" in report
    assert "packages/s" not in report
    assert "(all 4 task(s) reused from the journal, none run now: no rate)" in report
    # Half reused: the rate is over the 4 density tasks run now only.
    rc, _, err = run_cli(*argv, "--writers", "gvt,density", "--out", str(out), "--quiet")
    assert rc == 0, err
    report = (out / "report.md").read_text()
    assert "4 run now, 4 reused from the journal" in report
    assert "tasks/s over the 4 run now; the 4 reused are not counted)" in report
    assert "packages/s" not in report
