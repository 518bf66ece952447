"""The small exception hierarchy that the CLI and the app catch for user errors.

Everything a user can cause (a bad file, an unknown writer, an impossible option) raises a
subclass of :class:`MemAuditError`; anything else is a bug and may surface as a traceback.
"""

from __future__ import annotations

import itertools
import json
import math
import re
import textwrap
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path


class MemAuditError(Exception):
    """Base class for every error caused by user input or user choices.

    Examples
    --------
    One ``except`` for everything a user can get wrong (a file, a budget, a name); anything
    else is a bug.

    >>> import memaudit_core as ma
    >>> def ratio(path, budget):
    ...     try:
    ...         return ma.score(ma.load_package(path), budget, writer="gvt").ratio_text
    ...     except ma.MemAuditError as exc:
    ...         return f"{type(exc).__name__}: {str(exc).splitlines()[-1]}"
    >>> ratio("no/such.json", 6)
    'PackageError: no/such.json: $: no such file or folder [rule: file-exists]'
    >>> try:
    ...     ma.score(ma.generate("update_chain"), -1, writer="gvt")
    ... except ma.MemAuditError as exc:
    ...     print(exc)
    budget must be a finite number >= 0, got -1
    """


class UsageError(MemAuditError):
    """A mistake in how a command or function was called, not in a file's contents: an
    option's value it does not take (``--workers 0``, ``--param n_entities=999999``), options
    that conflict (``--fresh`` without ``--out``), a required one missing.

    The CLI reports every one as ``UsageError`` under ``--json``, argparse's own refusals
    included (QA s45: ``--budget -1`` was a UsageError, ``--fresh`` without ``--out`` a
    MemAuditError, both exit 2).

    Examples
    --------
    >>> import memaudit_core as ma
    >>> try:
    ...     ma.sweep([ma.generate("update_chain")], 6, ["gvt"])  # [6] was meant
    ... except ma.UsageError as exc:
    ...     print(exc)
    sweep(): expected a list of budgets, got 6 (for one budget: [6])
    """


@dataclass(frozen=True)
class Problem:
    """One validation problem, located by a JSON path inside a named source."""

    path: str
    rule: str
    message: str
    value: object = None

    def format(self, source: str | None = None) -> str:
        where = f"{source}: " if source else ""
        shown = ""
        if self.value is not None:
            text = shown_text(self.value) if isinstance(self.value, str) else json_text(self.value)
            shown = f" (got {text[:80]}{'...' if len(text) > 80 else ''})"
        return f"{where}{self.path}: {self.message}{shown} [rule: {self.rule}]"


def json_text(value: object) -> str:
    """A non-string value as the JSON file spells it, for a message about that file.

    Problem values come from parsed JSON, so Python's spelling misleads (QA s46: a Mem0 time
    of ``true`` was reported as "got True"). Values JSON cannot spell keep their repr.

    >>> print(json_text(True), json_text({"a": None, "b": [1.5, False]}), json_text(float("inf")))
    true {"a": null, "b": [1.5, false]} Infinity
    >>> print(json_text({1, 2}))
    {1, 2}
    """
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def shown_text(text: str) -> str:
    """``text`` quoted for a message: its repr (which escapes control, format and space
    characters other than " "), with the other characters that print invisibly or like others
    escaped too, and only those: the hidden difference is spelled out, the rest stays readable
    (QA s44: a Persian id was shown as ``'\\u0645\\u06cc\\u200c...'``, every letter escaped).

    Escaped besides what repr escapes: :func:`invisible_char` characters (variation selectors,
    Hangul fillers ...), and, in text not in NFC, the characters NFC would change or combine
    (CLI QA: an "unknown unit" message showed ``'café'`` for a decomposed é, the same on
    screen as the known unit). Combining marks of NFC text are how the script is spelled.

    >>> print(shown_text("café"), shown_text("cafe\u0301"), shown_text("a\u00a0b"))
    'café' 'cafe\u0301' 'a\xa0b'
    >>> print(shown_text("می\u200cخواهم"), shown_text("नमस्ते"), shown_text("\u2764\ufe0f"))
    'می\u200cخواهم' 'नमस्ते' '❤\ufe0f'
    """
    shown = repr(text)
    if text.isascii():
        return shown
    nfc = unicodedata.is_normalized("NFC", text)
    hidden = {
        ch
        for ch in text
        if invisible_char(ch)
        or (not nfc and (unicodedata.combining(ch) or unicodedata.normalize("NFC", ch) != ch))
    }
    if not hidden:
        return shown
    return shown.translate({ord(ch): ascii(ch)[1:-1] for ch in hidden})


