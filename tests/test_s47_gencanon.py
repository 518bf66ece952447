"""QA s47 (generators): one instance had two ids, two content hashes and two app keys.

``generate("event_graph", 5, n_experiences=30)`` and the same call with ``n_entities=2`` (what
the automatic 0 picks: max(2, ceil(30 / 15))) built byte-identical bodies under the ids
``event-graph-n30-s5`` and ``event-graph-n30-s5-n_entities=2``; random_coverage's
``max_cover=10`` for 10 units (which the default 12 is cut to) likewise; and the app kept
``gen:event_graph:0:n_entities=2;n_experiences=30`` as a key of its own. The families'
parameters are now resolved to the values they build with before id, meta and key are formed.

The independent expectation is the body comparison: the two calls' packages without
``meta``, ``id`` and ``title`` are equal (an equal instance), or differ (a distinct one).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from cli_utils import run_cli

from memaudit_core.curves import FamilyBand
from memaudit_core.generators import generate
from memaudit_core.package import load_package, package_to_dict
from memaudit_ui.sources import canonical_key, generated_key

SAMPLES = Path(__file__).resolve().parent.parent / "sample_packages"


def _body(pkg) -> dict:
    doc = package_to_dict(pkg)
    for key in ("meta", "id", "title"):
        doc.pop(key, None)
    return doc


def _auto_entities(n_experiences: int) -> int:
    """event_graph's documented automatic entity count (its help: max(2, ceil(n / 15)),
    at most every first and last name paired, 3,072)."""
    return min(3072, max(2, math.ceil(n_experiences / 15)))


#: (family, seed, base params, the parameter given explicitly, its value that builds what
#: the default builds), each value computed here from the families' documented rules.
EQUAL = [
    ("event_graph", 5, {"n_experiences": 30}, "n_entities", _auto_entities(30)),
    ("event_graph", 2, {"n_experiences": 100}, "n_entities", _auto_entities(100)),
    # One turn: the first turn is never chatter, so distractor_rate is never consulted.
    ("event_graph", 3, {"n_experiences": 1}, "distractor_rate", 0.5),
    # 5 x 2 = 10 units: the default max_cover 12 is cut to 10.
    ("random_coverage", 5, {"n_groups": 5}, "max_cover", 5 * 2),
    ("random_coverage", 1, {"n_groups": 3, "units_per_group": 3}, "max_cover", 3 * 3),
]


@pytest.mark.parametrize(("family", "seed", "base", "name", "value"), EQUAL)
def test_an_explicit_value_building_the_defaults_package_is_that_package(
    family, seed, base, name, value
):
    default = generate(family, seed, **base)
    explicit = generate(family, seed, **base, **{name: value})
    assert _body(explicit) == _body(default)  # the independent expectation: one instance
    assert explicit.id == default.id
    assert package_to_dict(explicit) == package_to_dict(default)
    assert explicit.content_hash() == default.content_hash()
    # The app's key: as the Generator writes it, and as a link's key is kept.
    assert generated_key(family, seed, {**base, name: value}) == generated_key(family, seed, base)
    text = ";".join(f"{k}={v}" for k, v in sorted({**base, name: value}.items()))
    base_text = ";".join(f"{k}={v}" for k, v in sorted(base.items()))
    assert canonical_key(f"gen:{family}:{seed}:{text}") == (
        f"gen:{family}:{seed}:{base_text}",
        None,
    )


#: Values next to those above, which build other packages and keep their own ids.
DISTINCT = [
    ("event_graph", 5, {"n_experiences": 30}, "n_entities", _auto_entities(30) + 1),
    ("event_graph", 0, {"n_experiences": 2}, "distractor_rate", 0.99),
    ("random_coverage", 5, {"n_groups": 5}, "max_cover", 5 * 2 - 1),
]


@pytest.mark.parametrize(("family", "seed", "base", "name", "value"), DISTINCT)
def test_a_value_building_another_package_keeps_its_own_id(family, seed, base, name, value):
    default = generate(family, seed, **base)
    other = generate(family, seed, **base, **{name: value})
    assert _body(other) != _body(default)
    assert other.id != default.id
    assert other.meta["params"][name] == value
    assert generated_key(family, seed, {**base, name: value}) != generated_key(family, seed, base)


def test_the_shipped_event_graph_sample_is_the_explicit_calls_package():
    """The sample's id and content hash are unchanged, and the automatic n_entities given
    explicitly (50 turns: 4 people) builds that very file."""
    shipped = load_package(SAMPLES / "event-graph-50.json")
    explicit = generate("event_graph", 7, n_experiences=50, n_entities=_auto_entities(50))
    assert explicit.id == shipped.id == "event-graph-n50-s7"
    assert explicit.content_hash() == shipped.content_hash()


def test_a_key_at_the_entity_cap_names_the_default_package():
    """200,000 turns would pick 13,334 people; the automatic value stops at the cap."""
    key = f"gen:event_graph:0:n_entities={_auto_entities(200_000)};n_experiences=200000"
    assert canonical_key(key) == ("gen:event_graph:0:n_experiences=200000", None)


def test_the_cli_writes_the_defaults_id(tmp_path):
    out = tmp_path / "p.json"
    rc, _, err = run_cli(
        "generate",
        "random_coverage",
        "--seed",
        "5",
        "--param",
        "n_groups=5",
        "--param",
        "max_cover=10",
        "-o",
        str(out),
    )
    assert rc == 0, err
    doc = json.loads(out.read_text())
    assert doc["id"] == "random-g5-s5"
    assert doc["meta"]["params"]["max_cover"] == 12
    assert doc == package_to_dict(generate("random_coverage", 5, n_groups=5))


def test_a_family_bands_name_tags_what_its_packages_ids_do():
    def band(params: dict[str, str]) -> FamilyBand:
        return FamilyBand(
            family="event_graph",
            params=tuple(sorted(params.items())),
            seeds=(0, 1),
            budgets=(),
            methods=(),
            rows=(),
            n_uncertified=0,
            notes=(),
            time_s=0.0,
        )

    explicit = band({"n_experiences": "30", "n_entities": str(_auto_entities(30))})
    assert explicit.name == band({"n_experiences": "30"}).name
    assert explicit.name == "event_graph-n_experiences=30-seeds-0-1"
