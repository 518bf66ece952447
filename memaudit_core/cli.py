"""The ``memaudit`` command (also ``python -m memaudit_core``).

Human-readable output by default, one JSON object on stdout with ``--json``. User mistakes
(missing file, bad package, unknown writer, bad option) print a clear message on stderr and exit
with status 2; a package that fails validation prints one line per problem. ``--debug`` shows
tracebacks for unexpected errors.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import errno
import functools
import json
import math
import os
import re
import shlex
import sys
import textwrap
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from .errors import (
    NORMAL_MIN_TEXT,
    InvalidPackagesError,
    MemAuditError,
    PackageError,
    ParamError,
    ResultError,
    SolverDisagreementError,
    UnknownNameError,
    UsageError,
    cut_repr,
    display_width,
    fill_display,
    id_text,
    pad_display,
)
from .specs import (
    ABLATIONS,
    AUDIT_POOL_NAMES,
    POOL_NAMES,
    SOLVER_CHOICES,
    parse_number_list,
    parse_params,
    parse_seeds,
)

# The ``--json`` shapes' version lives with the result version: read_result checks it.
from .versions import JSON_OUTPUT_VERSION

if TYPE_CHECKING:
    from .package import Package
    from .suites import PackageSource

EXIT_USER_ERROR = 2
#: Exit status of an audit whose verdict is FAIL or NOTHING CHECKED (and of a disagreement
#: between the exact engines in any command).
EXIT_NOT_PASSED = 1
#: Exit status of a suite run (``sweep`` or ``audit``) that stopped with tasks left
#: (``--max-tasks``), and of ``show`` of one: its result is partial, and the same command with
#: the same ``--out`` resumes it (s52: an INCOMPLETE audit exited 0, which a CI script read as
#: a pass). Apart from 1 so that a script can tell "run it again" from "it failed".
EXIT_INCOMPLETE = 3
#: Exit status after Ctrl-C (128 + SIGINT), as shells report it.
EXIT_INTERRUPTED = 130
#: Exit status after SIGTERM (128 + SIGTERM): ``kill``, ``timeout``, a CI runner's cancel.
EXIT_TERMINATED = 143


# --------------------------------------------------------------------------- parsing helpers


DEFAULT_BUDGET_HELP = (
    "default: the package's budget, else 10%% of the total candidate cost rounded up (to a "
    "whole number, or to 2 significant digits below 1); the value used is printed"
)


class _Once(argparse.Action):
    """An option that may be given once (argparse would silently keep the last of two).

    QA s39 (defect 4): ``--budget 6 --budget 7``, ``--solver enum --solver milp`` and
    ``--budgets 2 --budgets 4`` kept the last value without a word. :class:`_Parser` gives
    this action to every option that takes one value, in every command. Which options were
    given is kept in the namespace, so an option with a default (``--solver auto``) is
    caught too.
    """

    GIVEN = "_once_given"

    def __call__(self, parser, namespace, values, option_string=None):  # type: ignore[override]
        given: dict[str, Any] | None = getattr(namespace, self.GIVEN, None)
        if given is None:
            given = {}
            setattr(namespace, self.GIVEN, given)
        if self.dest in given:
            shown = " and ".join(_once_value(v) for v in (given[self.dest], values))
            hint = (
                "score one writer or store per call"
                if self.dest in ("writer", "store")
                else "give it once"
            )
            parser.error(f"{option_string} given twice ({shown}); {hint}")
        given[self.dest] = values
        setattr(namespace, self.dest, values)


def _once_value(value: Any) -> str:
    """A value of an option given twice, as typed: 6 (not 6.0), 'enum'."""
    if isinstance(value, float):
        return f"{value:.10g}"  # a budget's ten digits: 99.9999999 is not "100"
    return repr(value) if isinstance(value, str) else str(value)


def _split_names(text: str | None, flag: str) -> list[str]:
    # A name given twice is one name (two identical sweep rows would double n). '' is an
    # empty list ("no writers"), but an empty item is a typo, as in --budgets (CLI QA).
    if text is None or not text.strip():
        return []
    parts = [t.strip() for t in text.split(",")]
    if not all(parts):
        raise UsageError(f"{flag}: empty item in {text!r}; names are separated by single commas")
    _note_repeats(parts, flag)
    return list(dict.fromkeys(parts))


def _note_repeats(items: Sequence[Any], flag: str) -> None:
    """Say on stderr which items a list gives twice: they run once (researcher QA: "3,3" and
    "gvt,gvt" were merged without a word)."""
    twice = [x for x, n in Counter(items).items() if n > 1]
    if twice:
        shown = ", ".join(f"{x:.10g}" if isinstance(x, float) else str(x) for x in twice)
        print(
            f"memaudit: note: {flag} gives {shown} more than once; each runs once", file=sys.stderr
        )


def _budget_list(text: str) -> list[float]:
    """``--budgets`` of sweep and audit (repeats noted; they run once)."""
    budgets = parse_number_list(text)  # refuses bad items first; gives each budget once
    _note_repeats([b for part in text.split(",") for b in parse_number_list(part)], "--budgets")
    return budgets


class Progress:
    """A small progress bar on stderr, drawn only when it is worth it."""

    #: True while a bar is drawn without its closing newline (a message must start below it).
    line_open = False

    @classmethod
    def close_line(cls) -> None:
        if cls.line_open:
            sys.stderr.write("\n")
            cls.line_open = False

    def __init__(self, label: str, enabled: bool) -> None:
        self.label = label
        self.enabled = enabled
        self.last = 0.0
        self.start = time.perf_counter()
        self.drawn = False

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total <= 0:
            return
        now = time.perf_counter()
        if done < total and now - self.last < 0.2:
            return
        if not self.drawn and 0 < done < total and now - self.start < 0.5:
            return  # short runs finish before a bar would help
        # 0 / total is drawn at once: a one-worker family sweep calls again only when a whole
        # package is done, and printed nothing for minutes (CLI QA: a hang or a slow solve?).
        self.last = now
        width = 30
        filled = int(width * done / total)
        bar = "#" * filled + "-" * (width - filled)
        sys.stderr.write(f"\r{self.label} [{bar}] {done}/{total} {now - self.start:5.1f}s")
        Progress.line_open = done < total
        if done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()
        self.drawn = True


#: Seconds before a single solve's first progress line (then every PROGRESS_EVERY_S); the
#: environment variable MEMAUDIT_PROGRESS_AFTER sets another (``off``: none). The tests set
#: ``off``, so that in-process runs print only when a test asks.
PROGRESS_AFTER_S = 10.0
PROGRESS_EVERY_S = 30.0


def _progress_after() -> float | None:
    text = os.environ.get("MEMAUDIT_PROGRESS_AFTER", "").strip()
    if not text:
        return PROGRESS_AFTER_S
    if text.lower() in ("off", "never", "none"):
        return None
    try:
        after = float(text)
    except ValueError:
        raise UsageError(
            f"environment variable MEMAUDIT_PROGRESS_AFTER: {text!r} is not a number of "
            "seconds or 'off'"
        ) from None
    if not after >= 0 or math.isinf(after):
        raise UsageError(
            f"environment variable MEMAUDIT_PROGRESS_AFTER: {text!r} must be seconds >= 0 or 'off'"
        )
    return after


def _progress_line(
    command: str, time_limit: float | None
) -> Callable[[float, dict[str, Any]], None]:
    """The line a long single solve prints on stderr (CLI QA s43: an unlimited solve of
    48,000 candidates printed nothing for 15 minutes). On stderr, always, as the sweeps'
    progress bar (a log of a batch job shows where it stands); stdout, and so --json, is
    untouched. The hint comes on the first line of a run without --time-limit."""
    from .solvers import gap_text, relative_gap

    stream = sys.stderr
    hinted = [time_limit is not None]

    def emit(elapsed: float, status: dict[str, Any]) -> None:
        parts = [f"memaudit: {command} running {elapsed:.0f} s"]
        engine = status.get("engine")
        if engine:
            stage = status.get("stage")
            parts.append(f"engine {engine}" + (f" ({stage})" if stage else ""))
        scale = status.get("scale") or 1.0
        incumbent, bound = status.get("incumbent"), status.get("bound")
        known = [
            x / scale if x is not None and math.isfinite(x) else None for x in (incumbent, bound)
        ]
        if known[0] is not None:
            parts.append(f"incumbent {_fmt(known[0], 6)}")
        if known[1] is not None:
            parts.append(f"bound {_fmt(known[1], 6)}")
            if known[0] is not None:
                gap = relative_gap(known[0], known[1])
                parts.append(gap_text(known[0], gap, known[1]))
        line = ", ".join(parts)
        if not hinted[0]:
            hinted[0] = True
            line += "; --time-limit S stops with the best store found, its bound and gap"
        if time_limit is not None:
            line += f"; --time-limit {_fmt(time_limit)} s per engine run"
        with contextlib.suppress(OSError, ValueError, AttributeError):  # a closed stderr
            stream.write(line + "\n")
            stream.flush()

    return emit


def _solve_progress(command: str, time_limit: float | None) -> Any:
    """:func:`memaudit_core.heartbeat.watch` with :func:`_progress_line`, or nothing."""
    from .heartbeat import watch

    after = _progress_after()
    if after is None:
        return contextlib.nullcontext()
    every = min(PROGRESS_EVERY_S, max(after, 0.05) * 3)
    return watch(_progress_line(command, time_limit), after=after, every=every)


def _fmt(x: float | None, digits: int = 4) -> str:
    """A number as CLI text: :func:`~memaudit_core.solvers.value_text` for floats, n/a for None.

    >>> _fmt(6.0), _fmt(2.123456), _fmt(1e308), _fmt(None), _fmt(1.63e-11), _fmt(4e201 - 1e185)
    ('6', '2.1235', '1e+308', 'n/a', '1.63e-11', '4e+201')
    """
    if x is None:
        return "n/a"
    if isinstance(x, float):
        from .solvers import value_text

        return value_text(x, digits)
    return str(x)


def _id_list(ids: Sequence[str], limit: int = 25) -> str:
    if not ids:
        return "(nothing)"
    # An id with a newline would print as a line of its own (CLI QA: a fake output line), and
    # a 200,000-character id filled the terminal (QA s45).
    shown = ", ".join(map(id_text, ids[:limit]))
    more = len(ids) - limit
    return shown + (f", ... (+{more} more; --json lists all)" if more > 0 else "")


def _ratio3(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def _na_reasons(summary: Sequence[Any], kinds: dict[str, str], failed: Sequence[int]) -> str:
    """Why the summary's lines of n = 0 have no ratio, each reason with its count of lines
    (``failed``: each line's writer failures). QA s43: "OPT = 0 at that budget, or the writer
    failed" was printed for a store that was in none of the packages swept at those budgets.
    A line may have more than one reason."""
    counts = {"opt0": 0, "failed": 0, "absent": 0, "none": 0}
    for s, n_failed in zip(summary, failed, strict=True):
        if s.n:
            continue
        why = []
        if s.n_undefined:
            why.append("opt0")
        if n_failed:
            why.append("failed")
        if not why:
            why.append("absent" if kinds.get(s.method) == "store" else "none")
        for w in why:
            counts[w] += 1
    texts = {
        "opt0": "with OPT = 0 at that budget",
        "failed": "where the writer failed",
        "absent": "where the store is in none of the packages swept at that budget",
        "none": "with no row at that budget",
    }
    return ", ".join(f"{n} {texts[w]}" for w, n in counts.items() if n)


def sweep_packages_text(result: Any) -> str:
    """How many packages a sweep swept, as the live run and ``show`` of its file both say it:
    ``13 package(s) (10 distinct by content)`` for a CLI sweep, whose summary lines count
    every source (QA s49: ``show`` said the 10 distinct packages beside lines adding up to
    13); a library sweep's count of the packages it was given."""
    n_sources = getattr(result, "n_sources", None)
    if n_sources is None:
        return f"{result.n_packages} package(s)"
    return f"{n_sources} package(s) ({result.n_packages} distinct by content)"


def family_table(result: Any) -> str:
    """The per-family means of a sweep that pools several families, as a text block starting
    with a newline; '' for one family (paper-families QA: the terminal and ``show`` printed
    only the pooled mean, which matches no published row; report.md had the breakdown)."""
    from .analysis import no_interval_note
    from .suites import (
        family_lines,
        family_table_lead,
        fewer_packages_mark,
        method_label,
        says_units,
        unit_cell,
    )

    per_family = family_lines(result)
    if not per_family:
        return ""
    kinds = dict(getattr(result, "method_kinds", ()))
    units = says_units([s for _, s, _ in per_family])
    # A failed column when some writer failed (QA s49): a family's line of n = 0 says why.
    failed = bool(result.errors)
    rows = [
        [
            family,
            method_label(s.method, kinds),
            f"{s.budget:.10g}",  # a budget's ten digits (QA s47: 99.9999999 read 100)
            *([unit_cell(s.cost_unit)] if units else []),
            str(s.n),
            _ratio3(s.mean_ratio)
            + ("*" if s.n_uncertified else "")
            + fewer_packages_mark(s, n_failed),
            _interval_cell(s),
        ]
        + ([str(n_failed)] if failed else [])
        for family, s, n_failed in per_family
    ]
    table = f"\n{family_table_lead(result.rows)}; by family:\n" + _table(
        ["family", "method", "budget", *(["cost unit"] if units else []), "n", "mean ratio"]
        + ["95% CI"]
        + (["failed"] if failed else []),
        rows,
    )
    # Said once: under the summary table when some line of it is n/a too.
    why = no_interval_note(s for _, s, _ in per_family)
    return table + (f"\n95% CI: {why}" if why and not no_interval_note(result.summary) else "")


def _interval_cell(s: Any) -> str:
    """A summary line's 95% CI cell: n/a below MIN_CI_N ratios (QA s46) and without one."""
    from .analysis import shown_interval

    ci = shown_interval(s)
    return "n/a" if ci is None else f"[{_ratio3(ci[0])}, {_ratio3(ci[1])}]"


def summary_table(
    summary: Sequence[Any],
    kinds: Iterable[tuple[str, str]] = (),
    errors: Sequence[Any] = (),
    sweep_rows: Sequence[Any] = (),
) -> str:
    """The sweep summary (one line per method, budget and cost unit) as the CLI prints it;
    ``kinds`` is the result's ``method_kinds``: each method is labelled with its kind as
    report.md labels it, ``gvt (oracle)`` (QA s42 round 2, defect 1: the terminal said
    ``gvt``). ``errors`` are the result's writer failures, so a line of n = 0 says why it has
    none. The cost unit column says what each line's budget is an amount of (QA s44: 20 words
    and 20 chars were one line); a sweep saved before lines said it has none. ``sweep_rows``
    are the sweep's rows: the legend says when a line with a CI pools several families."""
    from .suites import (
        failures_per_line,
        fewer_packages_mark,
        fewer_packages_note,
        method_label,
        pooled_interval_note,
        says_units,
        unit_cell,
    )

    by_method = dict(kinds)
    units = says_units(summary)
    failed = failures_per_line(errors, summary)
    rows = [
        [
            method_label(s.method, by_method),
            f"{s.budget:.10g}",  # a budget's ten digits (QA s47: 99.9999999 read 100)
            *([unit_cell(s.cost_unit)] if units else []),
            str(s.n),
            _ratio3(s.mean_ratio)
            + ("*" if s.n_uncertified else "")
            + fewer_packages_mark(s, n_failed),
            _interval_cell(s),
            _ratio3(s.min_ratio),
            _ratio3(s.max_ratio),
        ]
        for s, n_failed in zip(summary, failed, strict=True)
    ]
    table = _table(
        ["method", "budget", *(["cost unit"] if units else []), "n", "mean ratio", "95% CI"]
        + ["min", "max"],
        rows,
    )
    # One footnote line: how many lines read n/a, and the rows the statistics leave out.
    n_na = sum(1 for s in summary if s.n == 0)
    n_undefined = sum(s.n_undefined for s in summary)
    parts = (
        [
            f"n/a: {n_na} of {len(summary)} lines have no defined ratio ("
            + _na_reasons(summary, by_method, failed)
            + ")"
        ]
        if n_na
        else []
    )
    n_starred = sum(1 for s in summary if s.n_uncertified)
    if n_starred:
        parts.append(
            f"*: {n_starred} line(s) rest partly on optima that were not certified (their "
            "ratios may be too high; the note below says why)"
        )
    if n_undefined:
        parts.append(
            f"{n_undefined} row(s) with OPT = 0 at their budget (F / OPT undefined) are left "
            "out of n, the means and the CIs"
        )
    fewer = fewer_packages_note(summary, failed)
    if fewer:
        parts.append(fewer)
    # QA: newcomers asked what the columns are; one legend line says it.
    from .analysis import BOOTSTRAP_TEXT, no_interval_note

    legend = "; ".join(
        [
            "ratio = F(store) / OPT per package; mean, min and max over the n packages; 95% CI: "
            + BOOTSTRAP_TEXT,
            *filter(None, [no_interval_note(summary), pooled_interval_note(sweep_rows, summary)]),
        ]
    )
    return "\n".join([table, legend, *(["; ".join(parts)] if parts else [])])


def _emit(obj: dict[str, Any], as_json: bool, human: str) -> None:
    global _OUTPUT_STATE
    listed = PACKAGE_WARNINGS.finish()
    if as_json:
        obj = {
            "json_output_version": JSON_OUTPUT_VERSION,
            "memaudit_version": _tool_version(),
            **obj,
            **({"package_warnings": listed} if listed is not None else {}),
        }
        _OUTPUT_STATE = "writing"
        json.dump(_json_safe(obj), _stdout(), indent=2, default=_json_default, allow_nan=False)
        _stdout().write("\n")
    else:
        _OUTPUT_STATE = "writing"
        _stdout().write(_terminal_safe(human.rstrip("\n")) + "\n")
    _OUTPUT_STATE = "written"


#: How far the command's one output on stdout got: None (not started), "writing" or
#: "written". A Ctrl-C once it has started must not add a second JSON object after it (QA s45:
#: a sweep's result cut mid-string was followed by ``{"error": ...}``).
_OUTPUT_STATE: str | None = None


def _interrupted_output(args: argparse.Namespace, word: str) -> str | None:
    """What stderr says of a Ctrl-C (``word``: interrupted / terminated) that came once the
    command's output had started on stdout, else None (nothing was written: the usual message
    and error object). The run had finished by then; a suite with ``--out`` has its tables and
    every task's result in that folder, and the same command prints the result again from the
    journal without running a task."""
    if _OUTPUT_STATE is None:
        return None
    if _OUTPUT_STATE == "written":
        return f"{word} after the result was written in full"
    what = "JSON" if getattr(args, "json", False) else "text"
    text = (
        f"{word} while the result was being written: the run had finished, but its {what} on "
        "stdout was cut off there"
    )
    out = getattr(args, "out", None)
    if out and args.command in ("sweep", "audit"):
        from .suites import JOURNAL

        return (
            f"{text}; the complete results are in {out} (report.md and the tables), and every "
            f"task is saved in {Path(out) / JOURNAL}: run the same command again to print the "
            "result without running any task again"
        )
    return (
        f"{text}; run the command again with stdout saved to a file (memaudit ... > "
        "result.json) to keep the whole result"
        + (": memaudit show result.json prints it again" if what == "JSON" else "")
    )


#: Control characters other than newline and tab, which a package's ids or texts could carry
#: to the terminal (CLI QA: an id holding ESC [31m recoloured it, one holding NUL was cut).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def _terminal_safe(text: str) -> str:
    r"""``text`` with control characters shown as escapes (``\x1b``), never sent raw.

    >>> _terminal_safe("upd\x1b[31m")
    'upd\\x1b[31m'
    """
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


#: The command's real stdout. While a command runs, Python-level ``print`` goes to stderr (see
#: :func:`main`), so that a plugin writer's prints cannot corrupt JSON or a package on stdout.
_STDOUT: Any = None


def _stdout() -> Any:
    return _STDOUT if _STDOUT is not None else sys.stdout


def _json_error(args: argparse.Namespace, exc: MemAuditError) -> None:
    """With ``--json``, a user error is one JSON object on stdout too (CLI QA: scripts got an
    empty stdout and had to parse stderr): ``{"error": {"type", "message", "file",
    "problems"}}``, problems as ``validate --json`` lists them."""
    if not getattr(args, "json", False):
        return
    _emit({"error": _error_object(exc)}, True, "")


#: The longest offending string an error object echoes (validation QA: a 1 MB string value
#: made 5.5 MB of --json output); longer ones are cut and say by how much.
ERROR_VALUE_CHARS = 1000


def _echoed(value: Any) -> Any:
    if isinstance(value, str) and len(value) > ERROR_VALUE_CHARS:
        return value[:ERROR_VALUE_CHARS] + f"... ({len(value) - ERROR_VALUE_CHARS:,} more chars)"
    return value


def _writer_module_errors_type() -> type:
    from .plugins import WriterModuleErrors

    return WriterModuleErrors


def _plugin_module_error_type() -> type:
    from .plugins import PluginModuleError

    return PluginModuleError


def _plugin_error_type() -> type:
    from .plugins import PluginWriterError

    return PluginWriterError


def _error_object(exc: MemAuditError) -> dict[str, Any]:
    error: dict[str, Any] = {"type": type(exc).__name__, "message": str(exc).split("\n")[0]}
    if isinstance(exc, InvalidPackagesError):
        # Every invalid file, each as a lone PackageError's object (not capped: the text is).
        error.update(
            invalid=len(exc.errors),
            packages=exc.n_packages,
            errors=[_error_object(e) for e in exc.errors],
        )
    elif isinstance(exc, PackageError):
        error["file"] = exc.source
        error["problems"] = [
            {"path": p.path, "rule": p.rule, "message": p.message, "value": _echoed(p.value)}
            for p in exc.problems
        ]
    elif isinstance(exc, ResultError):  # a saved result that cannot be read back (show)
        error["file"] = exc.source
        error["problems"] = [
            {
                "path": exc.path,
                "rule": exc.rule,
                "message": exc.detail,
                "value": _echoed(exc.value),
            }
        ]
    elif isinstance(exc, _plugin_module_error_type()):
        error["module"] = exc.module
    elif isinstance(exc, _writer_module_errors_type()):
        # QA s42 (defect 5): one object per failing --writer-module.
        error["errors"] = [_error_object(e) for e in exc.errors]
    elif isinstance(exc, _plugin_error_type()):
        # A plugin writer's failure, with the fields a sweep's errors carry (plugin QA:
        # score --json gave only its type and message).
        error.update(
            writer=exc.writer,
            budget=exc.budget,
            reason=exc.reason,
            offending=[_echoed(str(i)) for i in exc.offending[:1000]],
        )
    return error


@functools.cache
def _tool_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("memaudit")
    except PackageNotFoundError:  # run from a source tree without an install
        return "unknown"


def _json_safe(o: Any) -> Any:
    """``o`` with every non-finite float as the string "NaN", "Infinity" or "-Infinity".

    Python's json writes bare NaN / Infinity, which strict parsers (JavaScript's JSON.parse,
    jq) refuse; ``validate --json`` echoes such values from the input it rejects.

    >>> _json_safe({"value": float("nan"), "ok": [1.5, float("-inf")]})
    {'value': 'NaN', 'ok': [1.5, '-Infinity']}
    """
    if isinstance(o, float):
        if math.isfinite(o):
            return o
        return "NaN" if o != o else ("Infinity" if o > 0 else "-Infinity")
    if isinstance(o, dict):
        return {k: _json_safe(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_json_safe(v) for v in o]
    if hasattr(o, "to_dict"):
        return _json_safe(o.to_dict())
    if hasattr(o, "tolist"):
        return _json_safe(o.tolist())
    return o


def _json_default(o: Any) -> Any:
    if hasattr(o, "to_dict"):
        return o.to_dict()
    if hasattr(o, "tolist"):
        return o.tolist()
    if isinstance(o, set | frozenset | tuple):
        return list(o)
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def _table(headers: list[str], rows: list[list[str]]) -> str:
    # A newline or tab in an id split the row (validation QA): such cells print as repr.
    rows = [[c if c.isprintable() else repr(c) for c in row] for row in rows]
    # Widths in terminal columns, not characters (QA s51: a CJK id took twice its len(), and
    # every column after it was shifted). Every text table of the CLI is made here.
    widths = [display_width(h) for h in headers]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], display_width(cell))
    line = "  ".join(pad_display(h, w) for h, w in zip(headers, widths, strict=True))
    out = [line, "  ".join("-" * w for w in widths)]
    for row in rows:
        out.append("  ".join(pad_display(c, w) for c, w in zip(row, widths, strict=True)))
    return "\n".join(out)


