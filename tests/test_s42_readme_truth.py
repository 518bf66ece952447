"""QA s42 round 2: what the README says against what the product does.

1. An oracle writer "is labelled oracle everywhere", yet ``sweep``'s terminal table (and
   ``show`` of a saved sweep) printed ``gvt``, ``orc:first``, ``my_writer:cheapest_first``
   and the ``-o`` CSV had no kind column; only ``--out``'s report.md labelled them.
2. The README says the certificate names the "HiGHS MILP over counts of interchangeable
   blocks"; ``solve`` of a redundancy_heavy package said only "proven optimal: zero gap, ...".
3. The Certification report recorded HiGHS's objective (1250000000.55) as the MILP run's value
   with gap 0 on QA's p6 package, where ``solve --solver milp`` says F = 1250000000 and gap
   4.4e-10: each run now carries the F recomputed on its store, its gap over that F, and the
   engine's objective as detail (``reported``).
4. The README said plugin error ids are "quoted, each cut past 1,000 characters"; the message
   cuts a long id to its first 72 characters, ``--json``'s ``error.offending`` to 1,000.
5. The Overview showed "Cost used 1e+09" beside "Budget 1,000,000,000" for a store costing
   1000000000.5.

Each test failed on the code before the fix, unless its docstring says it is a regression
guard.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from cli_utils import run_cli
from test_s42_cert_tolerance import P6_DOC

from memaudit_core import curves
from memaudit_core.generators import generate
from memaudit_core.package import dumps_package, parse_package
from memaudit_core.plugins import validate_answer

REPO = Path(__file__).resolve().parent.parent
UPDATE_CHAIN = str(REPO / "sample_packages" / "update_chain.json")
README = REPO / "README.md"

ORACLE = """from memaudit_core.plugins import oracle_writer


@oracle_writer
def first(inst, budget):
    return []
"""

BLIND = """def cheapest_first(view):
    kept, spent, seen = [], 0.0, set()
    for c in sorted(view.candidates, key=lambda c: c.cost):
        if c.experience not in seen and spent + c.cost <= view.budget:
            kept.append(c.id)
            spent += c.cost
            seen.add(c.experience)
    return kept
