"""solve and score print ids that would read as other ids quoted (s45: 'c2 ' printed as c2)."""

import json

from cli_utils import run_cli


def _package(tmp_path, odd_id):
    doc = {
        "memaudit": 1,
        "id": "odd-ids",
        "cost_unit": "words",
        "budget": 10,
        "experiences": [{"id": "e1", "time": 0}, {"id": "e2", "time": 1}],
        "units": [
            {"id": "u1", "kind": "fact", "weight": 1},
            {"id": "u2", "kind": "fact", "weight": 1},
        ],
        "candidates": [
            {"id": "c1", "experience": "e1", "type": "fact", "cost": 1, "coverage": {"u1": 1}},
            {"id": odd_id, "experience": "e2", "type": "fact", "cost": 1, "coverage": {"u2": 1}},
        ],
    }
    path = tmp_path / "odd.json"
    path.write_text(json.dumps(doc))
    return path


def test_trailing_space_and_comma_ids_are_quoted_in_solve(tmp_path):
    for odd_id in ("c2 ", "c2, c3"):
        code, out, _ = run_cli("solve", str(_package(tmp_path, odd_id)))
        assert code == 0
        line = next(x for x in out.splitlines() if x.startswith("selected: "))
        assert line == f"selected: c1, {odd_id!r}"


def test_plain_ids_print_bare(tmp_path):
    code, out, _ = run_cli("solve", str(_package(tmp_path, "c2")))
    assert code == 0
    assert "selected: c1, c2" in out.splitlines()