# --------------------------------------------------------------------------- commands


def cmd_validate(args: argparse.Namespace) -> int:
    try:
        pkg = _load(args.package, warn=False)  # said below, every one, with the artifact's
    except PackageError as exc:
        args._exit_code = EXIT_USER_ERROR  # kept if the reader closes the pipe (`| head`)
        if args.json:  # the verdict's keys, and the error object every command emits
            error = _error_object(exc)
            _emit(
                {"valid": False, "file": exc.source, "problems": error["problems"], "error": error},
                True,
                "",
            )
        for line in exc.lines():
            print(line, file=sys.stderr)
        return EXIT_USER_ERROR
    warnings = list(pkg.warnings)
    if not str(args.package).lower().endswith(".json") and pkg.meta.get("source_format") == (
        "artifact"
    ):
        # An artifact read now: its reader's notes (a field typo, a manifest not read) are
        # this validation's (validation QA: they went only into the package meta).
        notes = pkg.meta.get("warnings", [])
        warnings = [*(notes if isinstance(notes, list) else [notes]), *warnings]
    summary = {
        "valid": True,
        "file": _file_name(args.package),
        "id": pkg.id,
        "content_hash": pkg.content_hash(),
        "experiences": len(pkg.experiences),
        "candidates": len(pkg.candidates),
        "units": len(pkg.units),
        "queries": len(pkg.queries),
        "stores": len(pkg.stores),
        "total_cost": pkg.total_cost(),
        "warnings": warnings,
        "warning_details": _warning_details(warnings),
    }
    human = (
        # The full content hash (QA s51 m3: only --json gave it, so checking a file against
        # a published 64-digit hash took Python).
        f"{_file_name(args.package)}: valid package {pkg.id!r} (content hash "
        f"{pkg.content_hash()}) — {_package_counts(pkg)}; "
        # Ten digits, as budgets (QA s47: four decimals read 99.9999999 as 100); not
        # amount_text: importing analysis would double validate's start-up time.
        f"total cost {pkg.total_cost():.10g} {pkg.cost_unit}"
    )
    # Every one: validate is the command that says a package's warnings in full.
    print_warnings(_file_name(args.package), warnings, limit=None)
    _emit(summary, args.json, human)
    return 0


#: What a package read from stdin (``-``) is called in every output and message.
STDIN_NAME = "<stdin>"

#: At most this many warnings of one package are printed (the rest are counted), and the
#: warnings of at most this many packages per command (a folder of 300 packages would bury the
#: report): ``--json`` lists them all.
MAX_WARNINGS_PER_FILE = 20
MAX_WARNED_FILES = 5


def print_warnings(
    source: str, warnings: Sequence[str], limit: int | None = MAX_WARNINGS_PER_FILE
) -> None:
    """``SOURCE: warning: TEXT`` on stderr (control characters escaped) for the first
    ``limit`` warnings (None: all), then how many more there are."""
    shown = list(warnings) if limit is None else list(warnings[:limit])
    for w in shown:
        print(_terminal_safe(f"{source}: warning: {w}"), file=sys.stderr)
    if len(warnings) > len(shown):
        print(
            _terminal_safe(
                f"{source}: ... {len(warnings) - len(shown)} more warning(s) (--json lists "
                "them all)"
            ),
            file=sys.stderr,
        )


class PackageWarnings:
    """The warnings of the packages one command read (rule ``id-lookalike``,
    ``budgets-distinct``, ...), said once per file on stderr as ``validate`` says them, and
    listed in the command's ``--json`` object as ``package_warnings``: ``[{"file", "warnings"}]``,
    validate's two keys, for each file that has some.

    QA s45: only ``validate`` and ``import`` said them; ``solve``, ``score``, ``sweep`` and
    ``audit`` scored a package whose "c2" and "c2 " are two candidates without a word.
    ``--quiet`` (sweep, audit) keeps them off stderr; ``--json`` still lists them.
    """

    def __init__(self) -> None:
        self.reset()

    def reset(self, quiet: bool = False) -> None:
        #: None until the command reads a package: commands that read none get no key.
        self.by_file: dict[str, list[str]] | None = None
        self.quiet = quiet
        self.unshown = 0
        #: How many of :attr:`unshown` were generated (a family source), not files.
        self.unshown_generated = 0

    def start(self) -> None:
        """The command reads packages: its ``--json`` object lists their warnings."""
        if self.by_file is None:
            self.by_file = {}

    def __call__(self, source: str, warnings: Sequence[str], generated: bool = False) -> None:
        """Say ``source``'s warnings, unless this command said them already; ``generated``:
        ``source`` names a family's package, not a file."""
        self.start()
        assert self.by_file is not None
        if source in self.by_file or not warnings:
            return
        self.by_file[source] = list(warnings)
        if self.quiet:
            return
        if len(self.by_file) > MAX_WARNED_FILES:
            self.unshown += 1
            self.unshown_generated += generated
            return
        Progress.close_line()
        print_warnings(source, warnings)

    def finish(self) -> list[dict[str, Any]] | None:
        """Count the files not shown (once), and return the ``package_warnings`` list (None
        when the command read no package)."""
        if self.unshown:
            Progress.close_line()
            # A generated package has no file for validate (QA s45 review).
            hints = [
                *(["memaudit validate FILE says each"] if self.unshown_generated < self.unshown
                  else []),
                *(["memaudit generate FAMILY --seed N [--param K=V] | memaudit validate - "
                   "says each generated one"] if self.unshown_generated else []),
            ]  # fmt: skip
            print(
                f"memaudit: ... and {self.unshown} more package(s) with warnings (--json lists "
                f"them; {'; '.join(hints)})",
                file=sys.stderr,
            )
            self.unshown = self.unshown_generated = 0
        if self.by_file is None:
            return None
        return [
            {"file": f, "warnings": ws, "warning_details": _warning_details(ws)}
            for f, ws in self.by_file.items()
        ]


def _warning_details(warnings: Sequence[str]) -> list[dict[str, str | None]]:
    """``warning_details`` of a ``--json`` object: each warning's ``path``, ``rule`` and
    ``message``, to filter by rule (QA s51, cli defect 8). A package's warnings and the
    importers' notes all have a path and a rule; a note an older MemAudit saved in a package
    may have neither (null)."""
    from .package import warning_details

    return warning_details(warnings)


#: The one registry of the running command (reset by :func:`main`).
PACKAGE_WARNINGS = PackageWarnings()


def _file_name(path: str | None) -> str:
    """A package argument as outputs name it: ``-`` is :data:`STDIN_NAME`.

    QA s39 (defect 9): validate, solve and sweep called stdin "-" (``"file": "-"``, a sweep
    row's source), its package errors "<stdin>"; one name throughout now.
    """
    return STDIN_NAME if path == "-" else str(path)


def _load(path: str, warn: bool = True, budgets: Sequence[float] | None = None):
    """A package file; ``-`` reads the package from stdin (as ``-o -`` writes to stdout).
    Its warnings go to :data:`PACKAGE_WARNINGS` (``warn=False``: the caller says them), as a
    run at ``budgets`` says them (None: the package's default budget)."""
    from .package import warnings_at_budgets

    pkg = _read_package(path)
    if warn:
        at = [pkg.default_budget()] if budgets is None else budgets
        PACKAGE_WARNINGS(_file_name(path), warnings_at_budgets(pkg.warnings, pkg.budget, at))
    return pkg


def _read_package(path: str):
    from .package import load_package, loads_package

    if path == "-":
        if _STDIN_READ[0]:
            raise UsageError(
                f"{STDIN_NAME}: stdin holds one package and it was read already (- given twice)"
            )
        _STDIN_READ[0] = True
        if sys.stdin is None:  # started with stdin closed (CLI QA: an AttributeError)
            raise UsageError(
                f"{STDIN_NAME}: stdin is closed, so there is no package to read from it (-)"
            )
        return loads_package(sys.stdin.buffer.read(), STDIN_NAME)
    return load_package(path)


def _load_all(
    paths: Sequence[str],
    command: str,
    budgets: Sequence[float] | None = None,
    stores: Sequence[str] = (),
) -> list[Any]:
    """Every package file, or all the invalid ones reported together (QA s44: the first bad
    file stopped the command, so k bad files took k reruns). Their warnings are said as a
    run at ``budgets`` says them (None: each package's own grid), with the app's note on
    budgets above a package's total cost (QA s46: ``--budgets 1e308`` was silent), counted
    with the external ``stores`` swept (QA s47)."""
    from .package import budgets_above_total_note, warnings_at_budgets

    packages, invalid = [], []
    for path in paths:
        try:
            pkg = _load(path, warn=False)
        except PackageError as exc:
            invalid.append(exc)
            continue
        at = pkg.budget_grid() if budgets is None else budgets
        above_total = budgets_above_total_note(pkg, at, stores)
        PACKAGE_WARNINGS(
            _file_name(path),
            [*warnings_at_budgets(pkg.warnings, pkg.budget, at), *filter(None, [above_total])],
        )
        packages.append(pkg)
    if invalid:
        raise InvalidPackagesError(command, invalid, len(paths))
    return packages


#: Whether ``-`` (stdin) was read in this command (a second ``-`` would read nothing).
_STDIN_READ = [False]


def check_output_file(
    path: str | None,
    inputs: Sequence[str | None] = (),
    out: str | None = None,
    suffix: str | None = None,
) -> None:
    """Fail before any work when ``-o PATH`` cannot be written, or is one of ``inputs``
    (CLI QA: ``import locomo data.json -o data.json`` replaced the dataset with a package), or
    one of the files the command writes in its ``--out`` folder ``out``.

    QA (session 19): ``sweep -o /missing/rows.csv`` and ``generate -o`` into a read-only place
    said so only after the whole run. The file is opened for writing without truncating it
    (one that did not exist is removed again); devices and pipes (``/dev/stdout``) are left
    to the write itself. ``suffix`` is the one format the command writes (``.csv``, ``.json``):
    a file name with another suffix is refused (:func:`check_output_suffix`).
    """
    if path in (None, "-"):
        return
    if not path.strip():
        # Path("") is the working folder: "cannot write : Is a directory" (CLI QA s25).
        raise UsageError(
            f"-o {path!r}: an empty file name; give a file name, or leave -o out for stdout"
        )
    if path.endswith(tuple(sep for sep in (os.sep, os.altsep) if sep)):
        # QA s42 (defect 4): Path() drops a trailing "/", so `generate -o dir.json/` wrote a
        # file named dir.json and said "wrote dir.json/". -o names a file, never a folder.
        raise UsageError(
            f"-o {path}: the name ends with a path separator, so it names a folder; -o writes "
            "one file: give its name without the trailing separator (rule: output-file)"
        )
    target = Path(path)
    if out:
        from .suites import SUITE_FILES

        owned = {(Path(out) / name).resolve() for name in SUITE_FILES}
        figures = (Path(out) / "figures").resolve()
        resolved = target.resolve()
        if resolved in owned or figures in resolved.parents:
            raise UsageError(
                f"-o {path} is a file the run writes in --out {out} (its journal, report, "
                "rows, summary or figures): writing there would replace it; choose a file "
                "outside those"
            )
        if resolved.parent == Path(out).resolve() and not Path(out).exists():
            check_output_suffix(path, suffix)
            return  # the run creates --out first (a first run's -o out/rows-mine.csv)
    for source in inputs:
        if source in (None, "-"):
            continue
        try:
            same = target.exists() and os.path.samefile(target, source)
        except OSError:
            same = False
        if same:
            raise UsageError(
                f"-o {path} is the input file {source}: writing there would replace it; "
                "choose another output file"
            )
    check_output_suffix(path, suffix)  # after "is the input file", the graver mistake
    try:
        if target.exists():
            if target.is_file() or target.is_dir():  # a folder fails here: "Is a directory"
                with target.open("ab"):
                    pass
        else:
            os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            target.unlink()
    except OSError as exc:
        raise MemAuditError(f"cannot write {path}: {exc.strerror or exc}") from None


#: The format each command's ``-o FILE`` writes, by its file suffix.
OUTPUT_SUFFIXES = {"sweep": ".csv", "generate": ".json", "import": ".json"}


def check_output_suffix(path: str, suffix: str | None) -> None:
    """Refuse ``-o NAME`` whose suffix names another format than the one written.

    QA s41 (defect 2): ``sweep -o x.parquet`` wrote CSV text into x.parquet, which
    ``pd.read_parquet`` then failed on. One rule for every ``-o``: a name with a suffix must
    end in the command's format's suffix (any case); a name without one (``rows``) and a
    device or pipe (``/dev/stdout``) are written as given.
    """
    if suffix is None:
        return
    target = Path(path)
    given = target.suffix
    if not given or given.lower() == suffix:
        return
    if target.exists() and not target.is_file() and not target.is_dir():
        return  # a device or a pipe: no format in its name
    what = "CSV rows" if suffix == ".csv" else "a package JSON file"
    hint = (
        "; --out FOLDER writes rows.parquet and summary.parquet as well"
        if given.lower() == ".parquet" and suffix == ".csv"
        else ""
    )
    raise UsageError(
        f"-o {path}: -o writes {what} and no other format, so the file name must end in "
        f"{suffix}, not {given} (rule: output-suffix){hint}"
    )


def number_arg(
    minimum: float,
    *,
    above: bool = False,
    maximum: float | None = None,
    integer: bool = False,
    unit: str = "",
) -> Callable[[str], Any]:
    """The argparse ``type`` of a numeric option: a finite number (or a plain integer) that is
    >= ``minimum`` (> with ``above``) and at most ``maximum``.

    QA s43 (defect 1): ``--budget 1e309`` said "budget must be a finite number >= 0, got inf",
    naming neither the option nor what was typed (a library check ran on the parsed float).
    Refused here, argparse's message names the option and this one quotes the text typed;
    ``--json`` gives the UsageError object. ``unit`` words the number ("of seconds").

    >>> number_arg(0.0, above=True, unit=" of seconds")("2.5")
    2.5
    """
    from .specs import PLAIN_INT_RULE, TooSmallNumber, read_int, read_number

    kind = "an integer" if integer else f"a finite number{unit}"
    rule = f"{kind} {'>' if above else '>='} {minimum:g}"
    if maximum is not None:
        rule += f", at most {maximum:g}"

    def parse(text: str) -> Any:
        shown = cut_repr(text)
        try:
            value = read_int(text) if integer else read_number(text)
        except TooSmallNumber as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        except ValueError:
            written = PLAIN_INT_RULE if integer else "ASCII digits, as 2.5 or 1e-3, no '_'"
            raise argparse.ArgumentTypeError(f"must be {rule} ({written}), got {shown}") from None
        too_low = value <= minimum if above else value < minimum
        # NaN fails every comparison, so finiteness is checked by name.
        if not math.isfinite(value) or too_low or (maximum is not None and value > maximum):
            raise argparse.ArgumentTypeError(f"must be {rule}, got {shown}")
        return value if integer else value + 0.0  # -0 -> 0: echoed as "budget -0" (CLI QA)

    return parse


#: The types of the numeric options, one per rule (registries, not copies).
SECONDS = number_arg(0.0, above=True, unit=" of seconds")  # --time-limit, --total-time-limit
#: At most a day: inf and 1e308 overflowed a plugin worker's deadline (CLI QA).
WRITER_SECONDS = number_arg(0.0, above=True, maximum=86_400, unit=" of seconds")
COUNT = number_arg(1, integer=True)  # --workers, --max-tasks
_budget_number = number_arg(0.0)


def budget_arg(text: str) -> float:
    """``--budget``'s type: :func:`number_arg` >= 0, refusing a subnormal too (the package
    rule "normal": it has lost precision), and a number written too small to hold."""
    value = _budget_number(text)
    if 0 < value < sys.float_info.min:
        raise argparse.ArgumentTypeError(
            f"must be 0 or at least {NORMAL_MIN_TEXT} (a subnormal float has lost precision), "
            f"got {cut_repr(text)}"
        )
    return value


def seed_arg(text: str) -> int:
    """``--seed``'s type: an integer in plain ASCII digits (QA s40, defect 3: ``int`` read
    "1_0" as seed 10 and Arabic-Indic "٣" as 3, one package under several names)."""
    from .generators import seed_message
    from .specs import read_int

    try:
        seed = read_int(text)
    except ValueError:
        if text.isascii() and text.isdigit():
            # Digits past int()'s limit: said as such, not as a spelling (QA s48).
            from .generators import read_seed

            try:
                return read_seed(text)
            except MemAuditError as exc:
                raise argparse.ArgumentTypeError(str(exc)) from None
        raise argparse.ArgumentTypeError(
            f"a seed is an integer >= 0 written in ASCII digits 0-9 (no '_'), got {text!r} "
            "[rule: plain-number]"
        ) from None
    if seed < 0:
        # Said by argparse as "argument --seed: ...", as 'abc' is (QA s49: -1 was refused
        # later, naming neither the option nor a rule).
        raise argparse.ArgumentTypeError(seed_message(repr(text)))
    return seed


