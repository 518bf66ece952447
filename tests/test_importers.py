"""Importers: memory-system exports -> stores, artifact / LoCoMo / LongMemEval -> packages.

Every fixture in ``tests/fixtures/importers/`` is small, synthetic and in the real shape of its
format (see shared/reference/EXPORT_FORMATS.md). Each importer must round-trip its fixtures
(import -> canonical dict -> parse_package gives the same content hash; an imported store added
to a package validates), detect the format version, and reject corrupted inputs with a message
naming the file, the JSON path and the rule.
"""

from __future__ import annotations

import json
import pickle
import shutil
import sqlite3
import tracemalloc
import zipfile
from pathlib import Path

import pytest
from note_utils import unruled

from memaudit_core.cli import main
from memaudit_core.errors import PackageError, UnknownNameError
from memaudit_core.importers import (
    PACKAGE_FORMATS,
    STORE_FORMATS,
    import_package,
    load_external_store,
    suggest_coverage,
    suggest_store_coverage,
)
from memaudit_core.importers import longmemeval as lme
from memaudit_core.importers.amem import coerce_chroma_metadata
from memaudit_core.importers.locomo import normalise_evidence
from memaudit_core.importers.longmemeval import iter_instances, parse_lme_date
from memaudit_core.package import (
    content_hash,
    load_package,
    package_to_dict,
    parse_package,
    replace_package,
)

FIX = Path(__file__).parent / "fixtures" / "importers"


# --------------------------------------------------------------------------- helpers


def roundtrip(pkg):
    """package_to_dict -> JSON text -> parse_package gives the same hash."""
    doc = json.loads(json.dumps(package_to_dict(pkg)))
    again = parse_package(doc, "roundtrip")
    assert content_hash(again) == content_hash(pkg)
    return again


def attach(store, pkg):
    """Adding the store to a package validates, and the result round-trips."""
    merged = replace_package(pkg, stores=pkg.stores + (store,))
    roundtrip(merged)
    assert merged.store(store.id).memories == store.memories
    return merged


def problems(err: PackageError) -> set[tuple[str, str]]:
    return {(p.path, p.rule) for p in err.problems}


def assert_located(err: PackageError, source, path: str, rule: str):
    assert (path, rule) in problems(err), err.lines()
    line = next(ln for ln in err.lines() if f": {path}: " in ln and ln.endswith(f"[rule: {rule}]"))
    assert line.startswith(f"{source}: "), line


@pytest.fixture(scope="module")
def locomo_pkg():
    return import_package("locomo", FIX / "locomo_small.json", instance="conv-a")


def test_public_api_sets():
    assert STORE_FORMATS == {"mem0", "letta", "amem", "zep"}
    assert PACKAGE_FORMATS == {"artifact", "locomo", "longmemeval"}


# --------------------------------------------------------------------------- stores: round trip

STORE_CASES = [
    ("mem0_v10_list.json", "mem0", "1.0", 2),
    ("mem0_v11_graph.json", "mem0", "1.1", 1),
    ("mem0_v2_results.json", "mem0", "2", 2),
    ("mem0_platform_page.json", "mem0", "platform", 2),
    ("letta_v2.af", "letta", "af-v2", 4),
    ("letta_v2_double.af", "letta", "af-v2", 4),
    ("letta_legacy.af", "letta", "af-legacy", 3),
    ("letta_passages.json", "letta", "passages", 2),
    ("amem_notes.json", "amem", "notes-list", 2),
    ("amem_chroma.json", "amem", "chroma-get", 2),
    ("zep_graphiti.json", "zep", "graphiti-edges", 3),
    ("zep_v4_edges.json", "zep", "zep-v4", 1),
]


@pytest.mark.parametrize(("name", "fmt", "version", "n"), STORE_CASES)
def test_store_fixture_round_trips(name, fmt, version, n, locomo_pkg):
    store = load_external_store(FIX / name, fmt)
    assert store.id == fmt and store.system == fmt
    assert store.meta["format_version"] == version
    assert store.meta["cost_rule"] == "words"
    assert store.meta["coverage"] == "needs annotation"
    assert len(store.memories) == n
    assert all(m.cost >= 1 and m.text.strip() and m.coverage == {} for m in store.memories)
    attach(store, locomo_pkg)
    # With the package given, links become coverage; the result still validates.
    linked = load_external_store(FIX / name, fmt, package=locomo_pkg, store_id=f"{fmt}-linked")
    attach(linked, locomo_pkg)


@pytest.mark.parametrize("rule", ["chars", "utf8_bytes", "bytes_overhead", "tokens_o200k"])
def test_cost_rule_is_applied_and_recorded(rule):
    store = load_external_store(FIX / "mem0_v2_results.json", "mem0", cost_rule=rule)
    assert store.meta["cost_rule"] == rule
    from memaudit_core.costs import cost_of

    assert [m.cost for m in store.memories] == [cost_of(m.text, rule) for m in store.memories]


def test_unknown_format_and_rule():
    with pytest.raises(UnknownNameError, match="unknown export format 'langmem'"):
        load_external_store(FIX / "mem0_v2_results.json", "langmem")
    with pytest.raises(UnknownNameError, match="unknown cost rule"):
        load_external_store(FIX / "mem0_v2_results.json", "mem0", cost_rule="bytes")
    with pytest.raises(UnknownNameError, match="unknown package format"):
        import_package("mem0", FIX / "mem0_v2_results.json")


# --------------------------------------------------------------------------- mem0


def test_mem0_times_normalised_to_utc():
    store = load_external_store(FIX / "mem0_v10_list.json", "mem0")
    m1 = store.memories[0]
    assert m1.created_at == "2025-07-02T17:00:00+00:00"
    assert m1.meta["created_at_raw"] == "2025-07-02T10:00:00-07:00"
    assert "US/Pacific" in store.meta["time_note"]
    assert m1.meta["user_id"] == "ann"


def test_mem0_salience_relations_and_metadata():
    v2 = load_external_store(FIX / "mem0_v2_results.json", "mem0")
    assert [m.salience for m in v2.memories] == [0.82, 0.4]
    assert v2.memories[0].meta["metadata"] == {"source": "demo", "dia_id": "D10:1"}
    assert "hash" not in v2.memories[0].meta
    graph = load_external_store(FIX / "mem0_v11_graph.json", "mem0")
    assert graph.meta["relations"] == ["ann|lives_in|lisbon"]


def test_mem0_platform_superseded_kept_deleted_not():
    store = load_external_store(FIX / "mem0_platform_page.json", "mem0")
    status = {m.id: m.status for m in store.memories}
    assert status == {"p-1": "superseded", "p-2": "active"}
    assert [d["id"] for d in store.meta["deleted"]] == ["p-3"]
    assert store.meta["deleted"][0]["status"] == "deleted"


def test_mem0_json_history(locomo_pkg):
    store = load_external_store(
        FIX / "mem0_v2_results.json", "mem0", history=FIX / "mem0_history.json"
    )
    assert [m.id for m in store.memories] == ["e3e4-0001", "e3e4-0002"]
    deleted = store.meta["deleted"]
    assert deleted == [
        {
            "id": "e3e4-0009",
            "text": "Has a hamster.",
            "status": "deleted",
            "deleted_at": "2026-11-15T09:00:00+00:00",
            "from": "history",
        }
    ]
    assert store.meta["superseded_versions"] == 1
    hist = store.memories[0].meta["history"]
    assert [h["event"] for h in hist] == ["ADD", "UPDATE"]
    assert hist[1]["old"] == "I live in Berlin."
    attach(store, locomo_pkg)


