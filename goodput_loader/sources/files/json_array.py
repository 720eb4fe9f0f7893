"""gcloud JSON arrays: what ``gcloud logging read --format=json`` prints.

Such a dump can be gigabytes, so it is never loaded whole: a hand-written
streaming parser reads it a megabyte of text at a time and decodes one
element at a time with ``json.JSONDecoder.raw_decode``. A malformed element
is rejected alone (with its line) and the parser resynchronises at the next
element gcloud starts at the line's beginning, instead of giving up the rest
of the file. Elements go through ``entries.py`` one by one: arrays are rare
and small next to NDJSON, which has the vectorised path.

An array cannot grow (its last byte is ``]``), so it is read whole; a load
stopped half-way skips, next time, the elements it committed if the file
hashes the same.
"""

from __future__ import annotations

import io
import json
import re
from dataclasses import replace
from typing import IO, TYPE_CHECKING, Iterator

from goodput_loader.entries import LandedEntry, Rejection, truncate_raw
from goodput_loader.sinks.base import Batch
from goodput_loader.sources.files.state import hash_prefix

if TYPE_CHECKING:
    from goodput_loader.sources.files.reader import FileReader

_CHUNK_CHARS = 1 << 20
_MAX_ELEMENT_CHARS = 16 << 20
# gcloud prints one element per top-level "{" at indentation 0-2: a place to
# resynchronise after a malformed element.
_ELEMENT_START_RE = re.compile(r"\n {0,2}\{")


class JsonArrayReader:
    """Reads one JSON array file into batches; what it shares with other formats is ``file``'s."""

    def __init__(self, file: FileReader):
        self.file = file
        self.path = file.path
        self.options = file.options
        self._line_no = 1  # the line the parser has reached

    def batches(self) -> Iterator[Batch]:
        """A gcloud JSON array, element by element through the per-entry path.

        An array is read whole: it cannot grow (its last byte is ``]``). After
        a load stopped half-way, the same file skips the elements committed.
        """
        file = self.file
        file.shape = "json_array"
        with open(self.path, "rb") as raw:
            digest, _ = hash_prefix(raw, file.size)
        sha256 = digest.hexdigest()
        skip = 0
        cursor, before = file.cursor, file.before
        if cursor is not None and before is not None and before.kind == "whole" \
                and before.sha256 == sha256:  # the same array: skip what a stopped load committed
            skip = cursor.offset or 0
            file.previous_timestamp_us = cursor.timestamp_us
        state = file.state("whole", file.size, 0, sha256, complete=False)
        batch = Batch()
        record_no = 0
        with io.TextIOWrapper(file.open_binary(), encoding="utf-8-sig", errors="surrogateescape",
                              newline="\n") as text:
            prefix = self._read_prefix(text)
            for record_no, item in enumerate(self._elements(text, prefix), start=1):
                if record_no <= skip:
                    continue
                if isinstance(item, LandedEntry):
                    batch.entries.append(item)
                    file.previous_timestamp_us = item.timestamp_us
                else:
                    batch.rejections.append(item)
                if len(batch) >= self.options.batch_size:
                    batch.cursor = file.new_cursor(record_no, state)
                    batch.bytes_read = file.bytes_read
                    yield batch
                    batch = Batch()
            batch.rejections.extend(file.stream_problem(self._line_no))
        batch.cursor = file.new_cursor(max(record_no, skip), replace(state, complete=True))
        batch.bytes_read = file.bytes_read
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

    def _elements(self, text: IO[str], prefix: str) -> Iterator[LandedEntry | Rejection]:
        """The array's elements in order; ``self._line_no`` is the line reached.

        ``text`` decodes with surrogateescape, so bytes that are not UTF-8 reject
        the element holding them instead of ending the file.
        """
        self.file.shape = "json_array"
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
                yield self.file.convert(obj, location, line_no_start, raw)
        finally:
            self._line_no = line_no


def _printable(text: str) -> str:
    """``text`` with the bytes that were not UTF-8 (surrogate escapes) shown as U+FFFD."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
