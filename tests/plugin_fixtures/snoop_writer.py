"""A hostile blind writer: it tries every route it can think of to hidden package data.

The test package hides a marker (``NEEDLE``) in what a blind writer must not see — unit ids and
texts, query texts and answers, the package's title, description and meta, and the directory
of the package file — plus two distinctive numbers: a unit weight (``SECRET_WEIGHT``) and a
coverage value (``SECRET_COVERAGE``). Visible texts (experiences, candidates) never contain
them. The writer looks for them, and for anything shaped like hidden data (dicts keyed
``coverage`` / ``weight`` / ``units`` / ``queries``, objects with such attributes, package or
compiled-instance objects, float arrays), through:

- the view: a breadth-first walk over everything reachable from it (``gc.get_referents``: its
  fields, classes, their modules, module globals, functions' globals and closures, ...);
- ``gc.get_objects()``;
- ``sys.modules`` (memaudit_core.package / compiled / analysis / writers, numpy, scipy);
- ``sys.argv`` / ``sys.orig_argv``, ``os.environ``, the cwd;
- open file descriptors (``/proc/self/fd``, and fds 0-255 directly), reading regular files;
- the parent process: ``/proc/<ppid>/cmdline``, ``environ``, ``fd`` and its memory
  (``/proc/<ppid>/mem`` through ``maps``);
- the filesystem: ``/tmp`` (where the test keeps the package) and the parent's cwd.

It returns one "candidate id", ``SNOOP-REPORT:<json>``, which the parent rejects as an unknown
id; the test reads the report from the error's ``offending`` ids. :func:`scan` also runs in the
test process itself as a positive control (there it must find the data).
"""

from __future__ import annotations

import gc
import json
import os
import sys

# Built at run time so the module's own constants do not contain the needle.
NEEDLE = "ZQX" + "SECRET" + "7Q"
SECRET_WEIGHT = 7312468 / 1e7  # 0.7312468
SECRET_COVERAGE = 6187 / 1e4  # 0.6187
SUSPICIOUS_KEYS = frozenset(
    {"coverage", "weight", "weights", "units", "queries", "requires", "unit_ids", "unit_kinds"}
)
HIDDEN_TYPES = frozenset({"Package", "CompiledInstance", "Unit", "Query", "Candidate", "Store"})
MAX_NODES = 400_000


def _hide(text: str) -> str:
    return text.replace(NEEDLE, "<NEEDLE>")[:160]


class _Finder:
    def __init__(self) -> None:
        self.found: list[dict[str, str]] = []
        self.routes: dict[str, str] = {}

    def hit(self, route: str, what: str) -> None:
        if len(self.found) < 200:
            self.found.append({"route": route, "what": _hide(what)})

    def check(self, route: str, obj: object) -> None:
        if obj is NEEDLE or obj is SECRET_WEIGHT or obj is SECRET_COVERAGE:
            return  # this module's own search terms
        if isinstance(obj, str):
            if NEEDLE in obj:
                self.hit(route, f"string {obj!r}")
        elif isinstance(obj, bytes):
            if NEEDLE.encode() in obj:
                self.hit(route, f"bytes {obj[:120]!r}")
        elif isinstance(obj, float):
            if obj in (SECRET_WEIGHT, SECRET_COVERAGE):
                self.hit(route, f"secret number {obj!r}")
        elif isinstance(obj, dict):
            keys = {k for k in obj if isinstance(k, str)} & SUSPICIOUS_KEYS
            if keys and obj is not vars(sys.modules[__name__]):
                self.hit(route, f"dict with keys {sorted(keys)}: {sorted(map(str, obj))[:12]}")
        else:
            cls = type(obj)
            if cls.__name__ in HIDDEN_TYPES and cls.__module__.startswith("memaudit_core"):
                self.hit(route, f"object of {cls.__module__}.{cls.__name__}")
            names = set(getattr(obj, "__dict__", {}) or {}) if not isinstance(obj, type) else set()
            if names & SUSPICIOUS_KEYS:
                self.hit(route, f"{cls.__name__} with attributes {sorted(names & SUSPICIOUS_KEYS)}")
            if cls.__name__ == "ndarray" and getattr(obj, "dtype", None) is not None:
                if getattr(obj.dtype, "kind", "") == "f" and obj.size:
                    self.hit(route, f"float array of shape {obj.shape}")