def _make_history_db(path: Path, schema: str) -> None:
    con = sqlite3.connect(path)
    new_col = "new_memory" if schema == "current" else "new_value"
    extra = ", actor_id TEXT, role TEXT" if schema == "current" else ""
    con.execute(
        f"CREATE TABLE history (id TEXT PRIMARY KEY, memory_id TEXT, old_memory TEXT, "
        f"{new_col} TEXT, event TEXT, created_at DATETIME, updated_at DATETIME, "
        f"is_deleted INTEGER{extra})"
    )
    rows = [
        ("h1", "e3e4-0001", None, "I live in Berlin.", "ADD", "2026-11-01T09:00:00+00:00", None, 0),
        (
            "h2",
            "e3e4-0001",
            "I live in Berlin.",
            "I live in Lisbon now.",
            "UPDATE",
            "2026-11-01T09:00:00+00:00",
            "2026-11-30T13:04:56+00:00",
            0,
        ),
        ("h3", "gone-1", None, "Likes jazz.", "ADD", "2026-10-01T09:00:00+00:00", None, 0),
        (
            "h4",
            "gone-1",
            "Likes jazz.",
            None,
            "DELETE",
            "2026-10-01T09:00:00+00:00",
            "2026-10-20T09:00:00+00:00",
            1,
        ),
        ("h5", "missing-1", None, "Plays chess.", "ADD", "2026-10-02T09:00:00+00:00", None, 0),
    ]
    if schema == "current":
        rows = [r + (None, "user") for r in rows]
    marks = ", ".join("?" * len(rows[0]))
    con.executemany(f"INSERT INTO history VALUES ({marks})", rows)
    con.commit()
    con.close()


@pytest.mark.parametrize("schema", ["current", "new_value"])
def test_mem0_sqlite_history_both_schemas(tmp_path, schema):
    db = tmp_path / "history.db"
    _make_history_db(db, schema)
    store = load_external_store(FIX / "mem0_v2_results.json", "mem0", history=db)
    assert store.meta["history"].startswith(
        f"sqlite history.db ({'current' if schema == 'current' else 'new_value'} schema)"
    )
    assert [d["id"] for d in store.meta["deleted"]] == ["gone-1"]
    assert store.meta["deleted"][0]["text"] == "Likes jazz."
    assert store.meta["superseded_versions"] == 1
    assert any("missing-1" in w and "truncated" in w for w in store.meta["warnings"])


def test_mem0_history_db_without_table(tmp_path):
    db = tmp_path / "history.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE other (x)")
    con.commit()
    con.close()
    with pytest.raises(PackageError) as info:
        load_external_store(FIX / "mem0_v2_results.json", "mem0", history=db)
    assert_located(info.value, db, "history", "mem0-history")


def test_mem0_bad_history_rows(tmp_path):
    bad = tmp_path / "hist.json"
    bad.write_text(json.dumps([{"memory_id": "x", "event": "MERGE"}, {"event": "ADD"}]))
    with pytest.raises(PackageError) as info:
        load_external_store(FIX / "mem0_v2_results.json", "mem0", history=bad)
    assert_located(info.value, bad, "$[0].event", "mem0-event")
    assert_located(info.value, bad, "$[1].memory_id", "required")


def test_mem0_provenance_coverage(locomo_pkg):
    store = load_external_store(FIX / "mem0_v10_list.json", "mem0", package=locomo_pkg)
    cov = {m.id: m.coverage for m in store.memories}
    assert cov == {"m-1": {"D10:1": 1.0}, "m-2": {"D1:1": 1.0, "D1:3": 1.0}}
    assert store.meta["coverage"].startswith("from provenance links: 2 from unit links")
    assert store.memories[0].meta["coverage_source"] == "unit-links"


def test_experience_links_give_labelled_upper_estimate(tmp_path, locomo_pkg):
    export = tmp_path / "m.json"
    export.write_text(
        json.dumps(
            {
                "results": [
                    {
                        "id": "x1",
                        "memory": "Bo does pottery; Ann moves",
                        "metadata": {"session_id": "session_2"},
                    },
                ]
            }
        )
    )
    store = load_external_store(export, "mem0", package=locomo_pkg)
    mem = store.memories[0]
    assert mem.coverage == {"D2:1": 1.0, "D2:2": 1.0}  # best of session_2's candidates
    assert mem.meta["coverage_source"] == "experience-links"
    assert "upper estimate" in store.meta["coverage"]


# --------------------------------------------------------------------------- letta


def test_letta_blocks_split_into_lines():
    store = load_external_store(FIX / "letta_v2.af", "letta")
    assert [(m.id, m.text) for m in store.memories] == [
        ("block-human-0", "First name: Sarah"),
        ("block-human-1", "Lives in Lisbon"),
        ("block-human-2", "Has a cat named Miso"),
        ("block-persona-0", "I am Sam, a helpful companion."),
    ]
    assert store.meta["messages"] == 3 and store.meta["memory_edits"] == 1
    assert store.meta["revision_id"] == "f6cd5a1e519d"
    assert store.meta["double_encoded"] is False
    double = load_external_store(FIX / "letta_v2_double.af", "letta")
    assert double.meta["double_encoded"] is True
    assert double.memories == store.memories


def test_letta_legacy_and_passages():
    legacy = load_external_store(FIX / "letta_legacy.af", "letta")
    assert legacy.meta["letta_version"] == "0.6.47"
    assert legacy.memories[0].created_at == "2025-04-01T03:47:27+00:00"  # naive read as UTC
    assert legacy.meta["messages"] == 2 and legacy.meta["memory_edits"] == 1
    passages = load_external_store(FIX / "letta_passages.json", "letta")
    assert [m.id for m in passages.memories] == ["passage-0001", "passage-0002"]
    assert [d["id"] for d in passages.meta["deleted"]] == ["passage-0003"]
    assert "embedding" not in json.dumps(package_meta_of(passages))


def package_meta_of(store):
    return {"meta": store.meta, "memories": [m.meta for m in store.memories]}


def test_letta_duplicate_labels_get_distinct_ids(tmp_path):
    af = json.loads((FIX / "letta_v2.af").read_text())
    af["blocks"].append({"id": "block-2", "label": "human", "value": "Second human block"})
    f = tmp_path / "dup.af"
    f.write_text(json.dumps(af))
    ids = [m.id for m in load_external_store(f, "letta").memories]
    assert "block-human.2-0" in ids and len(ids) == len(set(ids))


def test_letta_message_texts_unwrap_legacy_user_turns():
    from memaudit_core.importers.letta import message_texts

    assert message_texts(FIX / "letta_legacy.af")[0] == "I love ramen"


# --------------------------------------------------------------------------- amem


def test_amem_chroma_metadata_coerced():
    store = load_external_store(FIX / "amem_chroma.json", "amem")
    n1, n2 = store.memories
    assert n1.meta["keywords"] == ["support group", "LGBTQ"]
    assert n2.meta["links"] == ["n-1"] and n2.meta["retrieval_count"] == 3
    assert n2.meta["tags"] == "not json"  # kept as the string, not dropped
    assert store.meta["time_zone"] == "naive"
    assert n1.created_at == "2023-05-08T13:56:00"


def test_amem_notes_free_text_timestamp_and_importance():
    store = load_external_store(FIX / "amem_notes.json", "amem")
    assert store.memories[1].created_at == "2023-05-08T13:56:00"
    assert store.memories[1].salience == 0.7


def test_amem_numeric_stamp_is_read_as_a_stamp_not_epoch_milliseconds(tmp_path):
    """CLI QA: 202307010900 as a JSON number became 1976-05-30 (epoch ms)."""
    notes = json.loads((FIX / "amem_notes.json").read_text())
    notes[0]["timestamp"] = 202307010900
    f = tmp_path / "notes.json"
    f.write_text(json.dumps(notes))
    store = load_external_store(f, "amem")
    assert store.memories[0].created_at == "2023-07-01T09:00:00"


