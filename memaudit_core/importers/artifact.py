"""The original MemAudit artifact's coverage-package directory -> a :class:`Package`.

A coverage package is a folder (or a zip of one, possibly nested one level, read within the
limits of :mod:`._zip`, as every zip is) holding JSON Lines files, one record per line, read
line by line:

=========================  ===================================================================
file                       fields (aliases accepted in brackets)
=========================  ===================================================================
``experiences.jsonl``      ``experience_id`` [id], ``time_index`` [time, t], ``text``
                           [content], ``session`` [session_id]
``evidence_units.jsonl``   ``unit_id`` [id], ``kind`` [type, unit_kind], ``weight`` [w],
                           ``text`` [description, content]
``queries.jsonl``          ``query_id`` [id], ``required_units`` [requires, units, unit_ids],
                           ``weight``, ``text`` [question, query], ``answer`` (optional file)
``candidate_memories.jsonl``  ``candidate_id`` [id], ``experience_id`` [experience, group,
                           group_id], ``representation`` [type, kind], ``text`` [content],
                           ``cost``
``coverage_matrix.jsonl``  ``candidate_id`` [candidate], ``unit_id`` [unit], ``value``
                           [coverage, a]
``meta.json``              optional: ``id``, ``title``, ``description``, ``cost_unit``,
                           ``budget``, ``budgets``, ``saturation``; other keys go to meta
=========================  ===================================================================

Files are read by these exact names. A near miss of one the package lacks (``query.jsonl``,
``Queries.JSONL`` or ``queries.json`` for ``queries.jsonl``) is an error (``file-name``): read
as absent it would change the package without a word; anything else the folder or zip holds is
named in one warning (dotfiles and a zip's ``__MACOSX/`` are skipped).

Other fields of a record are kept in that item's ``meta``. Two aliases of one field in a
record must agree (else ``alias-conflict``), and a key repeated in one line is refused
(``duplicate-key``), as in package files. The package is validated by
:func:`~memaudit_core.package.parse_package`, and every problem is reported at the file and
line it comes from, with the field name as written there: e.g.
``coverage_matrix.jsonl:12.value: must be at most 1 [rule: coverage-range]``. A coverage
cell given twice is an error (``unique-cell``), not silently overwritten.

Examples
--------
>>> import json, tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp()) / "tiny"
>>> d.mkdir()
>>> def put(name, rows):
...     _ = (d / name).write_text("".join(json.dumps(r) + "\\n" for r in rows))
>>> put("experiences.jsonl", [{"experience_id": "e1", "time_index": 0, "text": "hi"}])
>>> put("evidence_units.jsonl", [{"unit_id": "r1", "kind": "fact", "weight": 1}])
>>> put("candidate_memories.jsonl", [{"candidate_id": "c1", "experience_id": "e1",
...      "representation": "atomic_fact", "text": "hi", "cost": 1}])
>>> put("coverage_matrix.jsonl", [{"candidate_id": "c1", "unit_id": "r1", "value": 1.0}])
>>> pkg = load_artifact_package(d)
>>> pkg.id, pkg.candidates[0].coverage
('tiny', {'r1': 1.0})
"""

from __future__ import annotations

import json
import os
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO

from ..errors import RULE_FORMAT_VERSION, PackageError, Problem, Problems, closest_name, id_text
from ..package import (
    FORMAT_VERSION,
    Package,
    _binary_kind,
    _child_path,
    format_version_problem,
    json_float,
    json_type,
    parse_package,
)
from ._common import duplicate_key_problems, first_few, note, object_pairs, plain_copy
from ._zip import NonblankLines, ZipReader

REQUIRED_FILES = (
    "experiences.jsonl",
    "evidence_units.jsonl",
    "candidate_memories.jsonl",
    "coverage_matrix.jsonl",
)
OPTIONAL_FILES = ("queries.jsonl",)
MANIFESTS = ("meta.json", "manifest.json", "package.json")
KNOWN_FILES = (*REQUIRED_FILES, *OPTIONAL_FILES, *MANIFESTS)