def _package_counts(pkg: Any) -> str:
    """``4 experiences, 18 candidates, 7 units, 1 query, 0 stores`` (CLI QA: "1 queries")."""
    parts = []
    for count, one, many in (
        (len(pkg.experiences), "experience", "experiences"),
        (len(pkg.candidates), "candidate", "candidates"),
        (len(pkg.units), "unit", "units"),
        (len(pkg.queries), "query", "queries"),
        (len(pkg.stores), "store", "stores"),
    ):
        parts.append(f"{count:,} {one if count == 1 else many}")
    return ", ".join(parts)


def _refuse_limits_of_exhaustive_solver(args: argparse.Namespace) -> None:
    """Refuse ``--solver enum`` or ``brute`` with a limit (``--time-limit``, and solve's
    ``--node-limit``, sweep's ``--total-time-limit``): those engines visit every store and
    take none. One rule for solve, score and sweep (s53: score and sweep ran ``--solver enum
    --time-limit 5`` as if it were limited, where solve refused it); a mistake in the
    arguments, so it names the command's help, as argparse's errors do."""
    if args.solver not in ("enum", "brute"):
        return
    given = [
        flag
        for flag, dest in (
            ("--node-limit", "node_limit"),
            ("--time-limit", "time_limit"),
            ("--total-time-limit", "total_time_limit"),
        )
        if getattr(args, dest, None) is not None
    ]
    # CLI QA: `solve --solver enum --node-limit 5` printed OPT; those engines take no limits.
    if given:
        raise UsageError(
            f"{args.command}: --solver {args.solver} visits every store and takes no "
            f"{' or '.join(given)} (it finishes or refuses the package); use bnb, milp or "
            f"auto for a limited run (see memaudit {args.command} --help)"
        )


def cmd_solve(args: argparse.Namespace) -> int:
    from .analysis import compile_cached
    from .solvers import solve

    _refuse_limits_of_exhaustive_solver(args)
    pkg = _load(args.package, budgets=None if args.budget is None else [args.budget])
    budget = pkg.default_budget() if args.budget is None else args.budget
    inst = compile_cached(pkg).pool_instance(args.pool)
    with _solve_progress("solve", args.time_limit):
        res = solve(
            inst,
            budget,
            solver=args.solver,
            time_limit=args.time_limit,
            node_limit=args.node_limit,
        )
    # The unit rides along, so that `show` prints the budget and costs with it.
    _emit(
        {**res.to_dict(), "cost_unit": pkg.cost_unit},
        args.json,
        _solve_human(res, _file_name(args.package), pkg.cost_unit),
    )
    return 0


def _solve_human(res: Any, where: str, cost_unit: str | None) -> str:
    """``solve``'s text for a :class:`~memaudit_core.solvers.SolveResult`; ``where`` names the
    package file (or the saved result), ``cost_unit`` is None when it is not known (``show``)."""
    from .shortrepr import cost_budget_text
    from .solvers import gap_text
    from .solvers.certify import certified_gap_text
    from .solvers.milp import bound_unproven, replaced_highs_bound

    cert = res.certificate
    unit = f" {cost_unit}" if cost_unit else ""
    # QA s47: four decimals printed a cost of 99.9999999 as 100 beside the same budget.
    cost, budget = cost_budget_text(res.cost, res.budget)
    lines = [
        f"package {res.package_id!r} ({where}), pool {res.pool}, budget {budget}{unit}",
        f"{res.label}: F = {_fmt(res.value, 6)}   cost {cost}   solver {res.solver}"
        f"   {res.time_s * 1000:.1f} ms",
    ]
    # QA s42 #1: a store above B inside the tolerance is said so; QA s46: so is an OPT
    # proven under a registered saturation only assumed concave.
    lines.extend(f"note: {n}" for n in res.notes)
    if not res.certified:
        # QA s48: "proven bound 29200000042.1, gap 0%" of a HiGHS proof the rule refuses on
        # ill-conditioned costs, beside a feasible store worth 29200000065.3: its bound is no
        # proof either (the reason says why; a saved result is judged by the same words).
        # QA s49: since, certification replaces that bound by a proven one; HiGHS's is named.
        highs = replaced_highs_bound(res)
        if bound_unproven(res):
            bound = f"HiGHS's bound {_fmt(res.bound, 6)} (no proof here), gap n/a"
        elif math.isfinite(res.bound):
            bound = (
                f"proven bound {_fmt(res.bound, 6)}"
                + (
                    f" (HiGHS's bound {_fmt(highs, 6)} is no proof here)"
                    if highs is not None
                    else ""
                )
                + ", "
                + gap_text(res.value, res.gap, res.bound)
            )
        else:
            bound = "no valid bound, " + gap_text(res.value, res.gap, res.bound)
        lines.append(
            f"NOT certified: status {res.status}, {bound}"
            + (f" — {cert.reason}" if cert and cert.reason else "")
        )
    else:
        # QA s42 #2: each engine's store's recomputed F, not HiGHS's objective (1250000000.375
        # for F = 1250000000, its 1e-9 feasibility tolerance); a report that differs is said
        # after, and the gap is named unless it is zero.
        proven = [c for c in cert.checks if c.status == "optimal"]
        checks = ", ".join(f"{c.engine}={_fmt(c.recomputed_value, 6)}" for c in proven)
        reported = "".join(
            f"; {c.engine} reported {_fmt(c.value, 6)}"
            for c in proven
            if _fmt(c.value, 6) != _fmt(c.recomputed_value, 6)
        )
        # "engines agree" only when a second engine ran (QA: it was said of a MILP alone) and
        # proved the same optimum: QA s42 round 2 #1, "enum=8.0625, bnb=6.8125 ... engines
        # agree" of a cross-check stopped at a limit. That check is said for what it is.
        # From the saved field, which read-back holds to the checks (QA s43: "engines agree"
        # was printed beside a certificate saying agreement false).
        agreed = ", engines agree" if cert.agreement else ", no second engine run"
        limited = [c for c in cert.checks if c.status != "optimal"]
        if limited:
            agreed = "".join(
                f", cross-check by {c.engine} stopped at a {c.status}: its store "
                f"{_fmt(c.recomputed_value, 6)}, its bound {_fmt(c.bound, 6)}, consistent but "
                "inconclusive"
                for c in limited
            )
        lines.append(
            f"certified: {checks} (proven optimal: {certified_gap_text(res.gap)}, F recomputed "
            f"on the store{agreed}{reported}{_special_proof(res)})"
        )
    lines.append("selected: " + _id_list(res.selected))
    return "\n".join(lines)


def _special_proof(res: Any) -> str:
    """``"; proof: ..."`` naming the proof of a certified result when it is not its engine's
    plain one (``PROOFS[res.solver]``), e.g. the MILP over counts of interchangeable blocks or
    a B&B warm start; "" for a plain proof.

    QA s42 round 2 (defect 2): the README says the certificate names the counts model, and
    only ``--json``'s ``certificate.proof`` did; the text said "proven optimal" alone.
    """
    from .solvers.certify import PROOFS

    proof = res.certificate.proof if res.certificate else ""
    plain = PROOFS.get(res.solver, "")
    # The proof starts with its engine's description; what follows ("; cross-checked by",
    # the gap) the certified line already says.
    if not proof or (plain and (proof == plain or proof.startswith(plain + "; "))):
        return ""
    # The longest description the proof starts with, or the whole proof when none does.
    heads = [text for text in PROOFS.values() if proof.startswith(text)]
    return f"; proof: {max(heads, key=len) if heads else proof}"


def _evaluation_human(ev: Any, cost_unit: str | None) -> str:
    """``score``'s text for a :class:`~memaudit_core.analysis.StoreEvaluation`."""
    from .explain import bucket_of, unit_word
    from .shortrepr import cost_budget_text

    # Both to the budget's ten significant digits, more where the cost would read as the
    # budget (QA s47: "cost used 100" at budget 99.9999999, as if over it).
    cost, budget = cost_budget_text(ev.cost, ev.budget)
    if cost_unit:
        cost = f"{cost} {unit_word(ev.cost, cost_unit)}"
        budget = f"{budget} {unit_word(ev.budget, cost_unit)}"
    lines = [
        f"{ev.title} on {ev.package_id!r} at budget {budget}",
        f"F = {_fmt(ev.value, 6)}   {ev.opt_label} = {_fmt(ev.opt_value, 6)}   "
        f"ratio = {ev.ratio_text}   cost used {cost}",
        "selected: " + _id_list(ev.selected),
        # Named by its label: an unproven store is not "the optimum" (CLI QA).
        ("optimum:  " if ev.opt_certified else f"{ev.opt_label} store: ")
        + _id_list(ev.opt_selected),
    ]
    for note in ev.notes:
        lines.append(f"note: {note}")
    # QA s39 (defect 8): after a limited solve the header said "incumbent" while the tables
    # still compared the store with "optimum"; they name what was compared.
    ref = "optimum" if ev.opt_certified else str(ev.opt_label)
    lines.append("")
    lines.append("value by unit kind")
    lines.append(
        _table(
            ["kind", "bucket", "weight", "store", ref, "lost"],
            [
                [
                    k.kind,
                    # The app's Compare page adds the kinds up by bucket (QA s49: its "other 0
                    # (lost 1)" was this table's "preference ... 1" under the same heading).
                    bucket_of(k.kind),
                    _fmt(k.weight, 3),
                    _fmt(k.store_value, 3),
                    _fmt(k.opt_value, 3),
                    _fmt(k.lost, 3),
                ]
                for k in ev.kind_rows
            ],
        )
    )
    lines.append(
        f"weight: the kind's total unit weight; store / {ref}: the F each earns on those units; "
        f"lost = {ref} - store (negative: the store earned more there); bucket: the group the "
        'app\'s Compare page adds the kind into (its "value by kind bucket")'
    )
    lost = list(ev.missed_units)  # QA s39: the core's verdict, relative to the value scale
    if lost:
        lines.append("")
        lines.append("units the store missed (by value lost)")
        lost.sort(key=lambda u: -u.lost)
        # What the optimum kept instead, as the app's "covered in OPT by" (QA s49); not in
        # an evaluation saved before session 49.
        instead = all(u.opt_covered_by is not None for u in lost)
        by = f"covered in {ev.opt_label} by"
        lines.append(
            _table(
                ["unit", "kind", "weight", "store cov", f"{ref[:3]} cov", "lost"]
                + ([by] if instead else []),
                [
                    [
                        # QA s45: 'u1 ' read as u1, which the store covers; a 300-character
                        # id made the column 300 wide.
                        id_text(u.unit_id),
                        u.kind,
                        _fmt(u.weight, 3),
                        _fmt(u.store_coverage, 3),
                        _fmt(u.opt_coverage, 3),
                        _fmt(u.lost, 3),
                    ]
                    + ([_covered_cell(u.opt_covered_by)] if instead else [])
                    for u in lost[:20]
                ],
            )
        )
        more = f"; {len(lost) - 20} more in --json" if len(lost) > 20 else ""
        lines.append(
            f"cov: the unit's summed coverage in the store / the {ref} (the saturation caps "
            f"what it is worth, e.g. min(1, cov) under cap1){more}"
            + (
                f"; {by}: the {ref}'s memories covering the unit (--json: opt_covered_by)"
                if instead
                else ""
            )
        )
    return "\n".join(lines)


def _covered_cell(ids: Sequence[str], shown: int = 2) -> str:
    """The first ``shown`` of ``ids`` in a table cell, each as lists name it (cut past 80
    characters: QA s45, a long id made the column as wide); --json lists them all, whole.

    >>> _covered_cell(["e4:update"]), _covered_cell(["a", "b", "c"])
    ('e4:update', 'a, b (+1 more)')
    """
    more = len(ids) - shown
    return ", ".join(map(id_text, ids[:shown])) + (f" (+{more} more)" if more > 0 else "")


def _registered_names(names: Sequence[str]) -> list[str]:
    """Writer names as registered: a ``MODULE:FUNCTION`` spec whose writer declares a name of
    its own is that name (QA s39: ``sweep --writers gvt,mod:rich`` stopped with an internal
    KeyError, as the sweep keyed its rows by the registered name ``fixture_rich``)."""
    from .writers import get_writer

    out = []
    for name in names:
        # Unknown names stay as given: the sweep names them with the list of known ones.
        out.append(get_writer(name).name if ":" in name else name)
    return list(dict.fromkeys(out))


def _plugin_writers(args: argparse.Namespace) -> list[str]:
    """Register ``--writer-module`` specs (and ``--writer-timeout``); return their names."""
    from . import plugins

    if getattr(args, "writer_timeout", None) is not None:  # checked by WRITER_SECONDS
        plugins.DEFAULT_TIMEOUT = float(args.writer_timeout)
        os.environ[plugins.WRITER_TIMEOUT_ENV] = repr(plugins.DEFAULT_TIMEOUT)
    specs = list(args.writer_module or ())
    # Every failing --writer-module in one run (QA s42, defect 5: only the first was named).
    names: list[str] = []
    failed: list[Any] = []
    for spec in specs:
        try:
            names.append(plugins.register_module_writer(spec).name)
        except plugins.PluginWriterError as exc:
            failed.append(exc)
    if len(failed) == 1:
        raise failed[0]
    if failed:
        raise plugins.WriterModuleErrors(failed)
    if specs:  # sweep pool processes (suites) register them again from the environment
        known = os.environ.get(plugins.WRITER_MODULES_ENV, "").split(",")
        merged = dict.fromkeys(filter(None, known + specs))
        os.environ[plugins.WRITER_MODULES_ENV] = ",".join(merged)
    return names


def _report_writer_failures(failures: Sequence[Any], debug: bool) -> None:
    """One stderr line per failing writer (first failure, with its count); tracebacks only
    with ``--debug``."""
    by_writer: dict[str, list[Any]] = {}
    for f in failures:
        by_writer.setdefault(f.writer, []).append(f)
    for fs in by_writer.values():
        first = fs[0]
        more = f" (failed on {len(fs)} package x budget cells in all)" if len(fs) > 1 else ""
        print(
            f"memaudit: writer error on {first.package_id}: {first.message}{more}", file=sys.stderr
        )
        if debug and first.traceback:
            print(first.traceback.rstrip("\n"), file=sys.stderr)


#: ``score`` options that only some of its modes read: flag -> (attribute, modes, what it does).
SCORE_MODE_OPTIONS = {
    "--cost-rule": ("cost_rule", ("external",), "sets the cost of an --external export's memories"),
    "--history": ("history", ("external",), "reads the history of an --external mem0 export"),
    "--label": ("label", ("external",), "names an --external export's store"),
    "--salience-field": (
        "salience_field",
        ("external", "store"),
        "orders an external store's memories (--external, or --store of an external store)",
    ),
    "--writer-module": ("writer_module", ("writer",), "registers plugin writers for --writer"),
    "--writer-timeout": ("writer_timeout", ("writer",), "limits a plugin writer's calls"),
}


def _refuse_unused_score_options(args: argparse.Namespace, mode: str) -> None:
    """A ``score`` option the chosen mode would silently ignore is a user error."""
    for flag, (attr, modes, what) in SCORE_MODE_OPTIONS.items():
        if getattr(args, attr, None) not in (None, []) and mode not in modes:
            raise UsageError(f"score: {flag} {what}; it does not apply to --{mode}")


def _refuse_unused_writer_timeout(args: argparse.Namespace, writers: Sequence[str]) -> None:
    """``--writer-timeout`` when none of ``writers`` is a blind plugin writer is a user error.

    QA s39 (defect 6): ``score --writer gvt --writer-timeout 5`` was accepted without a word,
    though only blind plugin writers (run in a worker) have a timeout; refused as the other
    options a run would ignore are (``--cost-rule`` with ``--writer``).
    """
    from .writers import get_writer

    if getattr(args, "writer_timeout", None) is None:
        return
    if any(get_writer(name).kind == "blind" for name in writers):
        return
    run_here = (
        f"the writers run here ({', '.join(writers)}) run in this process, without a timeout"
        if writers
        else "no writer runs here"  # QA s39: "the writers run here (none) run in ..."
    )
    raise UsageError(
        f"{args.command}: --writer-timeout limits the calls of a blind plugin writer (run in a "
        f"worker); {run_here}: drop --writer-timeout"
    )


def cmd_score(args: argparse.Namespace) -> int:
    from .explain import compare_view

    _refuse_limits_of_exhaustive_solver(args)
    external = args.external is not None or args.format is not None
    mode = "external" if external else "store" if args.writer is None and args.store else "writer"
    _refuse_unused_score_options(args, mode)
    if args.salience_field is not None and not args.salience_field.strip():
        # '' fell back to the memory's own salience without a word (CLI QA).
        raise UsageError("score: --salience-field needs a field name (e.g. meta.score)")
    if external:
        return _score_external(args)
    plugin_names = _plugin_writers(args)
    # One writer named twice is one writer (QA s39: the same --writer-module given twice was
    # told "give exactly one of --writer NAME, --store ID ...").
    if args.writer is None and args.store is None and len(set(plugin_names)) == 1:
        args.writer = plugin_names[0]
    unscored = [
        name
        for name, spec in zip(plugin_names, args.writer_module or (), strict=True)
        if args.writer not in (name, spec)
    ]
    if args.writer is not None and unscored:
        # CLI QA: `--writer gvt --writer-module mw:good` scored gvt and said nothing of good.
        raise UsageError(
            f"score: --writer {args.writer} scores one writer; --writer-module registered "
            f"{', '.join(map(repr, unscored))}, which would not be scored: drop the module or "
            "name its writer with --writer (sweep scores several)"
        )
    if (args.writer is None) == (args.store is None):
        raise UsageError(
            "score: give exactly one of --writer NAME, --store ID or --external EXPORT --format FMT"
        )
    if args.writer is not None:
        from .writers import get_writer

        # Labelled by its registered name and kind, as sweep, `memaudit writers` and the app
        # label it (QA s39, defect 7: `--writer h6named:named` was labelled with the spec, not
        # its @blind_writer name, and an oracle plugin was not called oracle); the kind is the
        # result's writer_kind, in the header as "NAME (kind)".
        args.writer = get_writer(args.writer).name
    _refuse_unused_writer_timeout(args, [args.writer] if args.writer else [])
    pkg = _load(args.package, budgets=None if args.budget is None else [args.budget])
    if args.store is not None:
        _check_store_id(pkg, args.store)
    if args.salience_field is not None and not pkg.store(args.store).is_external:
        raise UsageError(
            f"score: --salience-field orders an external store's memories; store {args.store!r} "
            "only selects package candidates"
        )
    budget = pkg.default_budget() if args.budget is None else args.budget
    with _solve_progress("score", args.time_limit):
        # The Compare view around the evaluation (one solve): its "why this score" paragraphs
        # are the text's last section, as `show` prints them for a saved Compare view (the
        # annotator read the tables but had to open the app for the words, s49).
        view = compare_view(
            pkg,
            budget,
            writer=args.writer,
            store_id=args.store,
            solver=args.solver,
            time_limit=args.time_limit,
        )
    ev = view.evaluation
    if ev.source_kind == "external" and not pkg.store(ev.store_id).select:
        result, human = _with_union(ev, pkg, args)
        _emit(result.to_dict(), args.json, human)
        return 0
    if ev.source_kind == "external":
        # A store of package candidates and memories together: scored, but the union
        # metrics (extraction / selection) are defined for stores of memories only.
        ev = dataclasses.replace(
            ev,
            notes=(
                *ev.notes,
                "This store mixes package candidates with external memories: it is scored "
                "as one store; the union metrics (extraction, selection) need a store of "
                "external memories only.",
            ),
        )
    _emit(
        {**ev.to_dict(), "cost_unit": pkg.cost_unit},
        args.json,
        _evaluation_human(ev, pkg.cost_unit) + _why_text(view.explanation),
    )
    return 0


def _why_text(explanation: Sequence[str]) -> str:
    """The "why this score" section of ``score``'s text: the Compare view's paragraphs,
    wrapped at 100 terminal columns (s53: at 100 characters, a line of CJK ids ran to 160)."""
    return "\n\nwhy this score\n" + "\n\n".join(fill_display(p, 100) for p in explanation)


