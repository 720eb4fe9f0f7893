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

import numpy as np
import orjson
import pyarrow as pa

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
from goodput_loader.sources.vectorized import Screen

GZIP_MAGIC = b"\x1f\x8b"
FINGERPRINT_BYTES = 1 << 20
_CHUNK_CHARS = 1 << 20
_BLOCK_BYTES = 16 << 20
_PIECE_BYTES = 64 << 10
_MAX_ELEMENT_CHARS = 16 << 20
# gcloud prints one element per top-level "{" at indentation 0-2: a place to
# resynchronise after a malformed element.
_ELEMENT_START_RE = re.compile(r"\n {0,2}\{")


@dataclass(frozen=True)
class FileOptions:
    """How to read bare payload files (which carry no logName)."""

    run_name: str | None = None
    project: str = "local"
    batch_size: int = 250_000
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
    def _open_binary(self) -> IO[bytes]:
        """The file's bytes, gunzipped if it starts with the gzip magic; counts what it reads."""
        raw = open(self.path, "rb")
        head = raw.read(2)
        raw.seek(0)
        self._counter = _CountingReader(raw)
        if head == GZIP_MAGIC:
            return io.BufferedReader(gzip.GzipFile(fileobj=self._counter, mode="rb"))  # type: ignore[arg-type]
        return io.BufferedReader(self._counter)

    def _open_text(self) -> IO[str]:
        return io.TextIOWrapper(self._open_binary(), encoding="utf-8", errors="strict", newline="\n")

    @property
    def bytes_read(self) -> int:
        return self._counter.count if self._counter else 0

    def _first_byte(self) -> bytes:
        """The first byte that is not ASCII whitespace (b"" for a blank file); decides the shape."""
        with self._open_binary() as binary:
            while True:
                block = binary.read(1 << 16)
                if not block:
                    return b""
                stripped = block.lstrip()
                if stripped:
                    return stripped[:1]

    # -- batches ---------------------------------------------------------
    def batches(self) -> Iterator[Batch]:
        """Yield batches; the last one carries the final cursor even if empty."""
        try:
            first = self._first_byte()
        except (EOFError, zlib.error, gzip.BadGzipFile):
            first = b"{"  # let the NDJSON reader report the corrupt stream where it is
        if first == b"[":
            yield from self._array_batches()
        else:
            yield from self._ndjson_batches()

    def _empty_file(self) -> Rejection:
        return Rejection(f"{self.path}:0", "empty file: it holds no log entries", "")

    def _array_batches(self) -> Iterator[Batch]:
        """A gcloud JSON array, element by element through the per-entry path."""
        batch = Batch()
        record_no = 0
        try:
            with self._open_text() as text:
                prefix = self._read_prefix(text)
                for record_no, item in enumerate(self._json_array(text, prefix), start=1):
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
            batch.rejections.append(self._corrupt_gzip(record_no, exc))
        except UnicodeDecodeError as exc:
            batch.rejections.append(self._not_utf8(record_no, exc))
        batch.cursor = self._cursor(max(record_no, self.skip))
        batch.bytes_read = self.bytes_read
        yield batch

    def _corrupt_gzip(self, record_no: int, exc: Exception) -> Rejection:
        return Rejection(
            f"{self.path}:after-record-{record_no}",
            f"truncated or corrupt gzip stream after record {record_no}: {exc}; "
            "the records before it were loaded, nothing after it could be read",
            "",
        )

    def _not_utf8(self, record_no: int, exc: UnicodeDecodeError) -> Rejection:
        return Rejection(
            f"{self.path}:after-record-{record_no}",
            f"file is not UTF-8 text after record {record_no}: {exc}",
            "",
        )

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

        A gzip stream cannot seek back cheaply, so the JSON array parser
        continues from this prefix.
        """
        prefix = text.read(4096)
        while prefix and not prefix.strip():
            more = text.read(1 << 16)
            if not more:
                return ""
            prefix += more
        return prefix

    # -- NDJSON ----------------------------------------------------------
    def _blocks(self) -> Iterator[tuple[bytes, Exception | None]]:
        """Whole lines of the file, about _BLOCK_BYTES at a time (the last may lack its newline).

        Reads in small pieces so that a gzip error loses at most one piece:
        the lines before it come first, paired with the error, and end the stream.
        """
        carry = b""
        with self._open_binary() as binary:
            while True:
                pieces = [carry]
                size = len(carry)
                error: Exception | None = None
                eof = False
                while size < _BLOCK_BYTES or b"\n" not in pieces[-1]:
                    try:
                        piece = binary.read(_PIECE_BYTES)
                    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
                        error = exc
                        break
                    if not piece:
                        eof = True
                        break
                    pieces.append(piece)
                    size += len(piece)
                data = b"".join(pieces)
                if error is not None:
                    yield data[: data.rfind(b"\n") + 1], error
                    return
                if eof and size == len(carry):
                    if carry:
                        yield carry, None
                    return
                cut = data.rfind(b"\n") + 1
                if cut:
                    yield data[:cut], None
                carry = data[cut:]

    def _ndjson_batches(self) -> Iterator[Batch]:
        """NDJSON through the vectorised screen; what it cannot vouch for, line by line."""
        self.shape = "ndjson"
        screen = Screen()
        self._records = 0
        self._line_no = 0
        failure: Exception | None = None  # what ended the stream early: gzip or UTF-8
        pending = pa.chunked_array([], pa.large_string())  # lines not yet batched (slices, never copied)
        size = self.options.batch_size
        try:
            for data, error in self._blocks():
                try:
                    data.decode("utf-8")
                except UnicodeDecodeError as exc:
                    data, failure = data[: data.rfind(b"\n", 0, exc.start) + 1], exc
                else:
                    failure = error
                if data:
                    pending = pa.chunked_array([*pending.chunks, _split_lines(data)])
                while len(pending) >= size or (failure is not None and len(pending)):
                    lines, pending = pending.slice(0, size), pending.slice(size)
                    batch = self._ndjson_batch(screen, lines)
                    if len(batch):
                        yield batch
                if failure is not None:
                    break
            if len(pending):
                batch = self._ndjson_batch(screen, pending)
                if len(batch):
                    yield batch
        finally:
            screen.close()
        batch = Batch()
        if isinstance(failure, UnicodeDecodeError):
            batch.rejections.append(self._not_utf8(self._records, failure))
        elif failure is not None:
            batch.rejections.append(self._corrupt_gzip(self._records, failure))
        elif self._records == 0 and self.skip == 0:
            self.shape = "empty"
            batch.rejections.append(self._empty_file())
        batch.cursor = self._cursor(max(self._records, self.skip))
        batch.bytes_read = self.bytes_read
        yield batch

    def _ndjson_batch(self, screen: Screen, lines: pa.ChunkedArray) -> Batch:
        """One batch of lines: screened rows, then the others in line order through entries.py."""
        first_line_no = self._line_no + 1
        self._line_no += len(lines)
        screened = screen.run(lines, first_line_no)
        accepted = screened.accepted
        texts = {i: lines[i].as_py() for i in screened.others}
        is_record = np.ones(len(lines), dtype=bool)
        for i, text in texts.items():
            is_record[i] = bool(text.strip())
        record_nos = self._records + np.cumsum(is_record)
        self._records = int(record_nos[-1]) if len(lines) else self._records
        kept_lines = accepted.column("line_no").to_numpy() if accepted.num_rows else np.empty(0, np.int64)
        if self.skip and record_nos[0] <= self.skip:
            keep = record_nos[kept_lines - first_line_no] > self.skip
            accepted = accepted.filter(pa.array(keep))
            kept_lines = kept_lines[keep]
        kept_ts = accepted.column("timestamp_us").to_numpy() if accepted.num_rows else np.empty(0, np.int64)

        batch = Batch(entry_table=accepted.drop_columns(["line_no"]))
        last_python: tuple[int, int] | None = None  # (line_no, timestamp_us) of the latest accepted here
        for i, text in texts.items():
            if not is_record[i] or record_nos[i] <= self.skip:
                continue
            line_no = first_line_no + i
            before = int(np.searchsorted(kept_lines, line_no)) - 1
            if before >= 0 and (last_python is None or kept_lines[before] > last_python[0]):
                self.previous_timestamp_us = int(kept_ts[before])
            elif last_python is not None:
                self.previous_timestamp_us = last_python[1]
            item = self._ndjson_record(text, line_no)
            if isinstance(item, LandedEntry):
                batch.entries.append(item)
                last_python = (line_no, item.timestamp_us)
            else:
                batch.rejections.append(item)
        if kept_lines.size and (last_python is None or kept_lines[-1] > last_python[0]):
            self.previous_timestamp_us = int(kept_ts[-1])
        elif last_python is not None:
            self.previous_timestamp_us = last_python[1]
        batch.cursor = self._cursor(max(self._records, self.skip))
        batch.bytes_read = self.bytes_read
        return batch

    def _ndjson_record(self, line: str, line_no: int) -> LandedEntry | Rejection:
        location = f"{self.path}:{line_no}"
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            return Rejection(location, f"invalid JSON: {exc}", truncate_raw(line.rstrip("\n")))
        return self._convert(obj, location, line_no, line)

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


def _split_lines(data: bytes) -> pa.LargeStringArray:
    """The lines of ``data`` (each with its newline) as one Arrow array, without a Python loop."""
    ends = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10) + 1
    if len(data) and (not ends.size or ends[-1] != len(data)):
        ends = np.append(ends, len(data))
    offsets = np.concatenate([[0], ends]).astype(np.int64)
    return pa.LargeStringArray.from_buffers(len(ends), pa.py_buffer(offsets), pa.py_buffer(data))


def expand_paths(paths: list[str]) -> list[Path]:
    """Files as given, directories expanded to their files (sorted), for ``load DIR``.

    A file named twice (``load DIR DIR/a.ndjson``) is read once: it has one
    cursor, and every cursor is read before the first file is.
    """
    result: dict[Path, Path] = {}
    for name in paths:
        path = Path(name)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith("."))
        elif path.exists():
            found = [path]
        else:
            raise SourceError(f"{name}: no such file or directory")
        for file in found:
            result.setdefault(file.resolve(), file)
    return list(result.values())
