"""Zip members read within limits: the one place every importer that opens a zip goes through.

A zip bomb (QA s44: a 306 KB artifact zip padded with 300 MiB of newlines took 32 s and 3.1 GB
to validate; a 122 KB OpenMemory zip of 120 MB of ``0,`` blocked the app for 60 s) is refused
from the zip's directory before anything is inflated, and again while reading, since a header
can lie:

- ``zip-size``: a member unpacks to more than the reader's per-member cap
  (:data:`MAX_ZIP_MEMBER_BYTES` unless the importer gives its own), or the members read from
  one archive to more than :data:`MAX_ZIP_TOTAL_BYTES` in all;
- ``zip-ratio``: a member unpacks to more than :data:`MAX_ZIP_RATIO` times its compressed size
  (above :data:`RATIO_FLOOR_BYTES`; real JSON and JSON Lines compress 7-13x);
- ``zip``: a member that cannot be read (damaged, encrypted, an unknown compression method).

Each problem names the archive (the source), the member and the rule.

Examples
--------
>>> import io, zipfile
>>> buf = io.BytesIO()
>>> with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
...     zf.writestr("a.jsonl", "\\n" * 5_000_000)
>>> from memaudit_core.errors import PackageError
>>> try:
...     with zipfile.ZipFile(buf) as zf:
...         ZipReader(zf, "bomb.zip").check([(zf.getinfo("a.jsonl"), "a.jsonl")])
... except PackageError as exc:
...     print(exc.problems[0].path, exc.problems[0].rule)
a.jsonl zip-ratio
"""

from __future__ import annotations

import io
import re
import zipfile
import zlib
from collections.abc import Iterator, Sequence
from typing import BinaryIO, NoReturn

from ._common import fail

#: The most one member may unpack to (1 GiB), unless the importer caps its members lower:
#: an artifact table's cap before these limits. Sizes are caps on real data, not the defence
#: against bombs (the ratio is): QA s44, a 33.5 MB artifact zip of the generator's largest
#: package unpacks to 320 MiB at 7-13x, and was refused when the total was 256 MiB.
MAX_ZIP_MEMBER_BYTES = 1 << 30
#: The most bytes read from the members of one zip, in all (4 GiB): a few full-size tables.
MAX_ZIP_TOTAL_BYTES = 1 << 32
#: The most a member may inflate, as a multiple of its compressed size. Package JSON and JSON
#: Lines deflate 7-13x; a bomb of blank lines or repeated values about 1000x (deflate's limit).
MAX_ZIP_RATIO = 100
#: Members that unpack to at most this many bytes are not held to :data:`MAX_ZIP_RATIO`: a
#: small, very repetitive file costs nothing to read.
RATIO_FLOOR_BYTES = 1 << 20
_CHUNK = 1 << 20
#: What zipfile raises for a member it cannot inflate (RuntimeError also covers encrypted
#: members, and its subclass raised for an unsupported compression method).
_READ_ERRORS = (zipfile.BadZipFile, OSError, EOFError, zlib.error, RuntimeError)


class ZipReader:
    """Members of one open zip, read within the limits of this module.

    ``where`` names a member in problems (as the importer locates that member's lines).
    """

    def __init__(self, zf: zipfile.ZipFile, source: str, member_limit: int | None = None) -> None:
        self.zf = zf
        self.source = source
        #: The most one member may unpack to; None: :data:`MAX_ZIP_MEMBER_BYTES`.
        self.member_limit = member_limit
        self.total = 0  # bytes inflated so far, over every member read

    def check(self, members: Sequence[tuple[zipfile.ZipInfo, str]]) -> None:
        """Refuse from the zip's directory (declared sizes), before anything is inflated."""
        total = 0
        for info, where in members:
            self._check_ratio(info.file_size, info, where, declared=True)
            self._check_member(info.file_size, where, declared=True)
            total += info.file_size
            if total > MAX_ZIP_TOTAL_BYTES:
                self._too_big(where, total, declared=True)

    def open(self, info: zipfile.ZipInfo, where: str) -> BinaryIO:
        """A buffered binary stream of the member that stops at the limits as it reads."""
        try:
            raw = self.zf.open(info)
        except _READ_ERRORS as exc:
            self._unreadable(where, exc)
        return io.BufferedReader(_Counted(self, raw, info, where), _CHUNK)

    def read(self, info: zipfile.ZipInfo, where: str) -> bytes:
        """The member's bytes (read in chunks, so at most one chunk past a limit)."""
        with self.open(info, where) as fh:
            return fh.read()

    def _check_ratio(self, size: int, info: zipfile.ZipInfo, where: str, declared: bool) -> None:
        if size > RATIO_FLOOR_BYTES and size > MAX_ZIP_RATIO * max(info.compress_size, 1):
            fail(
                self.source,
                where,
                "zip-ratio",
                f"unpacks to {'' if declared else 'more than '}{size:,} bytes from "
                f"{info.compress_size:,} compressed, more than {MAX_ZIP_RATIO}x (a zip bomb? "
                "JSON compresses about 10x); "
                + ("refused before unpacking" if declared else "reading stopped there")
                + ": unzip it and check it",
            )

    def _check_member(self, size: int, where: str, declared: bool) -> None:
        limit = MAX_ZIP_MEMBER_BYTES if self.member_limit is None else self.member_limit
        if size > limit:
            fail(
                self.source,
                where,
                "zip-size",
                f"unpacks to {'' if declared else 'more than '}{size:,} bytes, more than the "
                f"{limit:,} read from one member of this zip; unzip it and give the files "
                "themselves",
            )

    def _too_big(self, where: str, total: int, declared: bool) -> NoReturn:
        fail(
            self.source,
            where,
            "zip-size",
            f"the members read from this zip unpack to {'' if declared else 'more than '}"
            f"{total:,} bytes in all (up to this one), more than the {MAX_ZIP_TOTAL_BYTES:,} "
            "read from one archive; unzip it and give the files themselves",
        )

    def _unreadable(self, where: str, exc: BaseException) -> NoReturn:
        fail(self.source, where, "zip", f"cannot read this member of the zip ({exc})")


