"""Importer gaps found by the second mutation pass (QA s17e) and the bad-input QA pass (s18b).

Every expected value here is written by hand from the importer's documented rules (module
docstrings, DESIGN.md section 3), never taken from the importer itself.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from note_utils import messages, unruled

from memaudit_core.errors import PackageError
from memaudit_core.importers import import_package, load_external_store, suggest_coverage
from memaudit_core.importers._common import normalise_time
from memaudit_core.package import parse_package


def _write(tmp_path: Path, name: str, obj: object) -> Path:
    f = tmp_path / name
    f.write_text(json.dumps(obj))
    return f


# --------------------------------------------------------------------------- times


def test_epoch_milliseconds_are_read_as_milliseconds():
    """_common.normalise_time: "Numbers are epoch seconds, or milliseconds when larger than
    1e11". 1_700_000_000 s after the epoch is 2023-11-14 22:13:20 UTC (86400 s a day)."""
    expected = "2023-11-14T22:13:20+00:00"
    assert normalise_time(1_700_000_000).iso == expected
    assert normalise_time(1_700_000_000_000).iso == expected
    assert normalise_time(1_700_000_000_500).iso == "2023-11-14T22:13:20.500000+00:00"


# --------------------------------------------------------------------------- mem0 history


def test_mem0_history_rows_are_ordered_by_time_not_by_listing(tmp_path):
    """A memory's *last* event decides whether it was deleted. History rows listed newest
    first (as an API page may list them) must still be read in time order: here the DELETE
    (Nov 20) follows the ADD (Nov 1), so m9 is deleted, not "missing from the export"."""
    export = _write(tmp_path, "m.json", {"results": [{"id": "m1", "memory": "Lives in Lisbon"}]})
    history = [
        {
            "memory_id": "m9",
            "event": "DELETE",
            "old_memory": "Has a hamster.",
            "new_memory": None,
            "created_at": "2026-11-01T09:00:00+00:00",
            "updated_at": "2026-11-20T09:00:00+00:00",
        },
        {
            "memory_id": "m9",
            "event": "ADD",
            "old_memory": None,
            "new_memory": "Has a hamster.",
            "created_at": "2026-11-01T09:00:00+00:00",
            "updated_at": None,
        },
    ]
    store = load_external_store(export, "mem0", history=history)
    assert [d["id"] for d in store.meta["deleted"]] == ["m9"]
    assert store.meta["deleted"][0]["deleted_at"] == "2026-11-20T09:00:00+00:00"
    assert not any("not in the export" in w for w in store.meta.get("warnings", []))


# --------------------------------------------------------------------------- LoCoMo


def _locomo(qa: list[dict], session_2: list[dict] | None = None) -> list[dict]:
    conv = {
        "speaker_a": "Ann",
        "speaker_b": "Bob",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a cat named Miso."},
            {"speaker": "Bob", "dia_id": "D1:2", "text": "We moved to Porto in March."},
        ],
    }
    if session_2 is not None:
        conv["session_2_date_time"] = "2:00 pm on 9 May, 2023"
        conv["session_2"] = session_2
    return [{"sample_id": "c1", "conversation": conv, "qa": qa}]


def test_locomo_a_turn_cited_by_a_temporal_and_another_question_is_temporal(tmp_path):
    """Module docstring: kind ``temporal_order`` if ANY question of category 2 needs the turn,
    else ``fact`` if any of 1, 3, 4 does, else ``abstention``. Weight = number of questions."""
    qa = [
        {"question": "When did Bob move?", "answer": "March", "evidence": ["D1:2"], "category": 2},
        {"question": "Where did Bob move?", "answer": "Porto", "evidence": ["D1:2"], "category": 4},
        {"question": "Cat's name?", "answer": "Miso", "evidence": ["D1:1"], "category": 5},
        {"question": "Ann's pet?", "answer": "a cat", "evidence": ["D1:1"], "category": 1},
    ]
    pkg = import_package("locomo", _write(tmp_path, "l.json", _locomo(qa)))
    kinds = {u.id: u.kind for u in pkg.units}
    assert kinds == {"D1:1": "fact", "D1:2": "temporal_order"}
    assert pkg.unit_weights() == {"D1:1": 2.0, "D1:2": 2.0}


