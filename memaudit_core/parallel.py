"""Process pools shared by the bulk paths (suites of packages, budget sweeps of one package).

One rule lives here: worker processes never come from ``fork`` of the calling process. HiGHS
keeps a thread pool once it has run, and a forked child of a threaded parent can deadlock, so
pools use ``forkserver`` (a clean server process forks the workers, with the heavy imports
preloaded once) where the platform has it, else ``spawn``.
"""

from __future__ import annotations

import contextlib
import gc
import io
import math
import multiprocessing
import multiprocessing.context
import os
import pickle
import signal
import sys
import time
import types
from collections.abc import Callable, Collection, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .errors import MemAuditError

#: Modules the forkserver imports once, so that each worker starts without re-importing them.
PRELOAD = [
    "memaudit_core.analysis",
    "memaudit_core.audit",
    "memaudit_core.generators",
    "memaudit_core.suites",
]


def pool_context() -> multiprocessing.context.BaseContext:
    """``forkserver`` where available (no fork of a threaded parent), else ``spawn``.

    Both start workers that import the parent's ``__main__`` again from its file: a script read
    from standard input (``python - <<EOF``) names the file ``<stdin>``, which no worker can
    read, and every worker died with a bare ``BrokenProcessPool`` (researcher QA). That case is
    a :class:`~memaudit_core.errors.MemAuditError` before any worker starts.
    """
    main = sys.modules.get("__main__")
    main_file = getattr(main, "__file__", None)
    spec_name = getattr(getattr(main, "__spec__", None), "name", None)
    if isinstance(main_file, str) and spec_name is None and not os.path.isfile(main_file):
        from .errors import MemAuditError

        raise MemAuditError(
            f"worker processes cannot load this script again (its file is {main_file!r}, "
            "e.g. code read from standard input): save it as a .py file, or use workers=1"
        )
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(PRELOAD)
        _start_forkserver_shielded()
        return ctx
    return multiprocessing.get_context("spawn")


def _start_forkserver_shielded() -> None:
    """Start the forkserver with SIGINT ignored, which it and its workers inherit.

    The forkserver imports :data:`PRELOAD` before it starts ignoring SIGINT itself, so a
    Ctrl-C in the first second of ``sweep --workers 2`` printed up to three tracebacks from it
    (or "Fatal Python error: init_import_site") after ``memaudit: interrupted`` (CLI QA). The
    parent handles Ctrl-C and ends the workers (:func:`stop_pool`).
    """
    import signal
    import threading
    from multiprocessing import forkserver

    if threading.current_thread() is not threading.main_thread():
        return  # signals are the main thread's (Streamlit runs pages elsewhere)
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        forkserver.ensure_running()
    finally:
        signal.signal(signal.SIGINT, previous)


def init_solver_worker() -> None:
    """Initializer of every pool worker: HiGHS on one thread.

    HiGHS's default thread count is its own choice for the whole machine; N workers each
    running it on N cores then compete for the cores. On this project's 2-core reference VM,
    two budget-sweep workers took 157-161 s with the default and 133-142 s with one thread
    each (``bench/RESULTS.md``, issue 7, fifth session).
    """
    import highspy

    from .solvers import milp

    # HiGHS keeps one thread scheduler per process, sized at its first run, and refuses a
    # model asking for another size ("Not Set" status). A worker may have run HiGHS before
    # this point: multiprocessing re-imports the parent's __main__ in each worker, and after
    # Streamlit's AppTest (in the test session) that is app.py, which solves. So the
    # scheduler is reset here, before this worker's first model.
    highspy.Highs.resetGlobalScheduler(True)
    milp.HIGHS_THREADS = 1
    _ignore_sigint()
    watch_parent()


def _ignore_sigint() -> None:
    """A pool worker leaves Ctrl-C to the process that made the pool (:func:`stop_pool`).

    A terminal's Ctrl-C reaches the whole process group, workers included. Workers of a
    forkserver started by :func:`pool_context` in the main thread inherit SIGINT ignored; one
    started elsewhere (a Streamlit page's thread) starts them with Python's Ctrl-C handler,
    and each busy worker would print its own ``KeyboardInterrupt`` traceback.
    """
    with contextlib.suppress(ValueError, OSError):  # not the worker's main thread
        signal.signal(signal.SIGINT, signal.SIG_IGN)


