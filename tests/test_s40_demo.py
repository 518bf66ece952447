"""QA s40 (projector demo): the Certification audit tiles and table, the External stores
caption's line styles, and the README's word on Back."""

from __future__ import annotations

import json
from pathlib import Path

from app_utils import open_app

REPO = Path(__file__).resolve().parent.parent
TRAVEL = {"package": "sample:travel-assistant", "budget": "40", "store": "store:fact-extractor"}


def _audited(**extra: str):
    at = open_app("pages/6_Certification.py", 300, **TRAVEL, **extra)
    at.button(key="cert_audit_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_audit_counts_each_have_their_own_tile() -> None:
    """Defect 1: "21 / 0 / 0 / 0" in one tile read "21 / …" at 1024 px."""
    at = _audited(present="1")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Agree"] == "21"
    assert metrics["Disagree"] == "0"
    assert metrics["Unproven"] == "0"
    assert metrics["Skipped"] == "0"
    assert "Agree / disagree / unproven / skipped" not in metrics


def test_audit_table_leads_with_the_verdict_and_rounds_its_times() -> None:
    """Defect 1: the first column was a hash prefix (f951e9fabdcc) beside a package id, and
    the times were unrounded (0.00259963) under the engines table's 3 decimals. Speaker QA
    s49: the verdict leads, and the one package audited is named once above the table."""
    at = _audited()
    grid = next(d for d in at.dataframe if "outcome" in d.value.columns)
    assert list(grid.value.columns)[0] == "outcome"
    assert "package id" not in grid.value.columns
    assert any(
        "package id travel\\-assistant" in c.value
        for c in at.caption
        if c.value.startswith("On every row")
    )
    assert list(grid.value.columns)[-1] == "instance hash"
    config = json.loads(grid.proto.columns)
    assert config["bnb time (s)"]["type_config"]["format"] == "%.3f"
    assert config["milp time (s)"]["type_config"]["format"] == "%.3f"


def test_audit_table_on_a_projector_leaves_the_hash_to_the_csv() -> None:
    """Defect 1 in presentation mode: no hash column on the projector table."""
    at = _audited(present="1")
    (table,) = [t.value for t in at.table if "outcome" in t.value.columns]
    assert list(table.columns)[0] == "outcome"
    assert "instance hash" not in table.columns and "instance" not in table.columns


def test_external_caption_names_the_package_optimum_line_as_drawn() -> None:
    """Defect 2: the caption said "Grey dotted: OPT over the package candidates" for a dark
    dash-dot line."""
    from memaudit_ui import figures

    at = open_app(
        "pages/4_External_stores.py", 300, package="sample:external-stores-demo", budget="24"
    )
    assert not at.exception, [e.value for e in at.exception]
    (caption,) = [c.value for c in at.caption if "OPT over the package candidates" in c.value]
    assert "Black dash-dot: OPT over the package candidates." in caption
    assert "Solid: what each store keeps" in caption
    assert "Dashed: the best it could keep" in caption
    assert "Dotted, same colour: the union optimum OPT over P+" in caption
    assert "Grey" not in caption and "grey" not in caption
    assert figures.UNION_LINE_WORDS["package_opt_value"] == "black dash-dot"

    class Row:  # one UnionCurveRow's fields the figure reads
        store_id, label, system, budget, cost_effect = "s1", "Store", None, 10.0, False
        certified = True
        kept_value, upper_value, union_opt_value, package_opt_value = 1.0, 2.0, 3.0, 4.0

    fig = figures.union_curve_lines([Row()], "t", "words")
    (opt,) = [t for t in fig.data if t.name == "OPT (package candidates)"]
    assert opt.line.dash == "dashdot" and opt.line.color == "#222222"


def test_readme_names_the_buttons_back_needs_more_presses_for() -> None:
    """Defect 3: the README said Back steps back one view per press, and after "Open in the
    app" (Generator) or a Budget sweep chart-point click it takes two or three."""
    text = " ".join((REPO / "README.md").read_text().split())
    assert "Back button steps back one view per press" in text
    assert '"Open in the app"' in text
    assert "a click on a Budget sweep chart point" in text
    assert "Back needs two or three presses" in text
