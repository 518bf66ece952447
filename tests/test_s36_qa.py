"""Defects found by the thirty-sixth session's fresh-eyes audit (exactness fuzzing, a
researcher's sweeps, an annotator's Compare page, adversarial packages).

Expected values are worked out by hand in the comments or by the brute force below, which
reads the package document itself (not the product's objective or solvers).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import jsonschema
import numpy as np
import pytest
from cli_utils import run_cli
from oracles import opt_by_enumeration
from package_utils import refused, write_json

import memaudit_core as ma
from memaudit_core import cli
from memaudit_core.analysis import score
from memaudit_core.compiled import compile_package
from memaudit_core.errors import MemAuditError
from memaudit_core.explain import compare_view
from memaudit_core.importers import _zip as zip_limits
from memaudit_core.importers import artifact
from memaudit_core.package import (
    load_package,
    loads_package,
    package_json_schema,
    parse_package,
)
from memaudit_core.solvers import solve, solve_budgets
from memaudit_core.suites import SweepSuiteResult, sweep_figure, sweep_suite
from memaudit_core.writers import run_writer, run_writers

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_packages"
ARTIFACT = Path(__file__).parent / "fixtures" / "importers" / "artifact_pkg"
FIX = "plugin_fixtures.fixture_writers"


# --------------------------------------------------------------------------- exactness


def _tiny(big_weight: float, small_weight: float, a_cov: float, b_cov: float) -> dict:
    """Unit u1 of ``big_weight`` is covered only by "big", which costs 2; at budget 1 only
    one of a / b (one experience) fits, covering u0 of ``small_weight``."""
    return {
        "memaudit": 1,
        "id": "spread",
        "experiences": [{"id": "e0", "time": 0}, {"id": "e1", "time": 1}],
        "units": [
            {"id": "u0", "kind": "fact", "weight": small_weight},
            {"id": "u1", "kind": "fact", "weight": big_weight},
        ],
        "candidates": [
            {"id": "big", "experience": "e0", "type": "summary", "cost": 2, "coverage": {"u1": 1}},
            {
                "id": "a",
                "experience": "e1",
                "type": "summary",
                "cost": 1,
                "coverage": {"u0": a_cov},
            },
            {
                "id": "b",
                "experience": "e1",
                "type": "atomic_fact",
                "cost": 1,
                "coverage": {"u0": b_cov},
            },
        ],
    }


SPREAD_CASES = [
    # (big weight, small weight, a, b): OPT at budget 1 is small weight x max(a, b).
    (1e15, 1.0, 0.5, 1.0),  # every engine said OPT = 0 (values scaled by 2^-50)
    (2e9, 1.0, 0.999999, 1.0),  # a and b were a tie: OPT 0.999999, 1e-6 too low
    (1.0, 1e-12, 0.5, 1.0),  # scaled up from the candidates that fit (OPT was 0)
]


@pytest.mark.parametrize("case", SPREAD_CASES)
@pytest.mark.parametrize("solver", ["auto", "bnb", "milp", "enum", "brute"])
def test_a_unit_no_affordable_candidate_reaches_does_not_set_the_tolerance(case, solver):
    doc = _tiny(*case)
    expected = opt_by_enumeration(doc, 1)
    assert expected == pytest.approx(case[1] * max(case[2], case[3]), rel=1e-15)
    inst = compile_package(parse_package(doc))
    res = solve(inst, 1, solver=solver)
    assert res.certified
    assert res.value == pytest.approx(expected, rel=1e-12)
    assert res.selected == ("b",)


@pytest.mark.parametrize("case", SPREAD_CASES[:2])
def test_writers_and_budget_sweeps_use_the_scale_of_each_budget(case):
    doc = _tiny(*case)
    inst = compile_package(parse_package(doc))
    for name in ("gvt", "density", "greedy", "fact_only"):
        assert run_writer(name, inst, 1).selected == ("b",), name
    # Budgets 1 and 3 need different scales: the batch gives each its own, in order.
    # At 3 everything fits, and a / b differ by 1e-15 of OPT there: within the 1e-9 rule.
    out = run_writers(["gvt", "greedy"], inst, [3, 1, 3])
    for name in ("gvt", "greedy"):
        assert out[name][1].selected == ("b",)
        for r in (out[name][0], out[name][2]):
            assert r.value == pytest.approx(opt_by_enumeration(doc, 3), rel=1e-9)
    results = solve_budgets(inst, [1, 3], solver="auto")
    assert [r.value for r in results] == pytest.approx(
        [opt_by_enumeration(doc, 1), opt_by_enumeration(doc, 3)], rel=1e-12
    )
    assert all(r.certified for r in results)


def test_a_store_worth_more_than_a_certified_zero_cannot_happen(tmp_path):
    """The CLI printed F = 0.999999 for greedy's store beside "OPT = 0" (milp)."""
    path = write_json(tmp_path, "r3.json", _tiny(2e9, 1.0, 0.999999, 1.0))
    rc, out, _ = run_cli("score", str(path), "--budget", "1", "--writer", "greedy", "--json")
    data = json.loads(out)
    assert rc == 0 and data["opt_value"] == 1.0 and data["value"] == 1.0