def _union_human(rep: Any, memory_unit: str | None = None) -> str:
    """The union metrics block of ``score`` for an external store; ``memory_unit`` is what its
    memories were costed in (their cost rule's unit) when that differs from the package's."""
    from .analysis import ratio_text
    from .explain import amount_text as amount  # "1 word"; the budget's digits (QA s47)

    unit = memory_unit or rep.memory_unit

    up = rep.upper
    lines = [
        f"union metrics for {rep.label!r} ({_count(rep.n_memories, 'memory', 'memories')}, "
        f"{amount(rep.store_cost, unit)} as written; budget {amount(rep.budget, rep.cost_unit)})",
        f"  kept F(Y') = {_fmt(rep.value, 6)} ({_count(len(rep.kept), 'memory', 'memories')}, "
        f"{amount(rep.cost, unit)}, "
        f"{'whole store' if rep.keep_rule == 'all' else rep.keep_rule + '-pruned'})",
        f"  union ratio     F(Y') / OPT_P+ = {ratio_text(rep.union_ratio)}   "
        f"({rep.union_opt.label}_P+ = {_fmt(rep.union_opt_value, 6)})",
        f"  package ratio   F(Y') / OPT_P  = {ratio_text(rep.package_ratio)}   "
        f"({rep.package_opt.label}_P = {_fmt(rep.package_opt_value, 6)})",
        f"  upper-pruned    {_fmt(up.value, 6)} ({up.label}, exact over subsets of the store: "
        + rep.upper_text
        + ")",
        f"  extraction      upper / OPT_P+ = {ratio_text(rep.extraction)}",
        f"  selection       F(Y') / upper  = {ratio_text(rep.selection)}",
    ]
    for pr in (rep.recency, rep.salience):
        if pr is not None:
            lines.append(
                f"  {pr.rule}-pruned: F = {_fmt(pr.value, 6)}, union ratio "
                f"{ratio_text(pr.union_ratio)}, selection {ratio_text(pr.selection)}; kept "
                + (", ".join(map(id_text, pr.kept)) or "nothing")
            )
    lines.extend(f"note: {n}" for n in rep.notes)
    return "\n".join(lines)


def _with_union(ev: Any, pkg: Any, args: argparse.Namespace) -> tuple[Any, str]:
    """``score`` output for an external store: the evaluation plus the union metrics, as a
    :class:`~memaudit_core.union.UnionScore`, and the text."""
    from dataclasses import replace

    from .union import UnionScore, union_report

    rep = union_report(
        pkg,
        ev.store_id,
        ev.budget,
        salience_field=args.salience_field,
        solver=args.solver,
        time_limit=args.time_limit,
        salience_control="--salience-field",
    )
    human = _union_human(rep) + "\n\n" + _evaluation_human(replace(ev, notes=()), pkg.cost_unit)
    return UnionScore(ev, rep), human


def _refuse_stdin_exports(args: argparse.Namespace) -> None:
    """``-`` as the export or ``--history`` of ``score`` / ``import``: files only."""
    if args.command == "import":
        refuse_stdin_file(args.external, f"import {args.format} reads the export")
    else:
        refuse_stdin_file(args.external, "score --external reads the export")
    refuse_stdin_file(args.history, f"{args.command} --history reads the history")


def _add_export(pkg: Any, args: argparse.Namespace, store_id: str | None = None) -> Any:
    """The package with ``args.external`` (format ``args.format``) added as an external store,
    its warnings and notes printed to stderr; ``(package, store)``."""
    from .importers import load_external_store
    from .union import unique_store_id, with_store

    if args.history is not None and args.format != "mem0":
        raise UsageError(f"{args.command}: --history applies to format mem0 only")
    _refuse_stdin_exports(args)
    if store_id is not None and store_id in {s.id for s in pkg.stores}:
        raise UsageError(
            f"{args.command}: package {pkg.id!r} already has a store {store_id!r}; choose "
            "another --store-id"
        )
    store = load_external_store(
        args.external,
        args.format,
        # None: the rule counting the package's cost unit (importer QA: a tokens package
        # scored a words-costed export).
        cost_rule=args.cost_rule,
        # `is None`, not `or`: an empty --store-id was silently replaced (CLI QA); the
        # importer refuses it with its own message.
        store_id=unique_store_id(pkg, args.format) if store_id is None else store_id,
        package=pkg,
        history=args.history,
        label=getattr(args, "label", None),
    )
    source = args.external
    print_warnings(source, store.meta.get("warnings", []))
    # An empty export: the importer's own warning says so (QA s39: said twice, as a note and
    # a warning).
    if store.memories and store.meta.get("coverage") == "needs annotation":
        print(
            f"{source}: note: no memory links to this package's units or experiences, so no "
            "memory covers anything (coverage 'needs annotation') and F = 0. Confirm coverage "
            "(suggestions: memaudit_core.importers.suggest_coverage) to score it.",
            file=sys.stderr,
        )
    return with_store(pkg, store), store


def _export_summary(store: Any, args: argparse.Namespace) -> dict[str, Any]:
    from .importers import import_counts

    meta = store.meta
    counts = import_counts(store)  # as the app counts them (QA s51)
    return {
        "id": store.id,
        "label": store.display_name,
        "file": str(args.external),
        "format": args.format,
        "format_version": meta.get("format_version"),
        "cost_rule": meta.get("cost_rule"),
        "coverage": meta.get("coverage"),
        "memories": counts["memories"],
        "deleted": counts["deleted"],
        # The export's deleted memories are not part of the store (so not in out["union"]).
        "deleted_ids": [str(d.get("id")) for d in meta.get("deleted", [])],
        "superseded": counts["superseded"],
        "superseded_versions": counts["superseded_versions"],
        "warnings": list(meta.get("warnings", [])),
    }


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


#: The fields of an export summary that :func:`_export_head` prints.
_EXPORT_HEAD_KEYS = frozenset(
    ("id", "file", "format", "format_version", "memories", "cost_rule", "superseded")
    + ("deleted", "coverage")
)


def _export_head(summary: dict[str, Any]) -> str:
    from .importers import import_counts_text

    # A result saved before the label and superseded_versions were written shows without them.
    label = f" ({summary['label']})" if summary.get("label") else ""
    return (
        f"external store {summary['id']!r}{label} from {summary['file']} "
        f"({summary['format']}"
        f"{' ' + str(summary['format_version']) if summary['format_version'] else ''}): "
        f"{_count(summary['memories'], 'memory', 'memories')} "
        f"costed by {summary['cost_rule']}, "
        f"{import_counts_text(summary, summary.get('deleted_ids') or ())}; "
        f"coverage: {summary['coverage']}"
    )


def _check_store_id(pkg: Package, store_id: str) -> None:
    """Refuse a --store naming no store of ``pkg``; a file's name says what --store takes.

    QA s50: a store saved as mystore.json and given as --store mystore.json got only
    "unknown store 'mystore.json' ... (known: none)".
    """
    try:
        pkg.store(store_id)
    except UnknownNameError as exc:
        try:
            a_file = store_id.lower().endswith(".json") or Path(store_id).is_file()
        except (OSError, ValueError):  # a name no file can have (a NUL, too long)
            a_file = False
        if not a_file:
            raise
        raise UnknownNameError(
            f'{exc}; --store takes the id of a store in the package\'s "stores" array, not '
            'a file: add the store object ({"id": ..., "select": [...]}) there (package '
            "format: README.md), or score a memory-system export with --external FILE "
            "--format FMT"
        ) from None


def _score_external(args: argparse.Namespace) -> int:
    """``score PACKAGE --external EXPORT --format FMT``: import the export as an external
    store, add it to the package (re-validated) and score it in the union package."""
    from .analysis import score
    from .union import UnionScore

    if args.external is None or args.format is None:
        raise UsageError("score: --external EXPORT and --format mem0|letta|amem|zep go together")
    if args.writer is not None or args.store is not None:
        raise UsageError("score: --external cannot be combined with --writer or --store")
    _refuse_stdin_exports(args)  # before the package is read (from stdin, perhaps)
    pkg = _load(args.package, budgets=None if args.budget is None else [args.budget])
    budget = pkg.default_budget() if args.budget is None else args.budget
    pkg, store = _add_export(pkg, args)
    ev = score(pkg, budget, store_id=store.id, solver=args.solver, time_limit=args.time_limit)
    summary = _export_summary(store, args)
    if store.memories:
        result, human = _with_union(ev, pkg, args)
    else:  # nothing written scores 0, as an empty package store does (CLI QA)
        result, human = UnionScore(ev, None), _evaluation_human(ev, pkg.cost_unit)
    result = dataclasses.replace(result, external_store=summary)
    _emit(result.to_dict(), args.json, _export_head(summary) + "\n" + human)
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    """``import FORMAT SOURCE -o PACKAGE.json``: artifact folder/zip, LoCoMo, LongMemEval; or
    ``import mem0|letta|amem|zep EXPORT --package PKG -o OUT.json``: the package with the
    export added as an external store."""
    from .costs import DEFAULT_COST_RULE
    from .importers import STORE_FORMATS, import_package
    from .package import dumps_package, save_package

    is_export = args.format in STORE_FORMATS
    refused = {
        "--instance": args.instance is not None and (is_export or args.format == "artifact"),
        "--cost-rule": args.cost_rule is not None and args.format == "artifact",
        "--package": args.package is not None and not is_export,
        "--history": args.history is not None and args.format != "mem0",
        "--store-id": args.store_id is not None and not is_export,
        "--label": args.label is not None and not is_export,
    }
    for option, bad in refused.items():
        if bad:  # said, not ignored (CLI QA: --cost-rule was silently ignored for artifact)
            raise UsageError(f"import: {option} does not apply to the {args.format} format")
    if is_export:
        args.external = args.source
        _refuse_stdin_exports(args)
    else:
        refuse_stdin_file(args.source, f"import {args.format} reads its source")
    if is_export and args.package is None:
        raise UsageError(
            f"import {args.format}: give --package PACKAGE.json, the package the export's "
            "memories are scored against (the output is that package with the export added "
            "as an external store)"
        )
    check_output_file(
        args.output,
        [args.source, args.package, getattr(args, "history", None)],
        suffix=OUTPUT_SUFFIXES["import"],
    )
    if is_export:
        pkg, store = _add_export(_load(args.package), args, store_id=args.store_id)
        export = _export_summary(store, args)
        print(_export_head(export), file=sys.stderr)
        from .costs import store_cost_unit

        unit = store_cost_unit(store.meta, pkg.cost_unit)
        if unit != pkg.cost_unit:
            # CLI QA: said by score ("Units differ"), not when the store was written in.
            print(
                f"{args.source}: warning: the memories are costed in {unit} (--cost-rule "
                f"{store.meta.get('cost_rule')}) and the package in {pkg.cost_unit}: budgets "
                "will compare the two as plain numbers",
                file=sys.stderr,
            )
    else:
        try:
            pkg = import_package(
                args.format,
                args.source,
                instance=args.instance,
                cost_rule=args.cost_rule or DEFAULT_COST_RULE,
            )
        except PackageError as exc:
            # The library names its keyword (instance=); the command its flag (QA s40 defect 3).
            from .importers._common import cli_instance_wording

            raise cli_instance_wording(exc) from None
    if args.output in (None, "-"):
        _stdout().write(dumps_package(pkg))
    else:
        save_package(pkg, args.output)
    if is_export:  # the export's warnings were printed as it was read
        warnings = list(export["warnings"])
    else:
        notes = list(pkg.meta.get("warnings", []))
        warnings = notes + list(pkg.warnings)
        print_warnings(args.source, notes)
        # The package's own warnings cite JSON paths of the written package, so they are named
        # by it, as generate names them (QA s52: "locomo_small.json: $.queries[6].requires").
        named = args.source if args.output in (None, "-") else args.output
        print_warnings(named, list(pkg.warnings))
    where = "stdout" if args.output in (None, "-") else args.output
    version = pkg.meta.get("format_version")
    print(
        f"imported {args.format} {args.source} -> {where}: {pkg.id}"
        f"{f' ({version})' if version else ''} — {_package_counts(pkg)}",
        file=sys.stderr,
    )
    if args.json and where != "stdout":  # on stdout the package itself is the JSON
        summary = {
            "imported": {
                "format": args.format,
                "source": args.source,
                "output": args.output,
                "package_id": pkg.id,
                "content_hash": pkg.content_hash(),
                # The imported file's layout: for an export, the export's (importer QA: the
                # target package's, null for every export).
                "format_version": (
                    export["format_version"] if is_export else pkg.meta.get("format_version")
                ),
                "experiences": len(pkg.experiences),
                "candidates": len(pkg.candidates),
                "units": len(pkg.units),
                "queries": len(pkg.queries),
                "stores": len(pkg.stores),
                "warnings": warnings,
                "warning_details": _warning_details(warnings),
            }
        }
        if is_export:
            summary["imported"]["external_store"] = export
        _emit(summary, True, "")
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    from .analysis import check_something_to_sweep, sweep
    from .suites import (
        SuiteRow,
        SweepSuiteResult,
        normalize_ablations,
        pooled_families_note,
        rows_with_kinds,
        shown_notes,
    )
    from .writers import WRITERS

    _refuse_limits_of_exhaustive_solver(args)
    plugin_names = _plugin_writers(args)
    # The writer names as a list from here on (QA s39, defect 4: joined with "," and split
    # again, a plugin named "has space, comma" became two unknown writers; since QA s46 such
    # a name is refused when the plugin loads, as no --writers could select it).
    args.writer_names = (
        _registered_names(_split_names(args.writers, "--writers"))
        if args.writers is not None
        else None
    )
    if plugin_names:  # --writer-module writers join the named (or default) writers
        named = list(WRITERS) if args.writer_names is None else args.writer_names
        args.writer_names = list(dict.fromkeys([*named, *plugin_names]))
    _refuse_unused_writer_timeout(
        args, args.writer_names if args.writer_names is not None else list(WRITERS)
    )
    check_family_flags(args)
    refuse_out_only_flags(args)
    if args.output == "-":  # CLI QA: wrote a file named "-", where generate / import write stdout
        raise UsageError(
            "sweep -o -: the report (or --json) goes to stdout, and -o names the CSV file; "
            "give a file name"
        )
    check_output_file(
        args.output,
        [*(args.packages or []), getattr(args, "external", None)],
        out=getattr(args, "out", None),
        suffix=OUTPUT_SUFFIXES["sweep"],
    )
    if wants_suite(args):  # families, folders, lists, --workers, --out, ...
        if args.total_time_limit is not None:
            # A suite's tasks run on workers and resume across runs: no one total to share.
            raise UsageError(
                "sweep: --total-time-limit applies to a sweep of package files in one "
                "process, not with --family, folders, lists, --out or --workers; "
                "use --time-limit (seconds per engine run) there"
            )
        return cli_sweep_suite(args)
    if not args.packages:
        raise UsageError("sweep: give one or more package files, or --family NAME --seeds A-B")
    if args.budgets is not None:  # '' is an empty list, refused, not "the default"
        budgets = _budget_list(args.budgets)
    else:
        # Each package at its own grid, as a folder sweep does (QA: every package was swept
        # at the union of all the packages' grids).
        budgets = None
    stores = _split_names(args.stores, "--stores")
    packages = _load_all(args.packages, "sweep", budgets, stores)
    writers = list(WRITERS) if args.writer_names is None else args.writer_names
    ablations = list(normalize_ablations(_split_names(args.ablations, "--ablations")))
    # Before the packages load; the library refuses the same (analysis.sweep).
    check_something_to_sweep(writers, stores, ablations, "sweep")
    progress = Progress("sweep", enabled=not args.quiet)
    t0 = time.perf_counter()
    result = sweep(
        packages,
        budgets,
        writers,
        stores=stores,
        ablations=ablations,
        solver=args.solver,
        time_limit=args.time_limit,
        progress=progress,
        workers=args.workers,
        total_time_limit=args.total_time_limit,
    )
    elapsed = time.perf_counter() - t0
    n_contents = len({p.content_hash() for p in packages})
    # Tasks as the suite path counts them: distinct (package content, budget, method), failed
    # writer runs included (QA: this path reported the number of packages as its tasks).
    n_tasks = len({(r.content_hash, r.budget, r.method) for r in result.rows}) + len(
        {(f.package_id, f.seed, f.budget, f.writer) for f in result.errors}
    )
    # The suite path's model (memaudit sweep FOLDER / --family / --out), rows in its shape:
    # one JSON shape whichever way the sweep was started, and read_result reads both back.
    columns = list(SuiteRow.__dataclass_fields__)
    suite_rows = tuple(
        SuiteRow(**{k: row[k] for k in columns})
        for row in (
            {**r.to_dict(), "source": label}
            for r, label in zip(
                result.rows,
                _row_sources(result.rows, packages, [_file_name(p) for p in args.packages]),
                strict=True,
            )
        )
    )
    res = SweepSuiteResult(
        rows=suite_rows,
        summary=result.summary,
        methods=result.methods,
        budgets=result.budgets,
        n_sources=len(args.packages),
        # Distinct by content, as the suite path counts them.
        n_packages=n_contents,
        n_tasks=n_tasks,
        executed=n_tasks,
        reused=0,
        complete=True,
        elapsed_s=elapsed,
        # A pool never has more processes than budgets (CLI QA: "1000 process(es)").
        backend=f"up to {min(args.workers, len(result.budgets))} process(es), budgets in parallel"
        if args.workers != 1
        else "1 process",
        out=None,
        files=(args.output,) if args.output else (),
        # The repeated-instances note included, and the pooling note as the suite path says
        # it (sweep QA s38: files of four families were pooled unsaid).
        notes=(*result.notes, *filter(None, [pooled_families_note(result.rows)])),
        errors=result.errors,
        settings=tuple(sweep_settings(args).items()),
        # As the suite path fills it (QA s39, defect 5: this path wrote "method_kinds": {}).
        method_kinds=result.method_kinds,
    )
    notes = res.notes
    if args.output:  # with each method's kind, as --out's rows.csv (QA s42 round 2, #1)
        _write_rows_csv(Path(args.output), *rows_with_kinds(res))
    n_budgets = (
        f"{len(result.budgets)} budget(s)"
        if budgets is not None or len(packages) == 1
        else f"their own budget grids ({len(result.budgets)} budgets in all)"
    )
    human = (
        f"{len(packages)} package(s) x {n_budgets}, {len(result.rows)} rows in "
        f"{elapsed:.2f} s\n"
        + summary_table(result.summary, res.method_kinds, res.errors, res.rows)
        + family_table(res)
    )
    if args.output:
        human += f"\nrows written to {args.output}"
    for note in shown_notes(notes, res.rows):
        human += f"\nnote: {note}"
    if result.errors:
        human += (
            f"\n{len(result.errors)} writer run(s) failed; their rows are missing "
            "(details on stderr)"
        )
    # A failing writer is a user error on every path (a suite stops at it; here the other
    # rows are still printed first). Set before the output, which a closed pipe may cut.
    args._exit_code = EXIT_USER_ERROR if result.errors else 0
    _emit(res.to_dict(), args.json, human)
    _report_writer_failures(result.errors, args.debug)
    return args._exit_code


def _row_sources(rows: Sequence[Any], packages: Sequence[Any], labels: Sequence[str]) -> list[str]:
    """The file each sweep row came from.

    ``sweep`` returns each package's rows as one block, in package order, one row per
    (budget, method). A row opens the next block when its content hash is not the current
    package's, or when its (budget, method) was already seen in this block: two copies of one
    package (same hash) are then told apart (QA: both were labelled with the first file).
    """
    hashes = [p.content_hash() for p in packages]
    out: list[str] = []
    k, seen = 0, set()
    for r in rows:
        key = (r.budget, r.method)
        if r.content_hash != hashes[k] or key in seen:
            k += 1
            while k < len(hashes) and hashes[k] != r.content_hash:
                k += 1
            if k == len(hashes):  # not in block order (cannot happen): the first such file
                k = hashes.index(r.content_hash)
            seen = set()
        seen.add(key)
        out.append(str(labels[k]))
    return out


def cmd_audit(args: argparse.Namespace) -> int:
    return cli_audit(args)


def _write_rows_csv(path: Path, rows: list[dict[str, Any]], columns: list[str]) -> None:
    import csv

    try:
        with path.open("w", newline="", encoding="utf-8") as fh:
            # LF as in --out's rows.csv (pandas): the csv module's default is CRLF.
            writer = csv.DictWriter(fh, fieldnames=columns, lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)
    except OSError as exc:
        raise MemAuditError(f"cannot write {path}: {exc.strerror}") from None


