"""Fifty-eighth session: ``make run`` starts the app with ``python -m memaudit_ui.serve``, which
imports the page scripts' modules (and loads HiGHS) before the server starts, so that the first
page opened does not wait for them."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from browser_utils import REPO_ROOT, wait_idle

from memaudit_ui import serve

PAGE_MODULES = [
    "streamlit",
    "pandas",
    "memaudit_ui.cached",
    "memaudit_ui.figures",
    "memaudit_ui.frame",
    "memaudit_ui.render",
    "memaudit_core.union",
    "memaudit_core.generators",
]


def _python(code: str) -> subprocess.CompletedProcess:
    """``code`` in a fresh interpreter (nothing imported yet), from the repository root."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_app_imports_lists_top_level_absolute_imports_in_order(tmp_path: Path) -> None:
    (tmp_path / "pages").mkdir()
    (tmp_path / "app.py").write_text(
        "from __future__ import annotations\n"
        "import math, json as js\n"
        "from memaudit_ui import cached\n"
        "from . import sibling\n"
        "def later():\n"
        "    import inside_a_function\n"
    )
    (tmp_path / "pages" / "2_b.py").write_text("import zlib\nimport math\n")
    (tmp_path / "pages" / "1_a.py").write_text("from memaudit_core.solvers import solve\n")
    (tmp_path / "pages" / "notes.txt").write_text("import not_python\n")

    names = serve.app_imports(serve.page_scripts(tmp_path))

    assert names == [
        "math",
        "json",
        "memaudit_ui",
        "memaudit_ui.cached",
        "memaudit_core.solvers",
        "memaudit_core.solvers.solve",
        "zlib",
    ]


def test_page_scripts_are_the_home_page_then_the_pages() -> None:
    scripts = serve.page_scripts()
    assert scripts[0] == REPO_ROOT / "app.py"
    assert scripts[1:] == sorted((REPO_ROOT / "pages").glob("*.py"))
    assert len(scripts) == 8


def test_import_app_modules_imports_the_pages_modules_quietly() -> None:
    done = _python(
        f"""
        import json, sys
        from memaudit_ui import serve
        before = [m in sys.modules for m in {PAGE_MODULES!r}]
        imported = serve.import_app_modules()
        print(json.dumps({{
            "before": before,
            "after": [m in sys.modules for m in {PAGE_MODULES!r}],
            "imported": imported,
        }}))
        """
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    # serve itself imports none of them; import_app_modules imports every one.
    assert result["before"] == [False] * len(PAGE_MODULES)
    assert result["after"] == [True] * len(PAGE_MODULES)
    assert set(PAGE_MODULES) <= set(result["imported"])
    # Names of functions and constants (``from memaudit_ui.frame import frame``) are not
    # modules, and are not reported as imported.
    assert "memaudit_ui.frame.frame" not in result["imported"]
    assert "memaudit_core.analysis.CUT_TO_FIT" not in result["imported"]
    # st.cache_data decorated before Streamlit's runtime exists logs a warning per function.
    assert "No runtime found" not in done.stderr


def test_warm_up_loads_highspy_which_the_pages_import_lazily() -> None:
    done = _python(
        """
        import sys
        from memaudit_ui import serve
        serve.import_app_modules()
        print("highspy" in sys.modules)
        serve.warm_up()
        print("highspy" in sys.modules)
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True"]


def test_make_run_starts_the_app_through_serve() -> None:
    done = subprocess.run(
        ["make", "-n", "run"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "-m memaudit_ui.serve" in done.stdout
    assert "streamlit run" not in done.stdout


def test_the_served_app_opens_its_home_page(streamlit_server, browser) -> None:
    """The session's server is started as ``make run`` starts it; its first page renders."""
    log = (REPO_ROOT / "test-output" / "streamlit-server.log").read_text()
    assert "MemAudit: app modules imported in" in log
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        page.goto(streamlit_server + "/")
        wait_idle(page, 120_000)
        assert page.locator("h1").first.inner_text().startswith("Overview")
        assert page.locator("[data-testid=stException]").count() == 0
    finally:
        context.close()


def test_a_script_that_does_not_parse_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "pages").mkdir()
    (tmp_path / "app.py").write_text("import zlib\n")
    (tmp_path / "pages" / "1_broken.py").write_text("import json\ndef half(:\n")
    (tmp_path / "pages" / "2_fine.py").write_text("import math\n")
    assert serve.app_imports(serve.page_scripts(tmp_path)) == ["zlib", "math"]


def test_the_server_starts_when_the_warm_up_fails(monkeypatch, capsys) -> None:
    """An error in the app's code is for its page to show (as under plain ``streamlit run``),
    not a reason to refuse to start."""
    from streamlit.web import cli

    started = []

    def broken() -> float:
        raise ValueError("a bug in a page's module")

    def fake_cli_main(args, prog_name):
        started.append((args, prog_name))
        return 0

    monkeypatch.setattr(serve, "warm_up", broken)
    monkeypatch.setattr(cli, "main", fake_cli_main)
    assert serve.main(["--server.port", "8999"]) == 0
    assert started == [(["run", str(REPO_ROOT / "app.py"), "--server.port", "8999"], "streamlit")]
    out = capsys.readouterr().out
    assert "warm-up stopped (ValueError: a bug in a page's module); starting the server" in out


# Sixtieth session: the warm-up also spares the first page Streamlit's once-per-process check
# for a script run outside ``streamlit run`` (a walk of the whole call stack, 80-160 ms of the
# first page after the server starts).


def _stack_walks(before_first_element: str) -> dict:
    """Streamlit's stack walks (``env_util.is_repl`` calls) in a fresh interpreter, during
    ``before_first_element`` and then in what the first element of a run calls, and whether
    the check's warning (for a script not run by ``streamlit run``) was printed. Fresh: the
    check is made once per process, and this test process may have made it already."""
    done = _python(
        f"""
        import json
        from streamlit import delta_generator, env_util
        calls = []
        real = env_util.is_repl
        env_util.is_repl = lambda: calls.append(1) or real()
        {before_first_element}
        before = len(calls)
        delta_generator._maybe_print_use_warning()
        print(json.dumps({{"before": before, "first_element": len(calls) - before}}))
        """
    )
    assert done.returncode == 0, done.stderr
    return {
        **json.loads(done.stdout.strip().splitlines()[-1]),
        "warned": "streamlit run" in done.stderr,
    }


def test_after_warm_up_the_first_element_walks_no_stack() -> None:
    found = _stack_walks("from memaudit_ui import serve; serve.warm_up()")
    assert found == {"before": 0, "first_element": 0, "warned": False}


def test_without_the_warm_up_the_first_element_walks_the_stack() -> None:
    # The control: the same probe sees the walk without the warm-up, so the test above
    # measures the skip and not a probe that never fires.
    # (``python -c`` looks like a REPL to the check, hence its warning.)
    assert _stack_walks("pass") == {"before": 0, "first_element": 1, "warned": True}


def test_the_skip_reports_whether_streamlit_has_the_check() -> None:
    done = _python(
        """
        from memaudit_ui import serve
        from streamlit import delta_generator
        print(serve.skip_direct_execution_check(), delta_generator._use_warning_has_been_displayed)
        del delta_generator._use_warning_has_been_displayed
        print(serve.skip_direct_execution_check())
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True", "False"]
