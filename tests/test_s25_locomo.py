"""LoCoMo and LongMemEval importers as an auditor broke them (importer QA, twenty-fifth session).

Wrong JSON types turned into text with ``str()`` (a list speaker, an object question, a NaN
answer), compressed files named "not UTF-8 text (byte 1)", and unpaired surrogates located in
the generated package instead of the source file. Every input is a copy of a fixture with one
field changed; expected paths and rules are written by hand from the documented rules.
"""

from __future__ import annotations

import copy
import gzip
import json
import zipfile
from pathlib import Path

import pytest
from cli_utils import run_cli as _cli
from note_utils import messages, unruled

from memaudit_core.errors import PackageError
from memaudit_core.importers import import_package, load_external_store

FIX = Path(__file__).parent / "fixtures" / "importers"
LOCOMO = json.loads((FIX / "locomo_small.json").read_text(encoding="utf-8"))
FLAT = json.loads((FIX / "locomo_flat_conv-b.json").read_text(encoding="utf-8"))
LME = json.loads((FIX / "longmemeval_small.json").read_text(encoding="utf-8"))
SURROGATE = "x\ud83dy"  # json.dumps writes it as the escape "x\\ud83dy"


def _write(tmp_path: Path, name: str, obj: object) -> Path:
    f = tmp_path / name
    f.write_text(json.dumps(obj), encoding="utf-8")  # NaN as NaN, surrogates as \\ud83d
    return f


def _conv_a() -> list[dict]:
    return [copy.deepcopy(LOCOMO[0])]


def _refused(call, source: Path) -> set[tuple[str, str]]:
    """(path, rule) of every problem; the error names ``source``."""
    with pytest.raises(PackageError) as info:
        call()
    assert info.value.source == str(source)
    return {(p.path, p.rule) for p in info.value.problems}


def _set(doc: object, keys: tuple, value: object) -> None:
    for key in keys[:-1]:
        doc = doc[key]
    doc[keys[-1]] = value


# --------------------------------------------------------------------------- defect 1: types


@pytest.mark.parametrize(
    "keys,value,path,rule",
    [
        # The auditor's three cases.
        ((0, "qa", 0, "question"), {"a": 1}, "$[0].qa[0].question", "type"),
        (
            (0, "conversation", "session_1", 0, "speaker"),
            [1, 2],
            "$[0].conversation.session_1[0].speaker",
            "type",
        ),
        ((0, "qa", 0, "answer"), float("nan"), "$[0].qa[0].answer", "finite"),
        ((0, "qa", 0, "answer"), float("inf"), "$[0].qa[0].answer", "finite"),
        ((0, "qa", 0, "answer"), ["a cat", float("nan")], "$[0].qa[0].answer[1]", "finite"),
        ((0, "qa", 0, "answer"), True, "$[0].qa[0].answer", "type"),
        # The other fields read, with the same kind of str() coercion before.
        (
            (0, "conversation", "session_1", 0, "dia_id"),
            11,
            "$[0].conversation.session_1[0].dia_id",
            "type",
        ),
        ((0, "qa", 0, "evidence", 0), None, "$[0].qa[0].evidence[0]", "type"),
        ((0, "qa", 0, "evidence", 0), 11, "$[0].qa[0].evidence[0]", "type"),
        (
            (0, "qa", 0, "adversarial_answer"),
            float("nan"),
            "$[0].qa[0].adversarial_answer",
            "finite",
        ),
        (
            (0, "conversation", "session_1_date_time"),
            20230508,
            "$[0].conversation.session_1_date_time",
            "type",
        ),
        ((0, "conversation", "speaker_a"), 7, "$[0].conversation.speaker_a", "type"),
        (
            (0, "session_summary", "session_1_summary"),
            ["Ann adopted Miso."],
            "$[0].session_summary.session_1_summary",
            "type",
        ),
        (
            (0, "observation", "session_1_observation", "Ann", 0, 1),
            ["D1:1", 3],
            "$[0].observation.session_1_observation.Ann[0][1][1]",
            "type",
        ),
        (
            (0, "observation", "session_2_observation", "Ann", 0, 1),
            None,
            "$[0].observation.session_2_observation.Ann[0][1]",
            "type",
        ),
    ],
)
def test_locomo_wrong_types_are_located_errors(tmp_path, keys, value, path, rule):
    """QA: [1, 2] became the line "[1, 2]: I adopted ...", {"a": 1} a query without text and
    NaN the answer "nan", all without a word; so did the other fields read through str()."""
    doc = _conv_a()
    _set(doc, keys, value)
    f = _write(tmp_path, "locomo.json", doc)
    assert (path, rule) in _refused(lambda: import_package("locomo", f), f)
    rc, _, err = _cli("import", "locomo", str(f), "-o", str(tmp_path / "out.json"))
    assert rc == 2
    assert f"{path}: " in err and f"[rule: {rule}]" in err and "Traceback" not in err


