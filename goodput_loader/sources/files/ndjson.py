"""NDJSON files: one LogEntry (or bare recorder payload) per line.

Most input is NDJSON, so this is the fast path: lines are cut into Arrow
arrays without a Python loop, and the vectorised screen
(``sources/vectorized.py``) lands in bulk every line it can vouch for; only
the rest goes line by line through ``entries.py``, which accepts it or says
why not. Every line keeps its number, so a rejection names ``file:line``.

An NDJSON file can grow while it is loaded (a live export), so this reader
also resumes after the lines an earlier load consumed (once their bytes hash
the same), reads a last line without its newline again when the file grows,
and rejects a line that is not UTF-8 alone instead of the whole file.
"""

from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor
from typing import IO, TYPE_CHECKING, Iterator

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from goodput_loader.entries import LandedEntry, Rejection, truncate_raw
from goodput_loader.sinks.base import Batch
from goodput_loader.sources.files.gzip_stream import PIECE_BYTES
from goodput_loader.sources.files.state import hash_prefix
from goodput_loader.sources.vectorized import Screen

if TYPE_CHECKING:
    from goodput_loader.sources.files.reader import FileReader

UTF8_BOM = b"\xef\xbb\xbf"
_BLOCK_BYTES = 16 << 20


class NdjsonReader:
    """Reads one NDJSON file into batches; what it shares with other formats is ``file``'s."""

    def __init__(self, file: FileReader):
        self.file = file
        self.path = file.path
        self.options = file.options
        self._digest = hashlib.sha256()  # of the bytes consumed, which the cursor's FileState keeps
        self._consumed = 0  # bytes (after gunzip) in complete lines batched so far
        self._records = 0  # lines that are records (not blank), for the cursor's offset
        self._line_no = 0  # the last line batched
        self._retract: list[str] = []  # rejections of an earlier load to withdraw (see _resume)
        self._undecodable: dict[int, Rejection] = {}  # line number -> its rejection

    @staticmethod
    def _blocks(binary: IO[bytes]) -> Iterator[bytes]:
        """Whole lines of the file, about _BLOCK_BYTES at a time; the last block may end without a newline."""
        carry = b""
        while True:
            pieces = [carry]
            size = len(carry)
            while size < _BLOCK_BYTES or b"\n" not in pieces[-1]:
                piece = binary.read(PIECE_BYTES)
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
        before = self.file.before
        if before is None or before.kind != "lines" or self.file.cursor is None:
            return binary
        digest, length = hash_prefix(binary, before.consumed)
        if length != before.consumed or digest.hexdigest() != before.sha256:
            binary.close()
            return self.file.open_binary()
        self._digest, self._consumed = digest, length
        self._line_no, self._records = before.lines, self.file.cursor.offset or 0
        self.file.previous_timestamp_us = self.file.cursor.timestamp_us
        if before.tail:  # the last line had no newline: its rejection, if any, is decided again
            self._retract.append(f"{self.path}:{before.lines + 1}")
        return binary

    def batches(self) -> Iterator[Batch]:
        """NDJSON through the vectorised screen; what it cannot vouch for, line by line."""
        self.file.shape = "ndjson"
        screen = Screen()
        pending = pa.chunked_array([], pa.large_string())  # lines not yet batched (slices, never copied)
        size = self.options.batch_size
        tail = b""
        binary = self._resume(self.file.open_binary())
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
                    pending = pa.chunked_array([*pending.chunks, split_lines(data)])
                while len(pending) >= size:
                    lines, pending = pending.slice(0, size), pending.slice(size)
                    batch = self._batch(screen, lines)
                    if len(batch) or batch.retract:
                        yield batch
            batch = self._batch(screen, pending) if len(pending) else Batch()
            last = self._tail(tail)
            if isinstance(last, LandedEntry):
                batch.entries.append(last)
            elif last is not None:
                batch.rejections.append(last)
            batch.rejections.extend(self.file.stream_problem(self._line_no))
            batch.retract.extend(self._retract)
            self._retract.clear()
        finally:
            screen.close()
            binary.close()
        has_tail = bool(tail.strip())
        if self._records == 0 and not resumed and not has_tail and not len(batch.rejections):
            self.file.shape = "empty"
            batch.rejections.append(self.file.empty_file())
        state = self.file.state("lines", self._consumed, self._line_no, self._digest.hexdigest(),
                                complete=True, tail=has_tail)
        batch.cursor = self.file.new_cursor(self._records, state)
        batch.bytes_read = self.file.bytes_read
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
        previous = self.file.previous_timestamp_us
        item = self._record(text, line_no)
        self.file.previous_timestamp_us = previous  # the cursor stays before this line
        if isinstance(item, LandedEntry):
            return item
        return Rejection(location, f"last line, which has no newline (the file may still be being written; "
                                   f"it is read again when the file grows): {item.reason}", item.raw)

    def _batch(self, screen: Screen, lines: pa.ChunkedArray) -> Batch:
        """One batch of lines and the cursor after it.

        The cursor's hash of the batch's bytes runs beside the screen (hashlib releases the GIL): in line
        it was 0.8 s of a 17 s load of L, on the thread every batch waits for."""
        first_line_no = self._line_no + 1
        self._line_no += len(lines)
        with ThreadPoolExecutor(1, thread_name_prefix="goodput-hash") as hasher:  # waits for it on the way out
            hashed = hasher.submit(self._hash, lines)
            batch = self._entries(screen, lines, first_line_no)
            hashed.result()  # raises what the hash raised: no cursor of bytes it did not hash
        state = self.file.state("lines", self._consumed, self._line_no, self._digest.hexdigest(), complete=False)
        batch.cursor = self.file.new_cursor(self._records, state)
        batch.bytes_read = self.file.bytes_read
        return batch

    def _entries(self, screen: Screen, lines: pa.ChunkedArray, first_line_no: int) -> Batch:
        """The batch's screened rows, then the others in line order through entries.py."""
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
                self.file.previous_timestamp_us = int(kept_ts[before])
            elif last_python is not None:
                self.file.previous_timestamp_us = last_python[1]
            item = self._record(text, line_no)
            if isinstance(item, LandedEntry):
                batch.entries.append(item)
                last_python = (line_no, item.timestamp_us)
            else:
                batch.rejections.append(item)
        if kept_lines.size and (last_python is None or kept_lines[-1] > last_python[0]):
            self.file.previous_timestamp_us = int(kept_ts[-1])
        elif last_python is not None:
            self.file.previous_timestamp_us = last_python[1]
        return batch

    def _hash(self, lines: pa.ChunkedArray) -> None:
        """Add the bytes of ``lines`` to the digest of everything consumed."""
        for view in line_bytes(lines):
            self._digest.update(view)
            self._consumed += len(view)

    def _record(self, line: str, line_no: int) -> LandedEntry | Rejection:
        location = f"{self.path}:{line_no}"
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            return Rejection(location, f"invalid JSON: {exc}", truncate_raw(line.rstrip("\n")))
        return self.file.convert(obj, location, line_no, line)


def line_bytes(lines: pa.ChunkedArray) -> Iterator[memoryview]:
    """The bytes of ``lines`` as they were in the file, one view per chunk (no copy)."""
    for chunk in lines.chunks:
        data = chunk.buffers()[2]
        if not len(chunk) or data is None:
            continue
        offsets = np.frombuffer(chunk.buffers()[1], dtype=np.int64, count=len(chunk) + 1, offset=chunk.offset * 8)
        yield memoryview(data)[int(offsets[0]):int(offsets[-1])]


def split_lines(data: bytes) -> pa.LargeStringArray:
    """The lines of ``data`` (each with its newline) as one Arrow array, without a Python loop."""
    ends = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10) + 1
    if len(data) and (not ends.size or ends[-1] != len(data)):
        ends = np.append(ends, len(data))
    offsets = np.concatenate([[0], ends]).astype(np.int64)
    return pa.LargeStringArray.from_buffers(len(ends), pa.py_buffer(offsets), pa.py_buffer(data))
