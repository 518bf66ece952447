"""The docstring examples of every ``memaudit_core`` module run and give what they show."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import memaudit_core

MODULES = sorted(
    name
    for _, name, _ in pkgutil.walk_packages(memaudit_core.__path__, "memaudit_core.")
    if not name.endswith("__main__")
)


def test_modules_are_found():
    assert {"memaudit_core.analysis", "memaudit_core.solvers.bnb"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
