"""One file: which format it holds, and what every format reader shares.

``FileReader`` stats the file (an unchanged one is not opened), picks the
format from its first byte (``[``: a gcloud JSON array, else NDJSON) and
hands over to ``ndjson.NdjsonReader`` or ``json_array.JsonArrayReader``. What
those have in common stays here: the opened byte stream and its damage, the
cursor each batch commits with, and the conversion of one parsed record into
a landed entry or a rejection (LogEntry or bare recorder payload alike).
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Iterator

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
from goodput_loader.sinks.base import BATCH_LINES, Batch, Cursor
from goodput_loader.sources.files.gzip_stream import GzipStream
from goodput_loader.sources.files.json_array import JsonArrayReader
from goodput_loader.sources.files.ndjson import UTF8_BOM, NdjsonReader
from goodput_loader.sources.files.state import FileState


@dataclass(frozen=True)
class FileOptions:
    """How to read bare payload files (which carry no logName)."""

    run_name: str | None = None
    project: str = "local"
    batch_size: int = BATCH_LINES
    rescan: bool = False


def source_key(path: Path) -> str:
    """The file's key in load_state: its absolute path, so `load DIR` and `load DIR/f` share one cursor."""
    return f"file:{path.resolve()}"


class FileReader:
    """Reads one file into batches of landed entries and rejections.

    The format readers share its state: ``previous_timestamp_us`` (the last
    landed entry's time, which the cursor keeps and a bare payload without a
    time of its own takes) and ``shape`` (what the load summary reports).
    """

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
        self._stream: GzipStream | None = None

    # -- opening ---------------------------------------------------------
    def open_binary(self) -> IO[bytes]:
        """The file's bytes, gunzipped if it starts with the gzip magic; counts what it reads."""
        self._stream = GzipStream(open(self.path, "rb"))
        return io.BufferedReader(self._stream)  # type: ignore[arg-type]

    @property
    def bytes_read(self) -> int:
        return self._stream.raw_count if self._stream else 0

    def _first_byte(self) -> bytes:
        """The first byte that is not a BOM or ASCII whitespace (b"" if none); decides the shape."""
        with self.open_binary() as binary:
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
            yield from JsonArrayReader(self).batches()
        else:
            yield from NdjsonReader(self).batches()

    def empty_file(self) -> Rejection:
        """An empty file is rejected, so that a load of the wrong file does not pass in silence."""
        return Rejection(f"{self.path}:0", "empty file: it holds no log entries", "")

    def stream_problem(self, line_no: int) -> list[Rejection]:
        """The gzip stream's damage, if any, as one rejection placed after the last line read."""
        problem = self._stream.problem if self._stream else None
        return [Rejection(f"{self.path}:after-line-{line_no}", problem, "")] if problem else []

    def state(self, kind: str, consumed: int, lines: int, sha256: str, *, complete: bool,
              tail: bool = False) -> FileState:
        """The FileState of this file after ``consumed`` bytes (the stat is the one taken at the start)."""
        return FileState(kind, consumed, lines, sha256, self.size, self.mtime_ns, complete, tail)

    def new_cursor(self, records: int, state: FileState) -> Cursor:
        """The cursor a batch commits with: ``records`` landed or rejected so far, and the file's state."""
        return Cursor(
            source_key=self.key,
            timestamp_us=self.previous_timestamp_us,
            offset=records,
            fingerprint=state.dumps(),
        )

    # -- records, whatever the format ---------------------------------
    def convert(self, obj: object, location: str, line_no: int, raw: str) -> LandedEntry | Rejection:
        """A parsed record (a LogEntry, or a bare payload of the --run run) as an entry, or why not."""
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
