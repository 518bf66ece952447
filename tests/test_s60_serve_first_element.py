"""Sixtieth session: the warm-up of ``python -m memaudit_ui.serve`` also spares the first page
Streamlit's once-per-process check for a script run outside ``streamlit run`` (a walk of the
whole call stack, 80-160 ms of the first page after the server starts)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from browser_utils import REPO_ROOT


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_after_warm_up_the_first_element_walks_no_stack() -> None:
    # A fresh interpreter: the check is made once per process, so this test process may have
    # made it already. Every call of Streamlit's stack walk is counted, before and after.
    done = _python(
        """
        import json
        from streamlit import env_util
        from streamlit import delta_generator
        calls = []
        real = env_util.is_repl
        env_util.is_repl = lambda: calls.append(1) or real()
        from memaudit_ui import serve
        serve.warm_up()
        walked_in_warm_up = len(calls)
        delta_generator._maybe_print_use_warning()  # what the first element of a run calls
        print(json.dumps({"warm_up": walked_in_warm_up, "first_element": len(calls)}))
        """
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"warm_up": 0, "first_element": 0}
    # The check's warning is for plain ``python app.py``; nothing is printed in its place.
    assert "streamlit run" not in done.stderr


def test_without_the_skip_the_first_element_walks_the_stack() -> None:
    # The control: the same probe sees the walk when the warm-up's skip is not made, so the
    # test above measures the skip and not a probe that never fires.
    done = _python(
        """
        import json
        from streamlit import env_util
        from streamlit import delta_generator
        calls = []
        real = env_util.is_repl
        env_util.is_repl = lambda: calls.append(1) or real()
        delta_generator._maybe_print_use_warning()
        print(json.dumps({"first_element": len(calls)}))
        """
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"first_element": 1}


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