# doc field -> accepted source names, first match wins.
_EXP = {
    "id": ("experience_id", "id"),
    "time": ("time_index", "time", "t"),
    "session": ("session", "session_id"),
    "text": ("text", "content"),
}
_UNIT = {
    "id": ("unit_id", "id"),
    "kind": ("kind", "type", "unit_kind"),
    "weight": ("weight", "w"),
    "text": ("text", "description", "content"),
}
_QUERY = {
    "id": ("query_id", "id"),
    "requires": ("required_units", "requires", "units", "unit_ids"),
    "weight": ("weight",),
    "text": ("text", "question", "query"),
    "answer": ("answer",),
}
_CAND = {
    "id": ("candidate_id", "id"),
    "experience": ("experience_id", "experience", "group", "group_id"),
    "type": ("representation", "type", "kind"),
    "text": ("text", "content"),
    "cost": ("cost",),
}
_COV = {
    "candidate": ("candidate_id", "candidate"),
    "unit": ("unit_id", "unit"),
    "value": ("value", "coverage", "a"),
}
_MANIFEST_KEYS = ("id", "title", "description", "cost_unit", "budget", "budgets")


@dataclass
class _Loc:
    file: str
    line: int
    fields: dict[str, str] = field(default_factory=dict)  # doc field -> source field

    def path(self, rest: str = "") -> str:
        return f"{self.file}:{self.line}{rest}"