def test_locomo_blip_caption_standing_for_text_must_be_a_string(tmp_path):
    """QA: a list caption was written into the session text with str()."""
    doc = _conv_a()
    turn = doc[0]["conversation"]["session_2"][2]
    turn["text"], turn["blip_caption"] = "", ["a vase"]
    f = _write(tmp_path, "locomo.json", doc)
    problems = _refused(lambda: import_package("locomo", f), f)
    assert ("$[0].conversation.session_2[2].blip_caption", "type") in problems


def test_locomo_number_answer_is_kept_as_its_text(tmp_path):
    """LoCoMo has int answers: they stay accepted, as text (a guard for the fix above)."""
    doc = _conv_a()
    doc[0]["qa"][0]["answer"] = 2022
    pkg = import_package("locomo", _write(tmp_path, "locomo.json", doc))
    assert pkg.queries[0].answer == "2022"
    assert pkg.queries[0].meta["answer_type"] == "number"


def test_locomo_missing_question_and_speaker_are_warnings(tmp_path):
    """Optional fields missing are said, not passed over (the speaker was read as '?')."""
    doc = _conv_a()
    del doc[0]["qa"][0]["question"]
    doc[0]["qa"][1]["question"] = None
    del doc[0]["conversation"]["session_1"][1]["speaker"]
    pkg = import_package("locomo", _write(tmp_path, "locomo.json", doc))
    warnings = [unruled(w) for w in pkg.meta["warnings"]]
    notes = messages(pkg.meta["warnings"])
    assert "$[0].qa[0]: q1: no question (missing); the query has no text" in warnings
    assert "$[0].qa[1].question: q2: no question (null); the query has no text" in warnings
    assert (
        "1 turn(s) have no speaker (first: $[0].conversation.session_1[1].speaker); their "
        "lines and units read '?: text'" in notes
    )
    assert pkg.queries[0].text == ""
    assert "?: Lovely! What colour is Miso?" in pkg.experiences[0].text


def test_locomo_empty_summary_and_null_date_are_warnings(tmp_path):
    doc = _conv_a()
    doc[0]["session_summary"]["session_1_summary"] = "  "
    doc[0]["conversation"]["session_2_date_time"] = None
    pkg = import_package("locomo", _write(tmp_path, "locomo.json", doc))
    warnings = messages(pkg.meta["warnings"])
    assert (
        "1 session summary(ies) are empty (first: $[0].session_summary.session_1_summary): "
        "no summary candidate for those sessions" in warnings
    )
    assert "session(s) 2 have no date_time" in warnings
    assert "session_1:summary" not in {c.id for c in pkg.candidates}


def test_locomo_flat_layout_paths_have_no_nested_segments(tmp_path):
    """The flat file has session_1 at its top level: the path must not say .conversation."""
    doc = copy.deepcopy(FLAT)
    doc["session_1"][0]["speaker"] = [1, 2]
    doc["session_1_observation"]["Cy"][0][0] = 5
    doc["session_1_summary"] = 7
    f = _write(tmp_path, "conv-b.json", doc)
    problems = _refused(lambda: import_package("locomo", f), f)
    assert ("$.session_1[0].speaker", "type") in problems
    # Observations and summaries are read once the turns are good; both are listed.
    doc["session_1"][0]["speaker"] = "Cy"
    f = _write(tmp_path, "conv-b.json", doc)
    problems = _refused(lambda: import_package("locomo", f), f)
    assert problems == {
        ("$.session_1_observation.Cy[0][0]", "type"),
        ("$.session_1_summary", "type"),
    }


# --------------------------------------------------------------------------- defect 2: gzip / zip


def _gzip_of(tmp_path: Path, fixture: str, name: str) -> Path:
    f = tmp_path / name
    f.write_bytes(gzip.compress((FIX / fixture).read_bytes()))
    return f


def _zip_of(tmp_path: Path, fixture: str, name: str) -> Path:
    f = tmp_path / name
    with zipfile.ZipFile(f, "w") as zf:
        zf.writestr(fixture, (FIX / fixture).read_bytes())
    return f


