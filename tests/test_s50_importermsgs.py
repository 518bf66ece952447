"""QA s50 (importer messages): Letta topic tags called broken provenance links, and a benchmark
file or an export given as the package buried its "how to import it" hint under the package
problems it causes.

Expected values are written by hand from the rules the QA report states (EXPORT_FORMATS 2.4: a
passage's ``tags`` are the system's own labels; a LoCoMo / LongMemEval file becomes a package
through ``memaudit import``), never taken from the code under test.
"""

from __future__ import annotations

from pathlib import Path

from app_utils import open_app
from cli_utils import run_cli
from note_utils import message
from package_utils import write_json

from memaudit_core.importers import load_external_store
from memaudit_core.package import parse_package

FIX = Path(__file__).parent / "fixtures" / "importers"

#: Units D1:1 and D2:1; experiences session_1 and session_2.
PKG = {
    "memaudit": 1,
    "id": "tiny",
    "experiences": [{"id": "session_1", "time": 0}, {"id": "session_2", "time": 1}],
    "units": [
        {"id": "D1:1", "text": "Ann adopted a cat named Miso", "weight": 1},
        {"id": "D2:1", "text": "Bo moved to Lisbon", "weight": 2},
    ],
    "candidates": [
        {"id": "s1:raw", "experience": "session_1", "type": "raw_span", "cost": 5,
         "coverage": {"D1:1": 1}},
        {"id": "s2:raw", "experience": "session_2", "type": "raw_span", "cost": 4,
         "coverage": {"D2:1": 1}},
    ],
}  # fmt: skip

PASSAGES = [
    {"id": "passage-1", "text": "Ann adopted a cat", "metadata": {"dia_id": "D1:1"}, "tags": []},
    {"id": "passage-4", "text": "Ann likes tea.", "metadata": {}, "tags": ["preferences"]},
    {"id": "passage-5", "text": "Something else", "metadata": {"dia_id": "D44:1"}},
]


def _store(tmp_path: Path, passages: list[dict]):
    f = write_json(tmp_path, "passages.json", passages)
    return load_external_store(f, "letta", package=parse_package(PKG, "tiny.json"))


def test_a_letta_topic_tag_is_no_broken_link(tmp_path):
    store = _store(tmp_path, PASSAGES)
    # passage-1: unit link; passage-4: no link (a topic tag); passage-5: a link to nothing.
    assert store.meta["coverage"] == (
        "from provenance links: 1 from unit links (exact); 1 with links that match nothing "
        "in the package (needs annotation); 1 without links (needs annotation)"
    )
    broken = [message(w) for w in store.meta["warnings"] if "name no unit or experience" in w]
    assert broken == [
        "1 memory(ies) have provenance links that name no unit or experience of package "
        "'tiny', so those links give no coverage (a different package, a typo or a truncated "
        "package?): $[2].metadata.dia_id: 'D44:1'"
    ]
    assert "unresolved_links" not in store.memories[1].meta
    assert store.memories[1].meta["tags"] == ["preferences"]
    # Said once as a label, at its own path.
    (topic,) = [message(w) for w in store.meta["warnings"] if "topic labels" in w]
    assert topic.startswith("1 tag(s) of memories without provenance links name no unit")
    assert topic.endswith(": $[1].tags[0]: 'preferences'")


def test_a_tag_naming_a_unit_is_still_a_link(tmp_path):
    """Why tags became links (QA s18b): a dia_id written as a tag is provenance."""
    passages = [
        {"id": "p1", "text": "Ann adopted a cat", "metadata": {}, "tags": ["pets", "D1:1"]},
        {"id": "p2", "text": "Bo moved", "metadata": {"dia_id": "D1:1"}, "tags": ["D2:1"]},
        {"id": "p3", "text": "Bo moved again", "tags": ["session_2"]},
    ]
    store = _store(tmp_path, passages)
    assert [m.coverage for m in store.memories] == [
        {"D1:1": 1.0},
        {"D1:1": 1.0, "D2:1": 1.0},
        {"D2:1": 1.0},  # session_2's best candidate coverage (an experience link)
    ]
    # 'pets' sits beside a link: nothing to say about it.
    assert store.meta.get("warnings", []) == []


def test_cli_score_of_a_topic_tag_gives_no_typo_warning(tmp_path):
    pkg = write_json(tmp_path, "tiny.json", PKG)
    export = write_json(tmp_path, "p.json", PASSAGES[:2])
    rc, _out, err = run_cli(
        "score", str(pkg), "--external", str(export), "--format", "letta", "--budget", "9"
    )
    assert rc == 0, err
    assert "'preferences'" in err  # the label line
    assert "typo" not in err and "name no unit or experience" not in err


LOCOMO_HINT = (
    "$: this is a LoCoMo benchmark file, not a MemAudit package: convert it with `memaudit "
    "import locomo FILE --instance SAMPLE_ID -o package.json` (the app cannot convert it), then "
    "give package.json to memaudit or upload it in the app [rule: format-hint]"
)


def test_validate_of_a_locomo_file_gives_the_hint_alone():
    f = FIX / "locomo_small.json"
    rc, _out, err = run_cli("validate", str(f))
    assert rc == 2
    assert err.strip().splitlines() == [f"{f}: {LOCOMO_HINT}"]


def test_validate_of_a_longmemeval_file_gives_the_hint_alone():
    f = FIX / "longmemeval_small.json"
    rc, _out, err = run_cli("validate", str(f))
    assert rc == 2
    assert err.strip().splitlines() == [
        f"{f}: $: this is a LongMemEval benchmark file, not a MemAudit package: convert it "
        "with `memaudit import longmemeval FILE --instance QUESTION_ID -o package.json` (the "
        "app cannot convert it), then give package.json to memaudit or upload it in the app "
        "[rule: format-hint]"
    ]


def test_validate_of_a_letta_agent_file_gives_the_hint_alone():
    f = FIX / "letta_v2.af"
    rc, _out, err = run_cli("validate", str(f))
    assert rc == 2
    (line,) = err.strip().splitlines()
    assert line.startswith(f"{f}: $: this file looks like a Letta agent file")
    assert "`memaudit import letta FILE --package PACKAGE -o OUT.json`" in line


def test_validate_of_a_broken_package_keeps_its_problems(tmp_path):
    """Regression guard: a package that merely resembles an export keeps its own problems."""
    doc = {"memaudit": 1, "id": "p", "units": [], "candidates": [], "agents": []}
    rc, _out, err = run_cli("validate", str(write_json(tmp_path, "p.json", doc)))
    assert rc == 2
    assert "[rule: format-hint]" in err
    assert "$.experiences: missing required array 'experiences' [rule: required]" in err


def test_the_app_upload_of_a_locomo_file_shows_one_problem():
    at = open_app("app.py", package="sample:update_chain")
    data = (FIX / "locomo_small.json").read_bytes()
    at.file_uploader(key="w_upload").upload("locomo.json", data, "application/json").run()
    assert not at.exception, [e.value for e in at.exception]
    shown = [e.value.replace("\\", "") for e in at.sidebar.error]
    (box,) = [e for e in shown if "locomo.json" in e]
    assert "(1 problem(s))" in box
    assert "this is a LoCoMo benchmark file, not a MemAudit package" in box
    assert "the app cannot convert it" in box
    assert "a package must be a JSON object" not in box
