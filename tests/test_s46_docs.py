"""QA s46 (new-user walkthrough of README.md): the documentation and help, checked against the
product so that they cannot drift again.

(a) The README's Certification link, with its base query, warned "ignored seeds='3' in the
    link: its family update_chain does not use the seed": every app link the README shows is
    now opened here and must open without a warning, an error or an exception, keeping the
    settings it carries.
(b) The CLI block named placeholder files (PACKAGE.json, big.json, sweep.json, locomo10.json,
    mem0.json, history.db, conv-26.json) without saying so, and ``show sweep.json`` needed a
    file no command made: the block now runs as written on files that ship, which this file
    checks command by command.
(c) ``audit --help`` described ``--workers`` with sweep's words ("`sweep` of one package file
    spreads its budgets instead") and did not state ``--pools``' default (full).
(d) ``show missing.json`` said ``memaudit: error: missing.json: $: no such file`` where every
    other command says ``missing.json: $: no such file or folder [rule: file-exists]``.

Each test failed on the code before the fix.
"""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path
from urllib.parse import parse_qsl

import pytest
from app_utils import open_app
from cli_utils import run_cli

from memaudit_core import cli
from memaudit_ui.state import URL_KEYS

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text(encoding="utf-8")

# ------------------------------------------------------------------ (a) the README's app links

#: A link as the README writes it in backticks: an optional page path, then its query.
LINK = re.compile(r"`(/[A-Za-z_]+)?\?([^`\s]+)`")


def readme_links() -> list[tuple[str, dict[str, str]]]:
    """(page path, parameters) of every app link in the README; ``...`` in a link stands for
    the parameters of the first link, the main page's (the README says so)."""
    found = [(page or "", query) for page, query in LINK.findall(README)]
    base_page, base_query = found[0]
    assert base_page == "" and "..." not in base_query, found[0]
    base = dict(parse_qsl(base_query, strict_parsing=True))
    links = []
    for page, query in found:
        params: dict[str, str] = {}
        for part in query.split("&"):
            if part == "...":
                params.update(base)
            else:
                name, _, value = part.partition("=")
                params[name] = value
        links.append((page, params))
    return links


LINKS = readme_links()


def page_file(page: str) -> str:
    """``/Budget_sweep`` -> ``pages/1_Budget_sweep.py`` (Streamlit drops the number)."""
    (path,) = [p for p in (REPO / "pages").glob("*.py") if p.stem.split("_", 1)[1] == page[1:]]
    return f"pages/{path.name}"


def test_the_readme_shows_a_link_for_the_main_page_and_every_page_with_link_settings():
    pages = {page for page, _ in LINKS}
    assert pages == {
        "",
        "/Evidence_explorer",
        "/Budget_sweep",
        "/Ablations_and_sensitivity",
        "/Certification",
        "/External_stores",  # QA s47: its Y' choice and salience field
        "/Generator",  # QA s48: the package previewed
    }
    assert ("/Certification", "seeds") in {(p, k) for p, params in LINKS for k in params}


@pytest.mark.parametrize("page, params", LINKS, ids=[f"{p or '/'}?{'&'.join(q)}" for p, q in LINKS])
def test_every_readme_link_opens_without_a_warning(page: str, params: dict[str, str]) -> None:
    # The frame's parameters open the app, then the page's join the link and the page opens
    # (it reads them on its first visit), as tests/app_utils.open_linked does.
    frame = {k: v for k, v in params.items() if k in URL_KEYS.values()}
    at = open_app("app.py", 120, **frame)
    if page:
        for name, value in params.items():
            at.query_params[name] = value
        at.switch_page(page_file(page)).run()
    assert [e.value for e in at.exception] == []
    assert [w.value for w in at.warning] == []
    assert [e.value for e in at.error] == []
    # The link's every setting was taken: a refused or dropped one leaves the link.
    kept = {k: at.query_params[k] for k in params if k in at.query_params}
    kept = {k: v[0] if isinstance(v, list) else v for k, v in kept.items()}
    assert kept == params


# ---------------------------------------------------------------- (b) the README's CLI block