def test_amem_notes_dict(tmp_path):
    notes = json.loads((FIX / "amem_notes.json").read_text())
    f = tmp_path / "notes.json"
    f.write_text(json.dumps({n["id"]: n for n in notes}))
    store = load_external_store(f, "amem")
    assert store.meta["format_version"] == "notes-dict"
    assert [m.id for m in store.memories] == ["7c1e-1", "7c1e-2"]


def test_coerce_chroma_metadata():
    assert coerce_chroma_metadata({"importance_score": "0.5", "tags": "[]"}) == {
        "importance_score": 0.5,
        "tags": [],
    }


@pytest.mark.parametrize("name", ["memory_cache_sample_0.pkl", "notes.json"])
def test_pickle_refused(tmp_path, name):
    f = tmp_path / name
    f.write_bytes(pickle.dumps({"7c1e": {"content": "x"}}, protocol=4))
    with pytest.raises(PackageError) as info:
        load_external_store(f, "amem")
    assert_located(info.value, f, "$", "no-pickle")
    assert "unpickling runs code" in info.value.lines()[0]


# --------------------------------------------------------------------------- zep


def test_zep_superseded_kept_and_marked():
    store = load_external_store(FIX / "zep_graphiti.json", "zep")
    by_id = {m.id: m for m in store.memories}
    old = by_id["edge-1"]
    assert old.status == "superseded"
    assert old.meta["invalid_at"] == "2023-07-01T00:00:00+00:00"
    assert old.meta["expired_at"] == "2023-07-02T19:30:05+00:00"
    # invalid_at alone (a past fact) is not a supersession.
    assert by_id["edge-3"].status == "active"
    assert by_id["edge-3"].meta["invalid_at"] == "2020-12-31T00:00:00+00:00"
    assert store.meta["superseded"] == 1 and store.meta["node_summaries"] == 1
    assert "fact_embedding" not in json.dumps(package_meta_of(store))


def test_zep_episode_provenance(locomo_pkg):
    store = load_external_store(FIX / "zep_graphiti.json", "zep", package=locomo_pkg)
    cov = {m.id: (m.coverage, m.meta.get("coverage_source")) for m in store.memories}
    # The episode's dia_id: an upper estimate for each of its edges, not an exact link.
    assert cov["edge-1"] == ({"D2:2": 1.0}, "episode-unit-links")
    assert "1 from their episode's or block's unit links (upper estimate" in store.meta["coverage"]
    assert cov["edge-2"] == ({"D10:1": 1.0, "D10:2": 1.0, "D10:3": 1.0}, "experience-links")
    assert cov["edge-3"][1] == "experience-links"
    attach(store, locomo_pkg)


# --------------------------------------------------------------------------- corrupted exports

CORRUPT = [
    ("mem0_truncated.json", "mem0", "$ (line 1, column 38)", "truncated"),
    ("mem0_wrong_type.json", "mem0", "$", "mem0-shape"),
    ("mem0_missing_text.json", "mem0", "$.results[1].memory", "required"),
    ("mem0_missing_text.json", "mem0", "$.results[2].memory", "non-empty-text"),
]


@pytest.mark.parametrize(("name", "fmt", "path", "rule"), CORRUPT)
def test_corrupted_fixture_rejected(name, fmt, path, rule):
    f = FIX / name
    with pytest.raises(PackageError) as info:
        load_external_store(f, fmt)
    assert_located(info.value, f, path, rule)


def _write(tmp_path, name, obj) -> Path:
    f = tmp_path / name
    f.write_text(obj if isinstance(obj, str) else json.dumps(obj))
    return f


@pytest.mark.parametrize(
    ("fmt", "doc", "path", "rule"),
    [
        ("mem0", '"just text"', "$", "mem0-shape"),
        ("mem0", {"results": {"a": 1}}, "$.results", "type"),
        ("mem0", [{"memory": "no id"}], "$[0].id", "required"),
        ("mem0", [{"id": "a", "memory": "x"}, {"id": "a", "memory": "y"}], "$[1].id", "unique-id"),
        ("mem0", [{"id": "a", "memory": 5}], "$[0].memory", "type"),
        ("letta", {"agents": "x"}, "$.agents", "type"),
        ("letta", {"name": "no blocks"}, "$", "letta-shape"),
        ("letta", {"core_memory": [{"label": "human"}]}, "$.core_memory[0].value", "required"),
        ("letta", [{"id": "passage-1"}], "$[0].text", "required"),
        ("amem", 42, "$", "amem-shape"),
        ("amem", [{"id": "n1", "keywords": []}], "$[0].content", "required"),
        ("amem", {"ids": ["a", "b"], "documents": ["x"]}, "$.documents", "aligned"),
        ("zep", {"nodes": []}, "$", "zep-shape"),
        ("zep", [{"uuid": "e1", "name": "LIVES_IN"}], "$[0].fact", "required"),
        ("zep", [{"fact": "no uuid"}], "$[0].uuid", "required"),
    ],
)
def test_bad_exports_located(tmp_path, fmt, doc, path, rule):
    f = _write(tmp_path, f"{fmt}.json", doc)
    with pytest.raises(PackageError) as info:
        load_external_store(f, fmt)
    assert_located(info.value, f, path, rule)


@pytest.mark.parametrize("fmt", sorted(STORE_FORMATS))
def test_truncated_and_missing_files(tmp_path, fmt):
    f = _write(tmp_path, "cut.json", '[{"id": "a", "text": "abc')
    with pytest.raises(PackageError) as info:
        load_external_store(f, fmt)
    assert {r for _, r in problems(info.value)} == {"truncated"}
    with pytest.raises(PackageError) as info:
        load_external_store(tmp_path / "nope.json", fmt)
    assert_located(info.value, tmp_path / "nope.json", "$", "file-exists")


# --------------------------------------------------------------------------- suggestions


def test_suggestions_are_returned_separately_never_counted(locomo_pkg):
    store = load_external_store(FIX / "amem_notes.json", "amem", package=locomo_pkg)
    assert all(m.coverage == {} for m in store.memories)
    text = "Ann moved to Lisbon on the first of July"
    sugg = suggest_coverage(text, locomo_pkg)
    assert next(iter(sugg)) == "D10:1" and sugg["D10:1"] == 1.0
    assert all(0 < v <= 1 for v in sugg.values())
    # On a store: suggestions per memory, the store itself untouched.
    mem0 = load_external_store(FIX / "mem0_v2_results.json", "mem0")
    rows = suggest_store_coverage(mem0, locomo_pkg)
    assert "D10:3" in rows["e3e4-0002"]
    assert all(m.coverage == {} for m in mem0.memories)
    assert suggest_coverage("", locomo_pkg) == {}


# --------------------------------------------------------------------------- artifact

ART = FIX / "artifact_pkg"


def test_artifact_folder_and_zip(tmp_path):
    pkg = import_package("artifact", ART)
    assert pkg.id == "artifact-veg" and pkg.budget == 6 and pkg.cost_unit == "words"
    assert pkg.meta["format_version"] == "coverage-package-jsonl"
    assert pkg.meta["origin"] == "synthetic fixture"
    assert [e.id for e in pkg.experiences] == ["e1", "e2", "e3"]
    assert pkg.experiences[2].meta == {"speaker": "user"}
    cands = {c.id: c for c in pkg.candidates}
    assert (
        cands["e3:fact"].experience == "e3" and cands["e3:fact"].text == "Table booked for Friday."
    )
    assert cands["e2:raw"].coverage == {"u:diet:current": 1.0, "u:diet:invalid": 0.5}
    assert cands["e2:tomb"].meta == {"source": "llm"}
    assert pkg.queries[0].requires == ("u:diet:current",) and pkg.queries[0].weight == 2
    roundtrip(pkg)
    # zip with a top-level folder; load_package dispatches folders and zips here too
    z = tmp_path / "artifact-veg.zip"
    with zipfile.ZipFile(z, "w") as zf:
        for f in ART.iterdir():
            zf.write(f, f"artifact_pkg/{f.name}")
    zipped = load_package(z)
    assert zipped.meta["container"] == "zip"
    assert package_to_dict(zipped)["candidates"] == package_to_dict(pkg)["candidates"]
    assert content_hash(load_package(ART)) == content_hash(pkg)


