"""QA s51 generators, minor findings m1, m3, m4 and m6 (session 52).

m1. ``ma.generate("update_chain", seed=5)`` recorded seed 5: the id ``update_chain`` had one
content hash in the library and another from ``memaudit generate --seed 5`` and the app's
``gen:update_chain:5`` (both seed 0's package). The library now builds seed 0's package too,
with a warning.

m3. The Generator page showed 16 hex digits of the content hash and no CLI equivalent;
``validate`` and ``generate -o`` printed no hash without ``--json``. The page now shows the
full hash and the ``memaudit generate`` command (each copyable), and both commands print it.

m4. The Budget sweep's "Sweep result (JSON)" named neither its source (the package key, the
generator's family / seed / params) nor its solver settings; it now does, in the field names
of a CLI sweep file, and reads back (``memaudit show``).

m6. The Generator's download was named ``<id>-seed<N>.json`` although the id names the seed.

Expected values come from the generator and the CLI, not from the page's own helpers.
"""

from __future__ import annotations

import json
import shlex
import warnings

import pytest
from app_utils import capture_downloads, offered_text, open_linked
from cli_utils import run_cli

import memaudit_core as ma
from memaudit_core.errors import ResultError
from memaudit_core.generators import FAMILIES, generate
from memaudit_core.package import load_package

GENERATOR = "pages/7_Generator.py"
SWEEP = "pages/1_Budget_sweep.py"
#: The QA report's Budget sweep package (m4).
SMALL4 = "gen:memaudit-small:4:normal_count=5;update_count=1"


def _cli_hash(tmp_path, family: str, seed: int, *params: str) -> str:
    out = tmp_path / f"{family}-{seed}.json"
    args = [f"--param={p}" for p in params]
    rc, _, err = run_cli("generate", family, "--seed", str(seed), *args, "-o", str(out))
    assert rc == 0, err
    return load_package(out).content_hash()


# ---------------------------------------------------------------------------------------- m1


@pytest.mark.parametrize("family", ["update_chain", "temporal_interval"])
def test_the_library_builds_a_seed_invariant_familys_one_package_as_the_cli(family, tmp_path):
    with pytest.warns(UserWarning, match=f"^{family} is seed-invariant"):
        pkg = generate(family, seed=5)
    # One id, one content: the CLI's --seed 5 and seed 0 write this very package.
    assert pkg.content_hash() == _cli_hash(tmp_path, family, 5) == _cli_hash(tmp_path, family, 0)
    assert pkg.meta["seed"] == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # seed 0 (and a seeded family) is said nothing
        assert generate(family).content_hash() == pkg.content_hash()
        assert generate("memaudit-small", seed=5).meta["seed"] == 5


def test_a_seed_invariant_familys_seeds_in_python_are_one_package():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        packages = [generate("update_chain", seed=s) for s in range(3)]
    assert len({p.content_hash() for p in packages}) == 1


# ---------------------------------------------------------------------------------------- m3


def test_validate_and_generate_print_the_full_content_hash(tmp_path):
    out = tmp_path / "small.json"
    rc, _, err = run_cli("generate", "memaudit-small", "--seed", "4", "-o", str(out))
    assert rc == 0, err
    full = load_package(out).content_hash()
    assert len(full) == 64
    assert f"(content hash {full})" in err, err
    rc, text, err = run_cli("validate", str(out))
    assert rc == 0, err
    assert f"(content hash {full})" in text, text
    # The line's two ends stay as they were read.
    assert text.startswith(f"{out}: valid package 'memaudit-small-s4'"), text
    assert text.rstrip().endswith("words"), text


def _preview(monkeypatch, key: str):
    """The Generator opened on ``key``, and its "Download JSON" (by label: a button without
    a widget key is offered too, unlike ``capture_downloads``)."""
    import streamlit as st
    from streamlit.delta_generator import DeltaGenerator

    offered = {}

    def fake(*args, **kwargs):
        label, data = args[-2:]
        offered[label] = {"data": data, **kwargs}
        return False

    monkeypatch.setattr(st, "download_button", fake)
    monkeypatch.setattr(DeltaGenerator, "download_button", fake)
    at = open_linked(GENERATOR, key)
    assert not at.error, [e.value for e in at.error]
    return at, offered["Download JSON"]