def readme_commands() -> list[tuple[list[str], str | None]]:
    """The CLI section's ``bash`` block as (memaudit arguments, file stdout goes to)."""
    section = README[README.index("## CLI\n") :]
    block = section[section.index("```bash\n") + 8 : section.index("\n```\n")]
    commands = []
    for line in block.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        if not words:
            continue
        assert words[0] == ".venv/bin/memaudit", line
        target = None
        if ">" in words:
            at = words.index(">")
            words, target = words[:at], words[at + 1]
        commands.append((words[1:], target))
    return commands


def test_the_readme_cli_block_runs_as_written(tmp_path: Path, monkeypatch) -> None:
    """From a working folder holding the repository's shipped files, as its root does."""
    for shipped in ("sample_packages", "tests"):
        (tmp_path / shipped).symlink_to(REPO / shipped)
    monkeypatch.chdir(tmp_path)
    commands = readme_commands()
    assert len(commands) == 20
    for argv, target in commands:
        code, out, err = run_cli(*argv)
        assert code == 0, (argv, err[-2000:])
        assert out + err, argv  # a result, or (for `-o`) what was written
        if target is not None:
            (tmp_path / target).write_text(out, encoding="utf-8")
    for written in ("sweep.json", "conv-a.json", "conv-a+mem0.json", "small-3.json"):
        assert (tmp_path / written).is_file(), written


def test_the_readme_says_where_the_cli_files_come_from() -> None:
    text = " ".join(README.split())
    placeholders = (
        "PACKAGE.json",
        "big.json",
        "--external mem0.json",
        "history.db --",
        "conv-26.json",
    )
    for name in placeholders:
        assert name not in text
    assert "`snap-research/locomo`" in text
    assert "`xiaowu0162/longmemeval-cleaned`" in text


# ---------------------------------------------------------------------- (c) the --help texts


def option_helps(command: str) -> dict[str, str]:
    sub = cli._subparsers(cli.build_parser())[command]
    return {a.option_strings[-1]: a.help or "" for a in sub._actions if a.option_strings}


def test_audit_help_says_what_audit_spreads_over_its_workers() -> None:
    workers = " ".join(option_helps("audit")["--workers"].split())
    assert "sweep" not in workers
    assert "packages are spread over them, at most one worker per package" in workers
    sweep_workers = " ".join(option_helps("sweep")["--workers"].split())
    assert "a sweep of one package file spreads its budgets instead" in sweep_workers


def test_audit_help_states_the_default_pool() -> None:
    assert option_helps("audit")["--pools"].endswith("(default: full)")
    code, out, _ = run_cli("audit", "--help")
    assert code == 0 and "(default: full)" in " ".join(out.split())


def test_every_option_with_a_default_says_it_in_its_help() -> None:
    """An option whose value, when it is not given, is anything but nothing (None, off, an
    empty list) states that value; so do the time and node limits, whose None is 'no
    limit'."""
    limits = {"--time-limit", "--total-time-limit", "--node-limit", "--max-tasks"}
    for name, sub in cli._subparsers(cli.build_parser()).items():
        for action in sub._actions:
            if not action.option_strings or action.default is argparse.SUPPRESS:
                continue
            option = action.option_strings[-1]
            if action.default in (None, False, []) and option not in limits:
                continue
            if option == "--help":
                continue
            assert "default" in (action.help or ""), (name, option, action.default)


# ------------------------------------------------------------------- (d) show of a bad path


def test_show_of_a_missing_file_says_it_as_every_command_does(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    expected = "missing.json: $: no such file or folder [rule: file-exists]\n"
    for argv in (["validate"], ["solve"], ["score", "--writer", "gvt"]):
        code, out, err = run_cli(argv[0], "missing.json", *argv[1:])
        assert (code, out, err) == (2, "", expected), argv
    code, out, err = run_cli("show", "missing.json")
    assert (code, out, err) == (2, "", expected)


def test_show_of_a_folder_names_it_without_the_error_prefix(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "adir").mkdir()
    code, out, err = run_cli("show", "adir")
    assert (code, out) == (2, "")
    # Not "file-exists" since QA s48: the folder exists; file-type since QA s51 #7, the
    # package loader's rule for a folder.
    assert (
        err == "adir: $: a folder, not a result file: give a result's JSON file [rule: file-type]\n"
    )