#: Printable characters that show nothing by themselves: variation selectors (U+FE00-FE0F,
#: U+E0100-E01EF; they pick a glyph's style), the combining grapheme joiner, Mongolian free
#: variation selectors and Hangul fillers (letters that draw as blank space).
INVISIBLE_PRINTABLE = re.compile(
    "[\ufe00-\ufe0f\U000e0100-\U000e01ef\u034f\u180b-\u180d\u180f\u115f\u1160\u3164\uffa0]"
)


def invisible_char(ch: str) -> bool:
    """Whether the character ``ch`` prints as nothing: a printable one of
    :data:`INVISIBLE_PRINTABLE` (repr escapes the format and control ones already).

    >>> invisible_char("\ufe0f"), invisible_char("\u3164"), invisible_char("a")
    (True, True, False)
    """
    return INVISIBLE_PRINTABLE.match(ch) is not None


#: The smallest normal double (``sys.float_info.min``, 2.2250738585072014e-308) as messages
#: give it: rounded up, so that the number they advise is itself allowed (QA s44: "at least
#: 2.2e-308" was said, then 2.2e-308 refused, being below it).
NORMAL_MIN_TEXT = "2.23e-308"


#: Most problems one check of a file collects. At the next one checking stops and says so
#: (QA s44: a 3 MB package of a million empty candidates gave 5,000,002 lines, 64 s and
#: 3.2 GB; a 50 MB one would exhaust the machine). A thousand is more than anyone reads and
#: enough to show the pattern to fix.
MAX_PROBLEMS = 1000

#: The rule of the last problem of a check that stopped at :data:`MAX_PROBLEMS`.
PROBLEM_LIMIT_RULE = "problem-limit"


#: The rules the two file readers share, by the name each of them gives: the package reader
#: (:func:`~memaudit_core.package.load_package`, the importers) and the saved-result reader
#: (:func:`~memaudit_core.results.read_result`, ``memaudit show``). One condition has one
#: name in both, so that a CI filter keyed on ``rule`` knows one vocabulary (QA s51 #7: a
#: JSON array was ``type`` to one and ``wrong type`` to the other, a missing field
#: ``required`` and ``missing field``, a newer version ``format-version`` and ``newer
#: version``). Names are kebab-case.
RULE_FILE_EXISTS = "file-exists"
RULE_READABLE = "readable"
RULE_FILE_TYPE = "file-type"
RULE_UTF8 = "utf-8"
RULE_TYPE = "type"
RULE_REQUIRED = "required"
RULE_FORMAT_VERSION = "format-version"
RULE_KNOWN_FIELD = "known-field"
RULE_NOT_NULL = "not-null"

#: Every rule a saved result can break, with what it refuses (:class:`ResultError`'s
#: ``rule`` is one of these): the shared ones above, the JSON reader's (shared too: one
#: reader decodes packages, exports and results), and the result reader's own. Package rules
#: beyond the shared ones are named where they are checked (``memaudit validate`` lists them).
RULES: dict[str, str] = {
    RULE_FILE_EXISTS: "no such file or folder",
    RULE_READABLE: "the file cannot be read (permissions, a name the file system refuses)",
    RULE_FILE_TYPE: "not the kind of file expected: a folder, a zip, a CSV table, an image",
    RULE_UTF8: "not UTF-8 text (UTF-16, gzip, a SQLite database, other bytes)",
    "empty": "an empty file",
    "truncated": "the JSON document ends before it is complete",
    "json-syntax": "not valid JSON (with line and column)",
    "json-depth": "JSON nested too deeply to read",
    "duplicate-key": "a key repeated inside one JSON object",
    "normal": "a number that underflows to 0 (1e-400)",
    RULE_TYPE: "a value of the wrong JSON type (an array where an object is expected, ...)",
    RULE_REQUIRED: "a required field is missing",
    RULE_FORMAT_VERSION: (
        "a format version this MemAudit does not read (a package's 'memaudit', a result's "
        "'result_version' or 'json_output_version'): newer, older, below 1 or not an integer"
    ),
    RULE_KNOWN_FIELD: "a key the format does not define at that place",
    RULE_NOT_NULL: "null where a value is needed",
    "result-json": "a JSON document that is not a saved result (a package, validate's verdict)",
    "known-kind": "a 'result_kind' this MemAudit does not know",
    "allowed-value": "a value of the right type outside what the field takes",
    "inconsistent": "numbers or fields that contradict each other",
    "unique-row": "a second row for one store and budget",
}


def problem_limit(limit: int = MAX_PROBLEMS) -> Problem:
    """The line that ends a check stopped after ``limit`` problems: one more was found, and
    nothing after it was checked, so it claims neither a count nor a clean rest."""
    return Problem(
        "$",
        PROBLEM_LIMIT_RULE,
        f"... and more problems not checked after the first {limit} (fix these and validate again)",
    )