# --------------------------------------------------------------------------- the optimum shown


def test_an_optimal_store_is_its_own_optimum_and_loses_nothing():
    """gvt is optimal on travel-assistant at 20 (F = OPT = 9.8), but one update stands in
    the solver's optimum where gvt has two facts: single exchanges cannot reach it, and
    Compare listed u:hotel:current as lost 2."""
    pkg = load_package(SAMPLES / "travel-assistant.json")
    ev = score(pkg, 20, writer="gvt")
    assert ev.value == pytest.approx(ev.opt_value)
    assert set(ev.opt_selected) == set(ev.selected)
    assert all(abs(u.lost) < 1e-12 for u in ev.unit_rows)
    assert any(n.startswith("This store is itself an optimum") for n in ev.notes)
    # The Overview's notes column leaves it out: the Overview shows no per-store optimum.
    assert not any("optimum" in n for n in ev.score_notes)


def test_the_optimum_shown_takes_another_form_of_an_experience_the_store_holds():
    """veg-to-pescatarian at 12: {e4:update, e5:fact} is as good as the solver's
    {e2:fact, e4:update} (u:flight and u:seat weigh 1 each); the raw logger holds e5:raw,
    so it misses the meal units only, not u:seat "in exchange" for u:flight."""
    pkg = load_package(SAMPLES / "veg-to-pescatarian.json")
    ev = score(pkg, 12, store_id="raw-logger")
    assert ev.opt_value == pytest.approx(6.4)
    assert set(ev.opt_selected) == {"e4:update", "e5:fact"}
    lost = {u.unit_id for u in ev.unit_rows if u.lost > 1e-12}
    assert lost == {"u:meal:invalid", "u:meal:current", "u:meal:order"}
    assert not [u for u in ev.unit_rows if u.lost < -1e-12]


def test_explanations_name_pruned_own_memories_every_kind_and_one_word():
    from memaudit_core.explain import amount_text

    pkg = load_package(SAMPLES / "external-stores-demo.json")
    letta = compare_view(pkg, 24, store_id="letta")
    text = " ".join(letta.explanation)
    assert "block-human-1" in letta.evaluation.dropped
    assert "this store's own memory, dropped by recency pruning" in text
    mem0 = " ".join(compare_view(pkg, 24, store_id="mem0").explanation)
    # m4 covers current truth too (2 of 8): all three kinds are named with their shares.
    assert "current-truth (25%)" in mem0 and "invalidation (38%)" in mem0
    assert amount_text(1, "words") == "1 word" and amount_text(1.5, "words") == "1.5 words"
    veg = compare_view(load_package(SAMPLES / "veg-to-pescatarian.json"), 1, store_id="fact-only")
    assert "1 words" not in " ".join(veg.explanation)


# --------------------------------------------------------------------------- sweep reports


def test_a_failed_writer_is_in_the_report_and_runs_again_on_resume(tmp_path):
    # Two packages of a seeded family (QA s44: update_chain's seeds are one package).
    argv = ["sweep", "--family", "memaudit-small:0-1", "--budgets", "3", "--writers", "gvt"]
    argv += ["--writer-module", f"{FIX}:raises", "--quiet", "--no-figures"]
    rc, _, _ = run_cli(*argv, "--out", str(tmp_path / "run"))
    assert rc == 2
    report = (tmp_path / "run" / "report.md").read_text()
    assert "## Writer failures" in report and "boom from plugin" in report
    assert "| unproven | failed |" in report
    row = next(line for line in report.splitlines() if line.startswith(f"| {FIX}:raises | 3 |"))
    assert row.rstrip().endswith("| 2 |")  # two packages failed at budget 3


