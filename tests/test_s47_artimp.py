"""QA s47 (importers): what an artifact package holds but does not read is named, a zip
uploaded as a package is refused under the rule of a wrong kind of file, and a ``.db`` history
that is neither SQLite nor JSON says so.

1. queries.jsonl saved as query.jsonl (or Queries.JSONL, queries.json) imported with exit 0
   and no queries, and a zip's notes.txt was skipped without a word.
2. A valid artifact zip uploaded in the sidebar was refused under [rule: utf-8] (since s56 the
   sidebar reads it as an artifact package: tests/test_s56_fixes.py).
3. A garbage h.db given as --history was "not valid JSON" [rule: json-syntax].
"""

from __future__ import annotations

import io
import json
import shutil
import zipfile
from pathlib import Path

import pytest
from cli_utils import run_cli

from memaudit_core.errors import PackageError
from memaudit_core.package import loads_package

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures" / "importers"
ARTIFACT = FIXTURES / "artifact_pkg"
#: The fixture's query count, read from the file itself (not from the importer).
QUERY_COUNT = sum(1 for line in (ARTIFACT / "queries.jsonl").read_text().splitlines() if line)


def _folder(tmp_path: Path, rename: dict[str, str], extra: dict[str, bytes] | None = None) -> Path:
    folder = tmp_path / "pkg"
    shutil.copytree(ARTIFACT, folder)
    for old, new in rename.items():
        (folder / old).rename(folder / new)
    for name, data in (extra or {}).items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    return folder


def _zip(tmp_path: Path, folder: Path) -> Path:
    out = tmp_path / "pkg.zip"
    with zipfile.ZipFile(out, "w") as zf:
        for f in sorted(folder.rglob("*")):
            if f.is_file():
                zf.write(f, f.relative_to(folder).as_posix())
    return out


@pytest.mark.parametrize("container", ["folder", "zip"])
@pytest.mark.parametrize("name", ["query.jsonl", "Queries.JSONL", "queries.json"])
def test_a_misnamed_queries_file_is_an_error_not_zero_queries(tmp_path, container, name):
    folder = _folder(tmp_path, {"queries.jsonl": name})
    source = folder if container == "folder" else _zip(tmp_path, folder)
    out = tmp_path / "out.json"
    rc, _out, err = run_cli("import", "artifact", str(source), "-o", str(out))
    assert rc == 2, err
    assert (
        f"{source}: {name}: not read (an artifact's files are read by their exact names); "
        "did you mean queries.jsonl? Rename it [rule: file-name]"
    ) in err, err
    assert not out.exists()


def test_a_misnamed_required_file_names_the_near_miss_once(tmp_path):
    folder = _folder(tmp_path, {"experiences.jsonl": "Experiences.jsonl"})
    rc, _out, err = run_cli("validate", str(folder))
    assert rc == 2, err
    assert "Experiences.jsonl: not read" in err and "did you mean experiences.jsonl?" in err
    # The near miss says it: no second "missing" line for the same file.
    assert "required-file" not in err, err


def test_unread_zip_members_are_named_macos_junk_is_not(tmp_path):
    folder = _folder(
        tmp_path,
        {},
        {"notes.txt": b"hi", "__MACOSX/._queries.jsonl": b"\x00\x05", ".DS_Store": b"\x00"},
    )
    source = _zip(tmp_path, folder)
    out = tmp_path / "out.json"
    rc, _out, err = run_cli("import", "artifact", str(source), "-o", str(out))
    assert rc == 0, err
    (line,) = [x for x in err.splitlines() if "not read" in x]
    assert line.startswith(
        f"{source}: warning: $: not read: 1 other item(s) in the zip: notes.txt "
    )
    assert "__MACOSX" not in err and "DS_Store" not in err
    assert len(json.loads(out.read_text())["queries"]) == QUERY_COUNT


def test_unread_folder_entries_are_named(tmp_path):
    folder = _folder(tmp_path, {}, {"raw/a.csv": b"x", "README.md": b"x"})
    out = tmp_path / "out.json"
    rc, _out, err = run_cli("import", "artifact", str(folder), "-o", str(out))
    assert rc == 0, err
    assert "warning: $: not read: 2 other item(s) in the folder: README.md, raw/ " in err, err
    assert len(json.loads(out.read_text())["queries"]) == QUERY_COUNT


def _zip_bytes() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for f in sorted(ARTIFACT.iterdir()):
            zf.write(f, f.name)
    return buf.getvalue()


def test_a_zip_given_as_a_package_is_a_file_type_problem():
    with pytest.raises(PackageError) as info:
        loads_package(_zip_bytes(), "pkg.zip")
    (problem,) = info.value.problems
    assert (problem.path, problem.rule) == ("$", "file-type")
    assert problem.message.startswith("a zip file, not a JSON package;")
    assert "memaudit import artifact" in problem.message


def _import_with_history(tmp_path: Path, history: Path) -> tuple[int, str]:
    rc, _out, err = run_cli(
        "import",
        "mem0",
        str(FIXTURES / "mem0_v2_results.json"),
        "--history",
        str(history),
        "--package",
        str(REPO / "sample_packages" / "travel-assistant.json"),
        "-o",
        str(tmp_path / "o.json"),
    )
    return rc, err


@pytest.mark.parametrize(
    "name,data,what",
    [
        ("h.db", b"garbage\n", "no SQLite header"),
        ("h.sqlite3", b"\x00\x01binary", "no SQLite header"),
        ("h.SQLITE", b"", "the file is empty"),
    ],
)
def test_a_db_history_that_is_neither_sqlite_nor_json_says_so(tmp_path, name, data, what):
    history = tmp_path / name
    history.write_bytes(data)
    rc, err = _import_with_history(tmp_path, history)
    assert rc == 2, err
    assert (
        f"{history}: $: not a SQLite history database ({what}) and not JSON: give Mem0's "
        "history.db (SQLite) or its history rows as JSON [rule: file-type]"
    ) in err, err
    # JSON rows under a .db name are still read as JSON, their errors located as JSON's.
    rows = tmp_path / "rows.db"
    rows.write_text("[]")
    rc, err = _import_with_history(tmp_path, rows)
    assert rc == 0, err
    rows.write_text('[{"memory_id": ')
    rc, err = _import_with_history(tmp_path, rows)
    assert rc == 2 and "[rule: truncated]" in err, err
