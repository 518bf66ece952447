"""QA s45: ``audit`` and a suite ``sweep`` (``--out``, ``--workers``, folders) given a package
file that does not exist stopped at it with a bare error naming it alone, where an invalid
file is listed with every other invalid one before anything runs; and ``--out`` kept the
folder made for the run. A missing path, or a folder without ``*.json``, is now one more line
of that list, named as typed, with its rule; a Dask run lists a file it cannot send as text
there too (it was raised alone)."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

from cli_utils import run_cli

from memaudit_core.errors import InvalidPackagesError
from memaudit_core.suites import sweep_suite

REPO = Path(__file__).resolve().parents[1]
GOOD = REPO / "sample_packages" / "update_chain.json"
NAN_COST = REPO / "tests" / "malformed" / "cost_nan.json"
ARTIFACT = REPO / "tests" / "fixtures" / "importers" / "artifact_pkg"
QUIET = ("--budgets", "3", "--quiet")
MISSING_LINE = "nope.json: $: no such file or folder [rule: file-exists]"


def _files(tmp_path: Path, monkeypatch) -> tuple[str, str, str]:
    """A valid package, a missing one and an invalid one, named as relative to ``tmp_path``,
    the working folder from here on."""
    monkeypatch.chdir(tmp_path)
    shutil.copy(GOOD, tmp_path / "good.json")
    shutil.copy(NAN_COST, tmp_path / "bad.json")
    return "good.json", "nope.json", "bad.json"


def _refused(*argv: str, command: str, n_bad: int, n_all: int) -> str:
    """``memaudit ARGV``: it must refuse with the invalid-files list."""
    rc, out, err = run_cli(*argv)
    assert rc == 2, err
    assert "memaudit: error:" not in err, err
    assert f"{command} not run: {n_bad} of {n_all} package files are invalid" in err, err
    assert "(nothing was run or written)" in err
    assert out == ""
    return err


def test_audit_lists_a_missing_file_with_the_invalid_ones(tmp_path, monkeypatch):
    good, nope, bad = _files(tmp_path, monkeypatch)
    err = _refused("audit", good, nope, bad, *QUIET, command="audit", n_bad=2, n_all=3)
    assert MISSING_LINE in err
    assert "bad.json: $.candidates[0].cost: " in err and "[rule: finite]" in err


def test_sweep_out_lists_a_missing_file_and_leaves_out_as_it_was(tmp_path, monkeypatch):
    good, nope, bad = _files(tmp_path, monkeypatch)
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "earlier.txt").write_text("an earlier run's file\n")
    argv = ("sweep", nope, good, bad, "--writers", "density", *QUIET)
    err = _refused(*argv, "--out", "kept", command="sweep", n_bad=2, n_all=3)
    assert MISSING_LINE in err and "bad.json: $.candidates[0].cost: " in err
    # Nothing new there: no journal, lock, report or figures.
    assert sorted(p.name for p in kept.iterdir()) == ["earlier.txt"]
    # A folder the run would have made is not left behind.
    _refused(*argv, "--out", "new/deeper", command="sweep", n_bad=2, n_all=3)
    assert not (tmp_path / "new").exists()


def test_sweep_with_workers_lists_a_missing_file(tmp_path, monkeypatch):
    good, nope, bad = _files(tmp_path, monkeypatch)
    argv = ("sweep", good, nope, bad, "--workers", "2", "--writers", "density", *QUIET)
    err = _refused(*argv, command="sweep", n_bad=2, n_all=3)
    assert MISSING_LINE in err and "bad.json: $.candidates[0].cost: " in err


def test_folder_missing_file_empty_folder_and_list_entry_are_all_listed(tmp_path, monkeypatch):
    _files(tmp_path, monkeypatch)
    folder = tmp_path / "pkgs"
    folder.mkdir()
    shutil.copy(GOOD, folder / "a.json")
    shutil.copy(NAN_COST, folder / "b.json")
    (tmp_path / "empty.json").mkdir()  # a folder where a package file was meant
    (tmp_path / "list.txt").write_text("good.json\nghost.json\n")
    argv = ("sweep", "pkgs", "nope.json", "empty.json", "list.txt", "--writers", "density")
    err = _refused(*argv, *QUIET, command="sweep", n_bad=4, n_all=6)
    assert "pkgs/b.json: $.candidates[0].cost: " in err
    assert MISSING_LINE in err
    assert "empty.json: $: the folder holds no *.json package file [rule: package-files]" in err
    assert (
        "ghost.json: $: no such file or folder (named in list.txt line 2) [rule: file-exists]"
        in (err)
    )


def test_json_error_of_a_missing_file_is_the_invalid_packages_object(tmp_path, monkeypatch):
    good, nope, bad = _files(tmp_path, monkeypatch)
    rc, out, _ = run_cli("audit", good, nope, bad, *QUIET, "--json")
    assert rc == 2
    error = json.loads(out)["error"]
    assert error["type"] == "InvalidPackagesError"
    assert (error["invalid"], error["packages"]) == (2, 3)
    assert [e["file"] for e in error["errors"]] == ["nope.json", "bad.json"]
    assert error["errors"][0]["problems"] == [
        {"path": "$", "rule": "file-exists", "message": "no such file or folder", "value": None}
    ]


def test_a_dask_run_lists_a_file_it_cannot_send_with_the_others(tmp_path, monkeypatch):
    """The files a Dask run cannot send are listed together. An artifact .zip was raised
    alone ("not UTF-8 text"), the invalid files next to it not named; since s56 it is read
    here and sent as its package JSON, so only the invalid files are listed."""
    from dask.distributed import Client, LocalCluster

    _files(tmp_path, monkeypatch)
    art = tmp_path / "art.zip"
    with zipfile.ZipFile(art, "w") as zf:
        for f in ARTIFACT.iterdir():
            zf.write(f, f"artifact_pkg/{f.name}")
    art_name, missing, bad = str(art), str(tmp_path / "nope.json"), str(tmp_path / "bad.json")

    def refused(client, paths: list[str]) -> list[tuple[str, list[str]]]:
        try:
            sweep_suite(paths, budgets=[3], writers=["density"], scheduler=client, figures=False)
        except InvalidPackagesError as exc:
            return [(e.source, [p.rule for p in e.problems]) for e in exc.errors]
        raise AssertionError("the sweep ran")

    with (
        LocalCluster(
            n_workers=1, processes=False, threads_per_worker=1, dashboard_address=":0"
        ) as cluster,
        Client(cluster) as client,
    ):
        without_missing = refused(client, [art_name, bad])
        with_missing = refused(client, [art_name, missing, bad])
    assert without_missing == [(bad, ["finite"])]
    assert with_missing == [(missing, ["file-exists"]), (bad, ["finite"])]