def _walk_from(finder: _Finder, roots: list[object], route: str) -> int:
    """Breadth-first over gc.get_referents from the roots; returns the node count."""
    seen: set[int] = set()
    frontier = list(roots)
    n = 0
    own = {id(finder), id(finder.found), id(seen), id(frontier)}
    while frontier and n < MAX_NODES:
        nxt: list[object] = []
        for obj in frontier:
            if id(obj) in seen or id(obj) in own:
                continue
            seen.add(id(obj))
            n += 1
            finder.check(route, obj)
            try:
                nxt.extend(gc.get_referents(obj))
            except Exception:  # noqa: BLE001
                pass
            if isinstance(obj, type):  # classes -> their modules
                mod = sys.modules.get(obj.__module__)
                if mod is not None:
                    nxt.append(mod)
        frontier = nxt
    return n


def _read_proc(finder: _Finder, path: str, route: str, limit: int = 1 << 20) -> None:
    try:
        with open(path, "rb") as fh:
            data = fh.read(limit)
    except OSError as exc:
        finder.routes[route] = f"denied ({type(exc).__name__})"
        return
    finder.routes[route] = "read"
    finder.check(route, data)
    if b".json" in data:
        finder.hit(route, f"mentions a .json file: {data[:160]!r}")


def _scan_memory(finder: _Finder, pid: int, route: str, budget: int = 1 << 30) -> None:
    try:
        with open(f"/proc/{pid}/maps") as fh:
            maps = fh.read().splitlines()
        mem = open(f"/proc/{pid}/mem", "rb")  # noqa: SIM115
    except OSError as exc:
        finder.routes[route] = f"denied ({type(exc).__name__})"
        return
    scanned = 0
    needle = NEEDLE.encode()
    with mem:
        for line in maps:
            parts = line.split()
            if len(parts) < 2 or "r" not in parts[1]:
                continue
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            if hi - lo > budget - scanned:
                continue
            try:
                mem.seek(lo)
                chunk = mem.read(hi - lo)
            except (OSError, OverflowError, ValueError):
                continue
            scanned += len(chunk)
            if needle in chunk:
                finder.hit(route, f"needle in parent memory region {parts[0]}")
                break
    finder.routes[route] = f"read {scanned} bytes"


def _scan_fds(finder: _Finder) -> None:
    try:
        names = os.listdir("/proc/self/fd")
        finder.routes["fd_list"] = f"listed {len(names)}"
        for name in names:
            try:
                target = os.readlink(f"/proc/self/fd/{name}")
            except OSError:
                continue
            finder.check("fd_list", target)
            if target.endswith(".json"):
                finder.hit("fd_list", f"open .json file {target}")
    except OSError as exc:
        finder.routes["fd_list"] = f"denied ({type(exc).__name__})"
    import stat

    opened = 0
    for fd in range(256):
        try:
            st = os.fstat(fd)
        except OSError:
            continue
        opened += 1
        if stat.S_ISREG(st.st_mode):
            try:
                finder.check("fd_read", os.pread(fd, 1 << 22, 0))
            except OSError:
                pass
    finder.routes["fd_fstat"] = f"{opened} open fds"


def _scan_fs(finder: _Finder, roots: list[str]) -> None:
    for root in roots:
        n = 0
        try:
            os.listdir(root)  # os.walk hides a refusal
            for dirpath, dirnames, filenames in os.walk(root):
                if dirpath.count(os.sep) - root.count(os.sep) > 5:
                    dirnames[:] = []
                for name in [*dirnames, *filenames]:
                    n += 1
                    if NEEDLE in name:
                        finder.hit("fs", f"path {os.path.join(dirpath, name)}")
                    if name.endswith(".json") and NEEDLE in dirpath:
                        try:
                            with open(os.path.join(dirpath, name), "rb") as fh:
                                finder.check("fs", fh.read(1 << 22))
                        except OSError:
                            pass
                if n > 50_000:
                    break
            finder.routes[f"fs:{root}"] = f"walked {n} names"
        except OSError as exc:
            finder.routes[f"fs:{root}"] = f"denied ({type(exc).__name__})"