def cmd_generate(args: argparse.Namespace) -> int:
    from .generators import FAMILIES, generate, package_seed
    from .package import dumps_package, save_package
    from .suites import PackageSource

    if args.list or not args.family:
        if not args.list:
            raise UsageError("generate: name a FAMILY (see `memaudit generate --list`)")
        # Said, not ignored (CLI QA: `generate NAME --list --seed 4 --param x=1` listed all).
        extra = [
            flag
            for flag, given in (
                ("FAMILY", args.family),
                ("--seed", args.seed != 0),
                ("--param", args.param),
                ("-o", args.output is not None),
            )
            if given
        ]
        if extra:
            raise UsageError(
                f"generate --list lists every family and takes no {', '.join(extra)}; drop "
                "--list to generate a package"
            )
        listing = []
        for fam in FAMILIES.values():
            listing.append(
                {
                    "family": fam.name,
                    "seeded": fam.seeded,
                    "description": fam.description,
                    "params": {
                        k: {"default": v, "help": fam.param_help.get(k, "")}
                        for k, v in fam.defaults().items()
                    },
                }
            )
        human = []
        for item in listing:
            seeded = "seeded" if item["seeded"] else "seed-invariant"
            human.append(f"{item['family']} ({seeded}): {item['description']}")
            for k, v in item["params"].items():
                human.append(f"    --param {k}={v['default']}    {v['help']}")
        _emit({"families": listing}, args.json, "\n".join(human))
        return 0
    check_output_file(args.output, suffix=OUTPUT_SUFFIXES["generate"])
    params = parse_params(args.param)
    # One package per instance (QA s40, defect 2): a seed-invariant family is written at
    # seed 0, as the app builds it, and the seed given is said to be unused.
    seed, seed_note = package_seed(args.family, args.seed)
    with param_options(params):
        pkg = generate(args.family, seed=seed, **params)
    if seed_note is not None:
        print(f"memaudit: note: --seed {args.seed}: {seed_note}", file=sys.stderr)
    # Said as validate says them (QA s47: a budget_fraction whose default budget fits no
    # candidate was written with only "wrote ...", and validate then said OPT = 0 there).
    # The package on stdout is named as a sweep names a family's package.
    warnings = list(pkg.warnings)
    if args.output in (None, "-"):
        _stdout().write(dumps_package(pkg))
        source = PackageSource("family", args.family, seed, tuple(sorted(params.items())))
        print_warnings(source.full_label, warnings, limit=None)
        return 0
    save_package(pkg, args.output)
    print_warnings(args.output, warnings, limit=None)
    print(
        # The full content hash, as validate says it (QA s51 m3).
        f"wrote {args.output}: {pkg.id} (content hash {pkg.content_hash()}) — "
        f"{_package_counts(pkg)}",
        file=sys.stderr,
    )
    if args.json:  # as `import -o FILE --json` (CLI QA: stdout was empty)
        summary = {
            "generated": {
                "family": args.family,
                "seed": pkg.meta.get("seed"),
                "params": pkg.meta.get("params"),
                "output": args.output,
                "package_id": pkg.id,
                "content_hash": pkg.content_hash(),
                "experiences": len(pkg.experiences),
                "candidates": len(pkg.candidates),
                "units": len(pkg.units),
                "queries": len(pkg.queries),
                "warnings": warnings,  # as `import -o FILE --json` lists its package's
                "warning_details": _warning_details(warnings),
            }
        }
        _emit(summary, True, "")
    return 0


def cmd_writers(args: argparse.Namespace) -> int:
    from .plugins import DISCOVERY_WARNINGS
    from .writers import all_writers

    _plugin_writers(args)
    listing = [
        {
            "name": w.name,
            "kind": w.kind,
            "source": w.source,
            "spec": w.spec,
            "description": w.description,
        }
        for w in all_writers().values()
    ]
    human = _table(
        ["writer", "kind", "source", "description"],
        [[w["name"], w["kind"], w["source"], w["description"]] for w in listing],
    )
    human += (
        "\n\nblind: sees only experiences, candidate texts / types / costs and the budget, "
        "in an isolated worker; oracle: reads exact package weights and coverage"
    )
    for warning in DISCOVERY_WARNINGS:
        print(f"memaudit: warning: {warning}", file=sys.stderr)
    _emit({"writers": listing, "warnings": list(DISCOVERY_WARNINGS)}, args.json, human)
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    """``show RESULT.json``: a result saved with ``--json`` (``solve``, ``score``, ``sweep``,
    ``audit``) printed as its command printed it; budgets and costs carry the package's cost
    unit when the file has it (``cost_unit``, written by ``solve`` and ``score`` since 0.1).
    A library result saved with ``to_dict()`` (a budget, ablation or union curve, a
    sensitivity, a family band, a certification record, package stats, an overview, a
    Compare or Evidence view) prints its table."""
    from .analysis import StoreEvaluation, SweepResult
    from .audit import AuditReport
    from .costs import store_cost_unit
    from .results import read_saved
    from .solvers import SolveResult
    from .suites import SweepSuiteResult, shown_notes, unrecorded_units_note
    from .union import UnionReport, UnionScore

    refuse_stdin_file(args.result, "show reads the saved result")
    res, listed = read_saved(args.result)
    # The warnings of the packages the saved command read, said and listed as it did (QA
    # s45: show dropped them, and show --json left out the key).
    for entry in listed or ():
        PACKAGE_WARNINGS(entry["file"], entry["warnings"])
    if listed is not None:
        PACKAGE_WARNINGS.start()
    again = res.to_dict()
    # Only solve and score results print a unit: a saved sweep (megabytes) is not read twice.
    unit = (
        _saved_cost_unit(args.result)
        if isinstance(res, SolveResult | StoreEvaluation | UnionScore)
        else None
    )
    if isinstance(res, SweepSuiteResult | SweepResult):
        budgets = ", ".join(f"{b:.10g}" for b in res.budgets)
        # CLI QA: "budgets 3, 6, 4 rows" read as three budgets.
        human = (
            f"saved sweep {args.result}: {sweep_packages_text(res)}; budgets {budgets}; "
            f"{len(res.rows)} rows\n"
            + summary_table(res.summary, getattr(res, "method_kinds", ()), res.errors, res.rows)
            + family_table(res)
        )
        caution = unrecorded_units_note(res)
        if caution is not None and caution not in res.notes:
            again["notes"] = [*again["notes"], caution]
        for note in shown_notes(again["notes"], res.rows):
            human += f"\nnote: {note}"
        if res.errors:
            human += f"\n{len(res.errors)} writer run(s) failed; their rows are missing:"
            # QA s39 h5 #2: only the count was shown; the run itself had said which writer
            # failed where and why. One line per failure from the file's errors[], capped.
            shown = 10
            for f in res.errors[:shown]:
                where = f"writer {f.writer!r} at budget {f.budget:.10g}: "
                # A message that names its writer already (with the plugin's file since QA
                # s42) is shown as it is, not behind a second "writer ... at budget".
                named = f.message.startswith(f"writer {f.writer!r}")
                human += f"\n  {f.package_id}: {'' if named else where}{f.message}"
            if len(res.errors) > shown:
                human += f"\n  ... and {len(res.errors) - shown} more"
    elif isinstance(res, SolveResult):
        human = _solve_human(res, f"saved in {args.result}", unit)
    elif isinstance(res, StoreEvaluation):
        human = _evaluation_human(res, unit)
    elif isinstance(res, AuditReport):
        human = _audit_human(res, saved_in=str(args.result))
    elif isinstance(res, UnionReport):
        # A saved ma.union_report(...).to_dict() (docs QA: read_result took it, show refused).
        human = _union_human(res)
    elif isinstance(res, UnionScore):
        evaluation = res.evaluation
        if res.union is not None:  # its notes are the union report's (as ``score`` prints)
            evaluation = dataclasses.replace(evaluation, notes=())
            unit = unit or res.union.cost_unit
        human = _evaluation_human(evaluation, unit)
        summary = res.external_store if isinstance(res.external_store, dict) else {}
        if res.union is not None:
            memory_unit = store_cost_unit(summary, res.union.memory_unit)
            human = _union_human(res.union, memory_unit) + "\n\n" + human
        # score --external's first line (CLI QA: show left it out); a result saved with a
        # partial summary keeps what it can show.
        if _EXPORT_HEAD_KEYS <= summary.keys():
            human = _export_head(summary) + "\n" + human
    else:
        # QA s40: the library's curves, sensitivities, certification records and overviews
        # read back now; show prints their tables (was: refused, or "not a MemAudit result").
        human = _library_result_human(res, str(args.result))
    # --json: the result again, checked and in this version's shape, with the cost unit the
    # file carried (QA s39: show --json dropped it; solve and score write it beside the result).
    if unit is not None and isinstance(res, SolveResult | StoreEvaluation):
        again["cost_unit"] = unit
    # The saved run's verdict, as the run exited on it (s52: an INCOMPLETE audit and an
    # incomplete sweep read back with exit 0).
    args._exit_code, reason = result_exit_status(res, saved_in=str(args.result))
    _emit(again, args.json, human)
    _say_exit_reason(reason)
    return args._exit_code


def _cell(value: Any, digits: int = 6) -> str:
    """A table cell of a saved library result: None as n/a, floats in ``digits`` significant
    digits."""
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.{digits}g}"
    if isinstance(value, list | tuple):
        return ", ".join(_cell(v, digits) for v in value)
    return str(value)


def _amount_column(header: str) -> bool:
    """Whether a saved result's column holds budgets or costs ("budget", "cost", "opt_cost").

    >>> [_amount_column(h) for h in ("budget", "opt_cost", "cost_unit", "candidate_costs")]
    [True, True, True, False]
    """
    return bool(re.search(r"\b(budget|cost)\b", header.replace("_", " ")))


def _gap_column(header: str) -> bool:
    """Whether a saved result's column holds a relative gap ("gap", "milp gap", "pool_gap").

    >>> [_gap_column(h) for h in ("gap", "OPT gap", "opt_gap", "gapless", "budget")]
    [True, True, True, False, False]
    """
    return header == "gap" or header.endswith((" gap", "_gap"))


def _dict_table(rows: list[dict[str, Any]]) -> str:
    from .solvers import gap_percent

    headers = list(dict.fromkeys(k for row in rows for k in row))
    # Budgets and costs to a budget's ten digits (QA s47: six read 99.9999999 as 100).
    digits = {h: 10 if _amount_column(h) else 6 for h in headers}
    # Gaps in percent, as every face prints them (s52: show printed fractions, 0.0353).
    return _table(
        headers,
        [
            [
                gap_percent(row.get(h))
                if _gap_column(h) and isinstance(row.get(h), float | int | type(None))
                else _cell(row.get(h), digits[h])
                for h in headers
            ]
            for row in rows
        ],
    )


def _library_result_human(res: Any, path: str) -> str:
    """``show``'s text for a saved library result (QA s40): which model and package it is,
    its table of rows, and its notes."""
    from .curves import BudgetCurve, CertificationReport, FamilyBand
    from .explain import CompareView, EvidenceView, amount_text
    from .reports import Overview, PackageStats
    from .robustness import (
        AblationCurve,
        CapacitySensitivity,
        CostRuleSensitivity,
        NoiseSensitivity,
        ablation_table_rows,
    )
    from .shortrepr import cost_budget_text
    from .union import UnionCurve

    notes: tuple[str, ...] = tuple(getattr(res, "notes", ()))
    if isinstance(res, BudgetCurve):
        # Its source and settings when it records them (QA s51 m4: the app's file did not).
        source = f" from {res.source}" if res.source else ""
        about = f"package {res.package_id}{source}; budgets ({res.cost_unit}) " + ", ".join(
            f"{b:.10g}" for b in res.budgets
        )
        if res.settings:
            about += "\nsettings: " + ", ".join(f"{k}={v}" for k, v in res.settings)
        table = _dict_table(res.opt_rows()) + "\n\n" + _dict_table(res.point_rows())
        notes += res.errors
    elif isinstance(res, AblationCurve):
        about = (
            f"package {res.package_id}; pool {res.pool} (removed: "
            f"{', '.join(res.removed_types) or 'nothing'}; {res.n_removed} of "
            f"{res.n_candidates} candidates)"
        )
        # The app's table (QA s46: a limited curve printed its incumbents with no bound, gap
        # or proven drop range); pool and removed types are in the line above.
        table = _dict_table(
            [
                {k: v for k, v in row.items() if k not in ("pool", "removed types")}
                for row in ablation_table_rows([res])
            ]
        )
    elif isinstance(res, FamilyBand):
        # The parameters too (QA s46: bands of normal_count=5 and of the defaults read alike),
        # those that differ from the defaults, as the app's band titles name them.
        about = f"family {res.label}; seeds " + ", ".join(str(s) for s in res.seeds)
        table = _dict_table(res.table_rows())
        # The app's caption under the band (QA s46: n/a CIs were printed with no reason).
        notes += tuple(filter(None, [res.interval_note()])) + res.errors
    elif isinstance(res, CertificationReport):
        about = f"package {res.package_id}; {res.n_certified} of {len(res.rows)} budgets certified"
        table = _dict_table(res.table_rows())
    elif isinstance(res, CostRuleSensitivity):
        about = f"package {res.package_id}; {res.budget_rule}"
        # The app's ranking and ratio tables first (QA s43: show printed only the rows, not
        # tau, whether the ranking holds, nor the OPT = 0 notes); each rule's note below.
        ranking = [{k: v for k, v in r.items() if k != "note"} for r in res.ranking_rows()]
        table = (
            "does the writers' ranking hold?\n"
            + _dict_table(ranking)
            + "\n\nmean ratio per writer over the budgets compared:\n"
            + _dict_table(res.ratio_rows())
            + "\n\nevery writer, budget and rule:\n"
            + _dict_table([row.to_dict() for r in res.rules for row in r.rows])
        )
        notes = (
            tuple(f"{r.rule}: {r.note}" for r in res.rules if r.note)
            + res.recost_notes
            + res.undefined_notes
            + res.notes
        )
        if res.n_unproven:
            notes += (
                f"{res.n_unproven} row(s) rest on an optimum a time limit left unproven: "
                "their ratio is against an incumbent (certified = False).",
            )
    elif isinstance(res, UnionCurve):
        # QA s45: a saved union curve was refused ("$.result_kind: missing field").
        stores = ", ".join(map(id_text, dict.fromkeys(r.store_id for r in res)))
        budgets = ", ".join(f"{b:.10g}" for b in sorted({r.budget for r in res}))
        about = (
            f"package {res.package_id}; stores {stores}; budgets ({res.cost_unit}) {budgets}; "
            f"over budget, each keeps by {res.keep}"
        )
        table = _dict_table([r.to_dict() for r in res])
        if res.n_unproven:
            notes = (
                f"{res.n_unproven} of {len(res)} points rest on an optimum a time limit left "
                "unproven: their upper_value and union_opt_value are the best store found, at "
                "most their bound (certified = False).",
                *notes,
            )
    elif isinstance(res, CapacitySensitivity):
        about = f"package {res.package_id}; capacity k = {res.k} against k = 1"
        keep = ("budget", "opt_1", "label_1", "opt_k", "label", "gain", "agree", "multi_groups")
        table = _dict_table([{k: p.to_dict()[k] for k in keep} for p in res.points])
    elif isinstance(res, NoiseSensitivity):
        about = (
            f"package {res.package_id}; {res.mode} noise at {res.level:g}, {res.draws} draws "
            f"(seed {res.seed}); mean tau {_cell(res.mean_tau)}"
        )
        table = _dict_table([r.to_dict() for r in res.writer_rows])
        if res.n_unproven:  # QA s45: show did not say which optima a limit left unproven
            notes = (
                f"{res.n_unproven} of {(res.draws + 1) * len(res.budgets)} optima (clean and "
                "noisy) a time limit left unproven: ratios there are against an incumbent.",
                *notes,
            )
    elif isinstance(res, Overview):
        about = (
            f"package {res.stats.package_id}; budget "
            f"{amount_text(res.budget, res.stats.cost_unit)}; {res.opt.label} {res.opt.value:.6g}"
        )
        # A cost to the budget's digits, more where it would read as the budget (QA s47: a
        # budget of 99.9999999 and 1234567 read "100" and "1.23457e+06", as did such costs).
        table = _dict_table(
            [
                {
                    "store": e.title,
                    "F": e.value,
                    "ratio": e.ratio_text,
                    "cost": cost_budget_text(e.cost, res.budget)[0],
                }
                for e in res.evaluations
            ]
        )
        notes = tuple(f"writer {name} failed: {message}" for name, message in res.writer_errors)
    elif isinstance(res, PackageStats):
        about = f"package {res.package_id} ({res.title})"
        table = "\n".join(
            f"{k}: {_cell(v, 10 if _amount_column(k) else 6)}"
            for k, v in res.to_dict().items()
            if k not in ("candidate_costs", "candidate_types", "description")
            and not isinstance(v, dict)
        )
    elif isinstance(res, CompareView):
        about = (
            f"package {res.package_id}; {res.label} ({res.source_kind}) at budget "
            f"{amount_text(res.budget, res.cost_unit)}: F {res.value:.6g} of {res.opt_name} "
            f"{res.opt_value:.6g}, ratio {res.ratio_text}; {res.n_missed} unit(s) missed"
        )
        # The loss by kind bucket, then the view's own explanation (its numbers, in words),
        # wrapped as `score` wraps it (a paragraph was one line of 200-400 characters).
        table = _dict_table(res.bucket_table()) + _why_text(res.explanation)
    elif isinstance(res, EvidenceView):
        about = (
            f"package {res.package_id}; {res.store_label} ({res.source_kind}) against "
            f"{res.opt_name} at budget {amount_text(res.budget, res.cost_unit)}; kinds "
            f"{', '.join(res.kinds) or 'none'}; focus unit "
            f"{'none' if res.focus_unit_id is None else id_text(res.focus_unit_id)}"
        )
        shown = 20  # a 500-experience package has hundreds of units; the file has them all
        rows = res.unit_table()
        table = _dict_table(rows[:shown])
        if len(rows) > shown:
            table += f"\n... and {len(rows) - shown} more units"
        if res.focus is not None:
            table += f"\n\ncandidates covering {id_text(res.focus.unit_id)}:\n"
            table += _dict_table(res.candidate_table()) if res.focus_candidates else "none"
            if res.focus_queries:
                table += f"\n\nqueries requiring {id_text(res.focus.unit_id)}:\n"
                table += _dict_table(res.query_table())
        notes = res.notes + res.score_notes
    else:  # a kind read_result knows and this function does not: say so, never guess
        raise MemAuditError(f"show: {path} holds a {res.RESULT_KIND!r} result show cannot print")
    human = f"saved {res.RESULT_KIND} {path}: {about}\n{table}"
    for note in notes:
        human += f"\nnote: {note}"
    return human


def _saved_cost_unit(path: str) -> str | None:
    """The ``cost_unit`` a saved result carries (read again; the models do not keep it)."""
    try:
        with open(path, encoding="utf-8-sig") as fh:
            unit = json.load(fh).get("cost_unit")
    except (OSError, ValueError, AttributeError):
        return None  # read_result has named any problem with the file
    return unit if isinstance(unit, str) and unit.strip() else None


def cmd_schema(args: argparse.Namespace) -> int:
    from .package import package_json_schema

    json.dump(package_json_schema(), _stdout(), indent=2)
    _stdout().write("\n")
    return 0


# --------------------------------------------------------------------------- wiring