def test_locomo_a_repeated_dia_id_keeps_the_first_turn_as_the_unit(tmp_path):
    """The warning says "the first turn with that id is the evidence unit": a later turn that
    repeats the id (here in session 2) must neither replace the unit's text nor make session
    2's raw span cover it."""
    session_2 = [{"speaker": "Ann", "dia_id": "D1:1", "text": "Miso is asleep."}]
    qa = [{"question": "Cat?", "answer": "Miso", "evidence": ["D1:1"], "category": 4}]
    pkg = import_package("locomo", _write(tmp_path, "l.json", _locomo(qa, session_2)))
    (unit,) = pkg.units
    assert unit.text == "Ann: I adopted a cat named Miso."
    assert unit.meta["session"] == "session_1"
    cover = {c.id: dict(c.coverage) for c in pkg.candidates}
    assert cover["session_1:raw"] == {"D1:1": 1.0}
    assert cover["session_2:raw"] == {}
    assert any("repeats an earlier turn" in w for w in pkg.meta["warnings"])


# --------------------------------------------------------------------------- suggestions


def test_suggestions_use_candidate_texts_covering_a_unit_at_exactly_one_half():
    """coverage._reference_texts: a unit without text is matched against the texts of the
    candidates covering it "at >= 0.5" (LoCoMo summaries cover at exactly 0.5). Reference
    tokens {maya, moved, lisbon}; the memory shares maya and lisbon: 2/3 -> 0.67."""
    pkg = parse_package(
        {
            "memaudit": 1,
            "id": "p",
            "experiences": [{"id": "e1"}],
            "units": [{"id": "r1", "weight": 1}],
            "candidates": [
                {
                    "id": "e1:summary",
                    "experience": "e1",
                    "type": "summary",
                    "text": "Maya moved to Lisbon",
                    "cost": 4,
                    "coverage": {"r1": 0.5},
                }
            ],
        }
    )
    assert suggest_coverage("Maya now lives in Lisbon", pkg) == {"r1": 0.67}


# --------------------------------------------------------------------------- QA s18b

# The bad-input QA pass s18b (C1-C10, B1): silent drops and mis-reads in the importers. The
# package below is the QA reproducer's: units D1:1, D1:2, D2:1; experiences session_1, _2.

TINY = {
    "memaudit": 1,
    "id": "tiny",
    "experiences": [{"id": "session_1", "time": 0}, {"id": "session_2", "time": 1}],
    "units": [
        {"id": "D1:1", "text": "Ann adopted a cat named Miso", "weight": 1},
        {"id": "D1:2", "text": "Bo lives in Berlin", "weight": 1},
        {"id": "D2:1", "text": "Bo moved to Lisbon", "weight": 2},
    ],
    "candidates": [
        {
            "id": "s1:raw",
            "experience": "session_1",
            "type": "raw_span",
            "cost": 8,
            "coverage": {"D1:1": 1, "D1:2": 1},
        },
        {
            "id": "s2:raw",
            "experience": "session_2",
            "type": "raw_span",
            "cost": 6,
            "coverage": {"D2:1": 1},
        },
    ],
}


def _tiny():
    return parse_package(TINY, "tiny.json")


def _refused(call) -> list[tuple[str, str]]:
    with pytest.raises(PackageError) as info:
        call()
    return [(p.path, p.rule) for p in info.value.problems]


def test_letta_generated_block_ids_do_not_take_a_real_label(tmp_path):
    """B1: labels a, a, a.2 were refused as a duplicate memory id (block-a.2-0 twice)."""
    af = {
        "agents": [{"id": "agent-0"}],
        "blocks": [
            {"label": "a", "value": "x1"},
            {"label": "a", "value": "x2"},
            {"label": "a.2", "value": "x3"},
        ],
    }
    store = load_external_store(_write(tmp_path, "l.af", af), "letta")
    assert [(m.id, m.text) for m in store.memories] == [
        ("block-a-0", "x1"),
        ("block-a.3-0", "x2"),
        ("block-a.2-0", "x3"),
    ]