class _Source:
    """Named members of a folder or a zip; a zip's within the limits of :mod:`._zip`.

    A zip stays open while the package is read (:meth:`close`), its tables read line by line.
    """

    def __init__(self, path: Path, source: str | None = None) -> None:
        self.path = path
        self.source = str(path) if source is None else source
        self.members: dict[str, Path | zipfile.ZipInfo] = {}
        # What the container holds besides the members read, as it names them (a folder's
        # sub-folders with a trailing "/"); None when a folder cannot be listed.
        self.unread: list[str] | None = []
        self.zip: ZipReader | None = None
        if path.is_dir():
            for name in KNOWN_FILES:
                try:
                    is_file = (path / name).is_file()
                except OSError as exc:
                    # A folder the user may not search raises here, not at the read (QA s44:
                    # a bare "Permission denied" without a rule).
                    raise PackageError(
                        self.source, [Problem(name, "readable", f"cannot read: {exc}")]
                    ) from None
                if is_file:
                    self.members[name] = path / name
            self.unread = self._folder_unread(path)
            return
        try:
            zf = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError) as exc:
            raise PackageError(
                self.source,
                [
                    Problem(
                        "$",
                        "zip",
                        "an artifact is a folder or a .zip archive of its tables; this file is "
                        f"not a readable zip ({exc})",
                    )
                ],
            ) from None
        self.zip = ZipReader(zf, self.source)
        try:
            self._scan_zip(zf)
        except BaseException:
            zf.close()
            raise

    def close(self) -> None:
        if self.zip is not None:
            self.zip.zf.close()

    def _folder_unread(self, path: Path) -> list[str] | None:
        """The folder's entries other than the files read; None if it cannot be listed (a
        folder that may be searched but not listed still reads its files by name)."""
        try:
            with os.scandir(path) as entries:
                listed = [(e.name, e.is_dir()) for e in entries]
        except OSError:
            return None
        read = [m for m in self.members.values() if isinstance(m, Path)]
        unread = []
        for name, is_dir in sorted(listed):
            if name in self.members or _junk(name):
                continue
            # On a case-insensitive file system "Queries.jsonl" is read as queries.jsonl.
            if any(_same_file(path / name, m) for m in read):
                continue
            unread.append(name + "/" if is_dir else name)
        return unread

    def _scan_zip(self, zf: zipfile.ZipFile) -> None:
        wanted = set(KNOWN_FILES)
        found: dict[str, list[str]] = {}
        others: list[str] = []
        for info in zf.infolist():
            if info.is_dir():
                continue
            parts = PurePosixPath(info.filename).parts
            if "__MACOSX" in parts or (parts and _junk(parts[-1])):
                continue  # macOS resource forks and .DS_Store: never data
            name = parts[-1] if parts else info.filename
            if name in wanted and len(parts) <= 3:
                found.setdefault(name, []).append(info.filename)
            else:
                others.append(info.filename)
        self.unread = others
        for name, members in found.items():
            if len(members) > 1:
                raise PackageError(
                    self.source,
                    [
                        Problem(
                            name,
                            "unique-file",
                            "the zip holds this file more than once "
                            f"({', '.join(members)}): zip one package per file",
                            members,
                        )
                    ],
                )
            self.members[name] = zf.getinfo(members[0])
        # Validation QA (s36, s44): a small zip that unpacks to gigabytes ran for 40 s in
        # 4.2 GB before "valid": refused from the directory, in the order the tables are read.
        order = (*MANIFESTS, *REQUIRED_FILES, *OPTIONAL_FILES)
        assert self.zip is not None
        self.zip.check(
            [(m, n) for n in order if isinstance(m := self.members.get(n), zipfile.ZipInfo)]
        )

    def open(self, name: str) -> BinaryIO:
        member = self.members[name]
        if isinstance(member, zipfile.ZipInfo):
            assert self.zip is not None
            return self.zip.open(member, name)
        try:
            return member.open("rb")
        except OSError as exc:
            raise PackageError(
                self.source, [Problem(name, "readable", f"cannot read: {exc}")]
            ) from None

    def not_utf8(self, name: str, where: int | None) -> PackageError:
        """``name`` is not UTF-8 (at byte ``where``): said as the package loader says it
        (validation QA: UTF-16 was "byte 0" here)."""
        with self.open(name) as fh:
            head = fh.read(200)
        what = _binary_kind(head) or f"byte {where}"
        return PackageError(self.source, [Problem(name, "utf-8", f"not UTF-8 text ({what})")])

    def read(self, name: str) -> str:
        with self.open(name) as fh:
            try:
                data = fh.read()
            except OSError as exc:
                raise PackageError(
                    self.source, [Problem(name, "readable", f"cannot read: {exc}")]
                ) from None
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise self.not_utf8(name, exc.start) from None


def _junk(name: str) -> bool:
    """A name no artifact writer gives a table: dotfiles (``.DS_Store``, macOS's ``._x``)."""
    return name.startswith(".")


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _singular(stem: str) -> str:
    """``stem`` lowercased, ``-`` as ``_``, a plural ending dropped: ``Queries`` -> ``query``."""
    stem = stem.lower().replace("-", "_")
    if stem.endswith("ies"):
        return stem[:-3] + "y"
    return stem[:-1] if stem.endswith("s") else stem


def near_file_name(name: str) -> str | None:
    """The artifact file ``name`` most likely means, when it is not one itself: another case,
    another extension, singular for plural, ``-`` for ``_``, or a small typo; else None.

    >>> [near_file_name(n) for n in ("query.jsonl", "Queries.JSONL", "queries.json")]
    ['queries.jsonl', 'queries.jsonl', 'queries.jsonl']
    >>> near_file_name("notes.txt"), near_file_name("queries.jsonl")
    (None, None)
    """
    if name in KNOWN_FILES:
        return None
    stem = _singular(name.split(".", 1)[0])
    for known in KNOWN_FILES:
        if stem == _singular(known.split(".", 1)[0]):
            return known
    return closest_name(name, KNOWN_FILES, cutoff=0.85)


