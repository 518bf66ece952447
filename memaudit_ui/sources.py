"""Where the app's packages come from: bundled samples, uploads and generated families.

Every package has a *package key* that goes into the URL:

- ``sample:<file stem>`` — a file in ``sample_packages/``;
- ``gen:<family>:<seed>`` (optionally ``:<k=v;k=v>``) — regenerated on demand, so a link to a
  generated package works in any fresh browser;
- ``upload:<hash prefix>`` — an uploaded file, kept in a server-wide registry so a link works
  while the server holds it: the registry keeps the most recently used uploads, within
  :data:`MAX_HELD_UPLOADS` files and :data:`MAX_HELD_UPLOAD_BYTES` bytes.
"""

from __future__ import annotations

import hashlib
import tempfile
import threading
from collections import OrderedDict
from pathlib import Path
from urllib.parse import quote, unquote

import streamlit as st

from memaudit_core.errors import MemAuditError, PackageError, Problem, cut_repr
from memaudit_core.generators import (
    FAMILIES,
    SEED_RULE,
    coerce_params,
    effective_params,
    generate,
    package_seed,
    param_text,
    read_seed,
)
from memaudit_core.package import ZIP_MAGICS, Package, load_package, loads_package

from .state import md_value

REPO_ROOT = Path(__file__).resolve().parent.parent
SAMPLES_DIR = REPO_ROOT / "sample_packages"
DEFAULT_SAMPLE = "sample:travel-assistant"
#: Uploads above this many megabytes are refused with a message (configurable per call).
MAX_UPLOAD_MB = 50
#: Uploads the server holds at once. An upload stays on the server for any session or link that
#: names it, so without a bound a demo server left running kept every distinct upload for its
#: whole life. 12 is several users each comparing a few edited versions of a package.
MAX_HELD_UPLOADS = 12
#: ... and their total file size: three uploads at the 50 MB cap. A parsed package takes about
#: 3.6 times its file's size in memory (a 2.7 MB event-graph file holds 9.8 MB), so this is
#: about 550 MB of packages. The newest upload is always held, whatever its size.
MAX_HELD_UPLOAD_BYTES = 150_000_000
#: Digests of dropped uploads remembered, to tell "dropped for newer uploads" from "never
#: held" (a server restart) in the message; a digest is 16 characters.
MAX_REMEMBERED_EVICTIONS = 10_000
#: Largest generated package the app builds (estimated candidates + coverage entries): about
#: a 50 MB file, like an upload. A link is enough to ask for one, so the server caps it.
APP_MAX_GENERATED_SIZE = 250_000


def sample_files() -> dict[str, Path]:
    return {f"sample:{p.stem}": p for p in sorted(SAMPLES_DIR.glob("*.json"))}


def default_package_key() -> str:
    samples = sample_files()
    if DEFAULT_SAMPLE in samples:
        return DEFAULT_SAMPLE
    if samples:
        return next(iter(samples))
    return "gen:memaudit-small:0"


@st.cache_resource(show_spinner=False, max_entries=64)
def _load_sample(path_str: str, mtime_ns: int) -> Package:
    return load_package(path_str)


def parse_params(params_text: str) -> dict[str, str]:
    """``k=v;k=v`` (values percent-encoded by :func:`generated_key`) -> {k: v}.

    Raises
    ------
    MemAuditError
        For an item without ``=``, or a parameter given twice with different values.

    Examples
    --------
    >>> parse_params("n_experiences=20;cost_rule=chars")
    {'n_experiences': '20', 'cost_rule': 'chars'}
    """
    params: dict[str, str] = {}
    for item in params_text.split(";"):
        if not item:
            continue
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise MemAuditError(
                f"bad generator parameter {item!r} in a package key (expected name=value)"
            )
        name, value = unquote(name), unquote(value)
        if name in params and params[name] != value:
            # QA s42 (defect 1): the last of two values silently won, where the CLI refuses
            # `--param n_experiences` given twice; the same rule here.
            raise MemAuditError(
                f"generator parameter {name!r} given twice in a package key "
                f"({cut_repr(params[name])} and {cut_repr(value)}); give it once "
                "[rule: parameter-once]"
            )
        params[name] = value
    return params