class _VersionAction(argparse.Action):
    """``--version``, read from the installed metadata only when asked (about 25 ms)."""

    def __call__(self, parser, namespace, values, option_string=None):  # noqa: ARG002
        if _Parser.wants_json:  # conformance QA: `--version --json` printed plain text
            head = {"json_output_version": JSON_OUTPUT_VERSION}
            print(json.dumps({**head, "memaudit_version": _tool_version()}))
        else:
            print(f"memaudit {_tool_version()}")
        parser.exit()


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The parser's sub-command parsers by name."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error under ``--json`` is also the JSON error object on stdout."""

    wants_json = False  # set by :func:`main` from the raw arguments, before parsing

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # QA s51 #10: `solve PKG --budg 6 --time 5` ran, and `sweep PKG --budget 6` ran as
        # --budgets (argparse's prefix matching): a script relying on a prefix breaks once
        # another option shares it. Full names only, on every parser (add_subparsers makes
        # the subcommands' parsers of this class too); a wrong name gets "did you mean".
        kwargs.setdefault("allow_abbrev", False)
        # The epilogs' examples and exit statuses keep their lines (descriptions are wrapped
        # by :func:`build_parser`).
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kwargs)

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        # Every option that takes one value may be given once (QA s39, defect 4); options
        # that repeat by design say so with action="append", flags with "store_true".
        is_option = bool(args) and str(args[0]).startswith("-")
        if is_option and "action" not in kwargs and kwargs.get("nargs") is None:
            kwargs["action"] = _Once
        return super().add_argument(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        if _Parser.wants_json:
            try:
                _emit(
                    {"error": {"type": UsageError.__name__, "message": f"{self.prog}: {message}"}},
                    True,
                    "",
                )
            except BrokenPipeError:
                # Parsing runs before _main's closed-pipe handler (QA s48: `--solver bogus
                # --json | head` was a traceback and exit 1); stderr still gets the message.
                _silence_stdout()
        # One line, as every other user error prints (QA s51 #11: argparse printed its usage
        # first, 7 lines for solve, then the message): the help is named instead.
        self.exit(EXIT_USER_ERROR, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


# ------------------------------------------------------------------- suite and audit options


def add_source_arguments(p: Any) -> None:
    """What a suite runs on (``sweep`` and ``audit``): package paths, families, seeds, params."""
    p.add_argument(
        "packages",
        nargs="*",
        metavar="PACKAGES",
        help="package files, folders (*.json inside) or .txt lists of paths",
    )
    p.add_argument(
        "--family",
        action="append",
        default=[],
        metavar="NAME[:SEEDS]",
        help="a generated family, optionally with seeds (memaudit-small:0-99); repeatable",
    )
    p.add_argument(
        "--seeds",
        default=None,
        help="seeds for --family without its own, e.g. 0-499 or 0,3,7 (default: seed 0)",
    )
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a --family parameter, applied to every --family given: each of them must have "
        "it (repeatable; see `memaudit generate --list`)",
    )


def add_suite_arguments(p: Any, workers_help: str) -> None:
    """Options shared by ``memaudit sweep`` (suite mode) and ``memaudit audit``; each says
    what its ``--workers`` spread (QA s46: audit's help described sweep's)."""
    p.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help="output folder: CSV + Parquet, report.md with figures, and a journal "
        "that lets an interrupted run resume",
    )
    p.add_argument(
        "--workers",
        type=COUNT,
        default=1,
        metavar="N",
        help=workers_help,
    )
    p.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="run on a Dask distributed cluster, e.g. tcp://host:8786 (workers need "
        "memaudit installed)",
    )
    p.add_argument(
        "--fresh",
        action="store_true",
        help="ignore and replace the journal in --out instead of resuming",
    )
    p.add_argument(
        "--max-tasks",
        type=COUNT,
        default=None,
        metavar="N",
        help="with --out: run at most N pending tasks now; the rest resumes on the next run "
        "(default: all)",
    )
    p.add_argument("--no-figures", action="store_true", help="no PNG figures in the report")


def refuse_out_only_flags(args: Any) -> None:
    """Flags that only mean something with ``--out`` or on local processes, refused when they
    would be ignored (CLI QA: ``--fresh`` and ``--no-figures`` without ``--out``, and
    ``--workers`` beside ``--scheduler``, exited 0 without a word)."""
    for flag, given in (("--fresh", args.fresh), ("--no-figures", args.no_figures)):
        if given and not args.out:
            raise UsageError(
                f"{args.command}: {flag} applies to the output folder: give --out DIR "
                "(without it nothing is journaled and no report is drawn)"
            )
    if args.scheduler is not None and args.workers != 1:
        raise UsageError(
            f"{args.command}: --workers starts local processes; with --scheduler the "
            "cluster's workers run the tasks: give one of them"
        )


def check_suite_arguments(args: Any) -> None:
    """Refuse ``--out`` / ``--max-tasks`` combinations and a package from stdin, which cannot
    work, before any work (and before ``--out`` is made)."""
    refuse_stdin_suite(args)
    refuse_out_only_flags(args)
    if args.out is not None and not str(args.out).strip():
        raise UsageError(
            f"--out {args.out!r}: an empty folder name; give a folder for the suite's files"
        )
    try:
        not_a_folder = bool(args.out) and Path(args.out).exists() and not Path(args.out).is_dir()
    except OSError as exc:  # a name too long for the file system (QA: an internal error)
        raise MemAuditError(f"--out {args.out}: {exc.strerror or exc}") from None
    if not_a_folder:
        raise UsageError(f"--out {args.out}: exists and is not a folder")
    if args.max_tasks is not None:
        if args.max_tasks < 1:
            raise UsageError(f"--max-tasks must be an integer >= 1, got {args.max_tasks}")
        if not args.out:
            raise UsageError(
                "--max-tasks needs --out: the rest of the run resumes from the journal there"
            )

    if args.out:
        # Made now, so that a path that cannot be a folder fails before any work, as a user
        # error (audit's exit status 1 means a disagreement).
        made = [Path(args.out), *Path(args.out).parents]
        args._made_out = [p for p in made if not p.exists()]
        try:
            Path(args.out).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise MemAuditError(
                f"--out {args.out}: cannot create the folder ({exc.strerror or exc})"
            ) from exc
        import tempfile

        try:  # a folder that exists but cannot be written in (QA: an internal error at the end)
            with tempfile.TemporaryFile(dir=args.out):
                pass
        except OSError as exc:
            raise MemAuditError(
                f"--out {args.out}: cannot write in the folder ({exc.strerror or exc})"
            ) from None


def wants_suite(args: Any) -> bool:
    """True when ``memaudit sweep`` was given any suite option (else the plain sweep runs)."""
    return bool(suite_reasons(args))


def suite_reasons(args: Any) -> list[str]:
    """What makes ``memaudit sweep`` a suite run, as a message names it (none: the plain
    sweep of package files runs)."""
    fams = list(args.family or [])
    reasons = [
        flag
        for flag, given in (
            ("--out", args.out),
            ("--scheduler", args.scheduler),
            ("--max-tasks", args.max_tasks is not None),
            # One path for every family sweep, so one output shape and one set of notes.
            ("--family", fams),
        )
        if given
    ]
    lists = [p for p in args.packages if Path(p).is_dir() or p.lower().endswith(".txt")]
    if lists:
        reasons.append(f"the folder or package list {lists[0]}")
    # One package file: its workers solve the budgets in parallel (plain sweep); a suite
    # would run one package's budgets in one task, on one worker.
    one_file = len(args.packages) == 1 and not fams
    if args.workers != 1 and not one_file:
        reasons.append(f"--workers {args.workers} over several packages")
    return reasons


def refuse_stdin_suite(args: Any) -> None:
    """Refuse ``-`` in a suite run, naming what made it one: its tasks read their packages from
    files (QA s45: the message listed --workers, which a sweep of ``-`` alone takes)."""
    if "-" not in (getattr(args, "packages", None) or []):
        return
    if args.command == "audit":
        what = "audit reads its packages"
    else:
        what = f"a sweep with {' and '.join(suite_reasons(args))} reads its packages"
    raise UsageError(
        f"{STDIN_NAME}: {what} from files, not from stdin (-): save the package to a file "
        "(solve, score and a sweep of package files read -; with --workers, when - is its "
        "only package)"
    )


def refuse_stdin_file(path: str | None, what: str) -> None:
    """Refuse ``-`` where a command reads a file only: ``what`` says who reads what
    ("show reads its saved result"). QA s51 #2: `show -`, `score --external -` and
    `import mem0 -` said "-: $: no such file or folder [rule: file-exists]", as if the user
    had named a file "-"; `audit -` was told what this says."""
    if path != "-":
        return
    raise UsageError(
        f"{STDIN_NAME}: {what} from a file, not from stdin (-): save it to a file and give "
        "its path (validate, solve, score, a sweep of package files and import --package "
        "read a package from -)"
    )


def check_family_flags(args: Any) -> None:
    """Refuse ``--seeds`` / ``--param`` without ``--family``, and ``--seeds`` when every
    ``--family`` names its own seeds (sweep and audit alike; CLI QA: audit ignored ``--seeds``
    next to ``--family NAME:A-B``).

    ``--seeds`` gives the seeds of each ``--family`` without its own, as its help says: QA s41
    found ``--family memaudit-small:0-2 --family density_trap --seeds 5`` refused as "seeds
    given twice", untrue for density_trap, which has no seeds of its own. Only a ``--seeds``
    that would apply to no family is refused, since it would be ignored without a word."""
    families = args.family or []
    if not families and (args.seeds is not None or args.param):
        raise UsageError(f"{args.command}: --seeds and --param apply to --family only")
    if args.seeds is not None and all(":" in f for f in families):
        named = ", ".join(f"--family {f}" for f in families)
        raise UsageError(
            f"{args.command}: --seeds {args.seeds} applies to no family: every --family names "
            f"its own seeds ({named}); drop --seeds, or give a --family without :SEEDS"
        )


def cli_sources(args: Any) -> tuple[PackageSource, ...]:
    """The package sources named by ``packages``, ``--family``, ``--seeds`` and ``--param``."""
    from .suites import collect_sources

    check_family_flags(args)

    # Repeats kept: the suite merges them and says so among its notes (QA s39 defect 5 had
    # "--seeds 3,3" noted on stderr only, QA s44 overlapping --family flags not at all).
    seeds = parse_seeds(args.seeds, keep_repeats=True) if args.seeds is not None else None
    params = parse_params(args.param)
    with param_options(params):
        return collect_sources(args.packages, args.family or [], seeds, params)


@contextlib.contextmanager
def param_options(params: dict[str, str]) -> Iterator[None]:
    """Name the ``--param`` options of a value a family refuses, as typed: ``--param
    'length=0': update_chain: length must be ... [rule: count-range]`` (QA s49: the family's
    message alone named no option; with several ``--family``, not which one's). A
    :class:`~memaudit_core.errors.ParamError` names the parameters; a default it names is
    not typed, so not said to be."""
    try:
        yield
    except ParamError as exc:
        typed = [f"--param {f'{k}={params[k]}'!r}" for k in exc.params if k in params]
        # A UsageError, as under --json before: the CLI's type for every option refused.
        raise UsageError(f"{', '.join(typed)}: {exc}" if typed else str(exc)) from None


def unseeded_families_note(args: Any) -> str | None:
    """The note for ``--family NAME`` without seeds, which runs seed 0 only (CLI QA: a
    forgotten ``--seeds`` gave n = 1 and a CI of n/a without a word), else None."""
    if args.seeds is not None:
        return None
    from .generators import FAMILIES

    unseeded = [f for f in args.family or [] if ":" not in f]
    # QA s41: a seed-invariant family (update_chain) was advised a seed range, which only
    # repeats its one instance; it is told that instead.
    invariant = [f for f in unseeded if f in FAMILIES and not FAMILIES[f].seeded]
    seeded = [f for f in unseeded if f not in invariant]
    parts = []
    if seeded:
        parts.append(
            f"--family {', '.join(seeded)} without seeds ran seed 0 only: pass --seeds A-B "
            "(or NAME:A-B) for a seed range"
        )
    if invariant:
        parts.append(
            f"--family {', '.join(invariant)} does not use the seed: its one instance ran "
            "(seed 0), and a seed range would only repeat it"
        )
    return "; ".join(parts) or None


def _suite_run_options(args: Any, label: str) -> dict[str, Any]:
    """What every suite command hands its runner: the sources, the output folder and its
    journal, the backend, the task cap, the figures and a progress bar labelled ``label``."""
    sources = cli_sources(args)
    return {
        "sources": sources,
        "out": args.out,
        "workers": args.workers,
        "scheduler": args.scheduler,
        "resume": not args.fresh,
        "max_tasks": args.max_tasks,
        "figures": not args.no_figures,
        "progress": Progress(label, enabled=not args.quiet),
        "on_warnings": _suite_warnings(sources),
    }


def _suite_warnings(sources: Sequence[PackageSource]) -> Callable[[str, Sequence[str]], None]:
    """:data:`PACKAGE_WARNINGS` for a suite's ``on_warnings``: its ``--json`` lists the
    packages' warnings (a generated family's too, named by family, seed and parameters)
    from the start."""
    PACKAGE_WARNINGS.start()
    files = {s.label for s in sources if s.kind == "file"}

    def on_warnings(label: str, warnings: Sequence[str]) -> None:
        PACKAGE_WARNINGS(label, warnings, generated=label not in files)

    return on_warnings


def _with_seed_note(result: Any, args: Any) -> Any:
    """``result`` with :func:`unseeded_families_note` among its notes, when there is one."""
    note = unseeded_families_note(args)
    return dataclasses.replace(result, notes=(*result.notes, note)) if note else result


def sweep_settings(args: Any) -> dict[str, Any]:
    """How ``memaudit sweep`` solved, for its JSON (QA: the limits appeared only inside the
    note's text): the solver, the time limits (``None``: no limit) and the cross-checks (both
    sweep paths check every budget of a sample of packages, one in
    :data:`memaudit_core.solvers.budgets.SAMPLE_EVERY`; conformance QA: not said)."""
    return {
        "solver": args.solver,
        "time_limit": args.time_limit,
        "total_time_limit": getattr(args, "total_time_limit", None),
        "cross_check": "sample",
    }


def cli_sweep_suite(args: Any) -> int:
    """``memaudit sweep`` with suite options (folders, lists, families, workers, --out)."""
    from .analysis import check_something_to_sweep
    from .suites import rows_with_kinds, shown_notes, sweep_suite

    check_suite_arguments(args)
    budgets = _budget_list(args.budgets) if args.budgets is not None else None
    writers = getattr(args, "writer_names", None)  # cmd_sweep's list (QA s39, defect 4)
    if writers is None and args.writers is not None:
        writers = _split_names(args.writers, "--writers")
    stores, ablations = (
        _split_names(args.stores, "--stores"),
        _split_names(args.ablations, "--ablations"),
    )
    if writers is not None:  # None: every writer; as the plain sweep says
        check_something_to_sweep(writers, stores, ablations, "sweep")
    res = sweep_suite(
        budgets=budgets,
        writers=writers,
        stores=stores,
        ablations=ablations,
        solver=args.solver,
        time_limit=args.time_limit,
        command=("memaudit", *getattr(args, "_argv", ())),
        **_suite_run_options(args, "sweep"),
    )
    res = dataclasses.replace(
        _with_seed_note(res, args), settings=tuple(sweep_settings(args).items())
    )
    if args.output:  # with each method's kind, as --out's rows.csv (QA s42 round 2, #1)
        _write_rows_csv(Path(args.output), *rows_with_kinds(res))
    human = (
        f"{sweep_packages_text(res)}, {res.n_tasks} tasks: {res.executed} run now, "
        f"{res.reused} reused; {res.elapsed_s:.2f} s on {res.backend}\n"
        + summary_table(res.summary, res.method_kinds, res.errors, res.rows)
        + family_table(res)
    )
    for note in shown_notes(res.notes, res.rows):
        human += f"\nnote: {note}"
    if res.files:
        human += f"\nwrote {len(res.files)} file(s) to {res.out} (report: {res.out}/report.md)"
    if res.errors:
        human += (
            f"\n{len(res.errors)} writer run(s) failed; their rows are missing (details on stderr)"
        )
    # Kept if a closed pipe cuts _emit. A failed writer (2) comes before tasks left to run (3).
    status, reason = result_exit_status(res)
    args._exit_code = EXIT_USER_ERROR if res.errors else status
    _emit(res.to_dict(), args.json, human)
    _report_writer_failures(res.errors, args.debug)
    _say_exit_reason(reason)
    return args._exit_code


def add_audit_arguments(p: Any) -> None:
    """Arguments of ``memaudit audit``."""
    add_source_arguments(p)
    p.add_argument(
        "--budgets",
        default=None,
        help="e.g. 1,4,7,15 or 2:20:2 (start:stop:step, stop included); default: each "
        "package's budget grid",
    )
    p.add_argument(
        "--pools",
        default="full",
        # QA s51 #10: a pool's method name (no_validity_opt) is taken too, as by --ablations;
        # s53: every name the audit takes, from its registry (full_opt was left out).
        help=f"comma list of candidate pools: {', '.join(AUDIT_POOL_NAMES)}; a pool or its "
        "optimum's method name (default: full)",
    )
    p.add_argument(
        "--time-limit",
        type=SECONDS,
        default=60.0,
        metavar="S",
        help="seconds per engine run (default 60, so that one hard instance cannot stall "
        "the audit); a limited run counts as unproven",
    )
    p.add_argument(
        "--quiet",
        action="store_true",
        help="no progress bar and no package warnings on stderr (--json still lists them)",
    )
    add_suite_arguments(
        p,
        "local worker processes (default 1): packages are spread over them, at most one "
        "worker per package (an audit of one package runs in one process)",
    )


def _report_gap_text(rep: Any) -> str:
    """What the header adds when an engine reported a value its store does not have: such
    checks fail while the engines' stores agree (QA s49: "FAIL" stood over "max difference 0
    (relative 0)" alone)."""
    gap = rep.max_report_gap
    if gap is None:
        return ""
    return (
        " between the engines' stores; an engine's reported value is off its store's F by up "
        f"to {_fmt(gap, 3)}"
    )


def _audit_human(rep: Any, saved_in: str | None = None) -> str:
    """``audit``'s text for an :class:`~memaudit_core.audit.AuditReport`; ``show`` passes the
    saved file as ``saved_in``, and the files are then the run's, not written now."""
    from .audit import UNPROVEN_WHY, engine_time_lines, engine_values, unproven_lines

    verdict = rep.headline  # QA s41 #3: "PASS (1 unproven)", not a bare PASS
    lines = [
        f"{verdict}: {rep.n_agree} of {rep.n_tasks} checks (instance x pool x budget) agree, "
        f"{rep.n_disagree} disagree, {rep.n_unproven} unproven, {rep.n_skipped} skipped",
        f"sources {rep.n_sources}, distinct packages {rep.n_packages}, distinct instances "
        f"{rep.n_instances}; pools {', '.join(rep.pools)}; budgets "
        f"{', '.join(f'{b:.10g}' for b in rep.budgets)}",
        f"max difference {_fmt(rep.max_abs_diff, 3)} (relative {_fmt(rep.max_rel_diff, 3)})"
        + _report_gap_text(rep),
        *engine_time_lines(rep),
        f"{rep.executed} check(s) run now, {rep.reused} reused; {rep.elapsed_s:.2f} s on "
        f"{rep.backend}",
        "",
        _table(
            ["family / files", "sources", "packages", "instances"],
            [
                [f.family, str(f.n_sources), str(f.n_packages), str(f.n_instances)]
                for f in rep.families
            ],
        ),
    ]
    for r in rep.disagreements:
        lines.append(
            f"DISAGREEMENT {r.source} pool {r.pool} budget {r.budget:.10g}: {engine_values(r)} "
            f"{'; '.join(r.problems)}"
        )
    if rep.n_unproven:
        lines.append(f"\nunproven ({UNPROVEN_WHY}):")
        lines.append(unproven_lines(rep, limit=20))
    lines.extend(f"note: {n}" for n in rep.notes)
    if rep.files:
        what = "wrote" if saved_in is None else "the run saved in " + saved_in + " wrote"
        lines.append(f"{what} {len(rep.files)} file(s) to {rep.out} (report: {rep.out}/report.md)")
    return "\n".join(lines)


def cli_audit(args: Any) -> int:
    """``memaudit audit``: exit status 0 on PASS only (:func:`result_exit_status`)."""
    from .audit import audit

    check_suite_arguments(args)
    rep = audit(
        budgets=_budget_list(args.budgets) if args.budgets is not None else None,
        pools=_split_names(args.pools, "--pools"),
        time_limit=args.time_limit,
        **_suite_run_options(args, "audit"),
    )
    rep = _with_seed_note(rep, args)
    # Every verdict but PASS exits non-zero (s52: INCOMPLETE exited 0); set before the output,
    # which a reader that closes the pipe may cut short.
    args._exit_code, reason = result_exit_status(rep)
    _emit(rep.to_dict(), args.json, _audit_human(rep))
    _say_exit_reason(reason)
    return args._exit_code


