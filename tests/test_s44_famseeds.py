"""QA s44: a sweep / audit over seeds of a seed-invariant family ran one package per seed,
labelled by content hashes that neither ``generate --seed N`` nor a ``gen:`` link rebuilds;
and seeds given twice (within one --family or across several) were merged without a note in
the result's ``notes``."""

from __future__ import annotations

import json

from cli_utils import run_cli

from memaudit_core.package import load_package
from memaudit_core.suites import collect_sources, sweep_suite

SWEEP = ("--budgets", "3", "--writers", "density", "--quiet")


def _json(*argv: str) -> dict:
    rc, out, err = run_cli(*argv, "--json")
    assert rc == 0, err
    return json.loads(out)


def _cli_generated_hash(tmp_path, family: str, seed: int) -> str:
    """The content hash of what ``memaudit generate FAMILY --seed SEED`` writes."""
    path = tmp_path / f"{family}-{seed}.json"
    rc, _, err = run_cli("generate", family, "--seed", str(seed), "-o", str(path))
    assert rc == 0, err
    return load_package(path).content_hash()


# --------------------------------------------------------------------------- defect 1


def test_a_seed_range_of_a_seed_invariant_family_is_its_one_package_swept_once(tmp_path):
    from memaudit_ui import sources

    out = _json("sweep", "--family", "update_chain:0-3", *SWEEP)
    # Whatever seed generate or a link is given, they build one package; the sweep's rows
    # carry its hash and no other.
    wanted = {_cli_generated_hash(tmp_path, "update_chain", s) for s in range(4)}
    wanted |= {sources.load_by_key(f"gen:update_chain:{s}").content_hash() for s in range(4)}
    assert len(wanted) == 1
    assert {r["content_hash"] for r in out["rows"]} == wanted
    assert [(r["source"], r["seed"]) for r in out["rows"]] == [("update_chain:0", 0)]
    assert out["n_sources"] == 1 and out["n_packages"] == 1
    assert [s["n"] for s in out["summary"]] == [1]
    assert out["summary"][0]["ci_low"] is None
    assert (
        "update_chain does not depend on the seed: seeds 0-3 are one package "
        "(update_chain:0), swept once"
    ) in out["notes"]
    assert not any("distinct optimisation instance" in n for n in out["notes"])


def test_the_text_output_says_one_package_and_the_note(tmp_path):
    rc, out, err = run_cli("sweep", "--family", "temporal_interval", "--seeds", "2-4", *SWEEP)
    assert rc == 0, err
    assert out.startswith("1 package(s) (1 distinct by content)")
    assert (
        "note: temporal_interval does not depend on the seed: seeds 2-4 are one package "
        "(temporal_interval:0), swept once"
    ) in out


def test_a_lone_nonzero_seed_of_a_seed_invariant_family_is_seed_0(tmp_path):
    out = _json("sweep", "--family", "update_chain:5", *SWEEP)
    assert {r["content_hash"] for r in out["rows"]} == {
        _cli_generated_hash(tmp_path, "update_chain", 5)
    }
    assert (
        "update_chain does not depend on the seed: seed 5 is its one package, built at seed 0 "
        "(update_chain:0)"
    ) in out["notes"]


def test_an_audit_counts_one_package_and_says_so():
    out = _json("audit", "--family", "update_chain:0-3", "--budgets", "3", "--quiet")
    assert (out["n_sources"], out["n_packages"], out["n_instances"]) == (1, 1, 1)
    assert (
        "update_chain does not depend on the seed: seeds 0-3 are one package "
        "(update_chain:0), audited once"
    ) in out["notes"]


def test_resume_and_show_keep_the_one_package(tmp_path):
    run = tmp_path / "run"
    argv = ("sweep", "--family", "update_chain:0-3", *SWEEP, "--out", str(run), "--no-figures")
    first = _json(*argv)
    again = _json(*argv)
    assert again["executed"] == 0 and again["reused"] == first["executed"] == 1
    assert again["rows"] == first["rows"] and again["notes"] == first["notes"]
    report = (run / "report.md").read_text()
    assert "seeds 0-3 are one package (update_chain:0), swept once" in report
    assert (run / "rows.csv").read_text().count("\nupdate_chain:0,") == 1
    saved = tmp_path / "sweep.json"
    saved.write_text(json.dumps(first))
    rc, shown, err = run_cli("show", str(saved))
    assert rc == 0, err
    assert "note: update_chain does not depend on the seed: seeds 0-3 are one package" in shown


def test_the_library_sweep_and_sources_canonicalise_too():
    keys = [s.key for s in collect_sources([], ["update_chain:0-2", "temporal_interval:7"])]
    assert keys == ["family:update_chain:0", "family:temporal_interval:0"]
    res = sweep_suite(families=["update_chain"], seeds=[0, 1, 2], budgets=[3], writers=["gvt"])
    assert res.n_sources == 1 and [r.seed for r in res.rows] == [0]
    assert any("seeds 0-2 are one package" in n for n in res.notes)


# --------------------------------------------------------------------------- defect 2


def test_overlapping_family_flags_are_noted_in_notes():
    out = _json("sweep", "--family", "memaudit-small:0-2", "--family", "memaudit-small:1-3", *SWEEP)
    # Seeds {0, 1, 2} and {1, 2, 3}: four packages, 1 and 2 named twice.
    assert out["n_sources"] == 4
    assert sorted(r["seed"] for r in out["rows"]) == [0, 1, 2, 3]
    assert (
        "2 family seed(s) given more than once: memaudit-small:1 (2 times), memaudit-small:2 "
        "(2 times); each is swept once"
    ) in out["notes"]


def test_a_seed_repeated_within_one_flag_is_in_notes_not_only_on_stderr():
    rc, out, err = run_cli("sweep", "--family", "memaudit-small:1,1,2", *SWEEP, "--json")
    assert rc == 0, err
    data = json.loads(out)
    assert data["n_sources"] == 2
    note = "1 family seed(s) given more than once: memaudit-small:1 (2 times); each is swept once"
    assert note in data["notes"]
    assert "more than once" not in err  # said once, in the result
    rc, text, _ = run_cli("sweep", "--family", "memaudit-small:1,1,2", *SWEEP)
    assert rc == 0 and f"note: {note}" in text


def test_repeated_seeds_through_seeds_flag_are_in_notes():
    out = _json("sweep", "--family", "memaudit-small", "--seeds", "0,3,3", *SWEEP)
    assert out["n_sources"] == 2
    assert (
        "1 family seed(s) given more than once: memaudit-small:3 (2 times); each is swept once"
    ) in out["notes"]