@pytest.mark.parametrize(
    "fmt,fixture", [("locomo", "locomo_small.json"), ("longmemeval", "longmemeval_small.json")]
)
def test_gzip_file_is_named_as_such(tmp_path, fmt, fixture):
    """QA: 'file is not UTF-8 text (byte 1)' / '(invalid start byte)', which says nothing."""
    f = _gzip_of(tmp_path, fixture, "data.json")
    with pytest.raises(PackageError) as info:
        import_package(fmt, f)
    (problem,) = info.value.problems
    assert (problem.path, problem.rule) == ("$", "utf-8")
    assert problem.message == "file is not UTF-8 text: a gzip file; decompress it first (gunzip)"
    rc, _, err = _cli("import", fmt, str(f))
    assert rc == 2 and "gunzip" in err and "Traceback" not in err


@pytest.mark.parametrize(
    "fmt,fixture,hint",
    [
        (
            "locomo",
            "locomo_small.json",
            "give it a .zip suffix to read it as a zip of flat LoCoMo conversation files",
        ),
        ("longmemeval", "longmemeval_small.json", "unzip it and give the JSON file inside"),
    ],
)
def test_zip_given_as_json_is_named_as_such(tmp_path, fmt, fixture, hint):
    """QA: 'file is not UTF-8 text (byte 12)'."""
    f = _zip_of(tmp_path, fixture, "data.json")
    with pytest.raises(PackageError) as info:
        import_package(fmt, f)
    (problem,) = info.value.problems
    assert (problem.path, problem.rule) == ("$", "utf-8")
    assert problem.message == f"file is not UTF-8 text: a zip file; {hint}"


def test_store_importer_names_a_gzip_file(tmp_path):
    """The shared reader (every store importer) says it too."""
    f = _gzip_of(tmp_path, "mem0_v2_results.json", "export.json")
    with pytest.raises(PackageError) as info:
        load_external_store(f, "mem0")
    assert [(p.path, p.rule, p.message) for p in info.value.problems] == [
        ("$", "utf-8", "file is not UTF-8 text: a gzip file; decompress it first (gunzip)")
    ]


def test_locomo_gzip_named_zip_and_zip_of_flat_files(tmp_path):
    """A gzip file under .zip said 'File is not a zip file'; a real zip still imports."""
    f = _gzip_of(tmp_path, "locomo_flat_conv-b.json", "locomo10.zip")
    with pytest.raises(PackageError) as info:
        import_package("locomo", f)
    assert [(p.path, p.rule, p.message) for p in info.value.problems] == [
        ("$", "zip", "not a zip archive: a gzip file; decompress it first (gunzip)")
    ]
    pkg = import_package("locomo", _zip_of(tmp_path, "locomo_flat_conv-b.json", "flat.zip"))
    assert pkg.id == "locomo-conv-b"
    assert pkg.meta["format_version"] == "locomo-flat"


def test_locomo_zip_member_that_is_gzip_is_named(tmp_path):
    f = tmp_path / "locomo10.zip"
    with zipfile.ZipFile(f, "w") as zf:
        zf.writestr("7.json", gzip.compress((FIX / "locomo_flat_conv-b.json").read_bytes()))
    with pytest.raises(PackageError) as info:
        import_package("locomo", f)
    assert info.value.source == f"{f}:7.json"
    assert [(p.path, p.rule) for p in info.value.problems] == [("$", "utf-8")]
    assert "gzip" in info.value.problems[0].message


# --------------------------------------------------------------------------- defect 3: surrogates


def _lme_first() -> list[dict]:
    return [copy.deepcopy(LME[0])]


def test_longmemeval_surrogates_are_located_in_the_source(tmp_path):
    """QA: 9 problems at $.candidates[1].text, $.title, $.id... of the generated package."""
    doc = _lme_first()
    doc[0]["haystack_sessions"][0][0]["content"] = "I love \ud83d cats"
    doc[0]["question_id"] = "ku\ud83d01"
    f = _write(tmp_path, "lme.json", doc)
    assert "\\ud83d" in f.read_text(encoding="utf-8")
    problems = _refused(lambda: import_package("longmemeval", f), f)
    assert problems == {
        ("$[0].question_id", "unicode"),
        ("$[0].haystack_sessions[0][0].content", "unicode"),
    }


