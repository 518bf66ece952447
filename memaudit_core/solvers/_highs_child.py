"""The child process of a guarded HiGHS run (:func:`memaudit_core.solvers.milp._run_highs_guarded`).

Reads a pickled ``(model, time_limit, node_limit, start, threads)`` on stdin, solves it with
:func:`~memaudit_core.solvers.milp._run_highs` and writes the pickled result dict on stdout. File
descriptor 1 points at /dev/null while HiGHS runs, so that nothing HiGHS prints at C level can
corrupt the result; an exception is sent as ``{"error": text}``.
"""

from __future__ import annotations

import os
import pickle
import sys


def main() -> int:
    result_fd = os.dup(1)
    with open(os.devnull, "w") as null:
        os.dup2(null.fileno(), 1)
    model, time_limit, node_limit, start, threads = pickle.loads(sys.stdin.buffer.read())
    try:
        from memaudit_core.solvers import milp

        milp.HIGHS_THREADS = threads
        result = milp._run_highs(model, time_limit, node_limit, start)
    except Exception as exc:  # noqa: BLE001 - the parent raises it as a SolverError
        result = {"error": f"{type(exc).__name__}: {exc}"}
    with os.fdopen(result_fd, "wb") as out:
        out.write(pickle.dumps(result, protocol=5))
    return 0


if __name__ == "__main__":
    sys.exit(main())
