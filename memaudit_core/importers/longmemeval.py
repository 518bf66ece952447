"""LongMemEval-style instances -> one package per question, read by streaming.

Input: the JSON array of instances (``longmemeval_oracle.json``, ``_s_cleaned.json``,
``_m_cleaned.json``) or one instance object. Each instance has ``question_id``,
``question_type``, ``question``, ``answer``, ``question_date``, ``haystack_session_ids``,
``haystack_dates``, ``haystack_sessions`` (a list of sessions, each a list of turns
``{role, content, has_answer?}``) and ``answer_session_ids``.

**Streaming**: the top-level array is decoded one instance at a time with
:meth:`json.JSONDecoder.raw_decode` over a growing text buffer (:func:`iter_instances`), and
reading stops at the requested instance, so a 278 MB ``_s`` file is never held whole and the
instances after the chosen one are not decoded (at most one more chunk of text is read); a
byte scan of the whole file for the chosen ``question_id`` (about 1 GB/s) refuses an id that
two instances share (``unique-id``).
``instance`` (a ``question_id``) is required when the file holds more than one instance; the
error then lists the ids.

Mapping:

- experiences: one per haystack session, id = session id, sorted by ``haystack_dates``
  (``"2023/05/30 (Tue) 23:40"``; the oracle file is not sorted), ``time`` = rank. A repeated
  session id stays with its first copy in file order (the session ``answer_session_ids``
  means); a later copy becomes ``<id>#2`` (``#3``...), with a warning naming its path. Text =
  ``"role: content"`` lines; ``meta.turns`` counts all the session's turns, and
  ``meta["turn_ids"]`` of the package records that ``<session_id>_<k>`` (k from 1, as the
  unit ids) names turn k, so that a store's link to a turn no question cites is exact and
  covers nothing (:func:`~memaudit_core.importers.coverage.turn_link`), not a typo. A turn
  with empty content is left out of that text (its role label would cost a word), with a
  warning; an empty evidence turn is refused (``non-empty-text``), as the store importers
  refuse empty memory texts.
- units: turns with ``has_answer: true`` (a missing flag is false, a non-boolean one refused;
  a flagged turn in a session that a non-empty ``answer_session_ids`` does not list is refused,
  rule ``answer-session``: LongMemEval strips the flag from filler sessions), id
  ``<session_id>_<turn_index + 1>`` (the index counts all turns of the session). Kinds:
  ``abstention`` for ``_abs`` questions; for ``knowledge-update``, the has_answer turns of the
  latest session holding any are ``current_truth`` and those of earlier sessions ``stale``
  (explicit weight :data:`STALE_WEIGHT`, not required by the query: the question asks for the
  latest value); ``temporal_order`` for ``temporal-reasoning``; ``preference`` for
  ``single-session-preference``; ``fact`` otherwise. When no turn is flagged but the instance
  names ``answer_session_ids``, each such session becomes one session-level unit
  ``<session_id>_session`` (kind as above) so the question is not left without evidence.
- query: one, id = ``question_id``, requiring every non-stale unit (answer coerced to text).
- candidates: per session a ``raw_span`` covering its units at 1.0; per has_answer turn an
  ``atomic_fact`` with the turn text covering its unit at 1.0. Costs follow ``cost_rule``.

Anything odd (answer sessions that are not in the haystack, abstention instances without
evidence, unparsable dates, turns without a role or with one other than ``user`` /
``assistant`` (rule ``known-role``; kept as written), a missing question, an answer that is a
JSON array or object, kept as its JSON text) is listed in ``meta["warnings"]``.

Refused with a located problem, never turned into text with ``str()`` (importer QA): a role,
question or question_date that is not a string (``type``); an answer that is ``true`` /
``false`` (``type``) or NaN / infinity (``finite``); a number answer becomes its text. Text and
ids copied into the package (question_id, question_type, question, answer, question_date,
session ids and dates, roles, contents, answer_session_ids) are checked at their source path
for what the package validator refuses there (an unpaired surrogate such as ``"\\ud83d"``:
``unicode``; NaN / infinity: ``finite``). Importer QA: a surrogate in a turn and in the
question_id gave 9 problems located in the generated package (``$.candidates[1].text``,
``$.title``, ``$.id``...), none at ``$[0].haystack_sessions[0][0].content``. A gzip, zip or
UTF-16 file is named as such (``utf-8``), not as "not UTF-8 text (invalid start byte)".
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from ..costs import cost_of, get_cost_rule
from ..errors import MAX_PROBLEMS, PackageError, Problem, id_text
from ..package import JSON_LINES_HINT, Package, json_type, parse_package
from ._common import (
    INSTANCE_KEYWORD,
    Collector,
    binary_kind,
    check_answer,
    common_path,
    duplicate_key_problems,
    fail,
    first_few,
    has_duplicate_keys,
    note,
    object_pairs,
    read_bytes,
    unspaced_note,
)
from .coverage import LONGMEMEVAL_TURNS

STALE_WEIGHT = 0.25
#: The turn roles LongMemEval writes; another role is kept as written, with a warning.
ROLES = ("user", "assistant")
CHUNK = 1 << 20  # characters read at a time
_WEEKDAY = re.compile(r"\s*\([A-Za-z]{3}\)\s*")


#: The six LongMemEval question types (abstention is the ``_abs`` id suffix, not a type).
QUESTION_TYPES = (
    "single-session-user",
    "single-session-assistant",
    "single-session-preference",
    "temporal-reasoning",
    "knowledge-update",
    "multi-session",
)


def parse_lme_date(text: Any) -> datetime | None:
    """Parse ``"2023/05/30 (Tue) 23:40"`` (the weekday is ignored, so no locale matters).

    Examples
    --------
    >>> parse_lme_date("2023/05/30 (Tue) 23:40").isoformat()
    '2023-05-30T23:40:00'
    """
    if not isinstance(text, str):
        return None
    cleaned = _WEEKDAY.sub(" ", text).strip()
    for fmt in ("%Y/%m/%d %H:%M", "%Y/%m/%d"):
        try:
            return datetime.strptime(cleaned, fmt)
        except ValueError:
            continue
    return None


def iter_instances(
    path: str | Path, chunk: int | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(index, instance)`` from a JSON array file without reading it whole.

    A file holding one JSON object yields it as index 0. Decoding problems raise a located
    :class:`PackageError` (``$[k]`` and the line), as soon as they are met.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "x.json"
    >>> _ = f.write_text('[{"question_id": "a"}, {"question_id": "b"}]')
    >>> [inst["question_id"] for _, inst in iter_instances(f, chunk=4)]
    ['a', 'b']
    """
    source = str(path)
    p = Path(path)
    read_bytes_head(p)
    decoder = json.JSONDecoder(object_pairs_hook=object_pairs)
    with p.open("r", encoding="utf-8-sig", errors="strict", newline="") as fh:
        reader = _Buffer(fh, chunk or CHUNK, source)
        first = reader.next_char()
        if first == "{":
            yield 0, _no_duplicate_keys(reader.decode_value(decoder, "$"), "$", source)
            if reader.next_char() != "":
                reader.error(
                    "$",
                    "json-syntax",
                    f"extra data after the instance object ({JSON_LINES_HINT})",
                )
            return
        if first != "[":
            reader.error(
                "$",
                "longmemeval-shape",
                "expected a JSON array of instances (or one instance object)",
                first or "empty file",
            )
        reader.pos += 1
        index = 0
        if reader.next_char() == "]":
            return
        while True:
            value = reader.decode_value(decoder, f"$[{index}]")
            if not isinstance(value, dict):
                reader.error(
                    f"$[{index}]", "type", "each instance must be an object", json_type(value)
                )
            yield index, _no_duplicate_keys(value, f"$[{index}]", source)
            index += 1
            sep = reader.next_char()
            if sep == ",":
                reader.pos += 1
                continue
            if sep == "]":
                return
            if sep == "":
                reader.error(
                    f"$[{index}]",
                    "truncated",
                    "file ends before the JSON array is complete (truncated?)",
                )
            reader.error(f"$[{index}]", "json-syntax", "expected ',' or ']' between instances", sep)