def test_links_that_match_nothing_are_said_and_not_counted_as_no_links(tmp_path):
    """C1: m1's only link and m2's second link name nothing in the package."""
    export = [
        {"id": "m1", "memory": "Ann adopted a cat", "metadata": {"dia_id": "D9:9"}},
        {"id": "m2", "memory": "Bo lives in Lisbon now", "metadata": {"dia_id": "D2:1;D7:7"}},
        {"id": "m3", "memory": "Bo likes tea"},
    ]
    store = load_external_store(_write(tmp_path, "m.json", export), "mem0", package=_tiny())
    assert store.meta["coverage"] == (
        "from provenance links: 1 from unit links (exact); 1 with links that match nothing in "
        "the package (needs annotation); 1 without links (needs annotation)"
    )
    (warning,) = messages(store.meta["warnings"])
    assert warning.startswith(
        "2 memory(ies) have provenance links that name no unit or experience of package 'tiny'"
    )
    # Each link at its own key (QA s49), as a refused unit link is named.
    assert (
        "$[0].metadata.dia_id: 'D9:9'; $[1]: 1 of 2 links ($[1].metadata.dia_id: 'D7:7')" in warning
    )
    assert [m.meta.get("unresolved_links") for m in store.memories] == [["D9:9"], ["D7:7"], None]
    assert [m.coverage for m in store.memories] == [{}, {"D2:1": 1.0}, {}]


def test_a_store_whose_links_all_miss_needs_annotation_and_says_why(tmp_path):
    export = [{"id": "m1", "memory": "Ann adopted a cat", "metadata": {"dia_id": "D9:9"}}]
    store = load_external_store(_write(tmp_path, "m.json", export), "mem0", package=_tiny())
    assert store.meta["coverage"] == "needs annotation"
    (warning,) = messages(store.meta["warnings"])
    assert warning.startswith("1 memory(ies) have provenance links that name no unit")
    assert warning.endswith("$[0].metadata.dia_id: 'D9:9'")


def test_zep_an_unknown_episode_is_said_by_its_uuid_a_known_one_is_not(tmp_path):
    """C1 for Zep: an episode matches through its uuid, name or metadata links."""
    doc = {
        "edges": [{"uuid": "e1", "fact": "Bo moved to Lisbon", "episodes": ["ep2", "ep9"]}],
        "episodes": [{"uuid": "ep2", "name": "session_2"}],
    }
    store = load_external_store(_write(tmp_path, "z.json", doc), "zep", package=_tiny())
    (warning,) = messages(store.meta["warnings"])
    assert warning.endswith("$.edges[0]: 1 of 2 links ('ep9')")
    assert store.memories[0].meta["unresolved_links"] == ["ep9"]


def test_letta_free_tags_beside_provenance_links_are_not_reported(tmp_path):
    passages = [
        {"id": "p1", "text": "Bo moved to Lisbon", "metadata": {"dia_id": "D2:1"}, "tags": ["x"]},
        {"id": "p2", "text": "Ann adopted a cat", "tags": ["work", "home"]},
    ]
    store = load_external_store(_write(tmp_path, "p.json", passages), "letta", package=_tiny())
    # QA s50: p2's topic tags are no broken links either; said once as labels, not links.
    (warning,) = messages(store.meta["warnings"])
    assert "name no unit or experience" not in warning
    assert warning.endswith(": $[1].tags[0]: 'work'; $[1].tags[1]: 'home'")


def test_duplicate_keys_in_an_export_are_refused_with_their_paths(tmp_path):
    """C2: the last value silently won (the first text and link were lost)."""
    f = tmp_path / "m.json"
    f.write_text(
        '[{"id":"m1","memory":"Ann adopted a cat","memory":"Bo moved to Lisbon",'
        '"metadata":{"dia_id":"D1:1","dia_id":"D2:1"}}]'
    )
    assert _refused(lambda: load_external_store(f, "mem0")) == [
        ("$[0].memory", "duplicate-key"),
        ("$[0].metadata.dia_id", "duplicate-key"),
    ]


def test_duplicate_keys_in_a_longmemeval_instance_are_refused(tmp_path):
    f = tmp_path / "lme.json"
    f.write_text('[{"question_id": "q1", "answer": "a", "answer": "b"}]')
    assert _refused(lambda: import_package("longmemeval", f)) == [("$[0].answer", "duplicate-key")]