def test_the_sweep_figure_names_a_lone_method_and_starts_the_ratio_axis_at_zero(tmp_path):
    res = sweep_suite(families=["memaudit-small:0-4"], budgets=[2, 4], writers=["gvt"])
    fig = sweep_figure(res)
    assert fig.layout.showlegend is True
    assert fig.layout.yaxis.range[0] == 0.0 and fig.layout.yaxis.range[1] >= 1.0
    assert fig.layout.title.text.startswith("gvt: mean ratio")


def _row(method: str, budget: float, certified: bool, family: str | None) -> object:
    from memaudit_core.suites import SuiteRow

    return SuiteRow("src", "p", "h", 0, family, budget, method, 0.5, 1.0, 0.5, certified, 1.0)


def test_unproven_points_are_open_in_the_figure_and_starred_in_the_report(tmp_path):
    from memaudit_core.analysis import summarize
    from memaudit_core.suites import write_sweep_outputs

    rows = (
        _row("gvt", 1.0, True, "fa"),
        _row("gvt", 2.0, False, "fa"),
        _row("gvt", 1.0, True, "fb"),
        _row("gvt", 2.0, True, "fb"),
    )
    res = SweepSuiteResult(
        rows=rows,
        summary=summarize(rows, ("gvt",), (1.0, 2.0)),
        methods=("gvt",),
        budgets=(1.0, 2.0),
        n_sources=2,
        n_packages=2,
        n_tasks=4,
        executed=4,
        reused=0,
        complete=True,
        elapsed_s=1.0,
        backend="1 process",
        out=None,
        files=(),
        notes=(),
    )
    symbols = list(sweep_figure(res).data[0].marker.symbol)
    assert symbols == ["circle", "circle-open"]
    write_sweep_outputs(res, tmp_path, figures=False)
    report = (tmp_path / "report.md").read_text()
    assert "| gvt | 2 | 2 | 0.500* |" in report and "unproven" in report
    # QA s41: the footnote no longer blames a time limit alone (a proof can miss the rule).
    assert (
        "optima that were not certified (column unproven: a time limit stopped the solve, or "
        "its proof did not meet the certification rule)" in report
    )
    # Two families pooled: each gets its own means too.
    assert "## By family" in report and "| fb | gvt | 2 | 1 | 0.500 |" in report


def test_a_store_named_like_a_writer_is_refused_not_pooled(tmp_path):
    doc = _tiny(1.0, 1.0, 0.5, 1.0)
    doc["stores"] = [{"id": "gvt", "select": ["a"]}]
    path = write_json(tmp_path, "clash.json", doc)
    for extra in ([], [str(path)]):  # the plain sweep and the suite (two files)
        rc, _, err = run_cli("sweep", str(path), *extra, "--budgets", "1", "--stores", "gvt")
        assert rc == 2 and "'gvt' are also the name of a writer" in err
    with pytest.raises(MemAuditError, match="also the name of a writer"):
        ma.sweep([parse_package(doc)], [1], ["gvt"], stores=["gvt"])


def test_sweep_json_carries_each_methods_kind_and_reads_back(tmp_path):
    rc, out, _ = run_cli(
        "sweep", "--family", "update_chain", "--budgets", "3", "--writers", "gvt,recency",
        "--ablations", "generic", "--json", "--quiet",
    )  # fmt: skip
    data = json.loads(out)
    assert rc == 0
    assert data["method_kinds"] == {"gvt": "oracle", "recency": "blind", "generic_opt": "ablation"}
    path = write_json(tmp_path, "s.json", data)
    assert dict(ma.read_result(path).method_kinds) == data["method_kinds"]
    del data["method_kinds"]  # saved before the field existed
    assert ma.read_result(write_json(tmp_path, "old.json", data)).method_kinds == ()


def test_workers_from_a_script_on_stdin_get_a_clear_error(tmp_path):
    code = (
        "from memaudit_core.suites import sweep_suite\n"
        "from memaudit_core.errors import MemAuditError\n"
        "try:\n"
        "    sweep_suite(families=['memaudit-small:0-3'], budgets=[3], writers=['gvt'], "
        "workers=2)\n"
        "except MemAuditError as exc:\n"
        "    print('refused:', exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-"], input=code, text=True, capture_output=True, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "refused: worker processes cannot load this script again" in done.stdout
    assert "BrokenProcessPool" not in done.stderr


