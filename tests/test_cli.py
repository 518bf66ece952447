"""The `memaudit` CLI: JSON contracts, exit codes, user mistakes, and the paper's published
values reproduced end to end through the command line.

The expected numbers below come from the paper (reference/PAPER_FAMILIES.md), an independent
source, never from this code's earlier output.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memaudit_core.cli import main
from memaudit_core.errors import MemAuditError
from memaudit_core.specs import parse_number_list, parse_seeds

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "sample_packages"
MALFORMED = REPO / "tests" / "malformed"


def exit_code(argv: list[str]) -> int:
    """``main``'s status, or argparse's when an option's value is refused while parsing."""
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


def run_json(capsys, *argv: str) -> dict:
    code = main([*argv, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


# (family, budget) -> (OPT, gvt ratio, density ratio, no_validity_opt ratio), from the paper.
PUBLISHED = {
    ("update_chain", 3): (5.55, 1.000, 0.351, 0.486),
    ("update_chain", 6): (7.735, 1.000, 0.730, 0.513),
    ("update_chain", 13): (8.025, 1.000, 0.704, 0.698),
    ("temporal_interval", 3): (3.2, 1.000, 0.914, 0.656),
    ("temporal_interval", 6): (6.0, 1.000, 0.662, 0.700),
    ("temporal_interval", 13): (10.635, 0.905, 0.924, 0.831),
}


@pytest.mark.parametrize(("family", "budget"), sorted(PUBLISHED))
def test_published_values_through_the_cli(capsys, tmp_path, family, budget):
    opt, gvt, density, no_validity = PUBLISHED[(family, budget)]
    path = tmp_path / f"{family}.json"
    assert main(["generate", family, "--seed", "0", "-o", str(path)]) == 0
    capsys.readouterr()

    solved = run_json(capsys, "solve", str(path), "--budget", str(budget))
    assert solved["value"] == pytest.approx(opt, abs=1e-9)
    assert solved["certified"] is True and solved["status"] == "optimal"

    for writer, expected in (("gvt", gvt), ("density", density)):
        scored = run_json(capsys, "score", str(path), "--budget", str(budget), "--writer", writer)
        assert round(scored["ratio"], 3) == pytest.approx(expected, abs=1e-12)
        assert scored["opt"]["value"] == pytest.approx(opt, abs=1e-9)

    swept = run_json(
        capsys,
        "sweep",
        str(path),
        "--budgets",
        str(budget),
        "--writers",
        "gvt,density",
        "--ablations",
        "no_validity,generic",
        "--quiet",
    )
    by_method = {row["method"]: row for row in swept["summary"]}
    assert round(by_method["no_validity_opt"]["mean_ratio"], 3) == pytest.approx(no_validity)
    assert round(by_method["density"]["mean_ratio"], 3) == pytest.approx(density)


def test_published_memaudit_small_means_through_the_cli(capsys):
    swept = run_json(
        capsys,
        "sweep",
        "--family",
        "memaudit-small",
        "--seeds",
        "0-499",
        "--budgets",
        "6",
        "--writers",
        "gvt,density",
        "--ablations",
        "no_validity",
        "--quiet",
    )
    means = {row["method"]: row for row in swept["summary"]}
    assert round(means["gvt"]["mean_ratio"], 3) == 1.000
    assert round(means["density"]["mean_ratio"], 3) == 0.398
    assert round(means["no_validity_opt"]["mean_ratio"], 3) == 0.650
    assert all(row["n"] == 500 for row in swept["summary"])
    assert {"method", "budget", "n", "mean_ratio"} <= set(swept["summary"][0])


def test_solve_json_keys_and_limited_run(capsys):
    pkg = str(SAMPLES / "travel-assistant.json")
    out = run_json(capsys, "solve", pkg, "--budget", "40", "--solver", "milp")
    assert {"value", "selected", "cost", "status", "certified", "bound", "solver"} <= set(out)
    assert out["cost"] <= 40 + 1e-9
    limited = run_json(
        capsys, "solve", pkg, "--budget", "40", "--solver", "bnb", "--node-limit", "1"
    )
    assert limited["bound"] >= limited["value"] - 1e-9
    if limited["status"] != "optimal":
        assert limited["certified"] is False and limited["label"] != "OPT"


def test_score_store_has_breakdown(capsys):
    out = run_json(
        capsys,
        "score",
        str(SAMPLES / "veg-to-pescatarian.json"),
        "--store",
        json.loads((SAMPLES / "veg-to-pescatarian.json").read_text())["stores"][0]["id"],
    )
    assert {"value", "opt", "ratio", "selected", "unit_rows", "kind_rows"} <= set(out)
    lost = sum(r["lost"] for r in out["unit_rows"])
    assert lost == pytest.approx(out["opt"]["value"] - out["value"], abs=1e-9)


def test_validate_good_and_every_malformed_file(capsys):
    assert main(["validate", str(SAMPLES / "update_chain.json")]) == 0
    capsys.readouterr()
    expected = json.loads((MALFORMED / "EXPECTED.json").read_text())
    for name, exp in expected.items():
        code = main(["validate", str(MALFORMED / name)])
        _, err = capsys.readouterr()
        assert code == 2, name
        lines = [line for line in err.splitlines() if line.strip()]
        assert lines, name
        assert all(str(MALFORMED / name) in line for line in lines), name
        assert any(exp["rule"] in line for line in lines), (name, lines)
        assert "Traceback" not in err


@pytest.mark.parametrize(
    "argv",
    [
        ["solve", "no-such-file.json", "--budget", "3"],
        ["score", "sample_packages/update_chain.json", "--budget", "3", "--writer", "nope"],
        ["score", "sample_packages/update_chain.json", "--budget", "3", "--store", "nope"],
        ["score", "sample_packages/update_chain.json", "--budget", "3"],
        ["solve", "sample_packages/update_chain.json", "--budget", "-1"],
        ["sweep", "--family", "no-such-family", "--seeds", "0-1", "--budgets", "2"],
        ["sweep", "--family", "memaudit-small", "--seeds", "5-1", "--budgets", "2"],
        ["sweep", "sample_packages/update_chain.json", "--budgets", "two"],
        ["generate", "memaudit-small", "--param", "no_such=1"],
        ["generate", "memaudit-small", "--param", "normal_count=many"],
        # Limits an engine would otherwise clamp silently (a negative time ran as 0 s).
        ["solve", "sample_packages/update_chain.json", "--time-limit", "-3"],
        ["solve", "sample_packages/update_chain.json", "--time-limit", "0"],
        ["solve", "sample_packages/update_chain.json", "--node-limit", "-1"],
        ["sweep", "sample_packages/update_chain.json", "--budgets", "2", "--time-limit", "nan"],
        ["score", "sample_packages/update_chain.json", "--writer", "gvt", "--time-limit", "-1"],
        ["audit", "--family", "update_chain:0-1", "--budgets", "5", "--time-limit", "-1"],
    ],
)
def test_user_mistakes_exit_2_without_traceback(capsys, argv):
    code = exit_code(
        [REPO.joinpath(a).as_posix() if a.startswith("sample_packages") else a for a in argv]
    )
    out, err = capsys.readouterr()
    assert code == 2
    assert "Traceback" not in err and err.strip()


def test_limited_sweep_and_score_say_their_optimum_is_not_certified(capsys, tmp_path):
    # 100 random groups at B = 100 take HiGHS about a minute to prove: 0.5 s cannot.
    pkg = tmp_path / "rc100.json"
    assert (
        main(
            [
                "generate",
                "random_coverage",
                "--seed",
                "0",
                "--param",
                "n_groups=100",
                "-o",
                str(pkg),
            ]
        )
        == 0
    )
    capsys.readouterr()
    argv = ["sweep", str(pkg), "--budgets", "100", "--writers", "gvt", "--time-limit", "0.5"]
    assert main([*argv, "--quiet"]) == 0
    out, _ = capsys.readouterr()
    assert "1 of 1 rows compare with an optimum that was not certified" in out
    swept = run_json(capsys, *argv, "--quiet")
    assert [r["certified"] for r in swept["rows"]] == [False]

    # The limited solve starts from the scored store: its denominator is never below F(store).
    ev = run_json(
        capsys, "score", str(pkg), "--budget", "100", "--writer", "gvt", "--time-limit", "0.5"
    )
    assert ev["opt"]["certified"] is False
    assert ev["opt"]["value"] >= ev["value"] - 1e-9
    assert ev["ratio"] <= 1 + 1e-9


def test_sweep_total_time_limit(capsys, tmp_path):
    pkg = tmp_path / "rc100.json"
    argv = ["generate", "random_coverage", "--seed", "0", "--param", "n_groups=100"]
    assert main([*argv, "-o", str(pkg)]) == 0
    capsys.readouterr()
    # Budget 100 takes HiGHS about a minute to prove; 2 and 40 are quick: all three share 1 s.
    sweep = ["sweep", str(pkg), "--budgets", "2,40,100", "--writers", "gvt", "--quiet"]
    swept = run_json(capsys, *sweep, "--total-time-limit", "1")
    assert swept["settings"]["total_time_limit"] == 1.0
    by_budget = {r["budget"]: r for r in swept["rows"]}
    assert by_budget[2.0]["certified"] and not by_budget[100.0]["certified"]
    assert by_budget[100.0]["opt_bound"] > by_budget[100.0]["opt"]
    assert any("within the 1 s the sweep's solves shared" in n for n in swept["notes"])
    for bad, rule in [
        (["--total-time-limit", "0"], "--total-time-limit: must be a finite number of seconds > 0"),
        (["--total-time-limit", "5", "--workers", "2"], "workers"),
    ]:
        assert exit_code([*sweep, *bad]) == 2
        assert rule in capsys.readouterr().err
    family = ["sweep", "--family", "update_chain", "--total-time-limit", "5", "--quiet"]
    assert main(family) == 2
    assert "--total-time-limit applies to a sweep of package files" in capsys.readouterr().err


def test_console_script_and_module_entry_point_agree():
    args = ["solve", str(SAMPLES / "update_chain.json"), "--budget", "6", "--json"]
    via_module = subprocess.run(
        [sys.executable, "-m", "memaudit_core", *args], capture_output=True, text=True, check=True
    )
    exe = Path(sys.executable).parent / "memaudit"
    via_script = subprocess.run([str(exe), *args], capture_output=True, text=True, check=True)
    a, b = json.loads(via_module.stdout), json.loads(via_script.stdout)
    assert a["value"] == b["value"] == pytest.approx(7.735)
    bad = subprocess.run(
        [sys.executable, "-m", "memaudit_core", "validate", str(MALFORMED / "cost_zero.json")],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_generate_is_deterministic_and_lists_families(capsys, tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert main(["generate", "memaudit-small", "--seed", "4", "-o", str(a)]) == 0
    assert main(["generate", "memaudit-small", "--seed", "4", "-o", str(b)]) == 0
    assert a.read_bytes() == b.read_bytes()
    capsys.readouterr()
    listing = run_json(capsys, "generate", "--list")
    from memaudit_core.generators import FAMILIES

    assert {f["family"] for f in listing["families"]} == set(FAMILIES)


def test_number_and_seed_parsers():
    assert parse_number_list("0:4:2") == [0.0, 2.0, 4.0]
    assert parse_seeds("0-2,9") == [0, 1, 2, 9]


def test_limited_solve_with_an_empty_incumbent_shows_no_gap_percentage(capsys, monkeypatch):
    from memaudit_core import solvers
    from memaudit_core.solvers import certify

    def nothing_yet(inst, budget, **kwargs):  # a limit hit before any incumbent
        return solvers.RawSolution((), 0.0, 5.0, "limit", nodes=1)

    monkeypatch.setitem(solvers.ENGINES, "bnb", nothing_yet)
    # QA s42 (defect 2): a limited run now takes a reference writer's better store (and
    # gvt's 7.735 exposes this fake bound of 5 as wrong); as over the writers' size cap, none.
    monkeypatch.setattr(certify, "LIMITED_INCUMBENT_WRITERS", {})
    pkg = str(SAMPLES / "update_chain.json")
    assert main(["solve", pkg, "--solver", "bnb", "--node-limit", "1"]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines() if "NOT certified" in ln)
    assert "gap n/a (incumbent 0)" in line and "%" not in line


def test_negative_seed_is_refused(capsys, tmp_path):
    # Python's Random(-1) draws what Random(1) draws: it would be seed 1 under another id.
    out = tmp_path / "neg.json"
    # Refused as --seed is read, as "abc" is (QA s49: later, naming neither option nor rule).
    with pytest.raises(SystemExit) as info:
        main(["generate", "memaudit-small", "--seed", "-1", "-o", str(out)])
    assert info.value.code == 2
    assert "argument --seed: seed must be an integer >= 0, got '-1'" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize("command", [["solve"], ["score", "--writer", "gvt"]])
def test_huge_budget_is_printed_compactly(capsys, command):
    pkg = str(SAMPLES / "update_chain.json")
    assert main([command[0], pkg, *command[1:], "--budget", "1e308"]) == 0
    head = capsys.readouterr().out.splitlines()[0]
    assert "budget 1e+308 words" in head, head
    assert main([command[0], pkg, *command[1:], "--budget", "6"]) == 0
    assert "budget 6 words" in capsys.readouterr().out.splitlines()[0]


@pytest.mark.parametrize(
    "extra,flag,mode",
    [
        (["--writer", "gvt", "--cost-rule", "bogus"], "--cost-rule", "--writer"),
        (["--writer", "gvt", "--history", "h.json"], "--history", "--writer"),
        (["--writer", "gvt", "--salience-field", "score"], "--salience-field", "--writer"),
        (["--store", "mem0", "--cost-rule", "chars"], "--cost-rule", "--store"),
        (["--store", "mem0", "--writer-timeout", "3"], "--writer-timeout", "--store"),
    ],
)
def test_score_refuses_options_its_mode_does_not_read(capsys, extra, flag, mode):
    pkg = str(SAMPLES / "external-stores-demo.json")
    assert main(["score", pkg, *extra]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "Traceback" not in err
    [line] = err.strip().splitlines()
    assert flag in line and f"does not apply to {mode}" in line


def test_score_refuses_salience_field_for_a_store_of_package_candidates(capsys):
    pkg = SAMPLES / "veg-to-pescatarian.json"
    store = json.loads(pkg.read_text())["stores"][0]["id"]
    assert main(["score", str(pkg), "--store", store, "--salience-field", "x"]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert "--salience-field" in line and store in line
    # ... while an external store reads it.
    ext = str(SAMPLES / "external-stores-demo.json")
    assert main(["score", ext, "--store", "mem0", "--salience-field", "x", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["union"]["salience_field"] == "x"


def test_sweep_table_footnotes_its_na_lines(capsys):
    pkgs = [str(SAMPLES / "update_chain.json"), str(SAMPLES / "temporal_interval.json")]
    # Nothing fits at budget 0.5 in either package: OPT = 0 and every ratio is undefined.
    argv = ["sweep", *pkgs, "--budgets", "0.5,6", "--writers", "gvt,density", "--quiet"]
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    # The mean ratio column (fourth from the right; the CI is n/a for so few packages).
    means = [ln.split()[-4] for ln in lines if ln.startswith(("gvt ", "density "))]
    assert means.count("n/a") == 2
    # The summary's last line (the per-family table of the two families follows it).
    legend = next(k for k, ln in enumerate(lines) if ln.startswith("ratio = F(store) / OPT"))
    assert lines[legend + 1] == (
        # QA s43: the reason each line has, counted (not "or the writer failed").
        "n/a: 2 of 4 lines have no defined ratio (2 with OPT = 0 at that budget); 4 row(s) "
        "with OPT = 0 at their budget "
        "(F / OPT undefined) are left out of n, the means and the CIs"
    )
    assert main([*argv[:4], "6", *argv[5:]]) == 0
    lines = capsys.readouterr().out.splitlines()
    means = [ln.split()[-4] for ln in lines if ln.startswith(("gvt ", "density "))]
    assert means and "n/a" not in means and not any(ln.startswith("n/a:") for ln in lines)
    legend = next(k for k, ln in enumerate(lines) if ln.startswith("ratio = F(store) / OPT"))
    assert lines[legend + 1].startswith("The table above pools 2 families")  # no footnote


def test_limited_solve_never_shows_a_rounded_zero_gap(capsys, monkeypatch):
    from memaudit_core import solvers

    def nearly_closed(inst, budget, **kwargs):  # the optimum, with a bound 1e-9 above it
        best = solvers.run_engine("enum", inst, budget)[0]
        return solvers.RawSolution(best.selected_idx, best.value, best.value * (1 + 1e-9), "limit")

    monkeypatch.setitem(solvers.ENGINES, "bnb", nearly_closed)
    pkg = str(SAMPLES / "update_chain.json")
    assert main(["solve", pkg, "--solver", "bnb", "--node-limit", "1"]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines() if "NOT certified" in ln)
    assert "gap 1e-7%" in line and "gap 0%" not in line  # gap_percent's digits (s52)


def test_bnb_node_limit_whose_bound_meets_the_incumbent_reports_opt(capsys):
    # At 0 nodes the root bound of this package already equals the greedy incumbent.
    pkg = str(SAMPLES / "veg-to-pescatarian.json")
    out = run_json(capsys, "solve", pkg, "--solver", "bnb", "--node-limit", "0")
    assert out["status"] == "optimal" and out["certified"] and out["gap"] == 0
    assert "limit stopped the search" in out["certificate"]["proof"]
    assert out["value"] == pytest.approx(
        run_json(capsys, "solve", pkg, "--solver", "enum")["value"]
    )


def test_budget_lists_are_bounded_deduplicated_and_strict(capsys):
    """QA: --budgets=0:1e9:1 grew the process to 23 GB before the OOM killer stopped it."""
    from memaudit_core.specs import MAX_LIST_VALUES, parse_number_list, parse_seeds

    with pytest.raises(MemAuditError, match="1,000,000,001 budgets"):
        parse_number_list("0:1e9:1")
    with pytest.raises(MemAuditError, match="empty item"):
        parse_number_list("1,,2")
    with pytest.raises(MemAuditError, match="seeds"):
        parse_seeds(f"0-{MAX_LIST_VALUES}")
    assert parse_number_list("3,3,3") == [3.0]
    assert parse_number_list("0:1:0.1")[3] == 0.3  # not 0.30000000000000004
    assert parse_seeds("1,1,2") == [1, 2]
    assert main(["sweep", str(SAMPLES / "update_chain.json"), "--budgets=0:1e9:1"]) == 2
    assert "more than the 10,000 allowed" in capsys.readouterr().err


def test_seed_errors_name_the_option_the_seeds_came_from(capsys):
    """QA: seeds written in --family NAME:A-B were reported as if they came from --seeds."""
    assert main(["sweep", "--family", "memaudit-small:5-2", "--budgets", "2"]) == 2
    err = capsys.readouterr().err
    assert "--family memaudit-small:5-2: '5-2' runs backwards" in err and "--seeds" not in err
    assert main(["sweep", "--family", "memaudit-small", "--seeds", "x", "--budgets", "2"]) == 2
    assert "--seeds: cannot read 'x'" in capsys.readouterr().err


def test_validate_json_is_strict_json_even_for_nan_inputs(capsys):
    main(["validate", str(MALFORMED / "cost_nan.json"), "--json"])
    out = capsys.readouterr().out
    doc = json.loads(out, parse_constant=lambda c: pytest.fail(f"bare {c} in JSON output"))
    assert doc["problems"][0]["value"] == "NaN"
    # The error object every command emits under --json is there too (CLI QA).
    assert doc["valid"] is False and doc["error"]["type"] == "PackageError"
    assert doc["error"]["problems"] == doc["problems"]


@pytest.mark.parametrize(
    "param",
    [
        ["cost_high=inf"],
        ["min_cover=500", "max_cover=600"],
        ["budget_fraction=-1"],
        ["budget_fraction=nan"],
    ],
)
def test_generate_random_coverage_checks_its_parameters(param, capsys):
    argv = ["generate", "random_coverage"]
    for item in param:
        argv += ["--param", item]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "internal error" not in err and err.startswith("memaudit generate: error:"), err


def test_sweep_refuses_seed_options_it_would_ignore(capsys):
    pkg = str(SAMPLES / "veg-to-pescatarian.json")
    assert main(["sweep", pkg, "--seeds", "0-3"]) == 2
    assert "apply to --family only" in capsys.readouterr().err
    assert main(["sweep", "--family", "memaudit-small:0-1", "--seeds", "5-6"]) == 2
    # QA s41: --seeds next to families that all name their own seeds applies to nothing.
    assert "--seeds 5-6 applies to no family" in capsys.readouterr().err


def test_score_a_store_mixing_candidates_and_memories(tmp_path, capsys):
    """QA: validate accepted such a store, then score --store refused it (union metrics)."""
    from memaudit_core.package import load_package, package_to_dict

    doc = package_to_dict(load_package(SAMPLES / "veg-to-pescatarian.json"))
    first = doc["candidates"][0]
    doc["stores"] = [
        {
            "id": "mixed",
            "select": [first["id"]],
            "memories": [{"id": "m1", "text": "x", "cost": 1, "coverage": {}}],
        }
    ]
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps(doc))
    assert main(["score", str(path), "--store", "mixed", "--budget", "10"]) == 0
    assert "mixes package candidates with external memories" in capsys.readouterr().out


def test_score_refuses_a_writer_given_twice(capsys):
    """QA: --writer gvt --writer density silently scored density only."""
    with pytest.raises(SystemExit) as info:
        main(["score", str(SAMPLES / "travel-assistant.json"), "--writer", "gvt", "--writer", "x"])
    assert info.value.code == 2
    assert "--writer given twice" in capsys.readouterr().err


def test_every_json_output_says_its_version(capsys):
    """Scripts parsing --json can tell output shapes apart (the sweep rows gained fields)."""
    from memaudit_core.cli import JSON_OUTPUT_VERSION

    for argv in (
        ["solve", str(SAMPLES / "update_chain.json"), "--budget", "6", "--json"],
        ["writers", "--json"],
        ["sweep", str(SAMPLES / "update_chain.json"), "--budgets", "3,6", "--json"],
    ):
        assert main(argv) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["json_output_version"] == JSON_OUTPUT_VERSION
        assert isinstance(out["memaudit_version"], str) and out["memaudit_version"]


# --------------------------------------------------------------------------- CLI QA, twelfth session
def test_an_out_folder_that_cannot_be_made_is_a_user_error(tmp_path, capsys):
    """It was "internal error", exit 1: audit's code for a disagreement."""
    blocker = tmp_path / "afile"
    blocker.write_text("x")
    for cmd in (["audit"], ["sweep", "--writers", "gvt"]):
        argv = [*cmd, "--family", "update_chain:0", "--budgets", "2", "--quiet"]
        assert main([*argv, "--out", str(blocker / "sub")]) == 2
        err = capsys.readouterr().err
        assert "cannot create the folder" in err and "internal error" not in err


def test_a_printing_oracle_plugin_cannot_corrupt_json(capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(REPO / "tests"))
    argv = ["score", str(SAMPLES / "veg-to-pescatarian.json"), "--budget", "8"]
    argv += ["--writer-module", "plugin_fixtures.fixture_writers:oracle_noisy", "--json"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["value"] >= 0  # stdout is the JSON object alone
    assert "ORACLE NOISE ON STDOUT" in err


def test_audit_max_difference_ignores_unproven_checks(capsys):
    """A time-limited incumbent's distance to the other engine's optimum read as "max
    difference 1.63" next to PASS; it is not a difference between proven optima."""
    argv = ["audit", str(SAMPLES / "event-graph-500.json"), "--budgets", "1310", "--quiet"]
    # 10 ms proves nothing here (exit 1: nothing checked), and both engines stop with stores
    # of different value.
    assert main([*argv, "--time-limit", "0.01", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["n_unproven"] == report["n_tasks"] == 1
    assert report["max_abs_diff"] is None and report["max_rel_diff"] is None
    assert main([*argv, "--time-limit", "0.01"]) == 1
    assert "max difference n/a" in capsys.readouterr().out


def test_sweep_rows_have_one_shape_however_the_sweep_was_started(capsys):
    """CLI QA: rows from package files lacked source / content_hash, a suite's JSON lacked
    errors, and the CSV columns differed."""
    plain = run_json(capsys, "sweep", str(SAMPLES / "update_chain.json"), "--budgets", "3",
                     "--writers", "gvt", "--quiet")  # fmt: skip
    suite = run_json(capsys, "sweep", "--family", "update_chain:0", "--budgets", "3",
                     "--writers", "gvt", "--quiet")  # fmt: skip
    assert plain["backend"] == suite["backend"] == "1 process"
    assert set(plain) == set(suite) and suite["errors"] == []
    settings = {"solver": "auto", "time_limit": None, "total_time_limit": None}
    settings["cross_check"] = "sample"  # conformance QA: the sampled cross-checks were unsaid
    assert plain["settings"] == suite["settings"] == settings
    assert list(plain).index("settings") == list(plain).index("backend") + 1
    assert list(suite).index("settings") == list(suite).index("backend") + 1
    assert list(plain["rows"][0]) == list(suite["rows"][0])
    assert plain["rows"][0]["source"] == str(SAMPLES / "update_chain.json")
    assert plain["rows"][0]["opt_over"] == "package"
    same = ("content_hash", "value", "opt", "ratio", "certified")
    # The sample is update_chain seed 0 as generated.
    assert [plain["rows"][0][k] for k in same] == [suite["rows"][0][k] for k in same]


def test_a_seed_invariant_family_is_not_counted_as_independent_packages(capsys):
    out = run_json(capsys, "sweep", "--family", "temporal_interval:0-2", "--budgets", "6",
                   "--writers", "density", "--quiet")  # fmt: skip
    # QA s44: its seeds are its one package, swept once (they were three copies, with a note).
    assert out["n_sources"] == 1 and [r["seed"] for r in out["rows"]] == [0]
    assert (
        "temporal_interval does not depend on the seed: seeds 0-2 are one package "
        "(temporal_interval:0), swept once"
    ) in out["notes"]
    out = run_json(capsys, "sweep", "--family", "random_coverage:0-1", "--budgets", "6",
                   "--writers", "density", "--quiet")  # fmt: skip
    assert not any("distinct optimisation instance" in n for n in out["notes"])


def test_both_ways_of_sweeping_a_family_give_one_output(capsys):
    """QA: --family X --seeds A-B ran another path than --family X:A-B, without its notes."""
    args = ("--budgets", "6", "--writers", "density", "--quiet")
    a = run_json(capsys, "sweep", "--family", "temporal_interval", "--seeds", "0-2", *args)
    b = run_json(capsys, "sweep", "--family", "temporal_interval:0-2", *args)
    a.pop("elapsed_s"), b.pop("elapsed_s")
    assert a == b
    assert any("seeds 0-2 are one package (temporal_interval:0)" in n for n in a["notes"])


def test_copies_of_one_package_file_are_not_counted_as_independent(capsys, tmp_path):
    copy = tmp_path / "copy.json"
    copy.write_bytes((SAMPLES / "update_chain.json").read_bytes())
    out = run_json(capsys, "sweep", str(SAMPLES / "update_chain.json"), str(copy),
                   "--budgets", "3", "--writers", "gvt", "--quiet")  # fmt: skip
    assert out["n_sources"] == 2 and out["n_packages"] == 1
    assert any("2 sources hold only 1 distinct" in n for n in out["notes"])


def test_external_store_rows_say_their_optimum_is_over_the_union(capsys):
    out = run_json(capsys, "sweep", str(SAMPLES / "external-stores-demo.json"), "--budgets",
                   "24", "--writers", "gvt", "--stores", "mem0", "--quiet")  # fmt: skip
    over = {r["method"]: r["opt_over"] for r in out["rows"]}
    assert over == {"gvt": "package", "mem0": "package+store"}
    opts = {r["method"]: r["opt"] for r in out["rows"]}
    assert opts["mem0"] > opts["gvt"]  # P+(Y) holds more candidates: a different scale
    assert any("not the same scale" in n for n in out["notes"])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--budgets", ""], "--budgets: no values given"),
        (["--budgets", "10:0:2"], "'10:0:2' runs backwards"),
        (["--budgets", "3", "--writers", ""], "nothing to sweep"),
    ],
)
@pytest.mark.parametrize("source", [["--family", "update_chain:0-1"], ["--family", "update_chain"]])
def test_empty_or_backwards_lists_are_refused_on_both_sweep_paths(capsys, source, argv, message):
    """CLI QA: '' silently meant "the default", and --writers '' gave an empty table."""
    assert main(["sweep", *source, *argv, "--quiet"]) == 2
    assert message in capsys.readouterr().err


def test_version_flag(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0 and capsys.readouterr().out.startswith("memaudit ")


def test_a_user_error_with_json_is_a_json_object_on_stdout(capsys):
    """CLI QA: `solve bad.json --json` printed nothing on stdout; scripts parsed stderr."""
    bad = MALFORMED / "cost_null.json"
    assert main(["solve", str(bad), "--budget", "5", "--json"]) == 2
    out, err = capsys.readouterr()
    error = json.loads(out)["error"]
    assert error["type"] == "PackageError" and error["file"] == str(bad)
    assert [p["rule"] for p in error["problems"]] == ["not-null"]
    assert "not-null" in err  # the readable lines stay on stderr
    assert main(["score", str(SAMPLES / "update_chain.json"), "--writer", "nope", "--json"]) == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["type"] == "UnknownNameError" and "nope" in error["message"]


def test_a_usage_error_with_json_is_a_json_object_on_stdout(capsys):
    """QA: `solve x.json --budget abc --json` printed argparse's usage only."""
    with pytest.raises(SystemExit) as exc:
        main(["solve", str(SAMPLES / "update_chain.json"), "--budget", "abc", "--json"])
    out, err = capsys.readouterr()
    # One line on stderr, naming the help rather than printing the usage (QA s51 #11).
    assert exc.value.code == 2 and "usage:" not in err and err.count("\n") == 1
    assert err.endswith(" (see memaudit solve --help)\n")
    error = json.loads(out)["error"]
    assert error["type"] == "UsageError"
    assert "--budget: must be a finite number >= 0 (ASCII digits" in error["message"]
    assert "got 'abc'" in error["message"]
    with pytest.raises(SystemExit):
        main(["solve", str(SAMPLES / "update_chain.json"), "--budget", "abc"])
    assert capsys.readouterr().out == ""  # without --json, stdout stays empty


def test_import_json_summary_and_errors(capsys, tmp_path):
    from memaudit_core.package import load_package

    src = REPO / "tests" / "fixtures" / "importers" / "locomo_flat_conv-b.json"
    target = tmp_path / "conv.json"
    assert main(["import", "locomo", str(src), "-o", str(target), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)["imported"]
    assert summary["output"] == str(target) and summary["package_id"] == "locomo-conv-b"
    assert summary["content_hash"] == load_package(target).content_hash()
    assert main(["import", "locomo", str(tmp_path / "missing.json"), "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["error"]["problems"][0]["rule"] == "file-exists"


def test_a_plugin_module_in_the_working_folder_is_found(capsys, tmp_path, monkeypatch):
    """QA: the `memaudit` script does not put the working folder on sys.path."""
    (tmp_path / "my_cwd_writer.py").write_text("def first(view):\n    return []\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    argv = ["score", str(SAMPLES / "update_chain.json"), "--budget", "3"]
    assert main([*argv, "--writer", "my_cwd_writer:first", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["value"] == 0


# --------------------------------------------------------------------------- CLI QA, session 16


def test_audit_json_keeps_the_package_errors_problems(capsys):
    """CLI QA: the error crossed a worker process as a bare MemAuditError (no file, problems)."""
    bad = MALFORMED / "cost_nan.json"
    code = main(["audit", str(bad), "--json", "--quiet"])
    # QA s44: every invalid file of a suite is reported, each as a PackageError's object.
    error = json.loads(capsys.readouterr().out)["error"]["errors"][0]
    assert code == 2 and error["type"] == "PackageError"
    assert error["file"].endswith("cost_nan.json")
    assert [p["rule"] for p in error["problems"]] == ["finite"]


def test_package_error_pickles_with_its_problems():
    import pickle

    from memaudit_core.errors import PackageError, Problem

    exc = PackageError("p.json", [Problem("$.units[0].weight", "weight-range", "must be", -1)])
    again = pickle.loads(pickle.dumps(exc))
    assert type(again) is PackageError and again.lines() == exc.lines()
    assert str(again) == str(exc)


class _ClosedPipe:
    """A stdout whose reader has gone (``| head``): every write raises BrokenPipeError."""

    def __init__(self, fd: int):
        self._fd = fd

    def write(self, _text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")

    def fileno(self) -> int:
        return self._fd


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (["solve", str(MALFORMED / "cost_nan.json"), "--budget", "1", "--json"], 2),  # error
        (["solve", str(SAMPLES / "update_chain.json"), "--budget", "6", "--json"], 0),
    ],
)
def test_a_closed_pipe_is_no_traceback(monkeypatch, capsys, tmp_path, argv, code):
    """CLI QA: `... --json | head -c 600` on a bad package ended in a traceback and exit 1."""
    with open(tmp_path / "sink", "w") as sink:
        monkeypatch.setattr(sys, "stdout", _ClosedPipe(sink.fileno()))
        assert main(argv) == code
    assert "Traceback" not in capsys.readouterr().err


def test_an_interrupted_json_run_prints_one_error_object(monkeypatch, capsys):
    """CLI QA: exit 130 with an empty stdout under --json."""
    import memaudit_core.cli as cli

    def interrupted(_args):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "cmd_solve", interrupted)
    code = main(["solve", str(SAMPLES / "update_chain.json"), "--budget", "6", "--json"])
    out, err = capsys.readouterr()
    assert code == 130 and "memaudit: interrupted" in err
    assert json.loads(out)["error"] == {"type": "Interrupted", "message": "interrupted"}


def test_generate_to_a_file_with_json_prints_a_summary(capsys, tmp_path):
    target = tmp_path / "g.json"
    out = run_json(capsys, "generate", "memaudit-small", "--seed", "3", "-o", str(target))
    written = json.loads(target.read_text())
    assert out["generated"]["package_id"] == written["id"] == "memaudit-small-s3"
    assert out["generated"]["seed"] == 3 and out["generated"]["output"] == str(target)
    assert out["generated"]["candidates"] == len(written["candidates"])


def test_seed_lists_refuse_empty_items_as_budget_lists_do():
    with pytest.raises(MemAuditError, match="empty item in '1,,2'"):
        parse_seeds("1,,2")
    with pytest.raises(MemAuditError, match="no seeds given"):
        parse_seeds(" ")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["sweep", "PKG", "--budgets", "-2,4"], "--budgets: values must be finite numbers >= 0"),
        (["solve", "PKG", "--budget", "-3"], "--budget: must be a finite number >= 0, got '-3'"),
        (["sweep", "--family", "memaudit-small", "--seeds", "-1-3"], "--seeds: cannot read"),
    ],
)
def test_a_negative_value_after_a_space_gets_the_products_message(capsys, argv, message):
    """CLI QA: argparse took "-2,4" for an option: "expected one argument" and the usage."""
    argv = [str(SAMPLES / "update_chain.json") if a == "PKG" else a for a in argv]
    assert exit_code([*argv, "--quiet"] if argv[0] == "sweep" else argv) == 2
    err = capsys.readouterr().err
    assert message in err and "expected one argument" not in err


def test_a_family_without_seeds_says_it_ran_seed_0_only(capsys):
    out = run_json(capsys, "sweep", "--family", "update_chain", "--budgets", "6",
                   "--writers", "gvt", "--quiet")  # fmt: skip
    # QA s41: update_chain does not use the seed, so no seed range is advised for it.
    assert (
        "--family update_chain does not use the seed: its one instance ran (seed 0), and a "
        "seed range would only repeat it"
    ) in out["notes"]
    out = run_json(capsys, "sweep", "--family", "density_trap", "--budgets", "6",
                   "--writers", "gvt", "--quiet")  # fmt: skip
    assert (
        "--family density_trap without seeds ran seed 0 only: pass --seeds A-B (or NAME:A-B) "
        "for a seed range"
    ) in out["notes"]
    out = run_json(capsys, "sweep", "--family", "update_chain", "--seeds", "0-1", "--budgets",
                   "6", "--writers", "gvt", "--quiet")  # fmt: skip
    assert not any("without seeds" in n for n in out["notes"])


def test_an_audit_of_a_family_without_seeds_says_it_ran_seed_0_only(capsys):
    code = main(["audit", "--family", "update_chain", "--budgets", "6", "--quiet", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and any("its one instance ran (seed 0)" in n for n in out["notes"])


def test_cli_pool_choices_are_the_pool_registry():
    """The CLI's --pool choices (the names in :mod:`memaudit_core.specs`, so that ``--help``
    does not load numpy) and the audit's pools are the registry's
    (:data:`memaudit_core.compiled.POOLS`)."""
    from memaudit_core.audit import POOLS as AUDIT_POOLS
    from memaudit_core.cli import build_parser
    from memaudit_core.compiled import POOLS
    from memaudit_core.specs import POOL_NAMES

    solve_parser = build_parser()._subparsers._group_actions[0].choices["solve"]
    pool_action = next(a for a in solve_parser._actions if a.dest == "pool")
    assert list(pool_action.choices) == list(POOLS) == list(AUDIT_POOLS) == list(POOL_NAMES)


def test_the_library_never_imports_the_command_line():
    """The CLI is a face over the core: no core module imports :mod:`memaudit_core.cli`
    (review: suites and audit held command handlers that imported the CLI's private
    helpers)."""
    import ast

    core = Path(__file__).resolve().parent.parent / "memaudit_core"
    offenders = []
    for path in sorted(core.rglob("*.py")):
        if path.name in ("cli.py", "__main__.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.ImportFrom):
                names = [("." * node.level) + (node.module or "")]
                names += [f"{names[0]}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            if any(n.split(".")[-1] == "cli" or n.endswith("memaudit_core.cli") for n in names):
                offenders.append(f"{path.relative_to(core)}:{node.lineno}")
    assert offenders == []