def _art_copy(tmp_path) -> Path:
    d = tmp_path / "art"
    shutil.copytree(ART, d)
    return d


def _edit_line(path: Path, line: int, new: dict | str) -> None:
    lines = path.read_text().splitlines()
    lines[line - 1] = new if isinstance(new, str) else json.dumps(new)
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize(
    ("file", "line", "new", "path", "rule"),
    [
        (
            "coverage_matrix.jsonl",
            3,
            {"candidate_id": "e2:raw", "unit_id": "u:diet:invalid", "value": 1.5},
            "coverage_matrix.jsonl:3.value",
            "coverage-range",
        ),
        (
            "coverage_matrix.jsonl",
            2,
            {"candidate_id": "e2:raw", "unit_id": "u:nope", "value": 1},
            "coverage_matrix.jsonl:2.unit_id",
            "known-unit",
        ),
        (
            "coverage_matrix.jsonl",
            2,
            {"candidate_id": "ghost", "unit_id": "u:diet:old", "value": 1},
            "coverage_matrix.jsonl:2.candidate_id",
            "known-candidate",
        ),
        (
            "coverage_matrix.jsonl",
            2,
            {"candidate_id": "e1:raw", "unit_id": "u:diet:old", "value": 1},
            "coverage_matrix.jsonl:2",
            "unique-cell",
        ),
        (
            "coverage_matrix.jsonl",
            4,
            {"candidate_id": "e2:fact", "unit_id": "u:diet:current"},
            "coverage_matrix.jsonl:4.value",
            "required",
        ),
        (
            "candidate_memories.jsonl",
            2,
            {
                "candidate_id": "e2:raw",
                "experience_id": "e2",
                "representation": "raw_span",
                "cost": 0,
            },
            "candidate_memories.jsonl:2.cost",
            "cost-positive",
        ),
        (
            "candidate_memories.jsonl",
            3,
            {
                "candidate_id": "e2:fact",
                "experience_id": "e9",
                "representation": "atomic_fact",
                "cost": 3,
            },
            "candidate_memories.jsonl:3.experience_id",
            "known-experience",
        ),
        (
            "candidate_memories.jsonl",
            5,
            {
                "id": "e3:fact",
                "group": "e3",
                "type": "atomic_fact",
                "cost": 4,
                "score": float("nan"),
            },
            "candidate_memories.jsonl:5.score",
            "finite",
        ),
        (
            "evidence_units.jsonl",
            1,
            {"unit_id": "u:diet:old", "kind": "stale", "weight": -1},
            "evidence_units.jsonl:1.weight",
            "weight-range",
        ),
        (
            "experiences.jsonl",
            2,
            {"experience_id": "e1", "time_index": 1},
            "experiences.jsonl:2.experience_id",
            "unique-id",
        ),
        (
            "queries.jsonl",
            1,
            {"query_id": "q1", "required_units": ["u:none"]},
            "queries.jsonl:1.required_units[0]",
            "known-unit",
        ),
        (
            "experiences.jsonl",
            2,
            '{"experience_id": "e2", "time_index": 1,,}',
            "experiences.jsonl:2",
            "json-syntax",
        ),
        ("experiences.jsonl", 2, "[1, 2]", "experiences.jsonl:2", "type"),
        ("meta.json", 1, '{"id": "x", "budget": -2}', "meta.json.budget", "budget-range"),
    ],
)
def test_artifact_problems_located_by_file_and_line(tmp_path, file, line, new, path, rule):
    d = _art_copy(tmp_path)
    f = d / file
    if file == "meta.json":
        f.write_text(new)
    else:
        _edit_line(f, line, new)
    with pytest.raises(PackageError) as info:
        import_package("artifact", d)
    assert_located(info.value, d, path, rule)


def test_artifact_truncated_last_line_and_missing_file(tmp_path):
    d = _art_copy(tmp_path)
    f = d / "coverage_matrix.jsonl"
    f.write_text(f.read_text().rstrip("\n")[:-8])
    with pytest.raises(PackageError) as info:
        import_package("artifact", d)
    assert_located(info.value, d, "coverage_matrix.jsonl:6", "truncated")
    (d / "evidence_units.jsonl").unlink()
    with pytest.raises(PackageError) as info:
        import_package("artifact", d)
    assert_located(info.value, d, "evidence_units.jsonl", "required-file")


def test_artifact_bad_zip(tmp_path):
    z = tmp_path / "broken.zip"
    z.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(PackageError) as info:
        import_package("artifact", z)
    assert_located(info.value, z, "$", "zip")


# --------------------------------------------------------------------------- LoCoMo


@pytest.mark.parametrize(
    ("raw", "ok", "bad"),
    [
        ("D1:3", ["D1:3"], []),
        ("D8:6; D9:17", ["D8:6", "D9:17"], []),
        ("D9:1 D4:4 D4:6", ["D9:1", "D4:4", "D4:6"], []),
        ("D:11:26", ["D11:26"], []),
        ("D30:05", ["D30:5"], []),
        ("D1:3,D2:4", ["D1:3", "D2:4"], []),
        ("D", [], ["D"]),
        ("", [], []),
        (None, [], ["None"]),
    ],
)
def test_locomo_evidence_normalisation(raw, ok, bad):
    assert normalise_evidence(raw) == (ok, bad)


def test_locomo_package(locomo_pkg):
    pkg = locomo_pkg
    assert pkg.meta["format_version"] == "locomo10-array"
    assert [e.id for e in pkg.experiences] == ["session_1", "session_2", "session_10"]
    assert [e.time for e in pkg.experiences] == [1, 2, 10]
    assert pkg.experiences[0].meta["date"] == "2023-05-08T13:56:00"
    kinds = {u.id: u.kind for u in pkg.units}
    assert kinds == {
        "D1:1": "fact",
        "D1:3": "fact",
        "D2:1": "fact",
        "D2:2": "temporal_order",
        "D10:1": "temporal_order",
        "D10:2": "abstention",
        "D10:3": "fact",
    }
    # weight = number of questions that need the turn (q1 and q5 both cite D1:1)
    assert pkg.unit_weights()["D1:1"] == 2
    q = {x.id: x for x in pkg.queries}
    assert q["q2"].requires == ("D2:2", "D10:1")  # "D2:2; D10:1" split
    assert q["q4"].requires == ("D2:1",)  # "D2:01" normalised
    assert q["q5"].requires == ("D1:1",) and q["q5"].answer == "1"  # "D:1:1", int answer
    assert q["q6"].meta["adversarial_answer"] == "Rex"
    cands = {c.id: c for c in pkg.candidates}
    assert cands["session_10:raw"].coverage == {"D10:1": 1, "D10:2": 1, "D10:3": 1}
    assert cands["session_1:summary"].coverage == {"D1:1": 0.5, "D1:3": 0.5}
    assert "session_2:summary" not in cands
    assert cands["session_1:raw"].cost == len(cands["session_1:raw"].text.split())
    warnings = "\n".join(pkg.meta["warnings"])
    assert "no turn list (sessions 11..12)" in warnings
    assert "unreadable evidence reference 'D'" in warnings
    assert "evidence D9:9" in warnings and "names no turn" in warnings
    assert "q8" in warnings and "no evidence" in warnings
    obs = pkg.store("observations")
    assert obs.memories[0].coverage == {"D1:1": 1.0, "D1:3": 1.0}
    assert {m.id: m.coverage for m in obs.memories}["obs-10-1"] == {"D10:3": 1.0}  # "D10:03"
    assert {m.id: m.coverage for m in obs.memories}["obs-2-2"] == {}  # links a non-evidence turn
    roundtrip(pkg)