@contextlib.contextmanager
def _signals_deferred() -> Iterator[None]:
    """Hold Ctrl-C (and SIGTERM / SIGHUP handled in Python) back until the block ends, then
    raise it as it would have been raised.

    For the main thread only: Python raises ``KeyboardInterrupt`` there alone.
    """
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    old: dict[int, Callable[[int, Any], Any]] = {}

    def note(signum: int, frame: Any) -> None:
        caught.append(signum)

    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        signum = getattr(signal, name, None)
        handler = None if signum is None else signal.getsignal(signum)
        if callable(handler):  # SIG_IGN, SIG_DFL and handlers set outside Python stay
            old[signum] = handler
            signal.signal(signum, note)
    try:
        yield
    finally:
        for signum, handler in old.items():
            signal.signal(signum, handler)
        if caught:
            old[caught[0]](caught[0], None)


class SolverPool(ProcessPoolExecutor):
    """A :class:`~concurrent.futures.ProcessPoolExecutor` whose workers start whole even
    when Ctrl-C comes while one is starting, and know the saturations registered here.

    ``submit`` starts a worker when none is idle, and the forkserver start writes the
    worker's pickled state (for a budget sweep, the compiled package: more than a pipe holds)
    to a pipe while the new worker reads it. A Ctrl-C there cut the write: the worker read a
    truncated pickle and printed ``UnpicklingError: pickle data was truncated`` with a
    traceback after ``memaudit: interrupted`` (in about one ``sweep --workers 2`` Ctrl-C in
    three, QA s45; a worker left half-started could also fail later, on the parent's queues
    already gone). Holding the signal until ``submit`` returns costs at most one worker's
    start (the first waits for the forkserver's preload imports, about half a second), and the
    worker, whole and known to the pool, is then ended by :func:`stop_pool`: Ctrl-C to exit
    took 0.1-0.55 s in QA, against up to 1 s before.
    """

    def __init__(
        self,
        max_workers: int | None = None,
        mp_context: multiprocessing.context.BaseContext | None = None,
        initializer: Callable[..., Any] | None = None,
        initargs: tuple = (),
        saturations_used: Collection[str] | None = None,
        **kwargs: Any,
    ) -> None:
        sats, unsendable = _sendable_saturations()
        for name, reason in unsendable:
            if saturations_used is not None and name in saturations_used:
                from .errors import MemAuditError

                raise MemAuditError(reason)  # before any worker starts
        self._checked = bool(sats or unsendable)
        if sats or unsendable:
            initargs = (sats, unsendable, initializer, initargs)
            initializer = _init_with_saturations
        super().__init__(max_workers, mp_context, initializer, initargs, **kwargs)

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:
        if self._checked:  # a worker that could not load a saturation refuses every task
            fn, args = _checked_call, (fn, *args)
        with _signals_deferred():
            return super().submit(fn, *args, **kwargs)


#: How :func:`dumps_for_workers` and :func:`loads_in_worker` end their errors.
MOVE_TO_MODULE = (
    "define the function with def at the top level of a module (a .py file on the Python path "
    "that the script or notebook imports), or run in this process (workers=1)"
)


class _GlobalsSeen(pickle.Pickler):
    """A pickler that notes the module of every function and class it pickles by name."""

    def __init__(self, file: Any) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.modules: set[str] = set()

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, type | types.FunctionType | types.BuiltinFunctionType):
            self.modules.add(str(getattr(obj, "__module__", None)))
        return NotImplemented


def _main_importable() -> bool:
    """Worker processes import this process's ``__main__`` again: from its file (a script) or
    by its module name (``python -m``). A notebook, a REPL or ``python -c`` has neither."""
    main = sys.modules.get("__main__")
    if getattr(getattr(main, "__spec__", None), "name", None):
        return True
    main_file = getattr(main, "__file__", None)
    return isinstance(main_file, str) and os.path.isfile(main_file)


