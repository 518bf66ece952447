"""QA s44: benchmark imports that contradicted their own data without a word.

- LongMemEval: a ``has_answer: true`` turn in a session that ``answer_session_ids`` does not
  list (EXPORT_FORMATS 5.1: filler sessions have the flag stripped) became a required unit, or
  in knowledge-update a stale one; now refused at the flag's JSON path (rule
  ``answer-session``). A turn role other than ``user`` / ``assistant`` (the format's two) is
  kept but warned about (rule ``known-role``).
- LoCoMo: a turn with dia_id ``D1:9`` in ``session_2`` was accepted silently; now a located
  warning (rule ``dia-id-session``).

Fixtures are written inline, in the shapes EXPORT_FORMATS 5.1 / 5.2 give.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from cli_utils import run_cli

from memaudit_core.errors import PackageError
from memaudit_core.importers.locomo import import_locomo
from memaudit_core.importers.longmemeval import import_longmemeval

SSA = {
    "question_id": "ssa1",
    "question_type": "single-session-assistant",
    "question": "What recipe did you suggest?",
    "answer": "shakshuka",
    "question_date": "2023/07/02 (Sun) 09:00",
    "haystack_session_ids": ["answer_b1", "ultrachat_9"],
    "haystack_dates": ["2023/07/01 (Sat) 10:00", "2023/07/01 (Sat) 11:00"],
    "haystack_sessions": [
        [
            {"role": "user", "content": "Suggest a recipe"},
            {"role": "assistant", "content": "Try shakshuka with feta.", "has_answer": True},
        ],
        [{"role": "user", "content": "Filler about weather", "has_answer": True}],
    ],
    "answer_session_ids": ["answer_b1"],
}

KU = {
    "question_id": "ku1",
    "question_type": "knowledge-update",
    "question": "Where do I live now?",
    "answer": "Lisbon",
    "question_date": "2024/03/02 (Sat) 09:00",
    "haystack_session_ids": ["answer_a2", "sharegpt_x_0", "answer_a1"],
    "haystack_dates": [
        "2024/03/01 (Fri) 18:30",
        "2023/05/20 (Sat) 02:21",
        "2023/06/01 (Thu) 10:00",
    ],
    "haystack_sessions": [
        [
            {"role": "user", "content": "I just moved to Lisbon!", "has_answer": True},
            {"role": "assistant", "content": "Congrats on the move."},
        ],
        [
            {"role": "user", "content": "Tell me a joke about cats.", "has_answer": True},
            {"role": "assistant", "content": "Why did the cat sit on the computer?"},
        ],
        [
            {"role": "user", "content": "Some chit chat first."},
            {"role": "user", "content": "I live in Berlin.", "has_answer": True},
            {"role": "assistant", "content": "Berlin is nice.", "has_answer": False},
        ],
    ],
    "answer_session_ids": ["answer_a1", "answer_a2"],
}


def _write(tmp_path: Path, name: str, obj: object) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(obj), encoding="utf-8")
    return path


def _refusal(path: Path) -> list[tuple[str, str]]:
    with pytest.raises(PackageError) as info:
        import_longmemeval(path)
    return [(p.path, p.rule) for p in info.value.problems]


def test_flagged_filler_turn_is_refused_not_made_evidence(tmp_path):
    path = _write(tmp_path, "ssa.json", [SSA])
    assert _refusal(path) == [("$[0].haystack_sessions[1][0].has_answer", "answer-session")]
    rc, _out, err = run_cli("import", "longmemeval", str(path), "-o", str(tmp_path / "o.json"))
    assert rc == 2
    assert "$[0].haystack_sessions[1][0].has_answer" in err
    assert "answer-session" in err and "'ultrachat_9'" in err
    assert not (tmp_path / "o.json").exists()
    # Without answer_session_ids the flags are the only evidence there is: still imported.
    inst = copy.deepcopy(SSA)
    inst["answer_session_ids"] = []
    inst["question_id"] = "ssa_nolist"
    pkg = import_longmemeval(_write(tmp_path, "nolist.json", [inst]))
    assert sorted(u.id for u in pkg.units) == ["answer_b1_2", "ultrachat_9_1"]
    # And a flag in a listed session is fine.
    fixed = copy.deepcopy(SSA)
    del fixed["haystack_sessions"][1][0]["has_answer"]
    pkg = import_longmemeval(_write(tmp_path, "ok.json", [fixed]))
    assert [u.id for u in pkg.units] == ["answer_b1_2"]
    assert not [w for w in pkg.meta["warnings"] if "known-role" in w]


def test_flagged_filler_turn_in_knowledge_update_is_refused(tmp_path):
    path = _write(tmp_path, "ku.json", [KU])
    assert _refusal(path) == [("$[0].haystack_sessions[1][0].has_answer", "answer-session")]
    # Unflagged, the filler is no evidence: Lisbon (2024) is current, Berlin (2023) stale.
    fixed = copy.deepcopy(KU)
    del fixed["haystack_sessions"][1][0]["has_answer"]
    pkg = import_longmemeval(_write(tmp_path, "ku_ok.json", [fixed]))
    kinds = {u.id: u.kind for u in pkg.units}
    assert kinds == {"answer_a2_1": "current_truth", "answer_a1_2": "stale"}
    assert list(pkg.queries[0].requires) == ["answer_a2_1"]


def test_unknown_turn_role_is_warned_at_its_path(tmp_path):
    inst = copy.deepcopy(KU)
    del inst["haystack_sessions"][1][0]["has_answer"]
    inst["haystack_sessions"][0][0]["role"] = "usr"
    path = _write(tmp_path, "role.json", [inst])
    warnings = import_longmemeval(path).meta["warnings"]
    said = [w for w in warnings if "known-role" in w]
    assert len(said) == 1
    assert "$[0].haystack_sessions[0][0].role" in said[0] and "'usr'" in said[0]
    rc, _out, err = run_cli("import", "longmemeval", str(path), "-o", str(tmp_path / "o.json"))
    assert rc == 0
    assert "$[0].haystack_sessions[0][0].role" in err


LOCOMO = {
    "sample_id": "conv-x",
    "conversation": {
        "speaker_a": "Ann",
        "speaker_b": "Bo",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a cat named Milo."},
            {"speaker": "Bo", "dia_id": "D1:2", "text": "Nice! What breed?"},
        ],
        "session_2_date_time": "10:00 am on 20 May, 2023",
        "session_2": [
            {"speaker": "Bo", "dia_id": "D2:1", "text": "I started running marathons."},
            {"speaker": "Ann", "dia_id": "D1:9", "text": "Wow, when is the next one?"},
        ],
    },
    "qa": [
        {
            "question": "What pet did Ann adopt?",
            "answer": "a cat",
            "evidence": ["D1:1"],
            "category": 4,
        },
        {
            "question": "What did Ann ask?",
            "answer": "the next race",
            "evidence": ["D1:9"],
            "category": 4,
        },
    ],
}


def test_locomo_dia_id_of_another_session_is_warned_at_its_path(tmp_path):
    path = _write(tmp_path, "lo.json", LOCOMO)  # one sample object: paths from $
    pkg = import_locomo(path)
    said = [w for w in pkg.meta["warnings"] if "dia-id-session" in w]
    assert len(said) == 1
    assert said[0].startswith("$.conversation.session_2[1].dia_id")
    assert "session_2" in said[0] and "'D1:9'" in said[0]
    # The turn stays where its list puts it.
    unit = next(u for u in pkg.units if u.id == "D1:9")
    assert unit.meta["session"] == "session_2"
    fixed = copy.deepcopy(LOCOMO)
    fixed["conversation"]["session_2"][1]["dia_id"] = "D2:2"
    fixed["qa"][1]["evidence"] = ["D2:2"]
    clean = import_locomo(_write(tmp_path, "lo_ok.json", fixed))
    assert not [w for w in clean.meta["warnings"] if "dia-id-session" in w]
