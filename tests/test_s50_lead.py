"""Lead fixes of session 50.

A package repeating a budget too large for a float (``"budgets": [10**400, 10**400]``) crashed
validation with an OverflowError while wording the repeat's warning (found by the Hypothesis
fuzz of test_package.py); each is refused under rule ``finite`` instead.

Every compiled instance branch-and-bound ever solved stayed in memory: its cache is keyed
weakly on the instance, but the cached model held the instance (found while fixing QA s50's
saturation replacement). A long-running app or a 500-seed sweep kept them all.
"""

from __future__ import annotations

import gc
import json
import weakref

import pytest

from memaudit_core.errors import PackageError
from memaudit_core.package import loads_package

VEG = "sample_packages/veg-to-pescatarian.json"


def test_a_repeated_budget_too_large_for_a_float_is_refused_not_a_crash() -> None:
    doc = json.load(open(VEG, encoding="utf-8"))
    doc["budgets"] = [1, 1]
    huge = "1" + "0" * 400
    text = json.dumps(doc).replace('"budgets": [1, 1]', f'"budgets": [{huge}, {huge}]')
    with pytest.raises(PackageError) as err:
        loads_package(text, source="big.json")
    got = [(p.path, p.rule) for p in err.value.problems]
    assert got == [("$.budgets[0]", "finite"), ("$.budgets[1]", "finite")]


@pytest.mark.parametrize("solver", ["bnb", "auto"])
def test_solved_instances_are_freed(solver: str) -> None:
    from memaudit_core import solve
    from memaudit_core.compiled import compile_package
    from memaudit_core.generators import generate

    refs = []
    for seed in range(3):
        inst = compile_package(generate("memaudit-small", seed=seed))
        assert solve(inst, 6, solver).certified
        refs.append(weakref.ref(inst))
        del inst
    gc.collect()
    assert [r() is None for r in refs] == [True, True, True]


def test_on_a_projector_a_writer_that_kept_nothing_says_why() -> None:
    # veg-to-pescatarian at budget 6: its cheapest raw span (e2:raw) costs 9 words, so the
    # raw-span-only writer keeps nothing. Presentation mode drops the notes column.
    from app_utils import open_app

    at = open_app("app.py", package="sample:veg-to-pescatarian", budget="6", present="1")
    assert not at.exception, [e.value for e in at.exception]
    captions = [c.value.replace("\\", "") for c in at.caption]
    said = [c for c in captions if "No raw_span fits" in c]
    assert len(said) == 1, [c.value for c in at.caption]
    assert "recency_raw" in said[0] and "the cheapest costs 9 words" in said[0], said
