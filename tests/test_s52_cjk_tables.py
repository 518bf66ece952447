"""QA s51 #5: the CLI's text tables padded their columns by ``len()``, so a row holding a CJK
or full-width id (two terminal columns a character) pushed every later column of that row out
of line (``ユニット３  current_truth  2.3 ...`` under ``unit   kind ...``). Every table is
made by ``cli._table``, which now pads by display width; these tests read each table the way
a terminal draws it and check that every column starts at the same display column on each
row, for the tables a user meets: score's kind and unit tables, ``show`` of a saved score and
of a saved evidence view, a sweep's summary, ``writers`` and audit's family table."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest
from cli_utils import run_cli

from memaudit_core import cli
from memaudit_core.errors import display_width, pad_display

ROOT = Path(__file__).resolve().parents[1]
UPDATE_CHAIN = ROOT / "sample_packages" / "update_chain.json"
CJK_WRITER = "plugin_fixtures.s52_cjk_writers:empty"

#: update_chain's ids renamed as in the QA repro, and its stale kind given a CJK name.
RENAMED = {
    "v_3": "ユニット３",
    "update_3_compound_update": "更新_3_複合",
    "update_1_tombstone": "墓石①",
}
STALE_KIND = "古い値"


def _cells(ch: str) -> int:
    """Terminal columns of one character, written out here rather than imported, so that the
    test does not check the code against itself."""
    if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def _screen(line: str) -> list[str]:
    """``line`` as terminal cells: a wide character, then '' for the column it also covers; a
    combining mark joins the character before it."""
    out: list[str] = []
    for ch in line:
        w = _cells(ch)
        if w == 0 and out:
            out[-1] += ch
        else:
            out.extend([ch] + [""] * (w - 1))
    return out


def _tables(text: str) -> list[tuple[list[int], list[str]]]:
    """Every table in ``text``: (its columns' start and end display columns from the dashes
    under the header, its header and row lines). Rows run to the first blank line or the
    first line that holds no two-space column gap (a footnote)."""
    lines = text.splitlines()
    found = []
    for i, line in enumerate(lines):
        if not line or set(line) - {"-", " "} or "-" not in line or i == 0:
            continue
        spans, col = [], 0
        for dashes in line.split("  "):
            spans.append((col, col + len(dashes)))
            col += len(dashes) + 2
        if len(spans) < 2:
            continue
        rows = [lines[i - 1]]
        for row in lines[i + 1 :]:
            if not row.strip() or row.startswith(("weight: ", "cov: ", "ratio = ", "blind: ")):
                break
            rows.append(row)
        found.append((spans, rows))
    return found


def _assert_aligned(spans: list[tuple[int, int]], rows: list[str]) -> None:
    """Each row, as drawn, is its cells at the dashes' columns, two blank columns apart, and
    as wide as the dashes (every cell is padded, the last one too)."""
    total = spans[-1][1]
    for row in rows:
        screen = _screen(row)
        assert len(screen) == total, f"row {row!r} is {len(screen)} columns, the table {total}"
        for k, (start, end) in enumerate(spans):
            assert screen[start] != "", f"column {k} of {row!r} starts inside a wide character"
            assert end == total or screen[end] != "", f"column {k} of {row!r} is cut"
            if k:
                assert screen[start - 2 : start] == [" ", " "], f"no gap before column {k}: {row!r}"
        assert row == row.rstrip() + " " * (len(row) - len(row.rstrip()))


def _cjk_package(tmp_path: Path) -> Path:
    text = UPDATE_CHAIN.read_text("utf-8")
    for old, new in RENAMED.items():
        text = text.replace(f'"{old}"', json.dumps(new, ensure_ascii=False))
    doc = json.loads(text)
    for unit in doc["units"]:
        if unit["kind"] == "stale":
            unit["kind"] = STALE_KIND
    path = tmp_path / "パッケージ ü.json"
    path.write_text(json.dumps(doc, ensure_ascii=False), "utf-8")
    return path


def _check(text: str, must_hold: list[str], n_tables: int) -> None:
    tables = _tables(text)
    assert len(tables) == n_tables, text
    for spans, rows in tables:
        _assert_aligned(spans, rows)
    drawn = "\n".join(row for _, rows in tables for row in rows)
    for value in must_hold:  # the wide ids are in the tables checked, not only in notes
        assert value in drawn, (value, text)


def test_display_width_counts_terminal_columns():
    assert [display_width(s) for s in ("v_3", "ユニット３", "墓石①", "更新_3_複合")] == [
        3,
        10,
        5,
        11,
    ]
    # Fullwidth forms, an emoji, a combining accent (decomposed é) and Devanagari vowel signs.
    assert [display_width(s) for s in ("ＡＢ１", "😀", "cafe\u0301", "नमस्ते")] == [6, 2, 4, 4]
    assert pad_display("墓石①", 8) == "墓石①   " and pad_display("abc", 5) == "abc".ljust(5)


def test_table_pads_by_display_width_and_ascii_as_before():
    rows = [
        ["ユニット３", "current_truth", "2.3"],
        ["v_0", STALE_KIND, "0.1"],
        ["cafe\u0301", "x", "1"],
    ]
    _assert_aligned(*_tables(cli._table(["unit", "kind", "weight"], rows))[0])
    # ASCII cells: the str.ljust table byte for byte (its output before display widths).
    ascii_rows = [["update_chain", "1", "1"], ["files", "10", "2"]]
    widths = [max(len(r[i]) for r in [["family / files", "sources", "packages"], *ascii_rows])
              for i in range(3)]  # fmt: skip
    want = "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True))
        for r in [["family / files", "sources", "packages"], ["-" * w for w in widths], *ascii_rows]
    )
    assert cli._table(["family / files", "sources", "packages"], ascii_rows) == want


def test_audit_family_table_aligns_wide_names():
    """audit's family table (family names come from registered generators: a wide one)."""
    table = cli._table(
        ["family / files", "sources", "packages", "instances"],
        [["更新チェーン", "1", "1", "1"], ["files", "12", "3", "3"]],
    )
    _check(table, ["更新チェーン"], 1)


