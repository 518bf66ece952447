"""Importer defects found by the s41 QA (fixtures copied from QA's files, inline).

Every expected value is written by hand from the documented shapes
(/work/shared/reference/EXPORT_FORMATS.md 2.4, 3.1, 4.1) and the importers' rules, never read
back from the code under test.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_utils import run_cli
from note_utils import messages
from package_utils import refused, write_json

from memaudit_core.errors import PackageError
from memaudit_core.importers import load_external_store

FIX = Path(__file__).parent / "fixtures" / "importers"

# QA's amem_notes.json, cut to two notes: A-Mem MemoryNote dicts (EXPORT_FORMATS 3.1).
AMEM_NOTES = [
    {
        "id": "n1",
        "content": "Ann adopted a cat named Miso.",
        "keywords": ["cat"],
        "links": ["2"],
        "retrieval_count": 0,
        "timestamp": "202305081356",
        "last_accessed": "202305081356",
        "context": "Pets",
        "evolution_history": [],
        "category": "Uncategorized",
        "tags": ["pets"],
        "metadata": {"dia_id": "D1:1"},
    },
    {
        "id": "n2",
        "content": "Ann moved to Lisbon.",
        "keywords": ["Lisbon"],
        "links": [],
        "retrieval_count": 3,
        "timestamp": "10:00 am on 20 June, 2023",
        "last_accessed": "202306201000",
        "context": "Home",
        "evolution_history": [],
        "category": "Uncategorized",
        "tags": [],
        "dia_id": "D2:1",
        "importance_score": 0.9,
    },
]

# QA's letta_passages.json, cut to two passages (Letta Passage fields, EXPORT_FORMATS 2.4).
LETTA_PASSAGES = [
    {
        "id": "passage-1",
        "text": "Ann adopted a tabby cat named Miso.",
        "metadata": {"dia_id": "D1:1"},
        "tags": ["pets"],
        "is_deleted": False,
        "created_at": "2023-05-08T13:56:00Z",
    },
    {
        "id": "passage-2",
        "text": "Ann lives in Berlin.",
        "metadata": {"dia_id": "D1:3"},
        "is_deleted": True,
        "created_at": "2023-05-08T13:57:00Z",
    },
]


def _zep_dump(entity_edges: list[str]) -> dict:
    """QA's zep_ee.json, cut down: two edges e1, e2; episode ep1 names ``entity_edges``."""
    return {
        "edges": [
            {
                "uuid": "e1",
                "fact": "Ann lives in Berlin",
                "source_node_uuid": "n1",
                "target_node_uuid": "n2",
                "episodes": ["ep1"],
                "created_at": "2023-05-08T13:56:00Z",
            },
            {
                "uuid": "e2",
                "fact": "Ann lives in Lisbon",
                "source_node_uuid": "n1",
                "target_node_uuid": "n3",
                "episodes": ["ep2"],
                "created_at": "2023-06-20T10:00:00Z",
            },
        ],
        "episodes": [
            {"uuid": "ep0", "name": "session_0", "entity_edges": []},
            {
                "uuid": "ep1",
                "name": "session_1",
                "entity_edges": entity_edges,
                "episode_metadata": {"dia_id": "D1:1"},
            },
            {"uuid": "ep2", "name": "session_2", "entity_edges": ["e2"]},
        ],
        "nodes": [{"uuid": "n1", "name": "Ann", "summary": "Ann is a person"}],
    }


@pytest.fixture
def package_file(tmp_path: Path) -> Path:
    out = tmp_path / "loc.json"
    rc, _, err = run_cli(
        "import", "locomo", str(FIX / "locomo_small.json"), "--instance", "conv-a", "-o", str(out)
    )
    assert rc == 0, err
    return out


# ----------------------------------------------------- 1. A-Mem notes read as Letta are refused


def test_amem_notes_read_as_letta_are_refused_with_format_hint(tmp_path):
    """QA s41 defect 1: A-Mem notes read as 'letta' were scored (content taken as passage
    text, n2's top-level dia_id lost) with only a warning."""
    path = write_json(tmp_path, "amem_notes.json", AMEM_NOTES)
    assert refused(lambda: load_external_store(path, "letta")) == [("$[0]", "format-hint")]
    with pytest.raises(PackageError) as info:
        load_external_store(path, "letta")
    text = str(info.value)
    assert "amem_notes.json" in text
    assert "A-Mem notes (format 'amem')" in text
    assert "not an export of format 'letta'" in text
    # The note keys that decide it are named.
    assert "keywords" in text and "retrieval_count" in text


def test_amem_notes_wrapped_as_letta_passages_are_refused_at_their_path(tmp_path):
    """QA s41 defect 1: the ``{"passages": [...]}`` form of the same mistake."""
    path = write_json(tmp_path, "wrapped.json", {"passages": AMEM_NOTES})
    assert refused(lambda: load_external_store(path, "letta")) == [("$.passages[0]", "format-hint")]


