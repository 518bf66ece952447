"""QA s19a: the README's researcher workflow, checked end to end.

Each test pins a defect found by running the README's commands and a realistic sweep /
export / re-load workflow, with the expected values recomputed here from the package JSON
(an independent few-line objective as DESIGN.md states it), never from this code's output.
"""

from __future__ import annotations

import csv
import importlib
import json
from pathlib import Path

import pytest
from cli_utils import run_cli as _cli
from oracles import BUILTIN_H

import memaudit_core as ma
from memaudit_core.package import package_to_dict, parse_package

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "sample_packages"


def _objective(doc: dict, ids: list[str]) -> float:
    """F(X) = sum_r w_r h(sum_{u in X} a_ur), weights from units or their queries."""
    query_weight: dict[str, float] = {}
    for q in doc.get("queries", []):
        for r in q["requires"]:
            query_weight[r] = query_weight.get(r, 0.0) + float(q.get("weight", 1))
    weight = {u["id"]: float(u.get("weight", query_weight.get(u["id"], 0.0))) for u in doc["units"]}
    h = BUILTIN_H[(doc.get("objective") or {}).get("saturation", "cap1")]
    cands = {c["id"]: c for c in doc["candidates"]}
    total: dict[str, float] = {}
    for i in ids:
        for r, a in cands[i]["coverage"].items():
            total[r] = total.get(r, 0.0) + a
    return sum(weight[r] * h(z) for r, z in total.items())


def _generated(tmp_path: Path, family: str, name: str, **params: object) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(package_to_dict(ma.generate(family, **params))), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- cached optima


def test_a_cached_optimum_names_the_package_that_asked_for_it():
    """A renamed copy shares the original's optimum (same fingerprint), but its score's
    ``opt`` exported the original's package id and content hash."""
    original = ma.load_package(SAMPLES / "update_chain.json")
    doc = package_to_dict(original)
    doc["id"] = "renamed-copy"
    copy = parse_package(doc)
    first = ma.score(original, 6, writer="gvt")
    second = ma.score(copy, 6, writer="gvt")
    assert second.opt.value == first.opt.value  # the shared optimum
    assert second.opt.package_id == "renamed-copy"
    assert second.opt.content_hash == copy.content_hash() == second.content_hash
    assert second.to_dict()["opt"]["package_id"] == "renamed-copy"
    # ... and the first package's own result is unchanged by the copy's call.
    again = ma.score(original, 6, writer="gvt")
    assert again.opt.package_id == "update_chain"
    assert again.opt.content_hash == original.content_hash()


def test_score_selection_reports_the_hash_of_the_package_passed():
    """Every selection reported the hash of the package plus that selection as a store, so
    no two selections (and no sweep row) of one package shared a content hash."""
    pkg = ma.load_package(SAMPLES / "update_chain.json")
    a = ma.score_selection(pkg, 6, ["update_1_tombstone"])
    b = ma.score_selection(pkg, 6, ["update_1_tombstone", "update_2_tombstone"])
    assert a.content_hash == b.content_hash == pkg.content_hash()
    assert a.opt.content_hash == pkg.content_hash() and a.opt.package_id == pkg.id
    row = ma.sweep([pkg], [6], ["gvt"]).rows[0]
    assert row.content_hash == a.content_hash
    # The scores themselves, recomputed from the JSON.
    doc = json.loads((SAMPLES / "update_chain.json").read_text(encoding="utf-8"))
    assert a.value == pytest.approx(_objective(doc, ["update_1_tombstone"]), abs=1e-12)
    assert b.ratio == pytest.approx(
        _objective(doc, ["update_1_tombstone", "update_2_tombstone"]) / 7.735, abs=1e-12
    )


# --------------------------------------------------------------------------- sweep budgets


def test_a_sweep_of_package_files_uses_each_packages_own_grid(tmp_path):
    """`--budgets` help: "default: each package's budget grid". `sweep a.json b.json` swept
    every package at the union of all their grids; a folder of the same files did not."""
    small = _generated(tmp_path, "update_chain", "uc.json")  # grid 3, 6, 13
    other = _generated(tmp_path, "random_coverage", "rc.json", seed=1, n_groups=8)
    grids = {p.id: set(p.budget_grid()) for p in (ma.load_package(small), ma.load_package(other))}
    assert grids["update_chain"] != grids["random-g8-s1"]
    rc, out, err = _cli("sweep", str(small), str(other), "--writers", "gvt", "--json", "--quiet")
    assert rc == 0, err
    data = json.loads(out)
    swept: dict[str, set[float]] = {}
    for row in data["rows"]:
        swept.setdefault(row["package_id"], set()).add(row["budget"])
    assert swept == grids
    assert data["n_tasks"] == data["executed"] == len(data["rows"])
    # The folder (suite) path gives the same rows.
    folder = tmp_path / "folder"
    folder.mkdir()
    for p in (small, other):
        (folder / p.name).write_bytes(p.read_bytes())
    rc, out, err = _cli("sweep", str(folder), "--writers", "gvt", "--json", "--quiet")
    assert rc == 0, err
    suite = json.loads(out)
    key = ("package_id", "budget", "method", "value", "opt", "ratio")
    assert sorted(tuple(r[k] for k in key) for r in suite["rows"]) == sorted(
        tuple(r[k] for k in key) for r in data["rows"]
    )
    assert suite["n_tasks"] == data["n_tasks"]


