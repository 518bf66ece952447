"""QA s44: numbers that underflow to 0 and ids that look like others.

1. A non-zero JSON number too small for a double (``1e-400``) read as 0 without a word: a
   coverage, weight or budget silently became 0, and a cost of 1e-400 was refused as "must be
   greater than 0 (got 0.0)". Every reader of user numbers now refuses it (rule ``normal``),
   by JSON path, quoting the text as written.
2. Ids with edge whitespace, invisible characters, or equal to another id once normalised
   ("c2" next to "c2 ") validated with no warning; each is now warned of by JSON path.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_utils import run_cli
from package_utils import refused, write_json

from memaudit_core.errors import PackageError, ResultError
from memaudit_core.importers import load_external_store
from memaudit_core.importers.artifact import load_artifact_package
from memaudit_core.package import loads_package
from memaudit_core.results import read_result

FIX = Path(__file__).parent / "fixtures" / "importers"

BASE = {
    "memaudit": 1,
    "id": "t",
    "experiences": [{"id": "e1", "time": 0}, {"id": "e2", "time": 1}],
    "units": [{"id": "u1", "weight": 1.0}, {"id": "u2", "weight": 2.0}],
    "queries": [{"id": "q1", "requires": ["u1"], "weight": 1.0}],
    "candidates": [
        {"id": "c1", "experience": "e1", "type": "atomic_fact", "cost": 2, "coverage": {"u1": 1.0}},
        {"id": "c2", "experience": "e2", "type": "atomic_fact", "cost": 3, "coverage": {"u2": 0.5}},
    ],
    "budget": 4,
}
TEXT = json.dumps(BASE)
TINY = "1e-400"  # below the smallest subnormal double (~4.9e-324): float() reads 0.0
LONG_TINY = "0." + "0" * 400 + "7"  # the same without an exponent


@pytest.mark.parametrize(
    ("old", "new", "path"),
    [
        ('{"u1": 1.0}', '{"u1": TINY}', '$.candidates[0].coverage["u1"]'),
        ('"weight": 1.0}, {"id": "u2"', '"weight": TINY}, {"id": "u2"', "$.units[0].weight"),
        (
            '"requires": ["u1"], "weight": 1.0',
            '"requires": ["u1"], "weight": TINY',
            "$.queries[0].weight",
        ),
        ('"budget": 4', '"budget": TINY', "$.budget"),
        ('"cost": 2', '"cost": TINY', "$.candidates[0].cost"),
        ('"budget": 4}', '"budget": 4, "meta": {"p": [1, TINY]}}', "$.meta.p[1]"),
    ],
)
@pytest.mark.parametrize("literal", [TINY, LONG_TINY])
def test_a_number_that_underflows_is_refused_quoting_its_text(old, new, path, literal):
    assert old in TEXT
    text = TEXT.replace(old, new.replace("TINY", literal))
    with pytest.raises(PackageError) as info:
        loads_package(text, "tiny.json")
    problems = info.value.problems
    assert [(p.path, p.rule, p.value) for p in problems] == [(path, "normal", literal)]
    assert "(got 0.0)" not in str(info.value)


def test_cli_validate_refuses_an_underflowing_coverage_and_zero_stays_zero(tmp_path):
    for zero in ("0.0", "-0.0", "0e-400", "0.000E+5"):
        pkg = loads_package(TEXT.replace('{"u1": 1.0}', '{"u1": ' + zero + "}"))
        assert pkg.candidates[0].coverage["u1"] == 0.0
    # 5e-324 is a double (subnormal): refused as before, by its value.
    assert refused(lambda: loads_package(TEXT.replace('"cost": 2', '"cost": 5e-324'))) == [
        ("$.candidates[0].cost", "normal")
    ]
    path = tmp_path / "tiny_cov.json"
    path.write_text(TEXT.replace('{"u1": 1.0}', '{"u1": 1e-400}'), encoding="utf-8")
    rc, out, err = run_cli("validate", "--json", str(path))
    assert rc != 0
    doc = json.loads(out)
    assert doc["valid"] is False
    assert [(p["path"], p["rule"], p["value"]) for p in doc["problems"]] == [
        ('$.candidates[0].coverage["u1"]', "normal", "1e-400")
    ]


def _artifact(folder: Path, value: str) -> Path:
    lines = {
        "experiences.jsonl": ['{"experience_id": "e1", "time_index": 0}'],
        "evidence_units.jsonl": ['{"unit_id": "r1", "weight": 1}'],
        "candidate_memories.jsonl": [
            '{"candidate_id": "c1", "experience_id": "e1", "representation": "atomic_fact", '
            '"cost": 1}'
        ],
        "coverage_matrix.jsonl": [
            '{"candidate_id": "c1", "unit_id": "r1", "value": ' + value + "}"
        ],
    }
    for name, rows in lines.items():
        (folder / name).write_text("\n".join(rows) + "\n", encoding="utf-8")
    return folder


def test_artifact_import_refuses_an_underflowing_coverage_cell(tmp_path):
    ok = load_artifact_package(_artifact(tmp_path, "0.5"))
    assert ok.candidates[0].coverage == {"r1": 0.5}
    with pytest.raises(PackageError) as info:
        load_artifact_package(_artifact(tmp_path, "1e-400"))
    assert [(p.path, p.rule, p.value) for p in info.value.problems] == [
        ("coverage_matrix.jsonl:1.value", "normal", "1e-400")
    ]
    rc, _, err = run_cli("import", "artifact", str(tmp_path), "-o", str(tmp_path / "o.json"))
    assert rc != 0 and "coverage_matrix.jsonl:1.value" in err and "1e-400" in err
    assert not (tmp_path / "o.json").exists()


def test_store_export_refuses_an_underflowing_number(tmp_path):
    text = (FIX / "mem0_v2_results.json").read_text(encoding="utf-8")
    assert '"score": 0.82' in text
    path = tmp_path / "mem0.json"
    path.write_text(text.replace('"score": 0.82', '"score": 1e-400', 1), encoding="utf-8")
    with pytest.raises(PackageError) as info:
        load_external_store(path, "mem0")
    assert [(p.path, p.rule, p.value) for p in info.value.problems] == [
        ("$.results[0].score", "normal", "1e-400")
    ]


def test_amem_number_given_as_text_that_underflows_is_refused(tmp_path):
    doc = json.loads((FIX / "amem_chroma.json").read_text(encoding="utf-8"))
    doc["metadatas"][0]["importance_score"] = "1e-400"
    with pytest.raises(PackageError) as info:
        load_external_store(write_json(tmp_path, "amem.json", doc), "amem")
    [problem] = info.value.problems
    # Where the text is in the export (QA s44 inputs2: it was "$.ids[0]", as meta.importance_score).
    assert (problem.path, problem.rule, problem.value) == (
        "$.metadatas[0].importance_score",
        "normal",
        "1e-400",
    )


def test_result_read_back_refuses_an_underflowing_number(tmp_path):
    pkg = tmp_path / "p.json"
    pkg.write_text(TEXT, encoding="utf-8")
    rc, out, _ = run_cli("solve", str(pkg), "--json")
    assert rc == 0
    saved = tmp_path / "r.json"
    saved.write_text(out, encoding="utf-8")
    read_result(saved)  # readable as written
    edited, n = re.subn(r'^  "cost": [0-9.]+', '  "cost": 1e-400', out, count=1, flags=re.M)
    assert n == 1
    saved.write_text(edited, encoding="utf-8")
    with pytest.raises(ResultError) as info:
        read_result(saved)
    assert (info.value.path, info.value.rule, info.value.value) == ("$.cost", "normal", "1e-400")


# --------------------------------------------------------------------------- id look-alikes


def _with_candidate_ids(first: str, second: str) -> str:
    doc = json.loads(TEXT)
    doc["candidates"][0]["id"], doc["candidates"][1]["id"] = first, second
    return json.dumps(doc, ensure_ascii=False)


@pytest.mark.parametrize(
    ("first", "second", "warned", "words"),
    [
        ("c2 ", "c2", "$.candidates[0].id", ["trailing whitespace", "$.candidates[1].id"]),
        ("c2\u200b", "c2", "$.candidates[0].id", ["U+200B", "$.candidates[1].id"]),
        ("café", "cafe\u0301", "$.candidates[1].id", ["looks like $.candidates[0].id"]),
        ("\u202ec1", "c2", "$.candidates[0].id", ["U+202E"]),
        (" c1", "c2", "$.candidates[0].id", ["leading whitespace"]),
    ],
)
def test_ids_that_look_alike_are_warned_of_by_path(first, second, warned, words):
    pkg = loads_package(_with_candidate_ids(first, second))
    [warning] = [w for w in pkg.warnings if "id-lookalike" in w]
    assert warning.startswith(warned + ": ")
    for word in words:
        assert word in warning


def test_id_warnings_are_capped_per_list():
    doc = json.loads(TEXT)
    doc["experiences"] = [{"id": f"e{i} ", "time": i} for i in range(8)]
    for cand in doc["candidates"]:
        cand["experience"] = "e0 "
    pkg = loads_package(json.dumps(doc))
    said = [w for w in pkg.warnings if "id-lookalike" in w]
    assert [w.split(":")[0] for w in said[:5]] == [f"$.experiences[{i}].id" for i in range(5)]
    assert len(said) == 6 and "3 more experience id(s)" in said[5]
    # Plain or merely similar ids are not warned of.
    for first, second in [("c1", "c2"), ("café", "cafe"), ("c 1", "c1"), ("日本", "日本語")]:
        pkg = loads_package(_with_candidate_ids(first, second))
        assert [w for w in pkg.warnings if "id-lookalike" in w] == []