def _artifact(tmp_path: Path, **files: list[dict | str]) -> Path:
    d = tmp_path / "art"
    d.mkdir(parents=True)
    rows = {
        "experiences.jsonl": [{"experience_id": "e1", "time_index": 0}],
        "evidence_units.jsonl": [{"unit_id": "r1", "weight": 1}],
        "candidate_memories.jsonl": [
            {
                "candidate_id": "c1",
                "experience_id": "e1",
                "representation": "atomic_fact",
                "cost": 1,
            }
        ],
        "coverage_matrix.jsonl": [{"candidate_id": "c1", "unit_id": "r1", "value": 1}],
    }
    rows.update({k.replace("_jsonl", ".jsonl"): v for k, v in files.items()})
    for name, lines in rows.items():
        text = [ln if isinstance(ln, str) else json.dumps(ln) for ln in lines]
        (d / name).write_text("\n".join(text) + "\n")
    return d


def test_artifact_duplicate_keys_are_refused_once_at_their_line(tmp_path):
    d = _artifact(tmp_path, evidence_units_jsonl=['{"unit_id":"r1","weight":1,"weight":500}'])
    assert _refused(lambda: import_package("artifact", d)) == [
        ("evidence_units.jsonl:1.weight", "duplicate-key")
    ]


def test_artifact_disagreeing_aliases_are_refused_agreeing_ones_accepted(tmp_path):
    """C3: the second alias's value was dropped, not even kept in meta."""
    d = _artifact(
        tmp_path,
        experiences_jsonl=[{"experience_id": "e1", "time_index": 0, "time": 5}],
        evidence_units_jsonl=[{"unit_id": "r1", "weight": 1, "w": 7}],
        coverage_matrix_jsonl=[{"candidate_id": "c1", "unit_id": "r1", "value": 1, "a": 0.2}],
    )
    with pytest.raises(PackageError) as info:
        import_package("artifact", d)
    assert [(p.path, p.rule) for p in info.value.problems] == [
        ("experiences.jsonl:1", "alias-conflict"),
        ("evidence_units.jsonl:1", "alias-conflict"),
        ("coverage_matrix.jsonl:1", "alias-conflict"),
    ]
    assert "'time_index' and 'time'" in info.value.problems[0].message
    assert "(0 vs 5)" in info.value.problems[0].message

    ok = _artifact(
        tmp_path / "ok",
        experiences_jsonl=[{"experience_id": "e1", "id": "e1", "time_index": 0, "time": 0.0}],
    )
    pkg = import_package("artifact", ok)
    assert [(e.id, e.time, e.meta) for e in pkg.experiences] == [("e1", 0, {})]


def test_artifact_a_true_and_a_one_are_not_the_same_value(tmp_path):
    d = _artifact(tmp_path, evidence_units_jsonl=[{"unit_id": "r1", "weight": 1, "w": True}])
    assert _refused(lambda: import_package("artifact", d)) == [
        ("evidence_units.jsonl:1", "alias-conflict")
    ]


@pytest.mark.parametrize("flag", ["false", "0", "yes", 2])
def test_letta_passage_is_deleted_must_be_a_boolean(tmp_path, flag):
    """C4: "false" read as deleted, and the live passage was dropped."""
    passages = [
        {"id": "p1", "text": "Ann adopted Miso", "is_deleted": False},
        {"id": "p2", "text": "Bo moved to Lisbon", "is_deleted": flag},
    ]
    f = _write(tmp_path, "p.json", passages)
    assert _refused(lambda: load_external_store(f, "letta")) == [("$[1].is_deleted", "type")]


def test_letta_passage_is_deleted_zero_and_one(tmp_path):
    passages = [
        {"id": "p1", "text": "Ann adopted Miso", "is_deleted": 0},
        {"id": "p2", "text": "Bo moved to Lisbon", "is_deleted": 1},
    ]
    store = load_external_store(_write(tmp_path, "p.json", passages), "letta")
    assert [m.id for m in store.memories] == ["p1"]
    assert [d["id"] for d in store.meta["deleted"]] == ["p2"]


def test_mem0_history_db_text_is_deleted_is_refused(tmp_path):
    """C4: a TEXT 'false' in history.db read as deleted."""
    db = tmp_path / "history.db"
    con = sqlite3.connect(db)
    con.execute(
        "CREATE TABLE history (id TEXT, memory_id TEXT, old_memory TEXT, new_memory TEXT, "
        "event TEXT, created_at TEXT, updated_at TEXT, is_deleted)"
    )
    con.executemany(
        "INSERT INTO history VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            ("h1", "m1", None, "Ann adopted a cat", "ADD", "2026-01-01T00:00:00", None, 0),
            ("h2", "m1", None, "Ann adopted a cat", "NONE", "2026-01-02T00:00:00", None, "false"),
        ],
    )
    con.commit()
    con.close()
    export = _write(tmp_path, "m.json", [{"id": "m1", "memory": "Ann adopted a cat"}])
    with pytest.raises(PackageError) as info:
        load_external_store(export, "mem0", history=db)
    assert info.value.source == str(db)
    assert [(p.path, p.rule) for p in info.value.problems] == [
        ("history[row 2].is_deleted", "type")
    ]


