"""QA s45 (CLI usage): four small defects of how the command line reports its own mistakes.

1. Under ``--json`` some usage mistakes were ``UsageError`` (argparse's) and others a bare
   ``MemAuditError`` (``--fresh`` without ``--out``, ``generate`` without a family, a
   ``--param`` value out of range), all exit 2.
2. The stdin refusal of suite runs named ``--workers``, which a sweep of ``-`` alone takes.
3. ``generate --list`` gave no upper bound for event_graph's ``n_entities``.
4. random_coverage's max_cover above the units: 13 is refused with its rule, while 12 is its
   default (cut to the units) whether written or not, so that a package's recorded params
   rebuild it.
"""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path

import pytest
from cli_utils import run_cli

from memaudit_core.errors import MemAuditError
from memaudit_core.generators import generate

SAMPLE = str(Path(__file__).resolve().parent.parent / "sample_packages" / "update_chain.json")


def _json_error(argv: list[str]) -> tuple[int, dict]:
    rc, out, _ = run_cli(*argv, "--json")
    return rc, json.loads(out)["error"]


# --------------------------------------------------------------------------- 1: one type


@pytest.mark.parametrize(
    "argv",
    [
        # options that conflict
        ["solve", SAMPLE, "--solver", "enum", "--time-limit", "5"],
        ["sweep", SAMPLE, "--fresh"],
        ["sweep", SAMPLE, "--workers", "2", "--scheduler", "tcp://127.0.0.1:1"],
        # a required argument missing
        ["score", SAMPLE],
        ["generate"],
        ["import", "mem0", "export.json"],
        ["audit"],
        # an option's value refused
        ["sweep", SAMPLE, "--budgets", "2,,4"],
        ["audit", SAMPLE, "--budgets", "x"],
        ["generate", "event_graph", "--param", "n_entities=999999999"],
        ["generate", "memaudit-small", "-o", "package.txt"],
    ],
    ids=lambda argv: " ".join(Path(a).name if a == SAMPLE else a for a in argv),
)
def test_every_usage_mistake_is_a_usage_error_under_json(argv, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # nothing a refused command might write lands in the repo
    rc, error = _json_error(argv)
    assert rc == 2
    assert error["type"] == "UsageError", error
    assert list(tmp_path.iterdir()) == []


def test_argparse_and_command_usage_errors_share_the_type_file_errors_keep_theirs(tmp_path):
    from memaudit_core import UsageError
    from memaudit_core.parallel import check_workers

    assert issubclass(UsageError, MemAuditError)
    parsed = _json_error(["solve", SAMPLE, "--budget", "-1"])
    checked = _json_error(["sweep", SAMPLE, "--no-figures"])
    assert parsed[0] == checked[0] == 2
    assert parsed[1]["type"] == checked[1]["type"] == "UsageError"
    with pytest.raises(UsageError, match="workers must be an integer >= 1"):
        check_workers(0)
    # A file's contents are not a usage mistake.
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    rc, error = _json_error(["solve", str(bad), "--budget", "5"])
    assert rc == 2 and error["type"] == "PackageError"


# --------------------------------------------------------------------------- 2: stdin


def _with_stdin(monkeypatch, data: bytes) -> None:
    class In:
        buffer = io.BytesIO(data)

    monkeypatch.setattr(sys, "stdin", In())


def test_the_stdin_refusal_names_only_what_conflicts(monkeypatch, tmp_path):
    text = Path(SAMPLE).read_bytes()
    # --workers works with a package on stdin: a sweep of - alone spreads its budgets.
    _with_stdin(monkeypatch, text)
    rc, out, err = run_cli(
        "sweep", "-", "--workers", "2", "--budgets", "3,6", "--writers", "gvt", "--quiet", "--json"
    )
    assert rc == 0, err
    assert {r["source"] for r in json.loads(out)["rows"]} == {"<stdin>"}

    out_dir = tmp_path / "out"
    _with_stdin(monkeypatch, text)
    rc, error = _json_error(["sweep", "-", "--out", str(out_dir), "--quiet"])
    assert "--workers" not in error["message"].split("(")[0], error["message"]
    assert "a sweep with --out reads its packages from files" in error["message"]
    assert rc == 2 and error["type"] == "UsageError"
    assert not out_dir.exists()  # refused before the folder was made

    _with_stdin(monkeypatch, text)
    rc, error = _json_error(["audit", "-", "--quiet"])
    assert "--workers" not in error["message"].split("(")[0], error["message"]
    assert rc == 2 and error["message"].startswith("<stdin>: audit reads its packages from files")

    # With several packages --workers does make it a suite run, and is named as such.
    _with_stdin(monkeypatch, text)
    rc, error = _json_error(["sweep", "-", SAMPLE, "--workers", "2", "--quiet"])
    assert rc == 2
    assert "a sweep with --workers 2 over several packages reads" in error["message"]


# --------------------------------------------------------------------------- 3: --list bound


def test_generate_list_gives_the_n_entities_bound_the_checker_enforces():
    rc, out, _ = run_cli("generate", "--list")
    assert rc == 0
    line = next(x for x in out.splitlines() if "--param n_entities=" in x)
    found = re.search(r"\b0 to ([\d,]+)", line)
    assert found, line
    bound = int(found.group(1).replace(",", ""))
    rc, out, _ = run_cli("generate", "--list", "--json")
    family = next(f for f in json.loads(out)["families"] if f["family"] == "event_graph")
    assert f"0 to {found.group(1)}" in family["params"]["n_entities"]["help"]
    # The bound is the checker's: the bound itself is taken, one more refused.
    pkg = generate("event_graph", n_experiences=1, n_entities=bound)
    assert pkg.meta["params"]["n_entities"] == bound
    with pytest.raises(MemAuditError, match="n_entities must be an integer"):
        generate("event_graph", n_experiences=1, n_entities=bound + 1)


# --------------------------------------------------------------------------- 4: max_cover


def test_max_cover_above_the_units_names_its_rule_and_the_recorded_params_rebuild(tmp_path):
    small = ["--param", "units_per_group=2", "--param", "n_groups=3"]  # 6 units
    rc, error = _json_error(["generate", "random_coverage", *small, "--param", "max_cover=13"])
    assert rc == 2 and error["type"] == "UsageError"
    assert "max_cover (13) exceeds the number of units" in error["message"]
    assert "n_groups x units_per_group = 6" in error["message"]
    assert "[rule: cover-range]" in error["message"]

    # Left out, the default still means "12, at most the units".
    out = tmp_path / "small.json"
    rc, _, err = run_cli("generate", "random_coverage", *small, "-o", str(out))
    assert rc == 0, err
    doc = json.loads(out.read_text())
    assert len(doc["units"]) == 6
    assert max(len(c["coverage"]) for c in doc["candidates"]) <= 6
    assert doc["meta"]["params"]["max_cover"] == 12
    # An explicit 12 where it fits is the default's package.
    assert (
        generate("random_coverage", max_cover=12).content_hash()
        == generate("random_coverage").content_hash()
    )
    # The small default package still rebuilds from what its meta records.
    from memaudit_core.curves import family_origin
    from memaudit_core.package import load_package

    assert family_origin(load_package(out)).regenerates is True
    # ... and so does the library, from the params its meta records.
    again = generate("random_coverage", seed=doc["meta"]["seed"], **doc["meta"]["params"])
    assert again.content_hash() == load_package(out).content_hash()
