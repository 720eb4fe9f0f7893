"""What a load remembers of a file, so that the next load reads only what is new.

The state is stored as JSON in the source's cursor (``load_state.fingerprint``)
and commits with every batch: an unchanged file then costs a stat, a grown
NDJSON file resumes after its last landed line once the bytes before it hash
the same, and any other change is read again from the start (deduplication
keeps that idempotent).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from typing import IO

from goodput_loader.sources.files.gzip_stream import PIECE_BYTES


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


def hash_prefix(stream: IO[bytes], length: int) -> tuple[hashlib._Hash, int]:
    """The sha256 of the next ``length`` bytes of ``stream``, and how many there were."""
    digest = hashlib.sha256()
    left = length
    while left > 0:
        piece = stream.read(min(left, PIECE_BYTES * 16))
        if not piece:
            break
        digest.update(piece)
        left -= len(piece)
    return digest, length - left
