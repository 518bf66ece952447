"""QA s44 (costunit): a sweep over packages of different cost units averaged one budget number
across them, 20 words with 20 chars, in one summary line with no note; its rows had no
cost_unit column, so the mixing could not be seen afterwards either.

Every summary line is now over one cost unit (a line per method, budget and unit, with a
note when units mix), the rows say their package's unit, and the CLI table, ``--json``,
``show``, ``--out``'s report and tables and the Budget sweep page's seed band all say it.
Expected ratios come from ``score`` of each package alone, not from the sweep's summary.
"""

from __future__ import annotations

import copy
import csv
import json
from pathlib import Path

import pytest
from app_utils import open_app, upload_file
from cli_utils import run_cli

from memaudit_core import read_result
from memaudit_core.analysis import score, sweep
from memaudit_core.curves import family_band
from memaudit_core.errors import ResultError
from memaudit_core.package import load_package

BUDGETS = (20.0, 40.0)
WRITERS = ("gvt", "density")
UNITS = ("words", "chars")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The QA repro: one event_graph package costed in words, one in chars."""
    root = tmp_path_factory.mktemp("units")
    (root / "units").mkdir()
    for unit in UNITS:
        code, out, err = run_cli(
            "generate",
            "event_graph",
            "--seed",
            "1",
            "--param",
            "n_experiences=20",
            "--param",
            f"cost_rule={unit}",
            "-o",
            str(root / "units" / f"eg_{unit}.json"),
        )
        assert code == 0, out + err
    return root


def package_file(folder: Path, unit: str) -> Path:
    return folder / "units" / f"eg_{unit}.json"


@pytest.fixture(scope="module")
def expected(folder: Path) -> dict[tuple[str, float, str], float]:
    """(method, budget, unit) -> the ratio of that unit's one package, scored alone."""
    out = {}
    for unit in UNITS:
        path = package_file(folder, unit)
        assert json.loads(path.read_text())["cost_unit"] == unit  # the package's own field
        pkg = load_package(path)
        for b in BUDGETS:
            for w in WRITERS:
                out[w, b, unit] = score(pkg, b, writer=w).ratio
    # The repro's point: the two units give different ratios at one budget number.
    assert expected_differs(out)
    return out


def expected_differs(ratios: dict[tuple[str, float, str], float]) -> bool:
    return any(
        abs(ratios[w, b, "words"] - ratios[w, b, "chars"]) > 0.05 for w in WRITERS for b in BUDGETS
    )


@pytest.fixture(scope="module")
def saved(folder: Path) -> dict:
    code, out, err = run_cli(
        "sweep",
        str(folder / "units"),
        "--budgets",
        "20,40",
        "--writers",
        ",".join(WRITERS),
        "--quiet",
        "--out",
        str(folder / "out"),
        "--json",
    )
    assert code == 0, err
    return json.loads(out)


def summary_lines(out: str) -> list[list[str]]:
    """The CLI summary table's cells (columns are two or more spaces apart)."""
    lines = out.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("method "))
    rows = [lines[start].split()]
    for line in lines[start + 2 :]:
        if not line.strip() or line.startswith("ratio = "):
            break
        rows.append([c.strip() for c in line.split("  ") if c.strip()])
    return rows


def check_table(out: str, expected: dict[tuple[str, float, str], float]) -> None:
    header, *rows = summary_lines(out)
    assert header[:4] == ["method", "budget", "cost", "unit"], header
    got = {(r[0].split()[0], float(r[1]), r[2]): (int(r[3]), float(r[4])) for r in rows}
    want = {key: (1, round(ratio, 3)) for key, ratio in expected.items()}
    assert got == want
    assert "2 cost units (chars: 1 package, words: 1 package)" in out


def test_the_cli_table_has_one_line_per_cost_unit_and_a_note(folder: Path, expected) -> None:
    code, out, err = run_cli(
        "sweep", str(folder / "units"), "--budgets", "20,40", "--writers", "gvt,density", "--quiet"
    )
    assert code == 0, err
    check_table(out, expected)


def test_the_plain_sweep_of_files_splits_the_same_way(folder: Path, expected) -> None:
    files = [str(package_file(folder, u)) for u in UNITS]
    code, out, err = run_cli("sweep", *files, "--budgets", "20,40", "--writers", "gvt,density")
    assert code == 0, err
    header, *rows = summary_lines(out)
    assert header[:4] == ["method", "budget", "cost", "unit"], header
    got = {(r[0].split()[0], float(r[1]), r[2]): float(r[4]) for r in rows}
    assert got == {key: round(ratio, 3) for key, ratio in expected.items()}
    assert "never averages packages of different units" in out


def test_json_rows_and_summary_say_their_cost_unit(saved: dict, folder: Path, expected) -> None:
    for row in saved["rows"]:
        unit = json.loads(Path(folder / row["source"]).read_text())["cost_unit"]
        assert row["cost_unit"] == unit
    got = {
        (s["method"], s["budget"], s["cost_unit"]): (s["n"], s["mean_ratio"])
        for s in saved["summary"]
    }
    assert got == {key: (1, pytest.approx(ratio, rel=1e-12)) for key, ratio in expected.items()}
    assert any("2 cost units" in n for n in saved["notes"])
    back = read_result(saved)
    assert {r.cost_unit for r in back.rows} == set(UNITS)
    assert back.to_dict()["summary"] == saved["summary"]