def _no_duplicate_keys(value: Any, path: str, source: str) -> Any:
    """The instance, or the package loader's ``duplicate-key`` problems (QA: the last of two
    equal keys silently won)."""
    if has_duplicate_keys(value):
        raise PackageError(source, duplicate_key_problems(value, path))
    return value


def _layout(path: str | Path) -> str:
    """``longmemeval-array`` or ``longmemeval-object`` from the first non-blank character."""
    with Path(path).open("r", encoding="utf-8-sig", errors="replace") as fh:
        while True:
            ch = fh.read(1)
            if not ch or not ch.isspace():
                return "longmemeval-object" if ch == "{" else "longmemeval-array"


def read_bytes_head(p: Path) -> None:
    """Existence / folder / pickle / compressed-file checks without reading the whole file."""
    if not p.exists() or p.is_dir():
        read_bytes(p)  # raises the located message
    with p.open("rb") as fh:
        head = fh.read(200)
    from ._common import looks_like_pickle

    if looks_like_pickle(p, head[:2]):
        read_bytes(p)
    kind = binary_kind(head)
    if kind:  # QA: a gzip file got "not UTF-8 text (invalid start byte)"
        fail(p, "$", "utf-8", f"file is not UTF-8 text: {kind}")


class _Buffer:
    """A text buffer over a file that grows on demand and forgets what was decoded."""

    def __init__(self, fh: Any, chunk: int, source: str) -> None:
        self.fh = fh
        self.chunk = chunk
        self.source = source
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.lines_before = 0  # newlines in text already discarded

    def _more(self, at_least: int) -> bool:
        """Read at least ``at_least`` more characters, forgetting the decoded prefix.

        At the end of the file nothing changes (so error positions stay valid).
        """
        if self.eof:
            return False
        try:
            data = self.fh.read(max(self.chunk, at_least))
        except UnicodeDecodeError as exc:
            self.error("$", "utf-8", f"file is not UTF-8 text ({exc.reason})")
        if not data:
            self.eof = True
            return False
        if self.pos:
            self.lines_before += self.buf.count("\n", 0, self.pos)
            self.buf = self.buf[self.pos :]
            self.pos = 0
        self.buf += data
        return True

    def next_char(self) -> str:
        """Skip whitespace; the next character ('' at the end of the file)."""
        while True:
            while self.pos < len(self.buf) and self.buf[self.pos] in " \t\r\n":
                self.pos += 1
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self._more(self.chunk):
                return ""

    def decode_value(self, decoder: json.JSONDecoder, path: str) -> Any:
        self.next_char()  # raw_decode does not skip leading whitespace
        while True:
            try:
                value, end = decoder.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as exc:
                # Incomplete so far: read more (doubling keeps this linear) and retry.
                if self._more(len(self.buf) - self.pos):
                    continue
                line = self.lines_before + self.buf.count("\n", 0, exc.pos) + 1
                truncated = exc.pos >= len(self.buf.rstrip()) or exc.msg.startswith("Unterminated")
                self.error(
                    f"{path} (line {line})",
                    "truncated" if truncated else "json-syntax",
                    "file ends before this instance is complete (truncated?)"
                    if truncated
                    else f"not valid JSON: {exc.msg}",
                )
            except RecursionError:
                self.error(path, "json-depth", "nested too deeply to read")
            if end >= len(self.buf) and not self.eof and isinstance(value, int | float):
                self._more(self.chunk)  # a number cut by the chunk boundary: re-decode
                continue
            self.pos = end
            return value

    def error(self, path: str, rule: str, message: str, value: object = None) -> None:
        raise PackageError(self.source, [Problem(path, rule, message, value)])