def _why_unpicklable(obj: Any, exc: BaseException) -> str:
    qualname = str(getattr(obj, "__qualname__", ""))
    if "<lambda>" in qualname:
        return "its function is a lambda"
    if "<locals>" in qualname:
        return "its function is defined inside another function"
    from .errors import cut_repr

    return f"{type(exc).__name__}: {cut_repr(str(exc))}"


def dumps_for_workers(obj: Any, what: str, *, via: str = "processes", parts: Any = ()) -> bytes:
    """``obj`` pickled for worker processes (``via="processes"``: by reference, as
    multiprocessing does) or for Dask workers (``via="dask"``: ``cloudpickle``, which sends
    functions of ``__main__``, lambdas and closures by value).

    A :class:`~memaudit_core.errors.MemAuditError` naming ``what`` (e.g. ``"writer 'mine'"``)
    when no worker could load it: a lambda or a nested function, or (``processes``) a
    function of a ``__main__`` the workers cannot import again (a notebook, ``python -c``).
    Before, such a writer reached the workers as an unknown name, and such a saturation
    killed each worker as it started, with multiprocessing's traceback (QA s51). ``parts``:
    the callables ``obj`` holds, named in the error instead of ``obj`` itself.
    """
    from .errors import MemAuditError

    culprits = [p for p in parts if callable(p)] or [obj]
    if via == "dask":
        import cloudpickle

        try:
            return cloudpickle.dumps(obj)
        except Exception as exc:
            raise MemAuditError(
                f"{what} cannot be sent to the Dask workers "
                f"({type(exc).__name__}: {exc}): {MOVE_TO_MODULE}"
            ) from None
    buf = io.BytesIO()
    pickler = _GlobalsSeen(buf)
    try:
        pickler.dump(obj)
    except Exception as exc:
        bad = next((p for p in culprits if not _pickles(p)), obj)
        raise MemAuditError(
            f"{what} cannot be sent to worker processes ({_why_unpicklable(bad, exc)}): "
            f"{MOVE_TO_MODULE}"
        ) from None
    if "__main__" in pickler.modules and not _main_importable():
        raise MemAuditError(
            f"{what} is defined in __main__ (a notebook, an interactive session or python -c), "
            f"which worker processes cannot import: {MOVE_TO_MODULE}"
        )
    return buf.getvalue()


def _pickles(obj: Any) -> bool:
    try:
        pickle.dumps(obj)
    except Exception:
        return False
    return True


def loads_in_worker(blob: bytes, what: str) -> Any:
    """What :func:`dumps_for_workers` pickled, or a
    :class:`~memaudit_core.errors.MemAuditError` naming ``what`` and what to do (a script's
    function defined under ``if __name__ == "__main__":`` is not there when a worker imports
    the script again)."""
    from .errors import MemAuditError, cut_repr

    try:
        return pickle.loads(blob)
    except Exception as exc:
        raise MemAuditError(
            f"{what} could not be loaded in a worker process ({type(exc).__name__}: "
            f"{cut_repr(str(exc))}); a function defined inside `if __name__ == '__main__':` "
            f"or in a notebook does not exist there: {MOVE_TO_MODULE}"
        ) from None


def _sendable_saturations() -> tuple[tuple[tuple[str, bytes], ...], tuple[tuple[str, str], ...]]:
    """The saturations registered in this process, each pickled for the workers (which start
    from a fresh import and would refuse a package naming one as unknown, QA s46), and (name,
    reason) of each no worker could load (a notebook's, a lambda): refused where used."""
    from .errors import MemAuditError
    from .saturations import registered_saturations

    sendable, unsendable = [], []
    for sat in registered_saturations():
        try:
            blob = dumps_for_workers(sat, f"saturation {sat.name!r}", parts=(sat.h, sat.h_scalar))
        except MemAuditError as exc:
            unsendable.append((sat.name, str(exc)))
        else:
            sendable.append((sat.name, blob))
    return tuple(sendable), tuple(unsendable)


