"""An independent oracle for MemAudit's exactness tests (QA pass s19c), and its self-tests.

Written from DESIGN.md section 2 and the README's package format, *not* from
``memaudit_core.objective``: it never imports the core's objective, compiled instance or
solvers. It works on the package *dict* (the JSON document):

- weights: a unit's ``weight`` when given, else the sum of the weights (default 1) of the
  queries requiring it;
- a store is feasible at budget B when it holds at most ``k`` (1 unless said) candidates of
  each experience and its cost is at most B (1 + 1e-9) (README: "At most B allows B(1+1e-9)");
- F(X) = sum_r w_r h(sum_{u in X} a_ur) with h = min(1, z) (cap1), z (linear), ln(1 + z)
  (log1p).

For ``cap1`` and ``linear`` every number is a :class:`fractions.Fraction` (floats converted
exactly), so OPT is exact; ``log1p`` is evaluated with ``math.log1p`` and ``math.fsum``.

Other s19c test files import :func:`random_package`, :func:`oracle_opt`, :func:`oracle_value`
and :func:`feasible` from here (``tests`` is on pytest's pythonpath).
"""

from __future__ import annotations

import copy
import itertools
import math
import random
from fractions import Fraction

VALIDITY = {"tombstone", "compound_update"}
GENERIC = {"raw_span", "atomic_fact", "summary"}
TYPES = ["raw_span", "atomic_fact", "summary", "tombstone", "compound_update", "graph_edge"]
KINDS = ["current_truth", "invalidation", "stale", "temporal_order", "fact", "preference"]
SATURATIONS = ("cap1", "linear", "log1p")
BUDGET_RTOL = Fraction(1, 10**9)


# --------------------------------------------------------------------------- package maker


def _pick_number(rng: random.Random, style: str, lo: int, hi: int) -> float:
    """A positive number: dyadic (exact in binary: every float sum is exact) or decimal."""
    if style == "dyadic":
        return rng.randint(lo * 4, hi * 4) / 4
    if style == "int":
        return float(rng.randint(lo, hi))
    return round(rng.uniform(lo, hi), rng.choice([1, 2, 3]))


def random_package(
    seed: int,
    *,
    saturation: str | None = None,
    n_exp: tuple[int, int] = (1, 5),
    n_cand: tuple[int, int] = (0, 3),
    n_units: tuple[int, int] = (1, 6),
    style: str | None = None,
) -> dict:
    """A small random package dict (valid for ``memaudit_core.package.parse_package``).

    Varies: saturation, explicit vs query-derived weights (some 0), fractional and full
    coverage cells, empty coverage rows, experiences without candidates, equal costs,
    duplicated siblings (dominance), shuffled experience times (arrival order != file order),
    every candidate type.
    """
    rng = random.Random(seed)
    style = style or rng.choice(["dyadic", "int", "decimal"])
    sat = saturation or rng.choice(SATURATIONS)
    T = rng.randint(*n_exp)
    R = rng.randint(*n_units)
    times = list(range(T))
    rng.shuffle(times)
    experiences = []
    for t in range(T):
        e = {"id": f"e{t}"}
        if rng.random() < 0.8:
            e["time"] = times[t] if rng.random() < 0.8 else rng.randint(0, 2)
        experiences.append(e)
    units = []
    explicit = rng.random() < 0.5
    for r in range(R):
        u = {"id": f"u{r}", "kind": rng.choice(KINDS)}
        if explicit or rng.random() < 0.3:
            u["weight"] = 0.0 if rng.random() < 0.1 else _pick_number(rng, style, 0, 4)
        units.append(u)
    queries = []
    for q in range(rng.randint(0, 4)):
        req = rng.sample([u["id"] for u in units], rng.randint(1, min(3, R)))
        query = {"id": f"q{q}", "requires": req}
        if rng.random() < 0.6:
            query["weight"] = _pick_number(rng, style, 0, 3)
        queries.append(query)
    candidates = []
    k = 0
    for e in experiences:
        prev = None
        for _ in range(rng.randint(*n_cand)):
            if prev is not None and rng.random() < 0.15:
                # A sibling with the same coverage (dominance: same or dearer cost).
                cov = dict(prev["coverage"])
                cost = prev["cost"] + rng.choice([0, 0, 1])
            else:
                cov = {}
                for u in rng.sample(units, rng.randint(0, min(3, R))):
                    a = rng.choice([1.0, 1.0, 0.5, 0.25, 0.75])
                    if style == "decimal" and rng.random() < 0.3:
                        a = round(rng.uniform(0.05, 1.0), 2)
                    cov[u["id"]] = a
                cost = _pick_number(rng, style, 1, 5)
            cand = {
                "id": f"c{k}",
                "experience": e["id"],
                "type": rng.choice(TYPES),
                "cost": cost,
                "coverage": cov,
            }
            candidates.append(cand)
            prev = cand
            k += 1
    return {
        "memaudit": 1,
        "id": f"s19c-{seed}",
        "objective": {"saturation": sat},
        "experiences": experiences,
        "units": units,
        "queries": queries,
        "candidates": candidates,
    }