class PackageError(MemAuditError):
    """A package (or export) that cannot be loaded; carries every problem found, or the first
    :data:`MAX_PROBLEMS` and :func:`problem_limit`'s line when checking stopped there.

    Given more than :data:`MAX_PROBLEMS` problems and no such line (a walk that stopped at
    ``MAX_PROBLEMS + 1``, as :func:`capped` stops them), it keeps the first
    :data:`MAX_PROBLEMS` and adds the line.

    Examples
    --------
    Every problem at once, each with its JSON path, rule and value:

    >>> import memaudit_core as ma
    >>> from memaudit_core.package import package_to_dict
    >>> doc = package_to_dict(ma.generate("update_chain"))
    >>> doc["candidates"][0]["cost"] = 0
    >>> doc["units"][0]["weight"] = -1
    >>> try:
    ...     ma.parse_package(doc, "chain.json")
    ... except ma.PackageError as exc:
    ...     print(exc.source, [(p.path, p.rule, p.value) for p in exc.problems])
    chain.json [('$.units[0].weight', 'weight-range', -1), ('$.candidates[0].cost', \
'cost-positive', 0)]
    """

    def __init__(self, source: str, problems: Iterable[Problem]):
        self.source = source
        self.problems = list(problems)
        if len(self.problems) > MAX_PROBLEMS and not self.stopped:
            self.problems = [*self.problems[:MAX_PROBLEMS], problem_limit()]
        lines = [p.format(source) for p in self.problems]
        head = f"{source}: {len(self.found)} problem(s) found" + self._stop_text()
        super().__init__(head + "\n" + "\n".join(lines))

    @property
    def stopped(self) -> bool:
        """Whether checking stopped at :data:`MAX_PROBLEMS` (more problems may follow)."""
        return any(p.rule == PROBLEM_LIMIT_RULE for p in self.problems)

    @property
    def found(self) -> list[Problem]:
        """The problems found, without the line saying that checking stopped."""
        return [p for p in self.problems if p.rule != PROBLEM_LIMIT_RULE]

    def count_text(self) -> str:
        """How many problems, honestly: "3 problem(s)", or "1000 problem(s), then checking
        stopped" (the stop line is not one of them)."""
        return f"{len(self.found)} problem(s)" + self._stop_text()

    def _stop_text(self) -> str:
        return ", then checking stopped" if self.stopped else ""

    @property
    def file(self) -> str:
        """The file (or export) the problems are in: ``source`` under the name the CLI's JSON
        and the README use (conformance QA: ``e.file`` was missing)."""
        return self.source

    def lines(self) -> list[str]:
        return [p.format(self.source) for p in self.problems]

    def __reduce__(self):
        # Survives pickling back from a worker process with its problems (CLI QA: `audit
        # --json` got a bare MemAuditError without file and problems).
        return (type(self), (self.source, self.problems))


class Problems:
    """The problems of one source, collected while checking it: every validator and importer
    collects into one (or a subclass).

    At the problem past :data:`MAX_PROBLEMS` it raises the :class:`PackageError` of those it
    holds and :func:`problem_limit`'s line: checking stops there, so a file of a million bad
    items costs a thousand problems, not a million (QA s44).
    """

    def __init__(self, source: str, limit: int = MAX_PROBLEMS) -> None:
        self.source = source
        self.limit = limit
        self.problems: list[Problem] = []

    def add(self, path: str, rule: str, message: str, value: object = None) -> None:
        self.append(Problem(path, rule, message, value))

    def append(self, problem: Problem) -> None:
        if problem.rule == PROBLEM_LIMIT_RULE:  # a nested check stopped: so does this one
            raise PackageError(self.source, [*self.problems, problem])
        if len(self.problems) >= self.limit:
            raise PackageError(self.source, [*self.problems, problem_limit(self.limit)])
        self.problems.append(problem)

    def extend(self, problems: Iterable[Problem]) -> None:
        for problem in problems:
            self.append(problem)

    def raise_if_any(self) -> None:
        if self.problems:
            raise PackageError(self.source, self.problems)


def capped(problems: Iterable[Problem], limit: int = MAX_PROBLEMS) -> list[Problem]:
    """The first ``limit + 1`` of ``problems``: enough for :class:`PackageError` (or a
    :class:`Problems`) to know that checking must stop, for a walk that returns a list rather
    than collecting into a :class:`Problems` (the walk is a generator, so it stops too).

    >>> len(capped(Problem("$", "r", "m") for _ in range(10**9)))
    1001
    """
    return list(itertools.islice(problems, limit + 1))