#: Why this pool worker could not load its parent's saturations (None: it could).
_INIT_PROBLEM: str | None = None


def _init_with_saturations(
    sats: tuple[tuple[str, bytes], ...],
    unsendable: tuple[tuple[str, str], ...],
    initializer: Callable[..., Any] | None,
    initargs: tuple,
) -> None:
    """Install the parent's saturations, then run the pool's own initializer. A saturation
    that cannot be loaded here (a script's, defined under its main guard) joins those the
    parent could not send: a package naming it is refused with the reason, the others run
    (s56; before, every task of the worker was refused). Anything else that fails here is said
    by every task of this worker (:func:`_checked_call`): an initializer that raises leaves
    only a broken pool and a traceback."""
    global _INIT_PROBLEM
    from .errors import MemAuditError
    from .saturations import install_saturations

    try:
        loaded, unloaded = [], list(unsendable)
        for name, blob in sats:
            try:
                loaded.append(loads_in_worker(blob, f"saturation {name!r}"))
            except MemAuditError as exc:
                unloaded.append((name, str(exc)))
        install_saturations(tuple(loaded), tuple(unloaded))
    except Exception as exc:  # noqa: BLE001 - said by every task, see above
        _INIT_PROBLEM = str(exc)
        return
    if initializer is not None:
        initializer(*initargs)


