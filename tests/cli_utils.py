"""CLI helper shared by tests (tests/ is on pytest's pythonpath)."""

from __future__ import annotations

import contextlib
import io

from memaudit_core import cli


def run_cli(*argv: str) -> tuple[int, str, str]:
    """``memaudit ARGV`` in this process: (exit status, stdout, stderr); argparse's usage
    errors (SystemExit) give their exit status too."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = cli.main(list(argv))
        except SystemExit as exc:
            rc = exc.code
    return rc, out.getvalue(), err.getvalue()
