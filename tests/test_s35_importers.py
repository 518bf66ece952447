"""Importer defects found by the thirty-fifth session's fresh-eyes audit.

Each test builds a small input by hand, following EXPORT_FORMATS.md and the importers'
documented rules, and states the expected path, rule or warning by hand.
"""

from __future__ import annotations

import copy
import json
import sqlite3
import zipfile
from pathlib import Path

import pytest
from note_utils import message, messages, unruled
from package_utils import refused, write_json

from memaudit_core.cli import main
from memaudit_core.errors import PackageError
from memaudit_core.importers import import_package, load_external_store

FIX = Path(__file__).parent / "fixtures" / "importers"


def _locomo_sample() -> dict:
    return copy.deepcopy(json.loads((FIX / "locomo_small.json").read_text())[0])


@pytest.fixture(scope="module")
def locomo_pkg():
    return import_package("locomo", FIX / "locomo_small.json", instance="conv-a")


# --------------------------------------------------------------------------- LoCoMo


def test_locomo_zero_padded_session_key_is_refused_not_an_internal_error(tmp_path, capsys):
    """``session_01`` crashed with KeyError 'session_1' (exit 1, "internal error")."""
    sample = _locomo_sample()
    conv = sample["conversation"]
    conv["session_01"] = conv.pop("session_1")
    conv["session_01_date_time"] = conv.pop("session_1_date_time")
    src = write_json(tmp_path, "padded.json", [sample])
    problems = refused(lambda: import_package("locomo", src))
    assert ("$[0].conversation.session_01", "session-key") in problems
    assert ("$[0].conversation.session_01_date_time", "session-key") in problems
    assert main(["import", "locomo", str(src), "-o", str(tmp_path / "out.json")]) == 2
    assert "internal error" not in capsys.readouterr().err


def test_locomo_padded_key_beside_its_plain_twin_is_located_in_the_locomo_file(tmp_path):
    """``session_1`` and ``session_01`` both became experience session_1: the error named
    ``$.experiences[1].id`` of the generated package."""
    sample = _locomo_sample()
    sample["conversation"]["session_01"] = sample["conversation"]["session_1"]
    sample["observation"]["session_01_observation"] = {"Ann": [["Ann has a cat.", "D1:1"]]}
    src = write_json(tmp_path, "twin.json", [sample])
    problems = refused(lambda: import_package("locomo", src))
    assert problems == [
        ("$[0].conversation.session_01", "session-key"),
        ("$[0].observation.session_01_observation", "session-key"),
    ]


def test_locomo_flat_layout_padded_key_is_located_at_the_top_level(tmp_path):
    sample = json.loads((FIX / "locomo_flat_conv-b.json").read_text())
    key = next(k for k in sample if k.startswith("session_") and k[8:].isdigit())
    sample[f"session_0{key[8:]}"] = sample.pop(key)
    src = write_json(tmp_path, "flat.json", sample)
    assert (f"$.session_0{key[8:]}", "session-key") in refused(
        lambda: import_package("locomo", src)
    )


@pytest.mark.parametrize(
    "fact",
    [["Ann adopted a cat."], ["Ann adopted a cat.", "D1:1", "extra"], []],
    ids=["no-evidence", "three-elements", "empty"],
)
def test_locomo_observation_must_be_text_and_evidence(tmp_path, fact):
    """``["bad obs"]`` became a memory with no coverage and a third element was dropped,
    without a word; the documented shape is [fact_text, dia_id or [dia_ids]]."""
    sample = _locomo_sample()
    sample["observation"]["session_1_observation"]["Bo"] = [fact]
    src = write_json(tmp_path, "obs.json", [sample])
    assert refused(lambda: import_package("locomo", src)) == [
        ("$[0].observation.session_1_observation.Bo[0]", "observation-shape")
    ]


def test_locomo_empty_zip_says_it_holds_no_conversations(tmp_path):
    """An empty zip (only the end record ``PK\\x05\\x06``) was "UTF-16 text"."""
    src = tmp_path / "empty.zip"
    zipfile.ZipFile(src, "w").close()
    with pytest.raises(PackageError) as info:
        import_package("locomo", src)
    (problem,) = info.value.problems
    assert problem.rule == "locomo-shape"
    assert "no .json conversation files" in problem.message