# --------------------------------------------------------------------------- the oracle


def weights_of(doc: dict) -> dict[str, Fraction]:
    from_q: dict[str, Fraction] = {}
    for q in doc.get("queries", []):
        w = Fraction(q.get("weight", 1))
        for r in q["requires"]:
            from_q[r] = from_q.get(r, Fraction(0)) + w
    out = {}
    for u in doc["units"]:
        w = u.get("weight")
        out[u["id"]] = Fraction(w) if w is not None else from_q.get(u["id"], Fraction(0))
    return out


def _h_exact(sat: str, z: Fraction) -> Fraction:
    if sat == "cap1":
        return min(Fraction(1), z)
    if sat == "linear":
        return z
    raise ValueError(sat)


def oracle_value(doc: dict, ids) -> Fraction | float:
    """F of the store ``ids`` (candidate ids): a Fraction for cap1 / linear, else a float."""
    sat = doc.get("objective", {}).get("saturation", "cap1")
    w = weights_of(doc)
    by_id = {c["id"]: c for c in doc["candidates"]}
    z: dict[str, Fraction] = {}
    for cid in ids:
        for r, a in by_id[cid]["coverage"].items():
            z[r] = z.get(r, Fraction(0)) + Fraction(a)
    if sat == "log1p":
        return math.fsum(float(w[r]) * math.log1p(float(v)) for r, v in z.items())
    return sum((w[r] * _h_exact(sat, v) for r, v in z.items()), Fraction(0))


def store_cost(doc: dict, ids) -> Fraction:
    by_id = {c["id"]: c for c in doc["candidates"]}
    return sum((Fraction(by_id[c]["cost"]) for c in ids), Fraction(0))


def budget_limit(budget: float) -> Fraction:
    b = Fraction(budget)
    return b + BUDGET_RTOL * abs(b)


def feasible(doc: dict, ids, budget: float, k: int = 1) -> bool:
    """At most ``k`` per experience, no repeats, known ids, cost <= B (1 + 1e-9) exactly."""
    ids = list(ids)
    by_id = {c["id"]: c for c in doc["candidates"]}
    if len(set(ids)) != len(ids) or any(c not in by_id for c in ids):
        return False
    per: dict[str, int] = {}
    for c in ids:
        e = by_id[c]["experience"]
        per[e] = per.get(e, 0) + 1
        if per[e] > k:
            return False
    return store_cost(doc, ids) <= budget_limit(budget)


def _options(doc: dict, types: set[str] | None, k: int) -> list[list[tuple[str, ...]]]:
    """Per experience, the subsets of at most ``k`` of its (allowed) candidates."""
    groups: dict[str, list[str]] = {e["id"]: [] for e in doc["experiences"]}
    for c in doc["candidates"]:
        if types is None or c["type"] in types:
            groups[c["experience"]].append(c["id"])
    out = []
    for members in groups.values():
        opts = [()]
        for size in range(1, min(k, len(members)) + 1):
            opts.extend(itertools.combinations(members, size))
        out.append(opts)
    return out


def store_count(doc: dict, k: int = 1) -> int:
    n = 1
    for opts in _options(doc, None, k):
        n *= len(opts)
    return n


