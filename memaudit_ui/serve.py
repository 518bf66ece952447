"""The app's server entry point: ``streamlit run app.py`` with the app's modules imported first.

``python -m memaudit_ui.serve [streamlit run options]`` (what ``make run`` starts) is
``streamlit run app.py [options]``, except that before the server starts it imports every
module the app's page scripts import (:func:`app_imports`, read from the scripts themselves) and
runs one small Overview and one HiGHS solve, so that what the core imports lazily is loaded
too. A Streamlit server imports a page's modules only in the first session's first script run,
so without this the first page a user opens after starting the app (a speaker's first click)
waits about 1.5 s longer than every later one (``bench/bench_cold_start.py``). The server
becomes healthy that much later instead, before anyone is looking.

Only imports and one throwaway computation: no Streamlit cache is filled (the first page's own
view is computed, and cached, by its run as usual), so what a page shows is unchanged.
"""

from __future__ import annotations

import ast
import importlib
import logging
import sys
import time
import types
from collections.abc import Sequence
from pathlib import Path

#: The app's folder: ``app.py`` and ``pages/``.
APP_DIR = Path(__file__).resolve().parent.parent
APP_SCRIPT = APP_DIR / "app.py"


def page_scripts(app_dir: Path = APP_DIR) -> list[Path]:
    """``app.py`` and every ``pages/*.py`` of ``app_dir``, the home page first."""
    return [app_dir / "app.py", *sorted((app_dir / "pages").glob("*.py"))]


def app_imports(scripts: Sequence[Path] | None = None) -> list[str]:
    """The modules the page scripts import at their top level, in first-seen order.

    ``from package import name`` lists ``package.name`` as well when that is a module (the
    pages import ``from memaudit_ui import cached``); relative imports and ``__future__`` are
    left out. A script that cannot be read or parsed is skipped: its page shows the error
    when it runs, as it would have without this.

    Examples
    --------
    >>> names = app_imports()
    >>> "memaudit_ui.frame" in names and "streamlit" in names
    True
    """
    names: list[str] = []
    for script in page_scripts() if scripts is None else scripts:
        try:
            tree = ast.parse(Path(script).read_text(encoding="utf-8"), filename=str(script))
        except (OSError, SyntaxError, ValueError):
            continue
        for node in tree.body:
            if isinstance(node, ast.Import):
                found = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                if node.module == "__future__":
                    continue
                found = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            else:
                continue
            names.extend(n for n in found if n not in names)
    return names


def import_app_modules(names: Sequence[str] | None = None) -> list[str]:
    """Import ``names`` (default :func:`app_imports`); returns those that are modules.

    A name that is not a module (``from memaudit_ui.frame import frame`` lists
    ``memaudit_ui.frame.frame``) is skipped; a module that fails to import is left for the page
    that imports it to report, as it would have without this.
    """
    # Streamlit logs a warning for each st.cache_data decorated before its runtime exists
    # (the cache is only looked up, in the runtime's storage, when first called). Streamlit
    # sets its loggers' levels as it creates them, so after it is imported.
    import streamlit.runtime.caching.cache_data_api  # noqa: F401

    cache_log = logging.getLogger("streamlit.runtime.caching.cache_data_api")
    level = cache_log.level
    cache_log.setLevel(logging.ERROR)
    imported = []
    try:
        for name in app_imports() if names is None else names:
            parent = name.rpartition(".")[0]
            if parent and parent in sys.modules and not _is_submodule(name):
                continue
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001 - the page reports it when it imports the module
                continue
            imported.append(name)
    finally:
        cache_log.setLevel(level)
    return imported


def _is_submodule(name: str) -> bool:
    parent, _, attr = name.rpartition(".")
    value = getattr(sys.modules[parent], attr, None)
    return value is None or isinstance(value, types.ModuleType)


def warm_up() -> float:
    """Import the app's modules, run one small Overview and one HiGHS solve, and skip a
    stack walk of Streamlit's first element (:func:`skip_direct_execution_check`); returns the
    seconds it took."""
    started = time.perf_counter()
    import_app_modules()
    from memaudit_core import reports
    from memaudit_core.compiled import compile_package
    from memaudit_core.generators import generate
    from memaudit_core.solvers import solve

    # Loads what the pages' modules import lazily and pays first-call costs on a throwaway
    # package (nothing is cached): the Overview's writers and exact engines, and HiGHS, which
    # a package this small does not need but most others do.
    package = generate("memaudit-small", seed=0)
    reports.overview(package, package.budget, time_limit=5.0)
    solve(compile_package(package), package.budget, "milp", time_limit=5.0)
    skip_direct_execution_check()
    return time.perf_counter() - started


def skip_direct_execution_check() -> bool:
    """Mark Streamlit's once-per-process "run me with ``streamlit run``" check as done; returns
    whether Streamlit still has that check.

    The first element of the first script run makes it, and it walks the whole call stack
    with source lookups (``inspect.stack()`` in ``streamlit.env_util.is_repl``): 80-160 ms
    of the first page after the server starts on the 2-core AMD EPYC VM (sixtieth session).
    Its warning is for a script run with plain ``python``; the server :func:`main` starts is
    ``streamlit run``, so it never applies there. With another Streamlit that no longer has
    the check, nothing is changed.
    """
    from streamlit import delta_generator

    if not hasattr(delta_generator, "_use_warning_has_been_displayed"):
        return False
    delta_generator._use_warning_has_been_displayed = True
    return True


def main(argv: Sequence[str] | None = None) -> int:
    """``streamlit run app.py *argv`` after :func:`warm_up`.

    The server starts whatever the warm-up meets: an error in the app's code is then shown
    by the page that runs it, as under plain ``streamlit run``.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        seconds = warm_up()
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001 - reported by the page that meets it
        print(
            f"MemAudit: warm-up stopped ({type(exc).__name__}: {exc}); starting the server",
            flush=True,
        )
    else:
        print(f"MemAudit: app modules imported in {seconds:.1f} s; starting the server", flush=True)
    from streamlit.web import cli

    return cli.main(args=["run", str(APP_SCRIPT), *args], prog_name="streamlit")


if __name__ == "__main__":
    sys.exit(main())