class _Counted(io.RawIOBase):
    """A zip member's raw stream that counts what it inflates against the limits."""

    def __init__(self, reader: ZipReader, raw: BinaryIO, info: zipfile.ZipInfo, where: str) -> None:
        self.reader, self.raw, self.info, self.where = reader, raw, info, where
        self.count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        try:
            data = self.raw.read(min(len(buffer), _CHUNK))
        except _READ_ERRORS as exc:
            self.reader._unreadable(self.where, exc)
        n = len(data)
        buffer[:n] = data
        self.count += n
        self.reader.total += n
        # The directory was checked already; these hold when it lied.
        self.reader._check_ratio(self.count, self.info, self.where, declared=False)
        self.reader._check_member(self.count, self.where, declared=False)
        if self.reader.total > MAX_ZIP_TOTAL_BYTES:
            self.reader._too_big(self.where, self.reader.total, declared=False)
        return n

    def close(self) -> None:
        self.raw.close()
        super().close()


#: A byte that is not an ASCII blank: blank lines are skipped in C, not one by one in Python.
_BOM = b"\xef\xbb\xbf"
_INK = re.compile(rb"[^ \t\r\n\f\v]")


class NonblankLines:
    """(line number, byte offset, line) of each line of a binary stream that is not blank,
    read in chunks; after the loop, :attr:`ends_with_newline` says how the stream ended.

    Lines end at ``\\n`` only (as ``text.split("\\n")``); a line of ASCII blanks is skipped
    without being decoded or kept, so memory follows the lines kept, not the file (QA s44: a
    zip of 300 MiB of newlines was split into 300 million strings). A line of other blanks
    is still yielded: the caller's ``str.strip()`` decides, as before. A UTF-8 byte order mark
    at the start is dropped, and offsets count from after it (as in text decoded "utf-8-sig").

    >>> lines = NonblankLines(io.BytesIO(b'{"a": 1}\\n\\n  \\n{"b": 2}'))
    >>> list(lines), lines.ends_with_newline
    ([(1, 0, b'{"a": 1}'), (4, 13, b'{"b": 2}')], False)
    """

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream
        self.ends_with_newline = False

    def __iter__(self) -> Iterator[tuple[int, int, bytes]]:
        line_no, offset = 1, 0
        head = self.stream.read(len(_BOM))
        pending = [] if head == _BOM else [head]  # the start of a line longer than one chunk
        while True:
            chunk = self.stream.read(_CHUNK)
            cut = chunk.rfind(b"\n") + 1 if chunk else 0
            if chunk and not cut:
                pending.append(chunk)
                continue
            body = b"".join([*pending, chunk[:cut]])
            pending = [chunk[cut:]] if cut < len(chunk) else []
            pos = 0
            while (m := _INK.search(body, pos)) is not None:
                start = body.rfind(b"\n", pos, m.start()) + 1 or pos
                end = body.find(b"\n", m.start())
                end = len(body) if end < 0 else end
                line_no += body.count(b"\n", pos, start)
                yield line_no, offset + start, body[start:end]
                pos = end
            line_no += body.count(b"\n", pos)
            offset += len(body)
            if body:
                self.ends_with_newline = body.endswith(b"\n")
            if not chunk:
                return
