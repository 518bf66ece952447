"""Reviewer s48, finding 2: the Evidence explorer's distinct labels were slow.

``figures.distinct_cuts`` (graph labels, timeline ticks, heatmap columns) compared every cut
it tried with every other id, and ``graph_geometry`` called it once per label length tried
(about 50 a graph): ~0.2 s per explorer run on 80-90 ids, 11.7 s for one call on 200 ids
sharing heads and tails. Now each cut tried is one comparison against what the other ids share
with it, and the graph asks for distinct cuts only from the first length at which the plain
middle cuts fit (a distinct cut is never shorter).

The checks: distinct_cuts against a brute-force reading of its contract, written here, on
adversarial id sets (small alphabets, shared heads and tails, ids nested in others, twins that
differ in one middle character); and the graph's labels asked for once or twice, not per
length tried. Timings are in bench/bench_labels.py, not here.
"""

from __future__ import annotations

import dataclasses
import random

import pytest

from memaudit_core.explain import evidence_view
from memaudit_ui import figures
from memaudit_ui.sources import load_by_key


def _reads_as(label: str, ident: str) -> bool:
    """Whether ``label`` may stand for ``ident``: the id itself, or a head and a tail of it
    with at least one character cut between them."""
    if "…" not in label:
        return label == ident
    head, tail = label.split("…", 1)
    return len(ident) > len(head) + len(tail) and ident.startswith(head) and ident.endswith(tail)


def _brute_force(texts: list[str], limit: int) -> list[str]:
    """The contract read literally: per id longer than ``limit``, the cuts in order of
    preference (``limit`` characters first, one more at a time; within a size, the tail
    nearest half of what is kept, the longer of two as near; each end at least a quarter),
    the first that no other id reads as; the id whole when there is none."""
    unique = list(dict.fromkeys(texts))
    label_of = {}
    for text in unique:
        label_of[text] = text
        if len(text) <= limit:
            continue
        others = [u for u in unique if u != text]
        found = None
        for size in range(max(limit, 3), len(text)):
            keep = size - 1
            middle, least = keep // 2, max(1, keep // 4)
            tails = sorted(range(least, keep - least + 1), key=lambda t: (abs(t - middle), -t))
            for tail in tails:
                label = text[: keep - tail] + "…" + text[len(text) - tail :]
                if not any(_reads_as(label, u) for u in others):
                    found = label
                    break
            if found:
                break
        label_of[text] = found or text
    return [label_of[t] for t in texts]


def _small_alphabet(rng: random.Random) -> list[str]:
    heads = ["", "a", "ab", "aab", "s3_"]
    tails = ["", "b", "ab", "bab", "_u"]
    ids = [
        rng.choice(heads) + "".join(rng.choices("ab", k=rng.randint(0, 9))) + rng.choice(tails)
        for _ in range(rng.randint(20, 60))
    ]
    return ids + rng.sample(ids, 5)  # repeated ids read the same, as each other only


def _nested(rng: random.Random) -> list[str]:
    # Ids inside longer ids: every head and tail of a short one starts and ends a longer one.
    base = "".join(rng.choices("ab", weights=[4, 1], k=30))
    return [base[: rng.randint(2, 30)] + base[rng.randint(0, 28) :] for _ in range(40)]


def _twins(rng: random.Random) -> list[str]:
    # Pairs that differ in one middle character behind a long shared head.
    ids = []
    for _ in range(15):
        core = "".join(rng.choices("ab", k=rng.randint(6, 24)))
        m = len(core) // 2
        twin = core[:m] + ("b" if core[m] == "a" else "a") + core[m + 1 :]
        ids += ["observed:" + core, "observed:" + twin, "observed:" + core[:m] + core[m + 1 :]]
        if rng.random() < 0.3:  # an id that starts with all but the last character of
            # core's and ends with all but its first: no cut tells core's apart
            ids.append(ids[-3][:-1] + "ba" + ids[-3][1:])
    return ids


