"""Every registered package family: determinism, seeds, meta, validation, published sizes."""

from __future__ import annotations

import inspect
import random
import warnings

import pytest

from memaudit_core.errors import MemAuditError, UnknownNameError
from memaudit_core.generators import FAMILIES, generate, stress
from memaudit_core.package import (
    CANDIDATE_TYPES,
    UNIT_KINDS,
    dumps_package,
    package_to_dict,
    parse_package,
)

FAMILY_NAMES = sorted(FAMILIES)

#: Published structure at default parameters: (experiences, candidates, units, total cost).
#: Total cost None = depends on the seed.
PUBLISHED = {
    "memaudit-small": (7, 25, 11, None),
    "update_chain": (4, 18, 7, 51.0),
    "temporal_interval": (7, 30, 26, 88.0),
    "density_trap": (5, 20, 9, 50.0),
    "scope_shift": (5, 17, 12, 52.0),
    "summary_tradeoff": (5, 25, 15, 70.0),
    "redundancy_heavy": (5, 20, 9, 55.0),
    "abstention_hard": (5, 23, 15, 56.0),
}

#: A size override per family and the (experiences, candidates, units) it must give.
RESIZED = {
    "memaudit-small": ({"normal_count": 4, "update_count": 1}, (6, 20, 9)),
    "update_chain": ({"length": 5}, (6, 28, 11)),
    "temporal_interval": ({"intervals": 3, "closures": 1}, (4, 17, 15)),
    "density_trap": ({"n_experiences": 8}, (8, 32, 13)),
    "scope_shift": ({"n_scopes": 6}, (7, 25, 18)),
    "summary_tradeoff": ({"n_episodes": 3}, (3, 15, 9)),
    "redundancy_heavy": ({"n_experiences": 7}, (7, 28, 12)),
    "abstention_hard": ({"n_experiences": 6}, (6, 27, 18)),
}

STRESS = [f.name for f in stress.FAMILY_RECORDS]


def _body(pkg) -> dict:
    """The package content that a seed may change (not its id, title or meta)."""
    doc = package_to_dict(pkg)
    for key in ("id", "title", "meta"):
        doc.pop(key, None)
    return doc


def _sizes(pkg) -> tuple[int, int, int]:
    return len(pkg.experiences), len(pkg.candidates), len(pkg.units)


# --------------------------------------------------------------------------- every family


def test_paper_and_stress_families_registered():
    for name in PUBLISHED:
        assert name in FAMILIES, name


@pytest.mark.parametrize("name", FAMILY_NAMES)
@pytest.mark.parametrize("seed", [0, 1, 7])
def test_deterministic_per_seed(name, seed):
    assert dumps_package(generate(name, seed)) == dumps_package(generate(name, seed))


@pytest.mark.parametrize("name", FAMILY_NAMES)
def test_seed_changes_content_only_when_seeded(name):
    fam = FAMILIES[name]
    base = _body(generate(name, 0))
    others = [_body(generate(name, s)) for s in (1, 2, 3)]
    if fam.seeded:
        assert any(o != base for o in others), f"{name}: seeds 0..3 give the same content"
    else:
        assert all(o == base for o in others), f"{name} is not seeded but its content changes"


