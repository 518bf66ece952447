"""Bundled blind example writers: they use only what :class:`~memaudit_core.plugins.BlindView`
shows (experience ids, times, sessions and texts; candidate ids, types, texts and costs; the
budget), never weights, coverage, units or queries. They run in the isolated worker like any
third-party blind writer, and serve as templates for writing one.

- :func:`recency` — newest experiences first, the cheapest candidate of each while it fits.
- :func:`compact_validity` — newest first, preferring compact validity types.
- :func:`estimated_gvt` — the paper's non-oracle variant of GVT: the grouped value threshold
  run on a *value estimate* from visible features instead of exact package marginals.

The value estimate of :func:`estimated_gvt`
-------------------------------------------
For a candidate u with type t, text x, cost c and experience at arrival rank k of T::

    value_hat(u) = prior[t] * (1 + 0.15*numbers(x) + 0.15*dates(x) + 0.30*negation(x))
                            * (1 + 0.5 * k / max(T - 1, 1))

- ``prior`` is a fixed guess of how much evidence a representation carries (compound_update
  1.0, raw_span 0.9, tombstone / interval_fact 0.8, atomic_fact 0.7, summary / graph_edge /
  abstention / uncertainty 0.6, anything else 0.5);
- ``numbers``, ``dates`` and ``negation`` are 0/1 text features: a digit or a number word; a
  month, weekday, ``yyyy-mm-dd`` date or a time word (today, ago, since, until, ...); a
  negation or update word (not, no longer, never, instead, now, anymore, stopped, changed,
  moved, cancelled, superseded, ...) — the words that mark validity-bearing text;
- the recency factor favours later experiences, which more often hold the current truth.

The marginal of u given the kept set K discounts redundancy by word overlap::

    marginal_hat(u | K) = value_hat(u) * (1 - |W(u) & W(K)| / |W(u)|)

where W is the set of lowercase content words (letters and digits, stop words dropped) of a
text, W(K) the union over kept texts; a text without content words has no redundancy.

GVT then runs unchanged on these estimates: thresholds are the distinct estimated densities
value_hat(u) / c_u of the candidates that fit, plus 0, highest first (at most 48, taken as
evenly spaced ranks when there are more, to bound the run time on large packages); for each
threshold one pass over experiences in arrival order keeps, per experience, the fitting
candidate with marginal_hat / c >= threshold and the largest (marginal_hat, -cost, smaller id);
the pass with the largest estimated value (sum of marginals at insertion) wins, ties to the
lower cost, then the higher threshold. Nothing guarantees a ratio: the estimate is a guess
from the surface of the text, which is exactly what a deployed writer has.
"""

from __future__ import annotations

import re

from .plugins import BlindView, CandidateView, blind_writer

VALIDITY_TYPES = ("compound_update", "tombstone")

TYPE_PRIOR = {
    "compound_update": 1.0,
    "raw_span": 0.9,
    "tombstone": 0.8,
    "interval_fact": 0.8,
    "atomic_fact": 0.7,
    "summary": 0.6,
    "graph_edge": 0.6,
    "abstention": 0.6,
    "uncertainty": 0.6,
}
DEFAULT_PRIOR = 0.5
MAX_THRESHOLDS = 48

_NUMBER = re.compile(
    r"\d|\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|"
    r"forty|fifty|hundred|thousand|dozen|half)\b",
    re.IGNORECASE,
)
_DATE = re.compile(
    r"\b\d{4}-\d{2}-\d{2}\b|\b(jan(uary)?|feb(ruary)?|mar(ch)?|apr(il)?|may|june?|july?|"
    r"aug(ust)?|sep(t(ember)?)?|oct(ober)?|nov(ember)?|dec(ember)?|monday|tuesday|wednesday|"
    r"thursday|friday|saturday|sunday|today|tomorrow|yesterday|tonight|week|weeks|month|"
    r"months|year|years|ago|since|until|before|after|during|from|next|last)\b",
    re.IGNORECASE,
)
_NEGATION = re.compile(
    r"\b(not|no|never|none|nobody|nothing|instead|now|anymore|any more|longer|stop|stopped|"
    r"quit|changed|change|moved|switched|cancel|cancelled|canceled|replaced|superseded|"
    r"obsolete|outdated|former|formerly|previously|update|updated|no longer|isn't|aren't|"
    r"wasn't|don't|doesn't|didn't|won't|can't)\b|n't\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    "a an and are as at be been but by for from had has have he her his i if in into is it its "
    "me my of on or our she so than that the their them then there these they this to was we "
    "were what when which who will with you your user assistant about also just very".split()
)


def _cheapest_fitting(view: BlindView, options: list[CandidateView], spent: float):
    for c in sorted(options, key=lambda c: (c.cost, c.id)):
        if view.fits(spent, c.cost):
            return c
    return None


@blind_writer(
    "recency",
    "Blind: newest experiences first, the cheapest candidate of each while it fits.",
)
def recency(view: BlindView) -> list[str]:
    """Newest experiences first; keep each one's cheapest candidate if it still fits."""
    kept: list[str] = []
    spent = 0.0
    for exp in view.newest_first():
        cands = view.candidates_of(exp.id)
        if not cands:
            continue
        cheapest = min(cands, key=lambda c: (c.cost, c.id))
        if view.fits(spent, cheapest.cost):
            kept.append(cheapest.id)
            spent += cheapest.cost
    return kept


