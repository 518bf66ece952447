"""QA s51 (generators / reproducibility): sweep summaries independent of the order packages are
listed in (M1); generator parameters recorded in sweep rows, grouping and ``--out`` (M2)."""

from __future__ import annotations

import json
import math
import random

import pytest
from cli_utils import run_cli

import memaudit_core as ma
from memaudit_core.analysis import SweepRow, summarize
from memaudit_core.curves import family_band
from memaudit_core.package import save_package

# --------------------------------------------------------------------------- M1


def _rows(ratios: list[float]) -> list[SweepRow]:
    return [
        SweepRow(f"p{i}", i, "f", 4.0, "gvt", r, 1.0, r, True, 1.0, 1.0, r, "package", f"h{i}")
        for i, r in enumerate(ratios)
    ]


def test_summary_is_the_same_for_every_order_of_the_rows():
    # Ratios whose pairwise sum depends on order in the last digit, and enough of them that
    # the bootstrap runs (n >= MIN_CI_N).
    rng = random.Random(3)
    ratios = [rng.uniform(0.3, 1.0) for _ in range(40)] + [1e-9, 0.1, 0.7]
    rows = _rows(ratios)
    first = summarize(rows, ["gvt"], [4.0])
    assert first[0].ci_low is not None
    for k in range(6):
        shuffled = list(rows)
        random.Random(k).shuffle(shuffled)
        assert summarize(shuffled, ["gvt"], [4.0]) == first
    assert summarize(rows[::-1], ["gvt"], [4.0]) == first


def test_summary_mean_is_the_correctly_rounded_one_in_any_order():
    # QA s51 M1: NumPy's pairwise sum gave ...241 for these and ...242 reversed.
    rng = random.Random(3)
    for _ in range(3):
        ratios = [rng.uniform(0, 1) for _ in range(12)]
    want = math.fsum(ratios) / len(ratios)
    for order in (ratios, ratios[::-1]):
        assert summarize(_rows(order), ["gvt"], [4.0])[0].mean_ratio == want


@pytest.fixture(scope="module")
def density_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("dt")
    files = []
    for s in range(12):
        path = folder / f"dt{s}.json"
        save_package(ma.generate("density_trap", seed=s), path)
        files.append(str(path))
    return folder, files


def _summary(*argv: str) -> list[dict]:
    rc, out, err = run_cli("sweep", *argv, "--json", "--quiet")
    assert rc == 0, err
    return json.loads(out)["summary"]


def test_cli_sweep_ci_does_not_depend_on_the_file_order(density_files):
    folder, files = density_files
    common = ("--budgets", "2,4", "--writers", "density")
    listed = _summary(*files, *common)
    assert any(s["ci_low"] is not None for s in listed)
    # QA s51 M1: reversed, and the folder's name order (dt0, dt1, dt10, ...), gave other CIs.
    assert _summary(*files[::-1], *common) == listed
    assert _summary(str(folder), *common) == listed


def test_cli_sweep_ci_does_not_depend_on_the_seed_or_family_order():
    common = ("--budgets", "2", "--writers", "density")
    forward = _summary("--family", "density_trap:0-11", *common)
    assert forward[0]["ci_low"] is not None
    assert _summary("--family", "density_trap:11,10,9,8,7,6,5,4,3,2,1,0", *common) == forward
    both = ("--family", "density_trap:0-5", "--family", "abstention_hard:0-5")
    swapped = ("--family", "abstention_hard:0-5", "--family", "density_trap:0-5")
    assert _summary(*both, *common) == _summary(*swapped, *common)


def test_family_band_does_not_depend_on_the_seed_order():
    args = ({}, [2.0], ["density"])
    band = family_band("density_trap", list(range(12)), *args, ablations=())
    back = family_band("density_trap", list(range(11, -1, -1)), *args, ablations=())
    assert band.rows[0].ci_low is not None
    key = [(r.method_key, r.budget, r.mean_ratio, r.ci_low, r.ci_high) for r in band.rows]
    assert [(r.method_key, r.budget, r.mean_ratio, r.ci_low, r.ci_high) for r in back.rows] == key


# --------------------------------------------------------------------------- M2


def _sweep_json(*argv: str) -> dict:
    rc, out, err = run_cli("sweep", *argv, "--json", "--quiet")
    assert rc == 0, err
    return json.loads(out)


def test_family_rows_record_the_generator_parameters():
    common = ("--budgets", "1000", "--writers", "gvt")
    default = _sweep_json("--family", "random_coverage:0", *common)["rows"][0]
    given = _sweep_json("--family", "random_coverage:0", "--param", "n_groups=3", *common)
    row = given["rows"][0]
    # QA s51 M2: both rows said source random_coverage:0, family random_coverage, nothing else.
    assert row["params"] != default["params"]
    assert "n_groups=3" in row["params"].split(";")
    assert "n_groups=50" in default["params"].split(";")  # the defaults, recorded in full
    # It reads back, and a file saved before rows had params still reads.
    assert ma.read_result(given).rows[0].params == row["params"]
    old = {**given, "rows": [{k: v for k, v in r.items() if k != "params"} for r in given["rows"]]}
    assert ma.read_result(old).rows[0].params is None


def test_library_sweep_rows_record_the_generator_parameters():
    res = ma.sweep([ma.generate("memaudit-small", normal_count=8)], [6], ["gvt"])
    assert res.rows[0].params == "normal_count=8;update_count=2"
    assert ma.read_result(res.to_dict()).rows[0].params == res.rows[0].params