@st.cache_resource(show_spinner="Generating the package…", max_entries=32)
def _generate(family: str, seed: int, params_text: str) -> Package:
    return generate(family, seed=seed, max_size=APP_MAX_GENERATED_SIZE, **parse_params(params_text))


class UploadRegistry:
    """Server-wide uploads by content digest, the least recently used dropped first.

    A package is read-only once stored (packages are frozen dataclasses); sessions run in
    threads, so every access holds the lock. Limits are read on every :meth:`add`, so the
    module constants rule (and tests may lower them).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> reg = UploadRegistry(max_count=2, max_bytes=100)
    >>> for digest in "abc":
    ...     _ = reg.add(digest, SimpleNamespace(id=digest.upper()), 10)
    >>> reg.keys(), reg.was_evicted("a"), reg.evicted_id("a")
    (['b', 'c'], True, 'A')
    """

    def __init__(self, max_count: int | None = None, max_bytes: int | None = None) -> None:
        self._max_count = max_count
        self._max_bytes = max_bytes
        self._held: OrderedDict[str, tuple[Package, int]] = OrderedDict()  # oldest use first
        # digest -> package id of a dropped upload: its picker label stays the same after the
        # drop (the browser sends the label back; a changed label is not the same choice).
        self._evicted: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def max_count(self) -> int:
        return MAX_HELD_UPLOADS if self._max_count is None else self._max_count

    @property
    def max_bytes(self) -> int:
        return MAX_HELD_UPLOAD_BYTES if self._max_bytes is None else self._max_bytes

    def add(self, digest: str, package: Package, n_bytes: int) -> Package:
        """Hold ``package`` under ``digest`` (the one held first if the digest is known) as the
        most recently used, dropping the least recently used beyond the limits."""
        with self._lock:
            if digest in self._held:
                self._held.move_to_end(digest)
                return self._held[digest][0]
            self._held[digest] = (package, int(n_bytes))
            self._evicted.pop(digest, None)
            total = sum(size for _pkg, size in self._held.values())
            while len(self._held) > 1 and (
                len(self._held) > self.max_count or total > self.max_bytes
            ):
                dropped, (dropped_pkg, size) = self._held.popitem(last=False)
                total -= size
                self._evicted[dropped] = dropped_pkg.id
                while len(self._evicted) > MAX_REMEMBERED_EVICTIONS:
                    self._evicted.popitem(last=False)
            return package

    def get(self, digest: str) -> Package | None:
        """The package held under ``digest``, now the most recently used; None if not held."""
        with self._lock:
            entry = self._held.get(digest)
            if entry is None:
                return None
            self._held.move_to_end(digest)
            return entry[0]

    def peek(self, digest: str) -> Package | None:
        """As :meth:`get`, without counting as a use (labels in a picker are not a use)."""
        with self._lock:
            entry = self._held.get(digest)
            return None if entry is None else entry[0]

    def was_evicted(self, digest: str) -> bool:
        with self._lock:
            return digest in self._evicted

    def evicted_id(self, digest: str) -> str | None:
        """The package id of a dropped upload (None if ``digest`` was not dropped)."""
        with self._lock:
            return self._evicted.get(digest)

    def keys(self) -> list[str]:
        """Held digests, least recently used first."""
        with self._lock:
            return list(self._held)

    def held_bytes(self) -> int:
        with self._lock:
            return sum(size for _pkg, size in self._held.values())


@st.cache_resource(show_spinner=False)
def _upload_registry() -> UploadRegistry:
    return UploadRegistry()


class UploadNotHeldError(MemAuditError):
    """An ``upload:`` key whose package this server does not hold (dropped for newer uploads,
    or uploaded before the server restarted)."""


def upload_not_held_message(digest: str, evicted: bool) -> str:
    """Why an ``upload:`` key cannot be opened, and what to do (one wording for a link and
    for a session whose upload was dropped)."""
    why = (
        f"it was dropped to make room for newer uploads (the server holds the "
        f"{MAX_HELD_UPLOADS} most recently used uploads, {MAX_HELD_UPLOAD_BYTES / 1e6:g} MB "
        "in all)"
        if evicted
        else "uploads last only while the server that received them runs"
    )
    return f"this server no longer holds that upload: {why}; upload the file again"