@pytest.mark.parametrize("name", FAMILY_NAMES)
@pytest.mark.parametrize("seed", [0, 5])
def test_meta_records_generator_params_seed(name, seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a seed-invariant family's seed 5 is said unused
        pkg = generate(name, seed)
    assert pkg.meta["generator"] == name
    # A seed-invariant family's one package is seed 0's (QA s51 m1: seed 5 was recorded, so
    # the library's package had another content hash than the CLI's and the app's).
    assert pkg.meta["seed"] == (seed if FAMILIES[name].seeded else 0)
    assert pkg.meta["params"] == FAMILIES[name].defaults()


@pytest.mark.parametrize("name", FAMILY_NAMES)
def test_validates_and_round_trips(name):
    pkg = generate(name, 3)
    assert pkg.warnings == ()
    again = parse_package(package_to_dict(pkg), source="roundtrip")
    assert again.content_hash() == pkg.content_hash()
    assert dumps_package(again) == dumps_package(pkg)
    assert pkg.default_budget() > 0
    assert list(pkg.budget_grid()) == sorted(pkg.budget_grid())
    assert pkg.cost_unit
    groups = {e.id for e in pkg.experiences}
    assert {c.experience for c in pkg.candidates} <= groups
    assert all(c.cost > 0 for c in pkg.candidates)


@pytest.mark.parametrize("name", FAMILY_NAMES)
def test_family_record_documents_every_param(name):
    fam = FAMILIES[name]
    assert fam.description
    assert set(fam.param_help) == set(fam.defaults()), name
    assert "seed" in inspect.signature(fam.build).parameters


@pytest.mark.parametrize("name", FAMILY_NAMES)
def test_unknown_param_is_rejected(name):
    with pytest.raises(UnknownNameError, match="no parameter"):
        generate(name, 0, no_such_param=3)


def test_unknown_family_is_rejected():
    with pytest.raises(UnknownNameError, match="unknown family"):
        generate("no-such-family")


def _int_params(name):
    defaults = FAMILIES[name].defaults()
    return {k: v for k, v in defaults.items() if isinstance(v, int) and not isinstance(v, bool)}


@pytest.mark.parametrize("name", [n for n in FAMILY_NAMES if _int_params(n)])
def test_params_override_is_recorded(name):
    defaults = FAMILIES[name].defaults()
    ints = _int_params(name)
    key, value = next(iter(ints.items()))
    pkg = generate(name, 0, **{key: value + 1})
    assert pkg.meta["params"][key] == value + 1
    assert pkg.meta["params"] == {**defaults, key: value + 1}


@pytest.mark.parametrize("name", FAMILY_NAMES)
def test_every_changed_param_gets_its_own_id_and_title(name):
    # Two packages of one family and seed with different parameters must not share an id:
    # the id labels sweep rows and names downloads.
    default_pkg = generate(name, 1)
    seen_ids = {default_pkg.id}
    for key, value in FAMILIES[name].defaults().items():
        if isinstance(value, bool):
            changed = not value
        elif isinstance(value, int):
            changed = value + 1
        elif isinstance(value, float):
            changed = value / 2
        else:
            continue
        pkg = generate(name, 1, **{key: changed})
        assert pkg.id not in seen_ids, (key, pkg.id)
        assert str(changed) in pkg.title
        seen_ids.add(pkg.id)
    assert generate(name, 1, **FAMILIES[name].defaults()).id == default_pkg.id


# --------------------------------------------------------------------------- published families


@pytest.mark.parametrize("name", sorted(PUBLISHED))
@pytest.mark.parametrize("seed", [0, 4])
def test_published_structure(name, seed):
    n_exp, n_cand, n_units, total = PUBLISHED[name]
    pkg = generate(name, seed)
    assert _sizes(pkg) == (n_exp, n_cand, n_units)
    if total is not None:
        assert pkg.total_cost() == total


@pytest.mark.parametrize("name", sorted(RESIZED))
def test_size_params_change_size(name):
    params, sizes = RESIZED[name]
    pkg = generate(name, 2, **params)
    assert _sizes(pkg) == sizes
    assert _sizes(pkg) != _sizes(generate(name, 2))
    # Strings (from the CLI) are converted to the default's type.
    as_text = generate(name, 2, **{k: str(v) for k, v in params.items()})
    assert as_text.content_hash() == pkg.content_hash()


# --------------------------------------------------------------------------- stress families

#: Weighted units drawn from the seeded stream: unit id prefix -> allowed weights.
DRAWN = {
    "density_trap": {"specific_": {1.45, 1.6, 1.75}},
    "scope_shift": {"scoped_": {1.6, 1.8, 2.0}},
    "summary_tradeoff": {"primary_": {1.35, 1.5, 1.65}, "secondary_": {1.0, 1.1}},
    "redundancy_heavy": {"tail_": {1.0, 1.15, 1.3}},
    "abstention_hard": {"abstain_": {2.0, 2.15, 2.3}, "answer_": {1.75, 1.9}},
}

#: Fixed weights of the published structure: unit id prefix -> weight.
FIXED = {
    "density_trap": {"lure": 2.2, "context_": 0.3},
    "scope_shift": {"scope_context_": 0.55, "generic_": 0.35},
    "summary_tradeoff": {"context_": 0.35},
    "redundancy_heavy": {"core": 2.4, "local_": 0.3},
    "abstention_hard": {
        "conflict_": 0.9,
        "unsupported_": 0.05,
        "evidence_": 0.55,
        "no_abstain_": 0.2,
    },
}

#: Per-candidate (cost, coverage by unit-id prefix) of the first experience of each family.
FIRST_GROUP = {
    "density_trap": {
        "trap_0_lure_fact": (1, {"lure": 0.55, "specific_0": 0.05}),
        "trap_0_specific_fact": (2, {"specific_0": 1.0}),
        "trap_0_summary": (3, {"specific_0": 0.7, "lure": 0.25, "context_0": 0.35}),
        "trap_0_raw_span": (4, {"specific_0": 1.0, "context_0": 0.6, "lure": 0.15}),
    },
    "scope_shift": {
        "scope_0_atomic_fact": (2, {"scoped_0": 1.0}),
        "scope_0_generic_summary": (2, {"generic_0": 0.8, "scoped_0": 0.35}),
        "scope_0_scoped_summary": (3, {"scoped_0": 0.75, "scope_context_0": 0.8}),
        "scope_0_raw_span": (5, {"scoped_0": 1.0, "scope_context_0": 1.0, "generic_0": 0.2}),
    },
    "summary_tradeoff": {
        "episode_0_primary_fact": (2, {"primary_0": 1.0}),
        "episode_0_secondary_fact": (2, {"secondary_0": 1.0}),
        "episode_0_compressed_summary": (
            2,
            {"primary_0": 0.45, "secondary_0": 0.45, "context_0": 0.25},
        ),
        "episode_0_balanced_summary": (
            3,
            {"primary_0": 0.72, "secondary_0": 0.72, "context_0": 0.45},
        ),
        "episode_0_raw_span": (5, {"primary_0": 1.0, "secondary_0": 1.0, "context_0": 0.85}),
    },
    "redundancy_heavy": {
        "note_0_core_fact": (2, {"core": 0.85}),
        "note_0_tail_fact": (2, {"tail_0": 1.0}),
        "note_0_summary": (3, {"core": 0.6, "tail_0": 0.8, "local_0": 0.25}),
        "note_0_raw_span": (4, {"core": 1.0, "tail_0": 1.0, "local_0": 0.4}),
    },
    "abstention_hard": {
        "ask_0_atomic_fact": (2, {"unsupported_0": 1.0}),
        "ask_0_abstention": (1, {"abstain_0": 1.0}),
        "ask_0_uncertainty": (2, {"abstain_0": 0.8, "conflict_0": 1.0}),
        "ask_0_raw_span": (4, {"abstain_0": 0.9, "conflict_0": 1.0, "unsupported_0": 0.1}),
        "ask_0_summary": (3, {"abstain_0": 0.65, "conflict_0": 0.7}),
    },
}


def test_stress_records_cover_the_published_list():
    assert sorted(STRESS) == sorted(DRAWN)
    assert all(FAMILIES[n].seeded for n in STRESS)
    assert len(set(stress.SALTS.values())) == len(stress.SALTS)
    assert set(stress.SALTS) == set(STRESS)


@pytest.mark.parametrize("name", sorted(FIRST_GROUP))
def test_stress_first_group_matches_published_structure(name):
    pkg = generate(name, 0)
    first = min(pkg.experiences, key=lambda e: (e.time, e.id)).id
    got = {c.id: (c.cost, dict(c.coverage)) for c in pkg.candidates if c.experience == first}
    assert got == FIRST_GROUP[name]


@pytest.mark.parametrize("name", sorted(DRAWN))
def test_stress_weights_follow_published_draws(name):
    seen: dict[str, set[float]] = {p: set() for p in DRAWN[name]}
    for seed in range(25):
        pkg = generate(name, seed)
        for unit in pkg.units:
            fixed = [w for p, w in FIXED[name].items() if unit.id.startswith(p)]
            drawn = [p for p in DRAWN[name] if unit.id.startswith(p)]
            assert len(fixed) + len(drawn) == 1, unit.id
            if fixed:
                assert unit.weight == fixed[0], unit.id
            else:
                assert unit.weight in DRAWN[name][drawn[0]], (unit.id, unit.weight)
                seen[drawn[0]].add(unit.weight)
    # Over 25 seeds every allowed value is drawn at least once.
    assert seen == DRAWN[name]


@pytest.mark.parametrize("name", sorted(DRAWN))
def test_stress_stream_is_salted_per_family(name):
    """The first drawn weight is the first randrange of Random((seed + 1) * 1000003 + salt)."""
    first_prefix, allowed = next(iter(DRAWN[name].items()))
    low = min(allowed)
    step = round(sorted(allowed)[1] - low, 6)
    for seed in (0, 1, 9):
        rng = random.Random((seed + 1) * 1000003 + stress.SALTS[name])
        expected = round(low + step * rng.randrange(len(allowed)), 6)
        unit = next(u for u in generate(name, seed).units if u.id.startswith(first_prefix))
        assert unit.weight == expected


@pytest.mark.parametrize("name", STRESS)
def test_stress_text_kinds_and_types(name):
    pkg = generate(name, 1)
    assert pkg.title and pkg.description
    assert all(e.text.strip() for e in pkg.experiences)
    assert all(c.text.strip() for c in pkg.candidates)
    assert all(u.text.strip() for u in pkg.units)
    assert {u.kind for u in pkg.units} <= set(UNIT_KINDS)
    assert {c.type for c in pkg.candidates} <= set(CANDIDATE_TYPES)
    assert all(c.id.startswith(f"{c.experience}_") for c in pkg.candidates)
    assert pkg.budget == 6 and list(pkg.budgets) == [1, 2, 4, 8, 16]
    # Large sizes stay valid, with unique ids (labels cycle past their lists).
    big = generate(name, 1, **{next(iter(FAMILIES[name].defaults())): 13})
    assert big.warnings == ()


@pytest.mark.parametrize("name", STRESS)
def test_stress_rejects_empty_size(name):
    key = next(iter(FAMILIES[name].defaults()))
    # QA s43: the message names the family, as the paper families' do.
    with pytest.raises(MemAuditError, match=f"^{name}: {key} must be an integer >= 1, got 0 "):
        generate(name, 0, **{key: 0})


def test_scope_shift_review_covers_every_scope():
    pkg = generate("scope_shift", 0, n_scopes=3)
    review = [c for c in pkg.candidates if c.experience == "review"]
    assert [c.id for c in review] == ["review_summary"]
    cov = review[0].coverage
    assert cov == {
        **{f"scoped_{j}": 0.42 for j in range(3)},
        **{f"scope_context_{j}": 0.35 for j in range(3)},
    }
    assert review[0].cost == 4
    assert max(e.time for e in pkg.experiences) == next(
        e.time for e in pkg.experiences if e.id == "review"
    )


def test_abstention_hard_alternates():
    pkg = generate("abstention_hard", 0)
    kinds = {u.id: u.kind for u in pkg.units}
    for exp in pkg.experiences:
        i = int(exp.id.split("_")[1])
        types = sorted(c.type for c in pkg.candidates if c.experience == exp.id)
        if i % 2 == 0:
            assert types == ["abstention", "atomic_fact", "raw_span", "summary", "uncertainty"]
            assert kinds[f"abstain_{i}"] == "abstention"
        else:
            assert types == ["abstention", "atomic_fact", "raw_span", "summary"]
            assert kinds[f"answer_{i}"] == "fact"
            assert kinds[f"no_abstain_{i}"] == "abstention"


def test_generate_refuses_a_package_too_large_to_build_before_building_it():
    """A link or a CLI call can ask for 10^8 experiences; the estimate refuses it at once."""
    import time

    from memaudit_core.errors import MemAuditError
    from memaudit_core.generators import MAX_GENERATED_SIZE, estimated_size, generate

    t0 = time.perf_counter()
    with pytest.raises(MemAuditError, match=r"generator-size"):
        generate("memaudit-small", normal_count=100_000_000)
    assert time.perf_counter() - t0 < 5  # refused, not built (building takes minutes)
    with pytest.raises(MemAuditError, match=r"more than the 1,000 allowed"):
        generate("random_coverage", n_groups=100, max_size=1_000)
    assert estimated_size("event_graph", n_experiences=200_000) <= MAX_GENERATED_SIZE


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_size_estimates_track_the_generated_packages(family):
    """Estimates are at least 0.9x the candidates + coverage entries actually made, and at
    most 3x those plus the units (random_coverage counts its units: they need not be covered).
    """
    from memaudit_core.generators import estimated_size

    fam = FAMILIES[family]
    for name, default in fam.defaults().items():
        if type(default) is not int or name in ("n_entities", "min_cover", "max_cover"):
            continue
        # Closure j closes interval j: as many intervals as closures.
        with_name = ("closures", "intervals") if name == "closures" else (name,)
        for n in (30, 300):
            params = dict.fromkeys(with_name, n)
            pkg = generate(family, **params)
            actual = len(pkg.candidates) + sum(len(c.coverage) for c in pkg.candidates)
            estimate = estimated_size(family, **params)
            most = 3 * (actual + len(pkg.units)) + 100
            assert 0.9 * actual <= estimate <= most, (name, n, actual, estimate)


def test_numbers_of_the_neighbouring_type_mean_the_same_parameter():
    """Library QA: integer_costs=0 was recorded as 0 and length=3.0 was refused."""
    assert (
        generate("update_chain", length=3.0).content_hash()
        == generate("update_chain").content_hash()
    )
    pkg = generate("random_coverage", 1, integer_costs=0, n_groups=5.0, cost_low=1)
    assert pkg.meta["params"]["integer_costs"] is False
    assert pkg.meta["params"]["n_groups"] == 5 and type(pkg.meta["params"]["n_groups"]) is int
    assert type(pkg.meta["params"]["cost_low"]) is float
    with pytest.raises(MemAuditError):
        generate("update_chain", length=3.5)
    # Library QA: integer_costs=2 was taken as true and recorded as 2.
    for value, shown in [(2, "2"), (None, "None"), ([], r"\[\]")]:
        with pytest.raises(
            MemAuditError, match=f"'integer_costs' must be true or false, got {shown}"
        ):
            generate("random_coverage", 1, integer_costs=value)


def test_integer_costs_stay_in_the_requested_range():
    """Library QA: integer costs in [0.2, 0.4] all became 1, outside the range in meta."""
    for low, high, expect in [(1, 10, set(range(1, 11))), (0.2, 1.4, {1}), (2.6, 3.9, {3})]:
        pkg = generate("random_coverage", 0, integer_costs=True, cost_low=low, cost_high=high)
        assert {c.cost for c in pkg.candidates} == {float(c) for c in expect}
    with pytest.raises(MemAuditError, match=r"integer_costs needs .* got \[0.2, 0.4\]"):
        generate("random_coverage", 0, integer_costs=True, cost_low=0.2, cost_high=0.4)
