"""Session 47, the lead's own fixes of items session 46 left alone.

(a) A located problem showed its value in Python's spelling: a Mem0 time of JSON ``true`` was
    reported as "got True", a nested object as ``{'a': None}``.
(b) ``memaudit show`` of a family band printed the family without its parameters, so bands of
    ``normal_count=5`` and of the defaults read alike.
(c) Capacity, cost-rule and noise results under a registered saturation did not say that their
    optima assume it concave.
(d) A sweep on a Dask cluster refused a package under a registered saturation: the workers
    import memaudit afresh and knew the built-in saturations only.
"""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from cli_utils import run_cli
from package_utils import registered_saturation

import memaudit_core as ma
from memaudit_core.curves import family_band
from memaudit_core.errors import Problem
from memaudit_core.generators import generate
from memaudit_core.package import dumps_package
from memaudit_core.robustness import (
    capacity_sensitivity,
    cost_rule_sensitivity,
    noise_sensitivity,
)
from memaudit_core.saturations import SATURATIONS, Saturation, assumed_saturation_note
from memaudit_core.suites import sweep_suite


def test_problem_values_are_spelled_as_json() -> None:
    cases = [
        (True, "true"),
        (False, "false"),
        ({"a": None, "b": [1.5, True]}, '{"a": null, "b": [1.5, true]}'),
        (float("nan"), "NaN"),
        (12345, "12345"),
    ]
    for value, spelled in cases:
        line = Problem("$.x", "type", "a message", value).format("f.json")
        assert line == f"f.json: $.x: a message (got {spelled}) [rule: type]"


def test_mem0_boolean_time_is_reported_as_json_true(tmp_path) -> None:
    src = tmp_path / "mem0.json"
    src.write_text(json.dumps({"results": [{"id": "a", "memory": "Ann", "created_at": True}]}))
    pkg = "sample_packages/veg-to-pescatarian.json"
    rc, _, err = run_cli("import", "mem0", str(src), "--package", pkg, "-o", str(tmp_path / "o"))
    assert rc == 2, err
    assert f"{src}: $.results[0].created_at:" in err
    assert "(got true) [rule: type]" in err and "True" not in err


def test_show_of_a_band_names_its_family_parameters(tmp_path) -> None:
    band = family_band("memaudit-small", [0, 1], {"normal_count": 5}, [4.0], ["writer:gvt"])
    path = tmp_path / "band.json"
    path.write_text(json.dumps(band.to_dict()))
    rc, out, err = run_cli("show", str(path))
    assert rc == 0, err
    assert "family memaudit-small (normal_count=5); seeds 0, 1" in out
    default = family_band("memaudit-small", [0, 1], None, [4.0], ["writer:gvt"])
    path.write_text(json.dumps(default.to_dict()))
    rc, out, err = run_cli("show", str(path))
    assert rc == 0, err
    assert "family memaudit-small; seeds 0, 1" in out


# (c) Capacity, cost-rule and noise results under a registered saturation said nothing of the
#     assumption every other optimum under it states (s46 left alone).


# NumPy's and math's own functions: a Dask worker unpickles them without this test module.
SQRT = Saturation("s47_sqrt", np.sqrt, math.sqrt, "h(z) = sqrt(z)", math.inf)


def _sqrt_package() -> ma.Package:
    exps = [ma.Experience(f"e{i}", i) for i in range(3)]
    units = [ma.Unit("U", weight=1.0), ma.Unit("V", weight=0.5)]
    cands = [
        ma.Candidate("a", "e0", "atomic_fact", 1, {"U": 0.6}),
        ma.Candidate("b", "e1", "atomic_fact", 1, {"U": 0.5, "V": 0.2}),
        ma.Candidate("b2", "e1", "summary", 2, {"U": 0.7, "V": 0.5}),
        ma.Candidate("c", "e2", "atomic_fact", 1, {"V": 1.0}),
    ]
    return ma.Package(
        "sq",
        exps,
        units,
        queries=[ma.Query("q", ["U", "V"])],
        candidates=cands,
        saturation="s47_sqrt",
    )