class InvalidPackagesError(MemAuditError):
    """The package files of a sweep or audit that fail validation, every one of them, found
    before anything runs (QA s44: a folder's first bad file stopped the run and was the only
    one named, so k bad files took k reruns).

    Attributes
    ----------
    command : str
        What did not run (``sweep``, ``audit``).
    errors : tuple of PackageError
        One per invalid file, with all its problems, named as the user named the file.
    n_packages : int
        How many packages the run was given (valid and invalid).
    noun : str
        What they are called: ``package files``, or ``packages`` when generated families
        are among them.
    """

    #: Most problem lines :meth:`lines` lists; the rest are counted and their files named
    #: (every problem stays in ``errors``, and ``--json`` lists them all).
    MAX_LINES = 50
    #: Most file names listed for the problems left out.
    MAX_FILES_NAMED = 10

    def __init__(
        self,
        command: str,
        errors: Iterable[PackageError],
        n_packages: int,
        noun: str = "package files",
    ):
        self.command = command
        self.errors = tuple(errors)
        self.n_packages = n_packages
        self.noun = noun
        super().__init__("\n".join([self.summary, *self.lines()[:-1]]))

    @property
    def summary(self) -> str:
        return (
            f"{self.command} not run: {len(self.errors)} of {self.n_packages} {self.noun} "
            "are invalid"
        )

    def lines(self) -> list[str]:
        """The problems (at most :data:`MAX_LINES`), then what was left out, then
        :attr:`summary` with what to do."""
        found = [
            (e.source, p.format(e.source), p.rule == PROBLEM_LIMIT_RULE)
            for e in self.errors
            for p in e.problems
        ]
        out = [line for _, line, _ in found[: self.MAX_LINES]]
        rest = found[self.MAX_LINES :]
        if rest:
            files = list(dict.fromkeys(source for source, _, _ in rest))
            named = ", ".join(files[: self.MAX_FILES_NAMED])
            if len(files) > self.MAX_FILES_NAMED:
                named += f" and {len(files) - self.MAX_FILES_NAMED} more file(s)"
            # A check that stopped found one problem past its list (its stop line counts for
            # it) and did not look further (QA s44).
            least = "at least " if any(stop for _, _, stop in rest) else ""
            out.append(
                f"... and {least}{len(rest)} more problem(s) in {named} "
                "(`memaudit validate FILE` lists a file's problems)"
            )
        out.append(f"{self.summary}; fix or remove them, then rerun (nothing was run or written)")
        return out

    def __reduce__(self):
        return (type(self), (self.command, self.errors, self.n_packages, self.noun))


class ResultError(MemAuditError):
    """A saved result (``to_dict()`` output or a CLI ``--json`` file) that cannot be read back.

    Attributes
    ----------
    source : str or None
        The file (None for a dict passed in memory).
    path : str
        Where in the JSON document, e.g. ``$.rows[3].value``.
    rule : str
        Which rule it breaks, a key of :data:`RULES`: ``required`` (a missing field),
        ``type``, ``known-kind``, ``format-version``, ``normal`` (a number that underflows to
        0), ... named as the package loader names the same condition; for a file that is not
        JSON or repeats a key, the package loader's JSON rules (``json-syntax``,
        ``truncated``, ``json-depth``, ``duplicate-key``).

    Examples
    --------
    >>> import memaudit_core as ma
    >>> data = ma.solve(ma.compile_package(ma.generate("update_chain")), 6).to_dict()
    >>> del data["value"]
    >>> try:
    ...     ma.read_result(data)
    ... except ma.ResultError as exc:
    ...     print(exc.path, "|", exc.rule)
    $.value | required
    """

    def __init__(
        self, path: str, rule: str, message: str, value: object = None, source: str | None = None
    ):
        self.path, self.rule, self.detail, self.value = path, rule, message, value
        self.source = source
        super().__init__(Problem(path, rule, message, value).format(source))

    @property
    def file(self) -> str | None:
        """The file the problem is in, as :attr:`PackageError.file` names it."""
        return self.source

    def in_file(self, source: str) -> ResultError:
        """The same problem, located in the file ``source``."""
        return type(self)(self.path, self.rule, self.detail, self.value, source)

    def __reduce__(self):
        return (type(self), (self.path, self.rule, self.detail, self.value, self.source))


class UnknownNameError(UsageError):
    """An unknown writer, solver, family, store, saturation or parameter name (a usage
    mistake that keeps its own name under ``--json``).

    Examples
    --------
    >>> import memaudit_core as ma
    >>> try:
    ...     ma.score(ma.generate("update_chain"), 6, store_id="mem0")
    ... except ma.UsageError as exc:  # UnknownNameError is a UsageError
    ...     print(type(exc).__name__, "|", exc)
    UnknownNameError | unknown store 'mem0' in package 'update_chain' (known: none)
    """