def test_score_tables_align_cjk_ids(tmp_path):
    pkg = _cjk_package(tmp_path)
    rc, out, err = run_cli("score", str(pkg), "--budget", "6", "--writer", "density")
    assert rc == 0, err
    # The kind table (a CJK kind) and the missed-units table (a CJK unit covered by a CJK
    # candidate): the QA repro.
    _check(out, [STALE_KIND, "ユニット３", "更新_3_複合"], 2)


def test_show_of_a_saved_score_aligns_cjk_ids(tmp_path):
    pkg = _cjk_package(tmp_path)
    rc, saved, err = run_cli("score", str(pkg), "--budget", "6", "--writer", "density", "--json")
    assert rc == 0, err
    path = tmp_path / "スコア.json"
    path.write_text(saved, "utf-8")
    rc, shown, err = run_cli("show", str(path))
    assert rc == 0, err
    _check(shown, [STALE_KIND, "ユニット３", "更新_3_複合"], 2)


def test_show_of_a_saved_evidence_view_aligns_cjk_ids(tmp_path):
    import memaudit_core as ma

    pkg = ma.load_package(_cjk_package(tmp_path))
    view = ma.evidence_view(pkg, 6, writer="density", focus_unit_id="ユニット３")
    path = tmp_path / "evidence.json"
    path.write_text(json.dumps(view.to_dict(), ensure_ascii=False), "utf-8")
    rc, out, err = run_cli("show", str(path))
    assert rc == 0, err
    # The units table, then the focus unit's candidates.
    _check(out, ["ユニット３", "更新_3_複合"], 2)


@pytest.fixture
def cjk_writer(monkeypatch):
    """The CJK plugin writer's module, registered by the command and removed afterwards (the
    registry and the environment the CLI sets for pool processes are this process's)."""
    from memaudit_core import plugins
    from memaudit_core.writers import all_writers, unregister_writer

    monkeypatch.setenv(plugins.WRITER_MODULES_ENV, "")
    yield CJK_WRITER
    if "空の_ストア" in all_writers():
        unregister_writer("空の_ストア")


def test_sweep_summary_aligns_a_cjk_writer(tmp_path, cjk_writer):
    pkg = _cjk_package(tmp_path)
    argv = ["--writer-module", cjk_writer]
    rc, out, err = run_cli(
        "sweep", str(pkg), "--budgets", "3,6", "--writers", "gvt,空の_ストア", *argv
    )
    assert rc == 0, err
    _check(out, ["空の_ストア"], 1)


def test_writers_list_aligns_a_cjk_writer(cjk_writer):
    rc, out, err = run_cli("writers", "--writer-module", cjk_writer)
    assert rc == 0, err
    _check(out, ["空の_ストア", "テスト: 何も保存しない"], 1)