# --------------------------------------------------------------------------- LongMemEval


def _lme() -> list[dict]:
    return copy.deepcopy(json.loads((FIX / "longmemeval_small.json").read_text()))


def test_longmemeval_shared_question_id_is_refused_even_with_instance(tmp_path):
    """With ``--instance``, the first of two instances named q1 was taken without a word."""
    data = _lme()
    data[2]["question_id"] = data[0]["question_id"]
    src = write_json(tmp_path, "dup.json", data)
    qid = data[0]["question_id"]
    assert refused(lambda: import_package("longmemeval", src, instance=qid)) == [
        ("$[2].question_id", "unique-id")
    ]
    # The other instances are still importable.
    pkg = import_package("longmemeval", src, instance=data[1]["question_id"])
    assert [q.id for q in pkg.queries] == [data[1]["question_id"]]


def test_longmemeval_question_id_text_inside_a_turn_is_not_a_second_instance(tmp_path):
    """The duplicate scan reads raw bytes: a nested object with the key, and a turn quoting
    the key, must not be taken for another instance."""
    data = _lme()
    qid = data[0]["question_id"]
    data[0]["haystack_sessions"][0][0]["content"] = f'{{"question_id": "{qid}"}}'
    data[1]["extra"] = {"question_id": qid}
    src = write_json(tmp_path, "nested.json", data)
    pkg = import_package("longmemeval", src, instance=qid)
    assert [q.id for q in pkg.queries] == [qid]


def test_longmemeval_unreadable_or_missing_question_date_is_said(tmp_path):
    data = _lme()[:1]
    data[0]["question_date"] = "bad"
    pkg = import_package("longmemeval", write_json(tmp_path, "qd.json", data))
    assert any(
        "$[0].question_date: 'bad' does not parse" in unruled(w) for w in pkg.meta["warnings"]
    )
    data[0]["question_type"] = "temporal-reasoning"
    del data[0]["question_date"]
    pkg = import_package("longmemeval", write_json(tmp_path, "qd2.json", data))
    assert any(
        unruled(w).startswith("$[0]: question_date is missing") for w in pkg.meta["warnings"]
    )


def test_longmemeval_readable_question_date_gives_no_date_warning(tmp_path):
    data = _lme()[:1]
    data[0]["question_date"] = "2023/05/30 (Tue) 23:40"
    pkg = import_package("longmemeval", write_json(tmp_path, "ok.json", data))
    assert not any("question_date" in w for w in pkg.meta.get("warnings", []))


# --------------------------------------------------------------------------- store exports


@pytest.mark.parametrize(
    ("fmt", "export", "where"),
    [
        ("mem0", {"results": [{"id": "m1", "memory": "bad \ud800 text"}]}, "$.results[0].memory"),
        ("zep", [{"uuid": "e1", "fact": "bad \udc00 fact"}], "$[0].fact"),
        ("mem0", {"results": [{"id": "m\ud800", "memory": "ok"}]}, "$.results[0].id"),
        (
            "mem0",
            {"results": [{"id": "m1", "memory": "ok", "metadata": {"dia_id": "D1:\udc00"}}]},
            "$.results[0].metadata.dia_id",
        ),
    ],
    ids=["mem0-text", "zep-fact", "mem0-id", "mem0-metadata"],
)
def test_surrogate_in_an_export_is_located_in_the_export(tmp_path, locomo_pkg, fmt, export, where):
    """They were located at ``$.stores[1].memories[0].text`` of the generated package; a
    metadata one gave three problems there."""
    src = write_json(tmp_path, f"{fmt}.json", export)
    with pytest.raises(PackageError) as info:
        load_external_store(src, fmt, package=locomo_pkg)
    assert info.value.source == str(src)
    assert [(p.path, p.rule) for p in info.value.problems] == [(where, "unicode")]