def upload_digest(data: bytes) -> str:
    """The digest an upload is registered under (the ``upload:`` key's tail)."""
    return hashlib.sha256(data).hexdigest()[:16]


def _param_text(value: object) -> str:
    # The core's text (repr round-trips exactly; -0.0 is 0.0, one key per package, QA s40):
    # sweep rows' params column writes values alike (QA s51 M2).
    return param_text(value)


def generated_key(family: str, seed: int, params: dict[str, object] | None = None) -> str:
    """The package key of a generated package: ``gen:<family>:<seed>[:k=v;k=v]``.

    Parameters equal to the family's defaults, or building what they build
    (:func:`~memaudit_core.generators.effective_params`), are left out (one key per package),
    and values are percent-encoded where they contain ``;``, ``=``, ``%`` or ``:``.

    >>> generated_key("event_graph", 7, {"n_experiences": 20, "cost_rule": "words"})
    'gen:event_graph:7:n_experiences=20'
    """
    fam = FAMILIES.get(family)
    defaults = fam.defaults() if fam is not None else {}
    if fam is not None and not fam.seeded:
        seed = 0  # a seed-invariant family's one package (QA s40, defect 2)
    values = dict(params or {})
    for name, value in values.items():
        if name in defaults:
            # Each value as the family reads it (QA s42, defect 2: "03" and 3 are one
            # package, so one key); a value it refuses is kept as given, for generate() to
            # name.
            try:
                values[name] = coerce_params(family, {name: value})[name]
            except MemAuditError:
                pass
    if fam is not None:
        # Then as the family builds them together (QA s47: event_graph's n_entities=2, what
        # its automatic 0 picks for 30 experiences, was a second key for the package).
        values = effective_params(family, values)
    items = []
    for name, value in sorted(values.items()):
        if name in defaults and _same(value, defaults[name]):
            continue
        items.append(f"{quote(name, safe='')}={quote(_param_text(value), safe=',.-_')}")
    params_text = ";".join(items)
    return f"gen:{family}:{int(seed)}" + (f":{params_text}" if params_text else "")


def _same(value: object, default: object) -> bool:
    if isinstance(default, bool) or isinstance(value, bool):
        return value is default
    return type(value) is type(default) and value == default


def canonical_key(key: str, what: str = "package") -> tuple[str, str | None]:
    """``key`` as the app keeps it, and a note (Markdown) when that differs from what ``key``
    asks; ``what`` names the link's parameter in the note (the Generator's ``preview``).

    A ``gen:`` key is written as :func:`generated_key` writes it (the Generator's "Open in
    the app"): a seed-invariant family names seed 0 (its one package), a seed is written
    without leading zeros, and its parameters are read through the family's parameter types
    and written sorted by name, without the ones equal to their defaults (or building what
    they build, as event_graph's ``n_entities=2`` for 30 experiences, QA s47) or empty items.
    A key the app cannot open is kept as it is (:func:`load_by_key` says what is wrong), and
    so are other keys.

    QA s40 (defect 2): ``gen:update_chain:5`` opened a package recording seed 5, while the
    Generator's Preview and "Open in the app" switched to ``gen:update_chain:0``, the same
    instance under another content hash. QA s42 (defect 2): ``normal_count=3`` (the
    default), ``normal_count=03``, ``normal_count=%35``, a trailing ``:`` or ``;`` each kept
    a key of their own for one package.

    >>> canonical_key("gen:update_chain:5:length=4")[0], canonical_key("gen:memaudit-small:07")
    ('gen:update_chain:0:length=4', ('gen:memaudit-small:7', None))
    >>> canonical_key("gen:memaudit-small:0:update_count=%35;normal_count=3;")
    ('gen:memaudit-small:0:update_count=5', None)
    """
    kind, _, rest = key.partition(":")
    if kind != "gen":
        return key, None
    family, _, tail = rest.partition(":")
    seed_text, _, params_text = tail.partition(":")
    fam = FAMILIES.get(family)
    if fam is None or not (seed_text.isascii() and seed_text.isdigit()):
        return key, None  # load_by_key says what is wrong with it
    try:
        params = coerce_params(family, parse_params(params_text))
    except MemAuditError:
        return key, None  # a bad parameter: load_by_key names it
    try:
        seed, note = package_seed(family, read_seed(seed_text))
    except MemAuditError:
        return key, None  # a seed too long to hold: load_by_key says so
    canonical = generated_key(family, seed, params)
    if note is not None:
        # Markdown: the keys in code spans, copied without the word joiner a shortcode guard
        # puts in plain text (QA s46).
        done = "opened" if what == "package" else "previewed"
        note = f"the link's {what} {md_value(key)}: {note}; {done} {md_value(canonical)}"
    return canonical, note