def test_robustness_results_under_a_registered_saturation_say_so() -> None:
    with registered_saturation(SQRT):
        pkg = _sqrt_package()
        expected = assumed_saturation_note("s47_sqrt")
        results = [
            capacity_sensitivity(pkg, [2.0, 3.0], k=2, engines=["bnb"]),
            cost_rule_sensitivity(pkg, [2.0, 3.0], writers=["gvt"]),
            noise_sensitivity(pkg, draws=2, seed=0, budgets=[2.0], writers=["gvt"]),
        ]
    assert expected and "s47_sqrt" in expected
    for res in results:
        assert expected in res.notes, type(res).__name__
    assert set(SATURATIONS) == {"cap1", "linear", "log1p"}
    plain = capacity_sensitivity(generate("update_chain"), [6.0], engines=["bnb"])
    assert not any("concave" in n for n in plain.notes)


def _brute_sqrt_opt(budget: float) -> float:
    """OPT of :func:`_sqrt_package` by enumeration: per experience none or one candidate."""
    options = [
        [None, (1, 0.6, 0.0)],
        [None, (1, 0.5, 0.2), (2, 0.7, 0.5)],
        [None, (1, 0.0, 1.0)],
    ]
    best = 0.0
    for pick in itertools.product(*options):
        chosen = [c for c in pick if c is not None]
        if sum(c[0] for c in chosen) <= budget:
            u, v = sum(c[1] for c in chosen), sum(c[2] for c in chosen)
            best = max(best, math.sqrt(u) + 0.5 * math.sqrt(v))
    return best


def test_a_dask_sweep_knows_the_registered_saturations(tmp_path) -> None:
    from dask_utils import local_cluster

    with registered_saturation(SQRT), local_cluster() as address:
        path = tmp_path / "sq.json"
        path.write_text(dumps_package(_sqrt_package()))
        res = sweep_suite([str(path)], budgets=[2.0, 3.0], writers=["gvt"], scheduler=address)
    assert not res.errors, res.errors
    assert [(r.budget, r.method) for r in res.rows] == [(2.0, "gvt"), (3.0, "gvt")]
    for row in res.rows:
        assert row.certified
        assert abs(row.opt - _brute_sqrt_opt(row.budget)) < 1e-9


def test_a_negative_overflow_is_said_to_read_as_minus_inf() -> None:
    from memaudit_core.specs import TooLargeNumber, read_plain_number

    for text, shown in (("1e400", "inf"), ("-1e400", "-inf")):
        with pytest.raises(TooLargeNumber) as err:
            read_plain_number(text)
        assert str(err.value) == f"{text!r} is too large to hold: it would read as {shown}"


def test_recency_pruning_says_how_equal_times_are_ordered() -> None:
    """QA s47 (e2e): Letta's four blocks share one created_at; the note said "newest
    created_at first" only, and keeping the first listed gives another store."""
    doc = json.loads(open("sample_packages/external-stores-demo.json").read())
    (letta,) = [s for s in doc["stores"] if s["id"] == "letta"]
    mems = letta["memories"]
    order = sorted(range(len(mems)), key=lambda j: (mems[j]["created_at"], j), reverse=True)
    kept, spent = [], 0
    for j in order:  # each memory kept if it still fits budget 30
        if spent + mems[j]["cost"] <= 30:
            kept.append(mems[j]["id"])
            spent += mems[j]["cost"]
    dropped = [m["id"] for m in mems if m["id"] not in kept]
    assert "block-human-0" in dropped and "block-human-3" in kept  # the tie decides
    view = ma.compare_view(
        ma.load_package("sample_packages/external-stores-demo.json"), 30, store_id="letta"
    )
    (note,) = [n for n in view.notes if "pruned by recency" in n]
    assert "(newest created_at first, equal times last listed first;" in note
    in_order = [mems[j]["id"] for j in order if mems[j]["id"] in dropped]
    assert note.endswith(f"kept {len(kept)} of {len(mems)}, dropped {', '.join(in_order)}.")
