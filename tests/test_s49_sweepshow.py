"""A saved sweep shown as it ran (QA s49, sweepx report).

1. ``show`` refused edited counts of a CLI sweep file but read an ``n_uncertified`` its rows
   contradicted, both ways (an unproven row under an unstarred line; a star over proven rows).
2. ``show`` headed a multi-source sweep with its distinct packages, where the run said its
   sources and how many are distinct.
3. The table by family dropped the lines where a writer failed on every package of the family
   (or at a budget on all of them).
4. Packages of different saturations were averaged in one line with no word.

Expected values are counted here from the JSON and from the test writer's own rule.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_utils import run_cli

import memaudit_core as ma
from memaudit_core.generators import generate
from memaudit_core.package import dumps_package, save_package
from memaudit_core.suites import family_summaries, sweep_suite

FLAKY = "s49_flaky"


def _sweep_json(*argv: str) -> dict:
    rc, out, err = run_cli("sweep", *argv, "--json", "--quiet")
    assert rc == 0, err
    return json.loads(out)


# --------------------------------------------------------------------------- 1


@pytest.fixture(scope="module")
def saved_sweep() -> dict:
    return _sweep_json("--family", "memaudit-small:0-2", "--writers", "gvt", "--budgets", "2,4")


def test_show_refuses_an_unproven_row_under_a_line_that_says_none(saved_sweep, tmp_path):
    doc = json.loads(json.dumps(saved_sweep))
    assert all(r["certified"] for r in doc["rows"])
    row = doc["rows"][0]
    row["certified"] = False
    row["opt_bound"] = row["opt"] * 1.25
    row["ratio_low"] = row["value"] / row["opt_bound"]
    line = next(
        k
        for k, s in enumerate(doc["summary"])
        if (s["method"], s["budget"], s["cost_unit"])
        == (row["method"], row["budget"], row["cost_unit"])
    )
    assert doc["summary"][line]["n_uncertified"] == 0  # the line still says every row proven
    path = tmp_path / "hidden.json"
    path.write_text(json.dumps(doc))
    rc, out, err = run_cli("show", str(path))
    assert rc != 0 and out == ""
    assert f"$.summary[{line}].n_uncertified" in err
    assert "[rule: inconsistent]" in err and "hidden.json" in err
    assert "1 rows of gvt at budget" in err and "are not certified" in err


def test_show_refuses_a_star_over_rows_that_are_all_proven(saved_sweep, tmp_path):
    doc = json.loads(json.dumps(saved_sweep))
    first = doc["summary"][0]
    own = [
        r
        for r in doc["rows"]
        if (r["method"], r["budget"], r["cost_unit"])
        == (first["method"], first["budget"], first["cost_unit"])
    ]
    assert own and all(r["certified"] for r in own)
    first["n_uncertified"] = 3
    path = tmp_path / "starred.json"
    path.write_text(json.dumps(doc))
    rc, out, err = run_cli("show", str(path))
    assert rc != 0 and out == ""
    assert "$.summary[0].n_uncertified" in err and "(got 3)" in err
    assert "0 rows of gvt at budget 2" in err and "[rule: inconsistent]" in err
    # The library's sweep file, by the same (shared) rule.
    doc = ma.sweep([generate("update_chain")], [3, 6], ["gvt"]).to_dict()
    doc["summary"][1]["n_uncertified"] = 1
    path = tmp_path / "lib.json"
    path.write_text(json.dumps(doc))
    rc, _, err = run_cli("show", str(path))
    assert rc != 0
    assert "$.summary[1].n_uncertified" in err and "0 rows of gvt at budget 6" in err


# --------------------------------------------------------------------------- 2


def test_show_counts_the_sources_as_the_run_did(tmp_path):
    pkg = generate("memaudit-small", seed=0)
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    save_package(pkg, a)
    shutil.copy(a, b)  # another source with the same content
    argv = (str(a), str(b), "--family", "update_chain:0", "--writers", "gvt", "--budgets", "3")
    # 3 sources: a.json, b.json (one content) and update_chain: 2 distinct packages.
    rc, live, err = run_cli("sweep", *argv, "--quiet")
    assert rc == 0, err
    assert live.splitlines()[0].startswith("3 package(s) (2 distinct by content), ")
    doc = _sweep_json(*argv)
    assert (doc["n_sources"], doc["n_packages"]) == (3, 2)
    path = tmp_path / "saved.json"
    path.write_text(json.dumps(doc))
    rc, shown, err = run_cli("show", str(path))
    assert rc == 0, err
    assert shown.splitlines()[0] == (
        f"saved sweep {path}: 3 package(s) (2 distinct by content); budgets 3; 3 rows"
    )


# --------------------------------------------------------------------------- 3


def _flaky(inst, budget):
    # Fails on every density_trap package, and on every package at budget 8 or more.
    if inst.package_id.startswith("density_trap") or budget >= 8:
        raise ValueError("s49 flaky")
    return ()


@pytest.fixture
def flaky_writer():
    ma.register_writer(ma.WriterInfo(FLAKY, "fails on purpose", "oracle", _flaky))
    yield
    ma.unregister_writer(FLAKY)


# (family, budget) -> (n, failed) of the flaky writer's line by family: 2 seeds a family,
# its empty store is a ratio of 0 where it does not fail.
FLAKY_LINES = {
    ("density_trap", 2.0): (0, 2),
    ("density_trap", 8.0): (0, 2),
    ("memaudit-small", 2.0): (2, 0),
    ("memaudit-small", 8.0): (0, 2),
}


@pytest.fixture
def flaky_sweep(flaky_writer, tmp_path):
    out = tmp_path / "out"
    res = sweep_suite(
        families=["memaudit-small:0-1", "density_trap:0-1"],
        budgets=[2, 8],
        writers=["gvt", FLAKY],
        out=out,
        figures=False,
    )
    assert len(res.errors) == 6  # 2 density_trap x 2 budgets + 2 memaudit-small at 8
    return res, out


def test_report_by_family_keeps_the_lines_of_a_writer_that_failed_there(flaky_sweep):
    _, out = flaky_sweep
    report = (out / "report.md").read_text()
    by_family = report.split("## By family", 1)[1].split("##", 1)[0]
    assert (
        "| family | method | budget | cost unit | n | mean ratio | 95% CI | failed |" in by_family
    )
    for (family, budget), (n, failed) in FLAKY_LINES.items():
        mean = "0.000" if n else "n/a"
        line = f"| {family} | {FLAKY} | {budget:g} | words | {n} | {mean} | n/a | {failed} |"
        assert line in by_family


def _terminal_by_family(text: str) -> dict[tuple[str, float], tuple[int, int]]:
    lines = text.split("by family:\n", 1)[1].splitlines()
    assert lines[0].split()[-1] == "failed"
    got = {}
    for line in lines[2:]:
        cells = line.split()
        if len(cells) < 8 or cells[1] != FLAKY:
            continue
        # family, method, (kind), budget, unit, n, mean, CI, failed
        got[(cells[0], float(cells[3]))] = (int(cells[5]), int(cells[-1]))
    return got


def test_show_by_family_keeps_them_too_also_from_a_file_whose_failures_lack_the_family(
    flaky_sweep, tmp_path
):
    res, _ = flaky_sweep
    doc = res.to_dict()
    path = tmp_path / "flaky.json"
    path.write_text(json.dumps(doc))
    rc, text, err = run_cli("show", str(path))
    assert rc == 0, err
    assert _terminal_by_family(text) == FLAKY_LINES
    # Saved before failures said their family: placed by their package's other rows.
    for e in doc["errors"]:
        del e["family"]
    path.write_text(json.dumps(doc))
    rc, text, err = run_cli("show", str(path))
    assert rc == 0, err
    assert _terminal_by_family(text) == FLAKY_LINES


def test_a_library_sweep_by_family_keeps_a_failed_family(flaky_writer):
    packages = [generate("memaudit-small", seed=0), generate("density_trap", seed=0)]
    res = ma.sweep(packages, [2], ["gvt", FLAKY])
    got = {(f, s.method, s.n) for f, s in family_summaries(res) if s.method == FLAKY}
    assert got == {("density_trap", FLAKY, 0), ("memaudit-small", FLAKY, 1)}


# --------------------------------------------------------------------------- 4


def _with_saturation(seed: int, saturation: str, path: Path) -> str:
    doc = json.loads(dumps_package(generate("memaudit-small", seed=seed)))
    doc.setdefault("objective", {})["saturation"] = saturation
    path.write_text(json.dumps(doc))
    return str(path)


def test_a_suite_says_it_pools_saturations_and_which_family_lines_do(tmp_path):
    files = [
        _with_saturation(0, "cap1", tmp_path / "c0.json"),
        _with_saturation(1, "cap1", tmp_path / "c1.json"),
        _with_saturation(2, "log1p", tmp_path / "l2.json"),
    ]
    doc = _sweep_json(*files, "--family", "update_chain:0", "--writers", "gvt", "--budgets", "3")
    # cap1: c0, c1 and update_chain; log1p: l2. memaudit-small's own line holds both.
    notes = [n for n in doc["notes"] if "saturations" in n]
    assert len(notes) == 1
    assert "2 saturations (cap1: 3 packages, log1p: 1 package)" in notes[0]
    assert "lines by family of memaudit-small" in notes[0]
    assert "update_chain" not in notes[0]
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps(doc))
    rc, text, err = run_cli("show", str(path))
    assert rc == 0, err
    assert f"note: {notes[0]}" in text


def test_a_plain_sweep_of_files_says_it_too(tmp_path):
    files = [
        _with_saturation(0, "cap1", tmp_path / "c0.json"),
        _with_saturation(1, "log1p", tmp_path / "l1.json"),
    ]
    rc, text, err = run_cli("sweep", *files, "--writers", "gvt", "--budgets", "3", "--quiet")
    assert rc == 0, err
    said = [line for line in text.splitlines() if "saturations" in line]
    assert len(said) == 1
    assert "2 saturations (cap1: 1 package, log1p: 1 package)" in said[0]
    assert "lines by family" not in said[0]  # one family: no table by family
    # One saturation: nothing to say.
    same = [
        _with_saturation(0, "log1p", tmp_path / "a.json"),
        _with_saturation(1, "log1p", tmp_path / "b.json"),
    ]
    doc = _sweep_json(*same, "--writers", "gvt", "--budgets", "3")
    assert not any("saturation" in n for n in doc["notes"])