def _unread_problems(src: _Source) -> tuple[list[Problem], set[str], list[str]]:
    """The container's members not read: near misses of a file the package lacks (errors:
    QA s47, a queries.jsonl named query.jsonl was skipped and the package had no queries),
    the files they stand for, and the other members, which are only named (a README beside
    the tables is common)."""
    has_manifest = any(m in src.members for m in MANIFESTS)
    misses: list[Problem] = []
    meant: set[str] = set()
    others: list[str] = []
    for member in src.unread or []:
        target = None
        if not member.endswith("/"):
            target = near_file_name(PurePosixPath(member).name)
        if target is None or target in src.members or (target in MANIFESTS and has_manifest):
            others.append(member)
            continue
        meant.add(target)
        misses.append(
            Problem(
                id_text(member, 200),
                "file-name",
                "not read (an artifact's files are read by their exact names); did you mean "
                f"{target}? Rename it",
            )
        )
    return misses, meant, others


def _unread_note(src: _Source, others: list[str]) -> str | None:
    """One warning naming what the package holds but does not read, if anything."""
    if src.unread is None:
        return note(
            "$",
            f"the folder cannot be listed: files in it other than {', '.join(KNOWN_FILES)} "
            "were not checked",
            "artifact-other",
        )
    if not others:
        return None
    shown = first_few(others, 10, show=id_text)
    return note(
        "$",  # the folder or zip as a whole
        f"not read: {len(others)} other item(s) in the {'zip' if src.zip else 'folder'}: "
        f"{shown} (an artifact package reads "
        f"{', '.join(REQUIRED_FILES + OPTIONAL_FILES)} and one manifest of "
        f"{', '.join(MANIFESTS)})",
        "artifact-other",
    )


def _not_json(exc: ValueError) -> str:
    """A decoding error that is not a syntax error, in the package loader's words."""
    if "digits" in str(exc):
        return "not valid JSON: a number has too many digits to read"
    return f"not valid JSON: {exc}"


def _records(src: _Source, name: str, problems: Problems) -> list[tuple[int, dict]]:
    if name not in src.members:
        return []
    out: list[tuple[int, dict]] = []
    # A line that is not JSON is "truncated" when it is the last one and the file does not end
    # with a newline; which it is is known only once the lines after it are read.
    unparsed: tuple[int, str] | None = None  # (line, JSON error) of the last bad line so far
    with src.open(name) as fh:
        lines = NonblankLines(fh)
        try:
            for n, offset, raw in lines:
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise src.not_utf8(name, offset + exc.start) from None
                if not line.strip():
                    continue
                if unparsed is not None:
                    problems.append(Problem(f"{name}:{unparsed[0]}", "json-syntax", unparsed[1]))
                    unparsed = None
                try:
                    # json_float: 1e-400 is refused by the package checks, not read as 0 (QA s44).
                    obj = json.loads(line, object_pairs_hook=object_pairs, parse_float=json_float)
                except json.JSONDecodeError as exc:
                    unparsed = (n, f"not valid JSON: {exc.msg} (column {exc.colno})")
                    continue
                except RecursionError:
                    problems.append(
                        Problem(f"{name}:{n}", "json-depth", "nested too deeply to read")
                    )
                    continue
                except ValueError as exc:  # past Python's digit limit (QA s44: a traceback)
                    problems.append(Problem(f"{name}:{n}", "json-syntax", _not_json(exc)))
                    continue
                if not isinstance(obj, dict):
                    problems.append(
                        Problem(
                            f"{name}:{n}", "type", "each line must be a JSON object", json_type(obj)
                        )
                    )
                    continue
                # As in package files (QA: {"weight": 1, "weight": 500} silently weighed 500).
                # The record is still read, so that the lines citing it are not reported too.
                repeated = duplicate_key_problems(obj, f"{name}:{n}")
                if repeated:
                    problems.extend(repeated)
                    obj = plain_copy(obj)  # reported here, not again by the package checks
                out.append((n, obj))
        except OSError as exc:
            raise PackageError(
                src.source, [Problem(name, "readable", f"cannot read: {exc}")]
            ) from None
    if unparsed is not None:
        if lines.ends_with_newline:
            problems.append(Problem(f"{name}:{unparsed[0]}", "json-syntax", unparsed[1]))
        else:
            problems.append(
                Problem(
                    f"{name}:{unparsed[0]}",
                    "truncated",
                    "the last line ends before its JSON object is complete (truncated?)",
                )
            )
    return out