def _lme(turns: list[dict]) -> list[dict]:
    return [
        {
            "question_id": "q1",
            "question_type": "single-session-user",
            "question": "Where do I live?",
            "answer": "Lisbon",
            "question_date": "2024/03/02 (Sat) 09:00",
            "haystack_session_ids": ["answer_a1"],
            "haystack_dates": ["2024/03/01 (Fri) 18:30"],
            "haystack_sessions": [turns],
            "answer_session_ids": ["answer_a1"],
        }
    ]


def test_lme_an_empty_evidence_turn_is_refused(tmp_path):
    """C6: it became the 1-word fact 'user: ' covering its unit fully."""
    f = _write(tmp_path, "l.json", _lme([{"role": "user", "content": " ", "has_answer": True}]))
    assert _refused(lambda: import_package("longmemeval", f)) == [
        ("$[0].haystack_sessions[0][0].content", "non-empty-text")
    ]


def test_lme_an_empty_filler_turn_costs_nothing_and_is_said(tmp_path):
    turns = [
        {"role": "user", "content": "I live in Lisbon now", "has_answer": True},
        {"role": "assistant", "content": ""},
    ]
    pkg = import_package("longmemeval", _write(tmp_path, "l.json", _lme(turns)))
    (raw,) = [c for c in pkg.candidates if c.id == "answer_a1:raw"]
    assert (raw.text, raw.cost) == ("user: I live in Lisbon now", 6.0)
    assert any(
        w.startswith("1 turn(s) have empty content (first: $[0].haystack_sessions[0][1].content)")
        for w in messages(pkg.meta["warnings"])
    )


def test_locomo_an_empty_cited_turn_is_refused_an_uncited_one_costs_nothing(tmp_path):
    qa = [{"question": "Pet?", "answer": "a cat", "evidence": ["D1:1"], "category": 4}]
    doc = _locomo(qa)
    doc[0]["conversation"]["session_1"][0]["text"] = ""
    f = _write(tmp_path, "l.json", doc)
    assert _refused(lambda: import_package("locomo", f)) == [
        ("$[0].conversation.session_1[0].text", "non-empty-text")
    ]

    doc = _locomo(qa)
    doc[0]["conversation"]["session_1"][1]["text"] = "  "
    pkg = import_package("locomo", _write(tmp_path, "l2.json", doc))
    (raw,) = [c for c in pkg.candidates if c.id == "session_1:raw"]
    assert (raw.text, raw.cost) == ("Ann: I adopted a cat named Miso.", 7.0)
    assert any(
        w.startswith("1 turn(s) have empty text (first: $[0].conversation.session_1[1].text)")
        for w in messages(pkg.meta["warnings"])
    )


@pytest.mark.parametrize("score", ["high", "NaN", 1e999])
def test_zep_a_score_that_is_not_a_finite_number_is_refused(tmp_path, score):
    """C7: Zep dropped it silently while Mem0 refused it."""
    f = tmp_path / "z.json"
    f.write_text(json.dumps([{"uuid": "e1", "fact": "Bo moved to Lisbon", "score": score}]))
    assert _refused(lambda: load_external_store(f, "zep")) == [("$[0].score", "finite")]


@pytest.mark.parametrize(
    ("doc", "path"),
    [
        ([{"id": "n1", "content": "Bo moved", "importance_score": "high"}], "$[0]"),
        (
            {"ids": ["n1"], "documents": ["Bo moved"], "metadatas": [{"importance_score": "NaN"}]},
            "$.metadatas[0]",
        ),
    ],
)
def test_amem_an_importance_score_that_is_not_a_finite_number_is_refused(tmp_path, doc, path):
    f = _write(tmp_path, "a.json", doc)
    assert _refused(lambda: load_external_store(f, "amem")) == [
        (f"{path}.importance_score", "finite")
    ]