def test_locomo_instance_choice(tmp_path):
    with pytest.raises(PackageError) as info:
        import_package("locomo", FIX / "locomo_small.json")
    assert_located(info.value, FIX / "locomo_small.json", "$", "instance-required")
    assert "conv-a, conv-b" in info.value.lines()[0]
    with pytest.raises(PackageError) as info:
        import_package("locomo", FIX / "locomo_small.json", instance="conv-z")
    assert_located(info.value, FIX / "locomo_small.json", "$", "known-instance")
    one = import_package("locomo", FIX / "locomo_small.json", instance="conv-b")
    assert one.id == "locomo-conv-b"
    roundtrip(one)


def test_locomo_flat_layout_file_and_zip(tmp_path):
    flat = import_package("locomo", FIX / "locomo_flat_conv-b.json")
    assert flat.meta["format_version"] == "locomo-flat"
    assert flat.id == "locomo-conv-b"
    assert {c.id for c in flat.candidates} == {"session_1:raw", "session_1:summary"}
    roundtrip(flat)
    z = tmp_path / "locomo10.zip"
    with zipfile.ZipFile(z, "w") as zf:
        doc = json.loads((FIX / "locomo_flat_conv-b.json").read_text())
        del doc["sample_id"]
        zf.writestr("multimodal_dialog/locomo10_v2/7.json", json.dumps(doc))
    zipped = import_package("locomo", z)
    assert zipped.id == "locomo-7" and zipped.meta["format_version"] == "locomo-flat"


@pytest.mark.parametrize(
    ("doc", "path", "rule"),
    [
        ({"qa": []}, "$", "locomo-shape"),
        ([{"sample_id": "x", "qa": []}], "$[0].conversation", "required"),
        (
            [
                {
                    "sample_id": "x",
                    "conversation": {
                        "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi"}]
                    },
                }
            ],
            "$[0].qa",
            "required",
        ),
        (
            [
                {
                    "sample_id": "x",
                    "conversation": {"session_1": [{"speaker": "A", "dia_id": "D1:1"}]},
                }
            ],
            "$[0].conversation.session_1[0].text",
            "required",
        ),
        (
            [{"sample_id": "x", "conversation": {"session_1": [{"speaker": "A", "text": "hi"}]}}],
            "$[0].conversation.session_1[0].dia_id",
            "dia-id",
        ),
        (
            [{"sample_id": "x", "conversation": {"session_1": "oops"}}],
            "$[0].conversation.session_1",
            "type",
        ),
    ],
)
def test_locomo_bad_files(tmp_path, doc, path, rule):
    f = _write(tmp_path, "locomo.json", doc)
    with pytest.raises(PackageError) as info:
        import_package("locomo", f)
    assert_located(info.value, f, path, rule)


def test_locomo_sample_ids_must_be_strings_and_unique(tmp_path):
    """CLI QA: a null sample_id became the package id "locomo-None"; of two conversations with
    one id the first was taken silently."""
    convs = json.loads((FIX / "locomo_small.json").read_text())
    null = [{**convs[0], "sample_id": None}]
    with pytest.raises(PackageError) as info:
        import_package("locomo", _write(tmp_path, "null.json", null))
    assert_located(info.value, tmp_path / "null.json", "$[0].sample_id", "type")
    twice = [convs[0], {**convs[1], "sample_id": convs[0]["sample_id"]}]
    with pytest.raises(PackageError) as info:
        import_package("locomo", _write(tmp_path, "twice.json", twice), instance="conv-a")
    assert_located(info.value, tmp_path / "twice.json", "$[1].sample_id", "unique-id")


# --------------------------------------------------------------------------- LongMemEval

LME = FIX / "longmemeval_small.json"


def test_lme_knowledge_update():
    pkg = import_package("longmemeval", LME, instance="ku_01")
    assert pkg.meta["format_version"] == "longmemeval-array"
    # sessions sorted by date (the file lists answer_a2 before answer_a1)
    assert [e.id for e in pkg.experiences] == ["sharegpt_x_0", "answer_a1", "answer_a2"]
    units = {u.id: u for u in pkg.units}
    assert units["answer_a2_1"].kind == "current_truth"
    assert units["answer_a1_1"].kind == "stale" and units["answer_a1_1"].weight == 0.25
    assert pkg.queries[0].requires == ("answer_a2_1",)
    cands = {c.id: c for c in pkg.candidates}
    assert cands["answer_a1_1:fact"].text == "user: I live in Berlin, near the river."
    assert cands["answer_a1_1:fact"].coverage == {"answer_a1_1": 1.0}
    assert cands["answer_a2:raw"].coverage == {"answer_a2_1": 1.0}
    assert cands["sharegpt_x_0:raw"].coverage == {}
    roundtrip(pkg)


def test_lme_multi_session_and_abstention():
    ms = import_package("longmemeval", LME, instance="ms_02")
    assert {u.id: u.kind for u in ms.units} == {"answer_b1_1": "fact", "answer_b2_2": "fact"}
    assert ms.queries[0].answer == "2"
    roundtrip(ms)
    abs_ = import_package("longmemeval", LME, instance="tr_03_abs")
    assert abs_.units == () and abs_.meta["abstention"] is True
    assert "OPT is 0" in abs_.meta["warnings"][0]
    roundtrip(abs_)


def test_lme_instance_required_and_unknown():
    with pytest.raises(PackageError) as info:
        import_package("longmemeval", LME)
    assert_located(info.value, LME, "$", "instance-required")
    assert "ku_01, ms_02, tr_03_abs" in info.value.lines()[0]
    with pytest.raises(PackageError) as info:
        import_package("longmemeval", LME, instance="nope")
    assert_located(info.value, LME, "$", "known-instance")


def test_lme_single_object_file(tmp_path):
    inst = json.loads(LME.read_text())[0]
    f = _write(tmp_path, "one.json", inst)
    pkg = import_package("longmemeval", f)
    assert pkg.id == "longmemeval-ku_01"
    assert pkg.meta["format_version"] == "longmemeval-object"


def test_lme_dates():
    assert parse_lme_date("2023/05/30 (Tue) 23:40").isoformat() == "2023-05-30T23:40:00"
    assert parse_lme_date("2023/05/30 (Mar) 23:40") is not None  # weekday ignored
    assert parse_lme_date("30 May 2023") is None


def _big_instance(k: int, n_sessions: int = 20, n_turns: int = 8) -> dict:
    ev = min(3, n_sessions - 1)
    sids = [f"answer_{k}_{s}" if s == ev else f"ultrachat_{k}_{s}" for s in range(n_sessions)]
    sessions = []
    for s in range(n_sessions):
        turns = []
        for t in range(n_turns):
            content = f"Instance {k} session {s} turn {t}: " + "lorem ipsum dolor sit amet " * 6
            turn = {"role": "user" if t % 2 == 0 else "assistant", "content": content}
            if s == ev and t == min(2, n_turns - 1):
                turn["has_answer"] = True
            turns.append(turn)
        sessions.append(turns)
    return {
        "question_id": f"q{k:04d}",
        "question_type": "single-session-user",
        "question": f"What happened in instance {k}?",
        "answer": f"answer {k}",
        "question_date": "2024/01/01 (Mon) 10:00",
        "haystack_session_ids": sids,
        "haystack_dates": [
            f"2023/{1 + s % 12:02d}/{1 + s:02d} (Mon) 10:00" for s in range(n_sessions)
        ],
        "haystack_sessions": sessions,
        "answer_session_ids": [sids[ev]],
    }


