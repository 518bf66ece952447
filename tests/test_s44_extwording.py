"""External stores' wording (QA s44).

1. ``score`` said the upper-pruned subset was empty because "nothing fits" while 3 of the 4
   memories of an unannotated Letta store fit the budget: nothing of value fits there.
2. The note naming the numeric meta fields to read as salience told the app's reader to "give
   one as --salience-field", a CLI flag; the app's control is the "Salience meta field" box.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from app_utils import open_app
from cli_utils import run_cli

from memaudit_core.package import parse_package
from memaudit_core.union import union_report

PKG = str(Path(__file__).resolve().parent.parent / "sample_packages" / "veg-to-pescatarian.json")
PAGE = "pages/4_External_stores.py"

#: A Letta agent file: two blocks, each memory carrying the numeric meta fields limit and line,
#: none a salience; the importer links none to the package, so coverage needs annotation.
HUMAN = "Name: Ann\nHas a cat named Milo\nD1:3 tabby from shelter"
PERSONA = "I am a helpful assistant."
LETTA = json.dumps(
    {
        "agents": [{"id": "agent-0", "name": "sam", "block_ids": ["block-0", "block-1"]}],
        "blocks": [
            {"id": "block-0", "label": "human", "value": HUMAN, "limit": 20000},
            {"id": "block-1", "label": "persona", "value": PERSONA, "limit": 20000},
        ],
    }
)
#: The memories' word costs, counted here: one memory per line of a block.
COSTS = [len(line.split()) for line in [*HUMAN.splitlines(), PERSONA]]  # 2, 5, 4, 5
BUDGET = 15  # below the 16 words of the store, above each memory's cost


def _upper_line(out: str) -> str:
    (line,) = [x for x in out.splitlines() if x.strip().startswith("upper-pruned ")]
    return line


@pytest.fixture
def letta(tmp_path: Path) -> str:
    path = tmp_path / "letta.af"
    path.write_text(LETTA)
    return str(path)


# --------------------------------------------------------------------------- defect 1


def test_an_unannotated_store_that_fits_is_not_said_to_fit_nothing(letta: str) -> None:
    assert sum(COSTS) > BUDGET and max(COSTS) <= BUDGET  # the premise: over budget, all fit
    rc, out, err = run_cli(
        "score", PKG, "--external", letta, "--format", "letta", "--budget", str(BUDGET)
    )
    assert rc == 0, err
    assert _upper_line(out).endswith(
        "0 (OPT, exact over subsets of the store: nothing of value fits, as no memory covers "
        "any evidence unit yet; coverage needs annotation)"
    )


def test_nothing_fits_is_said_when_every_memory_costs_more_than_the_budget(letta: str) -> None:
    """Regression guard (passes before the fix too): under a cost effect nothing fits."""
    budget = min(COSTS) - 1
    rc, out, err = run_cli(
        "score", PKG, "--external", letta, "--format", "letta", "--budget", str(budget)
    )
    assert rc == 0, err
    assert _upper_line(out).endswith("0 (OPT, exact over subsets of the store: nothing fits)")


def test_a_store_whose_covering_memory_is_too_long_fits_nothing_of_value() -> None:
    """m1 fits and covers nothing; m2 covers r1 but costs more than the budget."""
    pkg = parse_package(
        {
            "memaudit": 1,
            "id": "tiny",
            "experiences": [{"id": "e1", "time": 0}],
            "units": [{"id": "r1", "weight": 1.0}],
            "candidates": [
                {"id": "e1:raw", "experience": "e1", "type": "raw_span", "cost": 1,
                 "coverage": {"r1": 1.0}},
            ],
            "stores": [{"id": "ext", "memories": [
                {"id": "m1", "cost": 1, "coverage": {}},
                {"id": "m2", "cost": 5, "coverage": {"r1": 1.0}},
            ]}],
        }
    )  # fmt: skip
    rep = union_report(pkg, "ext", 2)
    assert rep.upper_value == 0 and not rep.cost_effect
    assert rep.upper_text == (
        "nothing of value fits; the memories that fit cover no unit of positive weight"
    )


# --------------------------------------------------------------------------- defect 2

FIELDS_NOTE = (
    "No memory has a numeric salience (missing, text or NaN), so there is no salience-pruned "
    "selection. Numeric meta fields the memories do have: limit, line"
)


def test_the_cli_names_its_flag_for_a_salience_field(letta: str) -> None:
    rc, out, err = run_cli(
        "score", PKG, "--external", letta, "--format", "letta", "--budget", str(BUDGET)
    )
    assert rc == 0, err
    assert f"note: {FIELDS_NOTE} (set --salience-field to one of them)." in out.splitlines()


def test_the_app_names_its_box_for_a_salience_field() -> None:
    at = open_app(PAGE, package="sample:veg-to-pescatarian", budget=str(BUDGET))
    at.selectbox(key="w_ext_format").set_value("letta").run()
    at.file_uploader(key="w_ext_upload").upload("letta.af", LETTA.encode(), "text/plain").run()
    assert not at.exception, [e.value for e in at.exception]
    notes = [t.value for t in at.text if t.value.startswith("No memory has a numeric salience")]
    assert notes == [f"{FIELDS_NOTE} (set the 'Salience meta field' box to one of them)."]
    assert not any("--salience-field" in t.value for t in at.text)


def test_the_library_names_its_argument_for_a_salience_field(letta: str) -> None:
    from memaudit_core.importers import load_external_store
    from memaudit_core.package import load_package
    from memaudit_core.union import with_store

    pkg = load_package(PKG)
    pkg = with_store(pkg, load_external_store(letta, "letta", store_id="letta"))
    notes = union_report(pkg, "letta", BUDGET).notes
    assert f"{FIELDS_NOTE} (set salience_field to one of them)." in notes
