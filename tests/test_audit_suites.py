"""Certification audit and suites: distinct-instance counting, disagreements saved, sources,
parallel (process pool and local Dask cluster) runs giving identical results, and resume."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd
import pytest

from memaudit_core import audit as au
from memaudit_core import suites as su
from memaudit_core.analysis import sweep
from memaudit_core.cli import main
from memaudit_core.errors import MemAuditError, PackageError, UnknownNameError
from memaudit_core.generators import generate
from memaudit_core.package import load_package, save_package
from memaudit_core.writers import WRITERS

REPO = Path(__file__).resolve().parent.parent
TIME_COLUMNS = {"bnb_time_s", "milp_time_s", "enum_time_s"}


def _signature(pkg) -> str:
    """An independent hash of what the solvers see (names, texts and meta left out)."""
    weights = pkg.unit_weights()
    pos = {u.id: i for i, u in enumerate(pkg.units)}
    groups = []
    for e in sorted(pkg.experiences, key=lambda e: (e.time, e.id)):
        members = sorted(
            repr((c.type, float(c.cost), sorted((pos[u], float(v)) for u, v in c.coverage.items())))
            for c in pkg.candidates
            if c.experience == e.id
        )
        groups.append(members)
    text = repr((pkg.saturation, [float(weights[u.id]) for u in pkg.units], groups))
    return hashlib.sha256(text.encode()).hexdigest()


# --------------------------------------------------------------------------- audit


def test_audit_counts_distinct_instances_honestly_and_all_agree(tmp_path):
    specs = {
        "memaudit-small": range(100),
        "update_chain": range(100),
        "temporal_interval": range(100),
    }
    expected = {_signature(generate(f, seed=s)) for f, seeds in specs.items() for s in seeds}
    budgets = [1, 4, 7, 15]
    rep = au.audit(
        families=["memaudit-small:0-99", "update_chain:0-99", "temporal_interval:0-99"],
        budgets=budgets,
        out=tmp_path / "audit",
        workers=2,
        figures=False,
    )
    # QA s44: a seed-invariant family's 100 seeds are its one package (built at seed 0).
    assert rep.n_sources == 102
    assert rep.n_packages == 102  # the seed is part of each package's meta
    assert rep.n_instances == len(expected)
    assert rep.n_tasks == len(expected) * len(budgets)
    assert rep.n_agree == rep.n_tasks and rep.n_disagree == 0 and rep.ok
    assert rep.n_unproven == 0 and rep.n_skipped == 0
    assert rep.max_rel_diff is not None and rep.max_rel_diff <= 1e-9
    fams = {f.family: f for f in rep.families}
    assert fams["update_chain"].n_instances == 1 and fams["temporal_interval"].n_instances == 1
    assert fams["update_chain"].n_sources == 1
    assert rep.executed == rep.n_tasks and rep.reused == 0
    table = pd.read_parquet(tmp_path / "audit" / "instances.parquet")
    assert len(table) == rep.n_tasks
    assert len(set(zip(table.instance_hash, table.pool, table.budget, strict=True))) == rep.n_tasks
    assert (tmp_path / "audit" / "report.md").read_text().count("PASS") == 1
    assert not (tmp_path / "audit" / "disagreements").exists()


def test_instance_hash_ignores_names_and_meta_but_not_numbers():
    a = generate("update_chain", seed=0)
    # Two seeds of density_trap that draw the same numbers: other ids and meta, one instance
    # (update_chain at seed 7 is seed 0's package itself since QA s51 m1).
    d0, d4 = generate("density_trap", seed=0), generate("density_trap", seed=4)
    assert su.instance_hash(d0) == su.instance_hash(d4)
    assert d0.content_hash() != d4.content_hash()
    assert su.instance_hash(a) != su.instance_hash(generate("update_chain", length=4))
    from dataclasses import replace

    cheaper = replace(a, candidates=(replace(a.candidates[0], cost=1.5), *a.candidates[1:]))
    assert su.instance_hash(cheaper) != su.instance_hash(a)


def test_audit_disagreement_is_reported_and_saved(tmp_path, monkeypatch):
    from memaudit_core import solvers

    solvers._load_engines()
    real = solvers.ENGINES["milp"]

    def wrong(inst, budget, **kw):
        raw = real(inst, budget, **kw)
        if budget == 6:
            return solvers.RawSolution((), raw.value + 1.0, raw.value + 1.0, "optimal")
        return raw

    monkeypatch.setitem(solvers.ENGINES, "milp", wrong)
    rep = au.audit(families=["update_chain"], budgets=[3, 6], out=tmp_path / "o", figures=False)
    assert rep.n_disagree == 1 and rep.n_agree == 1 and not rep.ok
    (row,) = rep.disagreements
    assert row.budget == 6.0 and row.pool == "full"
    assert any("worth" in p for p in row.problems)  # the recomputed F exposed it
    saved = sorted((tmp_path / "o" / "disagreements").glob("*.package.json"))
    assert len(saved) == 1
    pkg = load_package(saved[0])
    assert pkg.budget == 6.0 and su.instance_hash(pkg) == row.instance_hash
    rec = json.loads(saved[0].with_name(saved[0].name.replace(".package", "")).read_text())
    assert rec["outcome"] == "disagree" and "memaudit solve" in rec["reproduce"]
    assert "Disagreements" in (tmp_path / "o" / "report.md").read_text()


def test_audit_summary_for_package_and_pools():
    rep = au.audit_summary_for_package(
        generate("temporal_interval"), [3, 6, 13], pools=["full", "no_validity"]
    )
    assert rep.n_tasks == 6 and rep.n_agree == 6 and rep.n_instances == 1
    assert {r.pool for r in rep.rows} == {"full", "no_validity"}
    json.dumps(rep.to_dict())
    with pytest.raises(UnknownNameError):
        au.audit_summary_for_package(generate("update_chain"), [3], pools=["half"])


# --------------------------------------------------------------------------- sources


def test_sources_from_folder_list_and_family_specs(tmp_path):
    folder = tmp_path / "pkgs"
    folder.mkdir()
    for s in range(3):
        save_package(generate("memaudit-small", seed=s), folder / f"p{s}.json")
    (folder / "notes.txt").write_text("not a package list in a folder: ignored")
    listing = tmp_path / "list.txt"
    listing.write_text("# two packages\npkgs/p1.json\n\npkgs/p2.json  # trailing comment\n")
    srcs = su.collect_sources(
        [str(folder), str(listing)], ["update_chain:0-1", "scope_shift"], seeds=[4, 5]
    )
    keys = [s.key for s in srcs]
    assert keys[:3] == [f"file:{(folder / f'p{s}.json').resolve()}" for s in range(3)]
    assert len(keys) == 6  # p1 / p2 listed twice are kept once
    assert keys[3:] == [
        "family:update_chain:0",  # its seeds 0 and 1 are one package (QA s44)
        "family:scope_shift:4",
        "family:scope_shift:5",
    ]
    # A missing file or a folder without packages is a source whose loading says so: the
    # suite lists it with the invalid files (QA s45: it stopped the run alone).
    (missing,) = su.collect_sources([str(tmp_path / "missing.json")])
    with pytest.raises(PackageError, match="no such file"):
        missing.load()
    with pytest.raises(UnknownNameError):
        su.collect_sources([], ["no_such_family:0-3"])
    with pytest.raises(MemAuditError):
        su.collect_sources([], [])
    empty = tmp_path / "empty"
    empty.mkdir()
    (none,) = su.collect_sources([str(empty)])
    with pytest.raises(PackageError, match=r"no \*\.json"):
        none.load()


# --------------------------------------------------------------------------- suites

FIFTY = ["memaudit-small:0-29", "density_trap:0-9", "update_chain:0-4", "temporal_interval:0-4"]
BUDGETS = [2, 4, 8]
ABLATIONS = ["no_validity", "generic"]


def _key(r):
    return (r.package_id, r.budget, r.method)


def _rows(res):
    return [r.to_dict() for r in res.rows]


@pytest.fixture(scope="module")
def dask_client():
    from dask.distributed import Client, LocalCluster

    cluster = LocalCluster(
        n_workers=2, processes=True, threads_per_worker=1, host="127.0.0.1", dashboard_address=None
    )
    client = Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


@pytest.fixture(scope="module")
def serial_fifty(tmp_path_factory):
    out = tmp_path_factory.mktemp("serial")
    return su.sweep_suite(
        families=FIFTY, budgets=BUDGETS, ablations=ABLATIONS, out=out, figures=False
    )


def test_suite_matches_analysis_sweep(serial_fifty):
    pkgs = [generate("memaudit-small", seed=s) for s in range(30)]
    ref = sweep(pkgs, BUDGETS, list(WRITERS), ablations=["no_validity_opt", "generic_opt"])
    got = [r for r in serial_fifty.rows if r.family == "memaudit-small"]
    assert len(got) == len(ref.rows)
    for a, b in zip(sorted(got, key=_key), sorted(ref.rows, key=_key), strict=True):
        assert (a.package_id, a.budget, a.method) == (b.package_id, b.budget, b.method)
        assert a.value == pytest.approx(b.value, abs=1e-12)
        assert a.opt == pytest.approx(b.opt, abs=1e-12)
        assert a.certified == b.certified
    # 30 + 10 seeded packages, and one each for the seed-invariant update_chain:0-4 and
    # temporal_interval:0-4 (QA s44: their seeds are one package; they were 5 copies each).
    assert serial_fifty.n_sources == 42
    assert serial_fifty.n_tasks == 42 * len(BUDGETS) * (len(WRITERS) + 2)


def test_suite_workers_and_local_dask_give_identical_results(serial_fifty, dask_client, tmp_path):
    procs = su.sweep_suite(
        families=FIFTY,
        budgets=BUDGETS,
        ablations=ABLATIONS,
        workers=2,
        out=tmp_path / "p",
        figures=False,
    )
    dask = su.sweep_suite(
        families=FIFTY,
        budgets=BUDGETS,
        ablations=ABLATIONS,
        scheduler=dask_client,
        out=tmp_path / "d",
        figures=False,
    )
    assert procs.backend == "2 worker processes" and dask.backend.startswith("dask")
    assert _rows(procs) == _rows(serial_fifty) == _rows(dask)
    assert [s.to_dict() for s in procs.summary] == [s.to_dict() for s in dask.summary]
    a = (tmp_path / "p" / "rows.csv").read_bytes()
    assert a == (tmp_path / "d" / "rows.csv").read_bytes()
    assert pd.read_parquet(tmp_path / "p" / "rows.parquet").equals(
        pd.read_parquet(tmp_path / "d" / "rows.parquet")
    )
    # The audit too, on the local cluster (times aside).
    serial = au.audit(families=FIFTY[:2], budgets=[2, 8], figures=False)
    remote = au.audit(families=FIFTY[:2], budgets=[2, 8], scheduler=dask_client, figures=False)

    def strip(rep):
        return [{k: v for k, v in r.to_dict().items() if k not in TIME_COLUMNS} for r in rep.rows]

    assert strip(serial) == strip(remote) and remote.n_disagree == 0


def test_suite_resume_runs_each_task_once_and_matches_a_fresh_run(tmp_path, serial_fifty):
    out = tmp_path / "resume"
    first = su.sweep_suite(
        families=FIFTY,
        budgets=BUDGETS,
        ablations=ABLATIONS,
        out=out,
        workers=2,
        max_tasks=500,
        figures=False,
    )
    assert not first.complete and first.executed == 500
    assert not (out / "rows.csv").exists()  # outputs only once complete
    # A kill mid-write leaves a torn last line: it is dropped and its task runs again.
    with (out / su.JOURNAL).open("a") as fh:
        fh.write('{"t": "task", "key": "abc|2.0|gvt", "resu')
    second = su.sweep_suite(
        families=FIFTY, budgets=BUDGETS, ablations=ABLATIONS, out=out, figures=False
    )
    assert second.complete and second.reused == 500
    assert first.executed + second.executed == second.n_tasks
    keys = [json.loads(line)["key"] for line in (out / su.JOURNAL).read_text().splitlines()[1:]]
    assert len(keys) == len(set(keys)) == second.n_tasks
    assert _rows(second) == _rows(serial_fifty)
    fresh = Path(serial_fifty.out) / "rows.csv"  # an uninterrupted run
    assert (out / "rows.csv").read_bytes() == fresh.read_bytes()
    # A third run has nothing left to do.
    third = su.sweep_suite(
        families=FIFTY, budgets=BUDGETS, ablations=ABLATIONS, out=out, figures=False
    )
    assert third.executed == 0 and third.reused == third.n_tasks
    # Other settings must not mix into this journal.
    with pytest.raises(MemAuditError, match="other settings"):
        su.sweep_suite(families=FIFTY, budgets=BUDGETS, out=out, solver="milp", figures=False)
    with pytest.raises(MemAuditError, match="not an audit journal"):
        au.audit(families=["update_chain"], budgets=[3], out=out, figures=False)


def test_suite_report_with_figure_or_note(tmp_path):
    res = su.sweep_suite(
        families=["update_chain"],
        budgets=[3, 6, 13],
        writers=["gvt", "density"],
        ablations=["no_validity"],
        out=tmp_path / "r",
    )
    report = (tmp_path / "r" / "report.md").read_text()
    assert "95% CI: percentile bootstrap of the mean (1000 resamples, seed 0)" in report
    png = tmp_path / "r" / "figures" / "mean_ratio.png"
    if png.exists():
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert "figures/mean_ratio.png" in report
    else:  # kaleido could not run here: the report says so instead
        assert "figures not rendered" in report
    for name in ("rows.csv", "rows.parquet", "summary.csv", "summary.parquet"):
        assert (tmp_path / "r" / name).exists()
    assert "no_validity_opt" in report and res.complete


def test_suite_stores_rows_like_analysis_sweep():
    pkg = load_package(REPO / "sample_packages" / "external-stores-demo.json")
    ids = [s.id for s in pkg.stores]
    res = su.sweep_suite(
        [str(REPO / "sample_packages" / "external-stores-demo.json")],
        budgets=[6, 12],
        writers=["gvt"],
        stores=ids,
    )
    ref = sweep([pkg], [6, 12], ["gvt"], stores=ids)
    got = sorted((r.budget, r.method, round(r.value, 9), round(r.opt, 9)) for r in res.rows)
    want = sorted((r.budget, r.method, round(r.value, 9), round(r.opt, 9)) for r in ref.rows)
    assert got == want
    with pytest.raises(UnknownNameError):
        su.sweep_suite(families=["update_chain"], budgets=[3], stores=["nope"])


# --------------------------------------------------------------------------- CLI


def test_cli_audit_and_sweep_suite(tmp_path, capsys):
    rc = main(
        [
            "audit",
            "--family",
            "update_chain:0-2",
            "--family",
            "memaudit-small:0-1",
            "--budgets",
            "3,6",
            "--json",
            "--quiet",
        ]
    )
    out = json.loads(capsys.readouterr().out)
    # update_chain:0-2 is one source (seed-invariant, QA s44).
    assert rc == 0 and out["ok"] and out["n_sources"] == 3 and out["n_instances"] == 3
    assert out["n_tasks"] == 6

    rc = main(
        [
            "sweep",
            "--family",
            "memaudit-small:0-3",
            "--family",
            "update_chain",
            "--budgets",
            "2,4",
            "--writers",
            "gvt,density",
            "--ablations",
            "no_validity",
            "--out",
            str(tmp_path / "s"),
            "--workers",
            "2",
            "--no-figures",
            "--quiet",
        ]
    )
    text = capsys.readouterr().out
    assert rc == 0 and "5 package(s)" in text and "report.md" in text
    rows = pd.read_csv(tmp_path / "s" / "rows.csv")
    assert len(rows) == 5 * 2 * 3 and set(rows["method"]) == {"gvt", "density", "no_validity_opt"}

    # The plain sweep (one family and --seeds) is unchanged.
    rc = main(
        [
            "sweep",
            "--family",
            "memaudit-small",
            "--seeds",
            "0-1",
            "--budgets",
            "3",
            "--writers",
            "gvt",
            "--json",
            "--quiet",
        ]
    )
    plain = json.loads(capsys.readouterr().out)
    assert rc == 0 and plain["n_packages"] == 2

    rc = main(["audit", str(tmp_path / "missing"), "--budgets", "3"])
    assert rc == 2 and "no such file" in capsys.readouterr().err


def test_bad_package_in_a_folder_is_a_clear_error_from_worker_processes(tmp_path):
    folder = tmp_path / "pkgs"
    folder.mkdir()
    save_package(generate("update_chain"), folder / "a.json")
    (folder / "b.json").write_text('{"memaudit": 1, "id": "b", "experiences": []}')
    with pytest.raises(MemAuditError, match="b.json"):
        su.sweep_suite([str(folder)], budgets=[3], writers=["gvt"], workers=2)


def test_audit_engine_failure_is_a_finding(tmp_path, monkeypatch):
    from memaudit_core import solvers

    solvers._load_engines()

    def broken(inst, budget, **kw):
        raise ZeroDivisionError("boom")

    monkeypatch.setitem(solvers.ENGINES, "bnb", broken)
    rep = au.audit(families=["update_chain"], budgets=[3], out=tmp_path / "e", figures=False)
    assert rep.n_disagree == 1 and not rep.ok
    assert "bnb failed: ZeroDivisionError: boom" in rep.disagreements[0].problems
    assert list((tmp_path / "e" / "disagreements").glob("*.package.json"))


def test_cli_sweep_of_one_package_with_workers_solves_budgets_in_parallel(capsys, tmp_path):
    """One package file with --workers N is a plain sweep whose budgets run on N processes;
    its optima equal the single-process sweep's (exact, certified)."""
    path = tmp_path / "rc.json"
    save_package(generate("random_coverage", seed=1, n_groups=25), path)
    outs = {}
    for workers in ("1", "2"):
        args = ["sweep", str(path), "--budgets", "6,12,24", "--writers", "gvt", "--json"]
        rc = main([*args, "--workers", workers, "--quiet"])
        assert rc == 0
        outs[workers] = json.loads(capsys.readouterr().out)
    assert not (tmp_path / "journal.jsonl").exists()  # no suite output folder
    for one, two in zip(outs["1"]["rows"], outs["2"]["rows"], strict=True):
        assert (one["budget"], one["method"]) == (two["budget"], two["method"])
        assert two["certified"] and two["opt"] == pytest.approx(one["opt"], rel=1e-9)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--out", "{file}"], "exists and is not a folder"),
        (["--max-tasks", "5"], "--max-tasks needs --out"),
        (["--max-tasks", "-1", "--out", "{dir}"], "--max-tasks: must be an integer >= 1, got '-1'"),
        (["--max-tasks", "0", "--out", "{dir}"], "--max-tasks: must be an integer >= 1, got '0'"),
    ],
)
@pytest.mark.parametrize("command", ["sweep", "audit"])
def test_cli_suite_options_that_cannot_work_are_refused(tmp_path, capsys, command, extra, message):
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    args = [s.format(file=a_file, dir=tmp_path / "out") for s in extra]
    try:
        rc = main([command, "--family", "update_chain", "--budgets", "3", "--quiet", *args])
    except SystemExit as exc:  # a value refused by the option's type, while parsing
        rc = exc.code
    err = capsys.readouterr().err
    assert rc == 2 and message in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()  # refused before any work


