"""Lead fixes of session 50.

A package repeating a budget too large for a float (``"budgets": [10**400, 10**400]``) crashed
validation with an OverflowError while wording the repeat's warning (found by the Hypothesis
fuzz of test_package.py); each is refused under rule ``finite`` instead.
"""

from __future__ import annotations

import json

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