def _question_id_problem(path: str, inst: dict[str, Any]) -> Problem | None:
    """The located problem of an instance without a usable question_id (naming LoCoMo when
    it looks like it), or None."""
    qid = inst.get("question_id")
    if isinstance(qid, str) and qid.strip():
        return None
    hint = (
        "; this looks like a LoCoMo sample: use `memaudit import locomo`"
        if "conversation" in inst and "qa" in inst
        else ""
    )
    return Problem(
        f"{path}.question_id", "required", "an instance needs a string question_id" + hint, qid
    )


def _question_id(source: str, path: str, inst: dict[str, Any]) -> str:
    """The instance's question_id, or a located error."""
    problem = _question_id_problem(path, inst)
    if problem is not None:
        raise PackageError(source, [problem])
    return inst["question_id"]


_QID_VALUE = re.compile(rb'"question_id"\s*:\s*("(?:[^"\\]|\\.)*")')


def _mentions(path: str | Path, question_id: str) -> int:
    """How many ``"question_id": <question_id>`` pairs the file's text holds.

    A quote inside a JSON string is escaped, so the pattern only meets object keys; the scan
    runs over the raw bytes (about 1 GB/s), so the instances after the chosen one are still
    never decoded. Importer QA: of two instances with one question_id, the first was taken
    without a word.
    """
    import mmap

    with Path(path).open("rb") as fh:
        if Path(path).stat().st_size == 0:
            return 0
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
            count = 0
            for m in _QID_VALUE.finditer(data):
                try:
                    value = json.loads(m.group(1))
                except ValueError:  # not valid JSON text: iter_instances names the problem
                    continue
                count += value == question_id
            return count


