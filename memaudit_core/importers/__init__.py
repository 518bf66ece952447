"""Importers: memory-system exports -> external stores, datasets -> packages.

Two kinds of import:

- **Stores** (:data:`STORE_FORMATS`): what a memory system wrote, read into a
  :class:`~memaudit_core.package.Store` of external memories (:func:`load_external_store`).
  Each memory is costed by a cost rule (:mod:`memaudit_core.costs`, recorded in
  ``store.meta["cost_rule"]``) and gets coverage from its provenance links when a package is
  given (:mod:`.coverage`); otherwise ``store.meta["coverage"] == "needs annotation"``.
  Scoring adds the store to a package and evaluates it in the union package P+(Y).
- **Packages** (:data:`PACKAGE_FORMATS`): the original artifact's coverage-package folder or
  zip, and LoCoMo / LongMemEval-style benchmark files (:func:`import_package`).

Every importer records the detected format version (``meta["format_version"]``) and rejects
what it cannot read with a :class:`~memaudit_core.errors.PackageError` naming the file, the
JSON path and the rule.

Examples
--------
>>> sorted(STORE_FORMATS), sorted(PACKAGE_FORMATS)
(['amem', 'letta', 'mem0', 'zep'], ['artifact', 'locomo', 'longmemeval'])
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path, PurePosixPath

from ..costs import cost_rule_for_unit, get_cost_rule
from ..errors import PackageError, Problem, UnknownNameError, check_type, cut_repr
from ..package import Package, Store, check_package, looks_like_package, looks_like_store
from ._common import FORMAT_HINTS, check_store_id, guess_format
from .coverage import coverage_from_links, suggest_coverage, suggest_store_coverage

STORE_FORMATS = frozenset({"mem0", "letta", "amem", "zep"})
#: How much guess_store_format reads (inflated, for gzip) to find a JSON Lines file's first
#: line (1 MiB).
_SNIFF_BYTES = 1 << 20
PACKAGE_FORMATS = frozenset({"artifact", "locomo", "longmemeval"})
#: Each store format's system, as a store's label names it.
SYSTEM_NAMES = {"mem0": "Mem0", "letta": "Letta", "amem": "A-Mem", "zep": "Zep"}
#: At most this many characters of a file name go into a store's label (a legend entry).
LABEL_FILE_CHARS = 28


def short_name(name: str, limit: int = LABEL_FILE_CHARS) -> str:
    """``name`` cut in the middle to ``limit`` characters (an ellipsis where it was cut), so
    that both its start and its extension stay: exports of one run often differ only at the
    end of a long name (``run-2025-04-01-user-17.json``).

    >>> short_name("mem0_v1_list.json")
    'mem0_v1_list.json'
    >>> short_name("locomo-conv-26-mem0-platform-export-2025-04-02.json")
    'locomo-conv-26…25-04-02.json'
    """
    if len(name) <= limit:
        return name
    tail = (limit - 1) // 2
    return name[: limit - 1 - tail] + "…" + name[len(name) - tail :]


def export_label(
    fmt: str, file_name: str, history_name: str | None = None, *, system: str | None = None
) -> str:
    """A loaded export's store label: its system and file name (cut in the middle when long,
    :func:`short_name`), and the history read with it, if any.

    QA s51: every import was labelled "Mem0 export" (or "Zep / Graphiti export"), so six loaded
    exports were told apart in the store box, the chart's legend and the curve table only by
    ids such as ``mem0-3``, which nothing linked to a file.

    >>> export_label("mem0", "runs/mem0_v2_results.json", "mem0_history.json")
    'Mem0 · mem0_v2_results.json + history mem0_history.json'
    >>> export_label("zep", "zep_graphiti.json")
    'Zep · zep_graphiti.json'

    ``system`` names the system instead of the format's (an OpenMemory backup read as mem0).
    """
    system = system or SYSTEM_NAMES.get(fmt, fmt)
    text = f"{system} · {short_name(PurePosixPath(file_name.replace(chr(92), '/')).name)}"
    if history_name:
        text += f" + history {short_name(PurePosixPath(history_name).name, 20)}"
    return text


def file_sha256(path: str | Path) -> str | None:
    """The SHA-256 (hex) of a file's bytes, None when it cannot be read."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return None
    return digest.hexdigest()