def result_exit_status(res: Any, saved_in: str | None = None) -> tuple[int, str | None]:
    """The exit status a suite result gives, and the one line that says why (None for 0).

    One rule for the run and for ``show`` of its saved result (``saved_in``: the file), so a
    CI script reads a saved result as it read the run: an audit exits 0 only on PASS (1 on
    FAIL or NOTHING CHECKED, :data:`EXIT_INCOMPLETE` on INCOMPLETE, 1 when an incomplete audit
    has found a disagreement already), a sweep suite :data:`EXIT_INCOMPLETE` when tasks are
    left; any other result 0. Writer failures (a sweep's exit 2) are the run's own error, not
    the result's verdict: ``show`` lists them and exits 0.
    """
    from .audit import AuditReport
    from .suites import SweepSuiteResult

    if not isinstance(res, AuditReport | SweepSuiteResult):
        return 0, None
    kind = "audit" if isinstance(res, AuditReport) else "sweep"
    what = kind if saved_in is None else f"the {kind} saved in {saved_in}"
    resume = "the same command with the same --out resumes it" + (
        "" if res.out is None else f" ({res.out})"
    )
    if isinstance(res, AuditReport):
        done = res.n_agree + res.n_disagree + res.n_unproven + res.n_skipped
        if res.n_disagree:  # found already, whether or not checks are left
            code = EXIT_NOT_PASSED
            why = f"{res.n_disagree} of the {done} checks run disagree"
        elif not res.complete:
            code, why = EXIT_INCOMPLETE, f"{done} of {res.n_tasks} checks run; {resume}"
        elif res.verdict == "NOTHING CHECKED":
            code = EXIT_NOT_PASSED
            why = (
                f"none of the {res.n_tasks} checks was cross-checked ({res.n_unproven} "
                f"unproven, {res.n_skipped} skipped)"
            )
        else:
            return 0, None
        return code, f"exit {code}: {what}: {res.verdict}, {why}"
    if not res.complete:
        why = f"{res.executed + res.reused} of {res.n_tasks} tasks done; {resume}"
        return EXIT_INCOMPLETE, f"exit {EXIT_INCOMPLETE}: {what}: incomplete, {why}"
    return 0, None


def _say_exit_reason(reason: str | None) -> None:
    """The one line on stderr that says why the command exits non-zero (stdout keeps the
    report or the JSON object alone)."""
    if reason is not None:
        # A run stopped by --max-tasks leaves its bar short of the end, without its newline.
        Progress.close_line()
        print(_terminal_safe(f"memaudit: {reason}"), file=sys.stderr)


#: ``--plugin-module``'s help (before and after the command).
PLUGIN_MODULE_HELP = (
    "import this module first (repeatable; also MEMAUDIT_PLUGIN_MODULES=MOD1,MOD2): a module "
    "that registers a saturation (memaudit_core.register_saturation) on import, for packages "
    "and saved results naming it"
)


#: Each command's examples, for its --help (QA s51 #1: no help showed one). Run from the
#: repository's root, every one works as written (the README's CLI section has them too;
#: tests/test_s51_cli.py parses each and checks the files it reads exist).
HELP_EXAMPLES: dict[str | None, tuple[str, ...]] = {
    None: (
        "memaudit validate sample_packages/travel-assistant.json",
        "memaudit solve sample_packages/update_chain.json --budget 6",
        "memaudit score sample_packages/update_chain.json --budget 6 --writer density",
    ),
    "validate": (
        "memaudit validate sample_packages/travel-assistant.json",
        "memaudit generate memaudit-small --seed 3 | memaudit validate - --json",
    ),
    "solve": (
        "memaudit solve sample_packages/update_chain.json --budget 6",
        "memaudit solve sample_packages/update_chain.json --budget 6 --pool no_validity",
        "memaudit solve sample_packages/event-graph-500.json --budget 400 --solver milp "
        "--time-limit 10 --json",
    ),
    "score": (
        "memaudit score sample_packages/update_chain.json --budget 6 --writer density",
        "memaudit score sample_packages/travel-assistant.json --store raw-logger",
        "memaudit score sample_packages/update_chain.json --budget 6 --writer gvt --json",
    ),
    "sweep": (
        "memaudit sweep sample_packages/update_chain.json --writers gvt,density --budgets 2:10:2",
        "memaudit sweep --family memaudit-small:0-99 --budgets 2,4,8,16 --ablations "
        "no_validity,generic",
        "memaudit sweep sample_packages/update_chain.json --json > sweep.json",
    ),
    "audit": (
        "memaudit audit sample_packages/update_chain.json --budgets 2,4,6",
        "memaudit audit --family memaudit-small:0-99 --budgets 2,4,8",
    ),
    "generate": (
        "memaudit generate --list",
        "memaudit generate memaudit-small --seed 3 -o small-3.json",
    ),
    "import": (
        "memaudit import locomo tests/fixtures/importers/locomo_small.json --instance conv-a "
        "-o conv-a.json",
        "memaudit import mem0 tests/fixtures/importers/mem0_v2_results.json --package "
        "conv-a.json -o conv-a+mem0.json",
    ),
    "writers": ("memaudit writers", "memaudit writers --json"),
    "show": (
        "memaudit sweep sample_packages/update_chain.json --json > sweep.json",
        "memaudit show sweep.json",
    ),
    "schema": ("memaudit schema",),
}

#: What exit status 1 means, by command (None: the top level); a command not listed exits 1
#: only on an internal error. Checked against :func:`_run` (SolverDisagreementError: 1) and
#: :func:`result_exit_status` (an audit's FAIL or NOTHING CHECKED: 1, also under ``show``).
_EXIT_ONE: dict[str | None, str] = {
    None: "the exact engines disagree (solve, score, sweep, audit; please report it), "
    "audit's verdict is FAIL or NOTHING CHECKED (show of a saved audit too), or an internal "
    "error",
    "solve": "the exact engines disagree (please report it, with the package), or an "
    "internal error",
    "score": "the exact engines disagree (please report it, with the package), or an "
    "internal error",
    "sweep": "the exact engines disagree (please report it, with the package), or an "
    "internal error",
    "audit": "the verdict is FAIL (a disagreement between the engines, also in an audit "
    "with checks left) or NOTHING CHECKED (nothing could be cross-checked: every check "
    "stopped at its limit or was skipped), or an internal error",
    "show": "the saved audit's verdict is FAIL or NOTHING CHECKED, as audit exited, or an "
    "internal error",
}

#: What exit status 0 means where it is more than "done".
_EXIT_ZERO = {
    "validate": "valid (warnings allowed)",
    "sweep": "done, every task run",
    "audit": "the verdict is PASS: every check ran, none disagrees and at least one was "
    "cross-checked (the headline counts any unproven or skipped, as PASS (1 unproven))",
    "show": "printed (a saved audit's verdict is PASS; a saved sweep or audit is complete)",
}

#: What exit status 3 means, by command: a suite run stopped with tasks left (--max-tasks).
_EXIT_THREE: dict[str | None, str] = {
    None: "sweep or audit stopped with tasks left (--max-tasks; the audit's verdict "
    "INCOMPLETE): the same command with the same --out resumes it; show of such a saved "
    "result too",
    "sweep": "the sweep stopped with tasks left (--max-tasks): the same command with the same "
    "--out resumes it",
    "audit": "the verdict is INCOMPLETE: the audit stopped with checks left (--max-tasks); "
    "the same command with the same --out resumes it",
    "show": "the saved sweep or audit is incomplete (stopped with tasks left), as the run exited",
}

#: What exit status 2 adds to "bad input or arguments", by command.
_EXIT_TWO_MORE = {"score": ", a writer that failed", "sweep": ", a writer that failed"}


def help_epilog(command: str | None) -> str:
    """The examples and exit statuses ending ``memaudit [COMMAND] --help`` (QA s51 #1: CI
    scripts need the statuses, and none was listed)."""
    examples = "\n".join(f"  {line}" for line in HELP_EXAMPLES[command])
    one = _EXIT_ONE.get(command, "an internal error (a bug: please report it)")
    two = "a user error: bad input or arguments" + _EXIT_TWO_MORE.get(command, "")
    if command is None:
        two += ", a writer that failed"
    if command == "validate":
        two = "the package is invalid (one line per problem), or bad arguments"
    statuses = [
        ("0", _EXIT_ZERO.get(command, "done")),
        ("1", one),
        ("2", two),
        *((("3", _EXIT_THREE[command]),) if command in _EXIT_THREE else ()),
        ("130", "interrupted (Ctrl-C); 143 after SIGTERM, 129 after SIGHUP"),
    ]
    width = 74
    lines = []
    for code, text in statuses:
        wrapped = textwrap.wrap(text, width - 7, break_on_hyphens=False)
        lines.append(f"  {code:<5}{wrapped[0]}")
        lines.extend(f"       {rest}" for rest in wrapped[1:])
    return f"examples:\n{examples}\n\nexit status:\n" + "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    from .costs import COST_RULES

    COST_RULE_NAMES = list(COST_RULES)  # noqa: N806 (a constant of this function)

    def history_opt(p: argparse.ArgumentParser) -> None:  # score --external and import mem0
        p.add_argument(
            "--history",
            default=None,
            metavar="FILE",
            help="mem0 only: history rows (JSON) or history.db",
        )

    def label_opt(p: argparse.ArgumentParser, where: str) -> None:  # score, import
        p.add_argument(
            "--label",
            default=None,
            metavar="TEXT",
            help=f"{where}the store's label in legends and tables (default: the system and "
            "the export's file name, e.g. 'Mem0 · run3.json')",
        )

    parser = _Parser(
        prog="memaudit",
        description="Score LLM memory stores against the exact, certified optimum of a package.",
        epilog=help_epilog(None),
    )
    parser.add_argument(
        "--debug", action="store_true", help="show tracebacks for unexpected errors"
    )
    parser.add_argument(
        "--version", action=_VersionAction, nargs=0, help="print the version and exit"
    )
    parser.add_argument(
        "--plugin-module",
        action="append",
        default=[],
        metavar="MODULE",
        help=PLUGIN_MODULE_HELP + " (also after the command)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def command(name: str, summary: str, more: str = "") -> argparse.ArgumentParser:
        # The summary heads the command's own --help too (QA: those pages had none), with
        # ``more`` after it there; wrapped here, as the raw formatter keeps the epilog's lines.
        description = textwrap.fill(summary, 78) + (
            f"\n\n{textwrap.fill(more, 78)}" if more else ""
        )
        p = sub.add_parser(name, help=summary, description=description, epilog=help_epilog(name))
        # Also after the command, where "rerun with --debug" sends users (plugin QA:
        # `memaudit score ... --debug` was an unrecognized argument). SUPPRESS keeps a
        # `memaudit --debug score` from being reset by the subparser's default.
        p.add_argument(
            "--debug",
            action="store_true",
            default=argparse.SUPPRESS,
            help="show tracebacks for unexpected errors (also before the command)",
        )
        # Its own dest: a subparser's values replace the top-level ones of the same dest.
        p.add_argument(
            "--plugin-module",
            dest="plugin_module_after",
            action="append",
            default=[],
            metavar="MODULE",
            help=PLUGIN_MODULE_HELP + " (also before the command)",
        )
        return p

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--json", action="store_true", help="one JSON object on stdout")

    def writer_module_opts(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--writer-module",
            action="append",
            default=[],
            metavar="MODULE:FUNCTION",
            help="a plugin writer package.module:function (repeatable); blind "
            "writers run in an isolated worker that sees no weights or coverage",
        )
        p.add_argument(
            "--writer-timeout",
            type=WRITER_SECONDS,
            default=None,
            metavar="S",
            help="per-call timeout of a blind plugin writer (default 60)",
        )

    def solver_opts(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--solver",
            choices=SOLVER_CHOICES,
            default="auto",
            help="auto (default): exhaustive enumeration on small packages, branch-and-bound "
            "on medium ones, the HiGHS MILP on large ones, each cross-checked by a second "
            "engine where that is cheap; bnb, milp: one engine; enum: every store "
            "(small packages); brute: every subset (tests only)",
        )
        p.add_argument(
            "--time-limit",
            type=SECONDS,
            default=None,
            metavar="S",
            help="seconds per engine run (default: no limit), reading and compiling the "
            "package not counted; a limited run reports incumbent, bound and gap. On models of "
            "30,000+ candidates HiGHS runs in a child process stopped at 1.25x what is left of "
            "the limit, at least 2 s over it, as its root heuristics can ignore the clock; "
            "without another start the greedy store is computed first, to its end, and "
            "counted in the limit (it can use all of it: ~10-27 s at 48,000 random candidates)",
        )

    p = command("validate", "check a package; one line per problem (file, JSON path, rule)")
    p.add_argument("package", help="package JSON file (- reads it from stdin)")
    common(p)
    p.set_defaults(func=cmd_validate)

    p = command("solve", "the certified optimum (OPT) of a package at a budget")
    p.add_argument("package", help="package JSON file (- reads it from stdin)")
    p.add_argument("--budget", type=budget_arg, default=None, help=DEFAULT_BUDGET_HELP)
    p.add_argument(
        "--pool",
        default="full",
        choices=list(POOL_NAMES),
        help="candidate pool: full (default); no_validity drops tombstones and compound "
        "updates; generic keeps raw spans, atomic facts and summaries (the ablation optima)",
    )
    p.add_argument(
        "--node-limit",
        type=number_arg(0, integer=True),
        default=None,
        help="stop branch-and-bound / HiGHS after this many nodes (default: no limit; a "
        "limited run: incumbent, bound and gap); the root heuristics before the first node "
        "are bounded by --time-limit only (seconds on packages of thousands of groups); not "
        "with --solver enum or brute, which visit every store",
    )
    solver_opts(p)
    common(p)
    p.set_defaults(func=cmd_solve)

    p = command(
        "score",
        "a writer's or a store's F, OPT, ratio and per-unit losses",
        # QA s51 #10: said only by the error of a run without one.
        "Give exactly one of --writer NAME, --store ID or --external EXPORT (with --format).",
    )
    p.add_argument("package", help="package JSON file (- reads it from stdin)")
    p.add_argument("--budget", type=budget_arg, default=None, help=DEFAULT_BUDGET_HELP)
    p.add_argument(
        "--writer",
        default=None,
        action=_Once,
        help="a reference writer (see `memaudit writers`) or a plugin MODULE:FUNCTION "
        "(exactly one of --writer, --store, --external)",
    )
    p.add_argument(
        "--store",
        default=None,
        action=_Once,
        help="the id of a store written in the package (exactly one of --writer, --store, "
        "--external)",
    )
    writer_module_opts(p)
    p.add_argument(
        "--external",
        default=None,
        metavar="EXPORT",
        help="a memory-system export to score as an external store (exactly one of "
        "--writer, --store, --external)",
    )
    p.add_argument(
        "--format",
        default=None,
        choices=["mem0", "letta", "amem", "zep"],
        help="the export's format (with --external; mem0 also reads an OpenMemory backup zip)",
    )
    p.add_argument(
        "--cost-rule",
        default=None,
        metavar="RULE",
        help=f"with --external: cost of each memory: {', '.join(COST_RULE_NAMES)} (default: "
        "the rule counting the package's cost unit, else words)",
    )
    history_opt(p)
    label_opt(p, "with --external: ")
    p.add_argument(
        "--salience-field",
        default=None,
        metavar="FIELD",
        help="external stores: read salience from this (dotted) memory meta field "
        "instead of the memory's salience, for the salience-pruned selection",
    )
    solver_opts(p)
    common(p)
    p.set_defaults(func=cmd_score)

    p = command("sweep", "ratios over budgets and packages (or a family's seeds)")
    add_source_arguments(p)
    p.add_argument(
        "--budgets",
        default=None,
        help="e.g. 2,4,8,16 or 2:20:2 (start:stop:step, stop included); default: each "
        "package's budget grid",
    )
    p.add_argument(
        "--writers",
        default=None,
        help="comma list of reference writers (see `memaudit writers`) and plugin writers "
        "MODULE:FUNCTION (default: all reference writers)",
    )
    writer_module_opts(p)
    p.add_argument("--stores", default=None, help="comma list of package store ids (default: none)")
    # QA s51 #10: the help listed the pools' names only; their method names are taken too.
    p.add_argument(
        "--ablations",
        default=None,
        help="comma list of the ablation optima over the full one: "
        f"{', '.join([*ABLATIONS.values(), *ABLATIONS])} (a pool or its method name; "
        "default: none)",
    )
    p.add_argument("-o", "--output", default=None, help="also write per-row CSV here")
    p.add_argument(
        "--quiet",
        action="store_true",
        help="no progress bar and no package warnings on stderr (--json still lists them)",
    )
    solver_opts(p)
    p.add_argument(
        "--total-time-limit",
        type=SECONDS,
        default=None,
        metavar="S",
        help="seconds for all the sweep's solves together (default: no limit; only for package "
        "files in one process: not with --family, folders, package lists, --out or "
        "--workers): each run gets its fair share of the time left, quick budgets leave "
        "theirs to the hard ones, and time left at the end goes to the unproven ones",
    )
    common(p)
    add_suite_arguments(
        p,
        "local worker processes (default 1): packages are spread over them; a sweep of one "
        "package file spreads its budgets instead",
    )
    p.set_defaults(func=cmd_sweep)

    p = command(
        "audit",
        "run bnb, milp and (where at most 100,000 stores fit) enum on many instances and "
        "compare (exit 1 on any disagreement, or when nothing could be cross-checked)",
    )
    add_audit_arguments(p)
    common(p)
    p.set_defaults(func=cmd_audit)

    p = command("generate", "write a generated package (families: `memaudit generate --list`)")
    p.add_argument("family", nargs="?", help="family name, e.g. memaudit-small")
    p.add_argument("--seed", type=seed_arg, default=0, help="seed (default 0)")
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a family parameter (repeatable; see --list)",
    )
    p.add_argument("-o", "--output", default=None, help="file (default: stdout)")
    p.add_argument("--list", action="store_true", help="describe families and parameters")
    p.add_argument(
        "--json",
        action="store_true",
        # QA s51 #10: "one JSON object on stdout"; without -o the package is printed.
        help="with -o: a JSON summary of the generated package on stdout (without -o the "
        "package is the output; with --list: the families as JSON); errors as the JSON error "
        "object",
    )
    p.set_defaults(func=cmd_generate)

    p = command(
        "import",
        "convert an artifact folder/zip, LoCoMo or LongMemEval file into a package, or add a "
        "Mem0 / Letta / A-Mem / Zep export to a package as an external store",
    )
    p.add_argument(
        "format", choices=["artifact", "locomo", "longmemeval", "mem0", "letta", "amem", "zep"]
    )
    p.add_argument(
        "source",
        help="folder, zip or JSON file (for an export: the export file; mem0 also reads an "
        "OpenMemory backup zip)",
    )
    p.add_argument("-o", "--output", default=None, help="package file (default: stdout)")
    p.add_argument(
        "--instance",
        default=None,
        metavar="ID",
        help="LoCoMo sample_id / LongMemEval question_id (required when the file holds several)",
    )
    p.add_argument(
        "--cost-rule",
        default=None,
        metavar="RULE",
        help=f"cost of each candidate (locomo, longmemeval) or memory (exports): "
        f"{', '.join(COST_RULE_NAMES)} (default words; for an export, the rule counting the "
        "--package's cost unit)",
    )
    p.add_argument(
        "--package",
        default=None,
        metavar="PACKAGE",
        help="exports: the package to add the export to (its units give the coverage)",
    )
    history_opt(p)
    p.add_argument(
        "--store-id",
        default=None,
        metavar="ID",
        help="exports: the new store's id (default: the format's name, made unique)",
    )
    label_opt(p, "exports: ")
    p.add_argument(
        "--json",
        action="store_true",
        help="with -o: a JSON summary of the import on stdout (without -o the package is the "
        "output); errors as the JSON error object",
    )
    p.set_defaults(func=cmd_import)

    p = command("writers", "list the reference and plugin writers (name, kind, source)")
    p.add_argument(
        "--writer-module",
        action="append",
        default=[],
        metavar="MODULE:FUNCTION",
        help="also register and list this plugin writer (repeatable)",
    )
    common(p)
    p.set_defaults(func=cmd_writers)

    p = command("show", "a result saved with --json or a library result's to_dict(), printed again")
    p.add_argument("result", help="the saved JSON file")
    common(p)
    p.set_defaults(func=cmd_show)

    p = command("schema", "print the package JSON Schema")
    # The schema is JSON already; --json is accepted so that a script can pass it to every
    # command (conformance QA: "unrecognized arguments: --json").
    p.add_argument("--json", action="store_true", help="accepted; the output is JSON either way")
    p.set_defaults(func=cmd_schema)
    return parser


def _put_cwd_on_path() -> None:
    """Let ``--writer-module mine:fn`` find ``./mine.py``, as ``python -m`` would.

    The ``memaudit`` script's sys.path starts at its own folder, not the working one (QA: a
    newcomer's module next to their package was "not on the Python path"). Appended, not
    prepended, so a file in the working folder cannot shadow an installed module.
    """
    cwd = os.getcwd()
    if "" not in sys.path and cwd not in sys.path:
        sys.path.append(cwd)


_NEGATIVE = re.compile(r"^-(\.?\d|(inf|infinity|nan)$)", re.IGNORECASE)


