"""`score` prints why the store scored what it did (session 50).

An annotator reading `memaudit score` got the tables (value by unit kind, units missed) but
not the "Why this score" paragraphs the app's Compare page and `show` of a saved Compare view
give; they are now the text's last section. The JSON output is unchanged.

Expected facts are read off the sample package by hand: at budget 12 the fact-only store keeps
e1:fact and e4:fact (F = 2 + 0.5 = 2.5); the optimum keeps e2:fact and e4:update (6.4); the
store misses u:meal:invalid (weight 3), u:seat (1) and u:meal:order (0.4 of 0.5), each covered in
the optimum by e4:update or e2:fact; 3 of the 12 words are left.
"""

from __future__ import annotations

import json

from cli_utils import run_cli

VEG = "sample_packages/veg-to-pescatarian.json"


def _why(out: str) -> str:
    head, sep, why = out.partition("\n\nwhy this score\n")
    assert sep, out
    assert "value by unit kind" in head  # after the tables
    return why


def test_score_text_ends_with_why_this_score() -> None:
    rc, out, err = run_cli("score", VEG, "--budget", "12", "--store", "fact-only")
    assert rc == 0, err
    why = _why(out)
    flat = " ".join(why.split())
    assert "F = 2.5 against OPT = 6.4 at budget 12 words (ratio 0.391)" in flat
    assert "losing 3 of the 3 that OPT gets from invalidation units: u:meal:invalid" in flat
    assert "The optimum covered it with e4:update" in flat
    assert "u:seat. The optimum covered it with e2:fact" in flat
    assert "It left 3 words of the budget unused." in flat
    # Paragraphs are wrapped for a terminal, never inside an id.
    assert max(len(line) for line in why.splitlines()) <= 100


def test_a_lossless_store_says_so() -> None:
    # GVT keeps e2:fact and e4:update at budget 12: the optimum itself.
    rc, out, err = run_cli("score", VEG, "--budget", "12", "--writer", "gvt")
    assert rc == 0, err
    assert "The store loses nothing against the optimum" in " ".join(_why(out).split())


def test_score_json_is_unchanged_by_the_paragraphs() -> None:
    rc, out, err = run_cli("score", VEG, "--budget", "12", "--store", "fact-only", "--json")
    assert rc == 0, err
    data = json.loads(out)
    assert "why this score" not in out
    assert data["value"] == 2.5
    assert sorted(data["selected"]) == ["e1:fact", "e4:fact"]