def scan(view: object | None = None, *, parent: bool = True, filesystem: bool = True) -> dict:
    """Run every probe; the report lists what was found and which routes were open."""
    finder = _Finder()
    loaded = sorted(
        m for m in sys.modules if m.split(".")[0] in ("memaudit_core", "numpy", "scipy")
    )
    report: dict[str, object] = {"modules": loaded, "pid": os.getpid(), "ppid": os.getppid()}
    hidden = [
        m
        for m in (
            "memaudit_core.package",
            "memaudit_core.compiled",
            "memaudit_core.analysis",
            "memaudit_core.writers",
            "memaudit_core.objective",
            "numpy",
            "scipy",
        )
        if m in sys.modules
    ]
    if hidden:
        finder.hit("sys.modules", f"loaded: {hidden}")
    if view is not None:
        report["view_nodes"] = _walk_from(finder, [view, type(view)], "view_walk")
    objs = gc.get_objects()
    report["gc_objects"] = len(objs)
    for obj in objs:
        finder.check("gc", obj)
        if isinstance(obj, dict | list | tuple | set | frozenset):
            try:
                items = list(obj.items()) if isinstance(obj, dict) else list(obj)
            except Exception:  # noqa: BLE001
                continue
            for item in items[:10_000]:
                if isinstance(item, tuple) and len(item) == 2 and isinstance(obj, dict):
                    finder.check("gc", item[0])
                    finder.check("gc", item[1])
                elif isinstance(item, str | bytes | float):
                    finder.check("gc", item)
    del objs
    report["modules_walk_nodes"] = _walk_from(finder, [sys.modules], "sys.modules_walk")
    for arg in [*sys.argv, *getattr(sys, "orig_argv", [])]:
        finder.check("argv", arg)
        if arg.endswith(".json"):
            finder.hit("argv", f"argument {arg}")
    report["argv"] = [a[:80] for a in getattr(sys, "orig_argv", sys.argv)]
    for key, value in os.environ.items():
        finder.check("environ", f"{key}={value}")
        if ".json" in value:
            finder.hit("environ", f"{key}={value}")
    report["environ_keys"] = sorted(os.environ)
    report["cwd"] = os.getcwd()
    finder.check("cwd", os.getcwd())
    try:
        report["cwd_listing"] = sorted(os.listdir("."))[:20]
    except OSError as exc:
        report["cwd_listing"] = f"denied ({type(exc).__name__})"
    _scan_fds(finder)
    if parent:
        ppid = os.getppid()
        _read_proc(finder, f"/proc/{ppid}/cmdline", "parent_cmdline")
        _read_proc(finder, f"/proc/{ppid}/environ", "parent_environ")
        try:
            links = [os.readlink(f"/proc/{ppid}/fd/{n}") for n in os.listdir(f"/proc/{ppid}/fd")]
            finder.routes["parent_fds"] = f"listed {len(links)}"
            for link in links:
                finder.check("parent_fds", link)
        except OSError as exc:
            finder.routes["parent_fds"] = f"denied ({type(exc).__name__})"
        try:
            finder.check("parent_cwd", os.readlink(f"/proc/{ppid}/cwd"))
            finder.routes["parent_cwd"] = "read"
        except OSError as exc:
            finder.routes["parent_cwd"] = f"denied ({type(exc).__name__})"
        _scan_memory(finder, ppid, "parent_memory")
    if filesystem:
        _scan_fs(finder, ["/tmp"])
    report["routes"] = finder.routes
    report["found"] = finder.found
    return report


def snoop(view):
    """The writer: scan, then report through an (invalid) candidate id."""
    return ["SNOOP-REPORT:" + json.dumps(scan(view), default=str)]