@pytest.fixture(scope="module")
def big_lme(tmp_path_factory):
    f = tmp_path_factory.mktemp("lme") / "longmemeval_s_like.json"
    with f.open("w") as fh:
        fh.write("[\n")
        for k in range(240):
            if k:
                fh.write(",\n")
            json.dump(_big_instance(k), fh)
        fh.write("\n]\n")
    return f


def test_lme_streaming_picks_the_right_instance_with_bounded_memory(big_lme, monkeypatch):
    monkeypatch.setattr(lme, "CHUNK", 1 << 16)
    size = big_lme.stat().st_size
    assert size > 8_000_000
    tracemalloc.start()
    try:
        pkg = import_package("longmemeval", big_lme, instance="q0200")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert pkg.id == "longmemeval-q0200"
    assert [u.id for u in pkg.units] == ["answer_200_3_3"]
    assert pkg.meta["instance_index"] == 200
    assert peak < size / 8, (peak, size)


def test_lme_streaming_stops_at_the_instance(tmp_path):
    # Everything after the wanted instance is garbage: it must never be decoded.
    good = ",\n".join(json.dumps(_big_instance(k, 3, 2)) for k in range(5))
    f = _write(tmp_path, "tail.json", "[" + good + ",\n{this is not json at all ...")
    pkg = import_package("longmemeval", f, instance="q0004")
    assert pkg.id == "longmemeval-q0004"
    with pytest.raises(PackageError) as info:
        import_package("longmemeval", f, instance="q0009")
    assert {r for _, r in problems(info.value)} == {"json-syntax"}
    assert next(iter(problems(info.value)))[0].startswith("$[5] (line 6)")


def test_lme_iter_matches_json_load_with_tiny_chunks(tmp_path):
    docs = [_big_instance(k, 2, 2) for k in range(4)] + [{"question_id": 'é\u2028"x', "n": 1.5e3}]
    f = _write(tmp_path, "all.json", json.dumps(docs, indent=2))
    assert [inst for _, inst in iter_instances(f, chunk=7)] == json.loads(f.read_text())


@pytest.mark.parametrize(
    ("text", "path", "rule"),
    [
        ('[{"question_id": "a"}, {"question_id": "b"', "$[1] (line 1)", "truncated"),
        ('[{"question_id": "a"} {"question_id": "b"}]', "$[1]", "json-syntax"),
        ('[{"question_id": "a"},', "$[1] (line 1)", "truncated"),
        ('"not an array"', "$", "longmemeval-shape"),
        ("[1, 2]", "$[0]", "type"),
        ("", "$", "longmemeval-shape"),
    ],
)
def test_lme_bad_files(tmp_path, text, path, rule):
    f = _write(tmp_path, "bad.json", text)
    with pytest.raises(PackageError) as info:
        import_package("longmemeval", f, instance="b")
    assert_located(info.value, f, path, rule)


def _lme_edit_refused(tmp_path, edit, path: str, rule: str) -> None:
    """The fixture's first instance, changed by ``edit``, is refused at ``path`` by ``rule``."""
    inst = json.loads(LME.read_text())[0]
    edit(inst)
    f = _write(tmp_path, "edited.json", [inst])
    with pytest.raises(PackageError) as info:
        import_package("longmemeval", f)
    assert_located(info.value, f, path, rule)


def test_lme_misaligned_haystack(tmp_path):
    _lme_edit_refused(
        tmp_path, lambda inst: inst["haystack_dates"].pop(), "$[0].haystack_sessions", "aligned"
    )


@pytest.mark.parametrize("bad", ["yes", 1, None])
def test_lme_has_answer_must_be_a_boolean(tmp_path, bad):
    """QA: has_answer "yes" read as false, so the turn's evidence vanished without a word."""
    _lme_edit_refused(
        tmp_path,
        lambda inst: inst["haystack_sessions"][0][0].update(has_answer=bad),
        "$[0].haystack_sessions[0][0].has_answer",
        "type",
    )


@pytest.mark.parametrize("bad", ["2", 7, True])
def test_locomo_category_must_be_a_known_integer(tmp_path, bad):
    """QA: a string "2" lost its temporal kind, and a 7 made its evidence 'abstention'."""
    doc = json.loads((FIX / "locomo_small.json").read_text())
    doc[0]["qa"][0]["category"] = bad
    f = _write(tmp_path, "c.json", doc)
    with pytest.raises(PackageError) as info:
        import_package("locomo", f, instance=doc[0]["sample_id"])
    assert_located(info.value, f, "$[0].qa[0].category", "locomo-category")


def test_locomo_question_without_category_is_kept_with_a_warning(tmp_path):
    doc = json.loads((FIX / "locomo_small.json").read_text())
    del doc[0]["qa"][0]["category"]
    f = _write(tmp_path, "c.json", doc)
    pkg = import_package("locomo", f, instance=doc[0]["sample_id"])
    assert any("q1" in w and "no category" in w for w in pkg.meta["warnings"])


# --------------------------------------------------------------------------- CLI


def test_cli_import_and_score_external(tmp_path, capsys):
    out = tmp_path / "loc.json"
    rc = main(
        ["import", "locomo", str(FIX / "locomo_small.json"), "--instance", "conv-a", "-o", str(out)]
    )
    err = capsys.readouterr().err
    assert rc == 0, err
    assert "imported locomo" in err and ": q7: " in err
    assert load_package(out).id == "locomo-conv-a"

    rc = main(
        [
            "score",
            str(out),
            "--external",
            str(FIX / "mem0_v10_list.json"),
            "--format",
            "mem0",
            "--budget",
            "9",
            "--json",
        ]
    )
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    result = json.loads(cap.out)
    assert result["external_store"]["format_version"] == "1.0"
    assert result["external_store"]["cost_rule"] == "words"
    assert result["source_kind"] == "external"
    assert result["value"] > 0  # its dia_id links cover evidence units

    # CLI QA: the export's deleted memories were a count only; their ids were nowhere.
    rc = main(
        ["score", str(out), "--external", str(FIX / "mem0_platform_page.json")]
        + ["--format", "mem0", "--budget", "9", "--json"]
    )
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    summary = json.loads(cap.out)["external_store"]
    assert summary["deleted"] == 1 and summary["deleted_ids"] == ["p-3"]


def test_cli_score_external_needs_annotation_note(tmp_path, capsys):
    out = tmp_path / "lme.json"
    assert main(["import", "longmemeval", str(LME), "--instance", "ku_01", "-o", str(out)]) == 0
    capsys.readouterr()
    rc = main(
        [
            "score",
            str(out),
            "--external",
            str(FIX / "zep_graphiti.json"),
            "--format",
            "zep",
            "--cost-rule",
            "chars",
            "--budget",
            "20",
        ]
    )
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    assert "needs annotation" in cap.err
    assert "costed by chars" in cap.out


def test_cli_bad_export_exit_2_located(tmp_path, capsys):
    out = tmp_path / "loc.json"
    main(
        ["import", "locomo", str(FIX / "locomo_small.json"), "--instance", "conv-b", "-o", str(out)]
    )
    capsys.readouterr()
    bad = FIX / "mem0_missing_text.json"
    rc = main(["score", str(out), "--external", str(bad), "--format", "mem0"])
    err = capsys.readouterr().err
    assert rc == 2
    assert f"{bad}: $.results[1].memory: missing the memory text [rule: required]" in err
    rc = main(["score", str(out), "--external", str(FIX / "amem_notes.json")])
    assert rc == 2 and "--format" in capsys.readouterr().err
    rc = main(["score", str(out), "--external", str(bad), "--format", "mem0", "--cost-rule", "x"])
    assert rc == 2 and "unknown cost rule" in capsys.readouterr().err


