"""Cached calls into the core, keyed by the package's content hash.

The package object is passed as ``_package`` (excluded from Streamlit's argument hashing) and
the ``content_hash`` string stands for it, so identical content shares one cache entry whatever
its source. Solver objects and sparse matrices never cross this boundary.
"""

from __future__ import annotations

import streamlit as st

from memaudit_core import reports
from memaudit_core.package import Package


@st.cache_data(show_spinner="Solving the optimum and scoring every writer…", max_entries=256)
def overview(_package: Package, content_hash: str, budget: float) -> reports.Overview:
    return reports.overview(_package, budget)


@st.cache_data(show_spinner=False, max_entries=64)
def package_stats(_package: Package, content_hash: str) -> reports.PackageStats:
    return reports.package_stats(_package)
