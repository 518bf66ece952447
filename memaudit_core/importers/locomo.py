"""LoCoMo-style conversations -> a package (plus the observations as a reference store).

Input (``meta["format_version"]``):

- ``locomo10-array``: a JSON array of samples (``sample_id``, ``conversation``, ``qa``,
  ``observation``, ``session_summary``, ``event_summary``), as in ``data/locomo10.json``; a
  single sample object is accepted too;
- ``locomo-flat``: the older per-conversation layout with every key at the top level
  (``session_1``, ``session_1_date_time``, ``qa``, ``session_1_observation``,
  ``session_1_summary``, ...): one such JSON file, or the zip of them (sample ids from the file
  names when missing).

**Instance choice**: ``instance`` is a ``sample_id``. A file with one conversation needs none;
with several, it is required and the error lists the available ids.

Mapping:

- experiences: one per session list ``session_<N>`` (sorted numerically, so ``session_10``
  follows ``session_9``), id ``session_<N>``, time ``N``, text ``"Speaker: text"`` lines;
  ``session_<N>_date_time`` (``"1:56 pm on 8 May, 2023"``) is kept raw and as ISO in meta.
  Date keys without a turn list (real files have them) are reported in ``meta["warnings"]``,
  and so are observation keys without one (their facts are kept, undated).
  Sessions stay in their numbering order; dates that go against it (session_2 dated before
  session_1) are reported there too.
- units: the evidence turns, id = ``dia_id``; kind by the QA categories that cite the turn:
  ``temporal_order`` if any question of category 2 (temporal) needs it, else ``fact`` if any
  of 1, 3, 4 does, else ``abstention`` (category 5, adversarial). A category that is not an
  integer 1-5 is refused; a question without one counts as fact, with a warning. A unit's
  weight is the number of questions that need it (query weight 1 each; no explicit unit weight).
- queries: one per QA item (``q<k>``, 1-based), requiring its resolved evidence; the raw
  category and its label (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5
  adversarial: a label table, the data does not state it) are in meta. Int answers become text;
  a list answer is joined with ``"; "`` (an object is kept as its JSON text) and a null or
  missing one (outside adversarial questions) is noted, both in ``meta["warnings"]``.
- candidates: per session one ``raw_span`` (the whole session, covering all its evidence turns
  at 1.0) and, when ``session_summary`` has the session, one ``summary`` covering them at 0.5.
  Costs follow ``cost_rule`` (default words).
- store ``observations``: the ``observation`` facts, one memory each (``obs-<N>-<k>``, dated
  by their session), whose coverage is 1.0 on the evidence units they link to. Links to turns
  that no question cites cover nothing (those turns are not units). Facts that repeat an
  earlier one's text are kept and listed in ``meta["warnings"]``.

A turn whose ``dia_id`` names another session (``D1:9`` inside ``session_2``) stays a turn
of the session whose list holds it, with a located warning (rule ``dia-id-session``).

A turn with empty text (and no ``blip_caption`` to stand for it) is refused
(``non-empty-text``) when a question cites it; otherwise it is left out of its session's text,
so its speaker label costs nothing, with a warning.

**Types** (importer QA: a list speaker became the text ``"[1, 2]: ..."``, an object question
a query without text, a NaN answer the answer ``"nan"``, all without a word). Every field read
must have its JSON type, else a located ``type`` problem; nothing is turned into text with
``str()``:

- strings: ``speaker_a`` / ``speaker_b``, a turn's ``speaker``, ``dia_id`` and ``text`` (or
  ``blip_caption`` standing for a missing text), ``session_<N>_date_time``, ``question``, each
  ``evidence`` entry (a single string is read as a list of one), a session summary and an
  observation's fact text and evidence links (a string or a list of strings);
- ``answer``: a string, or a finite number (LoCoMo has int answers; it becomes its text); a
  list or an object is kept as text with a warning (see above); ``true`` / ``false`` is refused
  (``type``), NaN or infinity too (``finite``).

Missing optional fields are warnings: a turn without a speaker (its line reads ``"?: text"``), a
question without text, a session without a date, an empty session summary (no summary
candidate). Text and ids copied into the package are checked at their source path for what
the package validator refuses there (an unpaired surrogate such as ``"\\ud83d"``: rule
``unicode``; NaN / infinity: ``finite``), so the problem names this file's JSON path, not the
generated package's. In the flat layout the paths have no ``conversation`` / ``observation`` /
``session_summary`` segment, as the file has none. A gzip file, or a zip without the ``.zip``
suffix, is named as such (``utf-8``), not as "not UTF-8 text (byte 1)".

Once a conversation is chosen, the problems of every stage (turns, ``qa``, the cited empty
turns, summaries, observations) are listed together in one error (QA s41); a turn with a
problem is left out, so evidence naming it is never read as a turn.

Evidence strings are normalised as the real file needs: each entry is split on ``[;,\\s]+``
and every piece matched against ``D:?(\\d+):0*(\\d+)`` -> ``D<s>:<t>`` (so ``"D8:6; D9:17"``,
``"D:11:26"`` and ``"D30:05"`` all resolve). A piece that does not parse (a bare ``"D"``) or
names no turn is recorded in ``meta["warnings"]`` with the question it came from; never
silently dropped.
"""