def test_cli_import_errors(tmp_path, capsys):
    rc = main(["import", "locomo", str(FIX / "locomo_small.json"), "-o", str(tmp_path / "x.json")])
    err = capsys.readouterr().err
    assert rc == 2 and "[rule: instance-required]" in err and "conv-a" in err
    rc = main(["import", "artifact", str(tmp_path / "missing"), "-o", str(tmp_path / "y.json")])
    assert rc == 2 and "[rule: file-exists]" in capsys.readouterr().err


def test_cli_import_artifact_to_stdout(capsys):
    assert main(["import", "artifact", str(ART)]) == 0
    cap = capsys.readouterr()
    assert json.loads(cap.out)["id"] == "artifact-veg"


def test_benchmark_files_given_to_the_other_importer_say_which_one_to_use():
    with pytest.raises(PackageError) as err:
        import_package("longmemeval", FIX / "locomo_small.json")
    text = str(err.value)
    assert "$[0].question_id" in text and "use `memaudit import locomo`" in text
    with pytest.raises(PackageError) as err:
        import_package("locomo", FIX / "longmemeval_small.json")
    text = str(err.value)
    assert "$[0].conversation" in text and "use `memaudit import longmemeval`" in text


def test_artifact_reports_row_and_package_problems_in_one_pass(tmp_path):
    """QA: an unknown candidate in the coverage rows hid a string cost until it was fixed."""
    d = _art_copy(tmp_path)
    first = json.loads((d / "candidate_memories.jsonl").read_text().splitlines()[0])
    _edit_line(d / "candidate_memories.jsonl", 1, {**first, "cost": "3"})
    cov = json.loads((d / "coverage_matrix.jsonl").read_text().splitlines()[0])
    _edit_line(d / "coverage_matrix.jsonl", 1, {**cov, "candidate_id": "nobody"})
    with pytest.raises(PackageError) as info:
        import_package("artifact", d)
    rules = {p.rule for p in info.value.problems}
    assert {"known-candidate", "type"} <= rules, info.value.lines()


def test_longmemeval_unknown_question_type_is_said(tmp_path):
    """CLI QA: an unknown question_type was accepted without a word."""
    insts = json.loads(LME.read_text())
    odd = [{**insts[1], "question_type": "weird"}]
    pkg = import_package("longmemeval", _write(tmp_path, "odd.json", odd))
    assert any("question_type: 'weird'" in unruled(w) for w in pkg.meta["warnings"])
    assert not any("question_type" in w for w in import_package("longmemeval", LME,
                   instance="ms_02").meta["warnings"])  # fmt: skip


@pytest.mark.parametrize(
    ("name", "given", "looks"),
    [
        ("zep_graphiti.json", "mem0", "zep"),
        ("mem0_v2_results.json", "amem", "mem0"),
        ("amem_notes.json", "zep", "amem"),
        ("letta_passages.json", "mem0", "letta"),
    ],
)
def test_a_wrong_format_says_what_the_file_looks_like(name, given, looks):
    """CLI QA: a Zep file read as Mem0 said only "the memory has no id", item after item."""
    with pytest.raises(PackageError) as info:
        load_external_store(FIX / name, given)
    first = info.value.problems[0]
    assert first.rule == "format-hint" and f"(format '{looks}')" in first.message
    # The hint alone: the given format's problems would advise rewriting the file into it
    # (QA s51 defect 7: "it has 'fact' ... rename it to 'memory'" after the Zep hint).
    assert len(info.value.problems) == 1


def test_every_export_fixture_is_recognised():
    from memaudit_core.importers import guess_store_format

    for f in sorted(FIX.iterdir()):
        fmt = f.name.split("_")[0]
        if fmt in ("mem0", "letta", "amem", "zep") and "history" not in f.name:
            if f.name in ("mem0_missing_text.json", "mem0_wrong_type.json", "mem0_truncated.json"):
                continue  # deliberately broken
            assert guess_store_format(f) == fmt, f.name


# --------------------------------------------------------------------------- importer QA pass
# Each case below was found by a QA pass (file, reproduction) and fails on the code before it.


def _lme_instance(**changes):
    inst = json.loads(LME.read_text())[0]
    inst.update(changes)
    return inst


def test_lme_a_filler_session_without_a_date_leaves_the_others_sorted(tmp_path):
    # Sessions listed a2 (2024) before a1 (2023); the filler's date does not parse.
    inst = _lme_instance()
    inst["haystack_dates"][0] = "May 20, 2023"
    f = tmp_path / "one.json"
    f.write_text(json.dumps(inst))
    pkg = import_package("longmemeval", f)
    # The undated filler keeps its slot (first); the dated sessions are sorted around it.
    assert [e.id for e in pkg.experiences] == ["sharegpt_x_0", "answer_a1", "answer_a2"]
    kinds = {u.id: u.kind for u in pkg.units}
    assert kinds == {"answer_a1_1": "stale", "answer_a2_1": "current_truth"}
    assert any("sorted by date around them" in w for w in pkg.meta["warnings"])


def test_lme_knowledge_update_with_an_undated_evidence_session_is_refused(tmp_path):
    inst = _lme_instance()
    inst["haystack_dates"][2] = "sometime in June"  # answer_a1, one of the two evidence sessions
    f = tmp_path / "one.json"
    f.write_text(json.dumps(inst))
    with pytest.raises(PackageError) as info:
        import_package("longmemeval", f)
    (problem,) = info.value.problems
    assert problem.path == "$.haystack_dates[2]" and problem.rule == "date"
    assert "current value cannot be told from the stale one" in problem.message


def test_mem0_platform_page_with_more_pages_is_flagged(tmp_path):
    doc = json.loads((FIX / "mem0_platform_page.json").read_text())
    doc.update(count=57, next="https://api.mem0.ai/v3/memories/?page=2")
    f = tmp_path / "page1.json"
    f.write_text(json.dumps(doc))
    (warning,) = load_external_store(f, "mem0").meta["warnings"]
    assert "one page of a paginated Platform export" in warning and "of 57 memories" in warning
    # The fixture itself is a whole export (count 3, no next page): no warning.
    assert "warnings" not in load_external_store(FIX / "mem0_platform_page.json", "mem0").meta


@pytest.mark.parametrize(
    ("fmt", "record", "time_key"),
    [
        ("zep", {"uuid": "e1", "fact": "Ann lives in Lisbon"}, "created_at"),
        ("amem", {"id": "n1", "content": "Ann lives in Lisbon", "keywords": []}, "timestamp"),
        ("letta", {"id": "p1", "text": "Ann lives in Lisbon", "agent_id": "a"}, "timestamp"),
    ],
)
def test_an_unreadable_memory_time_is_kept_and_said(tmp_path, fmt, record, time_key):
    f = tmp_path / f"{fmt}.json"
    f.write_text(json.dumps([{**record, time_key: "last Tuesday"}]))
    store = load_external_store(f, fmt)
    (memory,) = store.memories
    assert memory.created_at is None
    assert memory.meta["created_at_raw"] == "last Tuesday"
    assert any("1 memory time(s) cannot be read" in w for w in store.meta["warnings"])


def test_letta_agent_side_times_are_read_with_their_offset(tmp_path):
    f = tmp_path / "search.json"
    rows = [
        {"id": "p1", "text": "x", "agent_id": "a", "timestamp": "2025-05-02 10:00:00 AM PDT-0700"}
    ]
    f.write_text(json.dumps(rows))
    (memory,) = load_external_store(f, "letta").memories
    assert memory.created_at == "2025-05-02T17:00:00+00:00"


def test_words_rule_on_unspaced_scripts_is_flagged(tmp_path):
    f = tmp_path / "zh.json"
    f.write_text(json.dumps([{"id": "m1", "memory": "我住在里斯本，下个月搬到柏林去工作和生活。"}]))
    store = load_external_store(f, "mem0")
    assert store.memories[0].cost == 1.0  # what the words rule gives: hence the warning
    assert any("written without spaces" in w for w in store.meta["warnings"])
    assert "warnings" not in load_external_store(f, "mem0", cost_rule="chars").meta


