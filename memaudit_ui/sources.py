"""Where the app's packages come from: bundled samples, uploads and generated families.

Every package has a *package key* that goes into the URL:

- ``sample:<file stem>`` — a file in ``sample_packages/``;
- ``gen:<family>:<seed>`` (optionally ``:<k=v;k=v>``) — regenerated on demand, so a link to a
  generated package works in any fresh browser;
- ``upload:<hash prefix>`` — an uploaded file, kept in a server-wide registry so a link works
  for as long as the server runs.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from urllib.parse import quote, unquote

import streamlit as st

from memaudit_core.errors import MemAuditError, PackageError, Problem
from memaudit_core.generators import FAMILIES, generate
from memaudit_core.package import Package, load_package, loads_package

REPO_ROOT = Path(__file__).resolve().parent.parent
SAMPLES_DIR = REPO_ROOT / "sample_packages"
DEFAULT_SAMPLE = "sample:travel-assistant"
#: Uploads above this many megabytes are refused with a message (configurable per call).
MAX_UPLOAD_MB = 50
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
        For an item without ``=``.

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
        params[unquote(name)] = unquote(value)
    return params


@st.cache_resource(show_spinner="Generating the package…", max_entries=32)
def _generate(family: str, seed: int, params_text: str) -> Package:
    return generate(family, seed=seed, max_size=APP_MAX_GENERATED_SIZE, **parse_params(params_text))


@st.cache_resource(show_spinner=False)
def _upload_registry() -> dict[str, Package]:
    # Server-wide and read-only once stored: packages are frozen dataclasses.
    return {}


def _param_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)  # round-trips exactly
    return str(value)


def generated_key(family: str, seed: int, params: dict[str, object] | None = None) -> str:
    """The package key of a generated package: ``gen:<family>:<seed>[:k=v;k=v]``.

    Parameters equal to the family's defaults are left out (one key per package), and values
    are percent-encoded where they contain ``;``, ``=``, ``%`` or ``:``.

    >>> generated_key("event_graph", 7, {"n_experiences": 20, "cost_rule": "words"})
    'gen:event_graph:7:n_experiences=20'
    """
    fam = FAMILIES.get(family)
    defaults = fam.defaults() if fam is not None else {}
    items = []
    for name, value in sorted((params or {}).items()):
        if name in defaults and _same(value, defaults[name]):
            continue
        items.append(f"{quote(name, safe='')}={quote(_param_text(value), safe=',.-_')}")
    params_text = ";".join(items)
    return f"gen:{family}:{int(seed)}" + (f":{params_text}" if params_text else "")


def _same(value: object, default: object) -> bool:
    if isinstance(default, bool) or isinstance(value, bool):
        return value is default
    return type(value) is type(default) and value == default


def load_by_key(key: str) -> Package:
    """The package behind a package key.

    Raises
    ------
    MemAuditError
        For an unknown or stale key (e.g. an upload from a previous server run).
    """
    kind, _, rest = key.partition(":")
    if kind == "sample":
        path = sample_files().get(key)
        if path is None:
            raise MemAuditError(f"no sample package named {rest!r} in sample_packages/")
        return _load_sample(str(path), path.stat().st_mtime_ns)
    if kind == "gen":
        family, _, tail = rest.partition(":")
        seed_text, _, params_text = tail.partition(":")
        try:
            seed = int(seed_text or 0)
        except ValueError:
            raise MemAuditError(f"bad seed {seed_text!r} in package key {key!r}") from None
        return _generate(family, seed, params_text)
    if kind == "upload":
        pkg = _upload_registry().get(rest)
        if pkg is None:
            raise MemAuditError(
                "this link points to an uploaded package that this server no longer holds; "
                "upload the file again"
            )
        return pkg
    raise MemAuditError(f"unknown package key {key!r} (expected sample:, gen: or upload:)")


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
    pkg = loads_package(data, source=name)
    digest = hashlib.sha256(data).hexdigest()[:16]
    # The same bytes uploaded again (by any session) keep the package stored first: another
    # session's file name must not replace it (QA s20a).
    pkg = _upload_registry().setdefault(digest, pkg)
    return f"upload:{digest}", pkg


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
        pkg = _upload_registry().get(rest)
        if pkg is None:
            return f"upload · {rest}"
        # Two uploads of one package id (an edited file uploaded again) must not look alike in
        # the picker (QA s20a: two identical "upload · qa-pkg" entries): the key's digest
        # prefix tells them apart, and the session's file name helps.
        named = f" · {Path(file_name).name}" if file_name else ""
        return f"upload · {pkg.id}{named} · {rest[:8]}"
    return key
