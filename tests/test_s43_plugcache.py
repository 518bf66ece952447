"""QA s43, plugin writers:

1. after editing a helper module of a package writer (``my_writer/__init__.py`` with
   ``from . import helper``, as the README advises), both the in-process blind cache and a
   sweep's ``--out`` journal gave the old results: they keyed only on ``__init__.py``;
2. an ``@oracle_writer`` that imported a sibling module was told "a blind writer runs
   sandboxed", though its module is loaded in the sandbox because every plugin module is.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import memaudit_core as ma
from memaudit_core import plugins
from memaudit_core.package import load_package

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "sample_packages" / "update_chain.json"

CHOOSE = """\
def choose(view):
    kept, spent, seen = [], 0.0, set()
    for c in sorted(view.candidates, key=lambda c: (c.cost, c.id)):
        if c.experience not in seen and spent + c.cost <= view.budget:
            kept.append(c.id); spent += c.cost; seen.add(c.experience)
    return kept
"""
EMPTY = "def choose(view):\n    return []\n"
ENTRY = "from . import helper\n\n\ndef w(view):\n    return helper.choose(view)\n"


def _package(folder: Path, name: str) -> Path:
    """A package writer: ``name/__init__.py`` and ``name/sub.py`` call ``name/helper.py``."""
    pkg = folder / name
    pkg.mkdir()
    (pkg / "__init__.py").write_text(ENTRY)
    (pkg / "sub.py").write_text(ENTRY)
    helper = pkg / "helper.py"
    helper.write_text(CHOOSE)
    return helper


def _edit(path: Path, text: str) -> None:
    """Rewrite ``path`` and move its mtime a second on (an edit within one clock tick)."""
    before = path.stat().st_mtime_ns
    path.write_text(text)
    os.utime(path, ns=(before + 10**9, before + 10**9))


@pytest.mark.parametrize("entry", ["", ".sub"])
def test_score_reruns_a_package_writer_after_its_helper_is_edited(
    tmp_path: Path, monkeypatch, entry: str
) -> None:
    name = f"s43pc_score{entry.replace('.', '_')}"
    monkeypatch.syspath_prepend(str(tmp_path))
    helper = _package(tmp_path, name)
    spec = f"{name}{entry}:w"
    plugins.register_module_writer(spec)
    pkg = load_package(SAMPLE)

    assert ma.score(pkg, 6, writer=spec).value == pytest.approx(5.65, abs=0.01)  # QA's figure
    _edit(helper, EMPTY)
    assert ma.score(pkg, 6, writer=spec).value == 0.0  # an empty store covers nothing


def test_code_digest_covers_the_package_folder(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    helper = _package(tmp_path, "s43pc_digest")
    (tmp_path / "s43pc_plain.py").write_text(CHOOSE)

    before = plugins.module_file_digest("s43pc_digest:w")
    assert before is not None
    assert plugins.module_file_digest("s43pc_digest.sub:w") == before  # one folder, one code
    _edit(helper, EMPTY)
    assert plugins.module_file_digest("s43pc_digest:w") != before
    # A plain module keeps the digest journals always had: that of its file.
    plain = hashlib.sha256(CHOOSE.encode()).hexdigest()[:16]
    assert plugins.module_file_digest("s43pc_plain:choose") == plain


def _sweep(tmp_path: Path, out: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    env.pop(plugins.WRITER_MODULES_ENV, None)
    cmd = [sys.executable, "-m", "memaudit_core.cli", "sweep", str(SAMPLE), "--writers", "gvt"]
    cmd += ["--writer-module", "s43pc_sweep:w", "--out", str(out), "--json"]
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _plugin_ratios(out: Path) -> list[float]:
    with open(out / "summary.csv", newline="") as fh:
        return [
            float(r["mean_ratio"]) for r in csv.DictReader(fh) if r["method"] == "s43pc_sweep:w"
        ]


def test_sweep_journal_reruns_a_package_writer_after_its_helper_is_edited(tmp_path: Path) -> None:
    helper = _package(tmp_path, "s43pc_sweep")
    out = tmp_path / "out"

    first = _sweep(tmp_path, out)
    assert first["executed"] == first["n_tasks"]
    assert max(_plugin_ratios(out)) > 0

    _edit(helper, EMPTY)
    second = _sweep(tmp_path, out)
    # gvt's half of the tasks is reused, the plugin's half runs again.
    assert second["n_tasks"] == first["n_tasks"]
    assert second["executed"] == first["n_tasks"] // 2
    assert second["reused"] == first["n_tasks"] // 2
    ratios = _plugin_ratios(out)
    assert ratios and all(r == 0.0 for r in ratios)


def test_an_oracle_that_imports_a_sibling_is_not_called_blind(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "s43pc_orchelp.py").write_text("def pick(inst, budget):\n    return []\n")
    (tmp_path / "s43pc_orc.py").write_text(
        "import s43pc_orchelp\n"
        "from memaudit_core.plugins import oracle_writer\n\n\n"
        "@oracle_writer\n"
        "def w(inst, budget):\n"
        "    return s43pc_orchelp.pick(inst, budget)\n"
    )
    with pytest.raises(plugins.PluginWriterError) as info:
        plugins.register_module_writer("s43pc_orc:w")
    text = str(info.value)
    assert "PermissionError" in text and "s43pc_orchelp.py" in text
    assert "a blind writer runs sandboxed" not in text
    assert "every plugin writer's module, oracle or blind, is first loaded in the sandbox" in text
    assert "make the writer a package" in text  # the workaround stays
