"""Where the benchmark scripts write their JSON (``bench/common.py``'s ``save``).

``--out`` is documented as "name of the JSON in bench/out/": a bare ``x.json`` once landed in
the working folder instead (twenty-fourth session), outside the gitignored ``bench/out``.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"


@pytest.fixture
def common(monkeypatch, tmp_path):
    spec = importlib.util.spec_from_file_location("bench_common", BENCH / "common.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "OUT", tmp_path / "out")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return module


@pytest.mark.parametrize("name", ["speed-2", "speed-2.json"])
def test_a_bare_name_goes_to_bench_out(common, tmp_path, name):
    path = common.save(name, {"ratio": 1.0})
    assert path == tmp_path / "out" / "speed-2.json"
    assert json.loads(path.read_text()) == {"ratio": 1.0}
    assert list((tmp_path / "work").iterdir()) == []


def test_a_name_with_a_folder_is_used_as_given(common, tmp_path):
    target = tmp_path / "elsewhere" / "run.json"
    assert common.save(str(target), {"n": 3}) == target
    assert json.loads(target.read_text()) == {"n": 3}
    relative = common.save("sub/run.json", {"n": 4})
    assert relative == Path("sub/run.json")
    assert json.loads((tmp_path / "work" / "sub" / "run.json").read_text()) == {"n": 4}
