"""Store importers as an auditor broke them (importer QA, twenty-fifth session).

Wrong types in Letta files, files of one format read as another, benchmark files given to a
store importer, and exports costed in a unit other than the package's. Expected values are
written by hand from the documented rules, never read back from the code under test.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_utils import run_cli as _cli

from memaudit_core.errors import PackageError
from memaudit_core.importers import load_external_store
from memaudit_core.importers.locomo import import_locomo
from memaudit_core.package import parse_package
from memaudit_core.union import union_report, with_store

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures" / "importers"


def _write(tmp_path: Path, name: str, obj: object) -> Path:
    f = tmp_path / name
    f.write_text(json.dumps(obj), encoding="utf-8")
    return f


def _package(cost_unit: str) -> dict:
    return {
        "memaudit": 1,
        "id": "tiny",
        "cost_unit": cost_unit,
        "experiences": [{"id": "s1", "time": 0}],
        "units": [{"id": "D1:1", "text": "Ann adopted a cat", "weight": 1}],
        "candidates": [
            {
                "id": "s1:raw",
                "experience": "s1",
                "type": "raw_span",
                "cost": 40,
                "coverage": {"D1:1": 1.0},
            }
        ],
    }


# --------------------------------------------------------------------------- Letta types
@pytest.mark.parametrize(
    "doc,path,rule_text",
    [
        (
            {"agents": [{"id": "a0", "messages": [{"role": "assistant", "tool_calls": 3}]}]},
            "$.agents[0].messages[0].tool_calls",
            "'tool_calls' must be an array",
        ),
        (
            {"agents": [{"id": "a0", "messages": "oops"}], "blocks": []},
            "$.agents[0].messages",
            "'messages' must be an array",
        ),
        (
            {"agents": [{"id": "a0", "block_ids": "block-0"}], "blocks": []},
            "$.agents[0].block_ids",
            "'block_ids' must be an array",
        ),
        (
            [{"id": "passage-1", "text": "Ann adopted a cat", "tags": "D1:1"}],
            "$[0].tags",
            "'tags' must be an array of strings",
        ),
        (
            [{"id": "passage-1", "text": "Ann adopted a cat", "tags": 7}],
            "$[0].tags",
            "'tags' must be an array of strings",
        ),
    ],
)
def test_letta_wrong_types_are_located_errors(tmp_path, doc, path, rule_text):
    """A TypeError ('int' object is not iterable) or a string read letter by letter before."""
    f = _write(tmp_path, "agent.af", doc)
    with pytest.raises(PackageError) as info:
        load_external_store(f, "letta")
    problems = {(p.path, p.rule) for p in info.value.problems}
    assert (path, "type") in problems
    assert any(rule_text in p.message for p in info.value.problems)
    package = str(REPO / "sample_packages" / "update_chain.json")
    rc, _, err = _cli("import", "letta", str(f), "--package", package, "-o", str(tmp_path / "o"))
    assert rc == 2
    assert path in err and "Traceback" not in err and "internal error" not in err


# --------------------------------------------------------------------------- format hints
def test_amem_notes_read_as_letta_carry_a_format_warning(tmp_path):
    note = {
        "id": "7c1e",
        "content": "Ann adopted a cat named Miso",
        "keywords": ["cat"],
        "tags": ["pets"],
        "timestamp": "202305081356",
    }
    f = _write(tmp_path, "notes.json", [note])
    # QA s41 defect 1: 'keywords' is a key only an A-Mem note has, so read as Letta the file
    # is refused (it was scored with a warning).
    with pytest.raises(PackageError) as info:
        load_external_store(f, "letta")
    assert [(p.path, p.rule) for p in info.value.problems] == [("$[0]", "format-hint")]
    # Without it the item is also Letta's archival search result {id, timestamp, content,
    # tags}: ambiguous, so read as Letta with the warning.
    g = _write(tmp_path, "search.json", [{k: v for k, v in note.items() if k != "keywords"}])
    store = load_external_store(g, "letta")
    warnings = store.meta["warnings"]
    assert any("A-Mem notes (format 'amem')" in w and "'letta'" in w for w in warnings)
    # Read as its own format, the same file has no such warning.
    assert not any(
        "looks like" in w for w in load_external_store(f, "amem").meta.get("warnings", [])
    )


@pytest.mark.parametrize(
    "fixture,fmt,command",
    [
        ("locomo_small.json", "mem0", "memaudit import locomo"),
        ("longmemeval_small.json", "amem", "memaudit import longmemeval"),
    ],
)
def test_benchmark_files_given_to_a_store_importer_say_how_to_import_them(fixture, fmt, command):
    with pytest.raises(PackageError) as info:
        load_external_store(FIXTURES / fixture, fmt)
    first = info.value.problems[0]
    assert first.rule == "format-hint" and command in first.message


# --------------------------------------------------------------------------- cost units
def test_an_export_is_costed_in_the_packages_unit_by_default(tmp_path):
    package = parse_package(_package("chars"))
    f = _write(tmp_path, "mem0.json", [{"id": "m1", "memory": "Ann adopted a cat"}])
    store = load_external_store(f, "mem0", package=package)
    assert store.meta["cost_rule"] == "chars"
    assert store.memories[0].cost == len("Ann adopted a cat")  # 17 characters
    named = load_external_store(f, "mem0", package=package, cost_rule="words")
    assert named.meta["cost_rule"] == "words" and named.memories[0].cost == 4
    # Without a package there is no unit to follow: words, as documented.
    assert load_external_store(f, "mem0").meta["cost_rule"] == "words"


def test_a_tokens_package_scores_a_tokens_costed_export_without_a_units_note(tmp_path):
    """The default followed the package (tokens_o200k) and no false 'Units differ' note."""
    package = import_locomo(
        FIXTURES / "locomo_small.json", instance="conv-a", cost_rule="tokens_o200k"
    )
    f = _write(
        tmp_path,
        "mem0.json",
        [{"id": "m1", "memory": "Ann adopted a cat named Miso", "metadata": {"dia_id": "D1:1"}}],
    )
    store = load_external_store(f, "mem0", package=package)
    assert store.meta["cost_rule"] == "tokens_o200k"
    report = union_report(with_store(package, store), store.id, 13)
    assert not any("Units differ" in n for n in report.notes)
    # A rule named on purpose in another unit is still said.
    words = load_external_store(f, "mem0", package=package, cost_rule="words", store_id="w")
    report = union_report(with_store(package, words), "w", 13)
    assert any("Units differ" in n and "words" in n for n in report.notes)


def test_a_one_object_longmemeval_file_is_located_at_the_root(tmp_path):
    """Its fields are at $ (the error said $[0].question_id)."""
    from memaudit_core.importers import import_package

    instance = json.loads((FIXTURES / "longmemeval_small.json").read_text())[0]
    instance["question_id"] = None
    f = _write(tmp_path, "one.json", instance)
    with pytest.raises(PackageError) as info:
        import_package("longmemeval", f)
    assert [p.path for p in info.value.problems] == ["$.question_id"]


def test_cheap_memories_with_inherited_coverage_are_called_an_estimate(tmp_path):
    """A 2-word block line inherited its block's links and was called cheaper evidence."""
    package = import_locomo(FIXTURES / "locomo_small.json", instance="conv-a")
    agent = {
        "agents": [{"id": "agent-0", "block_ids": ["block-0"], "messages": []}],
        "blocks": [
            {
                "id": "block-0",
                "label": "human",
                "value": "Name: Ann\nAnn adopted a cat named Miso\n\nAnn moved to Lisbon",
                "metadata": {"dia_id": ["D1:1", "D10:1"]},
            }
        ],
    }
    store = load_external_store(_write(tmp_path, "a.af", agent), "letta", package=package)
    report = union_report(with_store(package, store), store.id, 20)
    (note,) = [n for n in report.notes if n.startswith("Package-candidate ratio")]
    assert "cheaper than any package candidate" in note
    assert "have coverage estimated from the block, episode or experience" in note
    assert "block-human-0" in note.split("But ", 1)[1]