def load_external_store(
    path: str | Path,
    fmt: str,
    *,
    cost_rule: str | None = None,
    store_id: str | None = None,
    package: Package | None = None,
    history: str | Path | list | None = None,
    label: str | None = None,
) -> Store:
    """Read a memory-system export into an external store.

    Parameters
    ----------
    path : str or Path
        The export file.
    fmt : {'mem0', 'letta', 'amem', 'zep'}
    cost_rule : str, optional
        A name in :data:`memaudit_core.costs.COST_RULES`. Default: the rule counting the
        package's ``cost_unit`` (:func:`memaudit_core.costs.cost_rule_for_unit`), else
        ``"words"``.
    store_id : str, optional
        Default: the format name.
    package : Package, optional
        When given, provenance links that match the package's unit or experience ids become
        coverage (see :func:`memaudit_core.importers.coverage.coverage_from_links`); a link
        under a unit key (``unit_ids``, ...: :data:`~._common.UNIT_LINK_KEYS`) that names
        nothing in it is refused (rule ``known-unit``), as is a value there that is no link
        (an object, a boolean: rule ``type``; without a package it is only warned of, and a
        null there is no link); other unmatched links are warned of.
    history : path or list, optional
        Mem0 only: history rows (JSON) or a ``history.db`` SQLite file.
    label : str, optional
        The store's label (legends, tables, the app's store box). Default: the system and the
        file name, and the history's (:func:`export_label`).

    Returns
    -------
    Store
        ``meta`` holds ``format``, ``format_version``, ``cost_rule``, ``coverage`` and
        format-specific counts (deleted memories, messages, relations...), and
        ``source_sha256``, the SHA-256 of the export's bytes (``history_sha256``: the
        history file's), by which a package that already holds this export's store is told
        (the app does not import it again).

    Raises
    ------
    UnknownNameError
        Unknown format or cost rule.
    PackageError
        The export cannot be read, or names a unit ``package`` lacks; every problem located by
        file, JSON path and rule. A file that looks like another format (another export, a
        Mem0 history, a MemAudit package, a saved MemAudit result, a MemAudit store object (an
        item of a package's ``stores``) or a benchmark file: LoCoMo, LongMemEval, a package
        source) gets one
        ``format-hint`` problem alone: the importer's own problems would only read it as
        ``fmt`` and advise rewriting it into one.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "mem0.json"
    >>> _ = f.write_text(json.dumps([{"id": "m1", "memory": "Prefers tea"}]))
    >>> s = load_external_store(f, "mem0", cost_rule="chars")
    >>> s.id, s.meta["format_version"], s.meta["cost_rule"], s.memories[0].cost
    ('mem0', '1.0', 'chars', 11.0)
    >>> s.label
    'Mem0 · mem0.json'
    """
    if not isinstance(fmt, str) or fmt not in STORE_FORMATS:
        raise UnknownNameError(
            f"unknown export format {cut_repr(fmt)} (known: {', '.join(sorted(STORE_FORMATS))})"
        )
    check_type(path, str | Path, "load_external_store()", "the export's path (str or Path)")
    if package is not None:
        check_package(package, "load_external_store(package=)")
    if cost_rule is None:
        cost_rule = cost_rule_for_unit(package.cost_unit if package is not None else None)
    get_cost_rule(cost_rule)  # fail fast, before reading anything
    check_store_id(store_id, str(path))
    if label is not None and (not isinstance(label, str) or not label.strip()):
        raise PackageError(
            str(path), [Problem("$", "store-label", "the store label must be a non-empty string")]
        )
    if history is not None and fmt != "mem0":
        raise UnknownNameError(f"history is only read for mem0 exports, not {cut_repr(fmt)}")
    kwargs = {"cost_rule": cost_rule, "store_id": store_id, "package": package}
    try:
        if fmt == "mem0":
            from .mem0 import load_mem0_store

            store = load_mem0_store(path, history=history, **kwargs)
        elif fmt == "letta":
            from .letta import load_letta_store

            store = load_letta_store(path, **kwargs)
        elif fmt == "amem":
            from .amem import load_amem_store

            store = load_amem_store(path, **kwargs)
        else:
            from .zep import load_zep_store

            store = load_zep_store(path, **kwargs)
    except PackageError as exc:
        # CLI QA: a Zep file read as Mem0 said "the memory has no id" for every item, with
        # no word that the format was the problem.
        looks, data = _sniff(path)
        if own := _memaudit_file_hint(looks, data, f"an export of format {cut_repr(fmt)}"):
            # QA s43 (defect 2): the mirror of package.py's hint for an export given as the
            # package; a package given as the export got only "needs a 'results' array".
            # Only the hint: the importer's own problems read the package's keys as notes or
            # edges (QA s43 recheck: 13 lines of "$["id"]: each note must be an object").
            raise PackageError(exc.source, [own]) from None
        if looks == "store":
            # QA s50: a store saved as its own file (one item of a package's "stores") read
            # as Mem0 said only "needs a 'results' array"; stores live in their package.
            hint = Problem(
                "$",
                "format-hint",
                f"this is a MemAudit store object (an 'id' with 'select' and/or 'memories'), "
                f'not an export of format {cut_repr(fmt)}: add it to the package\'s "stores" '
                "array (package format: README.md) and score it by its id (memaudit score "
                "PACKAGE --store ID; in the app: upload the package that holds it)",
            )
            # Only the hint, as for a package: the importers read its keys as notes or edges.
            raise PackageError(exc.source, [hint]) from None
        if looks is None or looks == fmt or any(p.rule == "format-hint" for p in exc.problems):
            # The importer's own hint (Mem0's "these are history rows") says it already.
            raise
        # Only the hint. QA s48: a package source's samples were
        # read as memories ("$[0].id: the memory has no id" for each one); QA s51 defect 7:
        # the same held for another export format, whose items the importer asked to rewrite
        # into its own (a Zep edge's 'fact': "rename it to 'memory'"), which contradicts the
        # hint.
        hint = Problem(
            "$",
            "format-hint",
            f"this file looks like {FORMAT_HINTS[looks]}, not an export of format {cut_repr(fmt)}",
        )
        raise PackageError(exc.source, [hint]) from None
    history_name = Path(history).name if isinstance(history, str | Path) else None
    meta = dict(store.meta)
    digest = file_sha256(path)
    if digest is not None:
        meta["source_sha256"] = digest
    if history_name is not None and (hdigest := file_sha256(history)) is not None:  # type: ignore[arg-type]
        meta["history_sha256"] = hdigest
    return replace(
        store,
        label=label.strip()
        if label is not None
        else export_label(
            fmt,
            str(path),
            history_name,
            system="OpenMemory" if meta.get("format_version") == "openmemory" else None,
        ),
        meta=meta,
    )