def _refuse_repeated_id(path: str | Path, question_id: str, first_index: int) -> None:
    """Locate the second instance with ``question_id`` (decoding the rest) and refuse it."""
    for index, inst in iter_instances(path):
        if index > first_index and inst.get("question_id") == question_id:
            fail(
                str(path),
                f"$[{index}].question_id",
                "unique-id",
                f"question_id {question_id!r} is also the id of $[{first_index}]: ids must "
                "be unique",
                question_id,
            )
    # The pattern also met a nested key: the instance is the only one with this id.


def _experience_ids(sids: list[Any], base: str, warnings: list[str]) -> dict[int, str]:
    """Experience id per usable session index; a repeated session id is renamed ``<id>#k``.

    The first copy in file order keeps the id, as ``answer_session_ids`` and LongMemEval's own
    lookups mean it (QA s48: the renaming ran in date order, so an earlier-dated filler
    copy took the id of the real evidence session). A new name also avoids every id the
    haystack spells, so a renamed copy never takes a later session's own id.
    """
    usable = {i: sid for i, sid in enumerate(sids) if isinstance(sid, str) and sid.strip()}
    spelled = set(usable.values())
    first: dict[str, int] = {}
    used: set[str] = set()
    ids: dict[int, str] = {}
    for i, sid in usable.items():
        eid = sid
        k = 2
        while eid in used or (eid != sid and eid in spelled):
            eid = f"{sid}#{k}"
            k += 1
        if eid != sid:
            warnings.append(
                note(
                    f"{base}.haystack_session_ids[{i}]",
                    f"session id {sid!r} repeats "
                    f"{base}.haystack_session_ids[{first[sid]}]; this copy is {eid!r}",
                    "session-id",
                )
            )
        first.setdefault(sid, i)
        used.add(eid)
        ids[i] = eid
    return ids


def find_instance(
    path: str | Path, instance: str | None
) -> tuple[int, dict[str, Any], list[str] | None]:
    """The instance with ``question_id == instance`` (reading stops there).

    Without ``instance`` the file must hold exactly one. Returns (index, instance, ids seen or
    None when stopped early).
    """
    source = str(path)
    # A file of one instance object has its fields at $ (importer QA: said $[0]).
    one_object = _layout(path) == "longmemeval-object"
    if instance is not None:
        seen = 0
        # QA s48: an instance whose question_id is a number cannot be chosen by any
        # --instance, and was not named: its id problem comes with the refusal.
        id_problems: list[Problem] = []
        for index, inst in iter_instances(path):
            seen += 1
            if inst.get("question_id") == instance:
                if _mentions(path, instance) > 1:
                    _refuse_repeated_id(path, instance, index)
                return index, inst, None
            problem = _question_id_problem("$" if one_object else f"$[{index}]", inst)
            # With the known-instance problem, MAX_PROBLEMS + 1 in all, as capped() stops a
            # walk: PackageError shows MAX_PROBLEMS of them and says checking stopped.
            if problem is not None and len(id_problems) < MAX_PROBLEMS:
                id_problems.append(problem)
        unknown = Problem(
            "$",
            "known-instance",
            f"no instance with question_id {instance!r} among {seen} instance(s)",
            instance,
        )
        raise PackageError(source, [unknown, *id_problems])
    ids: list[str] = []
    first: tuple[int, dict[str, Any]] | None = None
    for index, inst in iter_instances(path):
        ids.append(_question_id(source, "$" if one_object else f"$[{index}]", inst))
        if first is None:
            first = (index, inst)
    if len(ids) == 1 and first is not None:
        return first[0], first[1], ids
    if not ids:
        fail(source, "$", "non-empty", "the file holds no instances")
    shown = first_few(ids, 10, show=id_text)
    fail(
        source,
        "$",
        "instance-required",
        f"the file holds {len(ids)} instances: choose one with {INSTANCE_KEYWORD}QUESTION_ID "
        f"(available: {shown})",
    )


