"""QA s44 (sweeps of packages with different cost units, and the notes around them).

1. report.md's ``failed`` column counted a writer failure on every cost unit's line of its
   budget: a writer failing only on the chars packages read as failed at 20 words too (the
   CLI's n/a reasons likewise).
2. "the summary pools 2 families" (and "2 families pooled" on the figure) where no summary
   line held two families' packages; the note pointed at report.md under the CLI's own table
   by family, and report.md at itself.
3. A sweep saved before rows carried their cost unit read back with no caution that a line
   may average packages of different units.
4. Ctrl-C before any task finished said "0 of N tasks are saved ...: run the same command
   again to resume".
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_utils import run_cli

import memaudit_core.suites as suites
from memaudit_core import plugins
from memaudit_core.analysis import SummaryRow
from memaudit_core.cli import summary_table
from memaudit_core.generators import generate
from memaudit_core.package import save_package
from memaudit_core.results import read_result
from memaudit_core.suites import SavedTasks, sweep_figure
from memaudit_core.writers import PLUGIN_WRITERS, WriterFailure

REPO = Path(__file__).resolve().parents[1]
PLUGIN = "s44_unitnotes_plugin:w"
LIMIT = 60
PLUGIN_SOURCE = f"""
def w(view):
    if max(c.cost for c in view.candidates) > {LIMIT}:
        raise RuntimeError("boom on a package with a costly candidate")
    kept, spent, seen = [], 0.0, set()
    for c in sorted(view.candidates, key=lambda c: (c.cost, c.id)):
        if c.experience not in seen and spent + c.cost <= view.budget:
            kept.append(c.id)
            spent += c.cost
            seen.add(c.experience)
    return kept
"""


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    """A blind writer that fails on every package with a candidate costing over LIMIT."""
    home = tmp_path / "plugin"
    home.mkdir()
    (home / "s44_unitnotes_plugin.py").write_text(PLUGIN_SOURCE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(home))
    monkeypatch.delenv(plugins.WRITER_MODULES_ENV, raising=False)
    yield PLUGIN
    PLUGIN_WRITERS.pop(PLUGIN, None)


def _mixed_folder(tmp_path: Path) -> Path:
    """event_graph seeds 1-2 with 12 experiences, costs in words and in chars."""
    folder = tmp_path / "mix"
    folder.mkdir()
    for rule, tag in (("words", "w"), ("chars", "c")):
        for seed in (1, 2):
            pkg = generate("event_graph", seed, n_experiences=12, cost_rule=rule)
            save_package(pkg, folder / f"{tag}{seed}.json")
    return folder


def _expected_failures(folder: Path) -> dict[str, int]:
    """Packages per cost unit on which the plugin fails, read from the files themselves."""
    out: dict[str, int] = {}
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        costly = max(c["cost"] for c in data["candidates"]) > LIMIT
        out[data["cost_unit"]] = out.get(data["cost_unit"], 0) + int(costly)
    return out


def _report_lines(report: str, method: str) -> dict[tuple[str, str], list[str]]:
    """report.md's summary table lines of ``method``, by (budget, cost unit)."""
    header = next(line for line in report.splitlines() if line.startswith("| method |"))
    names = [c.strip() for c in header.strip("|").split("|")]
    lines = {}
    for line in report.split("\n## ")[0].splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if line.startswith("| ") and cells[0] == method:
            row = dict(zip(names, cells, strict=True))
            lines[(row["budget"], row["cost unit"])] = row
    return lines


# --------------------------------------------------------------------------- 1. failed column


def test_a_failure_counts_only_on_its_own_cost_units_line(tmp_path, plugin):
    folder = _mixed_folder(tmp_path)
    expected = _expected_failures(folder)
    # The files make the case: the writer fails on chars packages only.
    assert expected == {"words": 0, "chars": 2}
    out = tmp_path / "out"
    argv = ("sweep", str(folder), "--budgets", "20,60", "--writers", "density")
    rc, printed, err = run_cli(*argv, "--writer-module", plugin, "--quiet", "--out", str(out))
    assert rc == 2, err
    report = (out / "report.md").read_text(encoding="utf-8")
    lines = _report_lines(report, plugin)
    assert sorted(lines) == [("20", "chars"), ("20", "words"), ("60", "chars"), ("60", "words")]
    for (budget, unit), row in lines.items():
        assert row["failed"] == str(expected[unit]), (budget, unit, row)
    # A journal written before failures said their unit resumes with the package's unit.
    journal = out / "journal.jsonl"
    records = [json.loads(line) for line in journal.read_text(encoding="utf-8").splitlines()]
    stripped = 0
    for rec in records:
        error = rec.get("result", {}).get("error") if isinstance(rec.get("result"), dict) else None
        if isinstance(error, dict) and "cost_unit" in error:
            del error["cost_unit"]
            stripped += 1
    assert stripped == 4  # 2 chars packages x 2 budgets
    journal.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    rc, _, err = run_cli(*argv, "--writer-module", plugin, "--quiet", "--out", str(out))
    assert rc == 2, err
    again = _report_lines((out / "report.md").read_text(encoding="utf-8"), plugin)
    assert {k: r["failed"] for k, r in again.items()} == {k: str(expected[k[1]]) for k in lines}


