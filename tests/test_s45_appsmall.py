"""QA s45 (app, three small defects).

1. A memory id of 200,000 characters was pasted whole into the import note ("2 memories
   cover nothing until annotated (XXXX...") on the External stores page and in ``score``.
2. A download named after package id ``...cost_high=1e+12`` said ``1e-12``.
3. A small generated package whose default budget is below its cheapest candidate scored 0
   everywhere at that budget, and nothing said why.
"""

from __future__ import annotations

import json
from pathlib import Path

from app_utils import open_linked
from cli_utils import run_cli

from memaudit_core.analysis import import_notes
from memaudit_core.generators import generate
from memaudit_core.importers import load_external_store
from memaudit_core.package import dumps_package, load_package
from memaudit_ui.render import safe_filename

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO / "tests" / "fixtures" / "importers" / "mem0_v2_results.json"
SMALL = REPO / "sample_packages" / "memaudit-small-s0.json"
HUGE = 200_000
NO_FIT = "no candidate fits the default budget"


def _huge_id_export(tmp_path: Path) -> Path:
    doc = json.loads(FIXTURE.read_text(encoding="utf-8"))
    doc["results"][0]["id"] = "X" * HUGE
    path = tmp_path / "mem0-huge-id.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _annotation_note(notes: list[str]) -> str:
    [note] = [n for n in notes if "nothing until annotated" in n]
    return note


# --------------------------------------------------------------------------- 1: huge ids


def test_import_note_cuts_a_huge_memory_id(tmp_path: Path) -> None:
    export = _huge_id_export(tmp_path)
    store = load_external_store(export, "mem0", package=load_package(SMALL))
    note = _annotation_note(import_notes(store))
    assert len(note) < 1_000, len(note)
    assert f"... ({HUGE:,} characters)" in note
    assert "e3e4-0002" in note  # the short id is still named as it is


def test_score_external_prints_the_cut_note(tmp_path: Path) -> None:
    export = _huge_id_export(tmp_path)
    rc, out, err = run_cli(
        "score", str(SMALL), "--external", str(export), "--format", "mem0", "--budget", "10"
    )
    assert rc == 0, err
    assert "X" * 1_000 not in out + err
    [note] = [line for line in out.splitlines() if "nothing until annotated" in line]
    assert len(note) < 1_000, len(note)
    assert f"... ({HUGE:,} characters)" in note
    # The store's selection lists the same id, cut the same way.
    [selected] = [line for line in out.splitlines() if line.startswith("selected:")]
    assert len(selected) < 1_000 and f"... ({HUGE:,} characters)" in selected


# --------------------------------------------------------------------------- 2: 1e+12


def test_download_name_keeps_the_exponent_sign() -> None:
    big = safe_filename("random-g50-s3-cost_low=1e-100-cost_high=1e+12-seed3")
    small = safe_filename("random-g50-s3-cost_low=1e-100-cost_high=1e-12-seed3")
    assert big == "random-g50-s3-cost_low-1e-100-cost_high-1e12-seed3"
    assert small == "random-g50-s3-cost_low-1e-100-cost_high-1e-12-seed3"
    assert big != small
    assert safe_filename("veg-B2.5E+3") == "veg-B2.5E3"
    assert safe_filename("a+b") == "a-b"  # any other "+" as before


# --------------------------------------------------------------------------- 3: B < cheapest

REPROS = (
    ("random_coverage", {"n_groups": 3, "units_per_group": 1}),
    ("event_graph", {"n_experiences": 1}),
)


def _no_fit_warnings(warnings: tuple[str, ...] | list[str]) -> list[str]:
    return [w for w in warnings if NO_FIT in w]


def test_package_warns_when_no_candidate_fits_its_budget() -> None:
    for family, params in REPROS:
        pkg = generate(family, 1, **params)
        cheapest = min(c.cost for c in pkg.candidates)
        assert pkg.budget < cheapest, (family, pkg.budget, cheapest)  # the repro holds
        [warning] = _no_fit_warnings(pkg.warnings)
        assert f"B = {pkg.budget:g} {pkg.cost_unit}" in warning
        assert f"the cheapest costs {cheapest:g}" in warning


def test_sample_packages_do_not_warn() -> None:
    for path in sorted((REPO / "sample_packages").glob("*.json")):
        pkg = load_package(path)
        if pkg.budget is not None:
            assert pkg.budget >= min(c.cost for c in pkg.candidates), path
        assert _no_fit_warnings(pkg.warnings) == [], path


def test_validate_prints_the_warning(tmp_path: Path) -> None:
    pkg = generate("random_coverage", 1, n_groups=3, units_per_group=1)
    path = tmp_path / "small.json"
    path.write_text(dumps_package(pkg), encoding="utf-8")
    rc, _, err = run_cli("validate", str(path))
    assert rc == 0, err
    assert f"warning: $.budget: {NO_FIT} B = 2.0203 units; the cheapest costs 3.7288" in err


def test_generator_preview_shows_the_warning() -> None:
    key = "gen:random_coverage:1:n_groups=3;units_per_group=1"
    at = open_linked("pages/7_Generator.py", key)
    at.button[0].click().run()  # Preview
    assert not at.exception, [e.value for e in at.exception]
    shown = [w.value for w in at.warning if NO_FIT in w.value]
    assert len(shown) == 1, [w.value for w in at.warning]
    assert "B = 2.0203 units" in shown[0] and "the cheapest costs 3.7288" in shown[0]