FAMILIES = {"small_alphabet": _small_alphabet, "nested": _nested, "twins": _twins}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_distinct_cuts_keep_their_contract_on_adversarial_ids(family) -> None:
    rng = random.Random(f"s48-rev2-{family}")
    kinds = {"middle cut": 0, "moved or longer cut": 0, "whole, no cut tells it apart": 0}
    for _ in range(12):
        ids = FAMILIES[family](rng)
        for limit in (3, 5, 8, 12, 16):
            labels = figures.distinct_cuts(ids, limit)
            assert labels == _brute_force(ids, limit), (ids, limit)
            unique = set(ids)
            for label, ident in zip(labels, ids, strict=True):
                # The label names its own id and no other; a cut keeps both ends.
                assert _reads_as(label, ident), (label, ident)
                assert not [u for u in unique if u != ident and _reads_as(label, u)], label
                head, cut, tail = label.partition("…")
                assert not cut or (head and tail), label
                if len(ident) > limit:
                    if label == ident:
                        kinds["whole, no cut tells it apart"] += 1
                    elif label == figures._cut_label(ident, limit):
                        kinds["middle cut"] += 1
                    else:
                        kinds["moved or longer cut"] += 1
    # Each family meets every case the contract names.
    assert min(kinds.values()) > 0, kinds


def test_distinct_cuts_on_two_hundred_ids_sharing_heads_and_tails() -> None:
    """The reviewer's kind of input, at its size: one call over 200 ids."""
    rng = random.Random("s48-rev2-200")
    ids: list[str] = []
    while len(set(ids)) < 200:
        core = "".join(rng.choices("ab", k=rng.randint(8, 20)))
        ids.append("observed_in:" + core + ":update")
    labels = figures.distinct_cuts(ids, 12)
    assert labels == _brute_force(ids, 12)


def _qa_graph():
    """The graph of speaker QA's link (test_s48_evlabels), whose labels the projector cuts."""
    pkg = load_by_key("gen:memaudit-small:3")
    return evidence_view(pkg, 6.0, writer="density", graph_scope="all").graph


def _travel_suffixed():
    """84 nodes, each id given the long shared tail of test_s48_heatlabels."""
    pkg = load_by_key("sample:travel-assistant")
    graph = evidence_view(pkg, pkg.budget, writer="density", graph_scope="all").graph
    suffix = ":observed_in_the_long_running_conversation"
    return dataclasses.replace(graph, node_labels=tuple(t + suffix for t in graph.node_labels))


def _asks(monkeypatch, graph, present, cuts) -> tuple[list[int], figures.GraphGeometry]:
    """The limits graph_geometry asks distinct_cuts for (answered by ``cuts``), and its
    layout."""
    asked: list[int] = []

    def answer(texts, limit):
        asked.append(limit)
        return cuts(texts, limit)

    with monkeypatch.context() as patch:
        patch.setattr(figures, "distinct_cuts", answer)
        return asked, figures.graph_geometry(graph, present)


@pytest.mark.parametrize(
    ("graph_of", "present"),
    [(_qa_graph, True), (_travel_suffixed, True), (_travel_suffixed, False)],
)
def test_graph_asks_for_distinct_cuts_only_where_middle_cuts_fit(
    monkeypatch, graph_of, present
) -> None:
    graph = graph_of()
    full = [str(t) for t in graph.node_labels]
    # Where the plain middle cuts fit: answered with those, the layout stops asking there.
    middle, _ = _asks(
        monkeypatch, graph, present, lambda ts, n: [figures._cut_label(t, n) for t in ts]
    )
    fits_cut_in_the_middle = middle[-1]
    asked, geo = _asks(monkeypatch, graph, present, figures.distinct_cuts)
    # The base asked at every length from the longest id's down (18, 51 and 44 times here): a
    # distinct cut is never shorter than the middle cut, so it starts where those fit and
    # steps down only while the distinct cuts are too wide, to the same length as before.
    assert asked[0] == fits_cut_in_the_middle < max(map(len, full)) - 2, (asked, middle)
    assert asked == list(range(asked[0], asked[0] - len(asked), -1))
    assert list(geo.labels) == _brute_force(full, asked[-1])
