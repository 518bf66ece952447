"""CLI defects found by the thirty-fifth session's fresh-eyes audit.

Expected messages and values are stated by hand from the README and the project's rules
(limited runs report incumbent, bound and gap; ignored input is refused or said).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_utils import run_cli

from memaudit_core.audit import AuditRow
from memaudit_core.generators import generate
from memaudit_core.importers import import_package
from memaudit_core.package import dumps_package, load_package

ROOT = Path(__file__).resolve().parent.parent
UPDATE_CHAIN = str(ROOT / "sample_packages" / "update_chain.json")
ARTIFACT = Path(__file__).parent / "fixtures" / "importers" / "artifact_pkg"


# --------------------------------------------------------------------------- audit limits


@pytest.fixture(scope="module")
def hard_package(tmp_path_factory) -> str:
    """300 groups at a 10% budget: neither engine proves it in 0.05 s."""
    path = tmp_path_factory.mktemp("hard") / "rc300.json"
    path.write_text(dumps_package(generate("random_coverage", seed=1, n_groups=300)))
    return str(path)


def test_audit_reports_incumbent_bound_and_gap_of_limited_runs(hard_package, tmp_path):
    """The bounds were computed and dropped: text, JSON, CSV and report.md showed only the
    incumbents and the status "limit"."""
    pkg = load_package(hard_package)
    budget = (
        0.10 * len(pkg.experiences) * (sum(c.cost for c in pkg.candidates) / len(pkg.candidates))
    )
    out = tmp_path / "aud"
    argv = ["audit", hard_package, "--budgets", f"{budget:.3f}", "--time-limit", "0.05"]
    rc, text, _ = run_cli(*argv, "--quiet", "--out", str(out), "--no-figures")
    assert rc == 1  # nothing cross-checked
    # The source is named by its path as given (QA s39 round 2).
    (line,) = [ln for ln in text.splitlines() if ln.startswith(f"- {hard_package},")]
    assert "bnb limit incumbent" in line and "milp limit incumbent" in line
    assert line.count(" bound ") == 2 and line.count(" gap ") == 2
    assert line in (out / "report.md").read_text()

    rc, raw, _ = run_cli(*argv, "--quiet", "--json")
    (row,) = json.loads(raw)["rows"]
    for eng in ("bnb", "milp"):
        assert row[f"{eng}_status"] == "limit"
        # A proven upper bound: at least the incumbent's value, and the gap says by how much.
        assert row[f"{eng}_bound"] >= row[f"{eng}_value"]
        expected_gap = (row[f"{eng}_bound"] - row[f"{eng}_value"]) / row[f"{eng}_value"]
        assert row[f"{eng}_gap"] == pytest.approx(expected_gap, abs=1e-12)
    # Both engines' incumbents are feasible stores, so each is at most the other's bound.
    assert row["bnb_value"] <= row["milp_bound"] + 1e-9
    assert row["milp_value"] <= row["bnb_bound"] + 1e-9


def test_audit_row_saved_before_bounds_reads_as_unknown():
    row = AuditRow.from_dict(
        {
            "instance_hash": "0" * 64,  # a content hash, as every audit wrote
            "pool": "full",
            "budget": 2.0,
            "n_sources": 1,
            "source": "x.json",
            "package_id": "x",
            "family": None,
            "outcome": "agree",
            "bnb_value": 1.0,
            "milp_value": 1.0,
            "abs_diff": 0.0,
            "rel_diff": 0.0,
            "bnb_time_s": 0.1,
            "milp_time_s": 0.1,
            "bnb_status": "optimal",
            "milp_status": "optimal",
            "bnb_nodes": 1,
            "milp_nodes": 1,
            "problems": "",
        }
    )
    assert (row.bnb_bound, row.milp_bound, row.gap("bnb")) == (None, None, None)


# --------------------------------------------------------------------------- flags


def test_workers_beyond_the_packages_are_not_started_or_claimed():
    """``--workers 100000`` for 2 packages was reported as "100000 worker processes"."""
    rc, text, _ = run_cli(
        "sweep", "--family", "memaudit-small:0-1", "--budgets", "2", "--writers", "gvt",
        "--workers", "50", "--quiet",
    )  # fmt: skip
    assert rc == 0
    assert "on 2 worker processes (50 asked; at most one per package)" in text


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["sweep", UPDATE_CHAIN, "--budgets", "2", "-o", "-"], "sweep -o -"),
        (["sweep", UPDATE_CHAIN, "--budgets", "2", "--fresh"], "--fresh applies to the output"),
        (["sweep", UPDATE_CHAIN, "--budgets", "2", "--no-figures"], "--no-figures applies"),
        (["audit", UPDATE_CHAIN, "--budgets", "2", "--fresh"], "--fresh applies to the output"),
        (
            ["sweep", UPDATE_CHAIN, "--workers", "2", "--scheduler", "tcp://127.0.0.1:1"],
            "--workers starts local processes",
        ),
        (["solve", UPDATE_CHAIN, "--solver", "enum", "--node-limit", "5"], "takes no --node-limit"),
        (["solve", UPDATE_CHAIN, "--solver", "brute", "--time-limit", "1"], "takes no --time-limit"),
        (
            ["score", UPDATE_CHAIN, "--writer", "gvt", "--writer-module",
             "plugin_fixtures.fixture_writers:rich"],
            "would not be scored",
        ),
        (["solve", UPDATE_CHAIN, "--budget", "1e-400"], "'1e-400' is too small to hold"),
        (["sweep", UPDATE_CHAIN, "--budgets", "2,1e-400"], "'1e-400' is too small to hold"),
    ],
    ids=[
        "sweep-o-dash", "fresh", "no-figures", "audit-fresh", "scheduler-workers",
        "enum-node-limit", "brute-time-limit", "writer-module-unscored", "budget-underflow",
        "budgets-underflow",
    ],
)  # fmt: skip
def test_ignored_or_mangled_input_is_refused(tmp_path, monkeypatch, argv, says):
    monkeypatch.chdir(tmp_path)
    rc, _, err = run_cli(*argv)
    assert rc == 2
    assert says in err
    assert not (tmp_path / "-").exists()


def test_writer_module_whose_writer_is_named_still_scores():
    spec = "plugin_fixtures.fixture_writers:rich"
    rc, text, _ = run_cli("score", UPDATE_CHAIN, "--writer", spec, "--writer-module", spec)
    assert rc == 0 and "F = " in text


# --------------------------------------------------------------------------- package input


def test_unknown_candidate_type_is_warned_with_its_likely_spelling(tmp_path):
    """Every tombstone renamed Tombstone validated without a word and moved the no_validity
    optimum (the misspelled tombstones are not validity types)."""
    doc = json.loads(Path(UPDATE_CHAIN).read_text())
    n = 0
    for cand in doc["candidates"]:
        if cand["type"] == "tombstone":
            cand["type"] = "Tombstone"
            n += 1
    assert n > 0
    path = tmp_path / "typo.json"
    path.write_text(json.dumps(doc))
    rc, _, err = run_cli("validate", str(path))
    assert rc == 0
    (warning,) = [ln for ln in err.splitlines() if "candidate type" in ln]
    assert f"'Tombstone' ({n} candidate(s)" in warning
    assert "did you mean 'tombstone'?" in warning


def test_known_candidate_types_give_no_type_warning():
    assert not [w for w in load_package(UPDATE_CHAIN).warnings if "candidate type" in w]


def test_artifact_field_typos_and_dropped_cell_fields_are_said(tmp_path):
    art = tmp_path / "art"
    shutil.copytree(ARTIFACT, art)
    meta = json.loads((art / "meta.json").read_text())
    meta["saturaton"] = "linear"
    (art / "meta.json").write_text(json.dumps(meta))
    lines = (art / "candidate_memories.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["costt"] = 99
    lines[0] = json.dumps(first)
    (art / "candidate_memories.jsonl").write_text("\n".join(lines) + "\n")
    cells = (art / "coverage_matrix.jsonl").read_text().splitlines()
    cell = json.loads(cells[1])
    cell["note"] = "checked by hand"
    cells[1] = json.dumps(cell)
    (art / "coverage_matrix.jsonl").write_text("\n".join(cells) + "\n")

    warnings = import_package("artifact", art).meta["warnings"]
    # Session 53: the path into the file, which the message names first.
    assert any(
        w.startswith("$.saturaton: in meta.json: ") and "'saturation'" in w for w in warnings
    )
    assert any(
        w.startswith("$.costt: in candidate_memories.jsonl line 1: ") and "did you mean 'cost'" in w
        for w in warnings
    )
    assert any("(first: coverage_matrix.jsonl:2 ('note'))" in w for w in warnings)


def test_artifact_fixture_as_shipped_has_no_field_warnings():
    meta = import_package("artifact", ARTIFACT).meta
    assert not [w for w in meta.get("warnings", []) if "did you mean" in w or "coverage row" in w]


def test_family_sweep_solver_refusal_names_the_package():
    """``solver 'enum' cannot handle this instance`` did not say which seed."""
    rc, _, err = run_cli(
        "sweep", "--family", "random_coverage:0-1", "--param", "n_groups=40", "--solver", "enum",
        "--budgets", "50", "--writers", "gvt", "--quiet",
    )  # fmt: skip
    assert rc == 2
    assert "error: random_coverage:0: solver 'enum' cannot handle this instance" in err


def test_validate_counts_read_in_the_singular_for_one(tmp_path):
    doc = json.loads(Path(UPDATE_CHAIN).read_text())
    doc["queries"] = [{"id": "q", "requires": [doc["units"][0]["id"]]}]
    path = tmp_path / "one.json"
    path.write_text(json.dumps(doc))
    rc, text, _ = run_cli("validate", str(path))
    assert rc == 0
    assert "4 experiences, 18 candidates, 7 units, 1 query, 0 stores" in text


def test_show_prints_saved_results_with_their_unit_and_audits(tmp_path):
    """show printed "budget 6" where solve said "budget 6 words", refused audit files (which
    read_result reads), and joined a sweep's budgets and row count into one list."""
    outputs = {}
    for name, argv in {
        "solve": ["solve", UPDATE_CHAIN, "--budget", "6"],
        "score": ["score", UPDATE_CHAIN, "--budget", "6", "--writer", "density"],
        "audit": ["audit", UPDATE_CHAIN, "--budgets", "2,6", "--quiet"],
    }.items():
        rc, live, _ = run_cli(*argv)
        assert rc == 0
        rc, raw, _ = run_cli(*argv, "--json")
        path = tmp_path / f"{name}.json"
        path.write_text(raw)
        rc, shown, _ = run_cli("show", str(path))
        assert rc == 0
        outputs[name] = (live, shown)
    live, shown = outputs["solve"]
    assert "budget 6 words" in live.splitlines()[0] and "budget 6 words" in shown.splitlines()[0]
    live, shown = outputs["score"]
    assert (
        shown.splitlines()[0]
        == live.splitlines()[0]
        # The writer's kind since QA s39 (defect 7), as a sweep's report names it.
        == ("density (oracle) on 'update_chain' at budget 6 words")
    )
    live, shown = outputs["audit"]
    assert shown.splitlines()[0] == live.splitlines()[0]
    assert shown.splitlines()[0].startswith("PASS: 2 of 2 checks")


def test_an_unknown_option_after_a_command_shows_that_commands_usage():
    """`solve x.json --bogus` printed the top-level usage, which lists no solve option. Since
    QA s51 #11 no usage is printed: the line names that command's help."""
    rc, _, err = run_cli("solve", UPDATE_CHAIN, "--bogus")
    assert rc == 2
    assert err == (
        "memaudit solve: error: unrecognized arguments: --bogus (see memaudit solve --help)\n"
    )