class ParamError(UsageError):
    """A value a generator family refuses for one or more of its parameters, ``params``.

    The library's message names the family, the parameters, the values and a ``[rule: ...]``;
    ``params`` lets a front end name its own option for them (the CLI's ``--param KEY=VALUE``,
    QA s49: ``update_chain: length must be ...`` named no option the user had typed).

    Examples
    --------
    >>> import memaudit_core as ma
    >>> try:
    ...     ma.generate("update_chain", length=0)
    ... except ma.UsageError as exc:  # ParamError is a UsageError
    ...     print(exc.params, "|", exc)
    ('length',) | update_chain: length must be an integer >= 1, got 0 [rule: count-range]
    """

    def __init__(self, message: str, params: Iterable[str] = ()) -> None:
        super().__init__(message)
        self.params = tuple(params)

    def __reduce__(self):
        return (type(self), (str(self), self.params))


class SaturationError(UsageError):
    """A saturation :func:`~memaudit_core.saturations.register_saturation` refuses: a bad name,
    a name taken, or an h that is not concave, nondecreasing and 0 at 0 on the range checked.

    Examples
    --------
    >>> import math
    >>> import numpy as np
    >>> import memaudit_core as ma
    >>> square = ma.Saturation("doc_square", np.square, lambda z: z * z, "h(z) = z^2", math.inf)
    >>> try:
    ...     ma.register_saturation(square)  # convex: optima would not be certifiable
    ... except ma.SaturationError as exc:
    ...     print(str(exc).split(", but")[0])
    saturation 'doc_square' refused: h must be concave
    >>> "doc_square" in ma.SATURATIONS
    False
    """


class SolverError(MemAuditError):
    """A solver failed in a way the user must see (e.g. exact solvers disagree).

    Examples
    --------
    >>> import memaudit_core as ma
    >>> from memaudit_core.package import package_to_dict
    >>> doc = package_to_dict(ma.generate("update_chain"))
    >>> doc["objective"]["saturation"] = "log1p"
    >>> inst = ma.compile_package(ma.parse_package(doc))
    >>> try:
    ...     ma.solve(inst, 6, solver="milp")  # HiGHS's model is linear in the coverage
    ... except SolverError as exc:
    ...     print(exc)
    the 'milp' solver supports saturations cap1, linear only; saturation 'log1p' \
(h(z) = ln(1 + z)) is not linear-representable here: use solver 'bnb' or 'auto'
    >>> ma.solve(inst, 6).label
    'OPT'
    """


class SolverDisagreementError(SolverError):
    """Two exact solvers returned different optimal values: never hidden."""


class InstanceTooLargeError(SolverError, ValueError):
    """An engine refuses an instance past its size limit (brute force, enumeration, the budget
    decomposition); another engine may take it. The one ``ValueError`` the solve path treats
    as a refusal: any other is a defect and surfaces as one."""


def count_text(count: int) -> str:
    """A possibly huge count for a message: digits grouped, or its power of ten past 10^12
    (QA: brute force printed a 300-digit number of combinations).

    >>> count_text(864), count_text(3 * 10**300), count_text(10**400)
    ('864', 'about 3e+300', 'about 1e+400')
    """
    if count < 10**12:
        return f"{count:,}"
    exponent = math.floor(math.log10(count))  # exact enough for ints of any size
    return f"about {count // 10**exponent}e+{exponent}"


class EnumerationTooLarge(InstanceTooLargeError):
    """Enumeration refused: too many combinations or too large a coverage matrix."""


class FrontierTooLarge(EnumerationTooLarge):
    """The budget decomposition refused: a component or the whole work past its cap."""


class EmptyTextError(MemAuditError):
    """A memory text that is empty or only whitespace: it cannot be costed (and is rejected)."""


class WriterError(MemAuditError):
    """A writer returned an invalid store (unknown ids, two per group, over budget).

    Examples
    --------
    >>> import memaudit_core as ma
    >>> def raw_latest(inst, budget):  # ignores the budget
    ...     return (inst.candidate_idx("update_3_raw_span"),)
    >>> info = ma.register_writer(ma.WriterInfo("doc_raw", "Latest raw turn.", "oracle",
    ...                                         raw_latest))
    >>> try:
    ...     ma.score(ma.generate("update_chain"), 3, writer="doc_raw")
    ... except ma.WriterError as exc:
    ...     print(exc)
    writer 'doc_raw' returned an infeasible store at budget 3: it costs 5, over the budget 3
    >>> ma.unregister_writer("doc_raw")
    """


def closest_name(name: str, known: Iterable[str], cutoff: float = 0.75) -> str | None:
    """The known name ``name`` is most likely a misspelling of (same letters in another case
    first), or None: the "did you mean" of warnings about unknown types and fields.

    >>> closest_name("Tombstone", ["tombstone", "summary"]), closest_name("costt", ["cost"])
    ('tombstone', 'cost')
    """
    import difflib

    known = list(known)
    lowered = {k.lower(): k for k in known}
    if name.lower() in lowered:
        return lowered[name.lower()]
    close = difflib.get_close_matches(name, known, n=1, cutoff=cutoff)
    return close[0] if close else None


