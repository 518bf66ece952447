"""QA s50: a store's link to a real LongMemEval turn that no question cites.

``answer_new_1`` ("Hi there", no has_answer) is turn 1 of session ``answer_new``, named as
EXPORT_FORMATS 8.1 names LongMemEval turns (``<session_id>_<turn>``, the unit ids' own form).
A Mem0 memory linked to it was warned about as "a different package, a typo or a truncated
package?" and counted "needs annotation"; under ``unit_ids`` the whole export was refused
(rule ``known-unit``). As for LoCoMo (QA s39 defect 4), such a link is exact and covers
nothing (``turn-links``).

Expected coverage is worked out by hand from the fixture (the instance QA used): the units
are the has_answer turns, numbered from 1 over all turns of their session, so ``answer_new_2``
(current value) and ``answer_old_1`` (stale); ``answer_new_1`` and ``answer_old_2`` are turns
that are no unit, and each session has 2 turns.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_utils import run_cli
from package_utils import write_json

from memaudit_core.importers import import_package, load_external_store
from memaudit_core.package import load_package

KU_X = {
    "question_id": "ku_x",
    "question_type": "knowledge-update",
    "question": "Where do I live now?",
    "answer": "Lisbon",
    "question_date": "2024/03/02 (Sat) 09:00",
    "haystack_session_ids": ["answer_new", "answer_old"],
    "haystack_dates": ["2024/03/01 (Fri) 18:30", "2023/06/01 (Thu) 10:00"],
    "haystack_sessions": [
        [
            {"role": "user", "content": "Hi there"},
            {"role": "user", "content": "I just moved to Lisbon!", "has_answer": True},
        ],
        [
            {"role": "user", "content": "I live in Berlin.", "has_answer": True},
            {"role": "assistant", "content": "Nice city.", "has_answer": False},
        ],
    ],
    "answer_session_ids": ["answer_new", "answer_old"],
}


def _mem0(links: dict[str, list[str]], key: str = "evidence") -> dict:
    return {
        "results": [
            {"id": mid, "memory": f"memory {mid}", "metadata": {key: refs}}
            for mid, refs in links.items()
        ]
    }


@pytest.fixture
def lme_pkg(tmp_path: Path) -> Path:
    """``memaudit import longmemeval lme.json --instance ku_x -o lme_ku_x.json``."""
    src = write_json(tmp_path, "lme.json", [KU_X])
    out = tmp_path / "lme_ku_x.json"
    rc, _out, err = run_cli("import", "longmemeval", str(src), "--instance", "ku_x", "-o", str(out))
    assert rc == 0, err
    return out


def test_unit_ids_link_to_a_turn_no_question_cites_is_not_refused(tmp_path, lme_pkg):
    """The repro: exit 2, "names no unit (nor experience or turn)" [rule: known-unit]."""
    export = write_json(tmp_path, "m.json", _mem0({"m1": ["answer_new_1"]}, key="unit_ids"))
    out = tmp_path / "joined.json"
    rc, _out, err = run_cli(
        "import", "mem0", str(export), "--package", str(lme_pkg), "-o", str(out)
    )
    assert rc == 0, err
    assert "known-unit" not in err
    store = load_package(out).stores[-1]
    assert [(m.id, dict(m.coverage), m.meta["coverage_source"]) for m in store.memories] == [
        ("m1", {}, "turn-links")
    ]


def test_evidence_links_to_turns_no_question_cites_cover_nothing_exactly(tmp_path, lme_pkg):
    """The second repro: m1 and m3 were called typos and counted "needs annotation"."""
    links = {"m1": ["answer_new_1"], "m2": ["answer_new_2"], "m3": ["answer_old_2"]}
    export = write_json(tmp_path, "m.json", _mem0(links))
    store = load_external_store(export, "mem0", package=load_package(lme_pkg))
    got = [(m.id, dict(m.coverage), m.meta["coverage_source"]) for m in store.memories]
    assert got == [
        ("m1", {}, "turn-links"),
        ("m2", {"answer_new_2": 1.0}, "unit-links"),
        ("m3", {}, "turn-links"),
    ]
    assert not any("unresolved_links" in m.meta for m in store.memories)
    assert "needs annotation" not in store.meta["coverage"]
    assert "2 from links to conversation turns that no question cites" in store.meta["coverage"]
    assert not any("typo" in w for w in store.meta.get("warnings", []))


def test_names_that_are_no_turn_stay_unresolved_and_are_refused_under_unit_ids(tmp_path, lme_pkg):
    """Each session has 2 turns, numbered from 1 as the unit ids are; there is no session
    answer_mid; ``answer_new_01`` is no form the importer gives an id."""
    pkg = load_package(lme_pkg)
    misses = ["answer_new_3", "answer_new_0", "answer_new_01", "answer_mid_1", "answer_new_"]
    links = {"ok": ["answer_old_2"], **{f"x{i}": [ref] for i, ref in enumerate(misses)}}
    store = load_external_store(write_json(tmp_path, "m.json", _mem0(links)), "mem0", package=pkg)
    by_id = {m.id: m for m in store.memories}
    assert by_id["ok"].meta["coverage_source"] == "turn-links"
    assert [by_id[f"x{i}"].meta["unresolved_links"] for i in range(len(misses))] == [
        [ref] for ref in misses
    ]
    export = write_json(tmp_path, "u.json", _mem0({"x": ["answer_new_3"]}, key="unit_ids"))
    rc, _out, err = run_cli("import", "mem0", str(export), "--package", str(lme_pkg))
    assert rc == 2
    assert "$.results[0].metadata.unit_ids[0]: names no unit" in err and "known-unit" in err


def test_a_package_without_the_turn_record_keeps_todays_reading(tmp_path, lme_pkg):
    """A LongMemEval package imported before the record names no turns (as before)."""
    doc = json.loads(lme_pkg.read_text(encoding="utf-8"))
    assert doc["meta"]["turn_ids"] == "<experience>_<turn>"
    assert {e["id"]: e["meta"]["turns"] for e in doc["experiences"]} == {
        "answer_new": 2,
        "answer_old": 2,
    }
    assert sorted(u["id"] for u in doc["units"]) == ["answer_new_2", "answer_old_1"]
    del doc["meta"]["turn_ids"]
    old = load_package(write_json(tmp_path, "old.json", doc))
    export = write_json(tmp_path, "m.json", _mem0({"m1": ["answer_new_1"]}))
    store = load_external_store(export, "mem0", package=old)
    assert store.memories[0].meta["unresolved_links"] == ["answer_new_1"]
    assert store.meta["coverage"] == "needs annotation"
    new = load_external_store(export, "mem0", package=load_package(lme_pkg))
    assert new.memories[0].meta["coverage_source"] == "turn-links"


def test_turn_of_a_session_level_evidence_session_is_an_upper_estimate(tmp_path):
    """No turn is flagged, so the answer session is one unit ``answer_b_session``: a turn of
    it may state that evidence (its session's candidates cover the unit at 1.0: an upper
    estimate), while a turn of the filler session ``sharegpt_a_0`` covers nothing exactly."""
    inst = {
        "question_id": "q2",
        "question_type": "multi-session",
        "question": "What pet do I have?",
        "answer": "A cat",
        "question_date": "2024/03/02 (Sat) 09:00",
        "haystack_session_ids": ["sharegpt_a_0", "answer_b"],
        "haystack_dates": ["2023/05/20 (Sat) 02:21", "2023/06/01 (Thu) 10:00"],
        "haystack_sessions": [
            [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}],
            [{"role": "user", "content": "I have a cat"}, {"role": "assistant", "content": "ok"}],
        ],
        "answer_session_ids": ["answer_b"],
    }
    pkg = import_package("longmemeval", write_json(tmp_path, "q.json", [inst]))
    links = {"f": ["sharegpt_a_0_2"], "b": ["answer_b_1"]}
    store = load_external_store(write_json(tmp_path, "m.json", _mem0(links)), "mem0", package=pkg)
    got = [(m.id, dict(m.coverage), m.meta["coverage_source"]) for m in store.memories]
    assert got == [
        ("f", {}, "turn-links"),
        ("b", {"answer_b_session": 1.0}, "experience-links"),
    ]


def test_a_session_id_that_is_also_a_turn_name_keeps_meaning_the_session(tmp_path):
    """Sessions ``s`` and ``s_1``: the link ``s_1`` names session ``s_1`` (an experience link,
    as before), and ``s_1_1`` is turn 1 of ``s_1`` (filler: covers nothing)."""
    inst = {
        "question_id": "q3",
        "question_type": "single-session-user",
        "question": "Where do I work?",
        "answer": "ACME",
        "question_date": "2024/03/02 (Sat) 09:00",
        "haystack_session_ids": ["s", "s_1"],
        "haystack_dates": ["2023/05/20 (Sat) 02:21", "2023/06/01 (Thu) 10:00"],
        "haystack_sessions": [
            [
                {"role": "user", "content": "hello"},
                {"role": "user", "content": "I work at ACME", "has_answer": True},
            ],
            [{"role": "user", "content": "nice weather"}],
        ],
        "answer_session_ids": ["s"],
    }
    pkg = import_package("longmemeval", write_json(tmp_path, "q.json", [inst]))
    links = {"e": ["s_1"], "t": ["s_1_1"], "u": ["s_2"], "n": ["s_1_2"]}
    store = load_external_store(write_json(tmp_path, "m.json", _mem0(links)), "mem0", package=pkg)
    got = {m.id: (dict(m.coverage), m.meta.get("coverage_source")) for m in store.memories}
    assert got == {
        "e": ({}, "experience-links"),
        "t": ({}, "turn-links"),
        "u": ({"s_2": 1.0}, "unit-links"),
        "n": ({}, None),
    }