def test_show_of_the_saved_sweep_prints_the_units(saved: dict, folder: Path, expected) -> None:
    path = folder / "sweep.json"
    path.write_text(json.dumps(saved))
    code, out, err = run_cli("show", str(path))
    assert code == 0, err
    check_table(out, expected)


def test_out_report_and_tables_say_the_units(saved: dict, folder: Path, expected) -> None:
    out = folder / "out"
    report = (out / "report.md").read_text()
    assert "| method | budget | cost unit | n |" in report
    for (method, budget, unit), ratio in expected.items():
        assert f"| {method} | {budget:g} | {unit} | 1 | {ratio:.3f} |" in report
    assert "2 cost units" in report
    with (out / "rows.csv").open(newline="") as fh:
        reader = csv.DictReader(fh)
        columns, rows = list(reader.fieldnames or []), list(reader)
    assert columns[columns.index("budget") + 1] == "cost_unit"
    assert {(r["package_id"].endswith("chars"), r["cost_unit"]) for r in rows} == {
        (False, "words"),
        (True, "chars"),
    }
    with (out / "summary.csv").open(newline="") as fh:
        summary = list(csv.DictReader(fh))
    assert sorted((s["method"], s["cost_unit"], s["n"]) for s in summary) == sorted(
        (m, u, "1") for m, _, u in expected
    )


def test_edited_units_are_refused_and_old_files_read(saved: dict) -> None:
    doc = copy.deepcopy(saved)
    doc["summary"][0]["cost_unit"] = None  # a pooled line beside rows that say their unit
    with pytest.raises(ResultError) as exc:
        read_result(doc)
    assert (exc.value.path, exc.value.rule) == ("$.summary[0].cost_unit", "inconsistent")
    doc = copy.deepcopy(saved)
    first = doc["rows"][0]
    other = next(u for u in UNITS if u != first["cost_unit"])
    doc["rows"][0]["cost_unit"] = other  # one package content in two units
    with pytest.raises(ResultError) as exc:
        read_result(doc)
    assert exc.value.rule == "inconsistent" and exc.value.path.endswith(".cost_unit")
    doc = copy.deepcopy(saved)
    doc["rows"][0]["cost_unit"] = " "
    with pytest.raises(ResultError) as exc:
        read_result(doc)
    assert (exc.value.path, exc.value.rule) == ("$.rows[0].cost_unit", "allowed-value")
    # A sweep saved before rows and lines said their unit still reads back.
    words = [r for r in saved["rows"] if r["cost_unit"] == "words"]
    old = copy.deepcopy(saved)
    old["rows"] = words
    old["summary"] = [s for s in saved["summary"] if s["cost_unit"] == "words"]
    old["n_tasks"] = old["executed"] = len(words)
    # The words package alone: its rows come from one package (QA s49 counts them).
    assert len({r["content_hash"] for r in words}) == 1
    old["n_sources"] = old["n_packages"] = 1
    for part in (*old["rows"], *old["summary"]):
        del part["cost_unit"]
    back = read_result(old)
    assert {r.cost_unit for r in back.rows} == {None}
    assert [s.n for s in back.summary] == [1] * len(old["summary"])


def test_the_library_sweep_splits_by_unit(folder: Path, expected) -> None:
    pkgs = [load_package(package_file(folder, u)) for u in UNITS]
    res = sweep(pkgs, list(BUDGETS), list(WRITERS))
    got = {(s.method, s.budget, s.cost_unit): (s.n, s.mean_ratio) for s in res.summary}
    assert got == {key: (1, pytest.approx(ratio, rel=1e-12)) for key, ratio in expected.items()}
    assert any("2 cost units" in n for n in res.notes)
    back = read_result(json.loads(json.dumps(res.to_dict())))
    assert back == res


def test_a_family_band_says_its_packages_unit() -> None:
    band = family_band(
        "event_graph",
        [0, 1],
        {"n_experiences": 8, "cost_rule": "chars"},
        [40],
        ["writer:gvt"],
        ablations=(),
    )
    assert band.cost_unit == "chars"
    assert read_result(json.loads(json.dumps(band.to_dict()))) == band


def test_the_budget_sweep_page_labels_the_band_with_the_bands_unit(folder: Path) -> None:
    """An edited package in another unit than its family makes: the seed band is over the
    family's packages (words), and its table said the package's unit (chars)."""
    path = package_file(folder, "words")
    doc = json.loads(path.read_text())
    doc["cost_unit"] = "chars"
    doc["id"] = "edited-to-chars"
    at = open_app()
    upload_file(at, "edited.json", json.dumps(doc).encode())
    at.switch_page("pages/1_Budget_sweep.py").run()
    at.toggle(key="sweep_seed_range").set_value(True).run()
    at.number_input(key="sweep_seed_to").set_value(1).run()
    assert not at.exception, [e.value for e in at.exception]
    band = next(d for d in at.dataframe if "mean ratio" in d.value.columns)
    labels = {col: cfg.get("label") for col, cfg in json.loads(band.proto.columns).items()}
    assert labels["budget"] == "budget (words)", labels