def check_names(names: object, what: str, *, strings: bool = True) -> list[str]:
    """``names`` (writers, stores, types, ...) as a list; a single string is one name.

    Iterating a lone ``"gvt"`` would give its letters, and the user would see "unknown
    writer 'g'"; anything that is neither a string nor iterable is a :class:`MemAuditError`,
    and so is an item that is not a string unless ``strings=False`` (seeds, paths).

    Examples
    --------
    >>> check_names(("gvt", "density"), "writers"), check_names("gvt", "writers")
    (['gvt', 'density'], ['gvt'])
    """
    if isinstance(names, str):
        return [names]
    if not hasattr(names, "__iter__"):
        raise MemAuditError(f"{what} must be a list of names, got {cut_repr(names)}")
    out = list(names)
    for i, name in enumerate(out) if strings else ():
        if not isinstance(name, str):
            # Library QA s38: [1] or [None] reached a str.join as a bare TypeError. QA s40
            # (defect 1): the whole list was pasted in, 1.2 MB for [package]; name the item.
            raise MemAuditError(
                f"{what} must be names (strings), got {type(name).__name__} "
                f"{cut_repr(name)} (item {i + 1} of {len(out)})"
            )
    return out


def writer_name_problem(name: object) -> str | None:
    """Why ``name`` cannot name a writer, or None when it can: a string (as
    :func:`check_names` wants), not blank, without whitespace around it or a comma, since
    ``--writers`` splits its list at commas and strips each item (QA s46: ``"mine,v2"``
    registered and was then selected as ``'mine'`` and ``'v2'``; ``123`` became ``"123"``).

    >>> writer_name_problem("cheap_first") is None, writer_name_problem("mine,v2")
    (True, "writer name 'mine,v2' contains a comma: --writers splits its list at commas, so no \
command could select it")
    """
    if not isinstance(name, str):
        return (
            f"a writer name must be a non-empty string, got {type(name).__name__} {cut_repr(name)}"
        )
    if not name.strip():
        return f"a writer name must be a non-empty string, got {cut_repr(name)}"
    if name != name.strip():
        return (
            f"writer name {cut_repr(name)} starts or ends with whitespace: --writers strips "
            "each name, so no command could select it"
        )
    if "," in name:
        return (
            f"writer name {cut_repr(name)} contains a comma: --writers splits its list at "
            "commas, so no command could select it"
        )
    return None


def check_params(params: object, what: str = "params") -> dict[str, object]:
    """Generator parameters as a dict: None is none, else a mapping of name -> value or an
    iterable of (name, value) pairs.

    Library QA s43: budgets slipped into ``params`` (``[2, 4, 8]``), ``"normal_count=3"`` or a
    triple reached ``dict()`` as a bare TypeError / ValueError (``.items()`` as an
    AttributeError in the suites). A name given twice would keep its last value unsaid.

    Examples
    --------
    >>> check_params(None), check_params([("normal_count", 3)])
    ({}, {'normal_count': 3})
    """
    if params is None:
        return {}
    shape = f"{what} must be a dict of name -> value or (name, value) pairs, got {cut_repr(params)}"
    if isinstance(params, Mapping):
        pairs = list(params.items())
    elif isinstance(params, str | bytes) or not hasattr(params, "__iter__"):
        raise MemAuditError(shape)
    else:
        pairs = list(params)
        for i, pair in enumerate(pairs):
            if not isinstance(pair, tuple | list) or len(pair) != 2:
                raise MemAuditError(
                    f"{shape} (item {i + 1} of {len(pairs)}, {cut_repr(pair)}, is not a "
                    "(name, value) pair)"
                )
    out: dict[str, object] = {}
    for name, value in pairs:
        if not isinstance(name, str):
            raise MemAuditError(
                f"{what}: a parameter name is a string, got {type(name).__name__} {cut_repr(name)}"
            )
        if name in out:
            raise MemAuditError(f"{what}: parameter {cut_repr(name)} is given twice")
        out[name] = value
    return out


def check_progress(progress: object, what: str = "progress") -> None:
    """Refuse a ``progress`` that is neither None nor a callable ``(done, total)``, before any
    work (library QA s38: ``progress=5`` raised a bare TypeError after the first solve)."""
    if progress is not None and not callable(progress):
        raise MemAuditError(
            f"{what} must be a callable (done, total) or None, got {cut_repr(progress)}"
        )


def cut_repr(value: object, limit: int = 200) -> str:
    """``repr(value)`` for a message, cut past ``limit`` characters (deep-link QA s38: a
    5,000-character package name in a link was repeated whole, twice, filling the screen).
    QA s40 (defect 1): every message quoting a value a caller passed goes through it; a Package
    passed as the solver name was pasted whole (602 KB), a list of them as writers 1.2 MB.

    >>> cut_repr("ab"), cut_repr("x" * 300)[-20:]
    ("'ab'", '... (300 characters)')
    """
    text = repr(value)
    if len(text) <= limit:
        return text
    size = len(value) if isinstance(value, str) else len(text)
    return f"{repr(value[:72]) if isinstance(value, str) else text[:72]}... ({size:,} characters)"


