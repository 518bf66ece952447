"""Package loading from JSON text: the decoder's "nothing suspect" promise and the validator's
fast paths give the same packages and the same problems as the full checks.

``loads_package`` skips the path-free pass over the document (:func:`package._has_suspect`)
when decoding saw no repeated key or NaN / Infinity literal and the text holds no surrogate
and no number that may overflow; coverage cells that are known units with plain floats in
range skip building their paths. The oracle is the full pass: ``_has_suspect`` on the decoded
document, and ``parse_package`` on it (which always runs that pass).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memaudit_core import package as package_module
from memaudit_core.errors import PackageError
from memaudit_core.generators import generate
from memaudit_core.package import loads_package, package_to_dict, parse_package

HERE = Path(__file__).parent


def _is_utf8(path: Path) -> bool:
    try:
        path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


#: The malformed corpus and the samples, as text (the files that are not UTF-8 never reach the
#: decoder: loads_package refuses their bytes first).
CORPUS = sorted(
    path
    for path in [
        *(HERE / "malformed").glob("*.json"),
        *(HERE.parent / "sample_packages").glob("*.json"),
    ]
    if _is_utf8(path)
)


def outcome(run):
    """A package's content hash, or the PackageError's problem lines."""
    try:
        return ("ok", run().content_hash())
    except PackageError as exc:
        return ("error", tuple(exc.lines()))


def both_paths(text: str) -> tuple[object, object]:
    fast = outcome(lambda: loads_package(text.encode("utf-8"), source="t.json"))
    full = outcome(
        lambda: parse_package(package_module.parse_json_text(text, "t.json"), source="t.json")
    )
    return fast, full


def test_the_corpus_is_the_malformed_files_and_the_samples():
    assert len(CORPUS) >= 60


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_corpus_loads_the_same_through_text_and_through_the_full_pass(path):
    text = path.read_text(encoding="utf-8")
    fast, full = both_paths(text)
    assert fast == full


def base_text() -> str:
    return json.dumps(package_to_dict(generate("update_chain")))


def edited(old: str, new: str) -> str:
    text = base_text()
    assert old in text
    return text.replace(old, new, 1)


#: Edits of a valid package's text, each putting in one thing the path-free pass looks for
#: (or a coverage value the fast path must hand to the full checks), with the rule expected.
EDITS = {
    "coverage_nan": ('"coverage": {', '"coverage": {"zz": NaN, ', "finite"),
    "coverage_infinity": ('"coverage": {', '"coverage": {"zz": -Infinity, ', "finite"),
    "coverage_overflow_exponent": ('"cost": ', '"cost": 1e400, "x_cost": ', "finite"),
    "coverage_overflow_digits": ('"cost": ', '"cost": ' + "9" * 400 + '.0, "x_cost": ', "finite"),
    "duplicate_key": ('"coverage": {', '"coverage": {"zz": 0.5, "zz": 0.25, ', "duplicate-key"),
    "lone_surrogate_escape": ('"text": "', '"text": "\\ud83d', "unicode"),
    "subnormal_coverage": ('"coverage": {', '"coverage": {"zz": 1e-320, ', "normal"),
    "negative_coverage": ('"coverage": {', '"coverage": {"zz": -0.5, ', "coverage-range"),
    "coverage_above_one": ('"coverage": {', '"coverage": {"zz": 1.5, ', "coverage-range"),
    "coverage_boolean": ('"coverage": {', '"coverage": {"zz": true, ', "type"),
}


@pytest.mark.parametrize("name", sorted(EDITS))
def test_each_suspect_edit_is_reported_the_same_way_on_both_paths(name):
    old, new, rule = EDITS[name]
    text = edited(old, new)
    if "zz" in new:  # a coverage cell: make "zz" a known unit, so only the value is wrong
        text = text.replace('"units": [', '"units": [{"id": "zz", "text": "z", "weight": 1}, ', 1)
    fast, full = both_paths(text)
    assert fast == full
    assert fast[0] == "error"
    assert any(f"[rule: {rule}]" in line for line in fast[1]), fast[1]


def test_the_decoder_flags_every_document_the_full_pass_flags():
    """Soundness of the promise: whenever ``_has_suspect`` finds something, the decoder said
    "look" (its False is never wrong)."""
    checked = 0
    for old, new, _rule in EDITS.values():
        text = edited(old, new)
        doc, flagged = package_module._decode_json_text(text, "t.json")
        if package_module._has_suspect(doc):
            assert flagged, new
            checked += 1
    assert checked >= 6  # NaN, -Infinity, two overflows, the repeated key, the surrogate
    clean_doc, clean_flag = package_module._decode_json_text(base_text(), "t.json")
    assert not package_module._has_suspect(clean_doc) and not clean_flag


def test_a_surrogate_in_text_given_as_str_is_looked_for():
    text = edited('"text": "', '"text": "\ud83d')
    doc, flagged = package_module._decode_json_text(text, "t.json")
    assert flagged and package_module._has_suspect(doc)
    with pytest.raises(PackageError, match=r"\[rule: unicode\]"):
        loads_package(text, source="t.json")
