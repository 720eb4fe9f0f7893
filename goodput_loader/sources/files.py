"""Exported log files: the shapes users actually have on disk.

Accepted, gzip or not (detected from the magic bytes, not the name):

* NDJSON of LogEntry objects, as the Logging REST API returns them;
* the JSON array ``gcloud logging read --format=json`` prints (streamed, never
  loaded whole);
* NDJSON of bare recorder payloads, like the library's local timeline cache;
  their run is named by ``--run``.

Every line or element either becomes a ``LandedEntry`` or a ``Rejection`` that
names the file and line, so nothing is dropped silently: a line that is not
UTF-8 is rejected alone, a gzip stream that is cut short or followed by other
bytes gives up every line it holds first. The reader yields batches with a
cursor that commits with them (see ``FileState``): an unchanged file costs a
stat, a grown NDJSON file resumes after the last complete line it landed once
the bytes before it are proven unchanged, and any other change is read again
from the start (deduplication keeps that idempotent).
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import zlib
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import IO, Any, Iterator

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc

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
UTF8_BOM = b"\xef\xbb\xbf"
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


@dataclass(frozen=True)
class FileState:
    """What a cursor remembers of a file, stored as JSON in ``load_state.fingerprint``.

    ``size``/``mtime_ns`` are the file's stat when it was read: the same stat
    means nothing new, so the file is not opened at all. ``consumed`` bytes
    (after gunzip; for a JSON array, the whole raw file) hash to ``sha256``:
    an NDJSON file resumes after them only if they are unchanged, so a file
    rewritten anywhere before the cursor is read again whole. ``lines`` is
    where line numbers continue. ``tail`` says a last line without its newline
    was read (landed or rejected) but not consumed: it is read again with what
    follows, and its old rejection is withdrawn if it now lands.
    """

    kind: str  # "lines" (NDJSON) or "whole" (a JSON array)
    consumed: int
    lines: int
    sha256: str
    size: int
    mtime_ns: int
    complete: bool = False  # read to the end (a cursor of a load stopped half-way is not)
    tail: bool = False

    def dumps(self) -> str:
        return json.dumps({"v": 2, **asdict(self)}, separators=(",", ":"))

    @classmethod
    def loads(cls, text: str | None) -> FileState | None:
        """The state in a cursor, or None for none or an older format (read the file again)."""
        try:
            data = json.loads(text) if text else None
            if not isinstance(data, dict) or data.pop("v", None) != 2:
                return None
            return cls(**data)
        except (ValueError, TypeError):
            return None


def _hash_prefix(stream: IO[bytes], length: int) -> tuple[hashlib._Hash, int]:
    """The sha256 of the next ``length`` bytes of ``stream``, and how many there were."""
    digest = hashlib.sha256()
    left = length
    while left > 0:
        piece = stream.read(min(left, _PIECE_BYTES * 16))
        if not piece:
            break
        digest.update(piece)
        left -= len(piece)
    return digest, length - left


class _Stream(io.RawIOBase):
    """The file's bytes, gunzipped member by member if it starts with the gzip magic.

    Python's gzip module raises on a damaged stream and loses what it had
    decompressed but not yet returned. This stream never raises for one: it
    returns every byte it could decompress, then ends, and ``problem`` says
    what was wrong (a member cut short, corrupt data, trailing bytes that are
    not gzip). ``raw_count`` counts the bytes read from disk, for progress.
    """

    def __init__(self, raw: IO[bytes]):
        super().__init__()
        self.raw = raw
        self.raw_count = 0
        self.problem: str | None = None
        self.gzipped = raw.read(2) == GZIP_MAGIC
        raw.seek(0)
        self._decompressor: Any = None
        self._input = b""
        self._output = b""
        self._eof = False

    def readable(self) -> bool:
        return True

    def _read_raw(self) -> bytes:
        piece = self.raw.read(_PIECE_BYTES)
        self.raw_count += len(piece)
        return piece

    def readinto(self, buffer: Any) -> int:
        if not self.gzipped:
            n = self.raw.readinto(buffer)  # type: ignore[attr-defined]
            self.raw_count += n or 0
            return n
        while not self._output and not self._eof:
            self._inflate()
        n = min(len(buffer), len(self._output))
        buffer[:n] = self._output[:n]
        self._output = self._output[n:]
        return n

    def _end(self, problem: str | None) -> None:
        self.problem, self._eof = problem, True
        while self._read_raw():  # count the rest as read, for progress
            pass

    def _inflate(self) -> None:
        if self._decompressor is None:  # between members
            while len(self._input) < 2:
                more = self._read_raw()
                if not more:
                    break
                self._input += more
            if not self._input:
                self._eof = True
                return
            if self._input[:2] != GZIP_MAGIC:
                ignored = len(self._input) + sum(len(p) for p in iter(self._read_raw, b""))
                self._end(f"{ignored:,} bytes after the end of the gzip data are not gzip and were ignored; "
                          "every line of the gzip data before them was loaded")
                return
            self._decompressor = zlib.decompressobj(wbits=31)
        inflater = self._decompressor
        data = inflater.unconsumed_tail or self._input or self._read_raw()
        self._input = b""
        if not data:
            self._output = inflater.flush()
            self._end("the gzip data is cut short (the file ends inside a gzip member); "
                      "every complete line before the cut was loaded")
            return
        try:
            self._output = inflater.decompress(data, _PIECE_BYTES * 16)
        except zlib.error as exc:
            self._end(f"corrupt gzip data ({exc}); every complete line before it was loaded, "
                      "nothing after it could be read")
            return
        if inflater.eof:
            self._input, self._decompressor = inflater.unused_data, None

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
        stat = self.path.stat()
        self.size, self.mtime_ns = stat.st_size, stat.st_mtime_ns
        self.cursor = None if options.rescan else cursor
        self.before = FileState.loads(self.cursor.fingerprint) if self.cursor else None
        # Read to the end last time and not touched since: nothing to read.
        self.unchanged = (
            self.before is not None
            and self.before.complete
            and (self.before.size, self.before.mtime_ns) == (self.size, self.mtime_ns)
        )
        self.previous_timestamp_us: int | None = None
        self.shape = "unchanged" if self.unchanged else "unknown"
        self._stream: _Stream | None = None

    # -- opening ---------------------------------------------------------
    def _open_binary(self) -> IO[bytes]:
        """The file's bytes, gunzipped if it starts with the gzip magic; counts what it reads."""
        self._stream = _Stream(open(self.path, "rb"))
        return io.BufferedReader(self._stream)  # type: ignore[arg-type]

    @property
    def bytes_read(self) -> int:
        return self._stream.raw_count if self._stream else 0

    def _first_byte(self) -> bytes:
        """The first byte that is not a BOM or ASCII whitespace (b"" if none); decides the shape."""
        with self._open_binary() as binary:
            start = True
            while True:
                block = binary.read(1 << 16)
                if not block:
                    return b""
                stripped = (block.removeprefix(UTF8_BOM) if start else block).lstrip()
                start = False
                if stripped:
                    return stripped[:1]

    # -- batches ---------------------------------------------------------
    def batches(self) -> Iterator[Batch]:
        """Yield batches; the last one carries the final cursor even if empty.

        An unchanged file yields nothing: it costs the stat done when the
        reader was made.
        """
        if self.unchanged:
            return
        try:
            first = self._first_byte()
        except OSError as exc:  # unreadable (permissions, a FIFO gone): this file only
            self.shape = "unreadable"
            yield Batch(rejections=[Rejection(f"{self.path}:unreadable", f"cannot read the file: {exc.strerror or exc}; "
                                              "the other files were loaded", "")])
            return
        if first == b"[":
            yield from self._array_batches()
        else:
            yield from self._ndjson_batches()

    def _empty_file(self) -> Rejection:
        return Rejection(f"{self.path}:0", "empty file: it holds no log entries", "")

    def _stream_problem(self, line_no: int) -> list[Rejection]:
        """The gzip stream's damage, if any, as one rejection placed after the last line read."""
        problem = self._stream.problem if self._stream else None
        return [Rejection(f"{self.path}:after-line-{line_no}", problem, "")] if problem else []

    def _state(self, kind: str, consumed: int, lines: int, sha256: str, *, complete: bool,
               tail: bool = False) -> FileState:
        return FileState(kind, consumed, lines, sha256, self.size, self.mtime_ns, complete, tail)

    def _cursor(self, records: int, state: FileState) -> Cursor:
        return Cursor(
            source_key=self.key,
            timestamp_us=self.previous_timestamp_us,
            offset=records,
            fingerprint=state.dumps(),
        )

    def _array_batches(self) -> Iterator[Batch]:
        """A gcloud JSON array, element by element through the per-entry path.

        An array is read whole: it cannot grow (its last byte is ``]``). After
        a load stopped half-way, the same file skips the elements committed.
        """
        self.shape = "json_array"
        with open(self.path, "rb") as raw:
            digest, _ = _hash_prefix(raw, self.size)
        sha256 = digest.hexdigest()
        skip = 0
        if self.cursor is not None and self.before is not None and self.before.kind == "whole" \
                and self.before.sha256 == sha256:  # the same array: skip what a stopped load committed
            skip = self.cursor.offset or 0
            self.previous_timestamp_us = self.cursor.timestamp_us
        state = self._state("whole", self.size, 0, sha256, complete=False)
        batch = Batch()
        record_no = 0
        with io.TextIOWrapper(self._open_binary(), encoding="utf-8-sig", errors="surrogateescape",
                              newline="\n") as text:
            prefix = self._read_prefix(text)
            for record_no, item in enumerate(self._json_array(text, prefix), start=1):
                if record_no <= skip:
                    continue
                if isinstance(item, LandedEntry):
                    batch.entries.append(item)
                    self.previous_timestamp_us = item.timestamp_us
                else:
                    batch.rejections.append(item)
                if len(batch) >= self.options.batch_size:
                    batch.cursor = self._cursor(record_no, state)
                    batch.bytes_read = self.bytes_read
                    yield batch
                    batch = Batch()
            batch.rejections.extend(self._stream_problem(self._array_line_no))
        batch.cursor = self._cursor(max(record_no, skip), replace(state, complete=True))
        batch.bytes_read = self.bytes_read
        yield batch

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
    @staticmethod
    def _blocks(binary: IO[bytes]) -> Iterator[bytes]:
        """Whole lines of the file, about _BLOCK_BYTES at a time; the last block may end without a newline."""
        carry = b""
        while True:
            pieces = [carry]
            size = len(carry)
            while size < _BLOCK_BYTES or b"\n" not in pieces[-1]:
                piece = binary.read(_PIECE_BYTES)
                if not piece:
                    data = b"".join(pieces)
                    if data:
                        yield data
                    return
                pieces.append(piece)
                size += len(piece)
            data = b"".join(pieces)
            cut = data.rfind(b"\n") + 1
            yield data[:cut]
            carry = data[cut:]

    def _resume(self, binary: IO[bytes]) -> IO[bytes]:
        """Continue after the lines a cursor consumed, if they are unchanged; else start again.

        The consumed bytes are hashed again (a read, no parse): a file changed
        anywhere before the cursor is read again whole, never resumed past an
        entry it did not land. Deduplication makes reading it again free of
        duplicates.
        """
        before = self.before
        if before is None or before.kind != "lines" or self.cursor is None:
            return binary
        digest, length = _hash_prefix(binary, before.consumed)
        if length != before.consumed or digest.hexdigest() != before.sha256:
            binary.close()
            return self._open_binary()
        self._digest, self._consumed = digest, length
        self._line_no, self._records = before.lines, self.cursor.offset or 0
        self.previous_timestamp_us = self.cursor.timestamp_us
        if before.tail:  # the last line had no newline: its rejection, if any, is decided again
            self._retract.append(f"{self.path}:{before.lines + 1}")
        return binary

    def _ndjson_batches(self) -> Iterator[Batch]:
        """NDJSON through the vectorised screen; what it cannot vouch for, line by line."""
        self.shape = "ndjson"
        screen = Screen()
        self._digest, self._consumed = hashlib.sha256(), 0
        self._records = 0
        self._line_no = 0
        self._retract: list[str] = []
        self._undecodable: dict[int, Rejection] = {}  # line number -> its rejection
        pending = pa.chunked_array([], pa.large_string())  # lines not yet batched (slices, never copied)
        size = self.options.batch_size
        tail = b""
        binary = self._resume(self._open_binary())
        resumed = self._consumed > 0
        at_start = not resumed  # a byte order mark can only be the file's first bytes
        try:
            for data in self._blocks(binary):
                if at_start and data.startswith(UTF8_BOM):
                    self._digest.update(UTF8_BOM)
                    self._consumed, data = len(UTF8_BOM), data[len(UTF8_BOM):]
                at_start = False
                if not data.endswith(b"\n"):  # the last line of the file, without its newline
                    cut = data.rfind(b"\n") + 1
                    data, tail = data[:cut], data[cut:]
                if data:
                    self._find_undecodable(data, self._line_no + len(pending) + 1)
                    pending = pa.chunked_array([*pending.chunks, _split_lines(data)])
                while len(pending) >= size:
                    lines, pending = pending.slice(0, size), pending.slice(size)
                    batch = self._ndjson_batch(screen, lines)
                    if len(batch) or batch.retract:
                        yield batch
            batch = self._ndjson_batch(screen, pending) if len(pending) else Batch()
            last = self._tail(tail)
            if isinstance(last, LandedEntry):
                batch.entries.append(last)
            elif last is not None:
                batch.rejections.append(last)
            batch.rejections.extend(self._stream_problem(self._line_no))
            batch.retract.extend(self._retract)
            self._retract.clear()
        finally:
            screen.close()
            binary.close()
        has_tail = bool(tail.strip())
        if self._records == 0 and not resumed and not has_tail and not len(batch.rejections):
            self.shape = "empty"
            batch.rejections.append(self._empty_file())
        state = self._state("lines", self._consumed, self._line_no, self._digest.hexdigest(),
                            complete=True, tail=has_tail)
        batch.cursor = self._cursor(self._records, state)
        batch.bytes_read = self.bytes_read
        yield batch

    def _find_undecodable(self, data: bytes, first_line_no: int) -> None:
        """Note each line of ``data`` that is not UTF-8: it is rejected alone, the others are read.

        One decode of the whole block in the common case; after a failure, the
        lines from there on are decoded one by one (linear, however many are bad).
        """
        try:
            data.decode("utf-8")
            return
        except UnicodeDecodeError as exc:
            position = data.rfind(b"\n", 0, exc.start) + 1
        line_no = first_line_no + data.count(b"\n", 0, position)
        while position < len(data):
            end = data.find(b"\n", position)
            end = len(data) if end < 0 else end
            line = data[position:end]
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as exc:
                self._undecodable[line_no] = Rejection(
                    f"{self.path}:{line_no}",
                    f"line is not UTF-8 text (byte 0x{line[exc.start]:02x} at column {exc.start + 1}); "
                    "export the log as UTF-8",
                    truncate_raw(line.decode("utf-8", "replace")),
                )
            position, line_no = end + 1, line_no + 1

    def _tail(self, tail: bytes) -> LandedEntry | Rejection | None:
        """The file's last line, which has no newline: landed if whole, else rejected.

        Either way it is not consumed: the next load reads it again with
        whatever the writer appended, so a line caught half-written lands
        once it is complete (its rejection is then withdrawn).
        """
        if not tail.strip():
            return None
        line_no = self._line_no + 1
        location = f"{self.path}:{line_no}"
        try:
            text = tail.decode("utf-8")
        except UnicodeDecodeError:
            self._find_undecodable(tail, line_no)
            return self._undecodable.pop(line_no)
        previous = self.previous_timestamp_us
        item = self._ndjson_record(text, line_no)
        self.previous_timestamp_us = previous  # the cursor stays before this line
        if isinstance(item, LandedEntry):
            return item
        return Rejection(location, f"last line, which has no newline (the file may still be being written; "
                                   f"it is read again when the file grows): {item.reason}", item.raw)

    def _ndjson_batch(self, screen: Screen, lines: pa.ChunkedArray) -> Batch:
        """One batch of lines: screened rows, then the others in line order through entries.py."""
        first_line_no = self._line_no + 1
        self._line_no += len(lines)
        for view in _line_bytes(lines):
            self._digest.update(view)
            self._consumed += len(view)
        undecodable = [n for n in self._undecodable if first_line_no <= n <= self._line_no]
        rejections = [self._undecodable.pop(n) for n in sorted(undecodable)]
        if rejections:  # the screen and the per-entry path see a blank line in their place
            mask = np.zeros(len(lines), dtype=bool)
            mask[np.array(undecodable) - first_line_no] = True
            lines = pc.if_else(pa.array(mask), pa.scalar("\n", pa.large_string()), lines)
        screened = screen.run(lines, first_line_no)
        accepted = screened.accepted
        texts = {i: lines[i].as_py() for i in screened.others}
        is_record = np.ones(len(lines), dtype=bool)
        for i, text in texts.items():
            is_record[i] = bool(text.strip())
        self._records += int(is_record.sum())
        kept_lines = accepted.column("line_no").to_numpy() if accepted.num_rows else np.empty(0, np.int64)
        kept_ts = accepted.column("timestamp_us").to_numpy() if accepted.num_rows else np.empty(0, np.int64)

        batch = Batch(entry_table=accepted.drop_columns(["line_no"]), rejections=rejections)
        if self._retract:
            batch.retract, self._retract = self._retract, []
        last_python: tuple[int, int] | None = None  # (line_no, timestamp_us) of the latest accepted here
        for i, text in texts.items():
            if not is_record[i]:
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
        state = self._state("lines", self._consumed, self._line_no, self._digest.hexdigest(), complete=False)
        batch.cursor = self._cursor(self._records, state)
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
        """The array's elements in order; ``self._array_line_no`` is the line reached.

        ``text`` decodes with surrogateescape, so bytes that are not UTF-8 reject
        the element holding them instead of ending the file.
        """
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

        try:
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
                    except (json.JSONDecodeError, RecursionError) as exc:
                        if isinstance(exc, json.JSONDecodeError):
                            if not eof and len(buf) - pos < _MAX_ELEMENT_CHARS and more():
                                continue
                            message, at = exc.msg, exc.pos
                        else:
                            message, at = "nested too deeply to be a log entry", pos
                        # Malformed element: reject it and resynchronise at the next element.
                        match = _ELEMENT_START_RE.search(buf, max(at, pos + 1))
                        while match is None and not eof and len(buf) - pos < _MAX_ELEMENT_CHARS and more():
                            match = _ELEMENT_START_RE.search(buf, pos + 1)
                        stop = match.start() + 1 if match else len(buf)
                        bad = buf[pos:stop]
                        tail = "" if match else "; the rest of the file could not be read"
                        yield Rejection(location, f"invalid JSON in array element {element}: {message}{tail}",
                                        truncate_raw(_printable(bad)))
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
                if _printable(raw) != raw:
                    yield Rejection(location, f"array element {element} is not UTF-8 text; export the log as UTF-8",
                                    truncate_raw(_printable(raw)))
                    continue
                yield self._convert(obj, location, line_no_start, raw)
        finally:
            self._array_line_no = line_no

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


def _printable(text: str) -> str:
    """``text`` with the bytes that were not UTF-8 (surrogate escapes) shown as U+FFFD."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _line_bytes(lines: pa.ChunkedArray) -> Iterator[memoryview]:
    """The bytes of ``lines`` as they were in the file, one view per chunk (no copy)."""
    for chunk in lines.chunks:
        data = chunk.buffers()[2]
        if not len(chunk) or data is None:
            continue
        offsets = np.frombuffer(chunk.buffers()[1], dtype=np.int64, count=len(chunk) + 1, offset=chunk.offset * 8)
        yield memoryview(data)[int(offsets[0]):int(offsets[-1])]


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