def test_the_cli_says_a_line_failed_only_where_its_unit_failed():
    summary = (
        SummaryRow("mine", 20.0, 0, 1, None, None, None, None, None, 0, "words"),
        SummaryRow("mine", 20.0, 0, 0, None, None, None, None, None, 0, "chars"),
    )
    record = {
        **{"package_id": "p", "seed": None, "budget": 20.0, "writer": "mine", "kind": "blind"},
        **{"reason": "raised", "error": "boom", "offending": [], "traceback": None},
    }
    failure = WriterFailure.from_dict({**record, "cost_unit": "chars"})
    text = summary_table(summary, {"mine": "blind"}, [failure])
    # words: OPT = 0 only; chars: the failure only.
    assert "(1 with OPT = 0 at that budget, 1 where the writer failed)" in text
    # With its package's family since QA s49 (None: not said, as in this record).
    assert failure.to_dict() == {**record, "cost_unit": "chars", "family": None}
    # A failure saved before failures said their unit reads back without one.
    assert WriterFailure.from_dict(record).cost_unit is None


# --------------------------------------------------------------------------- 2. pooling notes


def test_families_each_of_one_unit_are_not_said_to_be_pooled(tmp_path):
    chars = tmp_path / "c1.json"
    save_package(generate("event_graph", 1, n_experiences=12, cost_rule="chars"), chars)
    argv = ("sweep", "--family", "update_chain", str(chars), "--budgets", "20")
    argv += ("--writers", "density", "--quiet")
    rc, printed, err = run_cli(*argv)
    assert rc == 0, err
    assert "pools" not in "\n".join(li for li in printed.splitlines() if li.startswith("note:"))
    assert "No line of the table above pools families" in printed
    rc, saved, err = run_cli(*argv, "--json")
    assert rc == 0, err
    data = json.loads(saved)
    assert {r["family"]: r["cost_unit"] for r in data["rows"]} == {
        "update_chain": "words",
        "event_graph": "chars",
    }
    assert not [n for n in data["notes"] if "pools" in n]
    path = tmp_path / "s.json"
    path.write_text(saved, encoding="utf-8")
    assert "pooled" not in sweep_figure(read_result(path)).layout.title.text


def test_the_pooling_note_points_where_the_families_are_shown(tmp_path):
    argv = ("sweep", "--family", "update_chain", "--family", "temporal_interval")
    argv += ("--budgets", "4", "--writers", "density", "--quiet")
    rc, printed, err = run_cli(*argv)
    assert rc == 0, err
    assert "The table above pools 2 families; by family:" in printed
    assert (
        "note: the summary pools 2 families (package files count as one); per-family means: "
        "the table by family above"
    ) in printed
    rc, saved, err = run_cli(*argv, "--json")
    notes = [n for n in json.loads(saved)["notes"] if n.startswith("the summary pools")]
    assert len(notes) == 1 and "family_summaries" in notes[0] and "above" not in notes[0]
    out = tmp_path / "out"
    rc, _, err = run_cli(*argv, "--out", str(out), "--no-figures")
    assert rc == 0, err
    report = (out / "report.md").read_text(encoding="utf-8")
    pooled = [li for li in report.splitlines() if li.startswith("> Note: the summary pools")]
    assert pooled == [
        "> Note: the summary pools 2 families (package files count as one); per-family means: "
        "the table by family above"
    ]
    assert report.index("## By family") < report.index(pooled[0])


# --------------------------------------------------------------------------- 3. old sweep files


CAUTION = "note: saved before cost units were recorded: a summary line may pool packages"


def _without_units(data: dict) -> dict:
    for part in ("rows", "summary"):
        for item in data[part]:
            del item["cost_unit"]
    return data


def test_a_sweep_saved_before_cost_units_says_a_line_may_pool_units(tmp_path):
    files = [
        str(REPO / "sample_packages" / f"{n}.json") for n in ("update_chain", "temporal_interval")
    ]
    rc, saved, err = run_cli("sweep", *files, "--writers", "gvt", "--budgets", "4", "--json")
    assert rc == 0, err
    new = tmp_path / "new.json"
    new.write_text(saved, encoding="utf-8")
    old = tmp_path / "old.json"
    old.write_text(json.dumps(_without_units(json.loads(saved))), encoding="utf-8")
    rc, shown, err = run_cli("show", str(old))
    assert rc == 0, err
    assert CAUTION in shown
    rc, shown_json, err = run_cli("show", str(old), "--json")
    assert any(n.startswith("saved before cost units") for n in json.loads(shown_json)["notes"])
    rc, shown, err = run_cli("show", str(new))
    assert rc == 0 and CAUTION not in shown, err
    # One package: no line can pool two.
    rc, one, err = run_cli("sweep", files[0], "--writers", "gvt", "--budgets", "4", "--json")
    single = tmp_path / "one.json"
    single.write_text(json.dumps(_without_units(json.loads(one))), encoding="utf-8")
    rc, shown, err = run_cli("show", str(single))
    assert rc == 0 and CAUTION not in shown, err


# --------------------------------------------------------------------------- 4. interrupt at 0


def test_an_interrupt_before_any_task_finished_offers_no_resume(tmp_path, monkeypatch):
    assert SavedTasks(0, 594, tmp_path / "journal.jsonl").text() == (
        "interrupted before any task finished; nothing is saved yet"
    )

    def interrupted(jobs, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(suites, "_sweep_worker", interrupted)
    out = tmp_path / "w"
    argv = ("sweep", "--family", "memaudit-small:0-1", "--budgets", "2", "--writers", "gvt")
    code, _, stderr = run_cli(*argv, "--out", str(out), "--quiet")
    assert code == 130
    assert "memaudit: interrupted before any task finished; nothing is saved yet" in stderr
    assert not re.search(r"\b0 of \d+ tasks", stderr) and "resume" not in stderr
    code, stdout, _ = run_cli(*argv, "--out", str(out), "--quiet", "--json")
    assert json.loads(stdout)["error"]["message"] == (
        "interrupted before any task finished; nothing is saved yet"
    )
