"""QA s48: LongMemEval importer.

- A repeated haystack session id was renamed in date order, so an earlier-dated filler copy
  kept the id and the real evidence session (the one ``answer_session_ids`` means) became
  ``<id>#2``; the warning had no JSON path. Now the first copy in file order keeps the id and
  the warning names the renamed copy's path.
- ``--instance X`` on a file whose instance has a number question_id said only "no instance
  with question_id X", hiding the located ``required`` problem the run without it shows.

Fixtures are written inline, in the shape EXPORT_FORMATS 5.1 gives.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_utils import run_cli
from note_utils import unruled

from memaudit_core.errors import PackageError
from memaudit_core.importers.longmemeval import import_longmemeval

LISBON = "I just moved to Lisbon!"
JOKE = "Tell me a joke about cats."

# File order: [0] the real answer session (latest date), [1] a filler copy that repeats its id
# (earliest date), [2] the older answer session.
KU = {
    "question_id": "ku_9",
    "question_type": "knowledge-update",
    "question": "Where do I live now?",
    "answer": "Lisbon",
    "question_date": "2024/03/02 (Sat) 09:00",
    "haystack_session_ids": ["answer_b2", "answer_b2", "answer_b1"],
    "haystack_dates": [
        "2024/03/01 (Fri) 18:30",
        "2023/05/20 (Sat) 02:21",
        "2023/06/01 (Thu) 10:00",
    ],
    "haystack_sessions": [
        [
            {"role": "user", "content": LISBON, "has_answer": True},
            {"role": "assistant", "content": "Congrats on the move."},
        ],
        [{"role": "user", "content": JOKE}, {"role": "assistant", "content": "Why not."}],
        [
            {"role": "assistant", "content": "Hello, how can I help?"},
            {"role": "user", "content": "I live in Berlin and need a gym.", "has_answer": True},
        ],
    ],
    "answer_session_ids": ["answer_b1", "answer_b2"],
}


def _write(tmp_path: Path, name: str, doc: object) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_first_copy_in_file_order_keeps_a_repeated_session_id(tmp_path):
    pkg = import_longmemeval(_write(tmp_path, "dup.json", [KU]))
    exps = {e.id: e for e in pkg.experiences}
    assert set(exps) == {"answer_b2", "answer_b2#2", "answer_b1"}
    assert LISBON in exps["answer_b2"].text
    assert JOKE in exps["answer_b2#2"].text
    # The Lisbon turn is turn 1 of the session id answer_b2, the latest evidence session.
    units = {u.id: u for u in pkg.units}
    assert set(units) == {"answer_b2_1", "answer_b1_2"}
    assert units["answer_b2_1"].kind == "current_truth"
    assert units["answer_b2_1"].meta["session"] == "answer_b2"
    raw = {c.experience: c for c in pkg.candidates if c.type == "raw_span"}
    assert dict(raw["answer_b2"].coverage) == {"answer_b2_1": 1.0}
    assert dict(raw["answer_b2#2"].coverage) == {}
    assert (
        "$[0].haystack_session_ids[1]: session id 'answer_b2' repeats "
        "$[0].haystack_session_ids[0]; this copy is 'answer_b2#2'"
    ) in [unruled(w) for w in pkg.meta["warnings"]]


def test_a_renamed_copy_does_not_take_a_later_sessions_own_id(tmp_path):
    inst = {
        "question_id": "m1",
        "question_type": "multi-session",
        "question": "q?",
        "answer": "a",
        "haystack_session_ids": ["s", "s", "s#2"],
        "haystack_dates": ["2023/01/01", "2023/01/02", "2023/01/03"],
        "haystack_sessions": [
            [{"role": "user", "content": "first s"}],
            [{"role": "user", "content": "second s"}],
            [{"role": "user", "content": "the real s#2"}],
        ],
        "answer_session_ids": [],
    }
    pkg = import_longmemeval(_write(tmp_path, "hash.json", [inst]))
    texts = {e.id: e.text for e in pkg.experiences}
    assert texts == {"s": "user: first s", "s#3": "user: second s", "s#2": "user: the real s#2"}
    assert any(
        w.startswith("$[0].haystack_session_ids[1]: session id 's' repeats")
        and w.endswith("this copy is 's#3'")
        for w in map(unruled, pkg.meta["warnings"])
    )


@pytest.mark.parametrize("wanted", ["ku_9", "17"])
def test_unknown_instance_also_names_a_number_question_id(tmp_path, wanted):
    path = _write(tmp_path, "qid_num.json", [{**KU, "question_id": 17}])
    with pytest.raises(PackageError) as info:
        import_longmemeval(path, instance=wanted)
    found = {(p.path, p.rule) for p in info.value.problems}
    assert found == {("$", "known-instance"), ("$[0].question_id", "required")}

    rc, _out, err = run_cli(
        "import", "longmemeval", str(path), "--instance", wanted, "-o", str(tmp_path / "o.json")
    )
    assert rc != 0
    assert (
        "$[0].question_id: an instance needs a string question_id (got 17) [rule: required]" in err
    )
    assert f"no instance with question_id '{wanted}' among 1 instance(s)" in err
    assert "Traceback" not in err


def test_unknown_instance_names_the_question_id_of_one_instance_object_at_dollar(tmp_path):
    path = _write(tmp_path, "one.json", {**KU, "question_id": 17})
    with pytest.raises(PackageError) as info:
        import_longmemeval(path, instance="ku_9")
    found = {(p.path, p.rule) for p in info.value.problems}
    assert found == {("$", "known-instance"), ("$.question_id", "required")}


def test_a_matching_instance_is_still_imported_past_a_number_question_id(tmp_path):
    path = _write(tmp_path, "two.json", [{**KU, "question_id": 17}, KU])
    pkg = import_longmemeval(path, instance="ku_9")
    assert pkg.meta["instance_index"] == 1


def test_a_flagged_turn_in_a_repeated_ids_later_copy_is_refused(tmp_path):
    # The filler copy [1] repeats answer_b2's id; answer_session_ids means the first copy, so
    # a has_answer flag in the later copy is in a session the list does not name either.
    doc = json.loads(json.dumps(KU))
    doc["haystack_sessions"][1][0]["has_answer"] = True
    with pytest.raises(PackageError) as info:
        import_longmemeval(_write(tmp_path, "lme.json", [doc]), instance="ku_9")
    assert [(p.path, p.rule) for p in info.value.problems] == [
        ("$[0].haystack_sessions[1][0].has_answer", "answer-session")
    ]
    assert "answer_b2#2" in info.value.problems[0].message