def import_counts(store: Store) -> dict[str, int]:
    """What an import kept and left out, counted here once for every face: the CLI's header
    line and ``external_store`` JSON, and the app's success message.

    ``superseded``: memories kept and marked superseded (Graphiti ``expired_at``, Mem0
    Platform ``replaced_by``: the system still holds them); ``superseded_versions`` (Mem0
    only): earlier texts an update replaced in place, no longer in the store
    (``meta["superseded_versions"]``); ``deleted``: memories left out (``meta["deleted"]``).
    QA s51: the CLI said "0 superseded kept" and the app "1 superseded version" of one import,
    each counting one of the first two.

    >>> from memaudit_core.package import ExternalMemory
    >>> m = ExternalMemory(id="m1", text="Tea", cost=1.0, coverage={}, status="superseded")
    >>> store = Store(id="s", memories=(m,), meta={"superseded_versions": 2, "deleted": []})
    >>> import_counts(store)
    {'memories': 1, 'superseded': 1, 'superseded_versions': 2, 'deleted': 0}
    """
    meta = store.meta
    versions = meta.get("superseded_versions", 0)
    deleted = meta.get("deleted", [])
    return {
        "memories": len(store.memories),
        "superseded": sum(1 for m in store.memories if m.status == "superseded"),
        "superseded_versions": versions if isinstance(versions, int) else 0,
        "deleted": len(deleted) if isinstance(deleted, list | tuple) else 0,
    }


