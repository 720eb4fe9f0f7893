"""A file's bytes, gunzipped member by member when it is gzip.

Exports are gzip or not whatever their name says, so the magic bytes decide.
Python's gzip module is not used because of what it does with a damaged
stream: it raises, and loses what it had decompressed but not yet returned.
A live export cut short mid-write would then lose its last complete lines.
This stream never raises for damage; it ends, and says what was wrong, so
the format readers can land every complete line and reject the damage as
one record.
"""

from __future__ import annotations

import io
import zlib
from typing import IO, Any

GZIP_MAGIC = b"\x1f\x8b"
PIECE_BYTES = 64 << 10  # one read from disk


class GzipStream(io.RawIOBase):
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
        piece = self.raw.read(PIECE_BYTES)
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
            self._output = inflater.decompress(data, PIECE_BYTES * 16)
        except zlib.error as exc:
            self._end(f"corrupt gzip data ({exc}); every complete line before it was loaded, "
                      "nothing after it could be read")
            return
        if inflater.eof:
            self._input, self._decompressor = inflater.unused_data, None

    def close(self) -> None:
        self.raw.close()
        super().close()
