"""The brute-force oracle refuses a saturation added to the registry after it, clearly."""

import itertools

import numpy as np
import pytest
from package_utils import SQRT, registered_saturation

import memaudit_core as ma
from memaudit_core.errors import SolverError
from memaudit_core.generators import generate
from memaudit_core.package import package_to_dict, parse_package


@pytest.fixture
def sqrt_instance():
    with registered_saturation(SQRT):
        data = package_to_dict(generate("random_coverage", seed=3, n_groups=4))
        data["objective"] = {"saturation": "sqrt"}
        yield ma.compile_package(parse_package(data))


def test_brute_names_its_saturations_and_the_solvers_that_take_more(sqrt_instance):
    inst = sqrt_instance
    with pytest.raises(SolverError) as caught:
        ma.solve(inst, 5.0, "brute")
    text = str(caught.value)
    assert "'sqrt'" in text
    assert "cap1, linear, log1p" in text
    assert "'enum'" in text


def test_enum_still_solves_the_added_saturation(sqrt_instance):
    inst = sqrt_instance
    # Independent check: every store of at most one candidate per group, F from the definition.
    cov = inst.coverage.toarray()
    best = 0.0
    groups = [list(inst.group_slice(g)) for g in range(inst.n_groups)]
    for pick in itertools.product(*[[None, *g] for g in groups]):
        chosen = [c for c in pick if c is not None]
        if sum(inst.cost[c] for c in chosen) > 5.0:
            continue
        z = cov[chosen].sum(axis=0) if chosen else np.zeros(cov.shape[1])
        best = max(best, float(np.dot(inst.weight, np.sqrt(z))))
    assert ma.solve(inst, 5.0, "enum").value == pytest.approx(best, rel=1e-9)