def test_mem0_history_warning_names_the_history_file_and_row(tmp_path, locomo_pkg):
    export = write_json(tmp_path, "export.json", [{"id": "m1", "memory": "Ann has a cat"}])
    history = write_json(
        tmp_path,
        "history.json",
        [
            {"id": "h1", "memory_id": "m1", "old_memory": None, "new_memory": "Ann has a cat",
             "event": "ADD", "created_at": "2024-01-01T00:00:00+00:00"},
            {"id": "h2", "memory_id": "m1", "old_memory": "Ann has a cat", "new_memory": None,
             "event": "DELETE", "created_at": "2024-02-01T00:00:00+00:00"},
        ],
    )  # fmt: skip
    store = load_external_store(export, "mem0", history=history, package=locomo_pkg)
    (warning,) = [w for w in store.meta["warnings"] if "was deleted" in w]
    assert warning.startswith("$[0]: ")
    assert f"({history}: $[1])" in warning


def test_mem0_history_rows_given_as_the_export_point_to_history(tmp_path):
    """Four "missing the memory text" errors and no word that this is a history."""
    rows = json.loads((FIX / "mem0_history.json").read_text())
    for doc, base in ((rows, "$"), ({"results": rows}, "$.results")):
        src = write_json(tmp_path, "h.json", doc)
        with pytest.raises(PackageError) as info:
            load_external_store(src, "mem0")
        (problem,) = info.value.problems
        assert (problem.path, problem.rule) == (base, "format-hint")
        assert "--history" in problem.message


def test_sqlite_history_given_as_the_export_is_named_a_sqlite_database(tmp_path):
    """Its NUL bytes had it called "UTF-16 text; save it as UTF-8"."""
    db = tmp_path / "history.db"
    con = sqlite3.connect(db)
    con.execute("create table history (id text)")
    con.commit()
    con.close()
    for call in (
        lambda: load_external_store(db, "mem0"),
        lambda: import_package("locomo", db),
    ):
        with pytest.raises(PackageError) as info:
            call()
        text = " ".join(p.message for p in info.value.problems)
        assert "SQLite" in text
        assert "UTF-16" not in text


@pytest.mark.parametrize(
    ("relation", "missing"),
    [
        ({"source": "ann", "target": "lisbon"}, "relationship"),
        ({"source": "ann", "relationship": "lives_in"}, "target"),
        ({"source": "", "relationship": "lives_in", "destination": "x"}, "source"),
    ],
)
def test_mem0_relation_needs_all_three_parts(tmp_path, relation, missing):
    """A relation without ``relationship`` was kept as ``"ann|None|lisbon"``."""
    export = {"results": [{"id": "m1", "memory": "Ann lives in Lisbon"}], "relations": [relation]}
    src = write_json(tmp_path, "graph.json", export)
    problems = refused(lambda: load_external_store(src, "mem0"))
    assert [p for p, _ in problems] == [f"$.relations[0].{missing}"]


def test_mem0_relation_with_destination_is_kept(tmp_path):
    export = {
        "results": [{"id": "m1", "memory": "Ann lives in Lisbon"}],
        "relations": [{"source": "ann", "relationship": "lives_in", "destination": "lisbon"}],
    }
    store = load_external_store(write_json(tmp_path, "g.json", export), "mem0")
    assert store.meta["relations"] == ["ann|lives_in|lisbon"]


@pytest.mark.parametrize("value", [12345, 1688326205000, True, {"t": 1}])
def test_zep_time_that_is_not_a_string_is_refused(tmp_path, value):
    """12345 under expired_at was read as 1970-01-01 and marked the fact superseded."""
    src = write_json(tmp_path, "z.json", [{"uuid": "e1", "fact": "Ann lives in Lisbon",
                                       "expired_at": value}])  # fmt: skip
    assert refused(lambda: load_external_store(src, "zep")) == [("$[0].expired_at", "type")]


def test_zep_unreadable_time_string_is_said(tmp_path):
    src = write_json(tmp_path, "z.json", [{"uuid": "e1", "fact": "Ann lives", "valid_at": "soon"}])
    store = load_external_store(src, "zep")
    assert any("$[0].valid_at" in w and "ISO-8601" in w for w in store.meta["warnings"])
    assert store.memories[0].meta["valid_at"] == "soon"