def _same(a: Any, b: Any) -> bool:
    """Equal values of the same JSON kind (``1`` and ``true`` disagree; ``0`` and ``0.0`` not)."""
    return isinstance(a, bool) == isinstance(b, bool) and a == b


def _map(
    obj: dict,
    spec: dict[str, tuple[str, ...]],
    loc: _Loc,
    problems: Problems,
    notes: list[str],
) -> dict[str, Any]:
    """The record's fields under their package names; other fields go to ``meta``.

    Two aliases of one field (``time_index`` and ``time``) must agree: the first is read and
    the agreeing copy is not kept twice; a disagreement is an ``alias-conflict`` problem (QA:
    the second alias's value was dropped without a word, not even kept in meta).
    """
    item: dict[str, Any] = {}
    used: set[str] = set()
    for target, names in spec.items():
        present = [n for n in names if n in obj]
        if not present:
            continue
        first = present[0]
        item[target] = obj[first]
        loc.fields[target] = first
        used.update(present)
        for other in present[1:]:
            if not _same(obj[first], obj[other]):
                problems.append(
                    Problem(
                        loc.path(""),
                        "alias-conflict",
                        f"'{first}' and '{other}' name the same field but disagree "
                        f"({obj[first]!r} vs {obj[other]!r}): keep one of them",
                        [obj[first], obj[other]],
                    )
                )
    extras = {k: v for k, v in obj.items() if k not in used and k != "meta"}
    meta = dict(obj["meta"]) if isinstance(obj.get("meta"), dict) else {}
    if "meta" in obj and not isinstance(obj["meta"], dict):
        extras["meta"] = obj["meta"]
    known = [n for names in spec.values() for n in names]
    for k, v in extras.items():
        meta[k] = v
        loc.fields[f"meta.{k}"] = k
        # CLI QA: "costt": 99 went to meta without a word (other fields are kept by design).
        if (typo := closest_name(k, known, cutoff=0.8)) is not None:
            # The path in the line's record; the message names the file and line.
            notes.append(
                note(
                    _child_path("$", k),
                    f"in {loc.file} line {loc.line}: {k!r} is not a field of {loc.file} and is "
                    f"kept in meta; did you mean {typo!r}?",
                    "field-typo",
                )
            )
    if meta:
        item["meta"] = meta
    return item


_ITEM_PATH = re.compile(r"^\$\.(experiences|units|queries|candidates)\[(\d+)\](.*)$")
_FIELD = re.compile(r"^\.([A-Za-z_][A-Za-z0-9_]*)(.*)$")
_COV_CELL = re.compile(r'^\.coverage\[(".*")\]$')


