"""QA s48 (new user following the README from a clean clone).

(1) A usage error under ``--json`` piped to ``head`` sometimes ended in two tracebacks
    (argparse's error, then BrokenPipeError from writing the JSON error object) and exit 1:
    argparse runs before the CLI's closed-pipe handler. Expected: exit 2, no traceback.
(4) A seed sweep's header said "500 distinct by content" and its note "only 495 distinct
    optimisation instances": both true, but side by side they read as a contradiction. The
    note now names the header's count and says what each one counts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_utils import run_cli

from memaudit_core.cli import main

REPO = Path(__file__).resolve().parent.parent
CHAIN = REPO / "sample_packages" / "update_chain.json"
USAGE_ERRORS = [
    (["--solver", "bogus"], "argument --solver: invalid choice: 'bogus'"),
    (["--bogus"], "unrecognized arguments: --bogus"),
]


class _ClosedPipe:
    """A stdout whose reader has gone (``| head``): every write raises BrokenPipeError."""

    def __init__(self, fd: int):
        self._fd = fd

    def write(self, _text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")

    def fileno(self) -> int:
        return self._fd


@pytest.mark.parametrize(("extra", "message"), USAGE_ERRORS)
def test_a_usage_error_into_a_closed_pipe_exits_2_with_its_message(
    monkeypatch, capsys, tmp_path, extra, message
):
    argv = ["solve", str(CHAIN), "--budget", "6", "--json", *extra]
    with open(tmp_path / "sink", "w") as sink:
        monkeypatch.setattr(sys, "stdout", _ClosedPipe(sink.fileno()))
        with pytest.raises(SystemExit) as exc:
            main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert f"memaudit solve: error: {message}" in err  # the human message still on stderr


def test_the_real_command_into_a_pipe_already_closed_exits_2_without_a_traceback():
    """As `... --json --solver bogus | head` when head has exited first: a real pipe whose
    read end is closed, so every write fails (Python ignores SIGPIPE) whatever the timing."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "tests")])}
    try:
        proc = subprocess.run(
            [
                sys.executable,
                "-c",
                "import sys; from memaudit_core.cli import main; sys.exit(main())",
                "solve",
                str(CHAIN),
                "--budget",
                "6",
                "--json",
                "--solver",
                "bogus",
            ],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            timeout=120,
            check=False,
        )
    finally:
        os.close(write_end)
    assert "Traceback" not in proc.stderr and "BrokenPipeError" not in proc.stderr
    assert "memaudit solve: error: argument --solver: invalid choice: 'bogus'" in proc.stderr
    assert proc.returncode == 2


def _retitled_copy(tmp_path: Path) -> Path:
    """update_chain.json with another title: another file by content, the same problem."""
    data = json.loads(CHAIN.read_text(encoding="utf-8"))
    data["title"] = "the same chain, retitled"
    copy = tmp_path / "retitled.json"
    copy.write_text(json.dumps(data), encoding="utf-8")
    return copy


#: What the note says of 2 sources that are 2 files by content and 1 optimisation instance.
BOTH_COUNTS = (
    "the 2 sources hold only 1 distinct optimisation instance(s), though 2 are distinct by "
    "content: content also counts ids, texts and meta, an instance only the numbers the "
    "solver sees"
)


def test_a_suite_sweep_note_reconciles_its_count_with_the_header(tmp_path):
    copy = _retitled_copy(tmp_path)
    code, out, err = run_cli("sweep", str(CHAIN), str(copy), "--budgets", "6", "--writers",
                             "gvt", "--out", str(tmp_path / "out"), "--quiet")  # fmt: skip
    assert code == 0, err
    assert out.startswith("2 package(s) (2 distinct by content)")
    assert f"note: {BOTH_COUNTS}" in out


def test_a_library_sweep_note_says_both_counts(tmp_path):
    import memaudit_core as ma

    pkgs = [ma.load_package(str(CHAIN)), ma.load_package(str(_retitled_copy(tmp_path)))]
    res = ma.sweep(pkgs, [6], ["gvt"])
    assert [n for n in res.notes if "distinct optimisation instance" in n][0].startswith(
        BOTH_COUNTS
    )


def test_copies_alone_say_they_are_copies(tmp_path):
    copy = tmp_path / "copy.json"
    copy.write_bytes(CHAIN.read_bytes())
    code, out, err = run_cli("sweep", str(CHAIN), str(copy), "--budgets", "6", "--writers",
                             "gvt", "--quiet")  # fmt: skip
    assert code == 0, err
    assert (
        "note: the 2 sources hold only 1 distinct optimisation instance(s) (copies: 1 distinct "
        "by content); the summary counts every source"
    ) in out
