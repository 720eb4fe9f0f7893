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

One module per job:

* ``reader.py``: one file: stat, cursor, format detection, record conversion;
* ``ndjson.py``: NDJSON, through the vectorised screen;
* ``json_array.py``: gcloud JSON arrays, with a streaming parser;
* ``gzip_stream.py``: gzip, member by member, keeping what a damaged stream held;
* ``state.py``: what a cursor remembers of a file (``FileState``);
* here: the directory walk of ``load DIR``.
"""

from __future__ import annotations

from pathlib import Path

from goodput_loader.errors import SourceError
from goodput_loader.sources.files.reader import FileOptions, FileReader, source_key
from goodput_loader.sources.files.state import FileState

__all__ = ["FileOptions", "FileReader", "FileState", "expand_paths", "source_key"]


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
