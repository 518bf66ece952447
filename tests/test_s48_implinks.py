"""QA s48 importer defects: LoCoMo observations of a session with no turn list, a value under
a unit-link key that is no link, A-Mem Chroma link text that does not decode, and a benchmark
file given as an export."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_utils import run_cli
from note_utils import message, messages

from memaudit_core.errors import PackageError
from memaudit_core.importers import load_external_store
from memaudit_core.importers.locomo import import_locomo

FIXTURES = Path(__file__).parent / "fixtures" / "importers"
LOCOMO = FIXTURES / "locomo_small.json"
LONGMEMEVAL = FIXTURES / "longmemeval_small.json"


def _write(tmp_path: Path, name: str, obj: object) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(obj), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def conv_a():
    return import_locomo(LOCOMO, instance="conv-a")


def _problems(fn) -> list[tuple[str, str]]:
    with pytest.raises(PackageError) as info:
        fn()
    return [(p.path, p.rule) for p in info.value.problems]


# --------------------------------------------------------------------------- 2. LoCoMo


def test_observations_of_a_session_without_turns_are_warned_of_by_path(tmp_path):
    samples = json.loads(LOCOMO.read_text())
    # conv-a has sessions 1, 2 and 10; session 5 has neither turns nor a date.
    samples[0]["observation"]["session_5_observation"] = {"Bo": [["Bo fired a vase.", "D2:1"]]}
    package = import_locomo(_write(tmp_path, "locomo.json", samples), instance="conv-a")
    warnings = package.meta["warnings"]
    said = [message(w) for w in warnings if "$[0].observation.session_5_observation" in w]
    assert said == [
        "1 observation key(s) name a session with no turn list: "
        "$[0].observation.session_5_observation; their facts are kept in the observations "
        "store, undated, and their meta.session names no experience"
    ]
    # Kept, as said: its evidence is a real turn of session_2, and it has no date.
    memory = next(m for s in package.stores for m in s.memories if m.id == "obs-5-0")
    assert memory.meta["evidence"] == ["D2:1"]
    assert memory.created_at is None


def test_observations_of_real_sessions_get_no_such_warning():
    package = import_locomo(LOCOMO, instance="conv-a")
    assert not [w for w in package.meta["warnings"] if "observation key(s) name" in w]


# --------------------------------------------------------------------------- 3. unit keys


NOT_LINKS = [
    # metadata of m1, the path refused, the value and JSON type the message shows, and the
    # key and type the package-less warning names (at 10a9274's wording)
    (
        {"unit_ids": {"D1:1": 1}},
        "$[0].metadata.unit_ids",
        'an object (got {"D1:1": 1})',
        "'unit_ids' (an object)",
    ),
    (
        {"unit_ids": ["D1:1", True]},
        "$[0].metadata.unit_ids[1]",
        "a boolean (got true)",
        "'unit_ids' (an array)",
    ),
    ({"unit": 1.5}, "$[0].metadata.unit", "a number (got 1.5)", "'unit' (a number)"),
]


def _export(tmp_path: Path, metadata: dict) -> Path:
    return _write(
        tmp_path,
        "mem0.json",
        [
            {"id": "m1", "memory": "Ann adopted a cat", "metadata": metadata},
            {"id": "m2", "memory": "Ann moved to Lisbon", "metadata": {"unit_ids": ["D2:2"]}},
        ],
    )


@pytest.mark.parametrize("metadata, path, shown, _warned", NOT_LINKS)
def test_a_value_under_a_unit_key_that_is_no_link_is_refused_with_a_package(
    tmp_path, conv_a, metadata, path, shown, _warned
):
    f = _export(tmp_path, metadata)
    with pytest.raises(PackageError) as info:
        load_external_store(f, "mem0", package=conv_a)
    [problem] = info.value.problems
    assert (problem.path, problem.rule) == (path, "type")
    # The value itself and its JSON type, not the type name as if it were the value.
    assert problem.format() == (
        f"{path}: a link under units, unit_ids, unit_id or unit must be a unit id (a string or "
        f"an integer) or an array of them, not {shown} [rule: type]"
    )


@pytest.mark.parametrize("metadata, _path, _shown, warned", NOT_LINKS)
def test_a_value_under_a_unit_key_that_is_no_link_is_only_warned_of_without_a_package(
    tmp_path, metadata, _path, _shown, warned
):
    # No units to check it against, and "unit" may be the export's own field (as at 10a9274).
    store = load_external_store(_export(tmp_path, metadata), "mem0")
    assert [m.id for m in store.memories] == ["m1", "m2"]
    assert messages(store.meta["warnings"]) == [
        "1 memory(ies) hold provenance links that are not strings or arrays of strings "
        f"(first: $[0]: {warned}); those links give no coverage"
    ]


def test_a_long_value_under_a_unit_key_is_shown_cut(tmp_path, conv_a):
    value = {"D1:1": "x" * 500}
    with pytest.raises(PackageError) as info:
        load_external_store(_export(tmp_path, {"units": value}), "mem0", package=conv_a)
    [problem] = info.value.problems
    assert problem.format().endswith(
        f"not an object (got {json.dumps(value)[:80]}...) [rule: type]"
    )


NULLS = [  # a value holding a null, and the links m1 keeps: the null is no link at any level
    (None, None),
    ([None], None),
    (["D1:1", None], ["D1:1"]),
    ([[None], "D1:1"], ["D1:1"]),
]


@pytest.mark.parametrize("key", ["units", "unit_ids", "unit_id", "unit"])
@pytest.mark.parametrize("value, links", NULLS)
def test_a_null_under_a_unit_key_is_no_link_without_a_package(tmp_path, key, value, links):
    store = load_external_store(_export(tmp_path, {key: value}), "mem0")
    assert [m.id for m in store.memories] == ["m1", "m2"]
    assert "warnings" not in store.meta
    assert store.memories[0].meta.get("links") == links


@pytest.mark.parametrize("key", ["units", "unit_ids", "unit_id", "unit"])
@pytest.mark.parametrize(
    "value, coverage",
    [(value, {"D1:1": 1.0} if links else {}) for value, links in NULLS],
)
def test_a_null_under_a_unit_key_is_no_link_with_a_package(tmp_path, conv_a, key, value, coverage):
    store = load_external_store(_export(tmp_path, {key: value}), "mem0", package=conv_a)
    assert not [w for w in store.meta.get("warnings", []) if "provenance links" in w]
    # D1:1 and D2:2 are turns of conv-a.
    assert [dict(m.coverage) for m in store.memories] == [coverage, {"D2:2": 1.0}]


def test_the_cli_refuses_an_object_under_unit_ids_with_exit_2(tmp_path, conv_a):
    pkg = tmp_path / "pkg.json"
    assert run_cli("import", "locomo", str(LOCOMO), "--instance", "conv-a", "-o", str(pkg))[0] == 0
    export = [{"id": "m1", "memory": "Ann adopted a cat", "metadata": {"unit_ids": {"D1:1": 1}}}]
    f = _write(tmp_path, "mem0.json", export)
    rc, _out, err = run_cli(
        "import", "mem0", str(f), "--package", str(pkg), "-o", str(tmp_path / "o.json")
    )
    assert rc == 2
    assert (
        "mem0.json: $[0].metadata.unit_ids: a link under units, unit_ids, unit_id or unit must "
        'be a unit id (a string or an integer) or an array of them, not an object (got {"D1:1": '
        "1}) [rule: type]"
    ) in err
    assert not (tmp_path / "o.json").exists()


# --------------------------------------------------------------------------- 4. A-Mem Chroma


def test_chroma_link_text_that_does_not_decode_is_refused_at_its_own_path(tmp_path, conv_a):
    dump = json.loads((FIXTURES / "amem_chroma.json").read_text())
    dump["metadatas"][0]["evidence"] = '["D1:1"'  # the closing bracket is missing
    f = _write(tmp_path, "chroma.json", dump)
    with pytest.raises(PackageError) as info:
        load_external_store(f, "amem", package=conv_a)
    [problem] = info.value.problems
    assert (problem.path, problem.rule, problem.value) == (
        "$.metadatas[0].evidence",
        "json-syntax",
        '["D1:1"',
    )
    assert "does not decode" in problem.message


def test_chroma_link_text_that_decodes_still_gives_coverage(tmp_path, conv_a):
    dump = json.loads((FIXTURES / "amem_chroma.json").read_text())
    dump["metadatas"][0]["evidence"] = '["D1:1"]'
    store = load_external_store(_write(tmp_path, "chroma.json", dump), "amem", package=conv_a)
    assert dict(store.memories[0].coverage) == {"D1:1": 1.0}


# --------------------------------------------------------------------------- 5. benchmark files


@pytest.mark.parametrize(
    "fixture, fmt, command",
    [
        (LOCOMO, "mem0", "memaudit import locomo FILE"),
        (LONGMEMEVAL, "mem0", "memaudit import longmemeval FILE"),
        (LONGMEMEVAL, "amem", "memaudit import longmemeval FILE"),
    ],
)
def test_a_benchmark_file_given_as_an_export_gets_the_format_hint_alone(fixture, fmt, command):
    with pytest.raises(PackageError) as info:
        load_external_store(fixture, fmt)
    [problem] = info.value.problems
    assert problem.path == "$" and problem.rule == "format-hint"
    assert command in problem.message


def test_the_cli_prints_only_the_hint_for_a_benchmark_file_given_as_an_export(tmp_path):
    pkg = tmp_path / "pkg.json"
    assert run_cli("import", "locomo", str(LOCOMO), "--instance", "conv-a", "-o", str(pkg))[0] == 0
    rc, _out, err = run_cli(
        "import", "mem0", str(LOCOMO), "--package", str(pkg), "-o", str(tmp_path / "o.json")
    )
    assert rc == 2
    problem_lines = [line for line in err.splitlines() if "[rule: " in line]
    assert len(problem_lines) == 1
    assert "[rule: format-hint]" in problem_lines[0]


def test_a_summary_of_a_session_without_turns_is_warned_of_by_path(tmp_path):
    samples = json.loads(LOCOMO.read_text())
    # conv-a has sessions 1, 2 and 10 only: session 7's summary belongs to no experience.
    samples[0]["session_summary"]["session_7_summary"] = "Bo fired a vase."
    package = import_locomo(_write(tmp_path, "locomo.json", samples), instance="conv-a")
    said = [message(w) for w in package.meta["warnings"] if "session_7_summary" in w]
    assert said == [
        "1 session summary(ies) name a session with no turn list: "
        "$[0].session_summary.session_7_summary; ignored (a summary is a candidate of its "
        "session's experience)"
    ]
    assert not [c for c in package.candidates if c.text == "Bo fired a vase."]
    plain = import_locomo(LOCOMO, instance="conv-a")
    assert not [w for w in plain.meta["warnings"] if "summary(ies) name a session" in w]
