"""The columnar form of landed entries that sources hand to sinks.

Sinks write Arrow tables (one C-level copy into DuckDB, one load job into
BigQuery). A source can produce that table directly (the vectorised NDJSON
screen does) or as ``LandedEntry`` objects (the per-entry path); both meet
here, in one schema, so a sink never needs to know which path a row took.
"""

from __future__ import annotations

from typing import Sequence

import pyarrow as pa

from goodput_loader.entries import LandedEntry

ENTRY_SCHEMA = pa.schema(
    [
        ("log_name", pa.string()),
        ("run_name", pa.string()),
        ("insert_id", pa.string()),
        ("timestamp_us", pa.int64()),
        ("receive_timestamp_us", pa.int64()),
        ("severity", pa.string()),
        ("payload", pa.string()),
        ("job_name_matches", pa.bool_()),
    ]
)


def entries_table(entries: Sequence[LandedEntry]) -> pa.Table:
    """Landed entries as one Arrow table in ENTRY_SCHEMA."""
    return pa.Table.from_pydict(
        {name: [getattr(e, name) for e in entries] for name in ENTRY_SCHEMA.names},
        schema=ENTRY_SCHEMA,
    )


def combine(table: pa.Table | None, entries: Sequence[LandedEntry]) -> pa.Table:
    """A pre-built table and per-entry rows, as one table."""
    parts = [table] if table is not None else []
    if entries:
        parts.append(entries_table(entries))
    if not parts:
        return ENTRY_SCHEMA.empty_table()
    if len(parts) == 1:
        return parts[0]
    return pa.concat_tables(parts)