from __future__ import annotations

import json
import re
import zipfile
from datetime import datetime
from pathlib import Path
from typing import Any

from ..costs import EmptyTextError, cost_of, get_cost_rule
from ..errors import cut_repr, id_text
from ..package import Package, _child_path, json_type, parse_package
from ._common import (
    INSTANCE_KEYWORD,
    Collector,
    binary_kind,
    check_answer,
    common_path,
    decode_text,
    duplicates_warning,
    fail,
    first_few,
    note,
    parse_json,
    read_bytes,
    unspaced_note,
)
from ._zip import ZipReader
from .coverage import DIA_ID, LOCOMO_TURNS

CATEGORY_LABELS = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
_SESSION = re.compile(r"^session_(\d+)$")
_DATE = re.compile(r"^session_(\d+)_date_time$")
# "session_01" would read as session 1, whose dia ids (D1:3) and experience id it would then
# share with a "session_1" beside it: such keys are reported, not renumbered.
_PADDED = re.compile(r"^session_0\d+(_date_time|_summary|_observation)?$")
SUMMARY_COVERAGE = 0.5
#: What a zip given under another suffix is told (a ``.zip`` is read as flat conversation files).
ZIP_HINT = "give it a .zip suffix to read it as a zip of flat LoCoMo conversation files"


def normalise_evidence(entry: Any) -> tuple[list[str], list[str]]:
    """Split one evidence entry into normalised dia ids and unreadable pieces.

    Examples
    --------
    >>> normalise_evidence("D8:6; D9:17")
    (['D8:6', 'D9:17'], [])
    >>> normalise_evidence("D:11:26"), normalise_evidence("D30:05"), normalise_evidence("D")
    ((['D11:26'], []), (['D30:5'], []), ([], ['D']))
    """
    if isinstance(entry, int | float) and not isinstance(entry, bool):
        entry = str(entry)
    if not isinstance(entry, str):
        return [], [repr(entry)]
    ok: list[str] = []
    bad: list[str] = []
    for piece in re.split(r"[;,\s]+", entry.strip()):
        if not piece:
            continue
        m = DIA_ID.match(piece)
        if m:
            ok.append(f"D{int(m.group(1))}:{int(m.group(2))}")
        else:
            bad.append(piece)
    return ok, bad


def _parse_date(text: Any) -> str | None:
    if not isinstance(text, str):
        return None
    try:
        return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").isoformat()
    except ValueError:
        return None


def _flat_to_nested(sample: dict[str, Any], fallback_id: str) -> dict[str, Any]:
    conv = {
        k: v
        for k, v in sample.items()
        if _SESSION.match(k) or _DATE.match(k) or k in ("speaker_a", "speaker_b")
    }
    obs = {k: v for k, v in sample.items() if k.endswith("_observation")}
    summ = {k: v for k, v in sample.items() if re.match(r"^session_\d+_summary$", k)}
    return {
        "sample_id": sample.get("sample_id", fallback_id),
        "conversation": conv,
        "qa": sample.get("qa", []),
        "observation": obs,
        "session_summary": summ,
    }


def _is_flat(sample: Any) -> bool:
    return (
        isinstance(sample, dict)
        and "conversation" not in sample
        and any(_SESSION.match(k) for k in sample)
    )


def _read_samples(path: Path) -> tuple[list[tuple[dict[str, Any], str]], str]:
    """[(sample, JSON path of the sample)], format version."""
    source = str(path)
    if path.suffix.lower() == ".zip":
        data = read_bytes(path)
        kind = binary_kind(data[:200])
        if kind and not kind.startswith("a zip file"):
            # Importer QA: a gzip file named .zip got "File is not a zip file".
            fail(source, "$", "zip", f"not a zip archive: {kind}")
        samples = []
        try:
            with zipfile.ZipFile(path) as zf:
                names = sorted(
                    n for n in zf.namelist() if n.endswith(".json") and "__MACOSX" not in n
                )
                # QA s44: every member was inflated whole, with no limit at all.
                reader = ZipReader(zf, source)
                reader.check([(zf.getinfo(name), name) for name in names])
                for name in names:
                    data = reader.read(zf.getinfo(name), name)
                    text = decode_text(data, f"{source}:{name}")
                    doc = parse_json(text, f"{source}:{name}")
                    if not _is_flat(doc):
                        fail(
                            source,
                            name,
                            "locomo-shape",
                            "expected one flat LoCoMo "
                            "conversation per file (session_<N> keys at the top level)",
                        )
                    samples.append((_flat_to_nested(doc, Path(name).stem), name))
        except (zipfile.BadZipFile, UnicodeDecodeError) as exc:
            fail(source, "$", "zip", f"not a readable zip of LoCoMo files: {exc}")
        if not samples:
            fail(source, "$", "locomo-shape", "the zip holds no .json conversation files")
        return samples, "locomo-flat"
    doc = parse_json(decode_text(read_bytes(path), source, zip_hint=ZIP_HINT), source)
    if _is_flat(doc):
        return [(_flat_to_nested(doc, path.stem), "$")], "locomo-flat"
    if isinstance(doc, dict) and "conversation" in doc:
        return [(doc, "$")], "locomo10-array"
    if not isinstance(doc, list):
        fail(
            source,
            "$",
            "locomo-shape",
            "a LoCoMo file must be an array of samples (or one "
            "sample) with 'conversation' and 'qa'",
            json_type(doc),
        )
    out = []
    for i, sample in enumerate(doc):
        if not isinstance(sample, dict):
            fail(source, f"$[{i}]", "type", "each sample must be an object", json_type(sample))
        if "conversation" not in sample:
            fail(
                source,
                f"$[{i}].conversation",
                "required",
                "a LoCoMo sample needs 'conversation' (its sessions)"
                + (
                    "; this looks like a LongMemEval instance: use `memaudit import longmemeval`"
                    if "question_id" in sample and "haystack_sessions" in sample
                    else ""
                ),
            )
        out.append((sample, f"$[{i}]"))
    if not out:
        fail(source, "$", "non-empty", "the file holds no conversations")
    return out, "locomo10-array"