def test_zep_v4_null_v3_fields_fall_back_to_the_v4_names(tmp_path):
    """C7: ``episodes: null`` hid ``episode_uuids``, ``score: null`` hid ``relevance``."""
    doc = {
        "edges": [
            {
                "uuid": "e1",
                "fact": "Bo moved to Lisbon",
                "episodes": None,
                "episode_uuids": ["ep2"],
                "score": None,
                "relevance": 0.8,
            }
        ],
        "episodes": [{"uuid": "ep2", "name": "session_2"}],
    }
    store = load_external_store(_write(tmp_path, "z.json", doc), "zep", package=_tiny())
    (mem,) = store.memories
    assert (mem.salience, mem.coverage, mem.meta["episodes"]) == (0.8, {"D2:1": 1.0}, ["ep2"])
    assert mem.meta["coverage_source"] == "experience-links"


def test_duplicate_memories_are_kept_and_listed(tmp_path):
    """C8: two copies of one fact were both costed without a note."""
    export = [
        {"id": "m1", "memory": "Ann adopted a cat", "hash": "h1"},
        {"id": "m2", "memory": "Ann  adopted a cat ", "hash": "h2"},
        {"id": "m3", "memory": "Bo moved to Lisbon", "hash": "h3"},
        {"id": "m4", "memory": "Bo moved to Lisbon!", "hash": "h3"},
    ]
    store = load_external_store(_write(tmp_path, "m.json", export), "mem0")
    assert [m.id for m in store.memories] == ["m1", "m2", "m3", "m4"]
    repeat, stale = messages(store.meta["warnings"])
    assert repeat.startswith("1 memory(ies) repeat an earlier one: 'm1' = 'm2' (same text).")
    # QA s46: a shared hash over two different texts is a stale hash, not one fact twice.
    assert stale.startswith(
        "1 memory(ies) share a hash with an earlier memory whose text differs: 'm3' and 'm4' "
        "(hash 'h3' is not the md5 of the text of 'm3' nor 'm4')."
    )


def test_locomo_repeated_observations_are_listed(tmp_path):
    qa = [{"question": "Pet?", "answer": "a cat", "evidence": ["D1:1"], "category": 4}]
    doc = _locomo(qa)
    doc[0]["observation"] = {
        "session_1_observation": {
            "Ann": [["Ann adopted a cat.", "D1:1"], ["Ann adopted a cat.", "D1:1"]]
        }
    }
    pkg = import_package("locomo", _write(tmp_path, "l.json", doc))
    assert [m.id for m in pkg.store("observations").memories] == ["obs-1-0", "obs-1-1"]
    assert any(
        w.startswith("1 observation(s) repeat an earlier one: 'obs-1-0' = 'obs-1-1' (same text)")
        for w in messages(pkg.meta["warnings"])
    )


def test_locomo_a_list_answer_is_joined_and_said_a_null_one_said(tmp_path):
    """C9: ["cat", "dog"] became the Python text "['cat', 'dog']", silently."""
    qa = [
        {"question": "Pets?", "answer": ["cat", "dog"], "evidence": ["D1:1"], "category": 1},
        {"question": "Move?", "answer": None, "evidence": ["D1:2"], "category": 4},
    ]
    pkg = import_package("locomo", _write(tmp_path, "l.json", _locomo(qa)))
    assert [q.answer for q in pkg.queries] == ["cat; dog", ""]
    assert pkg.queries[0].meta["answer_type"] == "array"
    warnings = [unruled(w) for w in pkg.meta["warnings"]]
    assert (
        "$[0].qa[0].answer: q1: the answer is a JSON array, not text; kept as 'cat; dog' "
        "(items joined with '; ')" in warnings
    )
    assert "$[0].qa[1].answer: q2: no answer (null); the query has no answer text" in warnings


def test_letta_block_ids_naming_no_block_are_said(tmp_path):
    """C10: block-9 was ignored without a word."""
    af = {
        "agents": [{"id": "agent-0", "block_ids": ["block-0", "block-9"]}],
        "blocks": [{"id": "block-0", "label": "human", "value": "Name: Sam"}],
    }
    store = load_external_store(_write(tmp_path, "a.af", af), "letta")
    (warning,) = messages(store.meta["warnings"])
    assert warning.startswith(
        "1 block id(s) of the agents name no block in 'blocks' ($.agents[0].block_ids[1] 'block-9')"
    )