def test_a_memory_id_that_is_a_candidate_id_is_named_in_the_export(tmp_path, locomo_pkg):
    taken = locomo_pkg.candidates[0].id
    f = tmp_path / "m.json"
    f.write_text(json.dumps([{"id": taken, "memory": "Ann lives in Lisbon"}]))
    with pytest.raises(PackageError) as info:
        load_external_store(f, "mem0", package=locomo_pkg)
    assert info.value.source == str(f)
    (problem,) = info.value.problems
    assert (problem.path, problem.rule) == ("$[0].id", "unique-id")


@pytest.mark.parametrize("fmt", ["locomo", "zep"])
def test_deeply_nested_json_is_a_located_problem(tmp_path, fmt):
    f = tmp_path / "deep.json"
    f.write_text("[" * 500 + "]" * 500)
    with pytest.raises(PackageError) as info:
        if fmt == "locomo":
            import_package(fmt, f)
        else:
            load_external_store(f, fmt)
    assert [p.rule for p in info.value.problems] == ["json-depth"]


@pytest.mark.parametrize("flag", ["false", "0", "yes", 2])
def test_mem0_history_is_deleted_must_be_a_boolean(tmp_path, flag):
    f = tmp_path / "h.json"
    rows = [{"memory_id": "e3e4-0001", "event": "ADD", "new_memory": "x", "is_deleted": flag}]
    f.write_text(json.dumps(rows))
    with pytest.raises(PackageError) as info:
        load_external_store(FIX / "mem0_v2_results.json", "mem0", history=f)
    (problem,) = info.value.problems
    assert (problem.path, problem.rule) == ("$[0].is_deleted", "type")


def test_locomo_repeated_dia_id_keeps_the_turn_in_its_session(tmp_path):
    doc = json.loads((FIX / "locomo_small.json").read_text())
    session = doc[0]["conversation"]["session_1"]
    session.append({"speaker": "Bo", "dia_id": "D1:2", "text": "one two three four five six"})
    f = tmp_path / "dup.json"
    f.write_text(json.dumps(doc))
    before = import_package("locomo", FIX / "locomo_small.json", instance="conv-a")
    after = import_package("locomo", f, instance="conv-a")
    raw = {p.id: p for p in (before, after)[1].candidates}["session_1:raw"]
    assert raw.text.endswith("Bo: one two three four five six")
    old = {c.id: c for c in before.candidates}["session_1:raw"]
    assert raw.cost == old.cost + 7  # "Bo:" and six words
    assert [u.id for u in after.units] == [u.id for u in before.units]  # first D1:2 kept


def test_letta_block_lines_links_are_an_upper_estimate(tmp_path, locomo_pkg):
    doc = json.loads((FIX / "letta_v2.af").read_text())
    doc["blocks"][0]["metadata"] = {"dia_id": "D1:1"}
    f = tmp_path / "agent.af"
    f.write_text(json.dumps(doc))
    store = load_external_store(f, "letta", package=locomo_pkg)
    lines = [m for m in store.memories if m.meta.get("block") == "block-0"]
    assert lines and all(m.meta["coverage_source"] == "episode-unit-links" for m in lines)
    assert "exact" not in store.meta["coverage"]


def _locomo_file(tmp_path, capsys):
    out = tmp_path / "loc.json"
    args = ["import", "locomo", str(FIX / "locomo_small.json"), "--instance", "conv-a"]
    assert main([*args, "-o", str(out)]) == 0
    capsys.readouterr()
    return out


def test_cli_import_adds_an_export_to_a_package_that_sweeps(tmp_path, capsys):
    pkg_file = _locomo_file(tmp_path, capsys)
    out = tmp_path / "with-mem0.json"
    export = FIX / "mem0_v10_list.json"
    argv = ["import", "mem0", str(export), "--package", str(pkg_file), "-o", str(out), "--json"]
    assert main(argv) == 0
    summary = json.loads(capsys.readouterr().out)["imported"]
    base = [s.id for s in load_package(pkg_file).stores]
    assert summary["stores"] == len(base) + 1 and summary["external_store"]["id"] == "mem0"
    pkg = load_package(out)
    expected = load_external_store(export, "mem0", package=load_package(pkg_file))
    assert pkg.store("mem0").memories == expected.memories
    assert main(["sweep", str(out), "--stores", "mem0", "--budgets", "5,10", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert {r["method"] for r in rows} >= {"mem0"}
    # A second import into that package takes the next free id; a taken --store-id is refused.
    again = ["import", "mem0", str(export), "--package", str(out), "-o", str(tmp_path / "2.json")]
    assert main(again) == 0
    assert [s.id for s in load_package(tmp_path / "2.json").stores] == [*base, "mem0", "mem0-2"]
    capsys.readouterr()
    assert main([*again, "--store-id", "mem0"]) == 2
    assert "already has a store 'mem0'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["mem0", "M"], "give --package PACKAGE.json"),
        (["artifact", "A", "--cost-rule", "chars"], "--cost-rule does not apply to the artifact"),
        (["locomo", "L", "--package", "P"], "--package does not apply to the locomo format"),
        (["zep", "Z", "--package", "P", "--history", "H"], "--history does not apply to the zep"),
        (["mem0", "M", "--instance", "x", "--package", "P"], "--instance does not apply"),
    ],
)
def test_cli_import_refuses_options_its_format_does_not_read(tmp_path, capsys, argv, message):
    files = {
        "M": FIX / "mem0_v10_list.json",
        "A": ART,
        "L": FIX / "locomo_small.json",
        "Z": FIX / "zep_graphiti.json",
        "P": _locomo_file(tmp_path, capsys),
        "H": FIX / "mem0_history.json",
    }
    assert main(["import", *(str(files.get(a, a)) for a in argv)]) == 2
    assert message in capsys.readouterr().err


def test_cli_score_of_an_empty_export_is_zero_not_an_error(tmp_path, capsys):
    pkg_file = _locomo_file(tmp_path, capsys)
    empty = tmp_path / "empty.json"
    empty.write_text("[]")
    argv = ["score", str(pkg_file), "--external", str(empty), "--format", "mem0", "--json"]
    assert main(argv) == 0
    cap = capsys.readouterr()
    out = json.loads(cap.out)
    assert out["value"] == 0 and out["ratio"] == 0 and out["external_store"]["memories"] == 0
    assert "needs annotation" not in cap.err and "holds no memories" in cap.err


def test_cli_score_external_json_carries_the_export_warnings(tmp_path, capsys):
    pkg_file = _locomo_file(tmp_path, capsys)
    export = tmp_path / "zh.json"
    export.write_text(json.dumps([{"id": "m1", "memory": "我住在里斯本，下个月搬到柏林。"}]))
    argv = ["score", str(pkg_file), "--external", str(export), "--format", "mem0", "--json"]
    assert main(argv) == 0
    (warning,) = json.loads(capsys.readouterr().out)["external_store"]["warnings"]
    assert "written without spaces" in warning


def test_recency_pruning_says_which_memories_have_no_time(tmp_path, locomo_pkg):
    from memaudit_core.union import union_report, with_store

    doc = json.loads((FIX / "zep_graphiti.json").read_text())
    doc["edges"][0]["created_at"] = "03/01/2024 10:00"
    f = tmp_path / "zep.json"
    f.write_text(json.dumps(doc))
    store = load_external_store(f, "zep", package=locomo_pkg)
    pkg = with_store(locomo_pkg, store)
    budget = min(m.cost for m in store.memories)  # forces pruning
    notes = " ".join(union_report(pkg, "zep", budget).notes)
    assert "last listed first (1 of" in notes and "'edge-1'" in notes