@pytest.mark.parametrize(
    "keys,path",
    [
        ((0, "haystack_sessions", 1, 0, "role"), "$[0].haystack_sessions[1][0].role"),
        ((0, "haystack_session_ids", 0), "$[0].haystack_session_ids[0]"),
        ((0, "haystack_dates", 0), "$[0].haystack_dates[0]"),
        ((0, "question"), "$[0].question"),
        ((0, "answer"), "$[0].answer"),
        ((0, "question_date"), "$[0].question_date"),
        ((0, "question_type"), "$[0].question_type"),
        ((0, "answer_session_ids", 0), "$[0].answer_session_ids[0]"),
    ],
)
def test_longmemeval_surrogate_in_any_copied_field_is_located(tmp_path, keys, path):
    doc = _lme_first()
    _set(doc, keys, SURROGATE)
    f = _write(tmp_path, "lme.json", doc)
    assert _refused(lambda: import_package("longmemeval", f), f) == {(path, "unicode")}


@pytest.mark.parametrize(
    "keys,value,path,rule",
    [
        ((0, "answer"), float("nan"), "$[0].answer", "finite"),
        ((0, "answer"), True, "$[0].answer", "type"),
        ((0, "question"), {"a": 1}, "$[0].question", "type"),
        ((0, "question_date"), 20240302, "$[0].question_date", "type"),
        ((0, "haystack_dates", 0), float("nan"), "$[0].haystack_dates[0]", "finite"),
        (
            (0, "haystack_sessions", 0, 0, "role"),
            [1, 2],
            "$[0].haystack_sessions[0][0].role",
            "type",
        ),
    ],
)
def test_longmemeval_wrong_types_are_located_errors(tmp_path, keys, value, path, rule):
    """The LoCoMo defects in LongMemEval's fields: NaN became "nan", a list role "[1, 2]: "."""
    doc = _lme_first()
    _set(doc, keys, value)
    f = _write(tmp_path, "lme.json", doc)
    assert (path, rule) in _refused(lambda: import_package("longmemeval", f), f)


def test_longmemeval_list_answer_and_missing_role_are_warnings(tmp_path):
    doc = _lme_first()
    doc[0]["answer"] = ["Lisbon", "Portugal"]
    del doc[0]["haystack_sessions"][0][1]["role"]
    pkg = import_package("longmemeval", _write(tmp_path, "lme.json", doc))
    warnings = [unruled(w) for w in pkg.meta["warnings"]]
    assert (
        "$[0].answer: the answer is a JSON array, not text; kept as its JSON text "
        '\'["Lisbon", "Portugal"]\'' in warnings
    )
    assert (
        "1 turn(s) have no role (first: $[0].haystack_sessions[0][1].role); their lines read "
        "'?: content'" in messages(pkg.meta["warnings"])
    )


@pytest.mark.parametrize(
    "keys,path",
    [
        ((0, "sample_id"), "$[0].sample_id"),
        ((0, "conversation", "speaker_b"), "$[0].conversation.speaker_b"),
        ((0, "conversation", "session_1", 0, "text"), "$[0].conversation.session_1[0].text"),
        (
            (0, "conversation", "session_1", 1, "speaker"),
            "$[0].conversation.session_1[1].speaker",
        ),
        (
            (0, "conversation", "session_2_date_time"),
            "$[0].conversation.session_2_date_time",
        ),
        ((0, "qa", 1, "question"), "$[0].qa[1].question"),
        ((0, "qa", 1, "answer"), "$[0].qa[1].answer"),
        ((0, "qa", 1, "evidence", 0), "$[0].qa[1].evidence[0]"),
        ((0, "qa", 5, "adversarial_answer"), "$[0].qa[5].adversarial_answer"),
        ((0, "session_summary", "session_10_summary"), "$[0].session_summary.session_10_summary"),
        (
            (0, "observation", "session_2_observation", "Bo", 1, 0),
            "$[0].observation.session_2_observation.Bo[1][0]",
        ),
    ],
)
def test_locomo_surrogate_in_any_copied_field_is_located(tmp_path, keys, path):
    doc = _conv_a()
    _set(doc, keys, SURROGATE)
    f = _write(tmp_path, "locomo.json", doc)
    assert _refused(lambda: import_package("locomo", f), f) == {(path, "unicode")}


def test_locomo_surrogate_in_an_observation_speaker_key_is_located(tmp_path):
    doc = _conv_a()
    obs = doc[0]["observation"]["session_2_observation"]
    obs[SURROGATE] = obs.pop("Bo")
    f = _write(tmp_path, "locomo.json", doc)
    path = '$[0].observation.session_2_observation["x\\ud83dy"]'
    assert _refused(lambda: import_package("locomo", f), f) == {(path, "unicode")}