@pytest.mark.parametrize(("count", "warned"), [(20, False), (100, True)])
def test_mem0_bare_list_truncation_warning_uses_v1_limit(tmp_path, count, warned):
    """A bare list is the v1.0 shape (limit 100); a list of 20 was told "v2's limit"."""
    items = [{"id": f"m{i}", "memory": f"memory number {i}"} for i in range(count)]
    store = load_external_store(write_json(tmp_path, "l.json", items), "mem0")
    assert any("default limit" in w for w in store.meta.get("warnings", [])) is warned


# --------------------------------------------------------------------------- second pass


def test_letta_empty_block_is_said(tmp_path):
    """A block of only whitespace gave no memory without a word."""
    doc = json.loads((FIX / "letta_v2.af").read_text())
    doc["blocks"][0]["value"] = "  \n "
    label = doc["blocks"][0]["label"]
    store = load_external_store(write_json(tmp_path, "a.af", doc), "letta")
    assert any(
        w.startswith("1 block(s) hold no text ($.blocks[0] " + repr(label))
        for w in messages(store.meta["warnings"])
    )


def test_mem0_dia_id_with_leading_zero_links_to_the_locomo_unit(tmp_path, locomo_pkg):
    """The LoCoMo importer reads D10:01 as D10:1; Mem0 metadata with it matched nothing."""
    assert "D10:1" in {u.id for u in locomo_pkg.units}
    export = {"results": [{"id": "m1", "memory": "Ann moved", "metadata": {"dia_id": "D10:01"}}]}
    store = load_external_store(write_json(tmp_path, "m.json", export), "mem0", package=locomo_pkg)
    assert store.memories[0].coverage == {"D10:1": 1.0}
    assert not any("D10:01" in w for w in store.meta.get("warnings", []))


def test_amem_chroma_unreadable_timestamp_names_its_metadata_path(tmp_path):
    doc = json.loads((FIX / "amem_chroma.json").read_text())
    doc["metadatas"][1]["timestamp"] = "someday"
    store = load_external_store(write_json(tmp_path, "c.json", doc), "amem")
    assert any("(first: $.metadatas[1].timestamp: 'someday')" in w for w in store.meta["warnings"])


def test_longmemeval_session_without_text_is_said(tmp_path):
    data = _lme()[:1]
    first_id = data[0]["haystack_session_ids"][0]
    data[0]["haystack_sessions"][0] = []
    pkg = import_package("longmemeval", write_json(tmp_path, "e.json", data))
    assert any(
        message(w).startswith("1 haystack session(s) have no turn with text") and first_id in w
        for w in pkg.meta["warnings"]
    )
    assert f"{first_id}:raw" not in {c.id for c in pkg.candidates}


def test_import_of_an_export_in_another_unit_warns(tmp_path, capsys):
    pkg_file = tmp_path / "pkg.json"
    assert main(["import", "locomo", str(FIX / "locomo_small.json"), "--instance", "conv-a",
                 "-o", str(pkg_file)]) == 0  # fmt: skip
    export = write_json(tmp_path, "m.json", [{"id": "m1", "memory": "Ann has a cat"}])
    capsys.readouterr()
    argv = ["import", "mem0", str(export), "--package", str(pkg_file), "-o", str(tmp_path / "o")]
    assert main([*argv, "--cost-rule", "chars"]) == 0
    assert "costed in chars (--cost-rule chars) and the package in words" in capsys.readouterr().err
    assert main(argv) == 0
    assert "costed in" not in capsys.readouterr().err


@pytest.mark.parametrize("value", [12345, 1.5e12])
def test_zep_created_at_that_is_not_a_string_is_refused(tmp_path, value):
    """It was read as 1970 (epoch seconds) and then decided recency pruning, without a word."""
    src = write_json(tmp_path, "z.json", {"edges": [{"uuid": "z1", "fact": "x y",
                                                 "created_at": value}]})  # fmt: skip
    assert refused(lambda: load_external_store(src, "zep")) == [("$.edges[0].created_at", "type")]


def test_zep_iso_created_at_is_the_memory_time(tmp_path):
    src = write_json(tmp_path, "z.json", [{"uuid": "z1", "fact": "x y",
                                       "created_at": "2024-03-01T10:00:00Z"}])  # fmt: skip
    store = load_external_store(src, "zep")
    assert store.memories[0].created_at == "2024-03-01T10:00:00+00:00"
    assert "created_at" not in store.memories[0].meta
