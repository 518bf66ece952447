"""The CLI on unusual inputs found by the eighteenth session's bad-input QA pass: package lists
that loop or are not UTF-8, devices given as packages, internal errors under ``--json``, stores
cut to fit inside sweeps, upper-case file suffixes, budget ranges finer than floating point,
edited journals, repeated parameters, generated ids, negative infinity and negative zero.

Each test failed on the code before the fix it names.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from memaudit_core.cli import main
from memaudit_core.generators import generate
from memaudit_core.generators.base import _tag_value
from memaudit_core.package import save_package

REPO = Path(__file__).resolve().parent.parent
UPDATE_CHAIN = str(REPO / "sample_packages" / "update_chain.json")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def tiny_with_store(path: Path) -> Path:
    """Two raw spans costing 8 and 6 and a store holding both (14 > the budget 8 below)."""
    doc = {
        "memaudit": 1,
        "id": "tiny",
        "experiences": [{"id": "s1", "time": 0}, {"id": "s2", "time": 1}],
        "units": [{"id": "u1", "weight": 1}, {"id": "u2", "weight": 2}],
        "candidates": [
            {"id": "s1:raw", "experience": "s1", "type": "raw_span", "cost": 8,
             "coverage": {"u1": 1}},
            {"id": "s2:raw", "experience": "s2", "type": "raw_span", "cost": 6,
             "coverage": {"u2": 1}},
        ],
        "stores": [{"id": "w", "select": ["s1:raw", "s2:raw"]}],
    }  # fmt: skip
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


@pytest.mark.parametrize("command", ["sweep", "audit"])
def test_a_package_list_that_includes_itself_is_a_user_error(capsys, tmp_path, command):
    """It recursed until RecursionError: "internal error", exit 1, empty --json stdout."""
    (tmp_path / "a.txt").write_text("b.txt\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text(f"{UPDATE_CHAIN}\na.txt\n", encoding="utf-8")
    extra = ["--writers", "gvt"] if command == "sweep" else []
    code, out, err = run(capsys, command, str(tmp_path / "a.txt"), "--budgets", "3",
                         *extra, "--quiet", "--json")  # fmt: skip
    assert code == 2, err
    message = json.loads(out)["error"]["message"]
    assert "the package lists include each other" in message
    assert "a.txt -> " in message and "b.txt" in message


def test_a_package_list_that_is_not_utf8_is_a_user_error(capsys, tmp_path):
    listed = tmp_path / "latin1.txt"
    listed.write_bytes(b"pkg.json\n\xff\xfe caf\xe9.json\n")
    code, out, err = run(capsys, "sweep", str(listed), "--budgets", "3", "--writers", "gvt",
                         "--quiet", "--json")  # fmt: skip
    assert code == 2, err
    # Listed with the invalid files (QA s45: it stopped the run alone, with no rule).
    (listed_error,) = json.loads(out)["error"]["errors"]
    (problem,) = listed_error["problems"]
    assert problem["rule"] == "utf-8"
    assert "must be UTF-8 text (byte 9 is not)" in problem["message"]


def test_a_character_device_is_refused_before_it_is_read(capsys):
    """``validate /dev/urandom`` read until memory ran out (MemoryError, exit 1)."""
    code, out, _ = run(capsys, "validate", "/dev/urandom", "--json")
    assert code == 2
    (problem,) = json.loads(out)["error"]["problems"]
    assert problem["rule"] == "regular-file" and "character device" in problem["message"]


def test_an_internal_error_with_json_is_one_error_object_on_stdout(capsys, monkeypatch):
    """stdout stayed empty: scripts parsing it got a JSON decode error."""
    import memaudit_core.cli as cli

    def broken(_args):
        raise ZeroDivisionError("planted")

    monkeypatch.setattr(cli, "cmd_solve", broken)
    code, out, err = run(capsys, "solve", UPDATE_CHAIN, "--budget", "6", "--json")
    assert code == 1 and "internal error" in err
    assert json.loads(out)["error"] == {
        "type": "InternalError",
        "message": "internal error: ZeroDivisionError: planted",
    }


def test_a_sweep_says_which_stores_it_cut_to_fit(capsys, tmp_path):
    """``sweep --stores`` cut a 14-word store to fit budget 8 without a word."""
    path = tiny_with_store(tmp_path / "tiny.json")
    code, out, err = run(capsys, "sweep", str(path), "--stores", "w", "--writers", "gvt",
                         "--budgets", "8,20", "--quiet", "--json")  # fmt: skip
    assert code == 0, err
    result = json.loads(out)
    cut = {r["budget"]: r["store_cut"] for r in result["rows"] if r["method"] == "w"}
    assert cut == {8.0: 1, 20.0: 0}
    assert all(r["store_cut"] == 0 for r in result["rows"] if r["method"] == "gvt")
    # The package names no cost unit, so "units" (app QA s44: the note says its unit).
    assert any("store w costs more than budget 8 units;" in n for n in result["notes"])


def test_a_suite_sweep_keeps_the_cut_count_through_its_journal(capsys, tmp_path):
    path = tiny_with_store(tmp_path / "tiny.json")
    argv = ["sweep", str(path), "--stores", "w", "--writers", "gvt", "--budgets", "8",
            "--out", str(tmp_path / "out"), "--quiet", "--json"]  # fmt: skip
    first = json.loads(run(capsys, *argv)[1])
    again = json.loads(run(capsys, *argv)[1])  # every task read back from the journal
    for result in (first, again):
        (row,) = [r for r in result["rows"] if r["method"] == "w"]
        assert row["store_cut"] == 1
        assert any("store w costs more than budget 8 units;" in n for n in result["notes"])


def test_a_folder_sweep_reads_upper_case_json_suffixes(capsys, tmp_path):
    """TWO.JSON was skipped without a word ("1 package(s)")."""
    folder = tmp_path / "folder"
    folder.mkdir()
    save_package(generate("update_chain"), folder / "one.json")
    save_package(generate("temporal_interval"), folder / "TWO.JSON")
    code, out, err = run(capsys, "sweep", str(folder), "--budgets", "3", "--writers", "gvt",
                         "--quiet", "--json")  # fmt: skip
    assert code == 0, err
    assert {r["package_id"] for r in json.loads(out)["rows"]} == {
        "update_chain",
        "temporal_interval",
    }


def test_a_budget_range_finer_than_floating_point_is_refused(capsys):
    """1e17..1e17+100 step 1 became 7 budgets, all printed as 1e+17, without a word."""
    code, _, err = run(capsys, "sweep", UPDATE_CHAIN, "--budgets",
                       "100000000000000000:100000000000000100:1", "--writers", "gvt", "--quiet")  # fmt: skip
    assert code == 2
    assert "asks for 101 budgets but floating point holds only 7 distinct values" in err
    assert f"use a step of at least {math.ulp(1e17 + 100):.3g}" in err


def test_a_journal_line_edited_to_nan_is_run_again(capsys, tmp_path):
    """A syntactically valid line with NaN was reused: the summary printed "nan"."""
    argv = ["sweep", UPDATE_CHAIN, "--writers", "gvt", "--budgets", "3,6",
            "--out", str(tmp_path / "out"), "--quiet", "--json"]  # fmt: skip
    first = json.loads(run(capsys, *argv)[1])
    journal = tmp_path / "out" / "journal.jsonl"
    lines = journal.read_text(encoding="utf-8").splitlines()
    edited = [i for i, line in enumerate(lines) if '"t": "task"' in line][0]
    record = json.loads(lines[edited])
    record["result"]["ratio"] = math.nan
    lines[edited] = json.dumps(record)
    journal.write_text("\n".join(lines) + "\n", encoding="utf-8")

    again = json.loads(run(capsys, *argv)[1])
    assert [s["mean_ratio"] for s in again["summary"]] == [
        s["mean_ratio"] for s in first["summary"]
    ]
    assert all(not math.isnan(s["mean_ratio"]) for s in again["summary"])
    assert any("1 torn or unreadable journal line(s) dropped" in n for n in again["notes"])


def test_a_parameter_given_twice_with_two_values_is_refused(capsys):
    """The last of two --param values silently won."""
    code, _, err = run(capsys, "generate", "event_graph", "--param", "n_experiences=5",
                       "--param", "n_experiences=7")  # fmt: skip
    assert code == 2
    assert "--param n_experiences given twice ('5' and '7')" in err


@pytest.mark.parametrize(
    ("value", "tag"),
    [(1e-06, "1e-06"), (0.9999999, "0.9999999"), (0.5, "0.5"), (2.0, "2"), (-3, "-3")],
)
def test_generated_ids_name_parameter_values_exactly(value, tag):
    """1e-06 was tagged 1e+06, and 0.9999999 as 1 (another package's id)."""
    assert _tag_value(value) == tag


def test_a_generated_id_keeps_a_negative_exponent(capsys):
    code, out, _ = run(capsys, "generate", "random_coverage", "--param", "cost_low=0.000001",
                       "--param", "n_groups=2")  # fmt: skip
    assert code == 0
    assert json.loads(out)["id"].endswith("-cost_low=1e-06")


@pytest.mark.parametrize("value", ["-inf", "-Infinity", "-nan"])
def test_negative_infinity_gets_the_products_message(capsys, value):
    """argparse said "expected one argument" and printed the usage."""
    with pytest.raises(SystemExit) as info:  # refused by the option's type, while parsing
        main(["solve", UPDATE_CHAIN, "--budget", value])
    err = capsys.readouterr().err
    assert info.value.code == 2
    assert f"--budget: must be a finite number >= 0, got '{value}'" in err
    assert "expected one argument" not in err


def test_negative_zero_budget_is_shown_as_zero(capsys):
    code, out, _ = run(capsys, "solve", UPDATE_CHAIN, "--budget", "-0", "--json")
    assert code == 0 and json.loads(out)["budget"] == 0.0
    assert "-0" not in json.dumps(json.loads(out)["budget"])
    code, out, _ = run(capsys, "sweep", UPDATE_CHAIN, "--budgets", "-0", "--writers", "gvt",
                       "--quiet", "--json")  # fmt: skip
    assert code == 0 and json.loads(out)["budgets"] == [0.0]
    assert "-0.0" not in out


def test_an_empty_store_id_is_refused_not_replaced(capsys, tmp_path):
    """``--store-id ''`` was silently replaced by the default id."""
    export = tmp_path / "mem0.json"
    export.write_text(json.dumps([{"id": "m1", "memory": "Ann adopted a cat"}]), "utf-8")
    code, _, err = run(capsys, "import", "mem0", str(export), "--package", UPDATE_CHAIN,
                       "-o", str(tmp_path / "out.json"), "--store-id", "")  # fmt: skip
    assert code == 2
    assert "the store id must be a non-empty string" in err
    assert not (tmp_path / "out.json").exists()


def test_solve_says_engines_agree_only_when_two_engines_ran(capsys):
    """It said "engines agree" of a MILP that ran alone."""
    padded = str(REPO / "tests" / "fixtures" / "numerics" / "milp_presolve_edge_filler40.json")
    code, out, _ = run(capsys, "solve", padded, "--budget", "4.0304311922688")
    assert code == 0 and "certified: milp=" in out
    assert "no second engine run" in out and "engines agree" not in out
    code, out, _ = run(capsys, "solve", UPDATE_CHAIN, "--budget", "6")
    assert code == 0 and "certified: enum=7.735, bnb=7.735" in out and "engines agree" in out


def test_an_import_summary_has_no_none_for_a_missing_format_version(capsys, tmp_path):
    export = tmp_path / "mem0.json"
    export.write_text(json.dumps([{"id": "m1", "memory": "Ann adopted a cat"}]), "utf-8")
    code, _, err = run(capsys, "import", "mem0", str(export), "--package", UPDATE_CHAIN,
                       "-o", str(tmp_path / "out.json"))  # fmt: skip
    assert code == 0 and "-> " + str(tmp_path / "out.json") + ": update_chain — " in err
    assert "None" not in err


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (b"\x1f\x8b\x08\x00" + b"\x00" * 16, "a gzip file; decompress it first"),
        ('{"memaudit": 1}'.encode("utf-16-le"), "it looks like UTF-16 text; save it as UTF-8"),
        ('{"memaudit": 1}'.encode("utf-16"), "it looks like UTF-16 text"),
    ],
)
def test_a_compressed_or_utf16_package_is_named_as_such(capsys, tmp_path, data, says):
    """They got "not UTF-8 text (byte 1)" and "not valid JSON: Expecting property name"."""
    path = tmp_path / "pkg.json"
    path.write_bytes(data)
    code, out, _ = run(capsys, "validate", str(path), "--json")
    assert code == 2
    (problem,) = json.loads(out)["error"]["problems"]
    assert problem["rule"] == "utf-8" and says in problem["message"]


def test_an_id_that_only_looks_like_a_known_one_is_shown_escaped(capsys, tmp_path):
    """A decomposed é was shown as 'café', the same on screen as the known unit."""
    doc = {"memaudit": 1, "id": "x", "experiences": [{"id": "e", "time": 0}],
           "units": [{"id": "café", "weight": 1}],
           "candidates": [{"id": "c", "experience": "e", "type": "raw_span", "cost": 1,
                           "coverage": {"cafe\u0301": 1}}]}  # fmt: skip
    path = tmp_path / "nfd.json"
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    code, _, err = run(capsys, "validate", str(path))
    assert code == 2 and "(got 'cafe\\u0301')" in err


def test_a_character_device_is_refused_as_an_export_too(capsys):
    code, out, _ = run(capsys, "score", UPDATE_CHAIN, "--budget", "6", "--external",
                       "/dev/urandom", "--format", "mem0", "--json")  # fmt: skip
    assert code == 2
    (problem,) = json.loads(out)["error"]["problems"]
    assert problem["rule"] == "regular-file"