def _value_options(parser: argparse.ArgumentParser) -> set[str]:
    """Option strings, in the parser and its subcommands, that take one value."""
    found: set[str] = set()
    for action in parser._actions:
        if action.option_strings and action.nargs != 0:
            found.update(action.option_strings)
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found |= _value_options(sub)
    return found


def _join_negative_values(raw: list[str], parser: argparse.ArgumentParser) -> list[str]:
    """``--budgets -2,4`` as ``--budgets=-2,4``: argparse takes ``-2,4`` for an option and
    said "expected one argument" (CLI QA), where the ``=`` form gets the product's message."""
    takes_value = _value_options(parser)
    out: list[str] = []
    for k, token in enumerate(raw):
        if token == "--":
            return out + raw[k:]
        if out and out[-1] in takes_value and _NEGATIVE.match(token):
            out[-1] = f"{out[-1]}={token}"
        else:
            out.append(token)
    return out


def _misplaced_hint(
    raw: Sequence[str],
    unknown: Sequence[str],
    command: str | None,
    sub_parser: argparse.ArgumentParser,
) -> str:
    """Where the command's options go, when they were given before it.

    QA s39 (defect 7): ``memaudit --json solve x`` said only "unrecognized arguments: --json",
    though ``--json`` is an option of ``solve`` that goes after the command name.
    """
    flags = [u.split("=", 1)[0] for u in unknown if u.startswith("-")]
    if command is None:
        if "--json" not in flags:
            return ""
        return "; options such as --json go after the command, e.g. memaudit solve PACKAGE --json"
    at = list(raw).index(command) if command in raw else len(raw)
    known = {o for a in sub_parser._actions for o in a.option_strings}
    before = [t for t in raw[:at] if t.split("=", 1)[0] in known and t in unknown]
    if not before:
        return ""
    rest = [t for k, t in enumerate(raw) if k > at]
    # Shell-quoted, so the command shown runs as shown (QA s39: "a b.json" and an empty
    # --writers "" were printed bare).
    example = shlex.join(["memaudit", command, *rest, *before])
    return (
        f"; {' '.join(before)} "
        f"{'is an option' if len(before) == 1 else 'are options'} of {command} and "
        f"{'goes' if len(before) == 1 else 'go'} after the command: {example}"
    )


#: sweep's list options given to score, and score's one-name option (QA s50: `score
#: --writers gvt` got only "unrecognized arguments").
_SCORE_SINGULAR = {"--writers": "--writer NAME", "--stores": "--store ID"}


def _plural_option_hint(unknown: Sequence[str], command: str | None) -> str:
    """What score takes instead of sweep's ``--writers`` / ``--stores``, or ''."""
    if command != "score":
        return ""
    flags = dict.fromkeys(u.split("=", 1)[0] for u in unknown if u.startswith("--"))
    return "".join(
        f"; score scores one {flag[2:-1]}: use {_SCORE_SINGULAR[flag]} (sweep takes {flag})"
        for flag in flags
        if flag in _SCORE_SINGULAR
    )


def _did_you_mean_hint(
    unknown: Sequence[str], command: str | None, sub_parser: argparse.ArgumentParser
) -> str:
    """The command's option closest to each unknown one, as "; did you mean --budget?", or ''.

    QA s51 #10: `solve PKG --budgets 6` got only "unrecognized arguments"; options are no
    longer shortened either (``allow_abbrev=False``), so ``--budg`` is named in full here.
    score's ``--writers`` / ``--stores`` have :func:`_plural_option_hint` instead.
    """
    import difflib

    known = sorted({o for a in sub_parser._actions for o in a.option_strings if o[:2] == "--"})
    hints: dict[str, str] = {}
    for flag in dict.fromkeys(u.split("=", 1)[0] for u in unknown if u.startswith("--")):
        # An option of the command given before it has _misplaced_hint's word instead.
        if flag in known or (command == "score" and flag in _SCORE_SINGULAR):
            continue
        # A prefix of one option is that option; else the closest spelling.
        starts = [o for o in known if o.startswith(flag)]
        close = starts if len(starts) == 1 else difflib.get_close_matches(flag, known, n=1)
        if close:
            hints[flag] = close[0]
    if len(hints) == 1:
        return f"; did you mean {next(iter(hints.values()))}?"
    return "".join(
        f"{'; did you mean' if k == 0 else ','} {meant} for {flag}"
        for k, (flag, meant) in enumerate(hints.items())
    ) + ("?" if hints else "")


def main(argv: Sequence[str] | None = None) -> int:
    """The ``memaudit`` command; returns its exit status."""
    # First of all: a usage error or a Ctrl-C before parsing emits too, and must not list
    # the previous call's package warnings (QA s45 review: a second in-process main() did).
    PACKAGE_WARNINGS.reset()
    # A closed stdout or stderr (`>&-`, `2>&-`, a daemon started without them) is None in
    # Python. QA (session 19): with stderr closed, the first progress line was an internal
    # error whose message went to stdout, into the JSON; with stdout closed, the JSON went to
    # stderr. What would go to a closed stream now goes nowhere.
    closed = [name for name in ("stdout", "stderr") if getattr(sys, name) is None]
    if not closed:
        return _main_interruptible(argv)
    with open(os.devnull, "w", encoding="utf-8") as sink:
        for name in closed:
            setattr(sys, name, sink)
        try:
            return _main_interruptible(argv)
        finally:
            for name in closed:
                setattr(sys, name, None)


def _main_interruptible(argv: Sequence[str] | None) -> int:
    """:func:`_main`, with a Ctrl-C before the command runs ended as one during it.

    Building the parser imports NumPy, SciPy and HiGHS (half a second), before :func:`_run`
    handles Ctrl-C: a Ctrl-C then printed a ``KeyboardInterrupt`` traceback (QA s45).
    """
    global _OUTPUT_STATE
    _OUTPUT_STATE = None
    try:
        return _main(argv)
    except KeyboardInterrupt:
        with contextlib.suppress(OSError, ValueError):
            Progress.close_line()
            # A Ctrl-C while an error object was being written: not a second one after it.
            if _OUTPUT_STATE is not None:
                print("memaudit: interrupted while the output was being written", file=sys.stderr)
                return EXIT_INTERRUPTED
            print("memaudit: interrupted", file=sys.stderr)
            if _Parser.wants_json:
                _emit({"error": {"type": "Interrupted", "message": "interrupted"}}, True, "")
        return EXIT_INTERRUPTED


def _main(argv: Sequence[str] | None) -> int:
    raw = list(sys.argv[1:] if argv is None else argv)
    options = raw[: raw.index("--")] if "--" in raw else raw  # after "--" only operands
    _Parser.wants_json = "--json" in options
    parser = build_parser()
    args, unknown = parser.parse_known_args(_join_negative_values(raw, parser))
    if unknown:
        # The command's own usage, not the top-level one (CLI QA: `solve x.json --bogus`
        # printed `memaudit [-h] ... COMMAND`, which does not list solve's options).
        sub_parser = _subparsers(parser).get(getattr(args, "command", None), parser)
        hint = _misplaced_hint(raw, unknown, getattr(args, "command", None), sub_parser)
        hint += _plural_option_hint(unknown, getattr(args, "command", None))
        hint += _did_you_mean_hint(unknown, getattr(args, "command", None), sub_parser)
        sub_parser.error(f"unrecognized arguments: {' '.join(unknown)}{hint}")
    if not getattr(args, "command", None):
        parser.print_help(sys.stderr)
        return EXIT_USER_ERROR
    # The command line as given: a sweep's --out folder records it in run.json (QA s51 M2).
    args._argv = tuple(raw)
    _put_cwd_on_path()
    global _STDOUT, _INTERRUPT_REPORTED
    _STDOUT = sys.stdout
    _INTERRUPT_REPORTED = False
    _STDIN_READ[0] = False
    PACKAGE_WARNINGS.quiet = bool(getattr(args, "quiet", False))
    try:
        with _SignalGuard(args):
            return _run(args)
    except BrokenPipeError:
        # The reader closed stdout early (`| head`), also while an error was being written
        # (CLI QA: a traceback and exit 1).
        _silence_stdout()
        return getattr(args, "_exit_code", 0)
    finally:
        _STDOUT = None


def _silence_stdout() -> None:
    """Point stdout's descriptor at /dev/null once its reader has gone, so that Python's own
    flush at exit does not print a second BrokenPipeError."""
    with contextlib.suppress(OSError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised where Ctrl-C would be: the same clean-up (pool workers
    terminated, a guarded HiGHS child or a plugin writer's worker killed), then exit 143.

    QA (session 19): ``kill`` of ``memaudit sweep --workers 2`` ended the command at once and
    left its forkserver and workers running for good.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_terminated(signum: int, frame: Any) -> None:
    raise Terminated(signum)


class _SignalGuard:
    """While a command runs: SIGTERM / SIGHUP take the Ctrl-C path, and a Ctrl-C (or SIGTERM)
    that the command cannot hear still ends it.

    Python raises ``KeyboardInterrupt`` only between bytecodes of the main thread. Inside one
    long C call (a HiGHS MILP solve: 146 s on a 100-group random-coverage package at budget
    100) it is not raised until the call returns, so Ctrl-C did nothing for minutes (QA,
    session 19). A watcher thread hears every signal at once (``signal.set_wakeup_fd``); when
    the command has not ended :data:`HARD_EXIT_AFTER_S` seconds after one, it prints the usual
    message (and the ``--json`` error object), kills every process the command started and
    exits with the usual status. A second Ctrl-C ends it at once.

    Nothing is installed outside the main thread (signals are handled there only); SIGTERM or
    SIGHUP handled by a host or ignored (``nohup``) and a wakeup fd a host's event loop uses
    are left as they are. Everything is restored when the command returns.
    """

    #: Seconds a command gets, after Ctrl-C or SIGTERM, to end on its own (clean-up included).
    HARD_EXIT_AFTER_S = 3.0

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.installed = False
        self.old: dict[int, Any] = {}
        self.old_wakeup = -1
        self.fds: tuple[int, int] | None = None
        self.thread: Any = None

    def __enter__(self) -> _SignalGuard:
        import signal
        import threading

        if threading.current_thread() is not threading.main_thread():
            return self
        # SIGTERM and SIGHUP where they would kill the process outright (SIG_IGN, as under
        # nohup, and a host's own handlers are left alone), also in a background job, whose
        # Ctrl-C is ignored.
        for name in ("SIGTERM", "SIGHUP"):
            signum = getattr(signal, name, None)
            if signum is not None and signal.getsignal(signum) in (signal.SIG_DFL, None):
                with contextlib.suppress(OSError, ValueError):
                    self.old[signum] = signal.getsignal(signum)
                    signal.signal(signum, _raise_terminated)
        self.installed = True
        try:
            r, w = os.pipe()
            os.set_blocking(w, False)
        except OSError:
            return self
        try:
            self.old_wakeup = signal.set_wakeup_fd(w, warn_on_full_buffer=False)
        except (OSError, ValueError):
            self.old_wakeup = -1
        if self.old_wakeup != -1:  # a host's event loop listens there: give it back, no watcher
            with contextlib.suppress(OSError, ValueError):
                signal.set_wakeup_fd(self.old_wakeup)
            for fd in (r, w):
                os.close(fd)
            return self
        self.fds = (r, w)
        self.thread = threading.Thread(target=self._watch, name="memaudit-signals", daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        import signal

        if not self.installed:
            return
        for signum, handler in self.old.items():
            with contextlib.suppress(OSError, ValueError, TypeError):
                signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
        self.installed = False
        if self.fds is None:
            return
        with contextlib.suppress(OSError, ValueError):
            signal.set_wakeup_fd(-1)
        r, w = self.fds
        with contextlib.suppress(OSError):
            os.write(w, b"\0")  # stops the watcher
        self.thread.join(timeout=1)
        for fd in (r, w):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds = None

    def _watch(self) -> None:
        import select
        import signal

        assert self.fds is not None
        r = self.fds[0]
        wanted = {int(signal.SIGINT)} | {int(s) for s in self.old}
        deadline = None
        first = None
        while True:
            timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                ready, _, _ = select.select([r], [], [], timeout)
            except (OSError, ValueError):
                return
            if not ready:  # the command did not end in time: end it from here
                self._hard_exit(first)
                return
            try:
                data = os.read(r, 64)
            except OSError:
                return
            if not data or 0 in data:
                return
            for signum in data:
                if signum not in wanted:
                    continue
                if first is None:
                    first = signum
                    deadline = time.monotonic() + self.HARD_EXIT_AFTER_S
                else:  # pressed again: do not wait any longer
                    self._hard_exit(first)
                    return

    def _hard_exit(self, signum: int | None) -> None:
        import signal

        from .parallel import kill_descendants

        code = EXIT_INTERRUPTED if signum in (None, signal.SIGINT) else 128 + signum
        if not _INTERRUPT_REPORTED:
            word = "interrupted" if code == EXIT_INTERRUPTED else "terminated"
            with contextlib.suppress(OSError):
                os.write(2, f"{chr(10) if Progress.line_open else ''}memaudit: {word}\n".encode())
            if getattr(self.args, "json", False) and _OUTPUT_STATE is None:
                obj = {
                    "json_output_version": JSON_OUTPUT_VERSION,
                    "memaudit_version": _tool_version(),
                    "error": {"type": "Interrupted", "message": word},
                }
                with contextlib.suppress(OSError):  # not through sys.stdout: no lock taken
                    os.write(1, (json.dumps(obj, indent=2) + "\n").encode())
        kill_descendants()
        os._exit(code)


#: Set once the interrupt message is out (the watcher thread must not print it twice).
_INTERRUPT_REPORTED = False

#: ``OSError`` numbers that, with a file name, mean a path the user gave cannot be used.
_PATH_ERRNOS = {
    getattr(errno, name)
    for name in (
        "ENAMETOOLONG",
        "ENOENT",
        "ENOTDIR",
        "EISDIR",
        "EACCES",
        "EPERM",
        "EROFS",
        "ENOSPC",
        "ELOOP",
        "EDQUOT",
    )
    if hasattr(errno, name)
}


def _import_plugin_modules(args: argparse.Namespace) -> None:
    """Import the ``--plugin-module`` modules and those of ``MEMAUDIT_PLUGIN_MODULES`` before
    the command reads anything: a package or saved result naming a saturation registered by
    one is refused as unknown otherwise (library QA s48: ``solve`` could not load one at all,
    and ``show`` refused ``score --json``'s own output under it)."""
    from . import plugins

    given = [*getattr(args, "plugin_module", ()), *getattr(args, "plugin_module_after", ())]
    failed = plugins.import_plugin_modules(
        plugins.env_plugin_modules(), source=plugins.PLUGIN_MODULES_ENV
    )
    failed += plugins.import_plugin_modules(given, source="--plugin-module")
    if len(failed) == 1:
        raise failed[0]
    if failed:
        tracebacks = [e.plugin_traceback for e in failed if e.plugin_traceback]
        raise plugins.PluginModuleError(
            ",".join(e.module for e in failed),
            f"{len(failed)} plugin modules could not be imported:\n"
            + "\n".join(f"  {e}" for e in failed),
            plugin_traceback="\n".join(tracebacks) or None,
        )


def _run(args: argparse.Namespace) -> int:
    """The command, with user errors turned into messages and exit codes (see :func:`main`)."""
    global _INTERRUPT_REPORTED
    try:
        with contextlib.redirect_stdout(sys.stderr):
            _import_plugin_modules(args)
            return int(args.func(args) or 0)
    except (PackageError, InvalidPackagesError) as exc:
        # The status first: a reader that closed the pipe (`2>&1 | head -1`) ends the printing
        # in a BrokenPipeError, and main() then returns this status (QA: it returned 0).
        args._exit_code = EXIT_USER_ERROR
        _drop_made_out(args)
        Progress.close_line()
        for line in exc.lines():
            print(line, file=sys.stderr)
        _json_error(args, exc)
        return EXIT_USER_ERROR
    except SolverDisagreementError as exc:
        # Not the user's input: the exact engines contradict each other. Exit 1, as audit's
        # disagreements (certification QA s38: it exited 2, "bad input").
        args._exit_code = 1
        Progress.close_line()
        print(f"{_error_head(args)} {exc} (please report it, with the package)", file=sys.stderr)
        _json_error(args, exc)
        return 1
    except MemAuditError as exc:
        args._exit_code = EXIT_USER_ERROR
        _drop_made_out(args)  # a folder made for --out stays only if the run wrote in it
        Progress.close_line()
        # A saved result's problem names its file, JSON path and rule, as a package's
        # problems do, and is printed as they are (QA s46: `show` alone added the prefix).
        located = isinstance(exc, ResultError) and exc.source is not None
        print(exc if located else f"{_error_head(args)} {_own_text(args, exc)}", file=sys.stderr)
        _json_error(args, exc)
        plugin_tb = getattr(exc, "plugin_traceback", None)
        if plugin_tb:  # a plugin writer's (or module's) own traceback: only on request
            if args.debug:
                print(plugin_tb.rstrip("\n"), file=sys.stderr)
            else:
                whose = "module" if isinstance(exc, _plugin_module_error_type()) else "writer"
                print(
                    f"memaudit: (rerun with --debug for the {whose}'s traceback)", file=sys.stderr
                )
        return EXIT_USER_ERROR
    except KeyboardInterrupt as exc:
        _INTERRUPT_REPORTED = True
        terminated = isinstance(exc, Terminated)
        word = "terminated" if terminated else "interrupted"
        code = 128 + exc.signum if terminated else EXIT_INTERRUPTED
        args._exit_code = code
        # A suite with --out says what its journal kept (QA s44: only "interrupted", and the
        # user could not tell that the finished tasks resume).
        saved = getattr(exc, "saved_tasks", None)
        cut = _interrupted_output(args, word)
        message = cut or (word if saved is None else saved.text(word))
        with contextlib.suppress(OSError, ValueError):  # SIGHUP: the terminal may be gone
            Progress.close_line()
            print(f"memaudit: {message}", file=sys.stderr)
        # One JSON object on stdout with --json, as for every other way a command ends (CLI
        # QA: an interrupted --json run left stdout empty); none after the result once it has
        # started (QA s45).
        if getattr(args, "json", False) and cut is None:
            _emit({"error": {"type": "Interrupted", "message": message}}, True, "")
        return code
    except BrokenPipeError:
        raise
    except OSError as exc:
        if exc.errno not in _PATH_ERRNOS or exc.filename is None:
            return _internal_error(args, exc)
        # A path the user gave that the system refuses (a name too long, no permission, a
        # read-only file system): theirs to fix, not a bug (QA: internal errors, exit 1).
        args._exit_code = EXIT_USER_ERROR
        Progress.close_line()
        message = f"{exc.filename}: {exc.strerror or exc}"
        print(f"{_error_head(args)} {message}", file=sys.stderr)
        _json_error(args, MemAuditError(message))
        return EXIT_USER_ERROR
    except Exception as exc:  # a bug, not a user error: say so, show details only on --debug
        return _internal_error(args, exc)


def _error_head(args: argparse.Namespace) -> str:
    """``memaudit COMMAND: error:``, what an error line starts with: argparse's own form, so
    that a mistake found while parsing and one found later read alike (QA s51 #11: the later
    ones said ``memaudit: error:``, without the command)."""
    return f"memaudit {args.command}: error:"


def _own_text(args: argparse.Namespace, exc: Exception) -> str:
    """``exc``'s message after :func:`_error_head`: without the command's name when it
    starts with it, as the CLI's own messages did while the head did not name the command
    (``score: give exactly one of --writer NAME, ...``); named once, not twice."""
    text = str(exc)
    own = f"{args.command}: "
    return text[len(own) :] if text.startswith(own) else text


def _drop_made_out(args: argparse.Namespace) -> None:
    """Remove the ``--out`` folders this command made, if they are still empty: a suite that
    could not start leaves the file system as it was (QA s44: invalid packages left a new
    folder behind)."""
    for folder in getattr(args, "_made_out", []):  # deepest first; a non-empty one stops it
        try:
            folder.rmdir()
        except OSError:
            return


def _internal_error(args: argparse.Namespace, exc: Exception) -> int:
    """A bug, not a user error: said so (details with ``--debug``), exit status 1."""
    args._exit_code = 1
    Progress.close_line()
    if args.debug:
        raise exc
    print(
        f"memaudit: internal error: {type(exc).__name__}: {exc} (rerun with --debug for the "
        "traceback, and please report it)",
        file=sys.stderr,
    )
    # CLI QA: scripts parsing stdout got nothing at all; they get the error object.
    if getattr(args, "json", False):
        message = f"internal error: {type(exc).__name__}: {exc}".split("\n")[0]
        _emit({"error": {"type": "InternalError", "message": message}}, True, "")
    return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
