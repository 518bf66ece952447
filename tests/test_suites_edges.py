"""Suite gaps found by the second mutation pass (QA s17e): deduplication by instance hash and
the check that a package file did not change while the suite ran."""

from __future__ import annotations

import dataclasses
import json

import pytest

from memaudit_core.errors import MemAuditError
from memaudit_core.generators import generate
from memaudit_core.package import package_to_dict
from memaudit_core.suites import PackageSource, _load_checked, instance_hash


def test_instance_hash_ignores_the_order_candidates_are_listed_in():
    """instance_hash: "the groups in arrival order, each as the sorted list of its candidates'
    (type, cost, coverage)". Listing the same candidates in reverse order defines the same
    optimisation instance, so a suite must count it once."""
    pkg = generate("memaudit-small", seed=4)
    reordered = dataclasses.replace(pkg, candidates=tuple(reversed(pkg.candidates)))
    assert instance_hash(reordered) == instance_hash(pkg)
    # ... while a changed cost is a different instance.
    first = pkg.candidates[0]
    changed = dataclasses.replace(
        pkg, candidates=(dataclasses.replace(first, cost=first.cost + 1), *pkg.candidates[1:])
    )
    assert instance_hash(changed) != instance_hash(pkg)


def test_a_package_file_edited_while_the_suite_runs_is_refused(tmp_path):
    """A worker reloads a file source and must refuse it when its content hash is no longer
    the one indexed (otherwise the journal mixes results of two packages under one key)."""
    pkg = generate("update_chain")
    f = tmp_path / "p.json"
    f.write_text(json.dumps(package_to_dict(pkg)))
    src = PackageSource("file", str(f))
    indexed = src.load().content_hash()
    assert _load_checked(src, None, indexed).content_hash() == indexed
    doc = package_to_dict(pkg)
    doc["candidates"][0]["cost"] = doc["candidates"][0]["cost"] + 1
    f.write_text(json.dumps(doc))
    with pytest.raises(MemAuditError, match="changed while the suite ran"):
        _load_checked(src, None, indexed)
