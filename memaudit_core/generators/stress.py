"""The paper's other stress families (reference/PAPER_FAMILIES.md, "Other stress families").

Five small seeded families, each built to trap one kind of writer:

- ``density_trap``: a cheap, dense "lure" fact shared by every experience beats the specific
  facts on marginal density, but not on value.
- ``scope_shift``: a preference whose value depends on its scope; generic summaries lose the
  scope, and a cross-scope review summary is a tempting but shallow catch-all.
- ``summary_tradeoff``: two facts per episode; one fact, a compressed summary, a balanced
  summary or the raw span, at rising cost.
- ``redundancy_heavy``: a core unit repeated in every experience; after the first copy, only
  the per-experience tail is worth paying for.
- ``abstention_hard``: half the experiences should be remembered as "do not answer"; an
  overconfident fact there is nearly worthless, while elsewhere an abstention is unneeded.

The structure (units, candidates, costs, coverage) follows the published description; unit
weights are drawn from ``random.Random((seed + 1) * 1000003 + salt)`` with one salt per family.
The published values do not depend on these families' exact seeded weights.

Unit kinds used (DESIGN.md vocabulary): shared lure / specific / core / tail / primary /
secondary / answer units are ``fact``; scoped preferences are ``preference``; context, scope
context and local units are ``context``; abstention conditions (needed or not) are
``abstention``; conflicting-source evidence is ``provenance`` when it backs an answer and
``fact`` when it records the conflict itself; an unsupported guessed value is ``stale`` (a
low-weight value that should not be relied on).

Examples
--------
>>> pkg = density_trap(seed=0)
>>> len(pkg.experiences), len(pkg.candidates), len(pkg.units)
(5, 20, 9)
>>> pkg.meta["generator"], pkg.meta["params"]
('density_trap', {'n_experiences': 5})
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from ..package import Package
from .base import Family, check_count, titled, variant_names
from .paper import PAPER_BUDGETS, _Builder

#: One salt per family, so that two families never share a random stream for one seed.
SALTS = {
    "density_trap": 11,
    "scope_shift": 23,
    "summary_tradeoff": 37,
    "redundancy_heavy": 41,
    "abstention_hard": 53,
}

DEFAULT_BUDGET = 6


def _rng(family: str, seed: int) -> random.Random:
    return random.Random((seed + 1) * 1000003 + SALTS[family])


def _w(x: float) -> float:
    """A drawn weight rounded to 6 decimals, so 1.45 + 0.15 * 2 is written as 1.75."""
    return round(x, 6)


def _pick(options: list[str], i: int) -> str:
    """A readable label that stays unique when ``i`` runs past the list."""
    base = options[i % len(options)]
    return base if i < len(options) else f"{base} (#{i + 1})"


class _StressBuilder(_Builder):
    """:class:`_Builder` whose candidate ids take a suffix when a type repeats in a group."""

    def candidate(  # type: ignore[override]
        self,
        exp_id: str,
        ctype: str,
        cost: float,
        coverage: dict[str, float],
        text: str = "",
        name: str | None = None,
    ) -> None:
        super().candidate(exp_id, ctype, cost, coverage, text)
        if name is not None:
            self.candidates[-1]["id"] = f"{exp_id}_{name}"


def _finish(
    b: _Builder,
    build: Callable[..., Package],
    seed: int,
    params: dict[str, Any],
    title: str,
    description: str,
) -> Package:
    family = build.__name__
    id_tag, details = variant_names(build, params)
    return b.package(
        f"{family}-s{seed}{id_tag}",
        titled(title, [f"seed {seed}", *details]),
        description,
        {"generator": family, "params": params, "seed": seed},
        list(PAPER_BUDGETS),
        DEFAULT_BUDGET,
    )


# --------------------------------------------------------------------------- density_trap

_MOVE_DETAILS = [
    "the lease on the new flat starts on 1 March",
    "the removal van is booked with Hartley & Sons for 8 am",
    "the broadband engineer can only come on a Tuesday",
    "the old landlord still holds a 900 euro deposit",
    "the piano needs a specialist mover with a ramp",
    "the cat stays with my sister during move week",
    "the parking permit for the new street costs 60 euros",
    "the keys are picked up from the agency on Foster Road",
]


def density_trap(seed: int = 0, n_experiences: int = 5) -> Package:
    """A shared cheap lure fact against per-experience specific facts.

    Per experience: lure atomic_fact c 1 {lure 0.55, specific 0.05}; specific atomic_fact c 2
    {specific 1}; summary c 3 {specific 0.7, lure 0.25, context 0.35}; raw_span c 4
    {specific 1, context 0.6, lure 0.15}. Lure w 2.2; specific w 1.45 + 0.15 * randrange(3);
    one context unit per pair of experiences, w 0.3.

    Examples
    --------
    >>> pkg = density_trap(seed=1)
    >>> sorted({c.id.split("_", 2)[-1] for c in pkg.candidates})
    ['lure_fact', 'raw_span', 'specific_fact', 'summary']
    """
    n = check_count("density_trap", "n_experiences", n_experiences, 1)
    rng = _rng("density_trap", seed)
    b = _StressBuilder()
    lure = b.unit("lure", "fact", 2.2, "The user is in the middle of a house move")
    for i in range(n):
        detail = _pick(_MOVE_DETAILS, i)
        specific = b.unit(f"specific_{i}", "fact", _w(1.45 + 0.15 * rng.randrange(3)), detail)
        context = b.unit(
            f"context_{i // 2}",
            "context",
            0.3,
            f"background of move notes {2 * (i // 2)}-{2 * (i // 2) + 1}",
        )
        text = f"User: Another thing for the move: {detail}. This move is taking over my life."
        exp = b.experience(f"trap_{i}", i, text, session=f"s{i // 2 + 1}")
        b.candidate(
            exp,
            "atomic_fact",
            1,
            {lure: 0.55, specific: 0.05},
            "User is moving house.",
            name="lure_fact",
        )
        b.candidate(
            exp,
            "atomic_fact",
            2,
            {specific: 1.0},
            detail[0].upper() + detail[1:] + ".",
            name="specific_fact",
        )
        b.candidate(
            exp, "summary", 3, {specific: 0.7, lure: 0.25, context: 0.35}, f"Move note: {detail}."
        )
        b.candidate(exp, "raw_span", 4, {specific: 1.0, context: 0.6, lure: 0.15}, text)
    return _finish(
        b,
        density_trap,
        seed,
        {"n_experiences": n},
        "density_trap",
        "Density stress: every experience offers a one-word-cheap 'lure' fact about a shared "
        "topic that wins on value per cost but repeats the same evidence; the specific facts "
        "carry the value.",
    )


# --------------------------------------------------------------------------- scope_shift

_SCOPES = [
    ("work trips", "an aisle seat near the front", "I need to get off quickly for meetings"),
    ("family holidays", "three seats together by the window", "the kids want to look out"),
    ("weekend city breaks", "hand luggage only", "we never stay more than two nights"),
    (
        "conference travel",
        "a hotel within walking distance of the venue",
        "I hate taxis at rush hour",
    ),
    ("ski trips", "a ski bag and an early morning flight", "we want a full first day"),
    ("visits to my parents", "the train instead of a flight", "the station is next to their house"),
]


def scope_shift(seed: int = 0, n_scopes: int = 4) -> Package:
    """Scoped preferences, generic summaries that drop the scope, and a cross-scope review.

    Per scope: scoped preference w 1.6 + 0.2 * randrange(3), scope context w 0.55, a generic
    unit w 0.35; candidates atomic_fact c 2 {scoped 1}, generic summary c 2 {generic 0.8,
    scoped 0.35}, scoped summary c 3 {scoped 0.75, context 0.8}, raw_span c 5 {scoped 1,
    context 1, generic 0.2}. A final review experience offers one summary c 4 covering every
    scoped unit at 0.42 and every context at 0.35.

    Examples
    --------
    >>> pkg = scope_shift()
    >>> len(pkg.experiences), len(pkg.candidates), len(pkg.units)
    (5, 17, 12)
    """
    n = check_count("scope_shift", "n_scopes", n_scopes, 1)
    rng = _rng("scope_shift", seed)
    b = _StressBuilder()
    scoped_units: list[str] = []
    context_units: list[str] = []
    labels: list[tuple[str, str]] = []
    for j in range(n):
        scope, pref, why = _SCOPES[j % len(_SCOPES)]
        if j >= len(_SCOPES):
            scope = f"{scope} (#{j + 1})"
        labels.append((scope, pref))
        scoped = b.unit(
            f"scoped_{j}", "preference", _w(1.6 + 0.2 * rng.randrange(3)), f"For {scope}: {pref}"
        )
        context = b.unit(f"scope_context_{j}", "context", 0.55, f"Why {scope} differ: {why}")
        generic = b.unit(f"generic_{j}", "fact", 0.35, "The user likes travel to be easy")
        scoped_units.append(scoped)
        context_units.append(context)
        text = (
            f"User: For {scope}, I always want {pref}, because {why}. "
            "Generally I just like travel to be easy."
        )
        exp = b.experience(f"scope_{j}", j, text, session=f"s{j + 1}")
        b.candidate(exp, "atomic_fact", 2, {scoped: 1.0}, f"For {scope}, user wants {pref}.")
        b.candidate(
            exp,
            "summary",
            2,
            {generic: 0.8, scoped: 0.35},
            f"User likes easy travel; mentioned {pref}.",
            name="generic_summary",
        )
        b.candidate(
            exp,
            "summary",
            3,
            {scoped: 0.75, context: 0.8},
            f"{scope[0].upper() + scope[1:]}: {pref} ({why}).",
            name="scoped_summary",
        )
        b.candidate(exp, "raw_span", 5, {scoped: 1.0, context: 1.0, generic: 0.2}, text)
    review_text = (
        "Assistant: Let me recap how your preferences differ by kind of trip: "
        + "; ".join(f"{scope}: {pref}" for scope, pref in labels)
        + "."
    )
    review = b.experience("review", n, review_text, session=f"s{n + 1}")
    coverage = {u: 0.42 for u in scoped_units}
    coverage.update({u: 0.35 for u in context_units})
    b.candidate(
        review,
        "summary",
        4,
        coverage,
        "Preferences vary by trip type (" + ", ".join(s for s, _ in labels) + ").",
    )
    return _finish(
        b,
        scope_shift,
        seed,
        {"n_scopes": n},
        "scope_shift",
        "Scope stress: a preference whose value depends on the kind of trip. Generic summaries "
        "lose the scope; a cross-scope review summary covers everything a little.",
    )


# --------------------------------------------------------------------------- summary_tradeoff

_EPISODES = [
    ("ship the beta on 12 May", "Priya owns the release notes", "the demo slipped twice"),
    ("drop the Android tablet layout", "Marco tells the design team", "usage is under 2%"),
    ("move standup to 9:30", "Lena updates the calendar invite", "two people start late"),
    ("switch invoicing to Stripe", "Tom migrates the old customers", "fees went up"),
    ("freeze the API until June", "Aisha reviews any exception", "partners asked for stability"),
    ("hire a second QA engineer", "Ken drafts the job ad", "bug backlog doubled"),
]


def summary_tradeoff(seed: int = 0, n_episodes: int = 5) -> Package:
    """Two facts per episode against compressed, balanced and raw summaries.

    Per episode: primary w 1.35 + 0.15 * randrange(3), secondary w 1.0 + 0.1 * randrange(2)
    (drawn in that order), context w 0.35; primary fact c 2, secondary fact c 2, compressed
    summary c 2 {0.45, 0.45, context 0.25}, balanced summary c 3 {0.72, 0.72, context 0.45},
    raw_span c 5 {1, 1, context 0.85}.

    Examples
    --------
    >>> pkg = summary_tradeoff()
    >>> len(pkg.experiences), len(pkg.candidates), len(pkg.units)
    (5, 25, 15)
    """
    n = check_count("summary_tradeoff", "n_episodes", n_episodes, 1)
    rng = _rng("summary_tradeoff", seed)
    b = _StressBuilder()
    for i in range(n):
        decision, owner, why = _EPISODES[i % len(_EPISODES)]
        tag = "" if i < len(_EPISODES) else f" (#{i + 1})"
        primary = b.unit(
            f"primary_{i}", "fact", _w(1.35 + 0.15 * rng.randrange(3)), f"Decision{tag}: {decision}"
        )
        secondary = b.unit(
            f"secondary_{i}", "fact", _w(1.0 + 0.1 * rng.randrange(2)), f"Owner{tag}: {owner}"
        )
        context = b.unit(f"context_{i}", "context", 0.35, f"Reason{tag}: {why}")
        text = f"Meeting {i + 1}: We decided to {decision}, since {why}. Action item: {owner}."
        exp = b.experience(f"episode_{i}", i, text, session=f"meeting-{i + 1}")
        b.candidate(
            exp, "atomic_fact", 2, {primary: 1.0}, f"Decided to {decision}.", name="primary_fact"
        )
        b.candidate(exp, "atomic_fact", 2, {secondary: 1.0}, f"{owner}.", name="secondary_fact")
        b.candidate(
            exp,
            "summary",
            2,
            {primary: 0.45, secondary: 0.45, context: 0.25},
            f"Meeting {i + 1}: {decision.split()[0]} decision, action assigned.",
            name="compressed_summary",
        )
        b.candidate(
            exp,
            "summary",
            3,
            {primary: 0.72, secondary: 0.72, context: 0.45},
            f"Meeting {i + 1}: {decision}; {owner}.",
            name="balanced_summary",
        )
        b.candidate(exp, "raw_span", 5, {primary: 1.0, secondary: 1.0, context: 0.85}, text)
    return _finish(
        b,
        summary_tradeoff,
        seed,
        {"n_episodes": n},
        "summary_tradeoff",
        "Summary stress: each meeting holds a decision and an action item; a writer chooses one "
        "fact, a compressed or balanced summary, or the costly raw notes.",
    )


# --------------------------------------------------------------------------- redundancy_heavy

_TAILS = [
    "the orders table is migrated first",
    "read replicas go live in week two",
    "the reporting jobs move last",
    "MySQL stays read-only for a month",
    "Grace signs off the cut-over plan",
    "the rollback script lives in ops/rollback.sh",
    "customer IDs keep their old format",
    "the staging copy refreshes nightly",
]


def redundancy_heavy(seed: int = 0, n_experiences: int = 5) -> Package:
    """A core unit repeated in every experience; only the per-experience tails add value.

    Core w 2.4 (shared); tail_i w 1.0 + 0.15 * randrange(3); local context per pair w 0.3.
    Per experience: core fact c 2 {core 0.85}; tail fact c 2 {tail 1}; summary c 3 {core 0.6,
    tail 0.8, local 0.25}; raw_span c 4 {core 1, tail 1, local 0.4}.

    Examples
    --------
    >>> pkg = redundancy_heavy()
    >>> len(pkg.experiences), len(pkg.candidates), len(pkg.units)
    (5, 20, 9)
    """
    n = check_count("redundancy_heavy", "n_experiences", n_experiences, 1)
    rng = _rng("redundancy_heavy", seed)
    b = _StressBuilder()
    core = b.unit("core", "fact", 2.4, "The team is migrating from MySQL to Postgres")
    for i in range(n):
        detail = _pick(_TAILS, i)
        tail = b.unit(f"tail_{i}", "fact", _w(1.0 + 0.15 * rng.randrange(3)), detail)
        local = b.unit(
            f"local_{i // 2}",
            "context",
            0.3,
            f"context of migration notes {2 * (i // 2)}-{2 * (i // 2) + 1}",
        )
        text = f"User: Reminder, we're migrating from MySQL to Postgres. New detail: {detail}."
        exp = b.experience(f"note_{i}", i, text, session=f"s{i // 2 + 1}")
        b.candidate(
            exp,
            "atomic_fact",
            2,
            {core: 0.85},
            "Team migrating MySQL to Postgres.",
            name="core_fact",
        )
        b.candidate(
            exp,
            "atomic_fact",
            2,
            {tail: 1.0},
            detail[0].upper() + detail[1:] + ".",
            name="tail_fact",
        )
        b.candidate(
            exp, "summary", 3, {core: 0.6, tail: 0.8, local: 0.25}, f"Postgres migration: {detail}."
        )
        b.candidate(exp, "raw_span", 4, {core: 1.0, tail: 1.0, local: 0.4}, text)
    return _finish(
        b,
        redundancy_heavy,
        seed,
        {"n_experiences": n},
        "redundancy_heavy",
        "Redundancy stress: every note repeats the same core fact; once it is stored, only the "
        "new detail in each note is worth paying for.",
    )


# --------------------------------------------------------------------------- abstention_hard

_CONFLICTS = [
    ("the gate for flight LH 902", "B12", "B18"),
    ("the hotel check-in time", "2 pm", "4 pm"),
    ("the dinner reservation date", "Friday", "Saturday"),
    ("the visa fee", "60 euros", "80 euros"),
]
_ANSWERS = [
    ("the rental car pickup", "desk 4 in terminal 2", "the booking email"),
    ("the museum tickets", "10:30 on Sunday", "the ticket PDF"),
    ("the train platform to Brno", "platform 3", "the station app"),
    ("the conference badge pickup", "hall A from 8 am", "the organiser's letter"),
]


def abstention_hard(seed: int = 0, n_experiences: int = 5) -> Package:
    """Alternating experiences: conflicting sources (abstain) and answerable questions.

    Even i: abstain unit w 2.0 + 0.15 * randrange(3) (abstention), conflict w 0.9 (fact),
    unsupported w 0.05 (stale); candidates overconfident atomic_fact c 2 {unsupported 1},
    abstention marker c 1 {abstain 1}, uncertainty marker c 2 {abstain 0.8, conflict 1},
    raw_span c 4 {abstain 0.9, conflict 1, unsupported 0.1}, summary c 3 {abstain 0.65,
    conflict 0.7}.

    Odd i: answer w 1.75 + 0.15 * randrange(2) (fact), evidence w 0.55 (provenance), an
    unneeded abstention w 0.2 (abstention); candidates atomic_fact c 2 {answer 1}, abstention
    marker c 1 {unneeded 1}, raw_span c 4 {answer 1, evidence 1}, summary c 3 {answer 0.75,
    evidence 0.6}. (The published description leaves the odd candidates open; these mirror
    the even ones.)

    Examples
    --------
    >>> pkg = abstention_hard()
    >>> len(pkg.experiences), len(pkg.candidates), len(pkg.units)
    (5, 23, 15)
    """
    n = check_count("abstention_hard", "n_experiences", n_experiences, 1)
    rng = _rng("abstention_hard", seed)
    b = _StressBuilder()
    for i in range(n):
        if i % 2 == 0:
            topic, first, second = _CONFLICTS[(i // 2) % len(_CONFLICTS)]
            tag = "" if i // 2 < len(_CONFLICTS) else f" (#{i // 2 + 1})"
            abstain = b.unit(
                f"abstain_{i}",
                "abstention",
                _w(2.0 + 0.15 * rng.randrange(3)),
                f"Do not state {topic}{tag}: the sources conflict",
            )
            conflict = b.unit(
                f"conflict_{i}",
                "fact",
                0.9,
                f"Sources disagree on {topic}{tag}: {first} vs {second}",
            )
            unsupported = b.unit(
                f"unsupported_{i}", "stale", 0.05, f"{topic}{tag} is {first} (unsupported)"
            )
            text = (
                f"User: The app says {topic} is {first}, but the email says {second}. "
                "No idea which one is right yet."
            )
            exp = b.experience(f"ask_{i}", i, text, session=f"s{i // 2 + 1}")
            b.candidate(
                exp,
                "atomic_fact",
                2,
                {unsupported: 1.0},
                f"{topic[0].upper() + topic[1:]} is {first}.",
            )
            b.candidate(exp, "abstention", 1, {abstain: 1.0}, f"Unknown: {topic}; do not answer.")
            b.candidate(
                exp,
                "uncertainty",
                2,
                {abstain: 0.8, conflict: 1.0},
                f"Uncertain: {topic} is {first} or {second}.",
            )
            b.candidate(exp, "raw_span", 4, {abstain: 0.9, conflict: 1.0, unsupported: 0.1}, text)
            b.candidate(
                exp, "summary", 3, {abstain: 0.65, conflict: 0.7}, f"Conflicting info on {topic}."
            )
        else:
            topic, value, source = _ANSWERS[(i // 2) % len(_ANSWERS)]
            tag = "" if i // 2 < len(_ANSWERS) else f" (#{i // 2 + 1})"
            answer = b.unit(
                f"answer_{i}", "fact", _w(1.75 + 0.15 * rng.randrange(2)), f"{topic}{tag}: {value}"
            )
            evidence = b.unit(
                f"evidence_{i}", "provenance", 0.55, f"{topic}{tag} is confirmed by {source}"
            )
            unneeded = b.unit(
                f"no_abstain_{i}",
                "abstention",
                0.2,
                f"{topic}{tag} is answerable (no abstention needed)",
            )
            text = f"User: Confirmed — {topic} is {value}, it says so in {source}."
            exp = b.experience(f"ask_{i}", i, text, session=f"s{i // 2 + 1}")
            b.candidate(
                exp, "atomic_fact", 2, {answer: 1.0}, f"{topic[0].upper() + topic[1:]}: {value}."
            )
            b.candidate(
                exp, "abstention", 1, {unneeded: 1.0}, f"{topic[0].upper() + topic[1:]} is known."
            )
            b.candidate(exp, "raw_span", 4, {answer: 1.0, evidence: 1.0}, text)
            b.candidate(
                exp,
                "summary",
                3,
                {answer: 0.75, evidence: 0.6},
                f"{topic[0].upper() + topic[1:]} confirmed: {value}.",
            )
    return _finish(
        b,
        abstention_hard,
        seed,
        {"n_experiences": n},
        "abstention_hard",
        "Abstention stress: where sources conflict the valuable memory says 'do not answer' "
        "(an overconfident fact is nearly worthless); where they agree, the answer matters and "
        "an abstention marker is not needed.",
    )


FAMILY_RECORDS: list[Family] = [
    Family(
        "density_trap",
        density_trap,
        True,
        "Stress: a cheap shared lure fact beats specific facts on density, not on value.",
        {"n_experiences": "experiences (one specific fact each; context shared per pair)"},
        lambda n_experiences: 13 * n_experiences,
    ),
    Family(
        "scope_shift",
        scope_shift,
        True,
        "Stress: scoped preferences; generic summaries drop the scope; a cross-scope review.",
        {"n_scopes": "scopes (one experience each, plus one review experience)"},
        lambda n_scopes: 14 * n_scopes,
    ),
    Family(
        "summary_tradeoff",
        summary_tradeoff,
        True,
        "Stress: two facts per episode against compressed, balanced and raw summaries.",
        {"n_episodes": "episodes (one experience each)"},
        lambda n_episodes: 16 * n_episodes,
    ),
    Family(
        "redundancy_heavy",
        redundancy_heavy,
        True,
        "Stress: a core fact repeated in every experience; only the tails add value.",
        {"n_experiences": "experiences (one tail unit each; local context shared per pair)"},
        lambda n_experiences: 12 * n_experiences,
    ),
    Family(
        "abstention_hard",
        abstention_hard,
        True,
        "Stress: conflicting sources call for abstention; answerable ones do not.",
        {"n_experiences": "experiences (even: conflicting sources; odd: answerable)"},
        lambda n_experiences: 12 * n_experiences,
    ),
]
