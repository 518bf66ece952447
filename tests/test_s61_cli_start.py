"""The CLI's parser is built without numpy, scipy or HiGHS: ``memaudit --help``, ``--version``
and a usage error answer in about 0.1 s instead of 0.4 s (sixty-first session: the parser
imported the solvers for ``--solver``'s choices and the analysis module for the ablation
names), and the names it offers are the registries' own. ``memaudit validate`` reads a
package without scipy (0.45 s -> 0.2 s): the budget's feasibility rule has its own module."""

from __future__ import annotations

import subprocess
import sys

from memaudit_core import analysis, solvers, specs
from memaudit_core.cli import build_parser
from memaudit_core.compiled import POOLS

HEAVY = ("numpy", "scipy", "highspy", "pandas", "memaudit_core.solvers", "memaudit_core.analysis")


def _loaded_after(code: str, heavy: tuple[str, ...] = HEAVY) -> list[str]:
    probe = (
        "import sys\n"
        f"{code}\n"
        f"heavy = {heavy!r}\n"
        "print(*sorted({m.split('.')[0] if m.split('.')[0] != 'memaudit_core' else m "
        "for m in sys.modules if m in heavy or m.split('.')[0] in heavy}))\n"
    )
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return run.stdout.split()


def test_building_the_parser_loads_no_solver_numpy_or_scipy() -> None:
    assert _loaded_after("from memaudit_core.cli import build_parser; build_parser()") == []


def test_help_version_and_a_usage_error_load_none_of_them() -> None:
    for argv in (
        ["--help"],
        ["--version"],
        ["sweep", "--help"],
        ["solve", "x.json", "--budget", "-1"],
    ):
        code = (
            "from memaudit_core.cli import main\n"
            "import contextlib, io\n"
            "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
            "    try:\n"
            f"        main({argv!r})\n"
            "    except SystemExit:\n"
            "        pass\n"
        )
        assert _loaded_after(code) == [], argv


def test_the_light_names_are_the_registries() -> None:
    assert specs.POOL_NAMES == tuple(POOLS)
    assert solvers.SOLVER_CHOICES is specs.SOLVER_CHOICES
    assert (
        analysis.ABLATIONS
        is specs.ABLATIONS
        == {f"{pool}_opt": pool for pool in POOLS if pool != "full"}
    )
    assert analysis.AUDIT_POOL_NAMES is specs.AUDIT_POOL_NAMES
    assert set(specs.AUDIT_POOL_NAMES.values()) == set(POOLS)


def test_the_parser_offers_the_light_names() -> None:
    sub = build_parser()._subparsers._group_actions[0].choices
    solve_solver = next(a for a in sub["solve"]._actions if a.dest == "solver")
    assert tuple(solve_solver.choices) == specs.SOLVER_CHOICES
    ablations = next(a for a in sub["sweep"]._actions if a.dest == "ablations")
    assert all(name in ablations.help for name in [*specs.ABLATIONS, *specs.ABLATIONS.values()])


def test_validating_a_package_loads_no_scipy_or_solver(tmp_path) -> None:
    from pathlib import Path

    sample = Path(__file__).resolve().parent.parent / "sample_packages" / "update_chain.json"
    code = (
        "from memaudit_core.cli import main\n"
        "import contextlib, io\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        f"    assert main(['validate', {str(sample)!r}]) == 0\n"
        "assert 'valid package' in out.getvalue()\n"
    )
    assert _loaded_after(code, ("scipy", "highspy", "memaudit_core.compiled", *HEAVY[-2:])) == []


def test_the_feasibility_rule_is_one_object_wherever_it_is_imported() -> None:
    from memaudit_core import compiled, feasibility

    for name in ("BUDGET_RTOL", "SEARCH_SLACK_ULPS", "budget_with_tolerance", "fits_limit"):
        assert getattr(compiled, name) is getattr(feasibility, name), name
    assert compiled.search_limit is feasibility.search_limit
