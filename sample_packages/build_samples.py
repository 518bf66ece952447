"""Regenerate the generated sample packages in this folder.

The hand-written samples (``veg-to-pescatarian.json``, ``travel-assistant.json`` and the
external-stores demo ``external-stores-demo.json``) are source files and are never touched.
Every other sample is rebuilt from a registered family with a fixed seed and written in
canonical form (:func:`memaudit_core.package.save_package`). The event-graph
samples are built only when the ``event_graph`` family is registered.

Usage::

    python sample_packages/build_samples.py           # rewrite the generated samples
    python sample_packages/build_samples.py --check   # exit 1 if a file is missing or stale
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:  # run from a fresh clone without an install
    sys.path.insert(0, str(HERE.parent))

from memaudit_core.generators import FAMILIES, generate  # noqa: E402
from memaudit_core.package import Package, dumps_package, save_package  # noqa: E402

#: Hand-written samples: source files, validated but never regenerated.
HAND_WRITTEN = ("veg-to-pescatarian.json", "travel-assistant.json")

#: Hand-written samples whose stores are external memory stores (union scoring demos); they
#: carry no writer stores, so the three-writer checks of HAND_WRITTEN do not apply.
EXTERNAL_DEMOS = ("external-stores-demo.json",)

#: (file name, family, seed, params) of every generated sample.
GENERATED: tuple[tuple[str, str, int, dict[str, Any]], ...] = (
    ("memaudit-small-s0.json", "memaudit-small", 0, {}),
    ("update_chain.json", "update_chain", 0, {}),
    ("temporal_interval.json", "temporal_interval", 0, {}),
    ("event-graph-50.json", "event_graph", 7, {"n_experiences": 50}),
    ("event-graph-500.json", "event_graph", 7, {"n_experiences": 500}),
)


def generated_specs() -> list[tuple[str, str, int, dict[str, Any]]]:
    """The generated samples whose family is registered in this build."""
    return [spec for spec in GENERATED if spec[1] in FAMILIES]


def build_one(family: str, seed: int, params: dict[str, Any]) -> Package:
    return generate(family, seed, **params)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report missing or stale files")
    parser.add_argument("--out", type=Path, default=HERE, help="output folder (default: here)")
    args = parser.parse_args(argv)
    stale: list[str] = []
    for name, family, seed, params in generated_specs():
        pkg = build_one(family, seed, params)
        path = args.out / name
        if args.check:
            current = path.read_text(encoding="utf-8") if path.exists() else None
            if current != dumps_package(pkg):
                stale.append(name)
            continue
        save_package(pkg, path)
        print(
            f"wrote {path} ({len(pkg.experiences)} experiences, {len(pkg.candidates)} candidates)"
        )
    skipped = [spec[0] for spec in GENERATED if spec[1] not in FAMILIES]
    if skipped:
        print(f"skipped (family not registered): {', '.join(skipped)}")
    if stale:
        print(f"missing or stale: {', '.join(stale)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
