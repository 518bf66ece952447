"""Registers the oracle writer ``s51_pm_first`` on import (for ``--plugin-module``)."""

import memaudit_core as ma


def first(inst, budget):
    """The first candidate in canonical order."""
    return inst.indices(list(inst.candidate_ids[:1]))


ma.register_writer(ma.WriterInfo("s51_pm_first", "first candidate", "oracle", first), replace=True)
