"""Session 53: the CLI says one thing one way.

1. ``audit --json`` (and ``show --json`` of a saved audit) had no ``verdict``: the text said
   PASS / FAIL / INCOMPLETE / NOTHING CHECKED, the JSON only ``ok`` and ``complete``. The key
   is written by ``AuditReport.to_dict``, checked on read-back like ``ok``, and optional, so
   older files read.
2. ``score`` and ``sweep`` ran ``--solver enum --time-limit 5`` as a limited run, where
   ``solve`` refused it; all three refuse it now, as a mistake in the arguments (``memaudit
   COMMAND: error: ... (see memaudit COMMAND --help)``, exit 2). ``audit`` has no --solver.
3. ``audit --pools full_opt`` ran, yet ``audit --help`` did not list ``full_opt``; the help
   lists the registry the audit checks against.
4. ``score``'s "why this score" was wrapped at 100 characters and ``errors.id_text`` cut ids
   at 80 characters: a line of CJK ids ran to ~160 terminal columns. Both count columns now;
   ASCII text is as before, byte for byte.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import random
import textwrap
from pathlib import Path

import pytest
from cli_utils import run_cli
from test_s48_milpill import _package as ill_conditioned_package

import memaudit_core as ma
from memaudit_core import cli, solvers
from memaudit_core.errors import ResultError, UnknownNameError, cut_repr, display_width, id_text
from memaudit_core.versions import EXPLANATION_WORDING

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_packages"
UPDATE_CHAIN = str(SAMPLES / "update_chain.json")
#: The CLI's own keys beside a result's ``to_dict()`` in its --json object.
CLI_KEYS = {"json_output_version", "memaudit_version", "package_warnings"}


# --------------------------------------------------------------------------- 1. verdict


@pytest.fixture
def bnb_over_reports(monkeypatch):
    """bnb reports 1.25 over its store's F: every check disagrees (FAIL), as in s49's test."""
    real = solvers.run_engine

    def run_engine(name, inst, budget, **kw):
        raw, secs = real(name, inst, budget, **kw)
        if name == "bnb":
            raw = dataclasses.replace(raw, value=raw.value + 1.25, bound=raw.bound + 1.25)
        return raw, secs

    monkeypatch.setattr(solvers, "run_engine", run_engine)


def _audit_args(verdict: str, tmp_path: Path, request) -> tuple[list[str], int]:
    """The audit arguments that give ``verdict``, and its exit status."""
    if verdict == "PASS":
        return [UPDATE_CHAIN, "--budgets", "3,6"], 0
    if verdict == "FAIL":
        request.getfixturevalue("bnb_over_reports")
        return [UPDATE_CHAIN, "--budgets", "3,6"], 1
    if verdict == "INCOMPLETE":
        out = tmp_path / "out"
        return [UPDATE_CHAIN, "--budgets", "2,4,6", "--out", str(out), "--max-tasks", "1"], 3
    path = tmp_path / "ill.json"  # every check unproven or skipped
    path.write_text(json.dumps(ill_conditioned_package()))
    return [str(path), "--budgets", "1000000"], 1


@pytest.mark.parametrize("verdict", ["PASS", "FAIL", "INCOMPLETE", "NOTHING CHECKED"])
def test_audit_json_and_show_json_say_the_texts_verdict(verdict, tmp_path, request):
    args, code = _audit_args(verdict, tmp_path, request)
    rc, text, err = run_cli("audit", *args, "--quiet")
    assert rc == code, err
    said = text.split(":", 1)[0]  # "PASS", or "PASS (1 unproven)": the headline's word(s)
    assert said.split(" (")[0] == verdict, text
    rc, out, err = run_cli("audit", *args, "--quiet", "--json")
    assert rc == code, err
    data = json.loads(out)
    assert data["verdict"] == verdict
    saved = tmp_path / "audit.json"
    saved.write_text(out)
    rc, shown, err = run_cli("show", str(saved), "--json")
    assert rc == code, err
    assert json.loads(shown)["verdict"] == verdict
    # Read back equal to what was written, the key included; and without it (a file saved
    # before s53) equal too.
    rep = ma.read_result(saved)
    assert rep.verdict == verdict
    again = json.loads(json.dumps(cli._json_safe(rep.to_dict())))
    assert again == {k: v for k, v in data.items() if k not in CLI_KEYS}
    old = {k: v for k, v in data.items() if k != "verdict"}
    assert ma.read_result(old) == rep


def test_an_edited_verdict_is_refused(tmp_path):
    rc, out, err = run_cli("audit", UPDATE_CHAIN, "--budgets", "3,6", "--quiet", "--json")
    assert rc == 0, err
    data = json.loads(out)
    assert data["verdict"] == "PASS"
    for value, rule in (("FAIL", "inconsistent"), ("pass", "inconsistent"), (True, "type")):
        with pytest.raises(ResultError) as info:
            ma.read_result({**data, "verdict": value})
        assert (info.value.path, info.value.rule) == ("$.verdict", rule)
    # A version-1 audit did not write it (as it did not write enum_time_s).
    old = {k: v for k, v in data.items() if k != "enum_time_s"}
    with pytest.raises(ResultError) as info:
        ma.read_result({**old, "result_version": 1})
    assert "$.verdict, a key written since version 2" in str(info.value)


# ------------------------------------------------------------- 2. enum with a time limit


@pytest.mark.parametrize(
    ("command", "argv"),
    [
        ("solve", [UPDATE_CHAIN, "--budget", "6"]),
        ("score", [UPDATE_CHAIN, "--budget", "6", "--writer", "density"]),
        ("score", [str(SAMPLES / "travel-assistant.json"), "--store", "raw-logger"]),
        ("sweep", [UPDATE_CHAIN, "--writers", "density"]),
        ("sweep", ["--family", "update_chain", "--seeds", "0-1", "--writers", "density"]),
    ],
)
@pytest.mark.parametrize("solver", ["enum", "brute"])
def test_an_exhaustive_solver_with_a_time_limit_is_refused_alike(command, argv, solver, tmp_path,
                                                                 monkeypatch):  # fmt: skip
    monkeypatch.chdir(tmp_path)  # a refused sweep writes nothing, here either
    rc, out, err = run_cli(command, *argv, "--solver", solver, "--time-limit", "5")
    assert (rc, out) == (2, "")
    assert err == (
        f"memaudit {command}: error: --solver {solver} visits every store and takes no "
        f"--time-limit (it finishes or refuses the package); use bnb, milp or auto for a "
        f"limited run (see memaudit {command} --help)\n"
    )
    rc, out, _ = run_cli(command, *argv, "--solver", solver, "--time-limit", "5", "--json")
    error = json.loads(out)["error"]
    assert rc == 2 and error["type"] == "UsageError"
    assert error["message"].endswith(f"(see memaudit {command} --help)")
    assert list(tmp_path.iterdir()) == []


def test_sweep_refuses_an_exhaustive_solver_with_a_total_time_limit_and_takes_it_alone():
    rc, _, err = run_cli(
        "sweep", UPDATE_CHAIN, "--writers", "density", "--solver", "enum",
        "--total-time-limit", "5", "--time-limit", "1",
    )  # fmt: skip
    assert rc == 2
    assert "takes no --time-limit or --total-time-limit" in err, err
    # Without a limit the exhaustive engines still run in every command.
    for argv in (
        ["score", UPDATE_CHAIN, "--budget", "6", "--writer", "density"],
        ["sweep", UPDATE_CHAIN, "--writers", "density", "--budgets", "6", "--quiet"],
    ):
        rc, _, err = run_cli(*argv, "--solver", "enum")
        assert rc == 0, err


# ------------------------------------------------------------------ 3. audit --pools help


def _pools_help() -> str:
    sub = cli._subparsers(cli.build_parser())["audit"]
    [action] = [a for a in sub._actions if "--pools" in a.option_strings]
    return " ".join((action.help or "").split())


def _listed(said: str) -> list[str]:
    return said.split("candidate pools: ", 1)[1].split("; ", 1)[0].split(", ")


def test_audit_pools_help_lists_exactly_the_names_the_audit_takes():
    from memaudit_core.audit import _check_pools
    from memaudit_core.compiled import POOLS

    listed = _listed(_pools_help())
    takes = [*POOLS, *(f"{pool}_opt" for pool in POOLS)]
    assert sorted(listed) == sorted(takes), listed
    for name in listed:
        assert _check_pools([name]) == (name.removesuffix("_opt"),)
    rc, _, err = run_cli("audit", UPDATE_CHAIN, "--budgets", "6", "--pools", "full_opt", "--quiet")
    assert rc == 0, err


def test_audit_pools_help_is_built_from_the_registry_the_audit_checks(monkeypatch):
    from memaudit_core import analysis
    from memaudit_core.audit import _check_pools

    monkeypatch.setitem(analysis.AUDIT_POOL_NAMES, "validity_free", "no_validity")
    assert "validity_free" in _listed(_pools_help())
    assert _check_pools(["validity_free"]) == ("no_validity",)
    monkeypatch.delitem(analysis.AUDIT_POOL_NAMES, "full_opt")
    assert "full_opt" not in _listed(_pools_help())
    with pytest.raises(UnknownNameError, match="unknown pool 'full_opt'"):
        _check_pools(["full_opt"])


# ------------------------------------------------------- 4. columns, not characters


def _renamed_package(tmp_path: Path, name: str, new_id) -> Path:
    """update_chain with every candidate and unit id renamed ``new_id(i, old)``."""
    text = Path(UPDATE_CHAIN).read_text("utf-8")
    doc = json.loads(text)
    ids = [c["id"] for c in doc["candidates"]] + [u["id"] for u in doc["units"]]
    for i, old in enumerate(sorted(ids, key=len, reverse=True)):
        text = text.replace(f'"{old}"', json.dumps(new_id(i, old), ensure_ascii=False))
    path = tmp_path / name
    path.write_text(text, "utf-8")
    return path


def _why(out: str) -> list[str]:
    return out[out.index("\nwhy this score\n") :].splitlines()[2:]


def test_why_this_score_wraps_at_100_columns(tmp_path):
    # 17 to 18 characters, 33 to 35 columns an id: never cut, several to a line.
    pkg = _renamed_package(
        tmp_path, "cjk.json", lambda i, old: f"記憶単位記憶単位記憶単位{i}_長い識別子"
    )
    rc, out, err = run_cli("score", str(pkg), "--budget", "6", "--writer", "density")
    assert rc == 0, err
    lines = _why(out)
    assert max(display_width(line) for line in lines) <= 100, out
    # The same words as the view's paragraphs (nothing cut or lost by the wrapping), on as
    # few lines as the columns allow: no line could have taken the next line's first word.
    view = ma.compare_view(ma.load_package(pkg), 6, writer="density")
    paragraphs = "\n".join(lines).split("\n\n")
    assert [" ".join(p.split()) for p in paragraphs] == list(view.explanation)
    for para in paragraphs:
        rows = para.split("\n")
        for row, after in zip(rows, rows[1:], strict=False):
            assert display_width(row + " " + after.split(" ")[0]) > 100, (row, after)


def test_fill_display_is_textwrap_fill_on_ascii_and_the_ascii_why_text_is_unchanged():
    from memaudit_core.errors import _DisplayWrapper, fill_display

    rng = random.Random(53)
    words = ["a", "bb", "memory", "x" * 30, "y" * 120, "(ratio", "0.730).", "-", "--", "a-b-c"]
    for _ in range(400):
        text = "".join(
            rng.choice(words) + rng.choice([" ", " ", "  ", "\n", "\t", " - "]) for _ in range(40)
        )
        for width in (7, 40, 100):
            want = textwrap.fill(text, width, break_long_words=False, break_on_hyphens=False)
            assert fill_display(text, width) == want, (text, width)
            # The column-counting wrapper, which wraps any non-ASCII text, wraps ASCII as
            # textwrap does (fill_display hands ASCII to textwrap itself).
            assert "\n".join(_DisplayWrapper(width).wrap(text)) == want, (text, width)
    # score's paragraphs on the ASCII samples: wrapped as textwrap wrapped them.
    for name, budget, writer in (("update_chain", 6, "density"), ("travel-assistant", 40, "gvt")):
        path = SAMPLES / f"{name}.json"
        rc, out, err = run_cli("score", str(path), "--budget", str(budget), "--writer", writer)
        assert rc == 0, err
        view = ma.compare_view(ma.load_package(path), budget, writer=writer)
        want = "\n\n".join(
            textwrap.fill(p, 100, break_long_words=False, break_on_hyphens=False)
            for p in view.explanation
        )
        assert "\n".join(_why(out)) == want


def test_id_text_cuts_at_80_columns_and_ascii_as_before():
    assert id_text("記" * 40) == "記" * 40  # 80 columns
    long = "記" * 41  # 41 characters, 82 columns
    shown = id_text(long)
    assert shown == repr("記" * 36) + "... (41 characters)"
    assert display_width(shown.split("...")[0]) <= 74  # 72 columns and the quotes
    assert id_text("x記" * 30) == repr("x記" * 24) + "... (60 characters)"
    # ASCII without escapes: as cut_repr always cut it.
    for value in ("x" * 80, "x" * 81, "c2 ", "a, b", "x" * 300):
        plain = value.isprintable() and value == value.strip() and ", " not in value
        want = value if len(value) <= 80 and plain else cut_repr(value, 80)
        assert id_text(value) == want
    # With escapes, cut by what is printed (s56): 18 times 'a\nb' is 72 columns quoted, where
    # 72 characters of the id printed as 96.
    assert id_text("a\nb" * 30) == repr("a\nb" * 18) + "... (90 characters)"
    assert id_text("y" * 150, 200) == "y" * 150


def test_a_compare_view_cuts_wide_ids_by_columns_and_older_views_still_read(tmp_path):
    # 43 characters, 84 columns: named whole by the explanation of wording 1, cut now.
    pkg = _renamed_package(tmp_path, "wide.json", lambda i, old: f"記憶{i:02d}" + "識別子" * 13)
    view = ma.compare_view(ma.load_package(pkg), 6, writer="density")
    doc = json.loads(json.dumps(view.to_dict()))
    assert doc["explanation_wording"] == EXPLANATION_WORDING >= 2
    units = [r["unit_id"] for r in doc["unit_rows"] if r["missed"]]
    assert units and all(len(u) == 43 and display_width(u) == 84 for u in units)
    cut = [id_text(u) for u in units]
    assert all(c.endswith("... (43 characters)") for c in cut)
    assert any(c in p for c in cut for p in doc["explanation"])
    assert not any(u in p for u in units for p in doc["explanation"])
    assert ma.read_result(doc) == view
    # As a view of wording 1 said it (the whole id): it reads, held to its headline; under
    # today's wording the same text is refused.
    before = copy.deepcopy(doc)
    for c, u in zip(cut, units, strict=True):
        before["explanation"] = [p.replace(c, u) for p in before["explanation"]]
    assert before["explanation"] != doc["explanation"]
    assert ma.read_result({**before, "explanation_wording": 1}).explanation == tuple(
        before["explanation"]
    )
    with pytest.raises(ResultError) as info:
        ma.read_result(before)
    assert info.value.path.startswith("$.explanation[")