def _pick(samples: list[tuple[dict[str, Any], str]], instance: str | None, source: str):
    ids = [str(s.get("sample_id", f"#{i}")) for i, (s, _) in enumerate(samples)]
    # CLI QA: a null sample_id became the package id "locomo-None", and of two conversations
    # with one id the first was silently taken.
    for sample, spath in samples:
        value = sample.get("sample_id", "")
        if not isinstance(value, str | int) or isinstance(value, bool):
            fail(
                source,
                f"{spath}.sample_id",
                "type",
                f"sample_id must be a string, got {json_type(sample['sample_id'])}",
            )
    first: dict[str, str] = {}
    for (_, spath), sid in zip(samples, ids, strict=True):
        if sid in first:
            fail(
                source,
                f"{spath}.sample_id",
                "unique-id",
                f"sample_id {sid!r} is also the id of {first[sid]}: ids must be unique",
                sid,
            )
        first[sid] = spath
    if instance is None:
        if len(samples) == 1:
            return samples[0], ids
        fail(
            source,
            "$",
            "instance-required",
            f"the file holds {len(samples)} conversations: choose one with "
            f"{INSTANCE_KEYWORD}SAMPLE_ID (available: {', '.join(map(id_text, ids))})",
        )
    for (sample, spath), sid in zip(samples, ids, strict=True):
        if sid == instance:
            return (sample, spath), ids
    fail(
        source,
        "$",
        "known-instance",
        f"no conversation with sample_id {cut_repr(instance)} "
        f"(available: {', '.join(map(id_text, ids))})",
        instance,
    )


