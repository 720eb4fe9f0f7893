"""Exported log files: the shapes users actually have on disk.

Accepted, gzip or not (detected from the magic bytes, not the name):

* NDJSON of LogEntry objects, as the Logging REST API returns them;
* the JSON array ``gcloud logging read --format=json`` prints (streamed, never
  loaded whole);
* NDJSON of bare recorder payloads, like the library's local timeline cache;
  their run is named by ``--run``.

Every line or element either becomes a ``LandedEntry`` or a ``Rejection`` that
names the file and line, so nothing is dropped silently. The reader yields
batches with a cursor (records consumed, file fingerprint) that commits with
them; a re-run skips what committed if the file is the same or has grown.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import re
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Iterator

import orjson

from goodput_loader.entries import (
    InvalidEntry,
    LandedEntry,
    Rejection,
    from_bare_payload,
    from_log_entry,
    looks_like_log_entry,
    truncate_raw,
)
from goodput_loader.errors import SourceError
from goodput_loader.sinks.base import Batch, Cursor

GZIP_MAGIC = b"\x1f\x8b"
FINGERPRINT_BYTES = 1 << 20
_CHUNK_CHARS = 1 << 20
_MAX_ELEMENT_CHARS = 16 << 20
# gcloud prints one element per top-level "{" at indentation 0-2: a place to
# resynchronise after a malformed element.
_ELEMENT_START_RE = re.compile(r"\n {0,2}\{")


@dataclass(frozen=True)
class FileOptions:
    """How to read bare payload files (which carry no logName)."""

    run_name: str | None = None
    project: str = "local"
    batch_size: int = 50_000
    rescan: bool = False


def source_key(path: Path) -> str:
    return f"file:{path.resolve()}"


def fingerprint(path: Path, length: int | None = None) -> str:
    """``"<n>:<sha256 of the first n bytes>"``, n at most 1 MiB.

    A cursor keeps the fingerprint of the file as it was; the same n bytes of
    the file now hash the same if the file has only grown since (appended
    NDJSON lines, appended gzip members), so the load resumes after them.
    """
    size = path.stat().st_size
    n = min(size, FINGERPRINT_BYTES) if length is None else length
    if n > size:
        return f"{n}:shorter"
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        digest.update(fh.read(n))
    return f"{n}:{digest.hexdigest()}"


def _same_head(path: Path, stored: str | None) -> bool:
    if not stored or ":" not in stored:
        return False
    length = stored.split(":", 1)[0]
    return length.isdigit() and fingerprint(path, int(length)) == stored


class _CountingReader(io.RawIOBase):
    """Counts bytes read from disk (compressed bytes for gzip), for progress."""

    def __init__(self, raw: IO[bytes]):
        super().__init__()
        self.raw = raw
        self.count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def]
        n = self.raw.readinto(buffer)  # type: ignore[attr-defined]
        self.count += n or 0
        return n

    def close(self) -> None:
        self.raw.close()
        super().close()


class FileReader:
    """Reads one file into batches of landed entries and rejections."""

    def __init__(self, path: str | Path, options: FileOptions, cursor: Cursor | None):
        self.path = Path(path)
        self.options = options
        if not self.path.is_file():
            raise SourceError(f"{self.path}: no such file")
        self.key = source_key(self.path)
        self.size = self.path.stat().st_size
        self.fingerprint = fingerprint(self.path)
        self.skip = 0
        self.previous_timestamp_us: int | None = None
        if cursor is not None and not options.rescan and _same_head(self.path, cursor.fingerprint):
            # Same head (the file is the same or has grown): skip committed records.
            self.skip = cursor.offset or 0
            self.previous_timestamp_us = cursor.timestamp_us
        self.shape = "unknown"
        self._counter: _CountingReader | None = None

    # -- opening ---------------------------------------------------------
    def _open_text(self) -> IO[str]:
        raw = open(self.path, "rb")
        head = raw.read(2)
        raw.seek(0)
        self._counter = _CountingReader(raw)
        binary: IO[bytes]
        if head == GZIP_MAGIC:
            binary = gzip.GzipFile(fileobj=self._counter, mode="rb")  # type: ignore[arg-type]
        else:
            binary = self._counter  # type: ignore[assignment]
        return io.TextIOWrapper(
            io.BufferedReader(binary),  # type: ignore[arg-type]
            encoding="utf-8",
            errors="strict",
            newline="\n",
        )

    @property
    def bytes_read(self) -> int:
        return self._counter.count if self._counter else 0

    # -- batches ---------------------------------------------------------
    def batches(self) -> Iterator[Batch]:
        """Yield batches; the last one carries the final cursor even if empty."""
        batch = Batch()
        record_no = 0
        try:
            with self._open_text() as text:
                prefix = self._read_prefix(text)
                if not prefix:
                    self.shape = "empty"
                    if self.skip == 0:
                        batch.rejections.append(
                            Rejection(f"{self.path}:0", "empty file: it holds no log entries", "")
                        )
                    batch.cursor = self._cursor(0)
                    yield batch
                    return
                parse = self._json_array if prefix.lstrip()[0] == "[" else self._ndjson
                records = parse(text, prefix)
                for record_no, item in enumerate(records, start=1):
                    if record_no <= self.skip:
                        continue
                    if isinstance(item, LandedEntry):
                        batch.entries.append(item)
                        self.previous_timestamp_us = item.timestamp_us
                    else:
                        batch.rejections.append(item)
                    if len(batch) >= self.options.batch_size:
                        batch.cursor = self._cursor(record_no)
                        batch.bytes_read = self.bytes_read
                        yield batch
                        batch = Batch()
        except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
            batch.rejections.append(
                Rejection(
                    f"{self.path}:after-record-{record_no}",
                    f"truncated or corrupt gzip stream after record {record_no}: {exc}; "
                    "the records before it were loaded, nothing after it could be read",
                    "",
                )
            )
        except UnicodeDecodeError as exc:
            batch.rejections.append(
                Rejection(
                    f"{self.path}:after-record-{record_no}",
                    f"file is not UTF-8 text after record {record_no}: {exc}",
                    "",
                )
            )
        batch.cursor = self._cursor(max(record_no, self.skip))
        batch.bytes_read = self.bytes_read
        yield batch

    def _cursor(self, offset: int) -> Cursor:
        return Cursor(
            source_key=self.key,
            timestamp_us=self.previous_timestamp_us,
            offset=offset,
            fingerprint=self.fingerprint,
        )

    @staticmethod
    def _read_prefix(text: IO[str]) -> str:
        """The start of the file, up to its first non-blank character ("" if it has none).

        A gzip stream cannot seek back cheaply, so the shape is decided on this
        prefix and the parsers continue from it.
        """
        prefix = text.read(4096)
        while prefix and not prefix.strip():
            more = text.read(1 << 16)
            if not more:
                return ""
            prefix += more
        return prefix

    # -- NDJSON ----------------------------------------------------------
    @staticmethod
    def _lines(text: IO[str], prefix: str) -> Iterator[str]:
        first_rest = text.readline()
        block = prefix + first_rest
        lines = block.split("\n")
        if block.endswith("\n"):
            lines.pop()
        yield from (line + "\n" for line in lines)
        yield from text

    def _ndjson(self, text: IO[str], prefix: str) -> Iterator[LandedEntry | Rejection]:
        self.shape = "ndjson"
        for line_no, line in enumerate(self._lines(text, prefix), start=1):
            if not line.strip():
                continue
            location = f"{self.path}:{line_no}"
            try:
                obj = orjson.loads(line)
            except orjson.JSONDecodeError as exc:
                yield Rejection(location, f"invalid JSON: {exc}", truncate_raw(line.rstrip("\n")))
                continue
            yield self._convert(obj, location, line_no, line)

    # -- JSON array (gcloud --format=json) --------------------------------
    def _json_array(self, text: IO[str], prefix: str) -> Iterator[LandedEntry | Rejection]:
        self.shape = "json_array"
        decoder = json.JSONDecoder()
        buf = prefix
        pos = buf.index("[") + 1
        line_no = 1 + buf.count("\n", 0, pos)
        eof = False
        element = 0

        def more() -> bool:
            nonlocal buf, pos, eof
            chunk = text.read(_CHUNK_CHARS)
            if not chunk:
                eof = True
                return False
            buf = buf[pos:] + chunk
            pos = 0
            return True

        while True:
            # Skip separators.
            while True:
                while pos < len(buf) and buf[pos] in " \t\r\n,":
                    if buf[pos] == "\n":
                        line_no += 1
                    pos += 1
                if pos < len(buf) or not more():
                    break
            if pos >= len(buf):
                yield Rejection(f"{self.path}:{line_no}", "JSON array is not closed with ]: the file looks truncated", "")
                return
            if buf[pos] == "]":
                return
            element += 1
            location = f"{self.path}:{line_no}"
            while True:
                try:
                    obj, end = decoder.raw_decode(buf, pos)
                    # A scalar cut at the buffer's end could parse; make sure it ended.
                    if end >= len(buf) and not eof and more():
                        continue
                    break
                except json.JSONDecodeError as exc:
                    if not eof and len(buf) - pos < _MAX_ELEMENT_CHARS and more():
                        continue
                    # Malformed element: reject it and resynchronise at the next element.
                    match = _ELEMENT_START_RE.search(buf, max(exc.pos, pos + 1))
                    stop = match.start() + 1 if match else len(buf)
                    bad = buf[pos:stop]
                    tail = "" if match else "; the rest of the file could not be read"
                    yield Rejection(location, f"invalid JSON in array element {element}: {exc.msg}{tail}", truncate_raw(bad))
                    line_no += bad.count("\n")
                    pos = stop
                    if not match:
                        while more():
                            pos = len(buf)
                        return
                    obj = None
                    break
            if obj is None:
                continue
            raw = buf[pos:end]
            line_no_start = line_no
            line_no += raw.count("\n")
            pos = end
            yield self._convert(obj, location, line_no_start, raw)

    # -- shared ----------------------------------------------------------
    def _convert(self, obj: object, location: str, line_no: int, raw: str) -> LandedEntry | Rejection:
        try:
            if looks_like_log_entry(obj):
                return from_log_entry(obj, location)
            if not isinstance(obj, dict):
                raise InvalidEntry(f"expected a JSON object, got {type(obj).__name__}")
            if self.options.run_name is None:
                raise InvalidEntry(
                    "bare recorder payload (no logName/jsonPayload envelope): pass --run RUN "
                    "to name the run it belongs to"
                )
            return from_bare_payload(
                obj,
                run_name=self.options.run_name,
                project=self.options.project,
                line_number=line_no,
                previous_timestamp_us=self.previous_timestamp_us,
                location=location,
            )
        except InvalidEntry as exc:
            return Rejection(location, str(exc), truncate_raw(raw.rstrip("\n")))


def expand_paths(paths: list[str]) -> list[Path]:
    """Files as given, directories expanded to their files (sorted), for ``load DIR``."""
    result: list[Path] = []
    for name in paths:
        path = Path(name)
        if path.is_dir():
            result.extend(sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith(".")))
        elif path.exists():
            result.append(path)
        else:
            raise SourceError(f"{name}: no such file or directory")
    return result
