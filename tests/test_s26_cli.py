"""Names that said too little (twenty-sixth session): an empty ``-o`` and an empty suite
``--out``, a solve of a package that repeats blocks (its certificate names the count model),
and a store named like a writer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_utils import run_cli as _cli

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "sample_packages"


@pytest.mark.parametrize("name", ["", "  "])
def test_an_empty_output_file_name_is_refused(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc, out, err = _cli("generate", "update_chain", "-o", name)
    assert rc == 2 and out == ""
    assert f"-o {name!r}: an empty file name" in err
    assert "Is a directory" not in err


def test_an_empty_suite_folder_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc, _, err = _cli("sweep", "--family", "update_chain", "--out", "")
    assert rc == 2
    assert "--out '': an empty folder name" in err
    assert list(tmp_path.iterdir()) == []  # nothing written in the working folder


def test_solve_names_the_count_model_in_its_certificate(tmp_path):
    pkg = tmp_path / "rh.json"
    rc, _, err = _cli(
        "generate", "redundancy_heavy", "--param", "n_experiences=300", "-o", str(pkg)
    )
    assert rc == 0, err
    rc, out, err = _cli("solve", str(pkg), "--budget", "25", "--time-limit", "20", "--json")
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["certified"] and doc["label"] == "OPT" and doc["value"] == pytest.approx(16.855)
    assert doc["certificate"]["proof"].startswith("HiGHS MILP over counts")


def test_a_store_named_like_a_writer_is_labelled_as_a_store_when_scored():
    """Overview QA: a store called "gvt" and the gvt writer were two rows both called "gvt"."""
    from memaudit_core.analysis import score, score_selection
    from memaudit_core.package import load_package

    package = load_package(SAMPLES / "update_chain.json")
    writer = score(package, 6, writer="gvt")
    mine = score_selection(package, 6, writer.selected, label="gvt")
    assert writer.label == "gvt"
    assert mine.label == "gvt (store)"
    assert score_selection(package, 6, writer.selected, label="mine").label == "mine"
