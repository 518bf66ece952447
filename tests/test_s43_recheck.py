"""QA s43 re-check: five defects left after the s43 fixes.

1. A time-limited score named its header's incumbent "the optimum" in its later notes ("The
   optimum shown is an equally good store ... starting from the solver's optimum", "Not every
   equally good store was compared ...: the optimum shown", "The optimum shown: its cost").
2. ``memaudit show`` of a saved ``score --store`` of a chars-costed external store labelled
   its costs in the package's words ("76 words as written") where ``score`` said chars.
3. A union score whose store's coverage the import estimated said nothing of the estimate
   unless the package ratio was above 1 (0.233 / 0.233, no word): CLI, show and the External
   stores page.
4. ``--budgets 1e309`` said "got inf", not the item as typed (as ``--budget`` does).
5. A MemAudit package imported as an export printed the format hint, then the importer's own
   problems reading the package's keys as notes (13 lines for amem).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from app_utils import open_app, upload_file
from cli_utils import run_cli
from test_s43_extsweep import FIXTURE, ZEP

from memaudit_core import analysis
from memaudit_core.generators import generate
from memaudit_core.package import load_package
from memaudit_core.union import union_report

SAMPLE = str(Path(__file__).resolve().parent.parent / "sample_packages" / "veg-to-pescatarian.json")

#: Words a note may use only of a proven optimum.
OPTIMUM_WORDS = ("optimum shown", "solver's optimum", "equally good optimum")


# --------------------------------------------------------------------------- 1


def _shown_notes(ev: analysis.StoreEvaluation) -> list[str]:
    return [n for n in ev.notes if " shown" in n]


def test_a_limited_score_calls_its_store_the_incumbent_in_every_note(stopped_milp):
    pkg = generate("event_graph", seed=0, n_experiences=8)
    ev = analysis.score(pkg, 44.0, writer="recency_raw", solver="milp", time_limit=30)
    assert not ev.opt_certified and ev.opt_label == "incumbent"
    moved = [n for n in ev.notes if n.startswith("The incumbent shown is an equally good store")]
    assert len(moved) == 1, ev.notes
    assert "starting from the solver's incumbent" in moved[0]
    ties = [n for n in ev.notes if n.startswith("Not every equally good store was compared")]
    assert len(ties) == 1, ev.notes
    assert "the incumbent shown was chosen" in ties[0] and "solver's incumbent" in ties[0]
    assert ties[0].endswith("may be kept by an equally good store.")
    for note in ev.notes:
        assert not any(w in note for w in OPTIMUM_WORDS), note
    # A view without the store shown drops the note on it, whatever its noun.
    assert moved[0] not in ev.score_notes


def test_the_budget_tolerance_note_of_an_incumbent_names_it(stopped_milp, monkeypatch):
    # The note's wording for a store above B inside the tolerance is budget_excess_note's own;
    # what it is called comes from score(). A stub that always speaks makes it speak here.
    monkeypatch.setattr(analysis, "budget_excess_note", lambda c, b, n, what="cost": what)
    pkg = generate("event_graph", seed=0, n_experiences=8)
    ev = analysis.score(pkg, 44.0, writer="recency_raw", solver="milp", time_limit=30)
    assert not ev.opt_certified
    assert "The incumbent shown: its cost." in ev.notes, ev.notes
    assert not any(n.startswith("The optimum shown") for n in ev.notes), ev.notes


def test_a_certified_score_still_says_optimum():
    analysis._opt_cache.clear()
    pkg = generate("event_graph", seed=0, n_experiences=8)
    ev = analysis.score(pkg, 44.0, writer="recency_raw")
    assert ev.opt_certified
    moved = [n for n in ev.notes if n.startswith("The optimum shown is an equally good store")]
    assert len(moved) == 1 and "solver's optimum" in moved[0], ev.notes
    assert not any("incumbent" in n for n in ev.notes), ev.notes


# --------------------------------------------------------------------------- packages


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("recheck")
    conva, zep = tmp / "conva.json", tmp / "zep1.json"
    zep.write_text(json.dumps(ZEP), encoding="utf-8")
    rc, _, err = run_cli("import", "locomo", str(FIXTURE), "--instance", "conv-a", "-o", str(conva))
    assert rc == 0, err
    out = {"conva": conva}
    for name, extra in (("zep", ()), ("zepc", ("--cost-rule", "chars", "--store-id", "zepc"))):
        path = tmp / f"conva_{name}.json"
        rc, _, err = run_cli(
            "import", "zep", str(zep), "--package", str(conva), *extra, "-o", str(path)
        )
        assert rc == 0, err
        out[name] = path
    # The zep memories' coverage cut to a fifth: the package ratio falls below 1, and the
    # import's record that the coverage is estimated stays.
    doc = json.loads(out["zep"].read_text(encoding="utf-8"))
    [store] = [s for s in doc["stores"] if s["id"] == "zep"]
    for m in store["memories"]:
        m["coverage"] = {u: 0.2 * a for u, a in m["coverage"].items()}
    out["low"] = tmp / "conva_zep_low.json"
    out["low"].write_text(json.dumps(doc), encoding="utf-8")
    return out


# --------------------------------------------------------------------------- 2


def test_show_labels_a_chars_store_in_chars(files, tmp_path):
    # The three facts' characters, counted here: the chars rule counts each text's length.
    chars = sum(len(e["fact"]) for e in ZEP["edges"])
    assert chars == 76
    args = ("score", str(files["zepc"]), "--store", "zepc", "--budget", "40")
    rc, live, err = run_cli(*args)
    assert rc == 0, err
    rc, out, err = run_cli(*args, "--json")
    assert rc == 0, err
    saved = tmp_path / "s.json"
    saved.write_text(out, encoding="utf-8")
    rc, shown, err = run_cli("show", str(saved))
    assert rc == 0, err
    first = shown.splitlines()[0]
    assert f"{chars} chars as written" in first and "budget 40 words" in first, first
    assert first == live.splitlines()[0]
    assert shown.splitlines()[1] == live.splitlines()[1]  # the kept cost: "34 chars"


# --------------------------------------------------------------------------- 3


def _estimate_notes(notes) -> list[str]:
    return [n for n in notes if "coverage estimated" in n]


def test_a_union_score_below_one_says_its_coverage_is_estimated(files, tmp_path):
    pkg = load_package(files["low"])
    rep = union_report(pkg, "zep", 46)
    assert rep.package_ratio < 1 and rep.union_ratio < 1
    assert sorted(rep.estimated_coverage) == ["z1", "z2", "z3"]
    [note] = _estimate_notes(rep.notes)
    assert "(z1, z2, z3)" in note and "rest on that estimate" in note
    assert note.endswith(f"{analysis.CONFIRM_ESTIMATE}.")
    # The library's score (Compare, Overview) says it too.
    assert len(_estimate_notes(analysis.score(pkg, 46, store_id="zep").notes)) == 1

    args = ("score", str(files["low"]), "--store", "zep", "--budget", "46")
    rc, out, err = run_cli(*args)
    assert rc == 0, err
    assert sum("coverage estimated" in line for line in out.splitlines()) == 1, out
    rc, out, err = run_cli(*args, "--json")
    assert rc == 0, err
    saved = tmp_path / "low.json"
    saved.write_text(out, encoding="utf-8")
    rc, shown, err = run_cli("show", str(saved))
    assert rc == 0, err
    assert sum("coverage estimated" in line for line in shown.splitlines()) == 1, shown


def test_the_estimate_is_said_once_when_the_ratio_is_above_one(files):
    pkg = load_package(files["zep"])
    rep = union_report(pkg, "zep", 46)
    assert rep.package_ratio > 1
    [note] = _estimate_notes(rep.notes)
    assert note.startswith("Package-candidate ratio")
    [note] = _estimate_notes(analysis.score(pkg, 46, store_id="zep").notes)
    assert "above 1" in note


def test_external_stores_page_says_the_coverage_is_estimated(files):
    at = open_app()
    key = upload_file(at, "conva_zep_low.json", files["low"].read_bytes())
    at = open_app("pages/4_External_stores.py", package=key, budget="46", store="store:zep")
    assert not at.exception, [e.value for e in at.exception]
    texts = [t.value for t in at.text if "coverage estimated" in t.value]
    assert len(texts) == 1, [t.value for t in at.text]
    assert "rest on that estimate" in texts[0]


# --------------------------------------------------------------------------- 4


@pytest.mark.parametrize(
    ("argv", "typed"),
    [
        (("sweep", SAMPLE, "--budgets", "1e309"), "1e309"),
        (("sweep", SAMPLE, "--budgets", "4,1e400"), "1e400"),
        (("audit", SAMPLE, "--budgets", "1e309"), "1e309"),
        (("sweep", SAMPLE, "--budgets", "-1,4"), "-1"),
    ],
)
def test_budgets_quote_the_bad_item_as_typed(argv, typed):
    rc, _, err = run_cli(*argv)
    assert rc == 2
    assert f"--budgets: values must be finite numbers >= 0, got {typed!r}" in err, err
    assert "got inf" not in err


# --------------------------------------------------------------------------- 5


@pytest.mark.parametrize("fmt", ["amem", "mem0", "letta", "zep"])
def test_a_package_imported_as_an_export_gets_only_the_hint(fmt, tmp_path):
    out_file = tmp_path / "x.json"
    rc, out, err = run_cli("import", fmt, SAMPLE, "--package", SAMPLE, "-o", str(out_file))
    assert rc == 2 and not out_file.exists()
    assert err.strip().splitlines() == [
        f"{SAMPLE}: $: this is a MemAudit package, not an export of format '{fmt}': give it as "
        "the PACKAGE argument (in the app: upload it as the package) [rule: format-hint]"
    ]