def _translate(
    problem: Problem,
    locs: dict[str, list[_Loc]],
    cov_locs: dict[tuple[int, str], _Loc],
    manifest: str | None,
) -> Problem:
    m = _ITEM_PATH.match(problem.path)
    if not m:
        if problem.path.startswith("$.") and manifest:
            # The manifest's top-level "saturation" is the package's objective.saturation
            # (validation QA: the error named meta.json.objective.saturation).
            rest = problem.path[1:].replace(".objective.saturation", ".saturation", 1)
            return Problem(f"{manifest}{rest}", problem.rule, problem.message, problem.value)
        return problem
    section, idx, rest = m.group(1), int(m.group(2)), m.group(3)
    loc = locs[section][idx]
    cell = _COV_CELL.match(rest)
    if section == "candidates" and cell:
        unit = json.loads(cell.group(1))
        cloc = cov_locs.get((idx, unit))
        if cloc is not None:
            key = "unit" if problem.rule == "known-unit" else "value"
            return Problem(
                cloc.path("." + cloc.fields.get(key, key)),
                problem.rule,
                problem.message,
                problem.value,
            )
    fm = _FIELD.match(rest)
    if fm:
        name, tail = fm.group(1), fm.group(2)
        if name == "meta":
            sub = _FIELD.match(tail)
            if sub and f"meta.{sub.group(1)}" in loc.fields:
                return Problem(
                    loc.path("." + loc.fields[f"meta.{sub.group(1)}"] + sub.group(2)),
                    problem.rule,
                    problem.message,
                    problem.value,
                )
        src = loc.fields.get(name)
        if src is None:
            src = _default_name(section, name)
        rest = f".{src}{tail}"
    return Problem(loc.path(rest), problem.rule, problem.message, problem.value)


def _default_name(section: str, name: str) -> str:
    spec = {"experiences": _EXP, "units": _UNIT, "queries": _QUERY, "candidates": _CAND}[section]
    return spec.get(name, (name,))[0]


def load_artifact_package(path: str | Path, source: str | None = None) -> Package:
    """Load a coverage-package folder or zip as a validated :class:`Package`.

    Parameters
    ----------
    path : str or Path
        A folder holding the JSONL files, or a ``.zip`` of it.
    source : str, optional
        The name problems are reported under (default: ``path``), e.g. an upload's file name
        where ``path`` is the temporary copy read.

    Returns
    -------
    Package
        ``meta["source_format"] == "artifact"``; ``meta["format_version"]`` names the layout.

    Raises
    ------
    PackageError
        A missing file, a bad line, or any validation problem, located as ``file:line.field``.
    """
    p = Path(path)
    source = str(path) if source is None else source
    if not p.exists():
        raise PackageError(source, [Problem("$", "file-exists", "no such file or folder")])
    src = _Source(p, source)
    try:
        return _read_package(p, source, src)
    finally:
        src.close()