"""

#: The writers of QA's command, under module names no other test registers.
ORACLE_SPEC = "orc_s42rt:first"
BLIND_SPEC = "blind_s42rt:cheapest_first"
LABELS = {
    "gvt": "gvt (oracle)",
    ORACLE_SPEC: f"{ORACLE_SPEC} (oracle)",
    BLIND_SPEC: f"{BLIND_SPEC} (blind)",
}
KINDS = {"gvt": "oracle", ORACLE_SPEC: "oracle", BLIND_SPEC: "blind"}


def readme_text() -> str:
    return " ".join(README.read_text().split())


@pytest.fixture
def writer_modules(tmp_path: Path, monkeypatch) -> Path:
    (tmp_path / "orc_s42rt.py").write_text(ORACLE)
    (tmp_path / "blind_s42rt.py").write_text(BLIND)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def sweep_args(*extra: str) -> list[str]:
    return [
        "sweep",
        UPDATE_CHAIN,
        "--budgets",
        "4,6",
        "--writers",
        "gvt",
        "--writer-module",
        ORACLE_SPEC,
        "--writer-module",
        BLIND_SPEC,
        "--quiet",
        *extra,
    ]


def table_methods(out: str) -> list[str]:
    """The method cell of each line of the summary table (columns are two spaces apart)."""
    lines = out.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("method "))
    rows = []
    for line in lines[start + 2 :]:
        if not line.strip() or line.startswith("ratio = "):
            break
        rows.append(line.split("  ")[0].strip())
    return rows


def csv_rows(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        return list(reader.fieldnames or []), list(reader)


def check_kind_column(path: Path) -> None:
    columns, rows = csv_rows(path)
    assert columns[columns.index("method") + 1] == "method_kind", columns
    assert {r["method"]: r["method_kind"] for r in rows} == KINDS
    assert len(rows) == 6


# ------------------------------------------------------------------ defect 1: kinds in sweeps


def test_sweep_table_and_csv_label_each_method_with_its_kind(writer_modules: Path) -> None:
    code, out, _ = run_cli(*sweep_args("-o", "rows.csv"))
    assert code == 0, out
    want = [LABELS[m] for m in ("gvt", ORACLE_SPEC, BLIND_SPEC) for _ in (4, 6)]
    assert table_methods(out) == want
    check_kind_column(writer_modules / "rows.csv")


def test_show_of_a_saved_sweep_prints_the_same_labels(writer_modules: Path) -> None:
    code, saved, _ = run_cli(*sweep_args("--json"))
    assert code == 0
    assert json.loads(saved)["method_kinds"] == KINDS
    (writer_modules / "sweep.json").write_text(saved)
    code, out, _ = run_cli("show", "sweep.json")
    assert code == 0, out
    want = [LABELS[m] for m in ("gvt", ORACLE_SPEC, BLIND_SPEC) for _ in (4, 6)]
    assert table_methods(out) == want


def test_suite_sweep_labels_its_table_and_both_csv_files(writer_modules: Path) -> None:
    code, out, _ = run_cli(*sweep_args("--out", "suite", "--no-figures", "-o", "o.csv"))
    assert code == 0, out
    want = [LABELS[m] for m in ("gvt", ORACLE_SPEC, BLIND_SPEC) for _ in (4, 6)]
    assert table_methods(out) == want
    check_kind_column(writer_modules / "o.csv")
    check_kind_column(writer_modules / "suite" / "rows.csv")
    report = (writer_modules / "suite" / "report.md").read_text()
    assert f"- methods: gvt (oracle), {ORACLE_SPEC} (oracle), {BLIND_SPEC} (blind)" in report


def test_readme_says_where_a_sweep_labels_writer_kinds() -> None:
    text = readme_text()
    assert "as a sweep's table, `show` of a saved sweep and report.md do" in text
    assert "adds `method_kind` after `method`" in text


# -------------------------------------------------------- defect 2: the proof in solve's text


@pytest.fixture(scope="module")
def redundancy_heavy(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("rh") / "rh.json"
    path.write_text(dumps_package(generate("redundancy_heavy", n_experiences=300)))
    return path


def certified_line(out: str) -> str:
    (line,) = [ln for ln in out.splitlines() if ln.startswith("certified: ")]
    return line


def test_solve_names_the_counts_model_in_its_certified_line(
    redundancy_heavy: Path, tmp_path: Path
) -> None:
    code, out, _ = run_cli("solve", str(redundancy_heavy), "--budget", "300")
    assert code == 0, out
    line = certified_line(out)
    assert line.startswith("certified: milp=187.97 (proven optimal: zero gap"), line
    assert line.endswith(
        "; proof: HiGHS MILP over counts of interchangeable blocks (model status optimal, "
        "its own gap 0))"
    ), line
    # show of the saved result prints the same line.
    code, saved, _ = run_cli("solve", str(redundancy_heavy), "--budget", "300", "--json")
    assert code == 0
    (tmp_path / "solve.json").write_text(saved)
    code, shown, _ = run_cli("show", str(tmp_path / "solve.json"))
    assert code == 0 and certified_line(shown) == line


def test_readme_quotes_the_certified_line_of_the_counts_model() -> None:
    text = readme_text()
    assert (
        "`solve`'s certified line ends `proof: HiGHS MILP over counts of interchangeable "
        "blocks ...`" in text
    )


# ------------------------------------------- defect 3: the certification report's MILP value


P6_F = 1250000000.0  # u1's weight 2.5e9 x coverage 0.5 (cap1): the optimum e0c1's F


@pytest.fixture(scope="module")
def p6_report() -> curves.CertificationReport:
    return curves.certification_report(parse_package(P6_DOC), [1e9])


def test_certification_runs_carry_the_recomputed_f_and_its_gap(
    p6_report: curves.CertificationReport,
) -> None:
    (row,) = p6_report.rows
    milp = row.run("milp")
    assert milp.selected == ("e0c1",)
    assert milp.value == P6_F == milp.recomputed
    # HiGHS's objective, a feasibility tolerance above F, is detail only.
    assert milp.reported is not None and P6_F < milp.reported < P6_F * (1 + 1e-9)
    assert milp.bound is not None and milp.bound > P6_F
    assert milp.gap == pytest.approx((milp.bound - P6_F) / P6_F, rel=1e-9)
    assert 0 < milp.gap <= 1e-9 and milp.certified
    for engine in ("bnb", "enum"):
        assert row.run(engine).value == P6_F and row.run(engine).certified
    assert row.agreement == 0.0 and row.certified
    table = p6_report.table_rows()[0]
    assert table["milp value"] == P6_F and table["milp reported"] == milp.reported
    assert table["milp gap"] == milp.gap
    assert "bnb reported" not in table  # bnb's objective is its F


def test_certification_report_reads_back_with_reported_values(
    p6_report: curves.CertificationReport,
) -> None:
    saved = json.loads(json.dumps(p6_report.to_dict()))
    run = saved["rows"][0]["runs"][1]
    assert run["engine"] == "milp" and run["value"] == P6_F and run["gap"] > 0
    assert run["reported"] > P6_F
    assert curves.CertificationReport.from_dict(saved) == p6_report
    # A record saved before ``reported`` still reads back, without it.
    for r in saved["rows"][0]["runs"]:
        del r["reported"]
    old = curves.CertificationReport.from_dict(saved)
    assert old.rows[0].run("milp").reported is None


# ------------------------------------------------- defect 4: how plugin error ids are cut


def test_readme_says_how_plugin_error_ids_are_cut() -> None:
    long_id = "x" * 3000
    with pytest.raises(Exception) as info:
        validate_answer("w", {"items": [long_id]}, {"a": ("e1", 1.0)}, 6.0)
    err = info.value
    assert f"'{'x' * 72}'... (3,000 characters)" in str(err)
    assert len(err.offending[0]) <= 1000 and err.offending[0].startswith("x" * 900)
    text = readme_text()
    assert "quoted, each cut past 1,000 characters" not in text
    assert (
        "the message quotes at most 12 per rule broken, an id whose quoted form runs past 200 "
        "characters as its first 72 characters and its length, and `--json`'s "
        "`error.offending` lists them all, each cut to at most 1,000 characters" in text
    )


# ------------------------------------------------- defect 5: the Overview's cost beside B


def test_amount_text_tells_the_cost_from_the_budget() -> None:
    from memaudit_ui.render import amount_text

    assert amount_text(1e9) == "1,000,000,000"
    assert amount_text(1000000000.5, 1e9) == "1,000,000,000.5"
    assert amount_text(6.0, 6.0) == "6" and amount_text(5.5, 6.0) == "5.5"


def test_overview_shows_the_cost_with_the_digits_that_tell_it_from_b() -> None:
    from app_utils import open_app, upload_file

    at = open_app("app.py", 300, package="sample:update_chain")
    upload_file(at, "p6-s42rt.json", json.dumps(P6_DOC).encode())
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Budget (units)"] == "1,000,000,000", metrics
    assert metrics["Cost used (units)"] == "1,000,000,000.5", metrics