def import_locomo(
    source: str | Path, *, instance: str | None = None, cost_rule: str = "words"
) -> Package:
    """Build a package from one LoCoMo conversation.

    Parameters
    ----------
    source : str or Path
        ``locomo10.json``-style array, one sample, a flat-layout file, or a zip of those.
    instance : str, optional
        The ``sample_id``; required when the file holds more than one conversation.
    cost_rule : str
        Candidate and observation cost rule (:data:`memaudit_core.costs.COST_RULES`).

    Returns
    -------
    Package
        With the store ``observations`` when the sample has observation facts.

    Raises
    ------
    PackageError
        Unreadable file, wrong shape, unknown or missing instance, turns without text...
    """
    path = Path(source)
    src = str(source)
    rule = get_cost_rule(cost_rule)
    samples, version = _read_samples(path)
    (sample, spath), ids = _pick(samples, instance, src)
    col = Collector(src)
    warnings: list[str] = []
    sid = str(sample.get("sample_id", "conversation"))
    col.check(f"{spath}.sample_id", sample.get("sample_id"))  # it names the package
    # The flat layout has these keys at the sample's top level: paths must say so.
    flat = version == "locomo-flat"
    conv_base = spath if flat else f"{spath}.conversation"
    obs_base = spath if flat else f"{spath}.observation"
    summary_base = spath if flat else f"{spath}.session_summary"

    conv = sample.get("conversation")
    if not isinstance(conv, dict):
        # QA s41: listed with the QA / observation problems, not alone; without sessions no
        # turn exists, so evidence naming one is only a warning (never read, as this raises).
        col.add(
            f"{spath}.conversation", "type", "'conversation' must be an object", json_type(conv)
        )
        conv = {}
    speakers = []
    for key in ("speaker_a", "speaker_b"):
        value = conv.get(key)
        if value is not None and not isinstance(value, str):
            col.add(f"{conv_base}.{key}", "type", "a speaker name must be a string", value)
        else:
            col.check(f"{conv_base}.{key}", value)
        speakers.append(value)
    for base, mapping in (
        (conv_base, conv),
        (obs_base, sample.get("observation")),
        (summary_base, sample.get("session_summary")),
    ):
        for key in mapping if isinstance(mapping, dict) else ():
            if _PADDED.match(key):
                col.add(
                    f"{base}.{key}",
                    "session-key",
                    "session numbers are written without leading zeros (session_1, as the "
                    "dia ids D1:3 are); rename the key",
                    key,
                )
    session_nums = sorted(
        int(m.group(1)) for k in conv if (m := _SESSION.match(k)) and not _PADDED.match(k)
    )
    date_nums = sorted(
        int(m.group(1)) for k in conv if (m := _DATE.match(k)) and not _PADDED.match(k)
    )
    extra_dates = [n for n in date_nums if n not in session_nums]
    if extra_dates:
        warnings.append(
            note(
                f"{conv_base}.session_{extra_dates[0]}_date_time",
                f"{len(extra_dates)} session date key(s) have no turn list (sessions "
                f"{extra_dates[0]}..{extra_dates[-1]}); only sessions with turns are experiences",
                "session-no-turns",
            )
        )
    # A null date is no date (QA: it was left out of meta without a word).
    undated = [n for n in session_nums if conv.get(f"session_{n}_date_time") is None]
    if undated:
        warnings.append(
            note(
                f"{conv_base}.session_{undated[0]}",
                f"session(s) {', '.join(map(str, undated))} have no date_time",
                "session-no-date",
            )
        )

    turns: dict[str, dict[str, Any]] = {}
    empty_turns: list[str] = []
    unnamed: list[str] = []
    experiences = []
    session_turns: dict[int, list[str]] = {}
    for n in session_nums:
        key = f"session_{n}"
        tpath = f"{conv_base}.{key}"
        items = conv[key]
        if not isinstance(items, list):
            col.add(tpath, "type", "a session must be a list of turns", json_type(items))
            continue
        lines = []
        session_turns[n] = []
        for k, turn in enumerate(items):
            path_k = f"{tpath}[{k}]"
            if not isinstance(turn, dict):
                col.add(path_k, "type", "each turn must be an object", json_type(turn))
                continue
            # Every field of the turn is checked before it is skipped, so that one run lists
            # all of its problems.
            before = len(col.problems)
            text = turn.get("text")
            text_path = f"{path_k}.text"
            if (text is None or text == "") and turn.get("blip_caption"):
                caption = turn["blip_caption"]
                text_path = f"{path_k}.blip_caption"
                if isinstance(caption, str):
                    text = f"[shares an image: {caption}]"
                else:  # QA: it was written into the text with str()
                    col.add(
                        text_path,
                        "type",
                        "blip_caption (which stands for the turn's missing text) must be a string",
                        caption,
                    )
            elif not isinstance(text, str):
                col.add(
                    text_path,
                    "required" if text is None else "type",
                    "a turn needs its 'text' string",
                    text,
                )
            if isinstance(text, str):
                col.check(text_path, text)
            dia_raw = turn.get("dia_id")
            if dia_raw is not None and not isinstance(dia_raw, str):
                # QA: a number was read through str(); no dia_id is one.
                col.add(
                    f"{path_k}.dia_id", "type", "a dia_id must be a string like 'D1:3'", dia_raw
                )
                dias: list[str] = []
            else:
                dias, _bad = normalise_evidence(dia_raw) if dia_raw is not None else ([], [])
                if len(dias) != 1:
                    col.add(
                        f"{path_k}.dia_id", "dia-id", "a turn needs a dia_id like 'D1:3'", dia_raw
                    )
            speaker = turn.get("speaker")
            if speaker is not None and not isinstance(speaker, str):
                # QA: [1, 2] became the line "[1, 2]: I adopted ...", silently.
                col.add(
                    f"{path_k}.speaker",
                    "type",
                    "a turn's speaker must be a string (a name)",
                    speaker,
                )
            else:
                col.check(f"{path_k}.speaker", speaker)
            if len(col.problems) > before or not isinstance(text, str):
                continue
            dia = dias[0]
            if speaker is None or not speaker.strip():
                unnamed.append(f"{path_k}.speaker")
                speaker = "?"
            if not text.strip():
                # Its speaker label alone would cost a word (CLI QA): left out of the session's
                # text, said below, and refused if a question cites it.
                empty_turns.append(f"{path_k}.text")
            else:
                # The turn stays in its session's text (and raw span's cost) either way (QA).
                lines.append(f"{speaker}: {text}")
            if _dia_key(dia)[0] != n:
                # QA s44: D1:9 inside session_2 was kept silently; the turn's list, not its id,
                # places it (its unit belongs to session_2), so the id's session is only said.
                warnings.append(
                    note(
                        f"{path_k}.dia_id",
                        f"{dia_raw!r} names session {_dia_key(dia)[0]}, but the turn is in "
                        f"{key}; it is read as a turn of {key}",
                        "dia-id-session",
                    )
                )
            if dia in turns:
                warnings.append(
                    note(
                        path_k,
                        f"dia_id {dia} repeats an earlier turn; the turn stays in the "
                        "session's text, and the first turn with that id is the evidence unit",
                        "dia-id-repeat",
                    )
                )
                continue
            turns[dia] = {"session": n, "speaker": speaker, "text": text, "path": path_k}
            session_turns[n].append(dia)
        date_raw = conv.get(f"session_{n}_date_time")
        date_path = f"{conv_base}.session_{n}_date_time"
        emeta: dict[str, Any] = {"turns": len(lines)}
        if date_raw is not None and not isinstance(date_raw, str):
            col.add(
                date_path,
                "type",
                "a session date must be a string like '1:56 pm on 8 May, 2023'",
                date_raw,
            )
        elif date_raw is not None and col.check(date_path, date_raw):
            emeta["date_time"] = date_raw
            iso = _parse_date(date_raw)
            if iso:
                emeta["date"] = iso
            else:
                warnings.append(
                    note(
                        date_path,
                        f"session_{n}_date_time {date_raw!r} does not parse",
                        "session-no-date",
                    )
                )
        experiences.append(
            {"id": key, "time": n, "session": key, "text": "\n".join(lines), "meta": emeta}
        )
    # QA s41 (DESIGN section 3, every problem at once): no raise here, so the QA, summary and
    # observation problems are listed in the same run. A turn with a problem is left out of
    # `turns`, so the later stages never read it: evidence naming it is only a warning, and
    # the single raise before the package is built keeps any of this from being used.
    # QA s39 defect 10: session_2 dated a week before session_1 got no word. LoCoMo's order is
    # its numbering (experience time = N), kept; LongMemEval's importer sorts by date instead.
    against = []
    against_at: list[str] = []
    prev: dict[str, Any] | None = None
    for exp in experiences:
        if "date" not in exp["meta"]:
            continue
        if prev is not None and exp["meta"]["date"] < prev["meta"]["date"]:
            against.append(
                f"{exp['id']} ({exp['meta']['date_time']!r}) is dated before "
                f"{prev['id']} ({prev['meta']['date_time']!r})"
            )
            against_at.append(f"{conv_base}.{exp['id']}_date_time")
        prev = exp
    if against:
        warnings.append(
            note(
                against_at[0],
                f"{len(against)} session date(s) go against the session numbering: "
                + first_few(against, 5, "; ")
                + "; sessions are kept in their numbering order (experience time = session "
                "number), not sorted by date",
                "session-date-order",
            )
        )
    if unnamed:
        warnings.append(
            note(
                common_path(unnamed),
                f"{len(unnamed)} turn(s) have no speaker (first: {unnamed[0]}); their lines and "
                "units read '?: text'",
                "turn-no-speaker",
            )
        )

    # queries and evidence
    qa = sample.get("qa")
    if "qa" not in sample:  # QA: the shape message names 'qa', and without it nothing scores
        col.add(
            f"{spath}.qa",
            "required",
            "a LoCoMo sample needs 'qa' (the questions and their evidence): without it the "
            "package has no evidence units to score",
        )
        qa = []  # QA s41: listed with the other stages' problems, not raised alone
    elif not isinstance(qa, list):
        col.add(f"{spath}.qa", "type", "'qa' must be an array", json_type(qa))
        qa = []
    queries = []
    unit_cats: dict[str, set[int]] = {}
    for k, item in enumerate(qa):
        qpath = f"{spath}.qa[{k}]"
        if not isinstance(item, dict):
            col.add(qpath, "type", "each QA item must be an object", json_type(item))
            continue
        qid = f"q{k + 1}"
        before = len(col.problems)
        evidence = item.get("evidence", [])
        single = isinstance(evidence, str)  # one string: its path has no [0]
        if single:
            evidence = [evidence]
        if not isinstance(evidence, list):
            col.add(
                f"{qpath}.evidence",
                "type",
                "evidence must be a list of dia ids",
                json_type(evidence),
            )
            # QA s41: the item's category, question and answer are still checked below (the
            # problem count keeps the item out of the queries).
            evidence = []
        requires: list[str] = []
        for e_i, entry in enumerate(evidence):
            epath = f"{qpath}.evidence" if single else f"{qpath}.evidence[{e_i}]"
            if not isinstance(entry, str):
                # QA: a number or null was read through str() ("unreadable ... 'None'").
                col.add(
                    epath, "type", "an evidence entry must be a dia id string like 'D1:3'", entry
                )
                continue
            if not col.check(epath, entry):  # kept raw in the query's meta
                continue
            ok, bad = normalise_evidence(entry)
            for piece in bad:
                warnings.append(
                    note(
                        epath,
                        f"{qid}: unreadable evidence reference {piece!r} in {entry!r}",
                        "evidence-unreadable",
                    )
                )
            for dia in ok:
                if dia not in turns:
                    warnings.append(
                        note(
                            epath,
                            f"{qid}: evidence {dia} (from {entry!r}) names no turn of {sid}",
                            "evidence-unknown",
                        )
                    )
                elif dia not in requires:
                    requires.append(dia)
        if not evidence:
            warnings.append(note(qpath, f"{qid}: no evidence listed", "evidence-none"))
        category = item.get("category")
        cat = category if isinstance(category, int) and not isinstance(category, bool) else None
        if "category" in item and cat not in CATEGORY_LABELS:
            # A string "2" or a 7 would otherwise pick a unit kind silently (7 read as adversarial).
            col.add(
                f"{qpath}.category",
                "locomo-category",
                "must be one of the LoCoMo QA categories 1-5 (1 multi-hop, 2 temporal, "
                "3 open-domain, 4 single-hop, 5 adversarial)",
                category,
            )
            # QA s41: no `continue`, so the item's question and answer problems are listed too.
        question = item.get("question")
        if question is not None and not isinstance(question, str):
            # QA: an object question left the query without text, silently.
            col.add(f"{qpath}.question", "type", "the question must be a string", question)
        else:
            col.check(f"{qpath}.question", question)
        answer = item.get("answer")
        check_answer(col, f"{qpath}.answer", answer)
        if "adversarial_answer" in item:  # kept raw in meta
            col.check(f"{qpath}.adversarial_answer", item["adversarial_answer"])
        if len(col.problems) > before:
            continue
        if cat is None:
            warnings.append(
                note(
                    qpath,
                    f"{qid}: no category; its evidence counts as fact",
                    "question-no-category",
                )
            )
        for dia in requires:
            unit_cats.setdefault(dia, set()).add(cat if cat is not None else 0)
        qmeta: dict[str, Any] = {
            "category": category,
            "category_label": CATEGORY_LABELS.get(cat, "unknown"),
            "evidence_raw": evidence,
        }
        if "adversarial_answer" in item:
            qmeta["adversarial_answer"] = item["adversarial_answer"]
        if isinstance(answer, list | dict):
            qmeta["answer_type"] = json_type(answer)
            answer = (
                "; ".join(
                    a if isinstance(a, str) else json.dumps(a, ensure_ascii=False) for a in answer
                )
                if isinstance(answer, list)
                else json.dumps(answer, ensure_ascii=False)
            )
            # QA: ["cat", "dog"] became the Python text "['cat', 'dog']", silently.
            warnings.append(
                note(
                    f"{qpath}.answer",
                    f"{qid}: the answer is a JSON {qmeta['answer_type']}, not text; "
                    f"kept as {answer!r}"
                    + (" (items joined with '; ')" if qmeta["answer_type"] == "array" else ""),
                    "answer-not-text",
                )
            )
        elif answer is not None and not isinstance(answer, str):
            # A finite number (the rest is refused above): LoCoMo has int answers.
            qmeta["answer_type"] = json_type(answer)
            answer = str(answer)
        elif answer is None and "adversarial_answer" not in item:
            warnings.append(
                note(
                    # A missing answer is noted at its question (a path must name what is there).
                    f"{qpath}.answer" if "answer" in item else qpath,
                    f"{qid}: no answer ("
                    + ("null" if "answer" in item else "missing")
                    + "); the query has no answer text",
                    "answer-missing",
                )
            )
        if question is None:
            warnings.append(
                note(
                    f"{qpath}.question" if "question" in item else qpath,
                    f"{qid}: no question ("
                    + ("null" if "question" in item else "missing")
                    + "); the query has no text",
                    "question-missing",
                )
            )
        queries.append(
            {
                "id": qid,
                **({"text": question} if isinstance(question, str) else {}),
                **({"answer": answer} if isinstance(answer, str) else {}),
                "requires": requires,
                "weight": 1,
                "meta": qmeta,
            }
        )
    # QA s41: no raise here either; the checks below read only the items that passed.

    cited_empty = [d for d in unit_cats if not turns[d]["text"].strip()]
    for dia in sorted(cited_empty, key=_dia_key):
        # As the store importers refuse an empty memory text: a unit without text, and the
        # raw span's cost for it would be the speaker label's.
        col.add(
            f"{turns[dia]['path']}.text",
            "non-empty-text",
            f"turn {dia} is cited as evidence but its text is empty or only whitespace: give "
            "it its text, or remove it from the questions' evidence",
            turns[dia]["text"],
        )
    if empty_turns:
        warnings.append(
            note(
                common_path(empty_turns),
                f"{len(empty_turns)} turn(s) have empty text (first: {empty_turns[0]}); no "
                "question cites them, and they are left out of their session's text (so their "
                "speaker label costs nothing)",
                "turn-empty",
            )
        )

    units = []
    for dia, cats in sorted(unit_cats.items(), key=lambda kv: _dia_key(kv[0])):
        if 2 in cats:
            kind = "temporal_order"
        elif cats & {1, 3, 4, 0}:
            kind = "fact"
        else:
            kind = "abstention"
        t = turns[dia]
        units.append(
            {
                "id": dia,
                "kind": kind,
                "text": f"{t['speaker']}: {t['text']}",
                "meta": {
                    "session": f"session_{t['session']}",
                    "speaker": t["speaker"],
                    "categories": sorted(cats),
                },
            }
        )
    unit_ids = {u["id"] for u in units}

    candidates = []
    summaries = sample.get("session_summary") or {}
    if not isinstance(summaries, dict):
        warnings.append(
            note(
                f"{spath}.session_summary",
                "session_summary is not an object; summaries ignored",
                "summary-ignored",
            )
        )
        summaries = {}
    empty_summaries: list[str] = []
    for exp in experiences:
        n = exp["time"]
        ev_units = [d for d in session_turns[n] if d in unit_ids]
        if exp["text"].strip():
            candidates.append(
                {
                    "id": f"{exp['id']}:raw",
                    "experience": exp["id"],
                    "type": "raw_span",
                    "text": exp["text"],
                    "cost": cost_of(exp["text"], rule.name),
                    "coverage": {d: 1.0 for d in ev_units},
                }
            )
        else:
            warnings.append(
                note(
                    f"{conv_base}.{exp['id']}",
                    f"{exp['id']} has no turns with text: no raw_span candidate",
                    "session-empty",
                )
            )
        summary = summaries.get(f"session_{n}_summary")
        sum_path = f"{summary_base}.session_{n}_summary"
        if summary is None:
            pass
        elif not isinstance(summary, str):  # QA: it was left out without a word
            col.add(sum_path, "type", "a session summary must be a string", json_type(summary))
        elif not summary.strip():
            empty_summaries.append(sum_path)
        elif col.check(sum_path, summary):
            candidates.append(
                {
                    "id": f"{exp['id']}:summary",
                    "experience": exp["id"],
                    "type": "summary",
                    "text": summary,
                    "cost": cost_of(summary, rule.name),
                    "coverage": {d: SUMMARY_COVERAGE for d in ev_units},
                }
            )

    # Summaries are read per session with turns above; one of a session without a turn list
    # was ignored without a word (QA s48, as observations of such a session were).
    sessions_with_turns = {exp["time"] for exp in experiences}
    numbered = []
    for key in summaries:
        m = re.match(r"^session_(\d+)_summary$", key)
        if m and int(m.group(1)) not in sessions_with_turns:
            numbered.append((int(m.group(1)), f"{summary_base}.{key}"))
    orphan_summaries = [path for _, path in sorted(numbered)]
    if orphan_summaries:
        shown = _first_five(orphan_summaries)
        warnings.append(
            note(
                common_path(orphan_summaries),
                f"{len(orphan_summaries)} session summary(ies) name a session with no turn "
                f"list: {shown}; ignored (a summary is a candidate of its session's experience)",
                "session-no-turns",
            )
        )
    if empty_summaries:
        warnings.append(
            note(
                common_path(empty_summaries),
                f"{len(empty_summaries)} session summary(ies) are empty (first: "
                f"{empty_summaries[0]}): no summary candidate for those sessions",
                "summary-empty",
            )
        )

    stores = []
    observations = sample.get("observation") or {}
    dates = {e["time"]: e["meta"].get("date") for e in experiences}
    memories = _observations(
        observations, obs_base, turns, set(dates), unit_ids, rule.name, warnings, col
    )
    for mem in memories:  # date each fact by its session (naive, as LoCoMo dates are)
        n = int(mem["meta"]["session"].split("_")[1])
        if dates.get(n):
            mem["created_at"] = dates[n]
    col.raise_if_any()
    warnings.extend(unspaced_note(candidates, rule.name))
    if memories:
        stores.append(
            {
                "id": "observations",
                "label": "LoCoMo observations",
                "system": "locomo-observation",
                "memories": memories,
                "meta": {
                    "format": "locomo",
                    "format_version": version,
                    "cost_rule": rule.name,
                    "cost_rule_detail": rule.detail,
                    "coverage": "from evidence links (1.0 on each linked evidence unit)",
                },
            }
        )

    doc = {
        "memaudit": 1,
        "id": f"locomo-{sid}",
        "title": f"LoCoMo conversation {sid}",
        "description": f"{len(experiences)} sessions, {len(units)} evidence turns, "
        f"{len(queries)} questions (imported from {path.name})",
        "cost_unit": rule.name,
        "experiences": experiences,
        "units": units,
        "queries": queries,
        "candidates": candidates,
        "stores": stores,
        "meta": {
            "source_format": "locomo",
            "format_version": version,
            "source_file": path.name,
            "instance": sid,
            "instances": ids,
            # How links name the turns no question cites (experiences[].meta.turns each).
            "turn_ids": LOCOMO_TURNS,
            "cost_rule": rule.name,
            "category_labels": {str(k): v for k, v in CATEGORY_LABELS.items()},
            "summary_coverage": SUMMARY_COVERAGE,
            "speakers": speakers,
            "warnings": warnings,
        },
    }
    return parse_package(doc, src)


