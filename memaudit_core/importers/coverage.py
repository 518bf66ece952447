"""Coverage for external memories: from provenance links, and lexical *suggestions*.

An external memory counts in the union package only through its coverage row. Two sources:

- **Provenance links** (:func:`coverage_from_links`), counted. A link equal to a package unit
  id (e.g. a LoCoMo ``dia_id`` kept in Mem0 metadata) gives coverage 1.0 on that unit: exact.
  When a memory has no unit link but links to experiences (session ids, episode names), its
  row is the element-wise best coverage of those experiences' package candidates: an *upper
  estimate* of what a memory written from them can cover, labelled as such per memory
  (``meta["coverage_source"] == "experience-links"``) and in ``store.meta["coverage"]``.
  Unit links a memory inherits from its container (a Zep edge from its episode's metadata)
  are an upper estimate too: ``"episode-unit-links"``. A link to a turn of a LoCoMo- or
  LongMemEval-built package that is no unit (a real turn no question cites:
  :func:`turn_link`) is exact too: that turn covers nothing, so the memory's row is empty
  (``"turn-links"``), and it is neither a typo nor a memory that needs annotation.
- **Lexical suggestions** (:func:`suggest_coverage`), never counted: token overlap between
  the memory text and each unit's text (or the texts of the candidates that cover it). They
  are returned separately for an annotator to confirm; importers never write them into
  coverage.

Examples
--------
>>> from memaudit_core.package import parse_package
>>> pkg = parse_package({"memaudit": 1, "id": "p",
...     "experiences": [{"id": "s1", "time": 0}],
...     "units": [{"id": "D1:1", "text": "Ann: I adopted a cat named Miso.", "weight": 1}],
...     "candidates": [{"id": "s1:raw", "experience": "s1", "type": "raw_span", "cost": 7,
...                     "coverage": {"D1:1": 1.0}}]})
>>> coverage_from_links(["D1:1"], pkg)
({'D1:1': 1.0}, 'unit-links')
>>> suggest_coverage("Ann adopted a cat called Miso", pkg)
{'D1:1': 0.8}
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from ..package import Package, Store

#: Suggestions below this overlap are not returned.
DEFAULT_THRESHOLD = 0.3

_TOKEN = re.compile(r"\w+", re.UNICODE)
_STOPWORDS = frozenset(
    """a an the and or but if of to in on at by for with from as is are was were be been being
    am i me my we our you your he him his she her it its they them their this that these those
    do does did have has had not no so than then there here what which who whom when where why
    how all any some just also very can will would could should may might must shall into out up
    about over after before again once only own same too s t don now""".split()
)


def tokens(text: str) -> set[str]:
    """Lower-cased content tokens (words of 2+ characters that are not stopwords).

    Examples
    --------
    >>> sorted(tokens("I moved to Lisbon in 2024!"))
    ['2024', 'lisbon', 'moved']
    """
    return {
        t
        for t in (m.group(0).lower() for m in _TOKEN.finditer(text or ""))
        if len(t) >= 2 and t not in _STOPWORDS
    }


def coverage_from_links(links: Iterable[str], package: Package) -> tuple[dict[str, float], str]:
    """Coverage derived from provenance links, and which kind of link it came from.

    Parameters
    ----------
    links : iterable of str
        References kept by the memory system (unit ids, dia_ids, experience ids...).
    package : Package

    Returns
    -------
    coverage : dict
        Unit id -> coverage in [0, 1].
    source : {'unit-links', 'turn-links', 'experience-links', 'none'}
        Unit links win; then links to package turns that are no unit (exact, covering
        nothing: QA s39 defect 4); experience links are used only when no link names either.
        A turn of an experience whose evidence is one session-level unit (``meta.level ==
        "session"``) counts as a link to that experience.

    Examples
    --------
    >>> from memaudit_core.generators import generate
    >>> pkg = generate("update_chain")
    >>> coverage_from_links(["no-such-id"], pkg)
    ({}, 'none')
    """
    links = list(links)
    unit_ids = {u.id for u in package.units}
    hit_units = [u for u in (unit_link(ref, unit_ids) for ref in links) if u is not None]
    if hit_units:
        return {u: 1.0 for u in dict.fromkeys(hit_units)}, "unit-links"
    turns = [t for t in (_named_turn(ref, package) for ref in links) if t is not None]
    # A turn of a session whose evidence the package labels only as a whole (LongMemEval's
    # <session>_session unit, when no turn is flagged has_answer) may state that evidence:
    # read as a link to its session, an upper estimate, never as exactly nothing.
    whole = {u.meta.get("session") for u in package.units if u.meta.get("level") == "session"}
    turn_exps = {exp for exp, _plain in turns if exp in whole}
    if turns and not turn_exps:
        return {}, "turn-links"
    exp_ids = {e.id for e in package.experiences}
    hit_exps = set(ref for ref in links if ref in exp_ids) | turn_exps
    if not hit_exps:
        return {}, "none"
    coverage: dict[str, float] = {}
    for cand in package.candidates:
        if cand.experience in hit_exps:
            for unit, value in cand.coverage.items():
                if value > coverage.get(unit, 0.0):
                    coverage[unit] = value
    return coverage, "experience-links"


def unresolved_link_groups(groups: Iterable[list[str]], package: Package) -> list[list[str]]:
    """The link groups none of whose names is a unit or experience id of the package.

    :func:`coverage_from_links` ignores such links; importers report them (CLI QA: a memory
    whose links matched nothing was counted as having none). A group holds alternative names
    of one source (a Zep episode's uuid, name and metadata links); a plain link is a group of
    one.

    Examples
    --------
    >>> from memaudit_core.generators import generate
    >>> pkg = generate("update_chain")
    >>> unresolved_link_groups([["no-such-id"], [pkg.units[0].id]], pkg)
    [['no-such-id']]
    """
    unit_ids = {u.id for u in package.units}
    exp_ids = {e.id for e in package.experiences}
    return [
        list(g)
        for g in groups
        if g and not any(link_resolves(ref, package, unit_ids, exp_ids) for ref in g)
    ]


def link_resolves(ref: str, package: Package, unit_ids: set[str], exp_ids: set[str]) -> bool:
    """True when ``ref`` names a unit (:func:`unit_link`), an experience or a turn
    (:func:`turn_link`) of ``package``; ``unit_ids`` and ``exp_ids`` are its ids, passed in
    so that a store's links are matched against sets built once."""
    return (
        ref in exp_ids
        or unit_link(ref, unit_ids) is not None
        or turn_link(ref, package) is not None
    )


#: A LoCoMo dia id as written in evidence and metadata: ``D10:3``, ``D10:03``, ``D:10:3``
#: (session, turn). The LoCoMo importer and link matching read it alike.
DIA_ID = re.compile(r"^D:?(\d+):0*(\d+)$")


def unit_link(ref: str, unit_ids: set[str]) -> str | None:
    """The unit id ``ref`` names: itself, or a LoCoMo dia id written with leading zeros or a
    colon after the D (``D10:01``, ``D:10:1``) whose plain form ``D10:1`` is a unit id, as
    the LoCoMo importer reads evidence (importer QA: Mem0 metadata ``D10:01`` matched
    nothing).

    >>> unit_link("D10:01", {"D10:1"}), unit_link("D10:01", {"D10:01"}), unit_link("x", set())
    ('D10:1', 'D10:01', None)
    """
    if ref in unit_ids:
        return ref
    m = DIA_ID.match(ref)
    if m:
        plain = f"D{int(m.group(1))}:{int(m.group(2))}"
        if plain in unit_ids:
            return plain
    return None


#: ``package.meta["turn_ids"]``: how an importer names the turns of its package's
#: experiences, so that a link to a turn that is no unit (no question cites it) is told from
#: a typo. Each scheme reads a name as ``(experience id, turn number, canonical turn id)``;
#: turns are numbered from 1 within each experience, up to its ``meta.turns``.
LOCOMO_TURNS = "D<session>:<turn>"
LONGMEMEVAL_TURNS = "<experience>_<turn>"
_LME_TURN = re.compile(r"^(.+)_([1-9][0-9]*)$")


def _locomo_turn(ref: str) -> tuple[str, int, str] | None:
    m = DIA_ID.match(ref)
    if not m:
        return None
    session, turn = int(m.group(1)), int(m.group(2))
    return f"session_{session}", turn, f"D{session}:{turn}"


def _longmemeval_turn(ref: str) -> tuple[str, int, str] | None:
    # The turn number has no underscore, so the last one splits it from the session id
    # (itself often holding underscores: answer_4be1b6b4_2_3). No leading zeros, as in the
    # unit ids: read as turn 1, ``s_01`` would cover nothing though unit ``s_1`` may be it.
    m = _LME_TURN.match(ref)
    return (m.group(1), int(m.group(2)), ref) if m else None


TURN_ID_SCHEMES: dict[str, Callable[[str], tuple[str, int, str] | None]] = {
    LOCOMO_TURNS: _locomo_turn,
    LONGMEMEVAL_TURNS: _longmemeval_turn,
}


def turn_link(ref: str, package: Package) -> str | None:
    """The turn ``ref`` names in ``package``, when that turn is no unit.

    QA s39 defect 4 (LoCoMo) and s50 (LongMemEval): a Mem0 memory linked to a real turn that
    no question cites (so no unit) was warned about as a typo and left "needs annotation",
    and refused under ``unit_ids``. The importer records its naming scheme in
    ``meta["turn_ids"]`` (:data:`TURN_ID_SCHEMES`) and each experience's turn count in
    ``experiences[].meta.turns``: LoCoMo's ``D<n>:<k>`` is turn k of ``session_<n>``, and
    LongMemEval's ``<session_id>_<k>`` turn k of that session (the unit ids' own form), with
    ``1 <= k <= turns``. Such a turn covers nothing (exactly), unless its session's evidence
    is one session-level unit (:func:`coverage_from_links`). LoCoMo packages imported before
    the record are read as LoCoMo's; any other package without it names no turns. A name
    that is also an experience id keeps meaning the experience. Anything else stays
    unresolved.

    >>> from memaudit_core.package import parse_package
    >>> pkg = parse_package({"memaudit": 1, "id": "p", "meta": {"source_format": "locomo"},
    ...     "experiences": [{"id": "session_1", "time": 1, "meta": {"turns": 2}}],
    ...     "units": [{"id": "D1:1", "text": "Ann: I adopted a cat.", "weight": 1}],
    ...     "candidates": [{"id": "session_1:raw", "experience": "session_1",
    ...                     "type": "raw_span", "cost": 5, "coverage": {"D1:1": 1.0}}]})
    >>> turn_link("D1:02", pkg), turn_link("D1:3", pkg), turn_link("D2:1", pkg)
    ('D1:2', None, None)
    """
    named = _named_turn(ref, package)
    return named[1] if named is not None else None


def _named_turn(ref: str, package: Package) -> tuple[str, str] | None:
    """``(experience id, canonical turn id)`` of the turn :func:`turn_link` finds, or None."""
    scheme = package.meta.get("turn_ids")
    if scheme is None and package.meta.get("source_format") == "locomo":
        scheme = LOCOMO_TURNS
    parse = TURN_ID_SCHEMES.get(scheme) if isinstance(scheme, str) else None
    named = parse(ref) if parse is not None else None
    if named is None:
        return None
    exp_id, turn, plain = named
    exp = next((e for e in package.experiences if e.id == exp_id), None)
    turns = exp.meta.get("turns") if exp is not None else None
    if not isinstance(turns, int) or isinstance(turns, bool) or not 1 <= turn <= turns:
        return None
    if plain in {u.id for u in package.units} or ref in {e.id for e in package.experiences}:
        return None
    return exp_id, plain


def _reference_texts(package: Package) -> dict[str, list[str]]:
    """Per unit: its own text, else the texts of the candidates covering it at >= 0.5."""
    refs: dict[str, list[str]] = {u.id: [u.text] for u in package.units if u.text.strip()}
    own = set(refs)
    for cand in package.candidates:
        if not cand.text.strip():
            continue
        for unit, value in cand.coverage.items():
            if unit not in own and value >= 0.5:
                refs.setdefault(unit, []).append(cand.text)
    return {u: [t for t in texts if t] for u, texts in refs.items()}


def suggest_coverage(
    memory_text: str,
    package: Package,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    top: int | None = 10,
) -> dict[str, float]:
    """Lexical coverage **suggestions** for one memory (never counted until confirmed).

    For each unit, the score is the largest share of a reference text's content tokens that
    also occur in the memory text, over the unit's own text or, when the unit has none, the
    texts of the candidates that cover it at >= 0.5. Scores are rounded to 2 decimals.

    Parameters
    ----------
    memory_text : str
    package : Package
    threshold : float
        Smallest score returned (default 0.3).
    top : int or None
        At most this many units, best first (None: all).

    Returns
    -------
    dict
        Unit id -> suggested coverage in (0, 1], best first. A *suggestion* only: write it into
        a store's coverage after an annotator confirms it.

    Examples
    --------
    >>> from memaudit_core.package import parse_package
    >>> pkg = parse_package({"memaudit": 1, "id": "p", "experiences": [{"id": "e1"}],
    ...     "units": [{"id": "r1", "text": "Maya moved to Lisbon", "weight": 1}],
    ...     "candidates": []})
    >>> suggest_coverage("Maya now lives in Lisbon", pkg)
    {'r1': 0.67}
    """
    mem = tokens(memory_text)
    if not mem:
        return {}
    scores: dict[str, float] = {}
    for unit_id, texts in _reference_texts(package).items():
        best = 0.0
        for text in texts:
            ref = tokens(text)
            if ref:
                best = max(best, len(ref & mem) / len(ref))
        if best >= threshold and best > 0:
            scores[unit_id] = round(best, 2)
    ordered = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    if top is not None:
        ordered = ordered[:top]
    return dict(ordered)


def suggest_store_coverage(
    store: Store, package: Package, *, threshold: float = DEFAULT_THRESHOLD, top: int | None = 5
) -> dict[str, dict[str, float]]:
    """:func:`suggest_coverage` for every memory of an external store (memory id -> row).

    Memories whose coverage is already set are skipped. Suggestions only: nothing is written.
    """
    return {
        m.id: suggest_coverage(m.text, package, threshold=threshold, top=top)
        for m in store.memories
        if not m.coverage
    }


__all__ = [
    "DEFAULT_THRESHOLD",
    "LOCOMO_TURNS",
    "LONGMEMEVAL_TURNS",
    "TURN_ID_SCHEMES",
    "coverage_from_links",
    "link_resolves",
    "suggest_coverage",
    "suggest_store_coverage",
    "tokens",
    "turn_link",
    "unresolved_link_groups",
]