@pytest.mark.parametrize(
    ("key", "family", "seed", "params"),
    [
        (SMALL4, "memaudit-small", 4, {"normal_count": 5, "update_count": 1}),
        # A text parameter and a seed-invariant family built at seed 0 from a link's seed 5.
        (
            "gen:event_graph:7:candidate_types=atomic_fact,tombstone;n_experiences=20",
            "event_graph",
            7,
            {"candidate_types": "atomic_fact,tombstone", "n_experiences": 20},
        ),  # fmt: skip
        ("gen:update_chain:5:length=6", "update_chain", 5, {"length": 6}),
    ],
)
def test_the_generator_shows_the_full_hash_and_the_cli_command_of_its_download(
    monkeypatch, tmp_path, key, family, seed, params
):
    at, offer = _preview(monkeypatch, key)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # update_chain at seed 5: seed 0's package (m1)
        expected = generate(family, seed=seed, **params)
    codes = [c.value for c in at.code]
    # The full 64-digit hash, in a block of its own (copyable), and the same as the library's.
    assert expected.content_hash() in codes, codes
    (command,) = [c for c in codes if c.startswith("memaudit generate ")]
    # m6: the download is named by the id, which names the seed; no "-seed<N>" after it.
    name = offer["file_name"]
    assert "-seed" not in name and name.endswith(".json"), name
    if FAMILIES[family].seeded:
        assert f"-s{seed}-" in name, name
    assert command.endswith(f" -o {name}"), command
    # The command, run as written, writes the download byte for byte under its name.
    monkeypatch.chdir(tmp_path)
    argv = shlex.split(command)
    assert argv[:2] == ["memaudit", "generate"]
    rc, _, err = run_cli(*argv[1:])
    assert rc == 0, err
    data = offer["data"]() if callable(offer["data"]) else offer["data"]
    assert (tmp_path / name).read_bytes() == data
    assert load_package(tmp_path / name).content_hash() == expected.content_hash()


# ---------------------------------------------------------------------------------------- m6


def test_a_generated_file_is_named_by_its_id_alone():
    from memaudit_core.generators import package_file_stem

    for name, fam in FAMILIES.items():
        pkg = generate(name, seed=4 if fam.seeded else 0)
        stem = package_file_stem(pkg)
        assert stem == pkg.id and "seed" not in stem, (name, stem)


# ---------------------------------------------------------------------------------------- m4


def test_the_budget_sweep_json_records_its_source_and_settings(monkeypatch, tmp_path):
    offered = capture_downloads(monkeypatch)
    at = open_linked(SWEEP, SMALL4, "6", store="writer:gvt", methods="writer:gvt", ablation="0")
    assert not at.error, [e.value for e in at.error]
    offer = offered["sweep_json"]
    data = json.loads(offered_text(offer))
    # The CLI's sweep of the same package: its rows and settings name the fields alike.
    rc, out, err = run_cli(
        "sweep", "--family", "memaudit-small:4", "--param", "normal_count=5", "--param",
        "update_count=1", "--budgets", "6", "--writers", "gvt", "--json", "--quiet",
    )  # fmt: skip
    assert rc == 0, err
    cli = json.loads(out)
    row = cli["rows"][0]
    assert data["source"] == SMALL4
    for name in ("family", "seed", "params", "content_hash"):
        assert data[name] == row[name], name
    assert data["params"] == "normal_count=5;update_count=1"
    assert set(data["settings"]) == set(cli["settings"])
    assert data["settings"]["solver"] == "auto"
    assert data["settings"]["total_time_limit"] == 20  # the page's "Time for the sweep's solves"
    # And it reads back, in memaudit show too, naming its source and settings.
    saved = tmp_path / offer["file_name"]
    saved.write_text(offered_text(offer), encoding="utf-8")
    rc, text, err = run_cli("show", str(saved))
    assert rc == 0, err
    assert f"from {SMALL4};" in text.splitlines()[0], text
    assert "settings: solver=auto, time_limit=None, total_time_limit=20" in text, text


def test_a_budget_curve_records_the_generator_and_settings_and_reads_back():
    pkg = generate("memaudit-small", seed=4, normal_count=5)
    curve = ma.budget_curve(pkg, [6], ["gvt"], solver="milp", time_limit=7)
    doc = curve.with_source("mine.json").to_dict()
    assert (doc["source"], doc["family"], doc["seed"], doc["params"]) == (
        "mine.json",
        "memaudit-small",
        4,
        "normal_count=5;update_count=2",
    )
    assert doc["settings"] == {
        "solver": "milp",
        "time_limit": 7,
        "total_time_limit": None,
        "cross_check": "sample",
    }
    assert ma.read_result(json.loads(json.dumps(doc))).to_dict() == doc
    # A hand-made package records no generator.
    plain = ma.budget_curve(ma.load_package("sample_packages/travel-assistant.json"), [6], [])
    assert (plain.family, plain.seed, plain.params) == (None, None, None)
    # A curve saved before these fields reads back without them.
    old = {k: v for k, v in doc.items() if k not in ("source", "family", "seed", "params")}
    del old["settings"]
    back = ma.read_result(old)
    assert (back.source, back.family, back.seed, back.params, back.settings) == (
        None,
        None,
        None,
        None,
        (),
    )
    # Edited into something false: refused, named.
    with pytest.raises(ResultError, match=r"\$\.seed: .*a seed is an integer >= 0"):
        ma.read_result({**doc, "seed": -1})
    with pytest.raises(ResultError, match=r"\$\.params: .*belongs to a family"):
        ma.read_result({**doc, "family": None, "seed": None})