def test_note_keys_on_a_later_item_are_refused_at_that_item(tmp_path):
    """QA s41 defect 1: the located path is the first item that is a note."""
    items = [{"id": "p1", "content": "Ann likes tea", "timestamp": "t", "tags": []}, AMEM_NOTES[0]]
    path = write_json(tmp_path, "mixed.json", items)
    assert refused(lambda: load_external_store(path, "letta")) == [("$[1]", "format-hint")]


def test_cli_refuses_amem_notes_as_letta_with_exit_2(tmp_path, package_file):
    """QA s41 defect 1 (repro_wrong_format.sh): rc 0 and F 3 before; now exit 2, located."""
    path = write_json(tmp_path, "amem_notes.json", AMEM_NOTES)
    rc, out, err = run_cli(
        "score", str(package_file), "--budget", "30", "--external", str(path), "--format", "letta"
    )
    assert rc == 2
    assert "F =" not in out
    assert f"{path}: $[0]: this file looks like A-Mem notes (format 'amem')" in err
    assert "[rule: format-hint]" in err


def test_letta_search_tool_shape_stays_letta_with_the_warning(tmp_path):
    """Regression guard (QA s41 defect 1): ``{id, timestamp, content, tags}`` is exactly what
    Letta's archival search tool returns (EXPORT_FORMATS 2.4) and a subset of an A-Mem note:
    genuinely ambiguous, so it is read as Letta and only warned about."""
    items = [{"id": "passage-9", "timestamp": "2023-05-08", "content": "Ann likes tea", "tags": []}]
    store = load_external_store(write_json(tmp_path, "search.json", items), "letta")
    assert [(m.id, m.text) for m in store.memories] == [("passage-9", "Ann likes tea")]
    assert any("looks like A-Mem notes" in w for w in store.meta["warnings"])


def test_letta_passages_read_as_zep_get_the_format_hint(tmp_path):
    """QA s41 defect 1, related gap: a Letta archival list read as 'zep' was refused with
    'needs its fact' per item but no format-hint line."""
    path = write_json(tmp_path, "letta_passages.json", LETTA_PASSAGES)
    problems = refused(lambda: load_external_store(path, "zep"))
    assert problems[0] == ("$", "format-hint")
    with pytest.raises(PackageError) as info:
        load_external_store(path, "zep")
    assert "a Letta agent file or archival list (format 'letta')" in str(info.value)


def test_letta_passages_without_passage_only_keys_still_hinted_by_their_id(tmp_path):
    """QA s41 defect 1, related gap: server passage ids read ``passage-<uuid>`` (2.2)."""
    items = [{"id": "passage-1", "text": "Ann likes tea"}]
    path = write_json(tmp_path, "p.json", items)
    assert refused(lambda: load_external_store(path, "zep"))[0] == ("$", "format-hint")


# ------------------------------------------------------------- 2. a partial Zep dump is said


def _partial_warnings(store) -> list[str]:
    return [w for w in store.meta.get("warnings", []) if "entity_edges" in w]


def test_zep_episode_naming_an_undumped_edge_warns_partial_dump(tmp_path):
    """QA s41 defect 2 (zep_ee.json): ep1 names e99, absent from the dumped edges; no word."""
    path = write_json(tmp_path, "zep_ee.json", _zep_dump(["e1", "e99"]))
    store = load_external_store(path, "zep")
    assert [m.id for m in store.memories] == ["e1", "e2"]
    (warning,) = messages(_partial_warnings(store))
    assert warning.startswith("1 edge id(s) ")
    assert "$.episodes[1].entity_edges: 'e99'" in warning
    assert "partial" in warning
    assert "'e1'" not in warning and "'e2'" not in warning


def test_zep_partial_dump_warning_caps_the_id_list(tmp_path):
    """QA s41 defect 2: the list of missing ids is capped (10 named, the count is all)."""
    missing = [f"x{k:02d}" for k in range(12)]
    store = load_external_store(write_json(tmp_path, "z.json", _zep_dump(missing)), "zep")
    (warning,) = messages(_partial_warnings(store))
    assert warning.startswith("12 edge id(s) ")
    assert "'x09'" in warning
    assert "'x10'" not in warning and "'x11'" not in warning
    assert "..." in warning


def test_cli_warns_about_a_partial_zep_dump(tmp_path, package_file):
    """QA s41 defect 2 (repro_zep_partial.sh): the warning reaches the CLI, naming the file."""
    path = write_json(tmp_path, "zep_ee.json", _zep_dump(["e1", "e99"]))
    rc, _, err = run_cli(
        "score", str(package_file), "--budget", "30", "--external", str(path), "--format", "zep"
    )
    assert rc == 0, err
    assert f"{path}: warning: $.episodes: 1 edge id(s) named in episodes' entity_edges" in err
    assert "$.episodes[1].entity_edges: 'e99'" in err


def test_complete_zep_dump_gives_no_partial_warning(tmp_path):
    """Regression guard (QA s41 defect 2): every named edge dumped, nothing said."""
    store = load_external_store(write_json(tmp_path, "z.json", _zep_dump(["e1"])), "zep")
    assert _partial_warnings(store) == []