def id_text(value: str, limit: int = 80) -> str:
    """An id (of a memory, unit, store ...) as a list in a note or message names it: as it is
    when short and printable, else quoted as :func:`cut_repr` quotes it (QA s45: a
    200,000-character memory id was pasted whole into the External stores notes; the CLI's
    lists already quoted an id with a newline, which would print as a line of its own). 'c2 '
    would read as c2 and an id holding ", " as two ids in a list, so those are quoted too.

    ``limit`` counts terminal columns (:func:`display_width`), and a long id is cut to 72 of
    them (s53: 80 characters of a CJK id took 160 columns); an ASCII id reads as before.

    >>> id_text("m2"), id_text("a\\nb"), id_text("c2 "), id_text("x" * 300)[-20:]
    ('m2', "'a\\\\nb'", "'c2 '", '... (300 characters)')
    >>> id_text("記憶" * 30)  # 60 characters, 120 columns
    "'記憶記憶記憶記憶記憶記憶記憶記憶記憶記憶記憶記憶記憶記憶記憶記憶記憶記憶'... (60 characters)"
    >>> id_text("\\u0301" * 3), len(id_text("\\u200b" * 100))  # invisible ids, escaped, cut
    ("'\\\\u0301\\\\u0301\\\\u0301'", 94)
    """
    plain = value.isprintable() and value == value.strip() != "" and ", " not in value
    # Characters too, not only columns: combining marks take none (s56: an id of one letter
    # and 10,000 marks read as one column and was pasted whole).
    if plain and 0 < display_width(value) <= limit and len(value) <= 2 * limit:
        return value
    quoted = _quoted_id(value)
    if display_width(quoted) <= limit and len(quoted) <= 2 * limit:
        return quoted
    # Cut by what is printed, the quoted text (s56: an id of 100 zero-width spaces, cut by its
    # own 0 columns, was printed whole as 600 columns of escapes, "cut" to 100 characters).
    kept = 0
    while kept < len(value):
        start = _quoted_id(value[: kept + 1])
        if display_width(start) > _ID_CUT_COLUMNS + 2 or len(start) > 2 * _ID_CUT_COLUMNS + 2:
            break
        kept += 1
    if kept == len(value):
        return quoted
    return f"{_quoted_id(value[:kept])}... ({len(value):,} characters)"


#: Columns of an id that :func:`id_text` cuts (inside its quotes).
_ID_CUT_COLUMNS = 72


def _quoted_id(text: str) -> str:
    """``repr(text)``, or ``ascii(text)`` when ``text`` takes no column at all: an id of only
    combining marks or format characters would print as nothing, or as marks over its quotes
    (s56)."""
    return repr(text) if display_width(text) > 0 else ascii(text)


def display_width(text: str) -> int:
    """The columns ``text`` takes on a terminal: 2 for each East Asian Wide or Fullwidth
    character (CJK ideographs, kana, fullwidth forms, most emoji), 0 for each combining or
    enclosing mark and format character (drawn over, or not at all), 1 for any other (CLI QA
    s51: ``len()`` counted ユニット３ as 5 columns where it takes 10, and every column after it
    was shifted). East Asian Ambiguous characters (①, Greek, Cyrillic) count 1, as terminals
    outside a CJK locale draw them.

    >>> display_width("u1"), display_width("ユニット３"), display_width("墓石①")
    (2, 10, 5)
    >>> display_width("cafe\u0301"), display_width("😀")
    (4, 2)
    """
    if text.isascii():  # ids and numbers nearly always: one column a character
        return len(text)
    return sum(
        0
        if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf")
        else 2
        if unicodedata.east_asian_width(ch) in ("W", "F")
        else 1
        for ch in text
    )


def pad_display(text: str, width: int) -> str:
    """``text`` padded with spaces to ``width`` terminal columns (:func:`display_width`), as
    ``str.ljust`` pads ASCII; every text table of the CLI pads its cells with this.

    >>> pad_display("ユニット３", 12) + "|", pad_display("v_3", 12) + "|"
    ('ユニット３  |', 'v_3         |')
    """
    return text + " " * (width - display_width(text))


def cut_display(text: str, columns: int) -> str:
    """The longest start of ``text`` that takes at most ``columns`` terminal columns
    (:func:`display_width`): ``text[:columns]`` for ASCII; a wide character that would
    straddle the last column is left out whole.

    >>> cut_display("abcdef", 4), cut_display("ユニット３", 5), cut_display("墓石①x", 5)
    ('abcd', 'ユニ', '墓石①')
    """
    if text.isascii():
        return text[:columns]
    used = 0
    for i, ch in enumerate(text):
        used += display_width(ch)
        if used > columns:
            return text[:i]
    return text


