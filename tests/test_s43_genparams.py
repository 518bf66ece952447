"""Generator parameter QA (session 43).

1. One event_graph package had two or three package keys: ``candidate_types`` was read as
   given by the app's keys (``tombstone,atomic_fact``, ``tombstone, atomic_fact``) while the
   package recorded it in offer order (``atomic_fact,tombstone``), so a link kept its own key
   and the Generator's Preview / "Open in the app" switched to another.
2. Messages: a refused flag named the plain-number rule; the five stress families said
   "parameter 'n_experiences' must be at least 1" without naming the family.
"""

from __future__ import annotations

import pytest
from app_utils import open_app
from cli_utils import run_cli

from memaudit_core.errors import MemAuditError
from memaudit_core.generators import coerce_params, generate
from memaudit_ui import sources

GENERATOR = "pages/7_Generator.py"
#: The two types in event_graph's documented offer order (raw_span, atomic_fact, summary,
#: tombstone, ...), written out here rather than taken from the generator.
ONE_KEY = "gen:event_graph:0:candidate_types=atomic_fact,tombstone"
EVERY_TYPE = (
    "abstention, interval_fact, graph_edge, compound_update, tombstone, summary, atomic_fact, "
    "raw_span"
)

# --------------------------------------------------------------------------- defect 1


@pytest.mark.parametrize(
    "written",
    [
        "tombstone,atomic_fact",
        "tombstone, atomic_fact",
        " atomic_fact ,tombstone,",
        "atomic_fact,tombstone,atomic_fact",
        "atomic_fact,tombstone",  # regression guard: canonical text stays as it is
    ],
)
def test_one_set_of_candidate_types_has_one_key(written: str) -> None:
    """QA s43 (defect 1): generated_key kept the text as given (a third key for one package)."""
    assert sources.generated_key("event_graph", 0, {"candidate_types": written}) == ONE_KEY
    assert coerce_params("event_graph", {"candidate_types": written}) == {
        "candidate_types": "atomic_fact,tombstone"
    }


@pytest.mark.parametrize(
    "key",
    [
        "gen:event_graph:0:candidate_types=tombstone%2Catomic_fact",
        "gen:event_graph:0:candidate_types=tombstone,%20atomic_fact",
        ONE_KEY,  # regression guard: the canonical key stays as it is
    ],
)
def test_a_link_with_candidate_types_in_another_order_has_the_one_key(key: str) -> None:
    """QA s43 (defect 1): the link kept tombstone%2Catomic_fact while Preview used ONE_KEY."""
    assert sources.canonical_key(key) == (ONE_KEY, None)


def test_every_type_listed_is_the_default_all() -> None:
    """Every offered type, in any order, is the default package: no parameter in its key."""
    assert sources.generated_key("event_graph", 3, {"candidate_types": EVERY_TYPE}) == (
        "gen:event_graph:3"
    )
    assert sources.generated_key("event_graph", 3, {"candidate_types": "ALL"}) == (
        "gen:event_graph:3"
    )
    assert sources.canonical_key("gen:event_graph:3:candidate_types=All") == (
        "gen:event_graph:3",
        None,
    )


def test_the_key_names_what_the_package_records() -> None:
    """The key's value is the package's meta, and both spellings build one package."""
    given = generate("event_graph", 0, n_experiences=12, candidate_types="tombstone, atomic_fact")
    canonical = generate(
        "event_graph", 0, n_experiences=12, candidate_types="atomic_fact,tombstone"
    )
    assert given.meta["params"]["candidate_types"] == "atomic_fact,tombstone"
    assert given.content_hash() == canonical.content_hash()
    key = sources.generated_key(
        "event_graph", 0, {"n_experiences": 12, "candidate_types": "tombstone, atomic_fact"}
    )
    assert key == "gen:event_graph:0:candidate_types=atomic_fact,tombstone;n_experiences=12"
    assert sources.load_by_key(key).content_hash() == given.content_hash()


def test_cost_rule_is_checked_where_keys_are_made() -> None:
    """The other text parameter: a known rule is kept as written, an unknown one refused by
    coerce_params with the family's own message (so no key is made canonical for it)."""
    assert coerce_params("event_graph", {"cost_rule": "chars"}) == {"cost_rule": "chars"}
    with pytest.raises(MemAuditError, match=r"event_graph: unknown cost_rule 'Chars' \(known: "):
        coerce_params("event_graph", {"cost_rule": "Chars"})
    assert sources.canonical_key("gen:event_graph:0:cost_rule=Chars") == (
        "gen:event_graph:0:cost_rule=Chars",
        None,
    )


def test_the_generator_page_keeps_the_links_package_on_preview() -> None:
    """QA s43 (defect 1): the page opened on the reordered link kept it in the session (and
    URL), while Preview showed ONE_KEY and "Open in the app" switched to it."""
    link = "gen:event_graph:0:n_experiences=12;candidate_types=tombstone%2Catomic_fact"
    expected = "gen:event_graph:0:candidate_types=atomic_fact,tombstone;n_experiences=12"
    at = open_app(GENERATOR, package=link)
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["ma_package"] == expected
    at.button[0].click().run()  # the form's only button before a preview: Preview
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    captions = [c.value for c in at.caption if c.value.startswith("Package key")]
    assert len(captions) == 1 and f"`{expected}`" in captions[0], captions
    assert at.session_state["ma_package"] == expected


# --------------------------------------------------------------------------- defect 2


def test_a_refused_flag_names_the_boolean_rule() -> None:
    """QA s43 (defect 2): "maybe" was refused under [rule: plain-number]."""
    rc, out, err = run_cli("generate", "random_coverage", "--param", "integer_costs=maybe")
    text = out + err
    assert rc != 0, text
    assert "parameter 'integer_costs' must be true or false" in text, text
    assert "got 'maybe' [rule: boolean]" in text, text
    assert "plain-number" not in text, text
    with pytest.raises(MemAuditError, match=r"got 2 \[rule: boolean\]"):
        generate("random_coverage", integer_costs=2)


@pytest.mark.parametrize(
    ("family", "param"),
    [
        ("density_trap", "n_experiences"),
        ("scope_shift", "n_scopes"),
        ("summary_tradeoff", "n_episodes"),
        ("redundancy_heavy", "n_experiences"),
        ("abstention_hard", "n_experiences"),
    ],
)
def test_a_stress_familys_size_message_names_the_family(family: str, param: str) -> None:
    """QA s43 (defect 2): "parameter 'n_experiences' must be at least 1, got 0", where the
    paper families say "memaudit-small: normal_count must be an integer >= 0 (got -1)"."""
    with pytest.raises(MemAuditError) as info:
        generate(family, **{param: 0})
    # QA s49: the value after "got", and the rule, as every family's parameter messages.
    assert (
        str(info.value) == f"{family}: {param} must be an integer >= 1, got 0 [rule: count-range]"
    )
    with pytest.raises(MemAuditError) as paper:
        generate("memaudit-small", normal_count=-1)
    assert str(paper.value) == (
        "memaudit-small: normal_count must be an integer >= 0, got -1 [rule: count-range]"
    )
