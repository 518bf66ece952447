"""Read saved results back into their typed models: :func:`read_result`.

Every result the CLI writes with ``--json`` (``solve``, ``score``, ``sweep``, ``audit``), and
the ``to_dict()`` of each model in :data:`RESULT_KINDS`, carries ``result_version``
(:mod:`memaudit_core.versions`) and ``result_kind``, a key of :data:`RESULT_KINDS`.
:func:`read_result` picks the model by that kind and rebuilds it with the model's
``from_dict``, so a researcher who saved ``memaudit sweep ... --json > sweep.json`` gets the
:class:`~memaudit_core.suites.SweepSuiteResult` again for later analysis. The round trip is
exact: ``Model.from_dict(json.loads(json.dumps(r.to_dict()))) == r``, floats included (JSON
keeps a float's shortest repr; the CLI writes non-finite floats as the strings "Infinity",
"-Infinity" and "NaN", which are read back too).

A file that cannot be read raises :class:`~memaudit_core.errors.ResultError`, naming the file,
the JSON path and the rule, named as the package loader names the same condition
(:data:`~memaudit_core.errors.RULES`: ``required`` for a missing field, ``type``,
``known-kind``, ``format-version`` for a newer version; a file that is not JSON, or repeats a
key inside one object, gets the package loader's JSON rules, as
:func:`~memaudit_core.package.parse_json_text` reads both). Sweep and audit files saved before
``result_kind`` existed are known by their ``suite`` key. The library's curves, sensitivities,
certification records, package stats and overviews name their kind too (QA s40) and read back,
and so do the Compare and Evidence views (session 41: they were refused as "not readable") and
the union curve (QA s45: refused as a missing field); a
file of one of these models saved before it said its kind is told which model its keys are. A
key the result does not write at its place is refused (``known-field``, QA s43: a typo and an
added key were dropped without a word), besides the CLI's ``json_output_version``,
``memaudit_version`` and a solve's or score's ``cost_unit``; a name outside its registry (pool,
saturation, engine, writer kind) breaks ``allowed-value``. Summaries such as a solve's ``label``
and ``certified`` or a union report's ``union_opt_value`` are recomputed from the fields they
summarise; a saved ``label`` or ``certified`` flag that differs is refused (``inconsistent``),
as an audit's ``ok`` is, and so is a union report's summary or a union score's copy of its
union metrics that differs from what the report gives (QA s47, :func:`check_copy`). A
``result_version`` older than the keys a file holds is refused (``inconsistent``, s51:
:func:`check_version_holds`), as is a proven optimum below a store found at a smaller budget
(:func:`check_optima_order`).

Examples
--------
>>> import json
>>> import memaudit_core as ma
>>> opt = ma.solve(ma.compile_package(ma.generate("update_chain")), 6)
>>> saved = json.loads(json.dumps(opt.to_dict()))
>>> saved["result_kind"]
'solve'
>>> again = ma.read_result(saved)
>>> again == opt, again.label, again.selected == opt.selected
(True, 'OPT', True)
>>> del saved["certificate"]["checks"][0]["value"]
>>> ma.read_result(saved)
Traceback (most recent call last):
...
memaudit_core.errors.ResultError: $.certificate.checks[0].value: missing required field 'value' \
[rule: required]
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import json
import math
import os
import types
import typing
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from .errors import (
    RULE_FILE_EXISTS,
    RULE_FILE_TYPE,
    RULE_FORMAT_VERSION,
    RULE_KNOWN_FIELD,
    RULE_READABLE,
    RULE_REQUIRED,
    RULE_TYPE,
    RULE_UTF8,
    MemAuditError,
    PackageError,
    ResultError,
    cut_repr,
    file_name_text,
    probe_path,
)
from .package import (
    ZIP_MAGICS,
    OverflowedNumber,
    _binary_kind,
    json_type,
    looks_like_package,
    parse_json_text,
)
from .versions import JSON_OUTPUT_VERSION, RESULT_VERSION

#: ``result_kind`` -> (module, class): the models :func:`read_result` rebuilds. Each model's
#: ``RESULT_KIND`` names its entry, and its ``to_dict()`` writes it.
RESULT_KINDS: dict[str, tuple[str, str]] = {
    "solve": ("solvers", "SolveResult"),
    "store_evaluation": ("analysis", "StoreEvaluation"),
    "union_score": ("union", "UnionScore"),
    "union_report": ("union", "UnionReport"),
    "union_curve": ("union", "UnionCurve"),
    "sweep": ("analysis", "SweepResult"),
    "sweep_suite": ("suites", "SweepSuiteResult"),
    "audit": ("audit", "AuditReport"),
    "budget_curve": ("curves", "BudgetCurve"),
    "ablation_curve": ("robustness", "AblationCurve"),
    "cost_rule_sensitivity": ("robustness", "CostRuleSensitivity"),
    "capacity_sensitivity": ("robustness", "CapacitySensitivity"),
    "noise_sensitivity": ("robustness", "NoiseSensitivity"),
    "family_band": ("curves", "FamilyBand"),
    "certification_report": ("curves", "CertificationReport"),
    "package_stats": ("reports", "PackageStats"),
    "overview": ("reports", "Overview"),
    "compare_view": ("explain", "CompareView"),
    "evidence_view": ("explain", "EvidenceView"),
}

#: Kinds whose ``to_dict()`` gained keys when it gained ``result_kind`` (QA s40), or since
#: (the views, session 41: the fields needed to rebuild them), so that a file saved before
#: lacks fields the model needs.
_KIND_KEYS_GREW = frozenset(
    {
        "certification_report",
        "package_stats",
        "overview",
        "compare_view",
        "evidence_view",
        "union_curve",
    }
)

#: ``result_kind`` -> the top-level keys its ``to_dict()`` wrote besides ``result_version``
#: and ``result_kind`` before it said its kind: a file saved then (QA s40) is told which model
#: it looks like when its keys include all of one of these sets.
_KIND_KEYS: dict[str, frozenset[str]] = {
    "budget_curve": frozenset(
        "package_id content_hash cost_unit saturation budgets methods opt points notes "
        "errors time_s".split()
    ),
    "ablation_curve": frozenset(
        "package_id content_hash pool removed_types absent_types n_candidates n_removed "
        "certified notes points".split()
    ),
    "cost_rule_sensitivity": frozenset(
        "package_id content_hash cost_unit budgets writers budget_rule rules".split()
    ),
    "capacity_sensitivity": frozenset("package_id content_hash k all_agree notes points".split()),
    "noise_sensitivity": frozenset(
        "package_id content_hash mode level draws seed budgets writers writer_rows mean_tau "
        "min_tau same_ranking_share mean_opt_change mean_cells_changed n_cells taus "
        "n_unproven".split()
    ),
    "family_band": frozenset(
        "family params seeds budgets methods bootstrap rows n_uncertified notes errors "
        "time_s".split()
    ),
    "certification_report": frozenset(
        "package_id content_hash saturation engines time_limit total_time_limit n_certified "
        "n_disagreements rows time_s".split()
    ),
    "compare_view": frozenset(
        "package_id content_hash label source_kind budget cost_unit value opt_value opt_label "
        "opt_certified opt_status opt_bound opt_gap ratio ratio_text cost store_cost opt_cost "
        "notes explanation experience_rows unit_rows bucket_rows".split()
    ),
    "evidence_view": frozenset(
        "package_id content_hash budget cost_unit store_label source_kind opt_label all_kinds "
        "kinds units focus_unit_id focus_candidates focus_queries heatmap timeline graph "
        "notes".split()
    ),
    "package_stats": frozenset(
        "package_id title cost_unit saturation content_hash experiences sessions candidates "
        "units queries stores total_cost default_budget budget_grid candidates_by_type "
        "units_by_kind warnings generator seed".split()
    ),
    "overview": frozenset("stats budget opt evaluations writer_errors".split()),
    # QA s45: it wrote neither its kind nor its package.
    "union_curve": frozenset("n_unproven rows".split()),
}

#: The keys written since result version 2 (the first version, 1, ended when the evidence
#: view's ``focus_unit`` became ``focus_unit_id``: :mod:`memaudit_core.versions`), by the
#: kinds whose version-1 files read back: audits (known by their ``suite`` key) and the four
#: sensitivity analyses (with the ``result_kind`` the reader asks to add). A file of version 1
#: does not hold them (s51: ``result_version: 1`` on a file of today's keys was read back),
#: and a version-1 file of another kind lacks fields the reader needs (it was written before
#: results said their kind or were read back), so a file of another kind that reads back is
#: of version 2. ``path -> keys``, ``[]`` standing for every item of an array; taken from what
#: the last version-1 commit's ``to_dict()`` and CLI wrote.
_SINCE_VERSION_2: dict[str, dict[str, frozenset[str]]] = {
    "audit": {
        "$": frozenset({"enum_time_s", "verdict"}),
        **{
            f"$.{rows}[]": frozenset(
                "bnb_bound milp_bound bnb_gap milp_gap enum_status enum_value enum_bound "
                "enum_gap enum_time_s enum_nodes value_unit bnb_reported milp_reported "
                "enum_reported problem_list".split()
            )
            for rows in ("rows", "disagreements")
        },
    },
    "ablation_curve": {
        "$.points[]": frozenset(
            "full_bound full_gap pool_bound pool_gap drop_low drop_high".split()
        )
    },
    "cost_rule_sensitivity": {
        "$": frozenset({"notes"}),
        "$.rules[].rows[]": frozenset({"opt_bound"}),
    },
    "capacity_sensitivity": {"$.points[]": frozenset({"label_1"})},
    "noise_sensitivity": {"$": frozenset({"notes"})},
}

#: ``suite`` -> ``result_kind``: how sweep and audit results named themselves before
#: ``result_kind`` (such files are read too).
_SUITE_KINDS = {"sweep": "sweep_suite", "audit": "audit"}

#: How the CLI (``_json_safe``) writes the floats JSON has no literal for.
_NON_FINITE = {"Infinity": math.inf, "-Infinity": -math.inf, "NaN": math.nan}


def read_result(source: str | Path | Mapping[str, Any]) -> Any:
    """The typed result held by a saved JSON file or an already parsed dict.

    Parameters
    ----------
    source : str, Path or Mapping
        A file written by a CLI command's ``--json`` (``solve``, ``score``, ``sweep``,
        ``audit``) or by ``json.dump(result.to_dict(), ...)``, or such a document as a dict.

    Returns
    -------
    object
        A SolveResult, StoreEvaluation, UnionScore, UnionReport, UnionCurve, SweepResult,
        SweepSuiteResult, AuditReport, BudgetCurve, AblationCurve, CostRuleSensitivity,
        CapacitySensitivity, NoiseSensitivity, FamilyBand, CertificationReport, PackageStats,
        Overview, CompareView or EvidenceView: the model named by the document's
        ``result_kind`` (see
        :data:`RESULT_KINDS`), equal field by field to the result that was saved.

    Raises
    ------
    ResultError
        The file is missing or unreadable (``file-exists``, ``readable``, ``utf-8``), a folder,
        a zip, a CSV table or a chart image (``file-type``), a package or another JSON
        document that is no result (``result-json``), not JSON, or the document breaks a rule;
        the message names the file, the JSON path and the rule (``required``, ``type``,
        ``known-kind``, ``format-version``, ``allowed-value``, ``inconsistent``,
        ``known-field``, ...: :data:`~memaudit_core.errors.RULES`, the names the package
        loader gives the same conditions), or the JSON reader's rules shared with packages
        (``empty``, ``truncated``, ``json-syntax``, ``json-depth``, ``duplicate-key``).

    Examples
    --------
    >>> import json, tempfile, os
    >>> import memaudit_core as ma
    >>> ev = ma.score(ma.generate("update_chain"), 6, writer="density")
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = os.path.join(folder, "score.json")
    ...     with open(path, "w") as fh:
    ...         json.dump(ev.to_dict(), fh)
    ...     again = ma.read_result(path)
    >>> type(again).__name__, again == ev, again.ratio_text
    ('StoreEvaluation', True, '0.730')
    >>> try:
    ...     ma.read_result({"result_version": 99, "result_kind": "solve"})
    ... except ma.ResultError as exc:
    ...     print(exc.path, exc.rule)
    $.result_version format-version
    """
    return read_saved(source)[0]


def read_saved(
    source: str | Path | Mapping[str, Any],
) -> tuple[Any, list[dict[str, Any]] | None]:
    """:func:`read_result`'s result, and the ``package_warnings`` a CLI command's ``--json``
    listed beside it (``[{"file", "warnings"}]``; None when the document has no such key),
    checked: ``memaudit show`` says them again (QA s45: it dropped them)."""
    if isinstance(source, Mapping):
        return _read_document(source)
    if not isinstance(source, str | os.PathLike):
        # Library QA: None, 3 and b"{}" reached pathlib as TypeErrors.
        raise MemAuditError(
            "read_result() takes a file path (str or Path) or a parsed dict, got "
            f"{type(source).__name__}"
        )
    name = file_name_text(str(source))
    # ResultErrors, so that `show --json` names the file and the rule (CLI QA: a missing
    # file, a folder and non-UTF-8 bytes gave a bare message).
    path = Path(source)
    found, folder, unreadable = probe_path(source)
    if unreadable:
        raise ResultError("$", RULE_READABLE, unreadable).in_file(name)
    if not found:
        raise ResultError("$", RULE_FILE_EXISTS, "no such file or folder").in_file(name)
    if folder:
        from .suites import out_folder_text  # suites imports this module

        # Not file-exists: the folder exists (QA s48); file-type, as the package loader says
        # of a folder that is no artifact (QA s51 #7: this said result-json).
        text = out_folder_text(path) or "a folder, not a result file: give a result's JSON file"
        raise ResultError("$", RULE_FILE_TYPE, text).in_file(name)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ResultError("$", RULE_READABLE, f"cannot read it: {exc.strerror or exc}").in_file(
            name
        ) from None
    text = _result_text(data, path, name)
    try:
        data = _parse_json(text, name)
    except ResultError:
        # A CSV (or chart) download named by its suffix, only when it is not JSON after all.
        not_result = _not_a_result(path, name)
        if not_result is None:
            raise
        raise not_result from None
    try:
        return _read_document(data)
    except ResultError as exc:
        raise exc.in_file(name) from None


def _result_text(data: bytes, path: Path, name: str) -> str:
    """The file's bytes ``data`` as text, decoded as the package loader decodes a package
    (:func:`~memaudit_core.package.loads_package`), or the :class:`ResultError` with its rule
    and words: ``file-type`` for a zip, ``utf-8`` saying what the bytes look like (QA s51 #7:
    UTF-16 was "not UTF-8 text (byte 0)" here, "it looks like UTF-16 text; save it as UTF-8"
    there). A CSV table or chart image, by its suffix, is said to be one first."""
    try:
        if data[:4] in ZIP_MAGICS:
            raise ResultError(
                "$",
                RULE_FILE_TYPE,
                "a zip file, not a saved result: unzip it and give the result's JSON file",
            )
        kind = _binary_kind(data)
        if kind:
            raise ResultError("$", RULE_UTF8, f"file is not UTF-8 text: {kind}")
        try:
            # utf-8-sig: a byte-order mark (Windows editors) is skipped, as load_package does
            # (QA s42 defect 4: the BOM was refused as "invalid JSON").
            return data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ResultError(
                "$", RULE_UTF8, f"file is not UTF-8 text (byte {exc.start})"
            ) from None
    except ResultError as exc:
        raise _not_a_result(path, name) or exc.in_file(name) from None


#: The app's and the CLI's files that are not saved results, by suffix: what each is.
_NOT_RESULTS = {".csv": "a CSV table", ".png": "a PNG image", ".svg": "an SVG image"}

#: The rule of a JSON document given where a saved result is read that is none (a package,
#: ``validate``'s verdict); a folder, zip, table or image is the wrong kind of file
#: (``file-type``), as for the package loader.
NOT_A_RESULT = "result-json"


def _not_a_result(path: Path, name: str) -> ResultError | None:
    """The error for a CSV table or chart image read as a saved result, or None for another
    suffix (QA s46: ``memaudit show sweep.csv`` said only "not valid JSON")."""
    what = _NOT_RESULTS.get(path.suffix.lower())
    if what is None:
        return None
    return ResultError(
        "$",
        RULE_FILE_TYPE,
        f"{what}, not a saved result: memaudit show and read_result read the JSON results "
        "the CLI saves (--json) and the app's JSON downloads (e.g. the Budget sweep's \"Sweep "
        "result (JSON)\"); CSV files (the app's CSV downloads, sweep -o) are tables, for a "
        "spreadsheet or pandas",
    ).in_file(name)


#: A second JSON value after the first (``memaudit solve ... --json >> r.json`` twice).
_EXTRA_DATA_HINT = "a result file holds one JSON object: two results written into one file?"


def _parse_json(text: str, name: str) -> Any:
    """The packages' JSON reader, with a key repeated inside one object refused (QA s44: plain
    ``json.loads`` kept the last of ``"package_id": "EVIL", "package_id": "veg"`` without a
    word). Its first problem becomes the :class:`ResultError`; the rest are counted."""
    try:
        # A 1e-400 too (rule normal): MemAudit never writes one (the file was edited), and it
        # would read as 0. Its walk, as the repeated keys', runs only when decoding saw one.
        return parse_json_text(
            text,
            name,
            refuse_repeated_keys=True,
            refuse_underflow=True,
            extra_data_hint=_EXTRA_DATA_HINT,
        )
    except PackageError as exc:
        first, more = exc.problems[0], len(exc.found) - 1
        message = first.message
        if first.rule != "duplicate-key":
            pass  # a syntax error, or the first underflow: one error, nothing to count
        elif exc.stopped:  # QA s44: the stop line was counted as a key, and the count as exact
            message += f" (at least {more} more repeated key(s) in this file; checking stopped)"
        elif more:
            message += f" ({more} more repeated key(s) in this file)"
        raise ResultError(first.path, first.rule, message, first.value).in_file(name) from None


def _read_document(data: Any) -> tuple[Any, list[dict[str, Any]] | None]:
    if not isinstance(data, Mapping):
        # In the package loader's words (QA s51 #7: "expected a JSON object, got an array").
        raise ResultError(
            "$",
            RULE_TYPE,
            f"a saved result must be a JSON object, not a JSON {json_type(data)}",
            _shown(data),
        )
    version = data.get("json_output_version")
    if version is not None:
        # Checked as result_version is (library QA: "1", 1.0 and [1] were called newer than 1,
        # -5 and true were read).
        _checked_version(
            version, "$.json_output_version", JSON_OUTPUT_VERSION, "MemAudit CLI", "JSON output"
        )
    if "result_kind" not in data and data.get("suite") in _SUITE_KINDS:
        # Saved before results said their kind: sweeps and audits said it by "suite".
        data = {**data, "result_kind": _SUITE_KINDS[data["suite"]]}
    if "result_kind" not in data:
        if isinstance(data.get("valid"), bool) and "file" in data:
            # QA s51 #3: `validate --json`'s verdict (its counts of experiences, units and
            # candidates) was called "a MemAudit package", sending the user to load_package;
            # an invalid package's verdict, holding the error object, was called that.
            verdict = "valid" if data["valid"] else "invalid"
            raise ResultError(
                "$",
                NOT_A_RESULT,
                f"memaudit validate's verdict on a package (--json; {cut_repr(data['file'])} "
                f"is {verdict}), not a saved result: read_result and memaudit show read the "
                "results solve, score, sweep and audit save (--json, to_dict())",
            )
        if isinstance(data.get("error"), Mapping):  # the CLI's error object, not a result
            raise ResultError(
                "$.result_kind",
                RULE_REQUIRED,
                "the file holds the CLI's error object, not a result: "
                f"{data['error'].get('message')!s}",
            )
        if looks_like_package(data):
            # Library QA s49: a package was called "not a MemAudit result" without saying
            # what it is; the package loader says the reverse of a saved result.
            raise ResultError(
                "$",
                NOT_A_RESULT,
                "a MemAudit package"
                + (f' ("memaudit": {cut_repr(data["memaudit"])})' if "memaudit" in data else "")
                + ", not a saved result: load it with ma.load_package (the CLI's validate, "
                "solve, score and sweep read packages); read_result and memaudit show read "
                "the results those save (--json, to_dict())",
            )
        like = _looks_like(data)
        if like is not None:
            # QA s40: a curve or view saved before it wrote its kind was called "not a
            # MemAudit result"; its keys say which model it is.
            model = _model_name(like)
            if like in _KIND_KEYS_GREW or (
                data.get("result_version") == 1 and like not in _SINCE_VERSION_2
            ):  # s51: a version-1 file of such a kind is refused once it says its kind
                then = (
                    "it lacks fields this version writes, so it cannot be read back as an "
                    "object (read it as JSON, or save the result again)"
                )
            else:
                then = f'add "result_kind": "{like}" to read it back'
            raise ResultError(
                "$.result_kind",
                RULE_REQUIRED,
                "missing required field 'result_kind': the keys are those of "
                f"{model} ({like!r}), saved before it said its kind; {then}",
            )
        raise ResultError(
            "$.result_kind",
            RULE_REQUIRED,
            "missing required field 'result_kind': not a MemAudit result, or one saved before "
            "results said their kind",
        )
    kind = data["result_kind"]
    if not isinstance(kind, str) or kind not in RESULT_KINDS:  # a list is unhashable (CLI QA)
        raise ResultError(
            "$.result_kind",
            "known-kind",
            f"unknown result kind (known: {', '.join(RESULT_KINDS)})",
            kind,
        )
    module, name = RESULT_KINDS[kind]
    model = getattr(importlib.import_module(f".{module}", __package__), name)
    result = model.from_dict(data)
    # QA s43: keys the model does not read (a typo such as ``store`` for ``store_value``, an
    # added ``hacked``) were dropped without a word. A genuine file's keys are the rebuilt
    # result's own (the round trip is exact), besides the CLI's and earlier versions' keys.
    check_known_keys(data, result.to_dict(), "$", _CLI_KEYS | _CLI_KIND_KEYS.get(kind, set()))
    return result, _package_warnings(data)


def _package_warnings(data: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """The document's ``package_warnings`` (``cli.PackageWarnings.finish``'s list), checked
    as the other fields are; None without the key."""
    if "package_warnings" not in data:
        return None
    path = "$.package_warnings"
    items = decode(tuple[Any, ...], data["package_warnings"], path)
    out = []
    for i, item in enumerate(items):
        at = child(path, i)
        entry = require_object(item, at)
        file = decode(str, field_value(entry, "file", at), child(at, "file"))
        warnings = decode(
            tuple[str, ...], field_value(entry, "warnings", at), child(at, "warnings")
        )
        written: dict[str, Any] = {"file": file, "warnings": list(warnings)}
        if "warning_details" in entry:  # written since session 52; show recomputes them
            details = decode(
                tuple[Any, ...], entry["warning_details"], child(at, "warning_details")
            )
            for j, detail in enumerate(details):
                require_object(detail, child(child(at, "warning_details"), j))
            written["warning_details"] = list(details)
        check_known_keys(entry, written, at)
        out.append(written)
    return out


#: Top-level keys the CLI's ``--json`` adds to every result (``cli._emit``); the warnings of
#: the packages a command read (``cli.PackageWarnings``) are not the result's.
_CLI_KEYS = frozenset({"json_output_version", "memaudit_version", "package_warnings"})
#: ... and to results of these kinds: ``solve`` and ``score`` write the package's cost unit
#: beside the result, for ``show`` to print.
_CLI_KIND_KEYS = {kind: frozenset({"cost_unit"}) for kind in ("solve", "store_evaluation")}

#: Keys earlier result versions wrote that this version no longer writes (files saved then
#: still read back), by key name wherever it appears.
_RETIRED_KEYS: frozenset[str] = frozenset()


def check_known_keys(
    data: Any, written: Any, path: str, extra: Collection[str] = frozenset()
) -> None:
    """Refuse a key of the saved ``data`` that the rebuilt result's ``to_dict()`` (``written``)
    does not write at the same place, at any depth (rule ``known-field``). ``extra`` are
    keys accepted at ``path`` itself (the CLI's version keys at the top).

    >>> check_known_keys({"a": [{"b": 1}]}, {"a": [{"b": 1}]}, "$")
    >>> check_known_keys({"a": [{"c": 1}]}, {"a": [{"b": 1}]}, "$")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    memaudit_core.errors.ResultError: $.a[0].c: not a field of this result (known here: b)...
    """
    if isinstance(data, Mapping) and isinstance(written, Mapping):
        for key, value in data.items():
            if key in written:
                check_known_keys(value, written[key], child(path, key))
            elif key not in extra and key not in _RETIRED_KEYS:
                known = ", ".join(str(k) for k in written) or "none"
                raise ResultError(
                    child(path, str(key)),
                    RULE_KNOWN_FIELD,
                    f"not a field of this result (known here: {known}); a misspelt or added "
                    "key is refused rather than ignored",
                    None,
                )
    elif isinstance(data, list | tuple) and isinstance(written, list | tuple):
        for i, (value, again) in enumerate(zip(data, written, strict=False)):
            check_known_keys(value, again, child(path, i))


def _model_name(kind: str) -> str:
    """``"robustness.AblationCurve"``: the model of a known ``result_kind``."""
    module, name = RESULT_KINDS[kind]
    return f"{module}.{name}"


def _looks_like(data: Mapping[str, Any]) -> str | None:
    """The kind whose ``to_dict()`` keys ``data`` holds all of (the largest such set), for a
    file without ``result_kind`` that has ``result_version``; None when none fits."""
    if "result_version" not in data:
        return None
    keys = set(data)
    fits = [kind for kind, own in _KIND_KEYS.items() if own <= keys]
    return max(fits, key=lambda kind: len(_KIND_KEYS[kind])) if fits else None


# --------------------------------------------------------------------------- decoding


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


def _wrong(path: str, expected: str, value: Any) -> ResultError:
    return ResultError(
        path, RULE_TYPE, f"expected {expected}, got {_json_type(value)}", _shown(value)
    )


def _shown(value: Any) -> Any:
    # Scalars are worth echoing; a whole object or array would drown the message.
    return value if isinstance(value, str | int | float | bool) else None


def child(path: str, key: str | int) -> str:
    """The JSON path of ``key`` (an object key or an array index) under ``path``.

    >>> child(child("$", "rows"), 3)
    '$.rows[3]'
    """
    return f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}"


def decode(hint: Any, value: Any, path: str) -> Any:
    """``value`` (parsed JSON) as the type ``hint`` says, or a located :class:`ResultError`.

    Handles ``str``, ``int``, ``float`` (ints and the CLI's non-finite strings accepted),
    ``bool``, ``X | None``, ``tuple[X, ...]``, fixed tuples, ``Any`` (kept as parsed) and
    result models with a ``from_dict``.

    >>> decode(tuple[float, ...], [1, 2.5, "Infinity"], "$.budgets")
    (1.0, 2.5, inf)
    >>> try:
    ...     decode(int | None, "3", "$.seed")
    ... except ResultError as exc:
    ...     print(exc.path, exc.rule)
    $.seed type
    """
    if hint is Any:
        return value
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(hint) if a is not type(None)]
        if value is None and len(options) < len(typing.get_args(hint)):
            return None
        if len(options) == 1:
            try:
                return decode(options[0], value, path)
            except ResultError as exc:
                if exc.rule != RULE_TYPE or exc.path != path:
                    raise
                raise _wrong(path, f"{_expected(options[0])} or null", value) from None
        raise TypeError(f"cannot decode {hint!r}")  # a model's type, not the user's input
    if hint is float:
        if isinstance(value, str) and value in _NON_FINITE:
            return _NON_FINITE[value]
        if isinstance(value, int | float) and not isinstance(value, bool):
            if isinstance(value, OverflowedNumber):  # 1e400: infinity is written "Infinity"
                raise ResultError(path, RULE_TYPE, "a number too large for a float")
            try:
                return float(value)
            except OverflowError:  # an integer past 1.8e308: no float holds it
                raise ResultError(path, RULE_TYPE, "a number too large for a float") from None
        raise _wrong(path, "a number", value)
    if hint is bool:
        if isinstance(value, bool):
            return value
        raise _wrong(path, "true or false", value)
    if hint is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise _wrong(path, "an integer", value)
    if hint is str:
        if isinstance(value, str):
            return value
        raise _wrong(path, "a string", value)
    if origin is tuple:
        args = typing.get_args(hint)
        if not isinstance(value, list | tuple):
            raise _wrong(path, "an array", value)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(decode(args[0], v, child(path, i)) for i, v in enumerate(value))
        if len(value) != len(args):
            raise ResultError(
                path, RULE_TYPE, f"expected an array of {len(args)}, got {len(value)} items"
            )
        return tuple(
            decode(a, v, child(path, i)) for i, (a, v) in enumerate(zip(args, value, strict=True))
        )
    if isinstance(hint, type) and hasattr(hint, "from_dict"):
        return hint.from_dict(value, path)
    raise TypeError(f"cannot decode {hint!r}")


def _expected(hint: Any) -> str:
    names = {float: "a number", int: "an integer", bool: "true or false", str: "a string"}
    if hint in names:
        return names[hint]
    return "an array" if typing.get_origin(hint) is tuple else "an object"


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def require_object(data: Any, path: str) -> Mapping[str, Any]:
    """``data`` when it is a JSON object, else a located :class:`ResultError`."""
    if not isinstance(data, Mapping):
        raise _wrong(path, "an object", data)
    return data


def field_value(data: Mapping[str, Any], key: str, path: str) -> Any:
    """``data[key]``, or a :class:`ResultError` at ``path.key`` when it is missing."""
    if key not in data:
        raise ResultError(child(path, key), RULE_REQUIRED, f"missing required field '{key}'")
    return data[key]


def check_result_version(data: Mapping[str, Any], path: str) -> int:
    """The document's ``result_version``, refused when missing, not an integer, or newer than
    :data:`~memaudit_core.versions.RESULT_VERSION`."""
    return _checked_version(
        field_value(data, "result_version", path),
        child(path, "result_version"),
        RESULT_VERSION,
        "MemAudit",
        "result",
    )


def check_version_holds(data: Mapping[str, Any], path: str, kind: str) -> None:
    """Refuse a ``kind`` result at ``path`` whose ``result_version`` is older than the keys it
    holds (rule ``inconsistent``, at ``path.result_version``): a version-1 file of a kind
    whose version-1 files cannot be read back, or one holding a key written since version 2
    (:data:`_SINCE_VERSION_2`). Called once the version and the kind are checked.

    >>> check_version_holds({"result_version": 2}, "$", "solve")
    >>> check_version_holds({"result_version": 1}, "$", "solve")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    memaudit_core.errors.ResultError: $.result_version: a 'solve' result of version 1 ...
    """
    if data.get("result_version") != 1:
        return
    at = child(path, "result_version")
    later = _SINCE_VERSION_2.get(kind)
    if later is None:
        raise ResultError(
            at,
            "inconsistent",
            f"a {kind!r} result of version 1 cannot be read back: version-1 files were "
            "written before results said their kind or were read back, and lack fields this "
            f"version needs; a {kind!r} file that holds them was written as version 2",
            1,
        )
    found = _later_key(data, path, "$", later)
    if found is not None:
        raise ResultError(
            at,
            "inconsistent",
            f"version 1, yet the file holds {found}, a key written since version 2 (a "
            "version-1 file does not hold it: its version was edited, or the key added)",
            1,
        )


def _later_key(
    data: Any, path: str, pattern: str, later: Mapping[str, frozenset[str]]
) -> str | None:
    """The JSON path of the first key of ``data`` (at ``path``, whose :data:`_SINCE_VERSION_2`
    pattern is ``pattern``) listed in ``later``, or None."""
    if isinstance(data, Mapping):
        own = later.get(pattern, frozenset())
        for key, value in data.items():
            if key in own:
                return child(path, key)
            below = f"{pattern}.{key}"
            if any(p == below or p.startswith((f"{below}[", f"{below}.")) for p in later):
                found = _later_key(value, child(path, key), below, later)
                if found is not None:
                    return found
    elif isinstance(data, list | tuple):
        for i, item in enumerate(data):
            found = _later_key(item, child(path, i), f"{pattern}[]", later)
            if found is not None:
                return found
    return None


def _checked_version(value: Any, path: str, newest: int, writer: str, kind: str) -> int:
    """``value`` as a version from 1 to ``newest``, else a located ResultError, rule
    ``format-version`` whatever is wrong with it, as the package loader's ``memaudit``."""
    try:
        version = decode(int, value, path)
    except ResultError as exc:
        raise ResultError(path, RULE_FORMAT_VERSION, exc.detail, exc.value) from None
    if version > newest:
        raise ResultError(
            path,
            RULE_FORMAT_VERSION,
            f"written by a newer {writer} ({kind} version {version}); this one reads versions "
            f"up to {newest}",
            version,
        )
    if version < 1:
        raise ResultError(path, RULE_FORMAT_VERSION, f"{kind} versions start at 1", version)
    return version


def check_quotient(at: str, got: float | None, num: float, den: float, names: str) -> None:
    """Refuse a saved ratio that is not ``num / den`` (None when ``den`` is not above
    ``ZERO_OPT``, as the library computes it), at ``at`` with rule ``inconsistent``.

    ``names`` says the quotient in the message, e.g. ``"value / opt"``. One rule for every
    read-back model (QA s40: curves, sensitivities and gains each repeated it).

    Examples
    --------
    >>> check_quotient("$.ratio", 0.5, 1.0, 2.0, "value / opt")
    >>> check_quotient("$.ratio", 0.6, 1.0, 2.0, "value / opt")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    memaudit_core.errors.ResultError: $.ratio: not value / opt = 1.0 / 2.0 (expected 0.5) ...
    """
    from .solvers import ZERO_OPT

    want = None if den <= ZERO_OPT else num / den
    if got is None or want is None:
        same = got is None and want is None
    else:
        same = math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-15)
    if not same:
        raise ResultError(
            at, "inconsistent", f"not {names} = {num!r} / {den!r} (expected {want!r})", got
        )


def values_close(a: float, b: float) -> bool:
    """Whether two saved F values of one package are the same number: within 1e-9 of the
    larger, with a floor of 1 (a saved result does not record its package's value unit, and
    the floor never refuses a genuine result's rounding). The read-back tolerance of a sweep's
    rows, a budget curve's points and the sensitivities' optima.

    >>> values_close(5.55, 5.55 + 1e-12), values_close(5.55, 5.56)
    (True, False)
    """
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def check_not_above_opt(at: str, value: float, opt: float, opt_name: str) -> None:
    """Refuse a saved F above the certified optimum ``opt`` (named ``opt_name`` in the
    message), at ``at`` with rule ``inconsistent``: no store beats a proven optimum.

    >>> check_not_above_opt("$.value", 5.0, 5.55, "opt")
    >>> check_not_above_opt("$.value", 9.0, 5.55, "opt")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    memaudit_core.errors.ResultError: $.value: above the certified optimum opt 5.55, which ...
    """
    if value > opt and not values_close(value, opt):
        raise ResultError(
            at,
            "inconsistent",
            f"above the certified optimum {opt_name} {opt!r}, which no store can beat",
            value,
        )


def check_optima_order(
    entries: Sequence[tuple[float, Mapping[str, float], str | None, float | None, float]],
) -> None:
    """Refuse a proven optimum below a store found at a budget no larger, within one
    instance and pool: that store fits the larger budget too, so the optimum there is worth
    at least as much (s51: every engine's value at one check of an audit, moved by the same
    amount, read back, as did a certification row's). ``entries`` are ``(budget, stores,
    at, opt, unit)``: the feasible stores found at ``budget`` (a description such as
    ``"rows[2]'s bnb store"`` -> F), and the optimum proven there (``at`` its JSON path, or
    None without one) in the package's value unit ``unit`` (0 where the result does not
    save it). The tolerance, ten times :data:`~memaudit_core.solvers.CERTIFIED_GAP_MAX` of
    the larger of ``unit`` and the optimum, is above any certified gap: an optimum proven
    within it is never refused, and an edit past it is.

    >>> check_optima_order([(3.0, {"a": 5.0}, None, None, 1.0), (6.0, {}, "$.opt", 7.0, 1.0)])
    >>> check_optima_order([(3.0, {"a": 8.0}, None, None, 1.0), (6.0, {}, "$.opt", 7.0, 1.0)])
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    memaudit_core.errors.ResultError: $.opt: the proven optimum 7.0 at budget 6 is below ...
    """
    from .solvers import CERTIFIED_GAP_MAX

    best: tuple[float, str, float] | None = None  # F, description, budget
    order = sorted(range(len(entries)), key=lambda k: entries[k][0])
    i = 0
    while i < len(order):
        budget = entries[order[i]][0]
        same = [k for k in order[i:] if entries[k][0] == budget]
        i += len(same)
        for k in same:
            for what, value in entries[k][1].items():
                if best is None or value > best[0]:
                    best = (value, what, budget)
        for k in same:
            _, _, at, opt, unit = entries[k]
            if at is None or opt is None or best is None:
                continue
            value, what, found_at = best
            if value - opt > 10 * CERTIFIED_GAP_MAX * max(unit, abs(opt)):
                raise ResultError(
                    at,
                    "inconsistent",
                    f"the proven optimum {opt!r} at budget {budget:.10g} is below the F "
                    f"{value!r} of {what} at budget {found_at:.10g}: a store fits every larger "
                    "budget, so no optimum there is worth less",
                )


def check_finite(at: str, value: float, what: str = "a finite number >= 0") -> None:
    """Refuse a saved measurement no run produces, NaN, an infinity or a negative number (a
    duration, a cost), at ``at`` with rule ``allowed-value`` (QA s47: ``time_s: "NaN"`` was read
    back and written out again by ``show --json``).

    >>> check_finite("$.time_s", 0.25)
    >>> check_finite("$.time_s", math.nan)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    memaudit_core.errors.ResultError: $.time_s: a finite number >= 0 ...
    """
    if not (math.isfinite(value) and value >= 0):
        raise ResultError(at, "allowed-value", what, value)


def check_copy(at: str, saved: Any, want: Any, source: str, hint: Any = None) -> None:
    """Refuse a saved derived key (a copy or summary of other fields, which the model
    recomputes rather than reads) that is not the value the rebuilt result writes there,
    ``want`` (its ``to_dict()`` value): a wrong JSON type breaks ``type``, another value
    ``inconsistent``, at the innermost JSON path that differs (QA s47: a union score's
    ``union_ratio: -7`` and ``upper_pruned: "x"`` were replaced by the recomputed values
    unsaid). ``source`` names what the value is derived from, for the message; ``hint`` is
    the key's type where ``want`` alone does not give it (a ratio that is null, a pruned
    selection). Numbers compare within :func:`values_close`.

    >>> check_copy("$.ratio", 0.5, 0.5, "the report's ratio")
    >>> check_copy("$.up", {"value": "zzz"}, {"value": 1.0}, "upper")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    memaudit_core.errors.ResultError: $.up.value: expected a number, got a string ...
    """
    if hint is not None:
        decode(hint, saved, at)
    _check_copied(at, saved, want, source, hint is not None)


def _check_copied(at: str, saved: Any, want: Any, source: str, typed: bool) -> None:
    # ``typed``: the key's type hint read ``saved`` already, so a null there is a value of
    # the key (a ratio that is n/a) and differs from ``want`` rather than having a wrong type.
    if saved is None and want is not None and typed:
        raise ResultError(
            at, "inconsistent", f"does not match {source} (expected a value, not null)"
        )
    if isinstance(want, Mapping):
        saved = require_object(saved, at)
        for key, value in want.items():
            _check_copied(child(at, key), field_value(saved, key, at), value, source, typed)
        return
    if isinstance(want, list | tuple):
        if not isinstance(saved, list | tuple):
            raise _wrong(at, "an array", saved)
        if len(saved) != len(want):
            raise ResultError(
                at,
                "inconsistent",
                f"does not match {source} ({len(want)} items, not {len(saved)})",
            )
        for i, (item, value) in enumerate(zip(saved, want, strict=True)):
            _check_copied(child(at, i), item, value, source, typed)
        return
    if want is None:
        same = saved is None
    elif isinstance(want, bool | str):
        same = decode(type(want), saved, at) == want
    else:
        got = decode(float, saved, at)
        same = got == want or values_close(got, want)  # NaN fails
    if not same:
        shown = repr(want) if isinstance(want, str) else json.dumps(want)
        raise ResultError(
            at, "inconsistent", f"does not match {source} (expected {shown})", _shown(saved)
        )


def check_ratio_text(at: str, text: str | None, ratio: float | None) -> None:
    """Refuse a saved ``ratio_text`` that is not how the library writes ``ratio``
    (:func:`memaudit_core.analysis.ratio_text`), at ``at`` with rule ``inconsistent``.

    Examples
    --------
    >>> check_ratio_text("$.ratio_text", "0.500", 0.5)
    >>> check_ratio_text("$.ratio_text", "1.000", 0.5)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    memaudit_core.errors.ResultError: $.ratio_text: does not match the ratio (expected '0.500') ...
    """
    from .analysis import ratio_text

    if text != ratio_text(ratio):
        raise ResultError(
            at, "inconsistent", f"does not match the ratio (expected {ratio_text(ratio)!r})", text
        )


def check_writer_kind(at: str, writer: str | None, kind: str, others: Collection[str] = ()) -> None:
    """Refuse a saved writer kind outside :data:`~memaudit_core.writers.WRITER_KINDS` (and
    ``others``, e.g. a sweep's ``store``), or one that is not the kind of the product's own
    reference writer ``writer`` (QA s43: ``writer_kind: "blind"`` printed "density (blind)").

    >>> check_writer_kind("$.writer_kind", "density", "oracle")
    >>> check_writer_kind("$.writer_kind", "density", "blind")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    memaudit_core.errors.ResultError: $.writer_kind: the reference writer 'density' is ...
    """
    from .writers import BUILTIN_WRITERS, WRITER_KINDS

    check_choice(at, kind, (*WRITER_KINDS, *others))
    info = BUILTIN_WRITERS.get(writer) if writer is not None else None
    if info is not None and kind != info.kind:
        raise ResultError(
            at, "inconsistent", f"the reference writer {writer!r} is {info.kind!r}", kind
        )


def check_saved_flag(
    data: Mapping[str, Any],
    path: str,
    name: str,
    expected: bool | None,
    rule_text: str,
    *,
    nullable: bool = False,
) -> None:
    """Refuse a saved boolean ``name`` that is not what the result's own numbers give
    (``expected``): ablation curves' ``certified``, capacity sensitivities' ``all_agree``,
    audits' ``ok``, a solve certificate's ``agreement`` and its checks' ``feasible``.
    ``rule_text`` says what it is derived from. A file without the key reads. ``nullable``:
    null is a value of the flag (a certificate's ``agreement`` when no cross-check concluded),
    compared like the others rather than refused as the wrong type.

    >>> check_saved_flag({"ok": True}, "$", "ok", True, "its counts")
    >>> check_saved_flag({"agreement": False}, "$", "agreement", None, "one proof",
    ...                  nullable=True)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    memaudit_core.errors.ResultError: $.agreement: does not match one proof (expected null) ...
    """
    if name not in data:
        return
    at = child(path, name)
    got = decode(bool | None if nullable else bool, data[name], at)
    if got != expected:
        shown = "null" if expected is None else repr(expected)
        raise ResultError(at, "inconsistent", f"does not match {rule_text} (expected {shown})", got)


def check_row_budget(
    at: str, budget: float, budgets: Sequence[float], owner: str = "sweep"
) -> None:
    """Refuse a row at a budget its result does not list (``at`` is the row's path, ``owner``
    names the result in the message): one check for
    :class:`~memaudit_core.analysis.SweepResult`,
    :class:`~memaudit_core.suites.SweepSuiteResult` and
    :class:`~memaudit_core.audit.AuditReport`.

    >>> check_row_budget("$.rows[0]", 6.0, (3.0, 6.0))
    """
    if budget not in budgets:
        raise ResultError(
            f"{at}.budget",
            "inconsistent",
            f"not one of the {owner}'s budgets " + ", ".join(f"{b:.10g}" for b in budgets),
            budget,
        )


def check_store_fits(at: str, cost: float, budget: float, store_cut: int, owner: str) -> None:
    """Refuse a saved row (a sweep's, a budget curve's point) whose store costs more than its
    budget or whose ``store_cut`` is not a count, at ``at.cost`` / ``at.store_cut``.

    Every store fits its budget: one over it is cut to what fits (``store_cut`` memories
    dropped). ``owner`` names the row in the message ("row", "point").

    Examples
    --------
    >>> check_store_fits("$.rows[0]", 3.0, 4.0, 0, "row")
    >>> check_store_fits("$.rows[0]", 5.0, 4.0, 0, "row")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    memaudit_core.errors.ResultError: $.rows[0].cost: above the row's budget 4: ...
    """
    from .compiled import budget_with_tolerance

    if not (math.isfinite(cost) and cost >= 0):  # NaN fails too
        # QA s42 #3: a cost of -1 or NaN was called "above the row's budget".
        raise ResultError(
            f"{at}.cost", "inconsistent", f"the {owner}'s store costs a finite amount >= 0", cost
        )
    if not cost <= budget_with_tolerance(budget):
        raise ResultError(
            f"{at}.cost",
            "inconsistent",
            f"above the {owner}'s budget {budget:.10g}: every store fits it (a store over it "
            "is cut to what fits, store_cut)",
            cost,
        )
    if isinstance(store_cut, bool) or not store_cut >= 0:
        raise ResultError(
            f"{at}.store_cut", "allowed-value", "a count of memories, >= 0", store_cut
        )


def check_result_kind(data: Mapping[str, Any], path: str, kind: str) -> None:
    """Refuse a document whose ``result_kind`` is not ``kind`` (a sweep read as a solve)."""
    found = field_value(data, "result_kind", path)
    if found != kind:
        raise ResultError(
            child(path, "result_kind"),
            "known-kind",
            f"not a {kind!r} result"
            + (
                f" but a {found!r} one (read_result picks the model by kind)"
                if isinstance(found, str) and found in RESULT_KINDS
                else ""
            ),
            found,
        )


def from_fields(
    cls: type,
    data: Any,
    path: str = "$",
    *,
    keys: Mapping[str, str] | None = None,
    types_: Mapping[str, Any] | None = None,
    convert: Mapping[str, Callable[[Any, str], Any]] | None = None,
    kind: str | None = None,
    optional: Collection[str] = (),
    choices: Mapping[str, Collection[str]] | None = None,
) -> Any:
    """A result model ``cls`` rebuilt from its ``to_dict()`` output ``data``.

    Every dataclass field is read from the key of its name (``keys`` renames: field ->
    key), decoded by its type hint (``types_`` overrides a loose hint such as ``Any``) or
    by a ``convert(value, path)`` function. A model whose ``to_dict()`` writes
    ``result_version`` and ``result_kind`` passes ``kind``: both are checked first. A field
    named in ``optional`` that ``data`` lacks takes its default: a field added to a model
    after files of the same result version were saved (they must still read back).
    ``choices`` names the registry a string field's value must be a key of (field ->
    registry, such as :data:`~memaudit_core.saturations.SATURATIONS`): see
    :func:`check_choice`.
    """
    data = require_object(data, path)
    if kind is not None:
        check_result_version(data, path)
        check_result_kind(data, path, kind)
        check_version_holds(data, path, kind)
    keys, types_, convert = keys or {}, types_ or {}, convert or {}
    hints = _hints(cls)
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        key = keys.get(f.name, f.name)
        at = child(path, key)
        if f.name in optional and key not in data:
            continue  # the dataclass default
        raw = field_value(data, key, path)
        if f.name in convert:
            values[f.name] = convert[f.name](raw, at)
        else:
            values[f.name] = decode(types_.get(f.name, hints[f.name]), raw, at)
        if choices and f.name in choices and values[f.name] is not None:
            check_choice(at, values[f.name], choices[f.name])
        if key in _HASH_KEYS and isinstance(values[f.name], str):
            # "" is a value only where the model says so (a sweep row saved before rows
            # named their content: the field's default).
            check_content_hash(at, values[f.name], unknown_ok=f.default == "", what=_HASH_KEYS[key])
    return cls(**values)


#: The saved keys that hold a SHA-256 (:func:`check_content_hash`), with what it is a hash of:
#: a package's content (:func:`~memaudit_core.package.content_hash`) and an audit check's
#: instance (:func:`~memaudit_core.suites.instance_hash`; s51: ``"zz"`` was read back).
_HASH_KEYS = {"content_hash": "a package's content hash", "instance_hash": "an instance hash"}


def check_content_hash(
    at: str, value: str, *, unknown_ok: bool = False, what: str = _HASH_KEYS["content_hash"]
) -> None:
    """Refuse a saved ``content_hash`` that is not a package's SHA-256 in 64 lowercase hex
    digits (:func:`~memaudit_core.package.content_hash`), at ``at`` with rule ``allowed-value``
    (QA s50 #7: ``"xyz"`` was read back). ``unknown_ok``: "" (no content named) is accepted.
    :func:`from_fields` checks every model's ``content_hash`` field, and an audit row's
    ``instance_hash`` (``what`` names the hash in the message).

    >>> check_content_hash("$.content_hash", "0" * 64)
    >>> check_content_hash("$.content_hash", "xyz")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    memaudit_core.errors.ResultError: $.content_hash: a package's content hash is a SHA-256 ...
    """
    if unknown_ok and value == "":
        return
    if len(value) != 64 or any(c not in "0123456789abcdef" for c in value):
        raise ResultError(
            at,
            "allowed-value",
            f"{what} is a SHA-256 in 64 lowercase hexadecimal digits",
            value,
        )


def check_choice(at: str, value: Any, allowed: Collection[str]) -> None:
    """Refuse a saved name that is not one of ``allowed`` (a registry: pools, saturations,
    engines, writer kinds), at ``at`` with rule ``allowed-value`` (QA s43: ``pool: "weird"``
    and ``solver: "gurobi"`` were printed as they were).

    >>> check_choice("$.pool", "full", ("full", "generic"))
    >>> check_choice("$.pool", "weird", ("full", "generic"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    memaudit_core.errors.ResultError: $.pool: not one of full, generic ...
    """
    if value not in allowed:
        raise ResultError(at, "allowed-value", "not one of " + ", ".join(allowed), value)


def pairs(value: Any, path: str) -> tuple[tuple[str, Any], ...]:
    """A ``settings`` object as the (name, value) pairs the models keep."""
    return tuple(require_object(value, path).items())


def named(hint: Any) -> Callable[[Any, str], tuple[tuple[str, Any], ...]]:
    """A ``convert`` for :func:`from_fields`: an object written by ``dict(pairs)`` read back
    as the (name, value) pairs the model keeps, each value decoded as ``hint``.

    >>> named(float | None)({"gvt": 1, "density": None}, "$.mean_ratio")
    (('gvt', 1.0), ('density', None))
    """

    def convert(value: Any, path: str) -> tuple[tuple[str, Any], ...]:
        return tuple(
            (key, decode(hint, v, child(path, key)))
            for key, v in require_object(value, path).items()
        )

    return convert


__all__ = ["RESULT_KINDS", "read_result"]