def test_cli_text_details(tmp_path):
    # show of a saved audit does not claim to write files
    rc, out, _ = run_cli(
        "audit", str(SAMPLES / "update_chain.json"), "--budgets", "3", "--quiet",
        "--out", str(tmp_path / "a"), "--no-figures", "--json",
    )  # fmt: skip
    saved = write_json(tmp_path, "audit.json", json.loads(out))
    rc, out, _ = run_cli("show", str(saved))
    assert rc == 0 and f"the run saved in {saved} wrote" in out and "\nwrote " not in out
    # the legend says why a CI is n/a where a line has too few packages (QA s46: under 10;
    # before, "n/a for n = 1" only where a line had n = 1)
    rc, out, _ = run_cli(
        "sweep", "--family", "memaudit-small:0-3", "--budgets", "4", "--writers", "gvt",
        "--quiet", "-o", str(tmp_path / "rows.csv"),
    )  # fmt: skip
    assert rc == 0 and "n/a for n = 1" not in out
    assert "no interval with fewer than 10 packages" in out
    assert b"\r\n" not in (tmp_path / "rows.csv").read_bytes()  # LF, as --out's rows.csv
    # a newline in an id does not split a table row
    assert cli._table(["id"], [["r\n1"]]).splitlines()[2] == "'r\\n1'"
    # a writer module given as a file path says what to write instead
    rc, _, err = run_cli("writers", "--writer-module", "/tmp/x/my_writers.py:fn")
    assert rc == 2 and "put its folder on PYTHONPATH" in err and "my_writers:fn" in err


# --------------------------------------------------------------------------- package format


def test_package_format_refusals():
    doc = json.loads((SAMPLES / "update_chain.json").read_text())
    assert refused(lambda: parse_package({**doc, "$schema": 5})) == [("$.$schema", "type")]
    for version in (np.bool_(True), np.array([1, 1])):
        assert refused(lambda v=version: parse_package({**doc, "memaudit": v})) == [
            ("$.memaudit", "format-version")
        ]
    for data in (None, {}, 3):
        with pytest.raises(MemAuditError, match="expected JSON bytes or text"):
            loads_package(data)
    assert loads_package(bytearray(json.dumps(doc).encode())).id == doc["id"]
    zipped = b"PK\x03\x04" + b"\x00" * 40
    assert "memaudit import artifact" in str(refused_message(lambda: loads_package(zipped)))


def refused_message(call) -> str:
    with pytest.raises(MemAuditError) as info:
        call()
    return str(info.value)


def test_the_schema_refuses_what_validate_refuses_for_blank_ids_and_repeated_requirements():
    schema = package_json_schema()
    doc = json.loads((SAMPLES / "update_chain.json").read_text())
    for bad in (
        {**doc, "id": " "},
        {**doc, "units": [{**doc["units"][0], "id": "\u00a0"}, *doc["units"][1:]]},
        {**doc, "candidates": [{**doc["candidates"][0], "type": " "}, *doc["candidates"][1:]]},
        {**doc, "queries": [{"id": "q", "requires": [doc["units"][0]["id"]] * 2}]},
    ):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)
        with pytest.raises(MemAuditError):
            parse_package(bad)
    jsonschema.validate(doc, schema)


def _artifact_copy(tmp_path: Path, meta: dict, name: str = "meta.json") -> Path:
    folder = tmp_path / "art"
    shutil.copytree(ARTIFACT, folder)
    (folder / "meta.json").unlink()
    (folder / name).write_text(json.dumps(meta))
    return folder


def test_artifact_manifests_say_what_they_do_not_read(tmp_path):
    folder = _artifact_copy(tmp_path, {"memaudit": 2, "saturation": "sqrt"})
    assert sorted(refused(lambda: artifact.load_artifact_package(folder))) == [
        ("meta.json.memaudit", "format-version"),
        ("meta.json.saturation", "known-saturation"),
    ]
    shutil.rmtree(folder)
    folder = _artifact_copy(tmp_path, {"stores": [{"id": "s", "select": []}]})
    (folder / "manifest.json").write_text(json.dumps({"id": "other"}))
    rc, _, err = run_cli("validate", str(folder))
    assert rc == 0
    assert "$.stores: in meta.json: a package field an artifact does not read" in err
    assert "manifest.json is not read: meta.json is this artifact's manifest" in err


