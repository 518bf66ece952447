"""Review s48, findings 3, 5 and 8:

3. The cut note of a sweep of several packages named each package by its id alone: two
   different packages with one id read "in conv-a, store s (budgets 2, 4 words); in conv-a,
   store s (budget 2 words)", as if one package were cut at three budgets.
5. The † mark and its footnote scanned every writer failure again for each summary line
   (O(lines x failures)); they now reuse one count per line. The counts must still be those
   of the failures.
8. The speed benchmark counted a sweep row present twice as ``only_in_sweep``, a row the
   baseline lacks, though the baseline has it.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from cli_utils import run_cli

from memaudit_core.analysis import SummaryRow
from memaudit_core.cli import summary_table
from memaudit_core.generators import generate
from memaudit_core.package import save_package
from memaudit_core.writers import PLUGIN_WRITERS, WriterFailure

REPO = Path(__file__).resolve().parent.parent

# ------------------------------------------------------ 3. packages with one id in the cut note


def _package(path: Path, pid: str, costs: list[float]) -> None:
    """A package whose store ``s`` holds one raw span of each cost (it costs their sum)."""
    exps = [{"id": f"e{i}", "time": i} for i in range(len(costs))]
    doc = {
        "memaudit": 1,
        "id": pid,
        "cost_unit": "words",
        "experiences": exps,
        "units": [{"id": f"u{i}", "weight": 1} for i in range(len(costs))],
        "candidates": [
            {"id": f"e{i}:raw", "experience": f"e{i}", "type": "raw_span", "cost": c,
             "coverage": {f"u{i}": 1}}
            for i, c in enumerate(costs)
        ],
        "stores": [{"id": "s", "select": [f"e{i}:raw" for i in range(len(costs))]}],
    }  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc), encoding="utf-8")


@pytest.mark.parametrize("suite", [False, True], ids=["sweep", "sweep --out"])
def test_two_packages_with_one_id_are_told_apart_in_the_cut_note(
    tmp_path: Path, suite: bool
) -> None:
    costs = {"A": [2.0, 3.0], "B": [1.0, 2.5]}  # store s costs 5 and 3.5
    for folder, c in costs.items():
        _package(tmp_path / folder / "conv-a.json", "conv-a", c)
    paths = [str(tmp_path / f / "conv-a.json") for f in costs]
    out = ["--out", str(tmp_path / "out")] if suite else []
    code, text, err = run_cli(
        "sweep", *paths, "--stores", "s", "--writers", "gvt", "--budgets", "2,4",
        "--quiet", "--json", *out,
    )  # fmt: skip
    assert code == 0, err
    result = json.loads(text)
    # Independently: store s is cut where its cost exceeds the budget, in each file.
    cut = {
        (r["source"], r["content_hash"], r["budget"])
        for r in result["rows"]
        if r["method"] == "s" and r["store_cut"] > 0
    }
    by_file = {(s, h) for s, h, _ in cut}
    assert len(by_file) == 2 and {r["package_id"] for r in result["rows"]} == {"conv-a"}
    (note,) = [n for n in result["notes"] if "cut to what fits" in n]
    clauses = re.findall(r"in (conv-a[^,]*), store s \(budgets? ([^)]*)\)", note)
    assert len(clauses) == 2, note
    names = [name for name, _ in clauses]
    assert len(set(names)) == 2, note  # on the base: "conv-a" twice
    for source, digest in sorted(by_file):
        # The suite's rows say their source; the plain sweep's note has only the content.
        tag = source if suite else f"content_hash {digest[:12]}"
        budgets = sorted(b for s, h, b in cut if (s, h) == (source, digest))
        shown = ", ".join(f"{b:g}" for b in budgets)
        assert (f"conv-a ({tag})", f"{shown} words") in clauses, note


def test_packages_with_distinct_ids_are_named_by_id_alone() -> None:
    from memaudit_core.analysis import cut_note

    rows = [
        SimpleNamespace(package_id=p, content_hash=h, source=f"{p}.json", method="s",
                        budget=1.0, store_cut=1)
        for p, h in [("p1", "h1"), ("p2", "h2")]
    ]  # fmt: skip
    assert cut_note(rows) == (
        "stores cost more than some budgets in all 2 swept packages: in p1, store s (budget "
        "1); in p2, store s (budget 1); each was cut to what fits there, keeping the most "
        "recent memories that fit (column store_cut: memories dropped)"
    )


# -------------------------------------------------- 5. the † mark and footnote count failures


def _failed_cells(errors: list[WriterFailure], line: SummaryRow) -> int:
    """A line's failures, by the rule the README states: its writer and budget, and its unit
    (a failure or line without a unit, saved before they said it, matches any unit)."""
    n = 0
    for e in errors:
        if e.writer != line.method or e.budget != line.budget:
            continue
        if e.cost_unit is None or line.cost_unit is None or e.cost_unit == line.cost_unit:
            n += 1
    return n


def _line(method: str, budget: float, unit: str | None, n: int) -> SummaryRow:
    return SummaryRow(method, budget, n, 0, 0.5 if n else None, None, None, None, None, 0, unit)


def _failure(writer: str, budget: float, unit: str | None, i: int) -> WriterFailure:
    return WriterFailure(
        f"p{i}", None, budget, writer, "exception", "raised", "boom", (), None, unit
    )


def test_the_mark_and_footnote_count_each_lines_failures() -> None:
    summary = [
        _line("w", 2.0, "words", 3),  # 2 words failures + 1 without a unit
        _line("w", 2.0, "chars", 1),  # 1 chars failure + 1 without a unit
        _line("w", 4.0, "words", 0),  # all failed: n/a, no mark
        _line("w", 8.0, "words", 4),  # none failed
        _line("v", 2.0, "words", 2),  # another writer's failure at 2 words
        _line("w", 16.0, None, 1),  # a line saved without a unit: all its budget's failures
    ]
    spec = [
        ("w", 2.0, "words", 2), ("w", 2.0, "chars", 1), ("w", 2.0, None, 1),
        ("w", 4.0, "words", 3), ("v", 2.0, "words", 1), ("w", 16.0, "words", 2),
        ("w", 16.0, "chars", 1), ("x", 2.0, "words", 5),
    ]  # fmt: skip
    errors = [_failure(w, b, u, i) for w, b, u, k in spec for i in range(k)]
    expected = [_failed_cells(errors, s) for s in summary]
    assert expected == [3, 2, 3, 0, 1, 3]
    marked = [k for s, k in zip(summary, expected, strict=True) if s.n and k]
    table = summary_table(summary, (), errors)
    rows = [line for line in table.splitlines() if line.split()[:1] in (["w"], ["v"])]
    assert len(rows) == len(summary)
    assert ["†" in r for r in rows] == [
        bool(s.n and k) for s, k in zip(summary, expected, strict=True)
    ]
    footnote = (
        f"†: {len(marked)} line(s) average fewer packages than were swept at their budget: "
        f"the writer failed there on {sum(marked)} package x budget cell(s) in all"
    )
    assert footnote in table, table
    assert "n/a: 1 of 6 lines have no defined ratio (1 where the writer failed)" in table


PLUGIN = """\
def flaky(view):
    # Fails on some packages at some budgets, on all at 8, else keeps nothing.
    total = int(sum(c.cost for c in view.candidates))
    if (total + int(view.budget)) % 3 == 0 or view.budget == 8:
        raise RuntimeError("flaky")
    return []