def import_longmemeval(
    source: str | Path, *, instance: str | None = None, cost_rule: str = "words"
) -> Package:
    """Build the package of one LongMemEval question (streaming the file).

    Parameters
    ----------
    source : str or Path
    instance : str, optional
        ``question_id``; required when the file holds several instances.
    cost_rule : str
        See :data:`memaudit_core.costs.COST_RULES`.

    Returns
    -------
    Package

    Raises
    ------
    PackageError
        Truncated or malformed JSON, wrong shapes, misaligned haystack arrays, unknown instance.
    """
    rule = get_cost_rule(cost_rule)
    src = str(source)
    index, inst, _ = find_instance(source, instance)
    # A file of one instance object has its fields at $ (QA: paths said $[0]).
    base = "$" if _layout(source) == "longmemeval-object" else f"$[{index}]"
    col = Collector(src)
    warnings: list[str] = []

    qid = _question_id(src, base, inst)
    col.check(f"{base}.question_id", qid)  # it names the package, its query and its title
    qtype = inst.get("question_type")
    if not isinstance(qtype, str):
        col.add(f"{base}.question_type", "required", "an instance needs a question_type", qtype)
    elif col.check(f"{base}.question_type", qtype) and qtype not in QUESTION_TYPES:
        # Read as a fact question, but said (CLI QA: accepted silently).
        warnings.append(
            note(
                f"{base}.question_type",
                f"{qtype!r} is not a LongMemEval type "
                f"({', '.join(QUESTION_TYPES)}): its evidence units get kind 'fact'",
                "question-type",
            )
        )
    arrays = {}
    shape_ok = True
    for key in ("haystack_session_ids", "haystack_dates", "haystack_sessions"):
        value = inst.get(key)
        if not isinstance(value, list):
            shape_ok = False
            col.add(
                f"{base}.{key}",
                "required" if value is None else "type",
                f"'{key}' must be an array",
                json_type(value),
            )
        arrays[key] = value if isinstance(value, list) else []
    question = inst.get("question")
    if question is None:
        warnings.append(
            note(
                # A missing question is noted at its instance (a path names what is there).
                f"{base}.question" if "question" in inst else base,
                "no question ("
                + ("null" if "question" in inst else "missing")
                + "); the query has no text",
                "question-missing",
            )
        )
    elif not isinstance(question, str):
        col.add(f"{base}.question", "type", "the question must be a string", question)
    else:
        col.check(f"{base}.question", question)
    answer = inst.get("answer")
    check_answer(col, f"{base}.answer", answer)
    question_date = inst.get("question_date")
    if question_date is not None and not isinstance(question_date, str):
        col.add(
            f"{base}.question_date",
            "type",
            "question_date must be a string like '2023/05/30 (Tue) 23:40'",
            question_date,
        )
    else:
        col.check(f"{base}.question_date", question_date)
    # Importer QA: "bad" was kept without a word, while unreadable haystack dates are said.
    if isinstance(question_date, str) and parse_lme_date(question_date) is None:
        warnings.append(
            note(
                f"{base}.question_date",
                f"{question_date!r} does not parse (expected like "
                "'2023/05/30 (Tue) 23:40'); kept as text in meta",
                "question-date",
            )
        )
    elif question_date is None and inst.get("question_type") == "temporal-reasoning":
        warnings.append(
            note(
                f"{base}.question_date" if "question_date" in inst else base,
                "question_date is missing: a temporal-reasoning question is asked at a date",
                "question-date",
            )
        )
    col.check(f"{base}.haystack_dates", arrays["haystack_dates"])  # kept raw in meta
    col.check(f"{base}.answer_session_ids", inst.get("answer_session_ids"))  # kept in meta
    sids, dates, sessions = (
        arrays["haystack_session_ids"],
        arrays["haystack_dates"],
        arrays["haystack_sessions"],
    )
    if shape_ok and not (len(sids) == len(dates) == len(sessions)):
        shape_ok = False
        col.add(
            f"{base}.haystack_sessions",
            "aligned",
            f"haystack arrays must line up: {len(sids)} session ids, {len(dates)} dates, "
            f"{len(sessions)} sessions",
        )
    if not shape_ok:  # the sessions cannot be read; the other problems so far come along
        col.raise_if_any()
    abstention = qid.endswith("_abs")

    # experiences, sorted by date (stable)
    order = list(range(len(sids)))
    parsed = [parse_lme_date(d) for d in dates]
    bad_dates = [i for i, d in enumerate(parsed) if d is None]
    if bad_dates:
        warnings.append(
            note(
                f"{base}.haystack_dates[{bad_dates[0]}]",
                f"{len(bad_dates)} haystack date(s) do not parse (first: "
                f"{dates[bad_dates[0]]!r}); those sessions keep their list position and "
                "the others are sorted by date around them",
                "session-no-date",
            )
        )
    # A session without a date keeps its slot; the dated ones are sorted among
    # themselves (QA: one bad date used to leave every session unsorted).
    dated_slots = [i for i in order if parsed[i] is not None]
    for slot, i in zip(dated_slots, sorted(dated_slots, key=lambda i: parsed[i]), strict=True):
        order[slot] = i
    exp_ids = _experience_ids(sids, base, warnings)
    experiences = []
    turn_units: list[tuple[int, int, int, str, str]] = []  # (rank, pos, turn, uid, text)
    session_texts: dict[int, str] = {}
    empty_turns: list[str] = []
    no_role: list[str] = []
    odd_roles: list[tuple[str, str]] = []  # (path, role)
    for rank, i in enumerate(order):
        sid = sids[i]
        if not isinstance(sid, str) or not sid.strip():
            col.add(f"{base}.haystack_session_ids[{i}]", "type", "session ids must be strings", sid)
            continue
        if not col.check(f"{base}.haystack_session_ids[{i}]", sid):
            continue
        eid = exp_ids[i]
        turns = sessions[i]
        if not isinstance(turns, list):
            col.add(
                f"{base}.haystack_sessions[{i}]",
                "type",
                "a session must be a list of turns",
                json_type(turns),
            )
            continue
        lines = []
        for t, turn in enumerate(turns):
            tpath = f"{base}.haystack_sessions[{i}][{t}]"
            if not isinstance(turn, dict):
                col.add(tpath, "type", "each turn must be an object", json_type(turn))
                continue
            # Every field of the turn is checked before it is skipped, so that one run lists
            # all of its problems.
            before = len(col.problems)
            content = turn.get("content")
            if not isinstance(content, str):
                col.add(
                    f"{tpath}.content",
                    "required" if content is None else "type",
                    "a turn needs its 'content' string",
                    content,
                )
            else:
                col.check(f"{tpath}.content", content)
            role = turn.get("role")
            if role is not None and not isinstance(role, str):
                # QA (LoCoMo's speaker): a list became the line "[1, 2]: ...", silently.
                col.add(f"{tpath}.role", "type", "a turn's role must be a string", role)
            else:
                col.check(f"{tpath}.role", role)
            has_answer = turn.get("has_answer", False)
            if not isinstance(has_answer, bool):
                # "yes" or 1 would otherwise read as false: evidence silently dropped.
                col.add(f"{tpath}.has_answer", "type", "must be true or false", has_answer)
            if len(col.problems) > before or not isinstance(content, str):
                continue
            if role is None or not role.strip():
                no_role.append(f"{tpath}.role")
                role = "?"
            elif role not in ROLES:
                odd_roles.append((f"{tpath}.role", role))
            if not content.strip():
                # CLI QA: the role prefix alone made a 1-word fact covering its unit fully.
                if has_answer:
                    col.add(
                        f"{tpath}.content",
                        "non-empty-text",
                        "an evidence turn (has_answer: true) with empty content: it states "
                        "nothing, and cannot be costed; give it its text or unflag it",
                        content,
                    )
                else:
                    empty_turns.append(f"{tpath}.content")
                continue
            lines.append(f"{role}: {content}")
            if has_answer:
                turn_units.append((rank, i, t, f"{eid}_{t + 1}", f"{role}: {content}"))
        session_texts[i] = "\n".join(lines)
        emeta: dict[str, Any] = {"date_raw": dates[i], "turns": len(turns)}
        if parsed[i] is not None:
            emeta["date"] = parsed[i].isoformat()
        experiences.append(
            {"id": eid, "time": rank, "session": sid, "text": session_texts[i], "meta": emeta}
        )
    col.raise_if_any()
    if no_role:
        warnings.append(
            note(
                common_path(no_role),
                f"{len(no_role)} turn(s) have no role (first: {no_role[0]}); their lines read "
                "'?: content'",
                "turn-no-role",
            )
        )
    if odd_roles:
        # QA s44: "usr" was accepted without a word. The role only labels the turn's line, so
        # it is kept as written, and said.
        shown = first_few(sorted({r for _p, r in odd_roles}, key=repr), 5)
        warnings.append(
            note(
                common_path([p for p, _r in odd_roles]),
                f"{len(odd_roles)} turn(s) have a role that is not "
                f"{' or '.join(map(repr, ROLES))} (first: {odd_roles[0][0]} "
                f"{odd_roles[0][1]!r}; roles: {shown}); kept as written in their lines",
                "known-role",
            )
        )
    if empty_turns:
        warnings.append(
            note(
                common_path(empty_turns),
                f"{len(empty_turns)} turn(s) have empty content (first: {empty_turns[0]}); "
                "they are left out of their session's text, so their role label costs nothing",
                "turn-empty",
            )
        )

    answer_sids = inst.get("answer_session_ids") or []
    if not isinstance(answer_sids, list):
        warnings.append(
            note(
                f"{base}.answer_session_ids",
                "answer_session_ids is not a list; ignored",
                "answer-sessions",
            )
        )
        answer_sids = []
    missing = [s for s in answer_sids if s not in sids]
    if missing:
        warnings.append(
            note(
                f"{base}.answer_session_ids[{answer_sids.index(missing[0])}]",
                f"answer session(s) not in the haystack: {', '.join(map(str, missing))}",
                "answer-sessions",
            )
        )
    if answer_sids:
        # QA s44: a flagged turn in a filler session silently became evidence (a required
        # unit; in knowledge-update, a stale or current value). LongMemEval strips has_answer
        # from filler sessions, so the flag and answer_session_ids disagree on the evidence:
        # refused, as either reading would change OPT without a word.
        for _rank, i, t, _uid, _text in turn_units:
            if sids[i] in answer_sids and exp_ids.get(i) != sids[i]:
                # A repeated id's later copy: answer_session_ids means the first copy (which
                # keeps the id), so this flag sits in a session it does not list either.
                col.add(
                    f"{base}.haystack_sessions[{i}][{t}].has_answer",
                    "answer-session",
                    f"this turn is flagged has_answer: true, but its session repeats the id "
                    f"{sids[i]!r} (this copy is {exp_ids.get(i)!r}) and answer_session_ids "
                    "means its first copy: unflag the turn or give the session its own id",
                    True,
                )
            elif sids[i] not in answer_sids:
                col.add(
                    f"{base}.haystack_sessions[{i}][{t}].has_answer",
                    "answer-session",
                    f"this turn is flagged has_answer: true, but its session {sids[i]!r} "
                    "is not in answer_session_ids (LongMemEval strips has_answer from filler "
                    "sessions): unflag the turn or list its session in answer_session_ids",
                    True,
                )
        col.raise_if_any()

    def base_kind() -> str:
        if abstention:
            return "abstention"
        return {
            "temporal-reasoning": "temporal_order",
            "single-session-preference": "preference",
        }.get(str(qtype), "fact")

    units: list[dict[str, Any]] = []
    unit_session: dict[str, int] = {}
    if turn_units:
        evidence_sessions = sorted({i for _r, i, *_ in turn_units})
        undated = [i for i in evidence_sessions if parsed[i] is None]
        if (
            qtype == "knowledge-update"
            and not abstention
            and len(evidence_sessions) > 1
            and undated
        ):
            # Which value is current depends on the order of the evidence sessions.
            fail(
                src,
                f"{base}.haystack_dates[{undated[0]}]",
                "date",
                f"date {dates[undated[0]]!r} does not parse, and this knowledge-update "
                "question's evidence spans several sessions: without their dates the "
                "current value cannot be told from the stale one",
            )
        latest = max(rank for rank, *_ in turn_units)
        if qtype == "knowledge-update" and not abstention:
            newest = parsed[next(i for rank, i, *_ in turn_units if rank == latest)]
            tied = sorted({i for _, i, *_ in turn_units if parsed[i] == newest})
            if len(tied) > 1:
                # Importer QA: the session listed last silently became the current value.
                fail(
                    src,
                    f"{base}.haystack_dates[{tied[-1]}]",
                    "date",
                    f"evidence sessions {', '.join(repr(sids[i]) for i in tied)} share the "
                    f"latest date {dates[tied[-1]]!r}: this knowledge-update question's "
                    "current value cannot be told from the stale one",
                )
        for rank, i, t, uid, text in turn_units:
            kind = base_kind()
            weight = None
            if qtype == "knowledge-update" and not abstention:
                kind = "current_truth" if rank == latest else "stale"
                weight = STALE_WEIGHT if kind == "stale" else None
            units.append(
                {
                    "id": uid,
                    "kind": kind,
                    "text": text,
                    **({"weight": weight} if weight is not None else {}),
                    "meta": {"session": exp_ids[i], "turn": t + 1},
                }
            )
            unit_session[uid] = i
        if qtype == "knowledge-update" and len({r for r, *_ in turn_units}) < 2:
            warnings.append(
                note(
                    f"{base}.haystack_sessions[{turn_units[0][1]}]",
                    "knowledge-update question whose evidence sits in one session: no "
                    "older value to mark stale",
                    "evidence-one-session",
                )
            )
    else:
        for s in answer_sids:
            if s in sids:
                i = sids.index(s)
                uid = f"{exp_ids[i]}_session"
                units.append(
                    {
                        "id": uid,
                        "kind": base_kind(),
                        "text": "",
                        "meta": {"session": exp_ids[i], "level": "session"},
                    }
                )
                unit_session[uid] = i
        if units:
            warnings.append(
                note(
                    f"{base}.answer_session_ids",
                    "no turn is flagged has_answer: the answer sessions are the evidence "
                    "units (session level)",
                    "evidence-session-level",
                )
            )
        else:
            warnings.append(
                note(
                    base,
                    "no evidence (no has_answer turn, no answer session): OPT is 0 and "
                    "ratios are n/a"
                    + (" — expected for some abstention questions" if abstention else ""),
                    "evidence-none",
                )
            )

    requires = [u["id"] for u in units if u["kind"] != "stale"]
    qmeta: dict[str, Any] = {
        "question_type": qtype,
        "question_date": question_date,
        "answer_session_ids": answer_sids,
        "abstention": abstention,
    }
    if answer is not None and not isinstance(answer, str):
        # A finite number (booleans and NaN are refused above), or an array / object.
        qmeta["answer_type"] = json_type(answer)
        if isinstance(answer, list | dict):
            answer = json.dumps(answer, ensure_ascii=False)
            # Said, as the LoCoMo importer says it (QA: converted without a word).
            warnings.append(
                note(
                    f"{base}.answer",
                    f"the answer is a JSON {qmeta['answer_type']}, not text; kept as "
                    f"its JSON text {answer!r}",
                    "answer-not-text",
                )
            )
        else:
            answer = str(answer)
    query = {
        "id": qid,
        **({"text": question} if isinstance(question, str) else {}),
        **({"answer": answer} if isinstance(answer, str) else {}),
        "requires": requires,
        "weight": 1,
        "meta": qmeta,
    }

    candidates = []
    textless = [exp_ids[i] for i in order if i in exp_ids and not session_texts.get(i, "").strip()]
    if textless:
        # Importer QA: an empty haystack session became an experience without a candidate,
        # without a word (LoCoMo says so for its empty sessions).
        first_i = next(i for i in order if i in exp_ids and exp_ids[i] == textless[0])
        warnings.append(
            note(
                f"{base}.haystack_sessions[{first_i}]",
                f"{len(textless)} haystack session(s) have no turn with text "
                f"({first_few(textless, 5)}): kept as "
                "experiences, without a raw_span candidate",
                "session-empty",
            )
        )
    for i in order:
        if i not in exp_ids or not session_texts.get(i, "").strip():
            continue
        eid = exp_ids[i]
        cov = {u["id"]: 1.0 for u in units if unit_session[u["id"]] == i}
        candidates.append(
            {
                "id": f"{eid}:raw",
                "experience": eid,
                "type": "raw_span",
                "text": session_texts[i],
                "cost": cost_of(session_texts[i], rule.name),
                "coverage": cov,
            }
        )
    for _rank, i, _t, uid, text in turn_units:
        candidates.append(
            {
                "id": f"{uid}:fact",
                "experience": exp_ids[i],
                "type": "atomic_fact",
                "text": text,
                "cost": cost_of(text, rule.name),
                "coverage": {uid: 1.0},
            }
        )

    warnings.extend(unspaced_note(candidates, rule.name))
    doc = {
        "memaudit": 1,
        "id": f"longmemeval-{qid}",
        "title": f"LongMemEval {qid} ({qtype})",
        "description": f"{len(experiences)} haystack sessions, {len(units)} evidence unit(s)",
        "cost_unit": rule.name,
        "experiences": experiences,
        "units": units,
        "queries": [query],
        "candidates": candidates,
        "meta": {
            "source_format": "longmemeval",
            "format_version": _layout(source),
            "source_file": Path(source).name,
            "instance": qid,
            "instance_index": index,
            "question_type": qtype,
            "abstention": abstention,
            "stale_weight": STALE_WEIGHT,
            # How links name the turns that are no unit, <session_id>_<k> with k up to
            # experiences[].meta.turns (importer QA s50: a link to one was called a typo).
            "turn_ids": LONGMEMEVAL_TURNS,
            "cost_rule": rule.name,
            "warnings": warnings,
        },
    }
    return parse_package(doc, src)