def generated_package(text: str) -> tuple[str, Package, str | None]:
    """The generated package a link's ``text`` names (the Generator's ``preview=``), its key as
    the Generator's form writes it (:func:`generated_key`) and :func:`canonical_key`'s note.

    Raises
    ------
    MemAuditError
        For a key that is not a ``gen:`` key, or that :func:`load_by_key` cannot build (an
        unknown family or parameter, a bad seed or value, a package over the app's size).

    >>> generated_package("gen:memaudit-small:03:normal_count=3;")[0]
    'gen:memaudit-small:3'
    """
    if not text.strip():
        raise MemAuditError("empty")
    if not text.startswith("gen:"):
        raise MemAuditError(
            f"{cut_repr(text)} is not a generated package's key: expected gen:FAMILY:SEED, "
            "with any parameters after it as :name=value;name=value"
        )
    key, note = canonical_key(text, "preview")
    pkg = load_by_key(key)
    meta = pkg.meta
    # Written from what the package records, so the key is the one the form builds for it
    # even where canonical_key keeps a key as given (gen:memaudit-small with no seed: seed 0).
    return generated_key(meta["generator"], meta["seed"], meta["params"]), pkg, note


def load_by_key(key: str) -> Package:
    """The package behind a package key.

    Raises
    ------
    MemAuditError
        For an unknown or stale key; :class:`UploadNotHeldError` for an upload this server
        no longer holds (dropped for newer uploads, or from a previous server run).
    """
    kind, _, rest = key.partition(":")
    if kind == "sample":
        path = sample_files().get(key)
        if path is None:
            raise MemAuditError(f"no sample package named {cut_repr(rest)} in sample_packages/")
        return _load_sample(str(path), path.stat().st_mtime_ns)
    if kind == "gen":
        family, _, tail = rest.partition(":")
        seed_text, _, params_text = tail.partition(":")
        # Digits only: int() also reads "+3" and "3_0" (as 30), which the Generator form does
        # not, so a link opened one package and the form built another (generator QA s38).
        if seed_text and not (seed_text.isascii() and seed_text.isdigit()):
            # Tagged with the rule the CLI names for a bad --seed (QA s49).
            raise MemAuditError(
                f"bad seed {cut_repr(seed_text)} in package key {cut_repr(key)}: a seed is "
                f"written in digits 0-9 only [rule: {SEED_RULE}]"
            )
        try:
            seed = read_seed(seed_text)
        except MemAuditError as exc:
            raise MemAuditError(f"bad seed in package key {cut_repr(key)}: {exc}") from None
        if family in FAMILIES:  # gen:update_chain:5 is seed 0's package (QA s40, defect 2)
            seed = package_seed(family, seed)[0]
        return _generate(family, seed, params_text)
    if kind == "upload":
        registry = _upload_registry()
        pkg = registry.get(rest)  # a use: the session's upload stays the most recent
        if pkg is None:
            raise UploadNotHeldError(upload_not_held_message(rest, registry.was_evicted(rest)))
        return pkg
    raise MemAuditError(f"unknown package key {cut_repr(key)} (expected sample:, gen: or upload:)")