def import_counts_text(counts: dict[str, int], deleted_ids: Sequence[str] = ()) -> str:
    """:func:`import_counts` in words, as the CLI and the app say them (``deleted_ids``: the
    first few are named).

    >>> counts = {"memories": 8, "superseded": 0, "superseded_versions": 1, "deleted": 1}
    >>> import_counts_text(counts, ["b9"])
    '0 superseded kept, 1 earlier version replaced by an update (not kept), 1 deleted not kept (b9)'
    """
    parts = [f"{counts['superseded']} superseded kept"]
    n = counts.get("superseded_versions", 0)
    if n:
        parts.append(
            f"{n} earlier {'version' if n == 1 else 'versions'} replaced by an update (not kept)"
        )
    ids = [str(i) for i in deleted_ids]
    named = (
        f" ({', '.join(ids[:5])}{', ...' if len(ids) > 5 else ''})"
        if ids and counts["deleted"]
        else ""
    )
    parts.append(f"{counts['deleted']} deleted not kept{named}")
    return ", ".join(parts)


def guess_store_format(path: str | Path) -> str | None:
    """Which export a file looks like, from its first bytes and top-level keys (a hint for
    error messages and warnings; never used to read a file): ``"mem0"`` (also a zip holding an
    OpenMemory backup's members, and OpenMemory JSON Lines, plain or gzip, whose first line is
    a backup row: ``id``, ``content``, ``state``), ``"letta"``, ``"amem"``, ``"zep"``,
    ``"mem0-history"`` (a SQLite history database), ``"locomo"`` or ``"longmemeval"``
    (benchmark files, which are package sources), ``"package"`` (a MemAudit package),
    ``"result"`` (a saved MemAudit result), ``"store"`` (one store object of a package's
    ``stores`` array) or None. A UTF-8 byte order mark is read past, as the readers do.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "edges.json"
    >>> _ = f.write_text(json.dumps([{"uuid": "e1", "fact": "Ann lives in Lisbon"}]))
    >>> guess_store_format(f)
    'zep'
    """
    return _sniff(path)[0]


def _sniff(path: str | Path) -> tuple[str | None, object]:
    """:func:`guess_store_format`'s guess, and the decoded JSON it read (None when it read
    none), for a hint to quote from (a saved result's kind)."""
    import gzip
    import json
    import zipfile
    import zlib

    from .openmemory import JSON_MEMBER, JSONL_MEMBER, looks_like_rows

    try:
        with open(path, "rb") as fh:
            head = fh.read(16)
            if head.startswith(b"SQLite format 3"):
                return "mem0-history", None
            if head[:4] == b"PK\x03\x04":
                fh.seek(0)
                with zipfile.ZipFile(fh) as zf:  # the member list only, nothing inflated
                    names = {PurePosixPath(n).name for n in zf.namelist()}
                return ("mem0" if {JSON_MEMBER, JSONL_MEMBER} & names else None), None
            if head[:2] == b"\x1f\x8b":
                # QA s40 defect 3: an OpenMemory memories.jsonl.gz read as another format
                # got only "decompress it first". Its first line is looked at, in the first
                # _SNIFF_BYTES inflated (never the whole stream: it may be a gzip bomb).
                fh.seek(0)
                with gzip.GzipFile(fileobj=fh) as gz:
                    text = gz.read(_SNIFF_BYTES).decode("utf-8", "replace")
                return ("mem0" if looks_like_rows(text) else None), None
            raw = head + fh.read(64_000_000)
    except (OSError, EOFError, ValueError, RecursionError, zipfile.BadZipFile, zlib.error):
        return None, None
    try:
        # utf-8-sig: a file saved with a byte order mark is read as the readers read it (QA
        # s51, cli defect 6: a package with a BOM given as the export got no hint).
        data = json.loads(raw.decode("utf-8-sig"))
    except (ValueError, RecursionError):
        # QA s40 defect 3: OpenMemory JSON Lines (memories.jsonl) got only "wrap the lines
        # in one array": its first line, an OpenMemory row (id, content, state), says it.
        rows = looks_like_rows(raw[:_SNIFF_BYTES].decode("utf-8-sig", "replace"))
        return ("mem0" if rows else None), None
    if looks_like_package(data):
        return "package", data
    if looks_like_result(data):
        return "result", data
    return ("store" if looks_like_store(data) else guess_format(data)), data


