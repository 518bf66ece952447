"""QA s46, plugin writers:

(a) a sweep whose only writer (a plugin) failed at every budget said "n/a: 2 of 2 lines have
    no defined ratio (2 with no row at that budget)" without its cost unit column (the suite
    path printed a table without a line), and so did ``show`` of its saved --json: with no
    rows its lines had no unit, and no failure (which has the package's unit) matched them;
(b) a plugin writer's name that no command can select (``"mine,v2"``, ``" mine"``) or that
    changed unsaid (``123`` -> ``"123"``, ``""`` -> the module spec) was registered.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_utils import run_cli

from memaudit_core import plugins
from memaudit_core.analysis import SweepResult, sweep
from memaudit_core.errors import MemAuditError
from memaudit_core.generators import generate
from memaudit_core.plugins import PluginWriterError
from memaudit_core.writers import PLUGIN_WRITERS, WRITERS, WriterInfo, register_writer

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "sample_packages" / "update_chain.json"
#: The sample's own unit, read from the file (not from the code under test).
SAMPLE_UNIT = json.loads(SAMPLE.read_text())["cost_unit"]
FAILED = "n/a: 2 of 2 lines have no defined ratio (2 where the writer failed)"

WRITERS_TEXT = """\
import time


def raises(view):
    raise RuntimeError("boom")


def slow(view):
    time.sleep(30)
    return []


def fails_on_chars(view):
    if view.cost_unit == "chars":
        raise RuntimeError("no chars here")
    return []
"""


@pytest.fixture
def badw(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    (tmp_path / "badw_s46.py").write_text(WRITERS_TEXT)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "badw_s46"
    for name in [n for n, info in PLUGIN_WRITERS.items() if "badw_s46" in (info.spec or "")]:
        PLUGIN_WRITERS.pop(name, None)


def _table_lines(out: str, spec: str) -> list[list[str]]:
    return [line.split() for line in out.splitlines() if line.startswith(f"{spec} (blind)")]


def _assert_failed_lines(out: str, spec: str) -> None:
    assert FAILED in out, out
    assert "no row at that budget" not in out, out
    header = next(line for line in out.splitlines() if line.startswith("method"))
    assert "cost unit" in header, out
    # "spec (blind)  budget  unit  n ...": both budgets, the package's unit, n = 0.
    assert [cells[2:5] for cells in _table_lines(out, spec)] == [
        ["3", SAMPLE_UNIT, "0"],
        ["6", SAMPLE_UNIT, "0"],
    ], out


# ------------------------------------------------------------------------------- defect a


@pytest.mark.parametrize("where", [[str(SAMPLE)], ["--family", "update_chain:0"]])
def test_a_writer_failing_everywhere_is_said_failed_with_its_unit(
    badw: str, where: list[str]
) -> None:
    spec = f"{badw}:raises"
    args = ["sweep", *where, "--budgets", "3,6", "--writer-module", spec, "--writers", spec]
    rc, out, err = run_cli(*args)
    assert rc == 2, out + err
    _assert_failed_lines(out, spec)


def test_show_of_the_saved_sweep_says_the_writer_failed(badw: str, tmp_path: Path) -> None:
    spec = f"{badw}:raises"
    rc, out, err = run_cli(
        "sweep", str(SAMPLE), "--budgets", "3,6", "--writer-module", spec, "--writers", spec,
        "--json",
    )  # fmt: skip
    assert rc == 2, err
    saved = tmp_path / "sweep.json"
    saved.write_text(out)
    rc, shown, err = run_cli("show", str(saved))
    assert rc == 0, err
    _assert_failed_lines(shown, spec)
    # A sweep saved before the fix: lines without a unit, failures with theirs.
    doc = json.loads(out)
    for line in doc["summary"]:
        line["cost_unit"] = None
    old = tmp_path / "old.json"
    old.write_text(json.dumps(doc))
    rc, shown, err = run_cli("show", str(old))
    assert rc == 0, err
    assert FAILED in shown and "no row at that budget" not in shown, shown


def test_a_writer_timing_out_everywhere_is_said_failed(badw: str) -> None:
    spec = f"{badw}:slow"
    rc, out, err = run_cli(
        "sweep", str(SAMPLE), "--budgets", "3,6", "--writer-module", spec, "--writers", spec,
        "--writer-timeout", "1",
    )  # fmt: skip
    assert rc == 2, out + err
    _assert_failed_lines(out, spec)


def test_a_writer_failing_on_one_units_packages_has_that_units_lines(badw: str) -> None:
    """The library sweep: the chars package's lines are there (n = 0, failed) beside the
    words package's, and the result reads back."""
    from memaudit_core.suites import line_failures

    words = generate("event_graph", 1, n_experiences=8)
    chars = generate("event_graph", 1, n_experiences=8, cost_rule="chars")
    assert (words.cost_unit, chars.cost_unit) == ("words", "chars")
    spec = f"{badw}:fails_on_chars"
    res = sweep([words, chars], [3, 6], [spec])
    assert {(r.budget, r.cost_unit) for r in res.rows} == {(3.0, "words"), (6.0, "words")}
    lines = {(s.budget, s.cost_unit): (s.n, line_failures(res.errors, s)) for s in res.summary}
    assert lines == {
        (3.0, "words"): (1, 0),
        (6.0, "words"): (1, 0),
        (3.0, "chars"): (0, 1),
        (6.0, "chars"): (0, 1),
    }
    back = SweepResult.from_dict(json.loads(json.dumps(res.to_dict())))
    assert back.summary == res.summary


