"""DuckDB sink: the embedded default warehouse.

Batches arrive as Arrow tables (one C-level copy, no per-row Python inserts),
are deduplicated against the primary key with ``ON CONFLICT DO NOTHING``, and
commit in the same transaction as their rejections and the source cursor.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Sequence

import duckdb
import pyarrow as pa

from goodput_loader.entries import LandedEntry, Rejection
from goodput_loader.errors import SinkError
from goodput_loader.sinks.base import BatchResult, Cursor

RAW_SCHEMA = "goodput_raw"

DDL = f"""
create schema if not exists {RAW_SCHEMA};

create table if not exists {RAW_SCHEMA}.log_entries (
    log_name varchar not null,
    run_name varchar not null,
    insert_id varchar not null,
    "timestamp" timestamp not null,
    receive_timestamp timestamp,
    severity varchar not null,
    payload json not null,
    job_name_matches boolean not null,
    source varchar not null,
    loaded_at timestamp not null,
    primary key (log_name, "timestamp", insert_id)
);

create table if not exists {RAW_SCHEMA}.rejected_entries (
    source varchar not null,
    location varchar not null,
    reason varchar not null,
    raw varchar,
    rejected_at timestamp not null,
    primary key (source, location)
);

create table if not exists {RAW_SCHEMA}.load_state (
    source_key varchar primary key,
    cursor_timestamp timestamp,
    cursor_insert_id varchar,
    cursor_offset bigint,
    fingerprint varchar,
    entries_landed bigint not null,
    updated_at timestamp not null
);
"""

_ENTRY_SCHEMA = pa.schema(
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
_REJECTION_SCHEMA = pa.schema(
    [("location", pa.string()), ("reason", pa.string()), ("raw", pa.string())]
)


def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


def _entries_table(entries: Sequence[LandedEntry]) -> pa.Table:
    return pa.Table.from_pydict(
        {
            "log_name": [e.log_name for e in entries],
            "run_name": [e.run_name for e in entries],
            "insert_id": [e.insert_id for e in entries],
            "timestamp_us": [e.timestamp_us for e in entries],
            "receive_timestamp_us": [e.receive_timestamp_us for e in entries],
            "severity": [e.severity for e in entries],
            "payload": [e.payload for e in entries],
            "job_name_matches": [e.job_name_matches for e in entries],
        },
        schema=_ENTRY_SCHEMA,
    )


def _rejections_table(rejections: Sequence[Rejection]) -> pa.Table:
    return pa.Table.from_pydict(
        {
            "location": [r.location for r in rejections],
            "reason": [r.reason for r in rejections],
            "raw": [r.raw for r in rejections],
        },
        schema=_REJECTION_SCHEMA,
    )


def _ts(timestamp_us: int | None) -> dt.datetime | None:
    if timestamp_us is None:
        return None
    return dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=timestamp_us)


def _us(value: dt.datetime | None) -> int | None:
    if value is None:
        return None
    delta = value - dt.datetime(1970, 1, 1)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


class DuckDBSink:
    """Writes the raw layer into a DuckDB file (created if missing)."""

    def __init__(self, path: str | Path):
        self.path = str(path)
        try:
            self._con = duckdb.connect(self.path)
        except duckdb.IOException as exc:
            raise SinkError(
                f"cannot open DuckDB file {self.path}: {exc}. Is another process "
                "(a dbt build, a notebook) holding it open?"
            ) from exc
        self._con.execute("set timezone = 'UTC'")
        self._con.execute(DDL)

    @property
    def connection(self) -> duckdb.DuckDBPyConnection:
        return self._con

    def get_cursor(self, source_key: str) -> Cursor | None:
        row = self._con.execute(
            f"""select cursor_timestamp, cursor_insert_id, cursor_offset, fingerprint,
                       entries_landed
                from {RAW_SCHEMA}.load_state where source_key = ?""",
            [source_key],
        ).fetchone()
        if row is None:
            return None
        return Cursor(
            source_key=source_key,
            timestamp_us=_us(row[0]),
            insert_id=row[1],
            offset=row[2],
            fingerprint=row[3],
            entries_landed=row[4],
        )

    def write_batch(
        self,
        source: str,
        entries: Sequence[LandedEntry],
        rejections: Sequence[Rejection],
        cursor: Cursor | None,
    ) -> BatchResult:
        con = self._con
        now = _utcnow()
        con.begin()
        try:
            inserted = 0
            if entries:
                batch = _entries_table(entries)  # noqa: F841 - scanned by name below
                inserted = con.execute(
                    f"""insert into {RAW_SCHEMA}.log_entries
                        select log_name, run_name, insert_id,
                               make_timestamp(timestamp_us),
                               make_timestamp(receive_timestamp_us),
                               severity, payload::json, job_name_matches, ?, ?
                        from batch
                        on conflict do nothing""",
                    [source, now],
                ).fetchone()[0]
            if rejections:
                rejected_batch = _rejections_table(rejections)  # noqa: F841
                con.execute(
                    f"""insert into {RAW_SCHEMA}.rejected_entries
                        select ?, location, reason, raw, ? from rejected_batch
                        on conflict do nothing""",
                    [source, now],
                )
            if cursor is not None:
                con.execute(
                    f"""insert into {RAW_SCHEMA}.load_state
                        values (?, ?, ?, ?, ?, ?, ?)
                        on conflict (source_key) do update set
                            cursor_timestamp = excluded.cursor_timestamp,
                            cursor_insert_id = excluded.cursor_insert_id,
                            cursor_offset = excluded.cursor_offset,
                            fingerprint = excluded.fingerprint,
                            entries_landed = load_state.entries_landed + excluded.entries_landed,
                            updated_at = excluded.updated_at""",
                    [
                        cursor.source_key,
                        _ts(cursor.timestamp_us),
                        cursor.insert_id,
                        cursor.offset,
                        cursor.fingerprint,
                        inserted,
                        now,
                    ],
                )
            con.commit()
        except duckdb.Error as exc:
            con.rollback()
            raise SinkError(f"writing a batch to {self.path} failed and was rolled back: {exc}") from exc
        except BaseException:
            con.rollback()
            raise
        return BatchResult(
            inserted=inserted, duplicates=len(entries) - inserted, rejected=len(rejections)
        )

    def close(self) -> None:
        self._con.close()
