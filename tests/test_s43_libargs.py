"""Library QA s43: misplaced or mistyped arguments of family_band, the suites and
evidence_view are refused, or noted, in words (no bare TypeError, no silent single seed, no
silently dropped kind)."""

from __future__ import annotations

import pytest

from memaudit_core import curves, suites
from memaudit_core.errors import MemAuditError
from memaudit_core.explain import evidence_view
from memaudit_core.generators import coerce_params, generate

SHAPE = "params must be a dict of name -> value or (name, value) pairs, got "


@pytest.mark.parametrize(
    ("params", "shown"),
    [
        ([2, 4, 8], "[2, 4, 8]"),  # the budgets, one slot too early
        ("normal_count=3", "'normal_count=3'"),
        ([("normal_count", 3, 4)], "[('normal_count', 3, 4)]"),
    ],
)
def test_family_band_refuses_params_that_are_not_a_dict_or_pairs(params, shown) -> None:
    with pytest.raises(MemAuditError) as err:
        curves.family_band("memaudit-small", range(3), params, [2, 4, 8], ["gvt"])
    assert str(err.value).startswith(SHAPE + shown)


@pytest.mark.parametrize(
    "call",
    [
        lambda p: suites.parse_family_spec("memaudit-small:0-1", None, p),
        lambda p: suites.collect_sources((), ["memaudit-small:0-1"], None, p),
        lambda p: suites.sweep_suite((), ["memaudit-small:0-1"], params=p, budgets=[2]),
        lambda p: coerce_params("memaudit-small", p),
    ],
)
def test_the_suites_and_coerce_params_refuse_the_same_params(call) -> None:
    with pytest.raises(MemAuditError, match="params must be a dict of name -> value"):
        call([2, 4, 8])


def test_params_given_as_pairs_build_the_same_packages_as_a_dict() -> None:
    pairs = suites.collect_sources((), ["memaudit-small:0-1"], None, [("normal_count", 3)])
    as_dict = suites.collect_sources((), ["memaudit-small:0-1"], None, {"normal_count": 3})
    assert (
        [s.key for s in pairs]
        == [s.key for s in as_dict]
        == [
            "family:memaudit-small:0:normal_count=3",
            "family:memaudit-small:1:normal_count=3",
        ]
    )
    with pytest.raises(MemAuditError, match="'normal_count' is given twice"):
        curves.family_band(
            "memaudit-small", [0], [("normal_count", 3), ("normal_count", 4)], [2], ["gvt"]
        )


def test_a_lone_seed_is_refused_and_a_list_of_one_seed_is_taken() -> None:
    with pytest.raises(MemAuditError) as err:
        curves.family_band("memaudit-small", 5, None, [2], ["gvt"])
    assert "expected a list of seeds, got 5" in str(err.value)
    assert "for one seed: [5]; for seeds 0..4: range(5)" in str(err.value)
    # The suites' seeds too (a bare TypeError "'int' object is not iterable" before).
    with pytest.raises(MemAuditError, match=r"for one seed: \[5\]"):
        suites.collect_sources((), ["memaudit-small"], 5, None)
    # The list of one seed asked for still makes a band of that seed.
    band = curves.family_band("memaudit-small", [5], None, [2], ["gvt"], ablations=())
    assert band.seeds == (5,)
    assert [s.key for s in suites.collect_sources((), ["memaudit-small"], [5], None)] == [
        "family:memaudit-small:5"
    ]


def test_an_unknown_kind_in_the_evidence_filter_is_noted() -> None:
    pkg = generate("update_chain")
    kinds = sorted({u.kind for u in pkg.units})
    assert "invalidation" in kinds and "zz" not in kinds
    listed = f"(its kinds: {', '.join(kinds)})"

    some = evidence_view(pkg, 6, writer="gvt", kinds=["invalidation", "zz"])
    assert some.kinds == ("invalidation",)
    assert some.notes == (
        f"kind 'zz' is not a unit kind of package 'update_chain' {listed}: left out of the filter",
    )

    none = evidence_view(pkg, 6, writer="gvt", kinds=["zz"])
    assert set(none.kinds) == set(kinds)  # the deliberate fallback: every kind
    assert none.notes == (
        f"kind 'zz' is not a unit kind of package 'update_chain' {listed}: every kind is shown",
    )

    near = evidence_view(pkg, 6, writer="gvt", kinds=["Invalidation"])
    assert "did you mean 'invalidation'?" in near.notes[0]
    assert evidence_view(pkg, 6, writer="gvt", kinds=["invalidation"]).notes == ()
