"""The contract every warehouse sink honours.

A sink writes one batch at a time, and a batch is all-or-nothing: its entries,
its rejections and the source's new cursor commit together or not at all. That
single rule is what makes a load that is killed at any point and run again end
with exactly the table an uninterrupted load would have produced: whatever
committed is deduplicated on ``(log_name, timestamp, insert_id)`` when it is
met again, and whatever did not commit is read again from the old cursor.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from goodput_loader.entries import LandedEntry, Rejection

if TYPE_CHECKING:  # Arrow comes with the first batch: report and push read the marts without it
    import pyarrow as pa

# DuckDB's row group: the unit it scans per thread and writes per column segment.
DUCKDB_ROW_GROUP_ROWS = 122_880
# Lines a file source puts in one batch (one transaction) unless told otherwise: two whole row groups.
# A batch that commits whole row groups adds whole row groups to the table; one of 250,000 lines left a
# 4,240-row group behind at every commit, which DuckDB's final checkpoint then merged: 1.1-1.3 s of a
# 17 s load of L's 3.3M lines, 0.35 s with whole ones. Two, not one: the screen's temp table is scanned
# one row group per thread (sources/vectorized.py), so a batch of one keeps a core idle.
BATCH_LINES = 2 * DUCKDB_ROW_GROUP_ROWS


@dataclass(frozen=True)
class Cursor:
    """How far one source has been landed.

    ``timestamp_us``/``insert_id`` are the last landed entry in
    ``(timestamp, insertId)`` order (Cloud Logging sources resume strictly after
    it); ``offset`` counts the records of a file already committed and
    ``fingerprint`` identifies that file's content, so a grown export resumes
    where it stopped and a rewritten one is read from the start.
    """

    source_key: str
    timestamp_us: int | None = None
    insert_id: str | None = None
    offset: int | None = None
    fingerprint: str | None = None
    entries_landed: int = 0


@dataclass
class Batch:
    """What a source hands the sink to commit at once: entries, rejections, the new cursor.

    Entries come as ``LandedEntry`` objects, as an Arrow table already in
    ``columns.ENTRY_SCHEMA`` (the vectorised NDJSON screen), or both.
    ``bytes_read`` (files) is how far into the input the batch ends, for progress.
    ``retract`` names locations whose earlier rejection no longer holds (a file's
    last line rejected while half-written, read again): the sink deletes those
    rejections before it writes the batch's own, in the same transaction.
    """

    entries: list[LandedEntry] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)
    cursor: Cursor | None = None
    bytes_read: int | None = None
    entry_table: pa.Table | None = None
    retract: list[str] = field(default_factory=list)
    reread: bool = False  # entries read again behind the cursor: what lands of them arrived late

    @property
    def entry_count(self) -> int:
        table_rows = self.entry_table.num_rows if self.entry_table is not None else 0
        return len(self.entries) + table_rows

    def table(self) -> pa.Table:
        """Every entry of the batch as one Arrow table in ENTRY_SCHEMA."""
        from goodput_loader.columns import combine

        return combine(self.entry_table, self.entries)

    def __len__(self) -> int:
        return self.entry_count + len(self.rejections)


@dataclass(frozen=True)
class BatchResult:
    """What one committed batch changed."""

    inserted: int
    duplicates: int
    rejected: int
    # of those, the ones not on record before (input read again meets its old rejections);
    # None when the sink cannot tell
    new_rejections: int | None = None


class Sink(Protocol):
    """A warehouse target: DuckDB (warehouses/duckdb.py) or BigQuery (warehouses/bigquery.py)."""

    def get_cursor(self, source_key: str) -> Cursor | None:
        """The committed cursor of a source, or None if it was never loaded."""

    def write_batch(self, source: str, batch: Batch) -> BatchResult:
        """Land a batch's entries and rejections and move its cursor, atomically."""

    def close(self) -> None:
        """Release the connection."""