def looks_like_result(data: object) -> bool:
    """Whether decoded JSON is a saved MemAudit result (a ``--json`` output of ``solve``,
    ``score``, ``sweep`` ..., or a library result's ``to_dict()``): its ``result_kind`` or
    ``result_version``. A hint for messages, as :func:`looks_like_package` is.

    >>> looks_like_result({"result_version": 2, "result_kind": "solve"})
    True
    """
    return (
        isinstance(data, dict)
        and not looks_like_package(data)
        and ("result_kind" in data or "result_version" in data)
    )


def _memaudit_file_hint(looks: str | None, data: object, wanted: str) -> Problem | None:
    """The ``format-hint`` problem for a MemAudit file (a package or a saved result) given
    where ``wanted`` (an export, a benchmark file) goes, or None for another file.

    QA s51 (cli, defect 6): a saved result given as a Mem0 export got only "needs a 'results'
    array", and a package given to ``import locomo`` only "must be an array of samples".
    """
    if looks == "package":
        return Problem(
            "$",
            "format-hint",
            f"this is a MemAudit package, not {wanted}: give it as the PACKAGE argument (in "
            "the app: upload it as the package)",
        )
    if looks == "result":
        kind = data.get("result_kind") if isinstance(data, dict) else None
        named = f" ({cut_repr(kind)})" if isinstance(kind, str) else ""
        return Problem(
            "$",
            "format-hint",
            f"this is a saved MemAudit result{named}, not {wanted}: `memaudit show FILE` prints it",
        )
    return None


def import_package(
    fmt: str, source: str | Path, *, instance: str | None = None, cost_rule: str = "words"
) -> Package:
    """Import a package from a dataset or artifact format.

    Parameters
    ----------
    fmt : {'artifact', 'locomo', 'longmemeval'}
    source : str or Path
        Folder / zip (artifact) or JSON file (locomo, longmemeval; a LoCoMo zip of flat files).
    instance : str, optional
        LoCoMo ``sample_id`` or LongMemEval ``question_id``; required when the file holds
        more than one. Not used by ``artifact``.
    cost_rule : str
        Candidate cost rule for locomo / longmemeval (the artifact carries its own costs).

    Returns
    -------
    Package

    Raises
    ------
    UnknownNameError
        Unknown format or cost rule.
    PackageError
        Located problems; a MemAudit package or saved result given as a LoCoMo or LongMemEval
        file gets only a ``format-hint`` problem saying what it is.
    """
    if fmt not in PACKAGE_FORMATS:
        raise UnknownNameError(
            f"unknown package format {cut_repr(fmt)} (known: {', '.join(sorted(PACKAGE_FORMATS))})"
        )
    if fmt == "artifact":
        if instance is not None:
            # QA s40 defect 3: the library's keyword, not the CLI flag (the CLI refuses
            # --instance for artifact itself, before this call).
            raise UnknownNameError(
                "instance= does not apply to the artifact format (a folder or zip holds one "
                "package)"
            )
        from .artifact import load_artifact_package

        return load_artifact_package(source)
    try:
        if fmt == "locomo":
            from .locomo import import_locomo

            return import_locomo(source, instance=instance, cost_rule=cost_rule)
        from .longmemeval import import_longmemeval

        return import_longmemeval(source, instance=instance, cost_rule=cost_rule)
    except PackageError as exc:
        # QA s51 (cli, defect 6): a package given to `import locomo` got only "a LoCoMo file
        # must be an array of samples"; it needs no import. Only the hint, as for an export.
        looks, data = _sniff(source) if isinstance(source, str | Path) else (None, None)
        wanted = "a LoCoMo file" if fmt == "locomo" else "a LongMemEval file"
        if own := _memaudit_file_hint(looks, data, wanted):
            raise PackageError(exc.source, [own]) from None
        raise


__all__ = [
    "PACKAGE_FORMATS",
    "STORE_FORMATS",
    "coverage_from_links",
    "export_label",
    "import_counts",
    "import_counts_text",
    "import_package",
    "load_external_store",
    "suggest_coverage",
    "suggest_store_coverage",
]