# ------------------------------------------------------------------------------- defect b

BAD_NAMES = {
    "comma": ('@blind_writer("mine,v2")', "'mine,v2' contains a comma"),
    "number": ("@blind_writer(123)", "must be a non-empty string, got int 123"),
    "empty": ('@blind_writer("")', "must be a non-empty string, got ''"),
    "blank": ('@blind_writer("  ")', "must be a non-empty string, got '  '"),
    "leading": ('@blind_writer(" mine")', "' mine' starts or ends with whitespace"),
    "trailing": ('@oracle_writer("mine ")', "'mine ' starts or ends with whitespace"),
    "oracle_comma": ('@oracle_writer("a,b")', "'a,b' contains a comma"),
}


@pytest.fixture
def badnames(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    text = "from memaudit_core.plugins import blind_writer, oracle_writer\n"
    for fn, (decorator, _) in BAD_NAMES.items():
        text += f"\n\n{decorator}\ndef {fn}(*args):\n    return []\n"
    path = tmp_path / "badnames_s46.py"
    path.write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    before = set(PLUGIN_WRITERS)
    yield path
    for name in set(PLUGIN_WRITERS) - before:
        PLUGIN_WRITERS.pop(name, None)


@pytest.mark.parametrize("fn", list(BAD_NAMES))
def test_a_plugin_name_no_command_can_select_is_refused(badnames: Path, fn: str) -> None:
    spec = f"badnames_s46:{fn}"
    rc, out, err = run_cli(
        "sweep", str(SAMPLE), "--budgets", "3", "--writer-module", spec, "--writers", spec
    )
    assert rc == 2, out + err
    assert f"writer '{spec}' (file {badnames})" in err, err
    assert BAD_NAMES[fn][1] in err, err
    assert "Traceback" not in err
    with pytest.raises(PluginWriterError, match="is refused") as exc:
        plugins.register_module_writer(spec)
    assert exc.value.reason == "load" and exc.value.file == str(badnames)
    assert not any(info.spec == spec for info in PLUGIN_WRITERS.values())


def test_an_entry_point_name_with_a_comma_is_not_registered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dist = tmp_path / "fake_s46-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-s46\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[memaudit.writers]\nmine,v2 = plugin_fixtures.fixture_writers:unnamed\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        plugins.discover(force=True)
        assert "mine,v2" not in PLUGIN_WRITERS
        assert any(
            "'mine,v2' contains a comma" in w and "entry point (fake-s46)" in w
            for w in plugins.DISCOVERY_WARNINGS
        ), plugins.DISCOVERY_WARNINGS
    finally:
        PLUGIN_WRITERS.pop("mine,v2", None)
        plugins.DISCOVERY_WARNINGS.clear()


@pytest.mark.parametrize(
    ("name", "match"),
    [
        ("mine,v2", "contains a comma"),
        (" mine", "starts or ends with whitespace"),
        ("mine\n", "starts or ends with whitespace"),
        ("", "non-empty string"),
        (123, "non-empty string, got int 123"),
    ],
)
def test_register_writer_refuses_the_same_names(name: object, match: str) -> None:
    with pytest.raises(MemAuditError, match=match):
        register_writer(WriterInfo(name, "mine", "oracle", lambda inst, b: ()))  # type: ignore[arg-type]
    assert not dict.__contains__(WRITERS, name)
