"""Saved results are read by the package loader's JSON reader (QA s44).

``memaudit show`` / ``ma.read_result`` used plain ``json.loads``: a key written twice in one
object (``"package_id": "EVIL", "package_id": "veg"``) kept the last value without a word,
and deep nesting or a 5,000-digit integer let Python's own words through ("maximum recursion
depth exceeded ...", "use sys.set_int_max_str_digits()"). Each file here is written by the
real CLI, edited as text, and must be refused naming the file, the JSON path and the rule.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_utils import run_cli

import memaudit_core as ma
from memaudit_core.errors import PackageError, ResultError

REPO = Path(__file__).resolve().parent.parent
VEG = str(REPO / "sample_packages" / "veg-to-pescatarian.json")
CHAIN = str(REPO / "sample_packages" / "update_chain.json")


@pytest.fixture(scope="module")
def texts() -> dict[str, str]:
    out = {}
    for name, argv in {
        "solve": ("solve", VEG, "--budget", "12", "--json"),
        "sweep": (
            "sweep",
            CHAIN,
            "--budgets",
            "4,8",
            "--writers",
            "gvt,density",
            "--json",
            "--quiet",
        ),  # fmt: skip
    }.items():
        rc, stdout, stderr = run_cli(*argv)
        assert rc == 0, stderr
        out[name] = stdout
    return out


def repeat_key(text: str, anchor: str, key: str, first: str) -> str:
    """``text`` with ``"key": first,`` written just before the first ``"key":`` after
    ``anchor``, so that the object holds the key twice (the genuine value last)."""
    at = text.index(f'"{key}": ', text.index(anchor))
    return text[:at] + f'"{key}": {first}, ' + text[at:]


def refused(path: Path) -> ResultError:
    with pytest.raises(ResultError) as info:
        ma.read_result(path)
    return info.value


# (file, anchor, key, first value, the JSON path, counted by hand from the CLI's layout)
REPEATS = {
    "package_id": ("solve", "{", "package_id", '"EVIL"', "$.package_id"),
    "value": ("solve", "{", "value", "99", "$.value"),
    "check value": ("solve", '"checks"', "value", "99", "$.certificate.checks[0].value"),
    "sweep row": ("sweep", '"rows"', "method", '"oracle"', "$.rows[0].method"),
}


@pytest.mark.parametrize("case", REPEATS)
def test_a_repeated_key_is_refused_at_its_path(texts, tmp_path, case):
    kind, anchor, key, first, where = REPEATS[case]
    edited = repeat_key(texts[kind], anchor, key, first)
    path = tmp_path / "r.json"
    path.write_text(edited, encoding="utf-8")
    exc = refused(path)
    assert (exc.path, exc.rule, exc.file) == (where, "duplicate-key", str(path))
    assert "appears more than once in the same JSON object" in exc.detail

    rc, out, err = run_cli("show", str(path))
    assert rc == 2 and out == ""
    assert err.startswith(f"{path}: {where}: ")  # as a package problem (QA s46)
    assert err.rstrip().endswith("[rule: duplicate-key]")


def test_every_repeated_key_is_counted(texts, tmp_path):
    edited = repeat_key(texts["solve"], "{", "package_id", '"EVIL"')
    edited = repeat_key(edited, '"checks"', "value", "99")
    path = tmp_path / "r.json"
    path.write_text(edited, encoding="utf-8")
    exc = refused(path)
    assert (exc.path, exc.rule) == ("$.package_id", "duplicate-key")
    assert "(1 more repeated key(s) in this file)" in exc.detail


def _package_problem(text: str, tmp_path: Path) -> tuple[str, str, str]:
    path = tmp_path / "package.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(PackageError) as info:
        ma.load_package(path)
    (problem,) = info.value.problems
    return problem.path, problem.rule, problem.message


UNREADABLE = {
    "truncated": '{"result_kind": "solve", "value": 6.',
    "syntax": '{"result_kind": "solve" "value": 6}',
    "empty": "  \n",
    "deep": '{"result_kind": "solve", "value": ' + "[" * 5000 + "]" * 5000 + "}",
    "digits": '{"result_kind": "solve", "value": ' + "9" * 5000 + "}",
}


@pytest.mark.parametrize("case", UNREADABLE)
def test_unreadable_json_is_told_as_for_a_package(tmp_path, case):
    """The same text gives the same path, rule and words as a package file (the reader is
    shared): line and column where the decoder knows them, never Python's own words."""
    text = UNREADABLE[case]
    expected = _package_problem(text, tmp_path)
    path = tmp_path / "r.json"
    path.write_text(text, encoding="utf-8")
    exc = refused(path)
    assert (exc.path, exc.rule, exc.detail) == expected
    rc, _, err = run_cli("show", str(path))
    assert rc == 2
    assert "sys.set_int_max_str_digits" not in err and "recursion" not in err
    assert err.rstrip().endswith(f"[rule: {expected[1]}]")


def test_the_messages_name_the_rules(tmp_path):
    words = {
        # The column of the cut-off "6.": its "." is the text's last character.
        "truncated": (
            f"$ (line 1, column {len(UNREADABLE['truncated'])})",
            "truncated",
            "file ends before the JSON",
        ),
        "deep": ("$", "json-depth", "the JSON document is nested too deeply to read"),
        # The column where the 5,000-digit number starts (found when the error happens).
        "digits": (
            f"$ (line 1, column {UNREADABLE['digits'].index('9') + 1})",
            "json-syntax",
            "not valid JSON: a number has too many digits to read",
        ),
    }
    for case, (where, rule, message) in words.items():
        path = tmp_path / f"{case}.json"
        path.write_text(UNREADABLE[case], encoding="utf-8")
        exc = refused(path)
        assert (exc.path, exc.rule) == (where, rule)
        assert exc.detail.startswith(message)


def test_two_results_in_one_file_are_not_told_to_become_an_array(texts, tmp_path):
    path = tmp_path / "r.json"
    path.write_text(texts["solve"] * 2, encoding="utf-8")
    exc = refused(path)
    lines = texts["solve"].count("\n")
    assert (exc.path, exc.rule) == (f"$ (line {lines + 1}, column 1)", "json-syntax")
    assert "JSON Lines" not in exc.detail and "two results written into one file" in exc.detail


def test_a_number_no_float_holds_is_not_read_as_infinity(texts, tmp_path):
    doc = json.loads(texts["solve"])
    assert doc["time_s"] > 0
    text = texts["solve"].replace(f'"time_s": {doc["time_s"]!r}', '"time_s": 1e400', 1)
    assert text != texts["solve"]
    path = tmp_path / "r.json"
    path.write_text(text, encoding="utf-8")
    exc = refused(path)
    assert (exc.path, exc.rule) == ("$.time_s", "type")
    assert "a number too large for a float" in exc.detail