def _checked_call(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    if _INIT_PROBLEM is not None:
        from .errors import MemAuditError

        raise MemAuditError(_INIT_PROBLEM)
    return fn(*args, **kwargs)


#: Seconds between two looks at the parent where the platform cannot wait on it (no pidfd).
PARENT_POLL_S = 1.0


def watch_parent() -> bool:
    """End this pool worker as soon as the process that made the pool is gone.

    A ``ProcessPoolExecutor`` worker never learns that its parent died: it holds both ends of
    its task queue, and a ``forkserver`` worker also holds the forkserver's liveness pipe, so
    the forkserver stays too. After ``kill`` (SIGTERM) or ``kill -9`` of ``memaudit sweep
    --workers 2`` (QA, session 19), the forkserver and both workers stayed forever, holding the
    command's stdout and stderr, so ``$(memaudit ...)``, ``| tee`` and
    ``subprocess.communicate`` never saw the end of its output. A daemon thread waits on the
    parent (a pidfd where Linux has it, else a poll every :data:`PARENT_POLL_S` s) and ends
    this process, and anything it started (a guarded HiGHS child), when the parent exits.
    Returns False when there is no parent process to watch (not a multiprocessing child).
    """
    import threading

    parent = multiprocessing.parent_process()
    if parent is None or parent.pid is None:
        return False
    pid = parent.pid
    pidfd = None
    if hasattr(os, "pidfd_open"):
        try:
            pidfd = os.pidfd_open(pid)
        except ProcessLookupError:
            _die_orphaned()
        except OSError:  # an old kernel or a sandbox without the syscall: poll instead
            pidfd = None

    def watch() -> None:
        if pidfd is not None:
            import select

            select.select([pidfd], [], [])  # readable once the parent has exited
            _die_orphaned()
        while _pid_alive(pid):
            time.sleep(PARENT_POLL_S)
        _die_orphaned()

    threading.Thread(target=watch, name="memaudit-parent-watch", daemon=True).start()
    return True


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else (the pid was reused): ours is gone
        return False
    return True


def descendants(pid: int | None = None) -> list[int]:
    """Every process below ``pid`` (default: this one), children first; Linux ``/proc`` only
    (elsewhere an empty list)."""
    pid = os.getpid() if pid is None else pid
    found: list[int] = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", encoding="ascii") as fh:
                kids = [int(k) for k in fh.read().split()]
        except (OSError, ValueError):
            continue
        for kid in kids:
            found.append(kid)
            found.extend(descendants(kid))
    return found


def kill_descendants() -> None:
    """SIGKILL every process this one started (and theirs), best effort."""
    for pid in descendants():
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def _die_orphaned() -> None:
    kill_descendants()
    os._exit(1)


def stop_pool(pool: ProcessPoolExecutor, *, abandon: bool) -> None:
    """Shut ``pool`` down; when the caller is abandoning it (an error, Ctrl-C), end its workers.

    ``shutdown(cancel_futures=True)`` cancels only the tasks still queued here: the ones
    already handed to the workers (up to workers + 1) run to their end, which for an exact
    solve without a time limit can be minutes. Ctrl-C on ``memaudit audit --workers 2`` waited
    for them. Terminating the workers first makes the shutdown immediate.
    """
    if abandon:
        for proc in list((getattr(pool, "_processes", None) or {}).values()):
            proc.terminate()
    pool.shutdown(wait=True, cancel_futures=True)


def chunk_spans(
    n_items: int, slots: int, per_slot: int, max_size: int | None = None
) -> list[tuple[int, int]]:
    """Contiguous chunks of ``n_items`` as ``(start, end)`` spans: about ``per_slot`` chunks
    per worker slot, at most ``max_size`` items each (``None``: no cap), sizes differing by
    one at most.

    A pool hands chunks out as workers free up, so the work left when the first worker runs
    dry is about one chunk: more chunks leave less of the end to one worker, and each costs a
    task's round trip (its pickles and a queue hop, about a millisecond).

    >>> chunk_spans(10, 2, 2)
    [(0, 3), (3, 6), (6, 8), (8, 10)]
    >>> chunk_spans(3, 4, 4), chunk_spans(0, 2, 4)
    ([(0, 1), (1, 2), (2, 3)], [])
    >>> chunk_spans(100, 1, 2, max_size=30)
    [(0, 25), (25, 50), (50, 75), (75, 100)]
    """
    if n_items <= 0:
        return []
    n_chunks = min(n_items, max(1, slots) * max(1, per_slot))
    if max_size is not None:
        n_chunks = max(n_chunks, math.ceil(n_items / max(1, max_size)))
    size, extra = divmod(n_items, n_chunks)
    spans, start = [], 0
    for k in range(n_chunks):
        end = start + size + (k < extra)
        spans.append((start, end))
        start = end
    return spans


def loads_gc_paused(blob: bytes) -> Any:
    """``pickle.loads(blob)`` with the cyclic garbage collector paused.

    Loading a chunk of packages allocates tens of thousands of objects, none of them garbage,
    and each 700 allocations set off a collection that walks them: a worker loaded 63
    memaudit-small packages in 5-7 ms paused and in 50-70 ms when an old-generation
    collection came (``bench/RESULTS.md``, issue 7, fifty-fifth session).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return pickle.loads(blob)
    finally:
        if was_enabled:
            gc.enable()


def check_workers(workers: object, option: str = "workers") -> int:
    """``workers`` as an int >= 1, or :class:`~memaudit_core.errors.UsageError`."""
    from .errors import UsageError, cut_repr

    try:
        ok = not isinstance(workers, bool) and int(workers) == workers and workers >= 1
    except (TypeError, ValueError, OverflowError):
        ok = False
    if not ok:
        raise UsageError(f"{option} must be an integer >= 1, got {cut_repr(workers)}")
    return int(workers)


def worker_died(what: str, exc: BaseException) -> MemAuditError:
    """The user-facing error for a dead pool worker (usually a script without a main guard).

    Returns a :class:`~memaudit_core.errors.MemAuditError`; raise it ``from`` ``exc``.
    """
    from .errors import MemAuditError

    return MemAuditError(
        f"a worker process of the {what} died ({exc}); when calling with workers > 1 from a "
        "script, guard its entry point with `if __name__ == '__main__':`"
    )


__all__ = [
    "PRELOAD",
    "SolverPool",
    "check_workers",
    "chunk_spans",
    "descendants",
    "dumps_for_workers",
    "kill_descendants",
    "loads_gc_paused",
    "loads_in_worker",
    "pool_context",
    "watch_parent",
    "worker_died",
]
