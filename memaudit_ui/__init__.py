"""Streamlit helpers for the MemAudit app: the shared frame, state, caching and figures.

Pages stay thin: they call :func:`memaudit_ui.frame.frame` first, then one cached core function
from :mod:`memaudit_ui.cached`, then render with :mod:`memaudit_ui.figures` and
:mod:`memaudit_ui.render`. Nothing here solves or loops over arrays; that is the core's job.
"""