def test_an_artifact_zip_that_unzips_too_large_is_refused(tmp_path, monkeypatch):
    archive = tmp_path / "art.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for f in ARTIFACT.iterdir():
            zf.write(f, f.name)
    total = sum(f.stat().st_size for f in ARTIFACT.iterdir())
    # s44: the cap is on the whole archive, every importer's (importers._zip).
    monkeypatch.setattr(zip_limits, "MAX_ZIP_TOTAL_BYTES", total - 1)
    problems = refused(lambda: artifact.load_artifact_package(archive))
    assert len(problems) == 1 and problems[0][1] == "zip-size"


def test_a_saved_result_is_named_as_such_not_as_a_bad_package(tmp_path):
    rc, out, _ = run_cli("solve", str(SAMPLES / "update_chain.json"), "--budget", "3", "--json")
    saved = write_json(tmp_path, "solved.json", json.loads(out))
    assert refused(lambda: load_package(saved)) == [("$.result_kind", "package")]
    rc, _, err = run_cli("validate", str(saved))
    assert rc == 2 and "saved MemAudit result ('solve'), not a package" in err


def _random_spread(seed: int) -> dict:
    """A few experiences, unit weights drawn over 27 decades, costs 1-4."""
    rng = np.random.default_rng(seed)
    n_units = int(rng.integers(2, 5))
    units = [
        {"id": f"u{r}", "kind": "fact", "weight": float(10.0 ** rng.uniform(-12, 15))}
        for r in range(n_units)
    ]
    candidates = []
    for g in range(int(rng.integers(2, 5))):
        for k in range(int(rng.integers(1, 4))):
            covered = rng.choice(n_units, size=int(rng.integers(1, 3)), replace=False)
            candidates.append(
                {
                    "id": f"c{g}_{k}",
                    "experience": f"e{g}",
                    "type": "atomic_fact",
                    "cost": int(rng.integers(1, 5)),
                    "coverage": {f"u{r}": float(rng.uniform(0.1, 1.0)) for r in covered},
                }
            )
    experiences = [
        {"id": e, "time": t}
        for t, e in enumerate(dict.fromkeys(c["experience"] for c in candidates))
    ]
    return {"memaudit": 1, "id": f"spread-{seed}", "experiences": experiences, "units": units,
            "candidates": candidates}  # fmt: skip


def test_optima_match_brute_force_when_weights_span_27_decades():
    n_checked = 0
    for seed in range(40):
        doc = _random_spread(seed)
        inst = compile_package(parse_package(doc))
        budgets = [1, 2, 3, 5, 8]
        expected = [opt_by_enumeration(doc, b) for b in budgets]
        for solver in ("auto", "bnb", "milp"):
            for b, want in zip(budgets, expected, strict=True):
                res = solve(inst, b, solver=solver)
                assert res.certified, (seed, solver, b)
                assert res.value == pytest.approx(want, rel=1e-9, abs=0), (seed, solver, b)
                n_checked += 1
        swept = solve_budgets(inst, budgets, solver="auto")
        assert [r.value for r in swept] == pytest.approx(expected, rel=1e-9, abs=0), seed
    assert n_checked == 600


def test_validation_wording_details(tmp_path):
    from memaudit_core.specs import read_number

    # A null required array is one problem (not-null), not also "missing".
    doc = {"memaudit": None, "id": "x", "experiences": [], "units": None, "candidates": []}
    assert refused(lambda: parse_package(doc)) == [
        ("$.memaudit", "not-null"),
        ("$.units", "not-null"),
    ]
    # A subnormal cost is not told it may be 0.
    base = json.loads((SAMPLES / "update_chain.json").read_text())
    base["candidates"][0]["cost"] = 5e-324
    with pytest.raises(MemAuditError) as info:
        parse_package(base)
    assert "must be at least 2.23e-308" in str(info.value) and "must be 0 or" not in str(info.value)
    # Budgets on the command line are plain ASCII numbers.
    for text in ("1_000", "\uff11\uff12", "\u0663"):
        with pytest.raises(ValueError, match="not a plain number"):
            read_number(text)
    # A huge offending value is echoed cut in --json errors.
    base = json.loads((SAMPLES / "update_chain.json").read_text())
    base["candidates"][0]["cost"] = "x" * 100_000
    path = write_json(tmp_path, "huge.json", base)
    rc, out, _ = run_cli("validate", str(path), "--json")
    assert rc == 2 and len(out) < 10_000 and "99,000 more chars" in out


