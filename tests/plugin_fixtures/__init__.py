"""Plugin writer modules used by tests/test_plugins.py (imported by name in worker processes)."""
