"""QA s48 review, findings 1, 6 and 7.

- Finding 1: a link whose generated package's seed had 5,000 digits crashed the Generator page
  (``int()``'s digit-limit ValueError in ``canonical_key``), and one of 400 digits crashed
  ``check_seed`` (OverflowError from ``math.isfinite``), in the app and in ``memaudit
  generate``. A seed past what a package file can record is now refused by name.
- Finding 6: for ``--plugin-module`` naming a module that does not exist, the CLI offered
  "rerun with --debug for the module's traceback", which would print only importlib's own
  trace.
- Finding 7: with ``--instance`` unknown, the LongMemEval importer collected one id problem
  more than the cap, handing PackageError MAX_PROBLEMS + 2 problems.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from app_utils import APP, open_app
from cli_utils import run_cli
from streamlit.testing.v1 import AppTest

from memaudit_core.errors import MAX_PROBLEMS, MemAuditError, PackageError
from memaudit_core.importers import longmemeval
from memaudit_ui import sources

GENERATOR = "pages/7_Generator.py"
#: Python's limit on the digits of an int written as text (4,300 unless changed).
DIGIT_LIMIT = sys.get_int_max_str_digits()
#: A seed of 5,000 nines: more digits than any package file can record.
HUGE = "gen:memaudit-small:" + "9" * 5000
#: A seed of 400 nines: past a float's range (about 1.8e308), within the digit limit.
LONG_SEED = 10**400 - 1


# --------------------------------------------------------------------------- finding 1


def test_a_preview_link_with_a_huge_seed_is_named_not_a_crash() -> None:
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.run()
    at.query_params["preview"] = HUGE
    at.switch_page(GENERATOR).run()
    assert not at.exception, [str(e.value)[:300] for e in at.exception]
    said = [w.value.replace("\\", "") for w in at.warning]
    assert len(said) == 1, said
    assert said[0].startswith("ignored preview="), said
    assert f"seed has 5,000 digits; a seed has at most {DIGIT_LIMIT:,}" in said[0], said


def test_a_package_link_with_a_huge_seed_is_named_not_a_crash() -> None:
    at = open_app("app.py", package=HUGE)
    assert not at.exception, [str(e.value)[:300] for e in at.exception]
    errors = [e.value for e in at.error]
    assert any(
        e.startswith("Could not open the package") and "seed has 5,000 digits" in e for e in errors
    ), errors


def test_link_keys_take_any_seed_a_package_can_record() -> None:
    pkg = sources.load_by_key(f"gen:memaudit-small:{LONG_SEED}")
    assert pkg.meta["seed"] == LONG_SEED
    key, _pkg, note = sources.generated_package(f"gen:memaudit-small:{LONG_SEED}")
    assert key == "gen:memaudit-small:" + "9" * 400 and note is None
    # Leading zeros are not digits of the seed: 5,000 of them before a 7 are seed 7.
    assert sources.canonical_key("gen:memaudit-small:" + "0" * 5000 + "7")[0] == (
        "gen:memaudit-small:7"
    )
    with pytest.raises(MemAuditError, match=r"seed has 5,000 digits.*\[rule: seed-digits\]"):
        sources.generated_package(HUGE)


def test_cli_generate_takes_a_seed_past_a_floats_range() -> None:
    rc, out, err = run_cli("generate", "memaudit-small", "--seed", "9" * 400)
    assert rc == 0, err[:500]
    assert json.loads(out)["meta"]["seed"] == LONG_SEED
    rc, _out, err = run_cli("generate", "memaudit-small", "--seed", "9" * 5000)
    assert rc == 2
    assert f"seed has 5,000 digits; a seed has at most {DIGIT_LIMIT:,}" in err, err[-500:]


# --------------------------------------------------------------------------- finding 6

HINT = "rerun with --debug for the module's traceback"


def test_no_traceback_hint_for_a_module_that_does_not_exist(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for module, missing in (("s48_rev1_nosuch", "s48_rev1_nosuch"), ("json.s48_rev1", None)):
        rc, _out, err = run_cli("schema", "--plugin-module", module)
        assert rc == 2
        assert f"cannot find module {missing or module!r} on the Python path" in err, err
        assert "--debug" not in err, err
        rc, _out, err = run_cli("--debug", "schema", "--plugin-module", module)
        assert rc == 2 and "Traceback" not in err, err

    # A module that exists but imports a missing one: its traceback says where, so it is
    # offered, and --debug prints that one only (not the missing module's).
    (tmp_path / "s48_rev1_needs.py").write_text(
        "def helper_s48():\n    import s48_rev1_absent_dep\n\nhelper_s48()\n", "utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    args = ("schema", "--plugin-module", "s48_rev1_needs", "--plugin-module", "s48_rev1_nosuch")
    rc, _out, err = run_cli(*args)
    assert rc == 2 and "2 plugin modules could not be imported" in err, err
    assert err.count(HINT) == 1, err
    rc, _out, err = run_cli("--debug", *args)
    assert rc == 2
    assert err.count("Traceback (most recent call last)") == 1, err
    assert "helper_s48" in err, err


# --------------------------------------------------------------------------- finding 7


def test_unknown_instance_hands_at_most_one_problem_past_the_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    n = MAX_PROBLEMS + 2  # every instance with a number question_id: an id problem each
    path = tmp_path / "numbers.json"
    path.write_text(json.dumps([{"question_id": i} for i in range(n)]), encoding="utf-8")
    handed: list[int] = []

    class Recording(PackageError):
        def __init__(self, source: str, problems) -> None:
            problems = list(problems)
            handed.append(len(problems))
            super().__init__(source, problems)

    monkeypatch.setattr(longmemeval, "PackageError", Recording)
    with pytest.raises(PackageError) as info:
        longmemeval.find_instance(path, "ku_missing")
    # As capped() stops a walk: MAX_PROBLEMS + 1, enough to say that checking stopped.
    assert handed == [MAX_PROBLEMS + 1]
    problems = info.value.problems
    assert [p.rule for p in problems[:1]] == ["known-instance"]
    assert f"among {n} instance(s)" in problems[0].message
    assert [p.path for p in problems[1:-1]] == [
        f"$[{i}].question_id" for i in range(MAX_PROBLEMS - 1)
    ]
    assert problems[-1].rule == "problem-limit"