def oracle_opt(
    doc: dict, budget: float, *, types: set[str] | None = None, k: int = 1
) -> tuple[Fraction | float, tuple[str, ...]]:
    """(OPT, one optimal store) by brute force over every feasible store.

    ``types`` restricts the pool to candidates of those types (an ablation as the README
    defines it: the optimum over a filtered candidate pool). Budget pruning only (a partial
    store over the limit cannot become feasible: costs are positive).
    """
    sat = doc.get("objective", {}).get("saturation", "cap1")
    w = weights_of(doc)
    exact = sat != "log1p"
    conv = Fraction if exact else float
    by_id = {c["id"]: c for c in doc["candidates"]}
    cost = {c: Fraction(by_id[c]["cost"]) for c in by_id}
    cov = {c: {r: conv(a) for r, a in by_id[c]["coverage"].items()} for c in by_id}
    limit = budget_limit(budget)
    groups = _options(doc, types, k)
    best_val: Fraction | float = -1
    best_store: tuple[str, ...] = ()

    def value(z: dict) -> Fraction | float:
        if exact:
            return sum((w[r] * _h_exact(sat, v) for r, v in z.items()), Fraction(0))
        return math.fsum(float(w[r]) * math.log1p(v) for r, v in z.items())

    def rec(g: int, spent: Fraction, z: dict, chosen: list[str]) -> None:
        nonlocal best_val, best_store
        if g == len(groups):
            v = value(z)
            if v > best_val:
                best_val, best_store = v, tuple(chosen)
            return
        for opt in groups[g]:
            c = spent + sum((cost[x] for x in opt), Fraction(0))
            if c > limit:
                continue
            if opt:
                z2 = dict(z)
                for x in opt:
                    for r, a in cov[x].items():
                        z2[r] = z2.get(r, 0) + a
            else:
                z2 = z
            rec(g + 1, c, z2, chosen + list(opt))

    rec(0, Fraction(0), {}, [])
    return best_val, best_store


def close(reported: float, exact: Fraction | float, rtol: float = 1e-9) -> bool:
    """``reported`` (a float from the core) equals ``exact`` within ``rtol`` of max(1, |x|)."""
    return abs(Fraction(reported) - Fraction(exact)) <= Fraction(rtol) * max(
        Fraction(1), abs(Fraction(exact))
    )


def union_doc(doc: dict, store: dict) -> dict:
    """The package with an external store's memories as one-candidate experiences of their own
    (the union the README scores an export against), without its stores."""
    d = copy.deepcopy(doc)
    d.pop("stores", None)
    for m in store["memories"]:
        gid = f"{store['id']}/{m['id']}"
        d["experiences"].append({"id": gid})
        d["candidates"].append(
            {
                "id": m["id"],
                "experience": gid,
                "type": "external",
                "cost": m["cost"],
                "coverage": m["coverage"],
            }
        )
    return d


def interesting_budgets(doc: dict, rng: random.Random, n: int = 4) -> list[float]:
    """Budgets around the package's costs: 0, single costs, sums of two, their halves."""
    costs = sorted({c["cost"] for c in doc["candidates"]}) or [1.0]
    pool = [0.0, *costs, max(costs) * 3, sum(costs)]
    pool += [a + b for a, b in itertools.combinations(costs, 2)]
    pool += [c / 2 for c in costs]
    return sorted({float(b) for b in rng.sample(pool, min(n, len(pool)))})


# --------------------------------------------------------------------------- self-tests


def test_oracle_hand_example():
    """Two experiences; cap1 saturates a unit covered twice; the budget edge is inclusive."""
    doc = {
        "objective": {"saturation": "cap1"},
        "experiences": [{"id": "a"}, {"id": "b"}],
        "units": [{"id": "x", "weight": 2}, {"id": "y"}],
        "queries": [{"id": "q", "requires": ["y", "x"], "weight": 0.5}],
        "candidates": [
            {"id": "a1", "experience": "a", "type": "t", "cost": 1, "coverage": {"x": 0.75}},
            {"id": "a2", "experience": "a", "type": "t", "cost": 2, "coverage": {"y": 1}},
            {"id": "b1", "experience": "b", "type": "t", "cost": 2, "coverage": {"x": 0.5}},
        ],
    }
    assert weights_of(doc) == {"x": 2, "y": Fraction(1, 2)}
    assert oracle_value(doc, ["a1", "b1"]) == 2  # min(1, 1.25) * 2
    assert oracle_opt(doc, 3) == (2, ("a1", "b1"))
    assert oracle_opt(doc, 2.9)[0] == Fraction(3, 2)  # a1 alone
    assert not feasible(doc, ["a1", "a2"], 10)
    assert oracle_opt(doc, 10, k=2)[0] == Fraction(5, 2)
    doc["objective"]["saturation"] = "linear"
    assert oracle_opt(doc, 3)[0] == Fraction(5, 2)


def test_oracle_matches_plain_enumeration():
    """The pruned recursion equals an unpruned product over every store (small packages)."""
    for seed in range(200):
        doc = random_package(seed, n_exp=(1, 4), n_cand=(0, 3))
        rng = random.Random(seed)
        for b in interesting_budgets(doc, rng):
            best = max(
                oracle_value(doc, [x for o in combo for x in o])
                for combo in itertools.product(*_options(doc, None, 1))
                if feasible(doc, [x for o in combo for x in o], b)
            )
            assert oracle_opt(doc, b)[0] == best