def test_cli_audit_counts_checks_and_instances_under_their_own_names(tmp_path, capsys):
    # 1 source (a seed-invariant family's seeds are one package) x 2 budgets = 2 checks.
    argv = ["audit", "--family", "update_chain:0-2", "--budgets", "3,6", "--quiet"]
    assert main([*argv, "--out", str(tmp_path / "a"), "--no-figures"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("PASS: 2 of 2 checks (instance x pool x budget) agree")
    assert "distinct instances 1;" in lines[1]
    report = (tmp_path / "a" / "report.md").read_text()
    assert "2 of 2 checks (instance x pool x budget) agree" in report
    assert "distinct instances (instance hash): 1" in report
    assert "distinct instances agree" not in report + "\n".join(lines)


def test_an_audit_where_every_check_is_skipped_says_nothing_was_checked(tmp_path):
    """QA: a log1p package (milp cannot run) printed PASS: 0 of 3 checks ... and exit 0.
    Since s42 enumeration checks log1p packages that it can take, so this one is too large
    to enumerate (event-graph-50 at budgets 100 and 125)."""
    from memaudit_core.package import replace_package

    path = tmp_path / "log1p.json"
    save_package(replace_package(generate("event_graph", seed=0), saturation="log1p"), path)
    rep = au.audit([str(path)], budgets=[100.0, 125.0], figures=False)
    assert rep.n_agree == 0 and rep.n_skipped == 2
    assert rep.verdict == "NOTHING CHECKED" and not rep.ok
    assert main(["audit", str(path), "--budgets", "100,125", "--quiet"]) == 1


def test_audit_counts_a_misreported_value_as_a_disagreement(monkeypatch):
    """An engine that reports more than its store is worth is a finding even when both
    stores are worth the same (mutation testing: "agree" ignored the problems)."""
    from memaudit_core.audit import audit_instance
    from memaudit_core.compiled import compile_package
    from memaudit_core.solvers import ENGINES, RawSolution, solve

    inst = compile_package(generate("temporal_interval"))
    solve(inst, 13, "bnb")  # registers the engines
    honest = audit_instance(inst, 13)
    assert honest["outcome"] == "agree"
    real = ENGINES["milp"]

    def misreport(inst_, budget, **kw):
        raw = real(inst_, budget, **kw)
        return RawSolution(raw.selected_idx, raw.value + 0.5, raw.bound + 0.5, raw.status)

    monkeypatch.setitem(ENGINES, "milp", misreport)
    rec = audit_instance(inst, 13)
    # Both stores are worth the same, but milp claims 0.5 more than its store is worth.
    assert rec["bnb_value"] == rec["milp_value"]
    assert any("reported" in p for p in rec["problems"])
    assert rec["outcome"] == "disagree"


def test_figures_kaleido_did_not_write_are_written_again_then_noted(tmp_path, monkeypatch):
    """kaleido once returned without an error and without the PNG (a full-suite run under
    load), and the report linked a missing file."""
    import plotly.io as pio

    calls = []

    def write_nothing(figs, paths, **kwargs):
        calls.append(list(paths))

    monkeypatch.setattr(pio, "write_images", write_nothing)
    png = tmp_path / "figures" / "mean_ratio.png"
    notes = su.render_figures([(object(), png)])
    assert notes == ["figures not rendered: kaleido returned without writing mean_ratio.png"]
    assert calls == [[str(png)], [str(png)]]
    notes, line, files = su.report_figure(True, object, tmp_path, "mean_ratio", "alt")
    assert (notes, line, files) == (
        ["figures not rendered: kaleido returned without writing mean_ratio.png"],
        "",
        [],
    )

    def write_on_second_call(figs, paths, **kwargs):
        calls.append(list(paths))
        if len(calls) % 2 == 0:
            for path in paths:
                Path(path).write_bytes(b"\x89PNG\r\n\x1a\n")

    calls.clear()
    monkeypatch.setattr(pio, "write_images", write_on_second_call)
    assert su.render_figures([(object(), png)]) == []
    assert len(calls) == 2 and png.read_bytes().startswith(b"\x89PNG")
