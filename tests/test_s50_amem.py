"""QA s50 A-Mem importer defects: provenance links beside a note's ``metadata`` object, or
inside a ``metadata`` given as JSON text (as A-Mem's Chroma retriever stores it), were dropped
without a word, and a Chroma document that differs from its metadata's ``content`` was costed
unsaid.

Expected values are read off the files written here: conv-a's units are D1:1, D1:3, D2:1,
D2:2, D10:1, D10:2, D10:3 (tests/fixtures/importers/locomo_small.json), a link to a unit covers
that unit exactly (1.0), and the cost rule is words.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_utils import run_cli

from memaudit_core.errors import PackageError
from memaudit_core.importers import load_external_store
from memaudit_core.importers.locomo import import_locomo
from memaudit_core.package import save_package

LOCOMO = Path(__file__).parent / "fixtures" / "importers" / "locomo_small.json"
NOTE = {"id": "a1", "content": "Ann adopted Miso.", "timestamp": "202305081356"}


@pytest.fixture(scope="module")
def conv_a():
    return import_locomo(LOCOMO, instance="conv-a")


def _write(tmp_path: Path, name: str, obj: object) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(obj), encoding="utf-8")
    return path


def _problems(fn) -> list[tuple[str, str]]:
    with pytest.raises(PackageError) as info:
        fn()
    return [(p.path, p.rule) for p in info.value.problems]


# --------------------------------------------------------------------------- 1. link sources


def test_a_dia_id_beside_a_metadata_object_gives_coverage(tmp_path, conv_a):
    export = _write(
        tmp_path, "n.json", [{**NOTE, "dia_id": "D1:1", "metadata": {"source": "locomo"}}]
    )
    store = load_external_store(export, "amem", package=conv_a)
    (memory,) = store.memories
    assert memory.coverage == {"D1:1": 1.0}
    assert memory.cost == 3  # "Ann adopted Miso."
    assert store.meta["coverage"] == "from provenance links: 1 from unit links (exact)"


def test_links_from_both_places_are_united(tmp_path, conv_a):
    # dia_id agrees in both places (a string and an array of the same link): no conflict.
    note = {
        **NOTE,
        "dia_id": "D1:1",
        "evidence_ids": "D10:1",
        "metadata": {"evidence": ["D2:1"], "dia_id": ["D1:1"]},
    }
    store = load_external_store(_write(tmp_path, "n.json", [note]), "amem", package=conv_a)
    assert store.memories[0].coverage == {"D1:1": 1.0, "D2:1": 1.0, "D10:1": 1.0}


def test_an_unknown_unit_id_beside_a_metadata_object_is_refused(tmp_path, conv_a):
    note = {**NOTE, "unit_ids": ["D99:9"], "metadata": {"dia_id": "D1:1"}}
    export = _write(tmp_path, "n.json", [note])
    problems = _problems(lambda: load_external_store(export, "amem", package=conv_a))
    assert problems == [("$[0].unit_ids[0]", "known-unit")]


def test_cli_refuses_the_unknown_unit_id_beside_metadata(tmp_path, conv_a):
    pkg = tmp_path / "conv-a.json"
    save_package(conv_a, pkg)
    note = {**NOTE, "unit_ids": ["D99:9"], "metadata": {"dia_id": "D1:1"}}
    export = _write(tmp_path, "n.json", [note])
    rc, out, err = run_cli(
        "import", "amem", str(export), "--package", str(pkg), "-o", str(tmp_path / "o.json")
    )
    assert rc == 2
    assert "$[0].unit_ids[0]" in err and "known-unit" in err and "'D99:9'" in err


def test_one_link_key_with_other_links_in_each_place_is_refused(tmp_path, conv_a):
    note = {**NOTE, "dia_id": "D1:1", "metadata": {"dia_id": "D2:1"}}
    export = _write(tmp_path, "n.json", [note])
    with pytest.raises(PackageError) as info:
        load_external_store(export, "amem", package=conv_a)
    (problem,) = info.value.problems
    assert (problem.path, problem.rule, problem.value) == (
        "$[0].metadata.dia_id",
        "consistent-links",
        "D2:1",
    )
    assert "$[0].dia_id ('D1:1')" in problem.message


def test_chroma_metadata_as_json_text_is_decoded(tmp_path, conv_a):
    dump = {
        "ids": ["a1"],
        "documents": ["Ann adopted Miso."],
        "metadatas": [
            {
                "content": "Ann adopted Miso.",
                "timestamp": "202305081356",
                "metadata": json.dumps({"dia_id": "D1:1"}),
            }
        ],
    }
    store = load_external_store(_write(tmp_path, "c.json", dump), "amem", package=conv_a)
    assert store.memories[0].coverage == {"D1:1": 1.0}
    assert store.meta["coverage"] == "from provenance links: 1 from unit links (exact)"


def test_a_notes_list_with_metadata_as_json_text_is_decoded(tmp_path, conv_a):
    note = {**NOTE, "metadata": json.dumps({"evidence": ["D10:1"]})}
    store = load_external_store(_write(tmp_path, "n.json", [note]), "amem", package=conv_a)
    assert store.memories[0].coverage == {"D10:1": 1.0}


def test_metadata_that_is_no_object_is_warned_of_at_its_path(tmp_path, conv_a):
    notes = [
        {**NOTE, "metadata": "from locomo", "dia_id": "D1:1"},
        {**NOTE, "id": "a2", "content": "Bo moved.", "metadata": 7},
    ]
    store = load_external_store(_write(tmp_path, "n.json", notes), "amem", package=conv_a)
    said = [w for w in store.meta["warnings"] if "'metadata'" in w]
    assert len(said) == 1
    assert "$[0].metadata: 'from locomo'" in said[0]
    assert "$[1].metadata: a number" in said[0]
    # The note's own link is still read.
    assert [m.coverage for m in store.memories] == [{"D1:1": 1.0}, {}]


# --------------------------------------------------------------------------- 2. two texts


def test_a_chroma_document_unlike_its_content_is_warned_of(tmp_path, conv_a):
    dump = {
        "ids": ["a1", "a2"],
        "documents": ["DIFFERENT TEXT HERE now longer than before", "Ann moved."],
        "metadatas": [
            {"content": "Ann adopted Miso.", "dia_id": "D1:1", "timestamp": "202305081356"},
            {"content": "Ann moved.", "dia_id": "D10:1", "timestamp": "202305081356"},
        ],
    }
    store = load_external_store(_write(tmp_path, "c.json", dump), "amem", package=conv_a)
    assert [m.cost for m in store.memories] == [7, 2]  # the documents' words
    said = [w for w in store.meta.get("warnings", []) if "$.documents[0]" in w]
    assert len(said) == 1
    assert "$.metadatas[0].content" in said[0]
    assert "$.documents[1]" not in said[0]
    assert "the cost, is the document's" in said[0]
