"""A local Dask cluster for the tests that sweep on a scheduler (``--scheduler``)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


@contextlib.contextmanager
def local_cluster() -> Iterator[str]:
    """One worker process of one thread on 127.0.0.1; yields the scheduler's address. Its
    worker knows only what a sweep sends it (start it before registering writers)."""
    from dask.distributed import LocalCluster

    cluster = LocalCluster(
        n_workers=1,
        processes=True,
        threads_per_worker=1,
        host="127.0.0.1",
        scheduler_port=0,
        dashboard_address=":0",
    )
    try:
        yield cluster.scheduler_address
    finally:
        cluster.close()
