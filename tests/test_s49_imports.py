"""Session 49 QA (external stores): three importer findings.

1. Zep / Graphiti: unit links in an edge's ``attributes`` (Graphiti's custom edge data,
   EXPORT_FORMATS 4.1) were ignored without a word, even ``unit_ids: ["u:nope"]``. They are
   read as a Mem0 memory's ``metadata`` is: a unit id naming no unit is refused (rule
   ``known-unit``), a null is no link, and the edge's own links give its coverage (exact)
   ahead of its episodes' (an upper estimate).
2. Mem0: a bare graph ``add()`` result and Mem0's raw LLM decision JSON got the generic
   "needs a 'results' array"; each now gets its own explanation and what to export instead.
3. A memory whose text sits under another key (``text``, ``content``) got "missing the memory
   text" with no word that the text is there: the message names the key and the rename.

Expected paths, coverages and messages are written by hand from the exports below and the
units of ``external-stores-demo`` (read from its JSON, not through the importers).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_utils import run_cli
from package_utils import refused, write_json

from memaudit_core.errors import PackageError
from memaudit_core.importers import load_external_store
from memaudit_core.package import load_package

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "sample_packages" / "external-stores-demo.json"
UNITS = {u["id"] for u in json.loads(DEMO.read_text())["units"]}


def _edge(uuid: str, fact: str, **extra: object) -> dict:
    return {"uuid": uuid, "fact": fact, "created_at": "2025-05-03T18:25:00Z", **extra}


def test_zep_attribute_unit_id_naming_no_unit_is_refused_in_the_cli(tmp_path: Path) -> None:
    assert "u:nope" not in UNITS and "u:meal:current" in UNITS
    edges = [
        _edge("edge-1", "Alice is pescatarian", attributes={"unit_ids": ["u:meal:current"]}),
        _edge("edge-2", "Alice likes aisle seats", attributes={"unit_ids": ["u:nope"]}),
    ]
    export = write_json(tmp_path, "zep_attr.json", edges)
    out = tmp_path / "o.json"
    rc, _, err = run_cli("import", "zep", str(export), "--package", str(DEMO), "-o", str(out))
    assert rc == 2, err
    assert f"{export}: $[1].attributes.unit_ids[0]: names no unit" in err, err
    assert "(got 'u:nope') [rule: known-unit]" in err
    assert "Traceback" not in err
    assert not out.exists()


def test_zep_attribute_links_are_the_edges_own_exact_coverage(tmp_path: Path) -> None:
    """The edge's own unit link outranks its episode's (which names another unit)."""
    assert {"u:meal:current", "u:seat"} <= UNITS
    doc = {
        "edges": [
            _edge(
                "edge-1",
                "Alice is pescatarian",
                episodes=["ep1"],
                attributes={"unit_ids": ["u:meal:current"]},
            ),
            # A null is no link, alone or in an array (as in Mem0 / Letta metadata).
            _edge("edge-2", "Alice wants a window seat", attributes={"unit_ids": [None, "u:seat"]}),
            _edge("edge-3", "Alice flies on Friday", attributes={"unit_id": None}),
        ],
        "episodes": [
            {"uuid": "ep1", "name": "chat 1", "episode_metadata": {"unit_ids": ["u:seat"]}}
        ],
    }
    path = write_json(tmp_path, "zep.json", doc)
    store = load_external_store(path, "zep", package=load_package(DEMO))
    by_id = {m.id: m for m in store.memories}
    assert by_id["edge-1"].coverage == {"u:meal:current": 1.0}
    assert by_id["edge-1"].meta["coverage_source"] == "unit-links"
    assert by_id["edge-2"].coverage == {"u:seat": 1.0}
    assert by_id["edge-2"].meta["coverage_source"] == "unit-links"
    assert by_id["edge-3"].coverage == {}
    assert store.meta["coverage"] == (
        "from provenance links: 2 from unit links (exact); 1 without links (needs annotation)"
    )


def test_zep_attributes_that_are_not_an_object_are_refused(tmp_path: Path) -> None:
    path = write_json(tmp_path, "zep.json", [_edge("edge-1", "Alice", attributes=["u:seat"])])
    assert refused(lambda: load_external_store(path, "zep")) == [("$[0].attributes", "type")]


def _problem(path: Path, fmt: str) -> tuple[str, str, str]:
    with pytest.raises(PackageError) as info:
        load_external_store(path, fmt, package=load_package(DEMO))
    (p,) = info.value.problems
    return p.path, p.rule, p.message


def test_mem0_bare_graph_add_result_is_explained(tmp_path: Path) -> None:
    doc = {
        "deleted_entities": [],
        "added_entities": [{"source": "a", "relationship": "b", "target": "c"}],
    }
    where, rule, message = _problem(write_json(tmp_path, "graphadd.json", doc), "mem0")
    assert (where, rule) == ("$", "mem0-relations")
    assert "one call's graph changes, not the graph" in message
    assert "get_all()" in message
    assert "needs a 'results' array" not in message


@pytest.mark.parametrize(
    ("doc", "where"),
    [
        (
            {
                "memory": [
                    {"id": "0", "text": "Is pescatarian", "event": "UPDATE", "old_memory": "x"}
                ]
            },
            "$",
        ),
        ([{"id": "0", "text": "Is pescatarian", "event": "ADD"}], "$[0]"),
        (
            {
                "results": [
                    {"id": "m1", "memory": "Likes tea", "event": "ADD"},
                    {"id": "1", "text": "Is pescatarian", "event": "NONE"},
                ]
            },
            "$.results[1]",
        ),
    ],
)
def test_mem0_raw_llm_decision_json_is_explained(tmp_path: Path, doc: object, where: str) -> None:
    got_where, rule, message = _problem(write_json(tmp_path, "llm.json", doc), "mem0")
    assert (got_where, rule) == (where, "mem0-shape")
    assert "raw LLM decision JSON" in message
    assert "cannot be trusted as ids" in message
    assert "get_all()" in message


def test_mem0_text_under_another_key_is_named(tmp_path: Path) -> None:
    doc = {
        "results": [
            {"id": "z1", "text": "Prefers vegetarian meals"},
            {"id": "z2", "content": "window seat"},
            {"id": "z3", "tags": ["seat"]},  # nothing that looks like text: message unchanged
        ]
    }
    export = write_json(tmp_path, "mem0_alt.json", doc)
    rc, _, err = run_cli("score", str(DEMO), "--external", str(export), "--format", "mem0")
    assert rc == 2, err
    read = "missing the memory text: this format reads it from 'memory' or 'data'"
    assert (
        f"{export}: $.results[0].memory: {read}, and this record has none; it has 'text', "
        "which this format does not read: rename it to 'memory' [rule: required]"
    ) in err, err
    assert (
        f"{export}: $.results[1].memory: {read}, and this record has none; it has 'content', "
        "which this format does not read: rename it to 'memory' [rule: required]"
    ) in err
    assert f"{export}: $.results[2].memory: missing the memory text [rule: required]" in err
    assert "Traceback" not in err


def test_letta_passage_text_under_another_key_is_named(tmp_path: Path) -> None:
    items = [{"id": "p1", "text": "Alice is pescatarian"}, {"id": "p2", "memory": "window seat"}]
    where, rule, message = _problem(write_json(tmp_path, "passages.json", items), "letta")
    assert (where, rule) == ("$[1].text", "required")
    assert message == (
        "missing the memory text: this format reads it from 'text' or 'content', and this "
        "record has none; it has 'memory', which this format does not read: rename it to 'text'"
    )
