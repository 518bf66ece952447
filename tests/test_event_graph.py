"""The event-graph generator: validity, supersession structure, costs, determinism."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections import Counter, defaultdict
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memaudit_core.errors import MemAuditError
from memaudit_core.generators import FAMILIES, generate
from memaudit_core.generators.event_graph import (
    COST_RULES,
    OFFERED_TYPES,
    build_hidden_graph,
    event_graph,
)
from memaudit_core.package import Package, dumps_package, package_to_dict, parse_package


@cache
def pkg(seed: int = 0, n: int = 50, **kw) -> Package:
    return event_graph(seed=seed, n_experiences=n, **kw)


def recompute_cost(text: str, rule: str) -> int:
    if rule == "words":
        return len(text.split())
    if rule == "chars":
        return len(text)
    return 8 + math.ceil(len(text.encode("utf-8")) / 24)


def check_invariants(p: Package, rule: str = "words") -> None:
    """What every event-graph package promises (default candidate types)."""
    units = {u.id: u for u in p.units}
    weights = p.unit_weights()
    # Queries reference existing units; every unit is required and weighs > 0.
    required = Counter(r for q in p.queries for r in q.requires)
    for q in p.queries:
        assert q.requires and all(r in units for r in q.requires), q
        assert q.weight > 0 and q.text.endswith("?") and q.answer
    for u in p.units:
        assert u.weight is None, "weights come from queries"
        assert required[u.id] >= 1, u.id
        assert weights[u.id] > 0, u.id
        assert u.text
    # A small package's seeded budget can be below its cheapest candidate, which the
    # package's warnings say (QA s45); nothing else is warned about.
    fits_none = p.budget < min(c.cost for c in p.candidates)
    assert [w for w in p.warnings if "no candidate fits the default budget" not in w] == []
    assert len(p.warnings) == int(fits_none), (p.budget, p.warnings)
    # One candidate per (experience, type), id exp:type, cost by the declared rule.
    exps = {e.id: e for e in p.experiences}
    seen = set()
    for c in p.candidates:
        assert c.id == f"{c.experience}:{c.type}"
        assert (c.experience, c.type) not in seen
        seen.add((c.experience, c.type))
        assert c.type in OFFERED_TYPES
        assert c.text and c.cost > 0
        assert c.cost == recompute_cost(c.text, rule), c
        assert all(0 < v <= 1 for v in c.coverage.values())
    # Every invalidation unit is covered; every unit is coverable in full.
    total = defaultdict(float)
    for c in p.candidates:
        for u, v in c.coverage.items():
            total[u] += v
    for u in p.units:
        assert total[u.id] >= 1.0 - 1e-9, u.id
    inv_cover = {u for c in p.candidates for u in c.coverage if units[u].kind == "invalidation"}
    assert inv_cover == {u.id for u in p.units if u.kind == "invalidation"}
    # Readable text: speaker prefix, no unformatted template fields.
    for e in p.experiences:
        assert e.text.startswith(e.meta["speaker"] + ": "), e.text
        assert "{" not in e.text and "}" not in e.text
        assert e.session
    for c in p.candidates:
        assert "{" not in c.text
        if c.type == "raw_span":
            assert c.text == exps[c.experience].text
    # Meta records generator, params, seed and the graph summary.
    assert p.meta["generator"] == "event_graph"
    assert set(p.meta["params"]) == set(FAMILIES["event_graph"].defaults())
    assert p.meta["graph"]["turns"] == len(p.experiences)


# --------------------------------------------------------------------------- registry / shape


def test_registered_with_documented_defaults():
    fam = FAMILIES["event_graph"]
    assert fam.seeded
    assert fam.defaults() == {
        "n_experiences": 50,
        "n_entities": 0,
        "update_rate": 0.25,
        "distractor_rate": 0.2,
        "candidate_types": "all",
        "cost_rule": "words",
        "budget_fraction": 0.1,
    }
    assert set(fam.param_help) == set(fam.defaults())
    p = generate("event_graph", seed=4, n_experiences="20", update_rate="0.5")
    assert p.id == "event-graph-n20-s4-update_rate=0.5"
    assert p.meta["params"]["n_experiences"] == 20 and p.meta["params"]["update_rate"] == 0.5
    assert p.meta["seed"] == 4


@pytest.mark.parametrize("n", [5, 50, 500])
def test_sizes_validate(n):
    p = pkg(0, n)
    assert len(p.experiences) == n
    assert p.id == f"event-graph-n{n}-s0"
    check_invariants(p)
    # Round trip through the canonical JSON.
    again = parse_package(json.loads(dumps_package(p)))
    assert again.content_hash() == p.content_hash()


def test_candidates_per_experience_are_realistic():
    p = pkg(1, 500)
    per = Counter(c.experience for c in p.candidates)
    counts = [per[e.id] for e in p.experiences]
    assert max(counts) <= 5
    assert sum(2 <= k <= 5 for k in counts) >= 0.7 * len(counts)
    types = defaultdict(set)
    for c in p.candidates:
        types[c.experience].add(c.type)
    for e in p.experiences:
        if e.meta["kind"].startswith("chatter"):
            assert types[e.id] <= {"raw_span", "summary"}
            assert "raw_span" in types[e.id]
    kinds = Counter(u.kind for u in p.units)
    for kind in (
        "current_truth",
        "invalidation",
        "stale",
        "temporal_order",
        "temporal_interval",
        "preference",
        "fact",
        "context",
        "abstention",
    ):
        assert kinds[kind] > 0, kind
    assert {c.type for c in p.candidates} == set(OFFERED_TYPES)


def test_budgets_follow_total_cost():
    p = pkg(2, 200)
    total = p.total_cost()
    assert p.budget == math.ceil(0.1 * total)
    grid = sorted({math.ceil(f * total) for f in (0.01, 0.02, 0.05, 0.1, 0.2)})
    assert list(p.budgets) == grid
    assert all(float(b).is_integer() for b in p.budgets)
    q = event_graph(seed=2, n_experiences=200, budget_fraction=0.05)
    assert q.budget == math.ceil(0.05 * total)


# --------------------------------------------------------------------------- graph -> units


def test_supersession_chains_reflected_in_units():
    seed, n = 7, 400
    g = build_hidden_graph(seed, n)
    p = pkg(seed, n)
    units = {u.id: u for u in p.units}
    n_stale = n_inv = n_cur = 0
    for node, d in g.nodes(data=True):
        if d["type"] != "attribute":
            continue
        versions = list(g.successors(node))
        k = len(versions)
        assert [g.nodes[v]["index"] for v in versions] == list(range(k))
        for j in range(1, k):  # version j supersedes version j-1
            assert g.has_edge(versions[j], versions[j - 1])
            assert g.edges[versions[j], versions[j - 1]]["type"] == "SUPERSEDES"
        slug = g.nodes[d["entity"]]["slug"]
        attr = d["attr"]
        assert units[f"current:{slug}:{attr}"].kind == "current_truth"
        for j in range(k - 1):
            assert units[f"stale:{slug}:{attr}:{j}"].kind == "stale"
            assert units[f"inv:{slug}:{attr}:{j}"].kind == "invalidation"
        assert f"stale:{slug}:{attr}:{k - 1}" not in units
        n_stale += k - 1
        n_inv += k - 1
        n_cur += 1
    kinds = Counter(u.kind for u in p.units)
    assert (kinds["stale"], kinds["invalidation"], kinds["current_truth"]) == (
        n_stale,
        n_inv,
        n_cur,
    )
    summary = p.meta["graph"]
    assert summary["attributes"] == n_cur
    assert summary["supersessions"] == n_inv
    assert summary["versions"] == n_cur + n_stale
    assert n_inv > 0


def test_temporal_order_units_come_from_queried_before_edges():
    seed, n = 3, 400
    g = build_hidden_graph(seed, n)
    p = pkg(seed, n)
    orders = {u.id for u in p.units if u.kind == "temporal_order"}
    queried = set()
    for a, b, d in g.edges(data=True):
        if d["type"] == "BEFORE":
            assert g.nodes[a]["day"] < g.nodes[b]["day"]
            if d["queried"]:
                queried.add(f"order:{a}:{b}")
    assert orders == queried and orders
    # An explicit edge: the later event's turn names the earlier one, so its raw span covers it.
    raw = {c.experience: c for c in p.candidates if c.type == "raw_span"}
    exp_of_turn = {d["exp"]: d for _, d in g.nodes(data=True) if d["type"] == "turn"}
    explicit = [
        (a, b, d) for a, b, d in g.edges(data=True) if d["type"] == "BEFORE" and d["explicit"]
    ]
    assert explicit
    for a, b, d in explicit:
        exp = g.nodes[d["turn"]]["exp"]
        assert raw[exp].coverage[f"order:{a}:{b}"] == 1.0
        assert g.nodes[a]["noun"] in exp_of_turn[exp]["text"]


def test_coverage_follows_candidate_text():
    p = pkg(5, 500)
    kind = {u.id: u.kind for u in p.units}
    by_exp = defaultdict(dict)
    for c in p.candidates:
        by_exp[c.experience][c.type] = c
    exp_kind = {e.id: e.meta["kind"] for e in p.experiences}
    for exp, cands in by_exp.items():
        raw = cands["raw_span"].coverage
        # Atomic facts and summaries never state more than the whole turn.
        for t in ("atomic_fact", "summary"):
            if t in cands:
                for u, v in cands[t].coverage.items():
                    assert v <= raw.get(u, 0.0) + 1e-12, (cands[t].id, u)
        if "summary" in cands and not exp_kind[exp].startswith("interval"):
            # A summary keeps 0.6-0.8 of the main fact (intervals keep only the month).
            assert 0.6 <= max(cands["summary"].coverage.values()) <= 0.8
        if "tombstone" in cands:
            cov = cands["tombstone"].coverage
            assert {kind[u] for u in cov} <= {"invalidation", "stale"}
            assert any(kind[u] == "invalidation" and v == 1.0 for u, v in cov.items())
            atomic = cands["atomic_fact"].coverage
            assert len(atomic) == 1 and all(kind[u] != "invalidation" for u in atomic)
            compound = cands["compound_update"].coverage
            assert set(atomic) < set(compound)
            assert any(kind[u] == "invalidation" and v == 1.0 for u, v in compound.items())
        if "graph_edge" in cands:
            assert any(
                kind[u] == "fact" and v == 1.0 for u, v in cands["graph_edge"].coverage.items()
            )
        if "interval_fact" in cands:
            assert all(
                kind[u] in ("temporal_interval", "temporal_order")
                for u in cands["interval_fact"].coverage
            )
        if "abstention" in cands:
            assert [kind[u] for u in cands["abstention"].coverage] == ["abstention"]
    # Current-value queries weigh more than previous-value ones.
    w = {q.meta["category"]: q.weight for q in p.queries}
    assert w["now"] > w["still_latest"] > w["previous"]
    assert w["context"] < w["previous"] or w["context"] <= 0.3


# --------------------------------------------------------------------------- parameters


@pytest.mark.parametrize("rule", COST_RULES)
def test_cost_rules(rule):
    p = event_graph(seed=9, n_experiences=120, cost_rule=rule)
    check_invariants(p, rule)
    assert p.cost_unit == rule
    base = pkg(9, 120)
    # The cost rule changes costs only, never units, queries or coverage.
    assert [u.id for u in p.units] == [u.id for u in base.units]
    assert [(c.id, c.text, c.coverage) for c in p.candidates] == [
        (c.id, c.text, c.coverage) for c in base.candidates
    ]


def test_candidate_types_subset():
    p = event_graph(seed=6, n_experiences=150, candidate_types="raw_span, tombstone")
    assert {c.type for c in p.candidates} == {"raw_span", "tombstone"}
    base = pkg(6, 150)
    assert [u.id for u in p.units] == [u.id for u in base.units]
    assert [q.id for q in p.queries] == [q.id for q in base.queries]
    # Recorded in canonical form: offer order, no spaces (one package, one id).
    assert p.meta["params"]["candidate_types"] == "raw_span,tombstone"


def test_rates_shape_the_stream():
    calm = event_graph(seed=1, n_experiences=300, update_rate=0.0, distractor_rate=0.0)
    busy = event_graph(seed=1, n_experiences=300, update_rate=0.6, distractor_rate=0.5)

    def kinds(p):
        return Counter(e.meta["kind"] for e in p.experiences)

    assert kinds(calm)["chatter_topic"] + kinds(calm)["chatter_filler"] == 0
    assert kinds(busy)["chatter_topic"] + kinds(busy)["chatter_filler"] > 100
    assert kinds(busy)["update"] > kinds(calm)["update"]
    few = event_graph(seed=1, n_experiences=100, n_entities=3)
    assert few.meta["graph"]["entities"] == 3
    assert len({e.meta["speaker"] for e in few.experiences}) <= 3


@pytest.mark.parametrize(
    ("params", "needle"),
    [
        ({"n_experiences": 0}, "n_experiences must be an integer from 1"),
        ({"n_experiences": -3}, "n_experiences"),
        ({"n_experiences": 2.5}, "n_experiences"),
        ({"n_entities": -1}, "n_entities"),
        ({"update_rate": 1.5}, "update_rate must be a number in [0, 1]"),
        ({"distractor_rate": 1.0}, "distractor_rate"),
        ({"distractor_rate": float("nan")}, "distractor_rate"),
        ({"candidate_types": "raw_span,lorem"}, "unknown candidate type(s) 'lorem'"),
        ({"candidate_types": " , "}, "candidate_types"),
        ({"cost_rule": "tokens"}, "unknown cost_rule 'tokens'"),
        ({"budget_fraction": 0}, "budget_fraction must be a number in (0, 1]"),
        ({"budget_fraction": 2.0}, "budget_fraction"),
    ],
)
def test_bad_params_raise_clear_errors(params, needle):
    with pytest.raises(MemAuditError) as info:
        event_graph(seed=0, **params)
    assert needle in str(info.value)
    assert str(info.value).startswith("event_graph: ")


def test_bad_params_through_registry_and_graph():
    with pytest.raises(MemAuditError, match="n_experiences"):
        generate("event_graph", n_experiences="0")
    with pytest.raises(MemAuditError, match="n_experiences"):
        build_hidden_graph(0, 0)


# --------------------------------------------------------------------------- determinism


def test_deterministic_per_seed_and_different_across_seeds():
    a = dumps_package(event_graph(seed=11, n_experiences=300))
    b = dumps_package(event_graph(seed=11, n_experiences=300))
    c = dumps_package(event_graph(seed=12, n_experiences=300))
    assert a == b
    assert a != c
    g1, g2 = build_hidden_graph(11, 300), build_hidden_graph(11, 300)
    assert list(g1.nodes(data=True)) == list(g2.nodes(data=True))
    assert list(g1.edges(data=True)) == list(g2.edges(data=True))


def test_deterministic_across_processes():
    """Same bytes under different string-hash seeds (no set iteration leaks into output)."""
    code = (
        "import hashlib; from memaudit_core.generators.event_graph import event_graph;"
        "from memaudit_core.package import dumps_package;"
        "print(hashlib.sha256(dumps_package(event_graph(seed=5, n_experiences=250))"
        ".encode()).hexdigest())"
    )
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    digests = set()
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": root}
        out = subprocess.run(
            [sys.executable, "-c", code],
            env=env,
            cwd=root,
            check=True,
            capture_output=True,
            text=True,
        )
        digests.add(out.stdout.strip())
    import hashlib

    here = hashlib.sha256(
        dumps_package(event_graph(seed=5, n_experiences=250)).encode()
    ).hexdigest()
    assert digests == {here}


def test_meta_records_params_and_graph_summary():
    p = event_graph(seed=8, n_experiences=60, cost_rule="chars", budget_fraction=0.2)
    doc = package_to_dict(p)
    assert doc["meta"]["params"] == {
        "n_experiences": 60,
        "n_entities": 0,
        "update_rate": 0.25,
        "distractor_rate": 0.2,
        "candidate_types": "all",
        "cost_rule": "chars",
        "budget_fraction": 0.2,
    }
    assert doc["meta"]["seed"] == 8
    graph = doc["meta"]["graph"]
    assert graph["entities"] == 4 and graph["turns"] == 60
    assert all(isinstance(v, int) for v in graph.values())


# --------------------------------------------------------------------------- property


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(min_value=0, max_value=10**6),
    n=st.integers(min_value=1, max_value=60),
    update_rate=st.sampled_from([0.0, 0.25, 0.7, 1.0]),
    distractor_rate=st.sampled_from([0.0, 0.2, 0.6]),
    rule=st.sampled_from(COST_RULES),
)
def test_property_small_packages(seed, n, update_rate, distractor_rate, rule):
    p = event_graph(
        seed=seed,
        n_experiences=n,
        update_rate=update_rate,
        distractor_rate=distractor_rate,
        cost_rule=rule,
    )
    assert len(p.experiences) == n
    assert p.experiences[0].meta["kind"] != "chatter_filler"
    check_invariants(p, rule)
    kinds = Counter(u.kind for u in p.units)
    graph = p.meta["graph"]
    assert kinds["invalidation"] == kinds["stale"] == graph["supersessions"]
    assert kinds["current_truth"] == graph["attributes"]
    assert p.budget >= 1 and list(p.budgets) == sorted(set(p.budgets))
