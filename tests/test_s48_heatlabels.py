"""QA s48 (lead): the heatmap's column labels keep each unit id's tail, so ids that differ only
early on (here every id ends in the same long suffix) were all drawn as one label; now no
label names two units, as the graph's labels and the timeline's ticks (test_s48_evlabels)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from memaudit_core import evidence_view, load_package
from memaudit_ui.figures import coverage_heatmap

REPO = Path(__file__).resolve().parents[1]
SUFFIX = ":observed_in_the_long_running_conversation"


@pytest.fixture(scope="module")
def heatmap(tmp_path_factory):
    doc = json.loads((REPO / "sample_packages" / "memaudit-small-s0.json").read_text())
    for unit in doc["units"]:
        unit["id"] += SUFFIX
    for cand in doc["candidates"]:
        cand["coverage"] = {k + SUFFIX: v for k, v in cand["coverage"].items()}
    path = tmp_path_factory.mktemp("heat") / "suffixed.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    pkg = load_package(path)
    return evidence_view(pkg, pkg.budget, writer="density").heatmap


@pytest.mark.parametrize("present", [False, True])
def test_no_two_units_share_a_column_label(heatmap, present):
    axis = coverage_heatmap(heatmap, "t", present=present).layout.xaxis2
    ids = list(axis.tickvals)
    # The focus unit's label is styled: the text drawn is what is outside the tags.
    labels = [re.sub(r"<[^>]+>", "", t) for t in axis.ticktext]
    assert len(ids) == len(set(ids)) >= 2
    assert len(set(labels)) == len(ids), labels
    for unit_id, label in zip(ids, labels, strict=True):
        # A cut label is the id's head and tail around an ellipsis: it names its own id.
        head, _, tail = label.partition("…")
        assert unit_id.startswith(head) and unit_id.endswith(tail)