def test_the_library_sweep_takes_budgets_none_for_each_packages_grid():
    a, b = ma.generate("update_chain"), ma.generate("memaudit-small", seed=2)
    res = ma.sweep([a, b], None, ["gvt"], ablations=["no_validity"])
    got = {(r.package_id, r.budget) for r in res.rows}
    want = {(p.id, float(x)) for p in (a, b) for x in p.budget_grid()}
    assert got == want
    assert res.budgets == tuple(sorted({x for _, x in want}))
    counts = {(s.method, s.budget): s.n for s in res.summary}
    assert counts[("gvt", 3.0)] == 1 and counts[("gvt", 4.0)] == 1  # one package each
    with pytest.raises(ma.MemAuditError):
        ma.sweep([a], [], ["gvt"])


def test_copies_of_one_package_keep_their_own_source(tmp_path):
    """Two files with one content were both labelled with the first file's name."""
    first = tmp_path / "runA" / "p.json"
    second = tmp_path / "runB" / "p.json"
    for path in (first, second):
        path.parent.mkdir()
        path.write_bytes((SAMPLES / "update_chain.json").read_bytes())
    out_csv = tmp_path / "rows.csv"
    rc, out, err = _cli(
        "sweep",
        str(first),
        str(second),
        "--budgets",
        "3,6",
        "--writers",
        "gvt,density",
        "--ablations",
        "generic",
        "-o",
        str(out_csv),
        "--json",
        "--quiet",
    )
    assert rc == 0, err
    rows = json.loads(out)["rows"]
    assert [r["source"] for r in rows] == [str(first)] * 6 + [str(second)] * 6
    with out_csv.open(encoding="utf-8") as fh:
        assert [r["source"] for r in csv.DictReader(fh)] == [r["source"] for r in rows]


# --------------------------------------------------------------------------- resumed suites

WRITER_V1 = '''
def pick(view):
    """Blind: the cheapest candidate of each experience while it fits."""
    kept, spent, seen = [], 0.0, set()
    for c in sorted(view.candidates, key=lambda c: c.cost):
        if c.experience not in seen and spent + c.cost <= view.budget:
            kept.append(c.id)
            spent += c.cost
            seen.add(c.experience)
    return kept
'''

WRITER_V2 = '''
def pick(view):
    """Blind: keeps nothing (an edited writer)."""
    return []
'''


def test_a_resumed_sweep_reruns_an_edited_plugin_writer(tmp_path, monkeypatch):
    """`sweep ... --writer-module mod:fn --out DIR` run again after editing the writer reused
    the journal's results of the old code and printed the old ratios."""
    module = "s19a_edited_writer"
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    source = tmp_path / f"{module}.py"
    source.write_text(WRITER_V1, encoding="utf-8")
    importlib.invalidate_caches()
    argv = ["sweep", "--family", "update_chain", "--budgets", "3,6", "--writers", "gvt"]
    argv += ["--writer-module", f"{module}:pick", "--out", "run", "--no-figures"]
    argv += ["--json", "--quiet"]

    def ratios(data: dict) -> dict[tuple[str, float], float]:
        return {(r["method"], r["budget"]): r["ratio"] for r in data["rows"]}

    rc, out, err = _cli(*argv)
    assert rc == 0, err
    first = json.loads(out)
    assert first["executed"] == 4 and ratios(first)[(f"{module}:pick", 6.0)] > 0
    rc, out, err = _cli(*argv)  # unchanged: everything from the journal
    assert rc == 0 and json.loads(out)["executed"] == 0
    assert ratios(json.loads(out)) == ratios(first)

    source.write_text(WRITER_V2, encoding="utf-8")
    importlib.invalidate_caches()
    rc, out, err = _cli(*argv)
    assert rc == 0, err
    edited = json.loads(out)
    assert edited["executed"] == 2 and edited["reused"] == 2  # only the edited writer's tasks
    assert ratios(edited)[(f"{module}:pick", 3.0)] == 0.0
    assert ratios(edited)[(f"{module}:pick", 6.0)] == 0.0
    assert ratios(edited)[("gvt", 6.0)] == ratios(first)[("gvt", 6.0)]


def test_writer_code_version_is_none_for_reference_and_bundled_writers():
    from memaudit_core.suites import writer_code_version

    assert writer_code_version("gvt") is None
    assert writer_code_version("recency") is None  # a bundled example ships with memaudit