def test_read_back_refuses_params_that_contradict_the_package():
    data = _sweep_json("--family", "memaudit-small:0", "--budgets", "4,6", "--writers", "gvt")
    rows = data["rows"]
    edited = {**data, "rows": [rows[0], {**rows[1], "params": "normal_count=9;update_count=2"}]}
    with pytest.raises(ma.ResultError) as info:
        ma.read_result(edited)
    assert "rows[1].params" in str(info.value) and "inconsistent" in str(info.value)
    orphan = {**data, "rows": [{**r, "family": None} for r in rows]}
    with pytest.raises(ma.ResultError, match=r"rows\[0\]\.params"):
        ma.read_result(orphan)


def _mixed_folder(tmp_path):
    for s in range(3):
        save_package(ma.generate("memaudit-small", seed=s), tmp_path / f"a{s}.json")
        pkg = ma.generate("memaudit-small", seed=s, normal_count=8, update_count=0)
        save_package(pkg, tmp_path / f"b{s}.json")
    return tmp_path


def test_by_family_keeps_parameter_sets_apart(tmp_path):
    from memaudit_core.suites import family_lines

    folder = _mixed_folder(tmp_path)
    rc, out, err = run_cli("sweep", str(folder), "--budgets", "6", "--writers", "density")
    assert rc == 0, err
    # QA s51 M2: "memaudit-small · density · n 6", a mixture of two configurations, unsaid.
    assert "memaudit-small (normal_count=3, update_count=2)" in out
    assert "memaudit-small (normal_count=8, update_count=0)" in out
    assert "a family built with other parameters counts as another" in out
    res = ma.read_result(_sweep_json(str(folder), "--budgets", "6", "--writers", "density"))
    assert sorted((f, s.n) for f, s, _ in family_lines(res)) == [
        ("memaudit-small (normal_count=3, update_count=2)", 3),
        ("memaudit-small (normal_count=8, update_count=0)", 3),
    ]


def test_out_folder_records_how_the_sweep_ran(tmp_path):
    out = tmp_path / "out"
    argv = [
        "sweep",
        "--family",
        "random_coverage:0-2",
        "--param",
        "n_groups=6",
        "--budgets",
        "5,10",
        "--writers",
        "gvt",
        "--time-limit",
        "30",
        "--out",
        str(out),
        "--no-figures",
        "--quiet",
    ]
    rc, _, err = run_cli(*argv)
    assert rc == 0, err
    run = json.loads((out / "run.json").read_text())
    assert run["command"] == "memaudit " + " ".join(argv)
    assert run["memaudit_version"] == ma.__version__
    (fam,) = run["families"]
    assert (fam["family"], fam["seeds"], fam["params"]) == (
        "random_coverage",
        "0-2",
        {"n_groups": "6"},
    )
    assert run["settings"]["solver"] == "auto" and run["settings"]["time_limit"] == 30.0
    assert (run["budgets"], run["writers"]) == ([5.0, 10.0], ["gvt"])
    report = (out / "report.md").read_text()
    assert "## Run" in report
    assert f"`memaudit {' '.join(argv)}`" in report
    assert "family random_coverage: seeds 0-2; parameters n_groups=6" in report
    assert f"MemAudit {ma.__version__}" in report
    assert "time limit 30 s per engine run" in report


def test_audit_rows_record_seed_and_params():
    rc, out, err = run_cli(
        "audit",
        "--family",
        "scope_shift:1",
        "--param",
        "n_scopes=3",
        "--budgets",
        "3",
        "--json",
        "--quiet",
    )
    assert rc == 0, err
    row = json.loads(out)["rows"][0]
    assert (row["seed"], row["params"]) == (1, "n_scopes=3")


# --------------------------------------------------------------------------- m2, m5 (app)

GENERATOR = "pages/7_Generator.py"


def _press(family: str, **texts: str):
    from app_utils import open_app

    at = open_app(GENERATOR, package=f"gen:{family}:0")
    assert not at.exception, [e.value for e in at.exception]
    for name, text in texts.items():
        key = f"gen_{family}_{name}"
        try:
            at.text_input(key=key).set_value(text)
        except KeyError:  # a number box (before QA s51): the number the browser reads
            at.number_input(key=key).set_value(float(text))
    at.button[0].click().run()  # the form's only button before a preview: Preview
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.parametrize("text", ["1e3", "3.0", "1_0"])
def test_the_form_reads_integer_parameters_by_the_cli_rule(text: str):
    # QA s51 m2: the form built n_groups=1000 from 1e3 (and 3 from 3.0), which
    # `memaudit generate --param` and the gen: links refuse.
    rc, _, err = run_cli("generate", "random_coverage", "--param", f"n_groups={text}")
    assert rc == 2 and "must be an integer" in err, err
    at = _press("random_coverage", n_groups=text)
    errors = [e.value.replace("\\", "") for e in at.error]
    assert any(
        "'n_groups' must be an integer (ASCII digits 0-9 with an optional sign" in e
        and repr(text) in e
        for e in errors
    ), errors
    assert not [h for h in at.subheader if h.value.startswith("Preview")]


def test_preview_says_so_under_the_button_and_links_to_the_result():
    # QA s51 m5: at 1280x800 the preview of random_coverage came below the fold, unsaid.
    at = _press("random_coverage", n_groups="8")
    assert [h for h in at.subheader if h.value.startswith("Preview")]
    done = [s.value for s in at.success]
    assert any("Previewed" in s and "gen:random_coverage:0:n_groups=8" in s for s in done), done
    assert any("(#gen-preview)" in s for s in done), done
    # Said for a press only: the next run (another widget) does not repeat it.
    at.run()
    assert not [s for s in at.success if "Previewed" in s.value]
