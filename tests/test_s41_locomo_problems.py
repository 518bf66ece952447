"""QA s41: the LoCoMo importer listed one stage's problems per run (DESIGN section 3).

A file with a bad turn text, a bad QA category and an int observation fact reported only the
turn; the QA and observation problems appeared one run at a time, after each fix. The input is
a small inline conversation (after QA's locomo_bad3.json); every expected JSON path and rule is
written by hand from the documented rules.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from cli_utils import run_cli

from memaudit_core.errors import PackageError
from memaudit_core.importers import import_package

GOOD: dict[str, Any] = {
    "sample_id": "conv-x",
    "conversation": {
        "speaker_a": "Ann",
        "speaker_b": "Bo",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a cat named Miso."},
            {"speaker": "Bo", "dia_id": "D1:2", "text": "Nice! What breed?"},
        ],
        "session_2_date_time": "10:00 am on 20 June, 2023",
        "session_2": [
            {"speaker": "Ann", "dia_id": "D2:1", "text": "I moved to Lisbon last week!"},
            {"speaker": "Bo", "dia_id": "D2:2", "text": "Wow, how is it?"},
        ],
    },
    "qa": [
        {"question": "What pet?", "answer": "a cat", "evidence": ["D1:1"], "category": 4},
        {"question": "Where now?", "answer": "Lisbon", "evidence": ["D2:1"], "category": 1},
        {"question": "Breed?", "answer": "tabby", "evidence": ["D1:2"], "category": 4},
        {"question": "Moved when?", "answer": "June", "evidence": ["D2:1"], "category": 2},
    ],
    "observation": {
        "session_1_observation": {"Ann": [["Ann adopted a cat.", "D1:1"]], "Bo": []},
        "session_2_observation": {"Ann": [["Ann moved to Lisbon.", "D2:1"]], "Bo": []},
    },
    "session_summary": {
        "session_1_summary": "Ann adopted a cat.",
        "session_2_summary": "Ann moved to Lisbon.",
    },
}


def _write(tmp_path: Path, sample: dict[str, Any]) -> Path:
    f = tmp_path / "locomo.json"
    f.write_text(json.dumps([sample]), encoding="utf-8")
    return f


def _problems(f: Path) -> list[tuple[str, str]]:
    with pytest.raises(PackageError) as info:
        import_package("locomo", f)
    assert info.value.source == str(f)
    return [(p.path, p.rule) for p in info.value.problems]


def _bad_in_every_stage() -> dict[str, Any]:
    s = copy.deepcopy(GOOD)
    s["conversation"]["session_2"][0]["text"] = 7  # turns
    s["conversation"]["session_1"][1]["text"] = ""  # cited by qa[2]: after the QA stage
    s["qa"][0]["category"] = 9  # QA, and in the same item:
    s["qa"][0]["question"] = {"x": 1}
    s["qa"][1]["answer"] = True  # QA; its evidence D2:1 is the failed turn
    s["session_summary"]["session_2_summary"] = 5  # summaries
    s["observation"]["session_1_observation"]["Ann"][0] = [3, "D1:1"]  # observations
    return s


EVERY_STAGE = [
    ("$[0].conversation.session_2[0].text", "type"),
    ("$[0].qa[0].category", "locomo-category"),
    ("$[0].qa[0].question", "type"),
    ("$[0].qa[1].answer", "type"),
    ("$[0].conversation.session_1[1].text", "non-empty-text"),
    ("$[0].session_summary.session_2_summary", "type"),
    ("$[0].observation.session_1_observation.Ann[0][0]", "type"),
]


def test_good_sample_imports(tmp_path: Path) -> None:
    """Regression guard: the inline fixture itself is valid (so each problem below is the
    one field changed)."""
    pkg = import_package("locomo", _write(tmp_path, GOOD))
    assert [q.id for q in pkg.queries] == ["q1", "q2", "q3", "q4"]


def test_one_problem_in_each_stage_all_listed_in_one_run(tmp_path: Path) -> None:
    # Turns, QA (two in one item), a cited empty turn, a summary and an observation: all at once,
    # in stage order, each once. qa[3] cites only the failed turn D2:1: no problem of its own.
    assert _problems(_write(tmp_path, _bad_in_every_stage())) == EVERY_STAGE


def test_cli_prints_every_stage_problem(tmp_path: Path) -> None:
    f = _write(tmp_path, _bad_in_every_stage())
    rc, _, err = run_cli("import", "locomo", str(f), "-o", str(tmp_path / "out.json"))
    assert rc == 2
    assert f"{f}: $[0].qa[0].category: must be one of the LoCoMo QA categories" in err
    assert f"{f}: $[0].observation.session_1_observation.Ann[0][0]: the observation " in err
    assert f"{f}: $[0].conversation.session_2[0].text: a turn needs its 'text' string" in err
    assert not (tmp_path / "out.json").exists()


def test_missing_qa_listed_with_a_turn_problem(tmp_path: Path) -> None:
    s = copy.deepcopy(GOOD)
    s["conversation"]["session_1"][0]["speaker"] = ["Ann"]
    del s["qa"]
    assert _problems(_write(tmp_path, s)) == [
        ("$[0].conversation.session_1[0].speaker", "type"),
        ("$[0].qa", "required"),
    ]


def test_qa_not_an_array_listed_with_an_observation_problem(tmp_path: Path) -> None:
    s = copy.deepcopy(GOOD)
    s["qa"] = {"q": 1}
    s["observation"]["session_2_observation"]["Ann"][0] = ["Ann moved.", 5]
    assert _problems(_write(tmp_path, s)) == [
        ("$[0].qa", "type"),
        ("$[0].observation.session_2_observation.Ann[0][1]", "type"),
    ]


def test_conversation_not_an_object_listed_with_qa_problems(tmp_path: Path) -> None:
    s = copy.deepcopy(GOOD)
    s["conversation"] = ["not", "sessions"]
    s["qa"][2]["category"] = "2"
    assert _problems(_write(tmp_path, s)) == [
        ("$[0].conversation", "type"),
        ("$[0].qa[2].category", "locomo-category"),
    ]


def test_evidence_not_a_list_still_checks_the_item(tmp_path: Path) -> None:
    s = copy.deepcopy(GOOD)
    s["qa"][1]["evidence"] = 5
    s["qa"][1]["answer"] = float("inf")
    assert _problems(_write(tmp_path, s)) == [
        ("$[0].qa[1].evidence", "type"),
        ("$[0].qa[1].answer", "finite"),
    ]


def test_evidence_at_a_failed_turn_is_no_extra_problem(tmp_path: Path) -> None:
    """Regression guard: QA evidence naming a turn that failed to parse adds no problem of its
    own (the later stages never read that turn); only the turn's problem is listed."""
    s = copy.deepcopy(GOOD)
    s["conversation"]["session_2"][0]["dia_id"] = 21
    assert _problems(_write(tmp_path, s)) == [("$[0].conversation.session_2[0].dia_id", "type")]
