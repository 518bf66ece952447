"""QA s48: results under a registered saturation, on the sweep suite path and at package sums.

1. The sweep suite path (``--workers 2``, ``--out``) left out the "OPT assumes h concave" note
   that the in-memory sweep and every other result under a registered saturation carry,
   while its rows stayed certified.
2. An ``h_scalar`` that disagreed with ``h`` only at a coverage sum the package reaches was
   accepted: scoring succeeded and the library's own result then failed to read back,
   blaming the file.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from cli_utils import run_cli
from package_utils import registered_saturation

import memaudit_core as ma
from memaudit_core.generators import generate
from memaudit_core.package import package_to_dict, parse_package
from memaudit_core.saturations import Saturation
from memaudit_core.suites import sweep_suite


# Module-level functions, so that worker processes can receive the saturation.
def _log2(z):
    return np.log1p(2 * np.asarray(z, dtype=np.float64))


def _log2_scalar(z):
    return math.log1p(2 * z)


LOG2 = Saturation("s48_log2", _log2, _log2_scalar, "h(z) = ln(1 + 2z)", math.inf)
# The note's opening words, written out here rather than taken from the code under test.
NOTE = "OPT under saturation 's48_log2' is proven on the assumption that its h is concave"


def _package_file(tmp_path, saturation: str, name: str = "pkg.json", family: str = "update_chain"):
    doc = package_to_dict(generate(family))
    doc["objective"]["saturation"] = saturation
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def _says_note(notes) -> bool:
    return any(n.startswith(NOTE) for n in notes)


def test_sweep_suite_with_out_carries_the_concavity_note(tmp_path):
    with registered_saturation(LOG2):
        path = _package_file(tmp_path, "s48_log2")
        out = tmp_path / "out"
        result = sweep_suite([str(path)], budgets=[4, 8], writers=["gvt"], out=out, figures=False)
        assert _says_note(result.notes)
        assert all(r.certified for r in result.rows)
        assert NOTE in (out / "report.md").read_text()


def test_cli_sweep_with_two_workers_carries_the_concavity_note(tmp_path):
    with registered_saturation(LOG2):
        # Two package files: one file with --workers runs the plain (in-memory) sweep.
        a = _package_file(tmp_path, "s48_log2", "a.json")
        b = _package_file(tmp_path, "s48_log2", "b.json", family="scope_shift")
        args = ("sweep", str(a), str(b), "--budgets", "4,8", "--writers", "gvt", "--workers", "2")
        rc, out, err = run_cli(*args, "--quiet")
        assert rc == 0, err
        assert NOTE in out
        rc, out, err = run_cli(*args, "--json", "--quiet")
        assert rc == 0, err
        assert _says_note(json.loads(out)["notes"])


def test_a_built_in_saturation_gets_no_concavity_note_on_the_suite_path(tmp_path):
    path = _package_file(tmp_path, "cap1")
    result = sweep_suite([str(path)], budgets=[4], writers=["gvt"], out=tmp_path / "out")
    assert not any("is proven on the assumption" in n for n in result.notes)


def _min1(z):
    return np.minimum(1.0, np.asarray(z, dtype=np.float64))


def _min1_wrong_at_095(z):
    # Wrong only within 1e-4 of 0.95, between the registration's sampled grid points.
    return 0.0 if abs(z - 0.95) < 1e-4 else min(1.0, z)


def test_an_h_scalar_wrong_at_a_coverage_sum_the_package_reaches_is_refused():
    bad = Saturation("s48_hsbad", _min1, _min1_wrong_at_095, "min(1, z)", 1.0)
    doc = package_to_dict(generate("update_chain"))
    # Independent of the code under test: the package has a candidate covering a unit 0.95.
    assert any(v == 0.95 for c in doc["candidates"] for v in c["coverage"].values())
    doc["objective"]["saturation"] = "s48_hsbad"
    with registered_saturation(bad):
        pkg = parse_package(doc)
        with pytest.raises(ma.SaturationError) as caught:
            ma.score(pkg, 6, writer="gvt")
    text = str(caught.value)
    assert "'s48_hsbad'" in text
    assert "[rule: h_scalar]" in text
    assert "z = 0.95" in text
