"""Saved results read back into their typed models (``memaudit_core.read_result``).

Each CLI command that writes a result (``solve``, ``score`` of a writer / a package store /
an external store / an ``--external`` export, ``sweep`` of files and of a family, ``audit``)
is run through ``main``; its ``--json`` file is read back and compared field by field with the
same result computed independently through the library (timings, which differ between two
runs, are only checked to be numbers). Library results also go through JSON and back and must
be equal (``==`` on the frozen dataclasses, which compares every field). Malformed files raise
``ResultError`` naming the file, the JSON path and the rule.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

import memaudit_core as ma
from memaudit_core.analysis import score, sweep
from memaudit_core.audit import AuditReport, audit
from memaudit_core.cli import _json_safe, main
from memaudit_core.compiled import compile_package
from memaudit_core.errors import MemAuditError, ResultError
from memaudit_core.package import load_package
from memaudit_core.solvers import SolveResult, solve
from memaudit_core.suites import SuiteRow, SweepSuiteResult, sweep_suite
from memaudit_core.union import UnionReport, UnionScore, union_report
from memaudit_core.writers import WriterFailure

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "sample_packages"
FIX = REPO / "tests" / "fixtures" / "importers"
VEG = SAMPLES / "veg-to-pescatarian.json"
CHAIN = SAMPLES / "update_chain.json"
DEMO = SAMPLES / "external-stores-demo.json"

#: Wall-clock fields: two runs of one computation differ there and nowhere else.
TIMINGS = {"time_s", "elapsed_s", "bnb_time_s", "milp_time_s", "enum_time_s"}


def cli_file(capsys, tmp_path: Path, name: str, *argv: str) -> Path:
    """Run ``memaudit ARGV --json`` and save its stdout as ``name`` (what a researcher does
    with ``> name``)."""
    code = main([*argv, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    path = tmp_path / name
    path.write_text(out, encoding="utf-8")
    return path


def assert_same(got: Any, want: Any, where: str = "result", skip: frozenset = frozenset()):
    """``got`` equals ``want`` field by field, recursing through dataclasses and tuples.

    Leaves compare with ``==`` (floats exactly: the same computation gives the same float);
    sequences must be tuples on both sides (JSON arrays come back as tuples, not lists);
    fields named in :data:`TIMINGS` or ``skip`` are only checked to be there.
    """
    if dataclasses.is_dataclass(want):
        assert type(got) is type(want), f"{where}: {type(got).__name__}"
        for f in dataclasses.fields(want):
            a, b = getattr(got, f.name), getattr(want, f.name)
            if f.name in TIMINGS or f.name in skip:
                assert a is not None or b is None, f"{where}.{f.name}"
                continue
            assert_same(a, b, f"{where}.{f.name}", skip)
    elif isinstance(want, tuple):
        assert isinstance(got, tuple), f"{where}: {type(got).__name__}, not a tuple"
        assert len(got) == len(want), f"{where}: {len(got)} items, want {len(want)}"
        for i, (a, b) in enumerate(zip(got, want, strict=True)):
            assert_same(a, b, f"{where}[{i}]", skip)
    else:
        assert type(got) is type(want) or {type(got), type(want)} <= {int, float}, where
        assert got == want, f"{where}: {got!r} != {want!r}"


def round_trip(result: Any) -> Any:
    """``result`` through JSON text as the CLI writes it (non-finite floats as strings)."""
    text = json.dumps(_json_safe(result.to_dict()), allow_nan=False)
    return ma.read_result(json.loads(text))


# --------------------------------------------------------------------------- CLI files


def test_solve_file_reads_back_as_the_solve_result(capsys, tmp_path):
    path = cli_file(capsys, tmp_path, "solve.json", "solve", str(VEG), "--budget", "6")
    got = ma.read_result(path)
    pkg = load_package(VEG)
    want = solve(compile_package(pkg), 6.0)
    assert isinstance(got, SolveResult)
    assert_same(got, want)
    assert got.label == "OPT" and got.certified  # derived from the rebuilt certificate
    assert got.selected_idx == want.selected_idx and len(got.selected_idx) > 0
    # The same model read directly, not only through read_result.
    assert SolveResult.from_dict(json.loads(path.read_text())) == got


def test_score_file_of_a_writer_reads_back(capsys, tmp_path):
    path = cli_file(
        capsys, tmp_path, "score.json", "score", str(CHAIN), "--budget", "6", "--writer", "density"
    )
    got = ma.read_result(path)
    want = score(load_package(CHAIN), 6, writer="density")
    assert type(got).__name__ == "StoreEvaluation"
    assert_same(got, want)
    # The paper's density ratio at B = 6 on update_chain (reference/PAPER_FAMILIES.md).
    assert got.ratio_text == "0.730" and len(got.unit_rows) > 0 and len(got.kind_rows) == 3


def test_score_file_of_a_package_store_of_memories_reads_back_with_its_union(capsys, tmp_path):
    path = cli_file(capsys, tmp_path, "mem0.json", "score", str(DEMO), "--store", "mem0")
    got = ma.read_result(path)
    pkg = load_package(DEMO)
    budget = pkg.default_budget()
    assert isinstance(got, UnionScore) and got.external_store is None
    assert_same(got.evaluation, score(pkg, budget, store_id="mem0"))
    want_union = union_report(pkg, "mem0", budget)
    assert isinstance(got.union, UnionReport)
    assert_same(got.union, want_union)
    # The optima behind the union metrics come back whole, not only their values.
    assert got.union.union_opt.certificate is not None
    assert got.union.upper.selected == want_union.upper.selected
    # 8 memories in the package, one marked deleted (not part of the store as kept).
    assert len(got.union.memory_rows) == 7 and len(got.union.deleted) == 1
    # The file keeps its shape: the union's notes on top, the evaluation's beside them.
    saved = json.loads(path.read_text())
    assert saved["notes"] == list(want_union.notes)
    assert saved["evaluation_notes"] == list(got.evaluation.notes)


def test_score_file_of_an_imported_export_reads_back(capsys, tmp_path):
    pkg_path = tmp_path / "locomo.json"
    export = FIX / "mem0_v10_list.json"
    assert main(["import", "locomo", str(FIX / "locomo_small.json"), "--instance", "conv-a",
                 "-o", str(pkg_path)]) == 0  # fmt: skip
    with_store = tmp_path / "with_store.json"
    assert main(["import", "mem0", str(export), "--package", str(pkg_path),
                 "-o", str(with_store)]) == 0  # fmt: skip
    capsys.readouterr()
    path = cli_file(capsys, tmp_path, "ext.json", "score", str(pkg_path), "--external",
                    str(export), "--format", "mem0", "--budget", "9")  # fmt: skip
    got = ma.read_result(path)
    pkg = load_package(with_store)
    assert isinstance(got, UnionScore)
    assert_same(got.evaluation, score(pkg, 9, store_id="mem0"))
    assert_same(got.union, union_report(pkg, "mem0", 9))
    assert got.external_store["format"] == "mem0"
    assert got.external_store["format_version"] == "1.0"
    assert got.external_store["cost_rule"] == "words"
    assert got.external_store["memories"] == len(pkg.store("mem0").memories)


def test_score_file_of_an_empty_export_reads_back_without_union(capsys, tmp_path):
    export = tmp_path / "empty_mem0.json"
    export.write_text("[]", encoding="utf-8")
    with_store = tmp_path / "with_store.json"
    assert main(["import", "mem0", str(export), "--package", str(CHAIN),
                 "-o", str(with_store)]) == 0  # fmt: skip
    capsys.readouterr()
    path = cli_file(capsys, tmp_path, "empty.json", "score", str(CHAIN), "--budget", "6",
                    "--external", str(export), "--format", "mem0")  # fmt: skip
    got = ma.read_result(path)
    assert isinstance(got, UnionScore) and got.union is None
    assert got.external_store["memories"] == 0
    assert_same(got.evaluation, score(load_package(with_store), 6, store_id="mem0"))
    assert got.evaluation.value == 0.0 and got.evaluation.selected == ()


def test_sweep_file_of_package_files_reads_back(capsys, tmp_path):
    path = cli_file(capsys, tmp_path, "sweep.json", "sweep", str(VEG), str(CHAIN),
                    "--budgets", "3,6", "--writers", "gvt,density",
                    "--ablations", "no_validity", "--quiet")  # fmt: skip
    got = ma.read_result(path)
    assert isinstance(got, SweepSuiteResult)
    pkgs = [load_package(VEG), load_package(CHAIN)]
    want = sweep(pkgs, [3, 6], ["gvt", "density"], ablations=["no_validity"])
    labels = {pkgs[0].content_hash(): str(VEG), pkgs[1].content_hash(): str(CHAIN)}
    want_rows = tuple(
        SuiteRow(source=labels[r.content_hash], **{
            f: getattr(r, f) for f in SuiteRow.__dataclass_fields__ if f != "source"
        })
        for r in want.rows
    )  # fmt: skip
    assert len(want_rows) == 2 * 2 * 3
    assert_same(got.rows, want_rows, "rows")
    assert_same(got.summary, want.summary, "summary")
    assert got.methods == want.methods and got.budgets == (3.0, 6.0)
    assert (got.n_sources, got.n_packages, got.complete, got.reused) == (2, 2, True, 0)
    assert got.errors == () and got.out is None and got.files == ()
    # The CLI's solver settings come back as the model's (name, value) pairs.
    assert dict(got.settings) == {
        "solver": "auto",
        "time_limit": None,
        "total_time_limit": None,
        "cross_check": "sample",
    }


def test_sweep_file_of_a_family_reads_back(capsys, tmp_path):
    path = cli_file(capsys, tmp_path, "fam.json", "sweep", "--family", "memaudit-small",
                    "--seeds", "0-2", "--budgets", "4,8", "--quiet")  # fmt: skip
    got = ma.read_result(path)
    want = sweep_suite(families=["memaudit-small"], seeds=[0, 1, 2], budgets=[4, 8])
    assert_same(got, want, skip=frozenset({"settings", "backend"}))
    assert len(got.rows) == 3 * 2 * len(got.methods) and got.n_sources == 3
    assert dict(got.settings)["cross_check"] == "sample"


def test_audit_file_reads_back(capsys, tmp_path):
    path = cli_file(capsys, tmp_path, "audit.json", "audit", "--family", "update_chain",
                    "--seeds", "0", "--budgets", "3,6", "--pools", "full,no_validity", "--quiet")  # fmt: skip
    got = ma.read_result(path)
    want = audit(families=["update_chain"], seeds=[0], budgets=[3, 6],
                 pools=["full", "no_validity"], time_limit=60.0)  # fmt: skip
    assert isinstance(got, AuditReport)
    assert_same(got, want, skip=frozenset({"backend"}))
    assert got.verdict == "PASS" and got.n_agree == 4 and len(got.rows) == 4
    assert all(isinstance(t, float) for t in got.bnb_time_s) and len(got.milp_time_s) == 3


# --------------------------------------------------------------------------- exact round trips


def test_library_results_survive_json_exactly():
    pkg = load_package(DEMO)
    budget = pkg.default_budget()
    opt = solve(compile_package(pkg), budget)
    ev = score(pkg, budget, store_id="letta")
    rep = union_report(pkg, "letta", budget)
    swept = sweep([pkg], [6, budget], ["gvt"], stores=["mem0"], ablations=["generic"])
    for result in (opt, ev, rep, UnionScore(ev, rep, {"id": "letta"}), swept):
        again = round_trip(result)
        assert again == result, type(result).__name__
        assert again is not result
    assert round_trip(swept).settings == swept.settings


def test_non_finite_floats_and_awkward_values_come_back():
    opt = solve(compile_package(load_package(CHAIN)), 6)
    # A limited run without a proven bound: bound and gap are inf (the CLI writes
    # "Infinity"); floats that print long stay exact through JSON's repr.
    limited = dataclasses.replace(
        opt, bound=math.inf, gap=math.inf, status="limit", value=0.1 + 0.2, certificate=None
    )
    again = round_trip(limited)
    assert again == limited and again.bound == math.inf and again.value == 0.30000000000000004
    assert again.certificate is None and again.label == "incumbent"

    suite = sweep_suite(families=["update_chain"], budgets=[6], writers=["gvt"])
    # The swept package's failure: one of another package would contradict n_sources (QA s49).
    failure = WriterFailure(suite.rows[0].package_id, None, 6.0, "mine", "blind", "timeout",
                            "took; too long", ("a", "b"), "Traceback ...")  # fmt: skip
    suite = dataclasses.replace(suite, errors=(failure,), settings=(("time_limit", 2.5),))
    again = round_trip(suite)
    assert again == suite and again.errors[0].message == "took; too long"

    rep = audit(families=["update_chain"], budgets=[6])
    row = dataclasses.replace(rep.rows[0], problems=("bnb skipped: a; b", "second"))
    rep = dataclasses.replace(rep, rows=(row,), disagreements=(row,))
    again = round_trip(rep)
    assert again == rep and again.rows[0].problems == ("bnb skipped: a; b", "second")


# --------------------------------------------------------------------------- located errors


def edited(tmp_path: Path, source: Path, edit, name: str = "edited.json") -> Path:
    doc = json.loads(source.read_text())
    edit(doc)
    path = tmp_path / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def refused(path_or_doc: Any) -> ResultError:
    with pytest.raises(ResultError) as info:
        ma.read_result(path_or_doc)
    assert isinstance(info.value, MemAuditError)
    return info.value


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("saved")
    runs = {
        "sweep": ["sweep", str(CHAIN), "--budgets", "3,6", "--writers", "gvt,density",
                  "--quiet"],
        "solve": ["solve", str(CHAIN), "--budget", "6"],
        "union": ["score", str(DEMO), "--store", "mem0"],
        "audit": ["audit", "--family", "update_chain", "--budgets", "6", "--quiet"],
    }  # fmt: skip
    out = {}
    for name, argv in runs.items():
        path = folder / f"{name}.json"
        import contextlib
        import io

        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            assert main([*argv, "--json"]) == 0
        path.write_text(buf.getvalue(), encoding="utf-8")
        out[name] = path
    return out


def test_missing_field_names_file_path_and_rule(saved, tmp_path):
    path = edited(tmp_path, saved["sweep"], lambda d: d["rows"][3].pop("value"))
    exc = refused(path)
    assert (exc.path, exc.rule, exc.file) == ("$.rows[3].value", "required", str(path))
    assert str(exc) == f"{path}: $.rows[3].value: missing required field 'value' [rule: required]"


def test_wrong_type_names_file_path_and_rule(saved, tmp_path):
    path = edited(tmp_path, saved["sweep"], lambda d: d["rows"][3].update(value="high"))
    exc = refused(path)
    assert str(exc) == (
        f"{path}: $.rows[3].value: expected a number, got a string (got 'high') [rule: type]"
    )
    path = edited(tmp_path, saved["sweep"], lambda d: d["summary"][0].update(n=None))
    assert "$.summary[0].n: expected an integer, got null [rule: type]" in str(refused(path))
    path = edited(tmp_path, saved["sweep"], lambda d: d.update(budgets="3,6"))
    assert "$.budgets: expected an array, got a string" in str(refused(path))


def test_nested_model_errors_are_located(saved, tmp_path):
    def bad_nodes(d):
        d["certificate"]["checks"][0]["nodes"] = 1.5

    exc = refused(edited(tmp_path, saved["solve"], bad_nodes))
    assert exc.path == "$.certificate.checks[0].nodes" and exc.rule == "type"
    assert "expected an integer, got a number (got 1.5)" in str(exc)

    exc = refused(edited(tmp_path, saved["solve"], lambda d: d["certificate"].pop("checks")))
    assert (exc.path, exc.rule) == ("$.certificate.checks", "required")


def test_union_score_errors_name_the_keys_of_the_file(saved, tmp_path):
    exc = refused(edited(tmp_path, saved["union"], lambda d: d["evaluation_notes"].append(3)))
    assert exc.rule == "type" and exc.path.startswith("$.evaluation_notes[")
    exc = refused(edited(tmp_path, saved["union"], lambda d: d.pop("evaluation_package_ratio")))
    assert (exc.path, exc.rule) == ("$.evaluation_package_ratio", "required")

    def bad_memory(d):
        d["union"]["memories"][2]["kept"] = "no"

    exc = refused(edited(tmp_path, saved["union"], bad_memory))
    assert (exc.path, exc.rule) == ("$.union.memories[2].kept", "type")
    assert "expected true or false" in str(exc)


def test_audit_times_are_located(saved, tmp_path):
    exc = refused(edited(tmp_path, saved["audit"], lambda d: d["bnb_time_s"].pop("mean")))
    assert (exc.path, exc.rule) == ("$.bnb_time_s.mean", "required")


def test_unknown_kind_and_newer_versions_are_refused(saved, tmp_path):
    exc = refused(edited(tmp_path, saved["solve"], lambda d: d.update(result_kind="plot")))
    assert (exc.path, exc.rule) == ("$.result_kind", "known-kind")
    assert "unknown result kind (known: solve, store_evaluation" in str(exc)

    exc = refused(edited(tmp_path, saved["solve"], lambda d: d.update(result_version=3)))
    assert (exc.path, exc.rule) == ("$.result_version", "format-version")
    assert "this one reads versions up to 2" in str(exc)

    exc = refused(edited(tmp_path, saved["sweep"], lambda d: d.update(json_output_version=2)))
    assert (exc.path, exc.rule) == ("$.json_output_version", "format-version")

    exc = refused(edited(tmp_path, saved["solve"], lambda d: d.pop("result_kind")))
    assert (exc.path, exc.rule) == ("$.result_kind", "required")
    assert "not a MemAudit result, or one saved before results said their kind" in str(exc)

    # A model asked to read another model's document says so.
    with pytest.raises(ResultError) as info:
        SolveResult.from_dict(json.loads(saved["sweep"].read_text()))
    assert info.value.path == "$.result_kind" and info.value.rule == "known-kind"
    assert "not a 'solve' result but a 'sweep_suite' one (read_result picks" in str(info.value)


def test_sweeps_and_audits_saved_before_result_kind_are_read(saved, tmp_path):
    new_sweep = ma.read_result(saved["sweep"])
    old = edited(tmp_path, saved["sweep"], lambda d: d.pop("result_kind"), "old_sweep.json")
    assert ma.read_result(old) == new_sweep  # known by its "suite": "sweep"

    def before_problem_list(d):
        d.pop("result_kind")
        d["rows"][0]["problems"] = "bnb skipped: too big; milp failed: X"
        for row in d["rows"]:
            row.pop("problem_list")

    got = ma.read_result(edited(tmp_path, saved["audit"], before_problem_list, "old_audit.json"))
    assert isinstance(got, AuditReport) and len(got.rows) == 1
    assert got.rows[0].problems == ("bnb skipped: too big", "milp failed: X")
    assert ma.read_result(saved["audit"]).rows[0].problems == ()


def test_files_that_are_not_results(tmp_path, capsys):
    broken = tmp_path / "broken.json"
    broken.write_text('{"result_kind": "solve",', encoding="utf-8")
    exc = refused(broken)
    # The package loader's reader and rules (QA s44): the path gives line and column.
    assert (exc.path, exc.rule, exc.file) == ("$ (line 1, column 25)", "truncated", str(broken))
    assert "file ends before the JSON document is complete" in str(exc)

    listed = tmp_path / "list.json"
    listed.write_text("[1, 2]", encoding="utf-8")
    exc = refused(listed)
    assert (exc.path, exc.rule) == ("$", "type")
    assert "a saved result must be a JSON object, not a JSON array" in str(exc)

    # The CLI's error object (a failed command run with --json) is not a result.
    assert main(["solve", str(tmp_path / "nowhere.json"), "--json"]) == 2
    error_file = tmp_path / "error.json"
    error_file.write_text(capsys.readouterr().out, encoding="utf-8")
    exc = refused(error_file)
    assert exc.rule == "required" and "the CLI's error object" in str(exc)

    # A missing file is a located ResultError too (its rule for `show --json`), twenty-fifth session.
    exc = refused(tmp_path / "missing.json")
    assert (exc.path, exc.rule, exc.file) == ("$", "file-exists", str(tmp_path / "missing.json"))


def test_numbers_no_float_holds_are_located(saved, tmp_path):
    path = edited(tmp_path, saved["solve"], lambda d: d.update(value=10**400))
    exc = refused(path)
    assert (exc.path, exc.rule) == ("$.value", "type")
    assert "a number too large for a float" in str(exc)
    # Past Python's 4,300-digit limit json itself refuses the integer (said in our words, QA s44).
    huge = tmp_path / "huge.json"
    head = '{"result_kind": "solve", "value": '
    huge.write_text(head + "9" * 5000 + "}", encoding="utf-8")
    exc = refused(huge)
    where = f"$ (line 1, column {len(head) + 1})"  # where the number starts
    assert (exc.path, exc.rule, exc.file) == (where, "json-syntax", str(huge))
    assert exc.detail == "not valid JSON: a number has too many digits to read"


# --------------------------------------------------------------------------- memaudit show


def test_show_prints_the_summary_table_the_sweep_printed(capsys, tmp_path):
    argv = ["sweep", str(VEG), str(CHAIN), "--budgets", "3,6", "--writers", "gvt,density",
            "--quiet"]  # fmt: skip
    assert main(argv) == 0
    printed = capsys.readouterr().out.splitlines()
    saved = cli_file(capsys, tmp_path, "sweep.json", *argv)
    assert main(["show", str(saved)]) == 0
    shown = capsys.readouterr().out.splitlines()
    # The sources and how many are distinct, as a suite run says them (QA s49).
    assert shown[0] == (
        f"saved sweep {saved}: 2 package(s) (2 distinct by content); budgets 3, 6; 8 rows"
    )
    # The table and its legend, line for line as `sweep` printed them (its first line is
    # the timing, which differs).
    table = printed[1 : printed.index(next(x for x in printed if x.startswith("ratio = "))) + 1]
    assert len(table) == 2 + 4 + 1
    assert shown[1 : 1 + len(table)] == table


@pytest.mark.parametrize(
    "argv",
    [
        ["solve", str(CHAIN), "--budget", "6"],
        ["solve", str(VEG), "--budget", "4", "--pool", "no_validity"],
        ["score", str(CHAIN), "--budget", "6", "--writer", "density"],
        ["score", str(DEMO), "--store", "mem0"],
    ],
    ids=["solve", "solve-pool", "score-writer", "score-external-store"],
)
def test_show_prints_a_saved_solve_or_score_as_its_command_printed_it(capsys, tmp_path, argv):
    """Line for line, except what a saved result does not hold: the package file's name and
    its cost unit (the budget and cost numbers stay), the solve time, and score's "why this
    score" paragraphs (worded from the package's candidate types, s50)."""
    assert main(argv) == 0
    printed = capsys.readouterr().out.split("\n\nwhy this score\n")[0].splitlines()
    saved_path = cli_file(capsys, tmp_path, "result.json", *argv)
    assert main(["show", str(saved_path)]) == 0
    shown = capsys.readouterr().out.splitlines()
    assert len(shown) == len(printed) > 3
    unit = load_package(argv[1]).cost_unit
    for was, now in zip(printed, shown, strict=True):
        was = was.replace(f"({argv[1]})", f"(saved in {saved_path})").replace(f" {unit}", "")
        now = now.replace(f" {unit}", "")
        # The solve time is measured per run: compare the line without it.
        was, now = (re.sub(r"\d+(\.\d+)? ms$", "ms", x) for x in (was, now))
        assert now == was


def test_show_refuses_what_it_cannot_render_with_the_located_error(capsys, saved, tmp_path):
    # A union report alone (the part of a union score) is printed as score prints that part
    # (docs QA, session 36: read_result took it and show refused it).
    report = tmp_path / "union_report.json"
    report.write_text(json.dumps(json.loads(saved["union"].read_text())["union"]))
    assert main(["show", str(report)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("union metrics for ") and "union ratio" in out

    bad = edited(tmp_path, saved["sweep"], lambda d: d["summary"][1].update(mean_ratio=[1]))
    assert main(["show", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}: $.summary[1].mean_ratio: expected a number or null, got an array" in err
    assert "[rule: type]" in err and "Traceback" not in err

    assert main(["show", str(bad), "--json"]) == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["type"] == "ResultError" and error["file"] == str(bad)
    assert error["problems"] == [
        {
            "path": "$.summary[1].mean_ratio",
            "rule": "type",
            "message": "expected a number or null, got an array",
            "value": None,
        }
    ]