def register_upload(name: str, data: bytes, max_mb: float = MAX_UPLOAD_MB) -> tuple[str, Package]:
    """Validate an uploaded file and register it; returns (package key, package).

    Raises
    ------
    PackageError
        For a file that is too large or fails validation (every problem listed).
    """
    if len(data) > max_mb * 1e6:  # decimal MB, as the message and the label say
        raise PackageError(
            name,
            [
                Problem(
                    "$",
                    "upload-size",
                    f"file is {len(data) / 1e6:.1f} MB; uploads above {max_mb:g} MB are refused",
                )
            ],
        )
    # An artifact zip is read as `memaudit validate x.zip` reads it (load_package); any other
    # file as a JSON package (s56: the app refused the zip with the import command to run).
    if data[:4] in ZIP_MAGICS:
        pkg, n_bytes = _load_artifact_upload(name, data, max_mb)
    else:
        pkg, n_bytes = loads_package(data, name), len(data)
    digest = upload_digest(data)
    # The same bytes uploaded again (by any session) keep the package stored first: another
    # session's file name must not replace it (QA s20a).
    pkg = _upload_registry().add(digest, pkg, n_bytes)
    return f"upload:{digest}", pkg


def _load_artifact_upload(name: str, data: bytes, max_mb: float) -> tuple[Package, int]:
    """An uploaded zip read as an artifact package, under the upload's name, and the bytes its
    files unpack to. Problems name the file as uploaded, and a package without a manifest id
    is named after it as the CLI names one after its zip (the bytes are read from a temporary
    copy of that name).

    The upload cap holds for what the zip unpacks to, as for a JSON file: a 50 MB zip of
    tables unpacks to about 500 MB, a package of gigabytes in the server's memory. The
    registry counts the unpacked size too."""
    import io
    import zipfile

    from memaudit_core.importers.artifact import load_artifact_package

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            unpacked = sum(i.file_size for i in zf.infolist() if not i.is_dir())
    except (zipfile.BadZipFile, OSError, ValueError):
        unpacked = len(data)  # not readable: the artifact reader says why
    if unpacked > max_mb * 1e6:
        raise PackageError(
            name,
            [
                Problem(
                    "$",
                    "upload-size",
                    f"the zip unpacks to {unpacked / 1e6:.1f} MB; uploads above {max_mb:g} MB "
                    "(unpacked) are refused: `memaudit import artifact` reads it",
                )
            ],
        )
    base = Path(name.replace("\\", "/")).name
    # A name no file can have (a file system takes 255 bytes at most): the CLI never sees one.
    if base in ("", ".", "..") or "\x00" in base or len(base.encode("utf-8", "replace")) > 240:
        base = "upload.zip"
    with tempfile.TemporaryDirectory(prefix="memaudit-upload-") as folder:
        path = Path(folder) / base
        path.write_bytes(data)
        return load_artifact_package(path, source=name), max(unpacked, len(data))


def describe_key(key: str, file_name: str | None = None) -> str:
    """The picker's label of a package key; ``file_name`` is the name this session uploaded
    an ``upload:`` key under (the registry is server-wide, the name is the session's own)."""
    kind, _, rest = key.partition(":")
    if kind == "sample":
        return f"sample · {rest}"
    if kind == "gen":
        family, _, tail = rest.partition(":")
        seed_text, _, params_text = tail.partition(":")
        try:
            params = ", ".join(f"{k}={v}" for k, v in parse_params(params_text).items())
        except MemAuditError:
            params = params_text
        return f"generated · {family} seed {seed_text or 0}" + (f" ({params})" if params else "")
    if kind == "upload":
        registry = _upload_registry()
        pkg = registry.peek(rest)
        package_id = pkg.id if pkg is not None else registry.evicted_id(rest)
        if package_id is None:
            return f"upload · {rest}"
        # Two uploads of one package id (an edited file uploaded again) must not look alike in
        # the picker (QA s20a: two identical "upload · qa-pkg" entries): the key's digest
        # prefix tells them apart, and the session's file name helps. Both come before the id:
        # the sidebar shows about 30 characters of a label (QA s21c: "upload ·
        # event-graph-n60-s5 · edi" hid the file name and the digest).
        if file_name:
            return f"upload · {Path(file_name).name} · {rest[:8]} · {package_id}"
        return f"upload · {package_id} · {rest[:8]}"
    return key