def _dia_key(dia: str) -> tuple[int, int]:
    m = DIA_ID.match(dia)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def _first_five(paths: list[str]) -> str:
    """Up to five of ``paths`` for a warning, and how many more there are."""
    return first_few(paths, 5)


def _observations(
    observations: Any,
    obs_base: str,
    turns: dict[str, Any],
    sessions: set[int],
    unit_ids: set[str],
    rule: str,
    warnings: list[str],
    col: Collector,
) -> list[dict[str, Any]]:
    """The observation facts as memories; ``sessions`` are the numbers of the sessions that
    are experiences (those with a turn list)."""
    if not isinstance(observations, dict):
        warnings.append(
            note(
                obs_base,
                "observation is not an object; no observations store",
                "observation-ignored",
            )
        )
        return []
    out = []
    keyed = []
    no_unit: list[str] = []
    first_with_text: dict[str, str] = {}
    repeats: list[str] = []
    no_unit_at: list[str] = []  # their JSON paths: the notes' paths are the first's
    repeats_at: list[str] = []
    for key, per_speaker in observations.items():
        m = re.match(r"^session_(\d+)_observation$", key)
        if m and _PADDED.match(key):
            continue  # reported with the other padded session keys
        if not m:
            warnings.append(
                note(
                    f"{obs_base}.{key}",
                    f"observation key {key!r} is not session_<N>_observation; skipped",
                    "observation-ignored",
                )
            )
            continue
        keyed.append((int(m.group(1)), key, per_speaker))
    no_session = [f"{obs_base}.{key}" for n, key, _ in sorted(keyed) if n not in sessions]
    if no_session:
        # QA s48: such facts were kept without a word, undated, their meta.session naming no
        # experience. Kept (their evidence links are read as any other's), as date keys
        # without a turn list are, and said the same way.
        shown = _first_five(no_session)
        warnings.append(
            note(
                common_path(no_session),
                f"{len(no_session)} observation key(s) name a session with no turn list: "
                f"{shown}; their facts are kept in the observations store, undated, and their "
                "meta.session names no experience",
                "session-no-turns",
            )
        )
    for n, key, per_speaker in sorted(keyed):
        opath = f"{obs_base}.{key}"
        if not isinstance(per_speaker, dict):
            col.add(
                opath,
                "type",
                "must map speaker -> list of [fact, evidence]",
                json_type(per_speaker),
            )
            continue
        k = 0
        for speaker, facts in per_speaker.items():
            if not col.check(opath, {speaker: None}):  # the key names the memory's speaker
                continue
            # The speaker is a name, which may hold a space ("Ann Lee"): a bracketed step
            # (s56: "$....Ann Lee[0]" was no path warning_parts could read).
            spath = _child_path(opath, speaker)
            if not isinstance(facts, list):
                col.add(
                    spath,
                    "type",
                    "must be a list of [fact, evidence]",
                    json_type(facts),
                )
                continue
            for j, fact in enumerate(facts):
                fpath = f"{spath}[{j}]"
                # QA: ["text"] became a memory with no coverage, and a third element was
                # dropped, both without a word.
                if not (isinstance(fact, list) and len(fact) == 2):
                    col.add(
                        fpath,
                        "observation-shape",
                        "an observation is [fact_text, dia_id or [dia_ids]] (two elements)",
                        fact,
                    )
                    continue
                text, links = fact
                if isinstance(links, str):
                    entries = [(f"{fpath}[1]", links)]
                elif isinstance(links, list):
                    entries = [(f"{fpath}[1][{i}]", e) for i, e in enumerate(links)]
                else:
                    entries = [(f"{fpath}[1]", links)]
                before = len(col.problems)
                for lpath, entry in entries:
                    if not isinstance(entry, str):  # QA: read through str(), then "unreadable"
                        col.add(
                            lpath,
                            "type",
                            "an observation's evidence is a dia id string like 'D1:3' or a "
                            "list of them",
                            entry,
                        )
                if not isinstance(text, str):
                    col.add(f"{fpath}[0]", "type", "the observation text must be a string", text)
                else:
                    col.check(f"{fpath}[0]", text)
                if len(col.problems) > before:
                    continue
                dias: list[str] = []
                for _lpath, entry in entries:
                    ok, bad = normalise_evidence(entry)
                    for piece in bad:
                        warnings.append(
                            note(
                                fpath,
                                f"unreadable evidence link {piece!r}",
                                "evidence-unreadable",
                            )
                        )
                    for dia in ok:
                        if dia not in turns:
                            warnings.append(
                                note(
                                    fpath, f"evidence link {dia} names no turn", "evidence-unknown"
                                )
                            )
                        elif dia not in dias:
                            dias.append(dia)
                try:
                    cost = cost_of(text, rule)
                except EmptyTextError:
                    col.add(f"{fpath}[0]", "non-empty-text", "empty observation text", text)
                    continue
                if dias and not any(d in unit_ids for d in dias):
                    no_unit.append(f"obs-{n}-{k}")
                    no_unit_at.append(fpath)
                same = " ".join(text.split())
                if same in first_with_text:
                    repeats.append(f"{first_with_text[same]!r} = {f'obs-{n}-{k}'!r} (same text)")
                    repeats_at.append(fpath)
                else:
                    first_with_text[same] = f"obs-{n}-{k}"
                out.append(
                    {
                        "id": f"obs-{n}-{k}",
                        "text": text,
                        "cost": cost,
                        "coverage": {d: 1.0 for d in dias if d in unit_ids},
                        "meta": {"session": f"session_{n}", "speaker": speaker, "evidence": dias},
                    }
                )
                k += 1
    if repeats:
        warnings.append(
            note(repeats_at[0], duplicates_warning(repeats, "observation(s)"), "duplicate-memory")
        )
    if no_unit:
        # Importer QA: their coverage was {} without a word, under a store whose meta says
        # coverage comes from the evidence links.
        shown = _first_five(no_unit)
        warnings.append(
            note(
                no_unit_at[0],
                f"{len(no_unit)} of {len(out)} observation(s) link only to turns that no "
                f"question cites, which are not evidence units, so they cover nothing: {shown}",
                "observation-no-unit",
            )
        )
    return out
