"""The docstring examples of every ``memaudit_core`` and ``memaudit_ui`` module run and give
what they show."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import memaudit_core
import memaudit_ui

MODULES = sorted(
    [
        "memaudit_core",  # the package's own docstring: the top-level names
        *(
            name
            for package in (memaudit_core, memaudit_ui)
            for _, name, _ in pkgutil.walk_packages(package.__path__, f"{package.__name__}.")
            if not name.endswith("__main__")
        ),
    ]
)


def test_modules_are_found():
    assert {"memaudit_core.analysis", "memaudit_core.solvers.bnb", "memaudit_ui.state"} <= set(
        MODULES
    )


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    # Plain doctest, as a user runs it (library QA: examples passed only with
    # NORMALIZE_WHITESPACE / ELLIPSIS).
    result = doctest.testmod(module)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"


def test_every_top_level_name_resolves():
    """``memaudit_core.<name>`` for every exported name (each loads its module lazily)."""
    for name in memaudit_core.__all__:
        assert getattr(memaudit_core, name) is not None, name
    with pytest.raises(AttributeError):
        memaudit_core.not_a_name  # noqa: B018


def test_no_top_level_name_shadows_a_submodule():
    submodules = {name for _, name, _ in pkgutil.iter_modules(memaudit_core.__path__)}
    assert not submodules & set(memaudit_core.__all__)