"""


def test_the_sweeps_report_marks_the_lines_its_failures_make_fewer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "flaky_s48r3.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = "flaky_s48r3:flaky"
    paths = []
    for s in range(4):
        paths.append(tmp_path / f"small{s}.json")
        save_package(generate("memaudit-small", s), paths[-1])
    paths.append(tmp_path / "chars.json")
    save_package(generate("event_graph", 1, n_experiences=8, cost_rule="chars"), paths[-1])
    out = tmp_path / "out"
    try:
        code, text, err = run_cli(
            "sweep", *map(str, paths), "--budgets", "2,4,8,40", "--writer-module", spec,
            "--writers", f"{spec},gvt", "--out", str(out), "--no-figures", "--json", "--quiet",
        )  # fmt: skip
    finally:
        for name in [n for n, info in PLUGIN_WRITERS.items() if "flaky_s48r3" in (info.spec or "")]:
            PLUGIN_WRITERS.pop(name, None)
    assert code in (0, 2), err
    result = json.loads(text)
    errors = [WriterFailure.from_dict(e) for e in result["errors"]]
    summary = [
        SummaryRow(**{k: s[k] for k in SummaryRow.__dataclass_fields__}) for s in result["summary"]
    ]
    expected = [_failed_cells(errors, s) for s in summary]
    marked = [k for s, k in zip(summary, expected, strict=True) if s.n and k]
    # The sweep has marked lines, a line where everything failed, and unmarked lines.
    assert marked and any(k and not s.n for s, k in zip(summary, expected, strict=True))
    assert len(marked) < len(summary)
    report = (out / "report.md").read_text()
    table = [line for line in report.splitlines() if line.startswith(f"| {spec} |")]
    assert len(table) == sum(s.method == spec for s in summary)
    assert sum("†" in line for line in table) == len(marked)
    # The failed column is each line's count.
    failed_col = [int(line.strip().strip("|").split("|")[-1]) for line in table]
    assert failed_col == [k for s, k in zip(summary, expected, strict=True) if s.method == spec]
    assert (
        f"†: {len(marked)} line(s) average fewer packages than were swept at their budget: the "
        f"writer failed there on {sum(marked)} package x budget cell(s) in all"
    ) in report


# --------------------------------------------------- 8. the bench's duplicate sweep rows


def _bench_speed():
    # The script puts bench/ first on sys.path to import its siblings; keep that to the load.
    saved = list(sys.path)
    try:
        where = REPO / "bench" / "bench_speed.py"
        spec = importlib.util.spec_from_file_location("s48_rev3_bench_speed", where)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = saved
    return module


def test_a_repeated_sweep_row_is_a_duplicate_not_a_row_the_baseline_lacks() -> None:
    bench = _bench_speed()
    Base = SimpleNamespace
    base = {("p", 2.0, "gvt"): Base(value=1.0, opt=1.0, store=None, cost=0.0)}
    row = SimpleNamespace(package_id="p", budget=2.0, method="gvt", value=1.0, opt=1.0, cost=0.0)
    extra = SimpleNamespace(package_id="q", budget=2.0, method="gvt", value=1.0, opt=1.0, cost=0.0)
    found = bench.mismatches(base, [row, row, row, extra, extra], {})
    assert found["only_in_sweep"] == 1  # q, once: the baseline lacks it
    assert found["duplicate_in_sweep"] == 3  # the second and third p, the second q
    assert found["only_in_baseline"] == 0
    assert sum(found.values()) == 4
