"""Saved results read back strictly (QA s43): names outside their registry, unknown keys, an
edited label and task counts the rows contradict are refused, not printed as they are.

Every file is written by the real CLI into a temporary folder; a test edits it with ``json``
and checks that ``ma.read_result`` raises a ResultError at the edited JSON path with the
expected rule, and that ``memaudit show`` exits 2 naming the file, the path and the rule.
Each case read back without complaint (exit 0) before the fix.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_utils import run_cli

import memaudit_core as ma
from memaudit_core.errors import ResultError

REPO = Path(__file__).resolve().parent.parent
UPDATE_CHAIN = str(REPO / "sample_packages" / "update_chain.json")

COMMANDS: dict[str, tuple[str, ...]] = {
    "solve": ("solve", UPDATE_CHAIN, "--budget", "6", "--json"),
    "score": ("score", UPDATE_CHAIN, "--budget", "6", "--writer", "density", "--json"),
    "sweep": (
        "sweep",
        UPDATE_CHAIN,
        "--budgets",
        "0,4,8",
        "--writers",
        "gvt,density",
        "--ablations",
        "no_validity",
        "--json",
        "--quiet",
    ),  # fmt: skip
}


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    out = {}
    for name, argv in COMMANDS.items():
        rc, stdout, stderr = run_cli(*argv)
        assert rc == 0, stderr
        out[name] = json.loads(stdout)
    return out


def _set(path: tuple[Any, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(doc: dict[str, Any]) -> None:
        node = doc
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return edit


def _rename(path: tuple[Any, ...], new: str) -> Callable[[dict[str, Any]], None]:
    def edit(doc: dict[str, Any]) -> None:
        node = doc
        for key in path[:-1]:
            node = node[key]
        node[new] = node.pop(path[-1])

    return edit


# (file, edit, JSON path, rule, words the message must hold: the allowed values where listed)
CASES = {
    "pool": ("solve", _set(("pool",), "weird"), "$.pool", "allowed-value", "full, no_validity"),
    "saturation": (
        "solve",
        _set(("saturation",), "sqrt"),
        "$.saturation",
        "allowed-value",
        "cap1, linear, log1p",
    ),
    "solver": ("solve", _set(("solver",), "gurobi"), "$.solver", "allowed-value", "milp"),
    "engine": (
        "solve",
        _set(("certificate", "checks", 0, "engine"), "cplex"),
        "$.certificate.checks[0].engine",
        "allowed-value",
        "bnb",
    ),
    "label": ("solve", _set(("label",), "incumbent"), "$.label", "inconsistent", "'OPT'"),
    "certified": ("solve", _set(("certified",), False), "$.certified", "inconsistent", "True"),
    "hacked": ("solve", _set(("hacked",), 1), "$.hacked", "known-field", "budget"),
    "writer_kind_blind": (
        "score",
        _set(("writer_kind",), "blind"),
        "$.writer_kind",
        "inconsistent",
        "'oracle'",
    ),
    "writer_kind_other": (
        "score",
        _set(("writer_kind",), "psychic"),
        "$.writer_kind",
        "allowed-value",
        "oracle, blind",
    ),
    "kind_row_typo": (
        "score",
        _set(("kind_rows", 0, "store"), 0.5),
        "$.kind_rows[0].store",
        "known-field",
        "store_value",
    ),
    "nested_opt_key": (
        "score",
        _set(("opt", "certificate", "extra"), True),
        "$.opt.certificate.extra",
        "known-field",
        "checks",
    ),
    "method_kind": (
        "sweep",
        _set(("method_kinds", "gvt"), "blind"),
        "$.method_kinds.gvt",
        "inconsistent",
        "'oracle'",
    ),
    "method_kind_other": (
        "sweep",
        _set(("method_kinds", "gvt"), "robot"),
        "$.method_kinds.gvt",
        "allowed-value",
        "oracle, blind, store, ablation",
    ),
    "n_tasks": ("sweep", _set(("n_tasks",), 5), "$.n_tasks", "inconsistent", "9 tasks"),
    "n_tasks_rows": (
        "sweep",
        # executed 4 of n_tasks 5: an incomplete run (s51: executed 5 of 5 beside
        # complete: false is refused at $.complete first).
        lambda d: d.update(n_tasks=5, executed=4, complete=False),
        "$.n_tasks",
        "inconsistent",
        "9 distinct tasks",
    ),
    "sweep_row_key": (
        "sweep",
        _set(("rows", 2, "hacked"), 1),
        "$.rows[2].hacked",
        "known-field",
        "store_cut",
    ),
    # writer_kind may be absent (files saved before it): misspelt, it was dropped unsaid.
    "optional_typo": (
        "score",
        _rename(("writer_kind",), "writerkind"),
        "$.writerkind",
        "known-field",
        "writer_kind",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_an_edited_result_is_refused_with_its_path_and_rule(
    case: str, saved: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    name, edit, path, rule, words = CASES[case]
    doc = json.loads(json.dumps(saved[name]))
    edit(doc)
    with pytest.raises(ResultError) as info:
        ma.read_result(doc)
    assert (info.value.path, info.value.rule) == (path, rule)
    assert words in str(info.value)

    file = tmp_path / f"{name}.json"
    file.write_text(json.dumps(doc))
    rc, _, stderr = run_cli("show", str(file))
    assert rc == 2
    assert str(file.name) in stderr and path in stderr and f"[rule: {rule}]" in stderr
