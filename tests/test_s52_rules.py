"""QA s51 (CLI) #7 and #11: one vocabulary of rules, one form of error line.

7. The saved-result reader (``memaudit show``, ``ma.read_result``) named a condition otherwise
   than the package reader: a JSON array was ``wrong type`` there and ``type`` here, a missing
   field ``missing field`` / ``required``, a newer version ``newer version`` /
   ``format-version``, a folder ``result-json`` / ``file-type``; UTF-16 bytes were "not UTF-8
   text (byte 0)" to one and "it looks like UTF-16 text; save it as UTF-8" to the other. The
   package's version error said "unsupported format version (expected 1)", not whether the
   file was newer or older than this MemAudit, as the result's did.
11. argparse's errors printed the command's usage (7 lines for solve) and then ``memaudit
   solve: error: ...``; errors found later printed ``memaudit: error: ...``.

Expected values are written by hand from the rule names the package reader gives (the
README's lists) and the form argparse gives its error line.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest
from cli_utils import run_cli

import memaudit_core

REPO = Path(__file__).resolve().parents[1]
CHAIN = REPO / "sample_packages" / "update_chain.json"


def _error(argv: list[str]) -> dict:
    """The ``--json`` error object of ``memaudit ARGV --json`` (which must fail, status 2)."""
    code, out, err = run_cli(*argv, "--json")
    assert code == 2, err
    return json.loads(out)["error"]


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> dict:
    """``solve --json`` of the chain at budget 6, as a saved result."""
    code, out, err = run_cli("solve", str(CHAIN), "--budget", "6", "--json")
    assert code == 0, err
    return json.loads(out)


def _array(folder: Path) -> Path:
    (folder / "x.json").write_text("[1, 2, 3]", encoding="utf-8")
    return folder / "x.json"


def _folder(folder: Path) -> Path:
    (folder / "adir").mkdir()
    return folder / "adir"


def _utf16(folder: Path) -> Path:
    (folder / "x.json").write_bytes('{"a": 1}'.encode("utf-16"))
    return folder / "x.json"


def _zip(folder: Path) -> Path:
    (folder / "x.json").write_bytes(b"PK\x03\x04" + b"\x00" * 40)
    return folder / "x.json"


@pytest.mark.parametrize(
    "make, rule",
    [(_array, "type"), (_folder, "file-type"), (_utf16, "utf-8"), (_zip, "file-type")],
)
def test_a_file_both_readers_refuse_breaks_one_rule(tmp_path, make, rule):
    target = str(make(tmp_path))
    package = _error(["solve", target, "--budget", "6"])
    result = _error(["show", target])
    assert [p["rule"] for p in package["problems"]] == [rule]
    assert [p["rule"] for p in result["problems"]] == [rule]
    if make is _utf16:  # what the bytes look like, in the same words
        said = "file is not UTF-8 text: it looks like UTF-16 text; save it as UTF-8"
        assert package["problems"][0]["message"] == result["problems"][0]["message"] == said
    if make is _array:
        assert result["problems"][0]["message"] == (
            "a saved result must be a JSON object, not a JSON array"
        )


def test_a_missing_field_is_required_to_both_readers(tmp_path, saved):
    doc = json.loads(CHAIN.read_text(encoding="utf-8"))
    del doc["id"]
    (tmp_path / "p.json").write_text(json.dumps(doc), encoding="utf-8")
    edited = {k: v for k, v in saved.items() if k != "value"}
    (tmp_path / "r.json").write_text(json.dumps(edited), encoding="utf-8")
    package = _error(["solve", str(tmp_path / "p.json"), "--budget", "6"])["problems"]
    result = _error(["show", str(tmp_path / "r.json")])["problems"]
    assert [(p["path"], p["rule"]) for p in package] == [("$.id", "required")]
    assert [(p["path"], p["rule"], p["message"]) for p in result] == [
        ("$.value", "required", "missing required field 'value'")
    ]


def test_a_version_from_a_newer_memaudit_is_format_version_and_says_newer(tmp_path, saved):
    doc = json.loads(CHAIN.read_text(encoding="utf-8"))
    doc["memaudit"] = 2
    (tmp_path / "p.json").write_text(json.dumps(doc), encoding="utf-8")
    (tmp_path / "r.json").write_text(json.dumps({**saved, "result_version": 99}), "utf-8")
    code, _, err = run_cli("validate", str(tmp_path / "p.json"))
    assert code == 2
    assert err == (
        f"{tmp_path / 'p.json'}: $.memaudit: written by a newer MemAudit (format version 2); "
        "this one reads format version 1 (got 2) [rule: format-version]\n"
    )
    result = _error(["show", str(tmp_path / "r.json")])["problems"]
    assert [(p["path"], p["rule"]) for p in result] == [("$.result_version", "format-version")]
    assert result[0]["message"].startswith("written by a newer MemAudit (result version 99)")
    # Any bad version is format-version to both, as the package's "memaudit": "1" is.
    for bad in ("1", 0):
        (tmp_path / "r.json").write_text(json.dumps({**saved, "json_output_version": bad}))
        result = _error(["show", str(tmp_path / "r.json")])["problems"]
        assert [(p["path"], p["rule"]) for p in result] == [
            ("$.json_output_version", "format-version")
        ]


def test_the_package_version_error_says_newer_or_older():
    from memaudit_core.package import format_version_problem

    assert format_version_problem(1) is None and format_version_problem(1.0) is None
    assert format_version_problem(3) == (
        "written by a newer MemAudit (format version 3); this one reads format version 1"
    )
    # Once this MemAudit reads version 2, a version-1 file is an older one's.
    assert format_version_problem(1, newest=2) == (
        "written by an older MemAudit (format version 1); this one reads format version 2"
    )
    assert format_version_problem(0).startswith("format versions start at 1")
    for bad in ("1", 1.5, True, [1], None, float("inf")):
        assert format_version_problem(bad).startswith("not a format version"), bad


def _result_rules() -> list[tuple[str, int, str]]:
    """(file, line, rule) of every ``ResultError(path, RULE, ...)`` in memaudit_core whose rule
    is written in the call, a string or a ``RULE_*`` name of memaudit_core.errors."""
    from memaudit_core import errors

    found = []
    for path in sorted(Path(memaudit_core.__file__).parent.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and len(node.args) >= 2):
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if name != "ResultError":
                continue
            rule = node.args[1]
            if isinstance(rule, ast.Constant):
                found.append((path.name, node.lineno, rule.value))
            elif isinstance(rule, ast.Name) and rule.id.startswith("RULE_"):
                found.append((path.name, node.lineno, getattr(errors, rule.id)))
    return found


def test_every_rule_a_result_can_break_is_in_the_one_table_and_kebab_case():
    from memaudit_core.errors import RULES
    from memaudit_core.results import NOT_A_RESULT

    kebab = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
    assert [name for name in RULES if not kebab.fullmatch(name)] == []
    found = _result_rules()
    assert len(found) > 250  # the scan sees the readers' checks (280 at s52)
    assert [f for f in found if f[2] not in RULES] == []
    assert NOT_A_RESULT in RULES


# ------------------------------------------------------------------------- 11. error lines


def test_an_argument_mistake_is_one_line_naming_the_help():
    code, out, err = run_cli("solve", "x.json", "--budget", "-1")
    assert (code, out) == (2, "")
    assert err == (
        "memaudit solve: error: argument --budget: must be a finite number >= 0, got '-1' "
        "(see memaudit solve --help)\n"
    )
    code, _, err = run_cli("bogus")
    assert code == 2 and err.startswith("memaudit: error: argument COMMAND: invalid choice: ")
    assert err.endswith(" (see memaudit --help)\n") and err.count("\n") == 1
    # --json: the same UsageError object as before, with the message and no usage.
    code, out, err = run_cli("solve", "x.json", "--budget", "-1", "--json")
    assert code == 2 and "usage:" not in err
    assert json.loads(out)["error"] == {
        "type": "UsageError",
        "message": "memaudit solve: argument --budget: must be a finite number >= 0, got '-1'",
    }


@pytest.mark.parametrize(
    "argv, line",
    [
        (
            ["score", str(CHAIN), "--budget", "6"],
            "memaudit score: error: give exactly one of --writer NAME, --store ID or "
            "--external EXPORT --format FMT",
        ),
        (
            ["sweep", str(CHAIN), "--budgets", "4,nan", "--writers", "gvt"],
            "memaudit sweep: error: --budgets: values must be finite numbers >= 0, got 'nan'",
        ),
        (
            ["generate"],
            "memaudit generate: error: name a FAMILY (see `memaudit generate --list`)",
        ),
    ],
)
def test_a_mistake_found_after_parsing_names_the_command_as_argparse_does(argv, line):
    code, out, err = run_cli(*argv)
    assert (code, out, err) == (2, "", line + "\n")