def test_artifact_messages_use_json_type_names(tmp_path):
    folder = tmp_path / "art"
    shutil.copytree(ARTIFACT, folder)
    (folder / "meta.json").write_text("[1, 2]")
    assert refused(lambda: artifact.load_artifact_package(folder)) == [("meta.json", "type")]
    with pytest.raises(MemAuditError, match=r"got 'array'"):
        artifact.load_artifact_package(folder)
    (folder / "meta.json").unlink()
    text = (folder / "experiences.jsonl").read_text()
    (folder / "experiences.jsonl").write_bytes(text.encode("utf-16"))
    with pytest.raises(MemAuditError, match="looks like UTF-16 text"):
        artifact.load_artifact_package(folder)


def test_repeated_budgets_and_names_are_said_not_merged_silently():
    rc, _, err = run_cli(
        "sweep", str(SAMPLES / "update_chain.json"), "--budgets", "3,3,1:4",
        "--writers", "gvt,gvt", "--quiet",
    )  # fmt: skip
    assert rc == 0
    assert "--budgets gives 3 more than once; each runs once" in err
    assert "--writers gives gvt more than once; each runs once" in err
    rc, _, err = run_cli("sweep", str(SAMPLES / "update_chain.json"), "--budgets", "1:4", "--quiet")
    assert rc == 0 and "more than once" not in err


# --------------------------------------------------------------------------- ablations, generator


def test_capacity_runs_stopped_by_limits_are_neither_opt_nor_in_agreement():
    """Two limited engines (223.4 and 228.9 on the app) read "engines agree: yes", and the
    limited k = 1 values were drawn and headed as OPT."""
    from memaudit_core.generators import generate
    from memaudit_core.robustness import capacity_sensitivity
    from memaudit_ui import figures

    pkg = generate("random_coverage", seed=0, n_groups=150)
    cap = capacity_sensitivity(pkg, [60.0], k=2, time_limit=0.05)
    (point,) = cap.points
    assert dict(point.engine_status) == {"bnb": "limit", "milp": "limit"}
    assert point.agree is None and not point.proven
    assert not point.certified_1 and point.label_1 == "incumbent"
    assert point.to_dict()["label_1"] == "incumbent"
    fig = figures.capacity_chart(cap, "t", "units")
    k1 = fig.data[0]
    assert k1.name.startswith("OPT or incumbent, one per group")
    assert list(k1.marker.symbol) == ["circle-open"]
    assert fig.layout.yaxis.title.text.startswith("OPT or incumbent")


def test_random_coverage_refuses_a_max_cover_it_would_cut():
    from memaudit_core.generators import generate

    with pytest.raises(MemAuditError, match=r"random_coverage: max_cover \(1000\) exceeds"):
        generate("random_coverage", max_cover=1000)
    # The default 12 is still cut for a package of fewer units (4 here).
    pkg = generate("random_coverage", n_groups=2)
    assert max(len(c.coverage) for c in pkg.candidates) <= 4
    assert pkg.meta["params"]["max_cover"] == 12


def test_the_generator_form_says_when_a_linked_seed_does_not_fit():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params["package"] = "gen:memaudit-small:3000000000"  # the CLI takes it
    at.run()
    at.switch_page("pages/7_Generator.py").run()
    assert not at.exception
    assert at.number_input(key="gen_memaudit-small_seed").value == 3000000000
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params["package"] = "gen:memaudit-small:" + str(2**60)
    at.run()
    at.switch_page("pages/7_Generator.py").run()
    assert not at.exception
    assert any("larger than this form can hold" in w.value for w in at.warning)


def test_audit_from_stdin_says_which_runs_need_files(monkeypatch):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO((SAMPLES / "update_chain.json").read_text()))
    rc, _, err = run_cli("audit", "-", "--budgets", "6")
    assert rc == 2 and "audit reads its packages from files, not from stdin" in err
    assert "several packages" not in err