def _read_package(p: Path, source: str, src: _Source) -> Package:
    misses, meant, others = _unread_problems(src)
    # A near miss of a table makes the folder an artifact meant (of a manifest alone not: a
    # folder of packages may hold a packages.json).
    meant_table = any(name in meant for name in REQUIRED_FILES)
    if not meant_table and not any(name in src.members for name in (*REQUIRED_FILES, *MANIFESTS)):
        # CLI QA: `validate sample_packages` listed four "missing" JSONL files of a layout
        # the user never meant. A folder with none of them is not an artifact package.
        if p.is_dir():
            jsons = sorted(x.name for x in p.glob("*.json"))
            hint = (
                f" It holds {len(jsons)} .json file(s) ({first_few(jsons, 3)}): give one of "
                "them, or sweep / audit the folder, which read every package in it."
                if jsons
                else ""
            )
        else:
            # s56: the app reads an uploaded zip as an artifact; a zipped package is the
            # likelier mistake there, and its fix is to unzip it.
            jsons = sorted(n for n in src.unread or () if n.lower().endswith(".json"))
            hint = (
                f" It holds {len(jsons)} .json file(s) ({first_few(jsons, 3)}): unzip it and "
                "give a package file itself."
                if jsons
                else ""
            )
        raise PackageError(
            source,
            [
                Problem(
                    "$",
                    "file-type",
                    f"a {'folder' if p.is_dir() else 'zip'}, not a package file: it is read "
                    f"as an artifact package only when it holds {', '.join(REQUIRED_FILES)}."
                    + hint,
                )
            ],
        )
    problems = Problems(source)
    for name in REQUIRED_FILES:
        if name not in src.members and name not in meant:  # else its near miss says it
            problems.add(name, "required-file", "missing from the coverage package")
    problems.extend(misses)
    problems.raise_if_any()

    manifest_name = next((m for m in MANIFESTS if m in src.members), None)
    manifest: dict[str, Any] = {}
    if manifest_name:
        try:
            manifest = json.loads(
                src.read(manifest_name), object_pairs_hook=object_pairs, parse_float=json_float
            )
        except json.JSONDecodeError as exc:
            raise PackageError(
                source,
                [
                    Problem(
                        f"{manifest_name} (line {exc.lineno})",
                        "json-syntax",
                        f"not valid JSON: {exc.msg}",
                    )
                ],
            ) from None
        except RecursionError:
            raise PackageError(
                source, [Problem(manifest_name, "json-depth", "nested too deeply to read")]
            ) from None
        except ValueError as exc:  # past Python's digit limit (QA s44: a traceback)
            raise PackageError(
                source, [Problem(manifest_name, "json-syntax", _not_json(exc))]
            ) from None
        if not isinstance(manifest, dict):
            raise PackageError(
                source,
                [Problem(manifest_name, "type", "must be a JSON object", json_type(manifest))],
            )
        repeated = duplicate_key_problems(manifest, manifest_name)
        if repeated:
            raise PackageError(source, repeated)

    locs: dict[str, list[_Loc]] = {"experiences": [], "units": [], "queries": [], "candidates": []}
    notes: list[str] = []
    if (unread := _unread_note(src, others)) is not None:
        notes.append(unread)
    # Validation QA: a second manifest, package fields and a wrong version in the manifest
    # were all ignored or moved into meta without a word.
    for other in MANIFESTS:
        if other in src.members and other != manifest_name:
            notes.append(
                note(
                    "$",  # that file as a whole
                    f"{other} is not read: {manifest_name} is this artifact's manifest",
                    "artifact-other",
                )
            )
    # Newer or older said, as of a package's (QA s51 #7).
    version_problem = format_version_problem(manifest.get("memaudit", FORMAT_VERSION))
    if version_problem is not None:
        problems.append(
            Problem(
                f"{manifest_name}.memaudit",
                RULE_FORMAT_VERSION,
                f"{version_problem} (or leave the field out)",
                manifest["memaudit"],
            )
        )
    for key in ("experiences", "units", "queries", "candidates", "stores", "objective"):
        if key in manifest:
            notes.append(
                note(
                    _child_path("$", key),
                    f"in {manifest_name}: a package field an artifact does not read from its "
                    "manifest (the tables and 'saturation' are read); kept in the package meta",
                    "manifest-field",
                )
            )
    for key in manifest:
        if key not in (*_MANIFEST_KEYS, "saturation", "meta") and (
            typo := closest_name(key, (*_MANIFEST_KEYS, "saturation"), cutoff=0.8)
        ):
            notes.append(
                note(
                    _child_path("$", key),
                    f"in {manifest_name}: {key!r} is not a manifest key and is kept in the "
                    f"package meta; did you mean {typo!r}?",
                    "field-typo",
                )
            )
    doc: dict[str, Any] = {"memaudit": 1}
    doc["id"] = manifest.get("id") or re.sub(r"\s+", "-", p.stem if p.is_file() else p.name)
    for key in _MANIFEST_KEYS[1:]:
        if key in manifest:
            doc[key] = manifest[key]
    if "saturation" in manifest:
        doc["objective"] = {"saturation": manifest["saturation"]}
    files = (
        ("experiences", "experiences.jsonl", _EXP),
        ("units", "evidence_units.jsonl", _UNIT),
        ("queries", "queries.jsonl", _QUERY),
        ("candidates", "candidate_memories.jsonl", _CAND),
    )
    counts: dict[str, int] = {}
    for section, name, spec in files:
        items = []
        rows = _records(src, name, problems)
        counts[name] = len(rows)
        for line, obj in rows:
            loc = _Loc(name, line)
            item = _map(obj, spec, loc, problems, notes)
            if section == "candidates":
                item["coverage"] = {}
            items.append(item)
            locs[section].append(loc)
        if items or section != "queries":
            doc[section] = items

    cand_index: dict[str, int] = {}
    for i, cand in enumerate(doc["candidates"]):
        if isinstance(cand.get("id"), str):
            cand_index.setdefault(cand["id"], i)
    cov_locs: dict[tuple[int, str], _Loc] = {}
    dropped_cell_fields: list[str] = []
    cov_rows = _records(src, "coverage_matrix.jsonl", problems)
    counts["coverage_matrix.jsonl"] = len(cov_rows)
    for line, obj in cov_rows:
        loc = _Loc("coverage_matrix.jsonl", line)
        cell = _map(obj, _COV, loc, problems, notes)
        if "meta" in cell:  # a coverage cell is one number: other fields cannot be kept
            dropped_cell_fields.append(f"{loc.path()} ({', '.join(map(repr, cell['meta']))})")
        cand_id, unit_id = cell.get("candidate"), cell.get("unit")
        missing = [k for k in ("candidate", "unit", "value") if k not in cell]
        if missing:
            for k in missing:
                problems.append(
                    Problem(
                        loc.path("." + _COV[k][0]),
                        "required",
                        f"missing required field '{_COV[k][0]}'",
                    )
                )
            continue
        if not isinstance(cand_id, str) or cand_id not in cand_index:
            problems.append(
                Problem(
                    loc.path("." + loc.fields["candidate"]),
                    "known-candidate",
                    "coverage for an unknown candidate",
                    cand_id,
                )
            )
            continue
        if not isinstance(unit_id, str) or not unit_id:
            problems.append(
                Problem(
                    loc.path("." + loc.fields["unit"]), "type", "must be a unit id string", unit_id
                )
            )
            continue
        idx = cand_index[cand_id]
        if (idx, unit_id) in cov_locs:
            first = cov_locs[(idx, unit_id)]
            problems.append(
                Problem(
                    loc.path(""),
                    "unique-cell",
                    f"coverage of ({cand_id}, {unit_id}) given twice (first at {first.path()})",
                    cell["value"],
                )
            )
            continue
        cov_locs[(idx, unit_id)] = loc
        doc["candidates"][idx]["coverage"][unit_id] = cell["value"]

    # The rows' own problems do not stop here: the package checks below report the rest in
    # the same pass (every problem at once, not one fix-and-rerun per problem).
    pmeta = {
        k: v
        for k, v in manifest.items()
        if k not in _MANIFEST_KEYS and k not in ("saturation", "meta", "memaudit")
    }
    if isinstance(manifest.get("meta"), dict):
        pmeta.update(manifest["meta"])
    pmeta.update(
        source_format="artifact",
        format_version="coverage-package-jsonl",
        container="zip" if p.is_file() else "folder",
        line_counts=counts,
    )
    if dropped_cell_fields:
        notes.append(
            note(
                "$",  # rows of coverage_matrix.jsonl, the first named
                f"{len(dropped_cell_fields)} coverage row(s) have fields besides candidate, "
                "unit and value, which a coverage cell cannot keep (first: "
                f"{dropped_cell_fields[0]})",
                "coverage-cell-fields",
            )
        )
    if notes:
        earlier = pmeta.get("warnings", [])
        pmeta["warnings"] = [*(earlier if isinstance(earlier, list) else [earlier]), *notes]
    doc["meta"] = pmeta
    found: list[Problem] = []
    try:
        package = parse_package(doc, source)
    except PackageError as exc:
        found = exc.problems
    # Through the collector: the rows' problems and the package's stop at one cap.
    problems.extend(_translate(pr, locs, cov_locs, manifest_name) for pr in found)
    problems.raise_if_any()
    return package