@blind_writer(
    "compact_validity",
    "Blind: newest first, preferring tombstones / compound updates, then atomic facts, then "
    "the cheapest candidate.",
)
def compact_validity(view: BlindView) -> list[str]:
    """Newest first: a compound update or tombstone where offered, else an atomic fact, else
    the cheapest candidate — the first of these (cheapest within a tier) that still fits."""
    kept: list[str] = []
    spent = 0.0
    for exp in view.newest_first():
        cands = list(view.candidates_of(exp.id))
        tiers = [
            [c for c in cands if c.type == "compound_update"],
            [c for c in cands if c.type == "tombstone"],
            [c for c in cands if c.type == "atomic_fact"],
            cands,
        ]
        for tier in tiers:
            pick = _cheapest_fitting(view, tier, spent)
            if pick is not None:
                kept.append(pick.id)
                spent += pick.cost
                break
    return kept


# --------------------------------------------------------------------------- estimated GVT


def content_words(text: str) -> frozenset[str]:
    """Lowercase letter/digit tokens of a text, stop words and 1-letter tokens dropped.

    >>> sorted(content_words("User: I'm pescatarian now, not vegetarian!"))
    ['not', 'now', 'pescatarian', 'vegetarian']
    """
    return frozenset(w for w in _WORD.findall(text.lower()) if len(w) > 1 and w not in _STOP)


def text_features(text: str) -> tuple[int, int, int]:
    """(numbers, dates, negation) 0/1 features of a text.

    >>> text_features("Moved to Porto on 2024-03-01; no longer in Lisbon.")
    (1, 1, 1)
    """
    return (
        int(bool(_NUMBER.search(text))),
        int(bool(_DATE.search(text))),
        int(bool(_NEGATION.search(text))),
    )


def value_estimates(view: BlindView) -> dict[str, float]:
    """value_hat(u) for every candidate (see the module docstring)."""
    rank = {e.id: k for k, e in enumerate(view.experiences)}
    span = max(len(view.experiences) - 1, 1)
    out: dict[str, float] = {}
    for c in view.candidates:
        num, date, neg = text_features(c.text)
        prior = TYPE_PRIOR.get(c.type, DEFAULT_PRIOR)
        recent = 1.0 + 0.5 * rank.get(c.experience, 0) / span
        out[c.id] = prior * (1.0 + 0.15 * num + 0.15 * date + 0.30 * neg) * recent
    return out


def _marginal(value: float, words: frozenset[str], covered: set[str]) -> float:
    if not words:
        return value
    return value * (1.0 - len(words & covered) / len(words))


def _thresholds(view: BlindView, values: dict[str, float]) -> list[float]:
    dens = sorted(
        {values[c.id] / c.cost for c in view.candidates if view.fits(0.0, c.cost)}, reverse=True
    )
    if len(dens) > MAX_THRESHOLDS - 1:
        step = (len(dens) - 1) / (MAX_THRESHOLDS - 2)
        dens = [dens[round(k * step)] for k in range(MAX_THRESHOLDS - 1)]
    return [*dens, 0.0]


@blind_writer(
    "estimated_gvt",
    "Blind: GVT thresholds on a value estimate from visible features (type priors x numbers / "
    "dates / negation words, word-overlap redundancy).",
)
def estimated_gvt(view: BlindView) -> list[str]:
    """Grouped value threshold on estimated values (the paper's non-oracle variant)."""
    values = value_estimates(view)
    words = {c.id: content_words(c.text) for c in view.candidates}
    best: tuple[float, float, int, list[str]] | None = None
    for t_idx, tau in enumerate(_thresholds(view, values)):
        covered: set[str] = set()
        kept: list[str] = []
        spent = total = 0.0
        for exp in view.experiences:
            choice: tuple[float, float, str] | None = None  # (marginal, -cost, id)
            for c in view.candidates_of(exp.id):
                if not view.fits(spent, c.cost):
                    continue
                gain = _marginal(values[c.id], words[c.id], covered)
                if gain <= 1e-12 or gain / c.cost < tau - 1e-12:
                    continue
                key = (gain, -c.cost, c.id)
                if (
                    choice is None
                    or key[:2] > choice[:2]
                    or (key[:2] == choice[:2] and key[2] < choice[2])
                ):
                    choice = key
            if choice is None:
                continue
            gain, neg_cost, cid = choice
            kept.append(cid)
            covered |= words[cid]
            spent -= neg_cost
            total += gain
        run = (total, spent, t_idx, kept)
        if (
            best is None
            or total > best[0] + 1e-12
            or (abs(total - best[0]) <= 1e-12 and (spent, t_idx) < (best[1], best[2]))
        ):
            best = run
    return [] if best is None else best[3]


__all__ = [
    "TYPE_PRIOR",
    "compact_validity",
    "content_words",
    "estimated_gvt",
    "recency",
    "text_features",
    "value_estimates",
]