def fill_display(text: str, width: int) -> str:
    """``textwrap.fill(text, width, break_long_words=False, break_on_hyphens=False)``, the
    width counted in terminal columns (:func:`display_width`; s53: ``score``'s "why this
    score" lines holding CJK ids ran to 160 columns of 100). ASCII text is wrapped exactly as
    textwrap wraps it: the same chunks, dropped spaces and long words on lines of their own.

    >>> fill_display("a bb ccc dddd", 6)
    'a bb\\nccc\\ndddd'
    >>> print(fill_display("unit ユニット３ and 墓石① lost", 14))
    unit
    ユニット３ and
    墓石① lost
    """
    if text.isascii():
        # One column a character: textwrap itself, so ASCII output cannot drift from it.
        return textwrap.fill(text, width, break_long_words=False, break_on_hyphens=False)
    return "\n".join(_DisplayWrapper(width).wrap(text))


class _DisplayWrapper(textwrap.TextWrapper):
    """:class:`textwrap.TextWrapper` (no long-word or hyphen breaks, no indents, no
    ``max_lines``) whose line width counts terminal columns: its ``_wrap_chunks`` with
    :func:`display_width` where textwrap counts ``len``. textwrap splits the text into
    chunks (words and runs of whitespace) as ever."""

    def __init__(self, width: int) -> None:
        super().__init__(width, break_long_words=False, break_on_hyphens=False)

    def _wrap_chunks(self, chunks: list[str]) -> list[str]:
        lines: list[str] = []
        chunks.reverse()  # a stack: the next chunk last
        while chunks:
            line: list[str] = []
            used = 0
            # Whitespace that would start a line is dropped (not at the very start).
            if chunks[-1].strip() == "" and lines:
                del chunks[-1]
            while chunks and used + display_width(chunks[-1]) <= self.width:
                used += display_width(chunks[-1])
                line.append(chunks.pop())
            # A word wider than any line gets a line of its own, unbroken.
            if chunks and not line and display_width(chunks[-1]) > self.width:
                line.append(chunks.pop())
            if line and line[-1].strip() == "":
                del line[-1]
            if line:
                lines.append("".join(line))
        return lines


def file_name_text(source: str) -> str:
    """``source`` as a message names a file: cut past 200 characters (library QA: a JSON text
    passed where a path was expected was repeated whole as the file name).

    >>> file_name_text("x" * 300)
    'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx... (300 characters)'
    """
    if not source.strip():
        return repr(source)
    return source if len(source) <= 200 else f"{source[:72]}... ({len(source):,} characters)"


def probe_path(source: str | Path) -> tuple[bool, bool, str | None]:
    """(exists, is a folder, why it cannot be looked up or None) for a path from a user.

    ``Path.exists`` raises for a name the file system refuses (too long): library QA found
    ``read_result`` and the importers raising a bare OSError. A name that looks like JSON
    text gets a hint, since that is the usual slip.
    """
    if not str(source).strip():
        # Path("") is the working folder (library QA: load_package("") read it as an
        # artifact folder; read_result("") said "a folder" and named no file).
        return False, False, "an empty file name; give the path of a file"
    path = Path(source)
    try:
        return path.exists(), path.is_dir(), None
    except OSError as exc:
        why = f"cannot look up the file: {exc.strerror or exc}"
        if str(path).lstrip()[:1] in ("{", "["):
            why += " (this looks like JSON text, not a file name: parse it with json.loads)"
        return False, False, why


def check_type(value: object, expected: type | tuple[type, ...], what: str, how: str) -> None:
    """Refuse a ``value`` of the wrong type with a :class:`MemAuditError` saying what to pass.

    Library QA: ``solve(package, 6)`` raised "'Package' object has no attribute 'cost'".

    Examples
    --------
    >>> try:
    ...     check_type("x.json", dict, "parse_package()", "a dict (load_package reads files)")
    ... except MemAuditError as exc:
    ...     print(exc)
    parse_package(): expected a dict (load_package reads files), got str
    """
    if not isinstance(value, expected):
        raise MemAuditError(f"{what}: expected {how}, got {type(value).__name__}")


def check_budget_list(budgets: object, what: str) -> list[object]:
    """``budgets`` as a list, refusing a lone number (``[6]`` was meant) or a string.

    >>> check_budget_list((2, 4), "solve_budgets()")
    [2, 4]
    """
    if isinstance(budgets, str | bytes) or not hasattr(budgets, "__iter__"):
        raise UsageError(
            f"{what}: expected a list of budgets, got {cut_repr(budgets)}"
            + (
                f" (for one budget: [{cut_repr(budgets)}])"
                if not isinstance(budgets, str | bytes)
                else ""
            )
        )
    return list(budgets)
