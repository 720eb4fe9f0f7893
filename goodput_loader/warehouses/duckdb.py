"""DuckDB, the embedded default warehouse: everything the loader does with it.

* ``DuckDBSink`` writes the raw layer (``goodput_raw``), one batch per
  transaction (the contract is in ``sinks/base.py``);
* ``connect``, ``fetch_rows`` and ``failed_nodes`` read the marts dbt built,
  for ``report`` and ``rejects``;
* ``DuckDBMarts`` reads them for ``push`` and keeps its state in
  ``goodput_push.push_state``.

Batches arrive as Arrow tables (one C-level copy, no per-row Python inserts),
are deduplicated on ``(log_name, timestamp, insert_id)`` by an anti-join, and
commit in the same transaction as their rejections and the source cursor.

``log_entries`` has no primary key: DuckDB keeps an ART index of it in memory
and updates it row by row, which cost more than half of the load time and
about 1 GB of memory per 3M entries (bench/RESULTS.md). The anti-join reads
only the row groups whose timestamps overlap the batch (DuckDB pushes the
batch's min/max into the scan), and a file holds one writer at a time, so
the key stays unique without it. Tables created by earlier versions keep
their key and load the same way.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Sequence

import duckdb

from goodput_loader.entries import Rejection
from goodput_loader.errors import LoaderError, SinkError
from goodput_loader.sinks.base import Batch, BatchResult, Cursor
from goodput_loader.warehouses.marts import FAILED_NODES_SQL, as_utc

if TYPE_CHECKING:
    import pyarrow as pa

    from goodput_loader.push.series import Point

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
    loaded_at timestamp not null
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

# Where push remembers the last point it wrote per series (see DuckDBMarts).
PUSH_STATE_DDL = """
create schema if not exists goodput_push;
create table if not exists goodput_push.push_state (
    series_id varchar primary key,
    metric_type varchar not null,
    last_end_time timestamp not null,
    updated_at timestamp not null
);
"""

def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


def _rejections_table(rejections: Sequence[Rejection]) -> pa.Table:
    # pyarrow is imported where batches are written: report and push, which only read, start without it
    import pyarrow as pa

    return pa.Table.from_pydict(
        {
            "location": [r.location for r in rejections],
            "reason": [r.reason for r in rejections],
            "raw": [r.raw for r in rejections],
        },
        schema=pa.schema([("location", pa.string()), ("reason", pa.string()), ("raw", pa.string())]),
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


# ------------------------------------------------------------------ writing the raw layer
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
        # A batch under one row group (a small file) goes to the WAL, and with DuckDB's 16 MB
        # threshold nearly every such commit checkpointed, rewriting the growing last row group
        # each time. Checkpointing every 256 MB of WAL made 50k-line files load 10 % faster; a
        # larger threshold gained nothing more and held more in memory. This process only.
        self._con.execute("set checkpoint_threshold = '256MB'")

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

    def write_batch(self, source: str, batch: Batch) -> BatchResult:
        import pyarrow.compute  # imported with the first batch: readers of the marts start without it

        con = self._con
        now = _utcnow()
        rejections, cursor = batch.rejections, batch.cursor
        entry_count = batch.entry_count
        con.begin()
        try:
            inserted = 0
            if entry_count:
                entries = batch.table()  # scanned by name below
                # Only rows in the batch's time range can be its duplicates. The bound lets DuckDB
                # skip the row groups outside it (min/max per row group) instead of scanning every
                # landed key for every batch: 0.6 s -> 0.35 s for the last 250k lines of L.
                span = pyarrow.compute.min_max(entries.column("timestamp_us"))
                inserted = con.execute(
                    f"""insert into {RAW_SCHEMA}.log_entries
                        with batch as (
                            select log_name, run_name, insert_id, make_timestamp(timestamp_us) as "timestamp",
                                   make_timestamp(receive_timestamp_us) as receive_timestamp,
                                   severity, payload, job_name_matches
                            from entries
                            qualify row_number() over (partition by log_name, timestamp_us, insert_id) = 1
                        )
                        select b.log_name, b.run_name, b.insert_id, b."timestamp", b.receive_timestamp,
                               b.severity, b.payload::json, b.job_name_matches, ?, ?
                        from batch as b
                        anti join (
                            select log_name, "timestamp", insert_id
                            from {RAW_SCHEMA}.log_entries
                            where "timestamp" between make_timestamp(?) and make_timestamp(?)
                        ) as e
                            on e.log_name = b.log_name
                           and e."timestamp" = b."timestamp"
                           and e.insert_id = b.insert_id""",
                    [source, now, span["min"].as_py(), span["max"].as_py()],
                ).fetchone()[0]
            if batch.retract:
                con.execute(
                    f"delete from {RAW_SCHEMA}.rejected_entries where source = ? and list_contains(?, location)",
                    [source, batch.retract],
                )
            new_rejections = 0
            if rejections:
                rejected_batch = _rejections_table(rejections)  # noqa: F841
                # Input read again (a re-read window, a changed file read whole) meets its old
                # rejections: how many are new is reported too.
                new_rejections = con.execute(
                    f"""insert into {RAW_SCHEMA}.rejected_entries
                        select ?, location, reason, raw, ? from rejected_batch
                        on conflict do nothing""",
                    [source, now],
                ).fetchone()[0]
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
            self._rollback()
            raise SinkError(self._explain(exc)) from exc
        except BaseException:
            self._rollback()
            raise
        return BatchResult(
            inserted=inserted, duplicates=entry_count - inserted, rejected=len(rejections),
            new_rejections=new_rejections
        )

    def _rollback(self) -> None:
        """Undo the open transaction; DuckDB may already have ended it (a failed commit, a full disk)."""
        try:
            self._con.rollback()
        except duckdb.Error:
            pass

    def _explain(self, exc: duckdb.Error) -> str:
        """What failed, in words a user can act on; the batch was not committed either way."""
        text = str(exc)
        if "No space left on device" in text or "ENOSPC" in text:
            folder = Path(self.path).resolve().parent
            return (f"the disk holding {self.path} is full ({folder}): this batch was not committed, every "
                    "earlier one was. Free some space and run the same command again; it resumes where it stopped")
        return f"writing a batch to {self.path} failed and was rolled back: {text}"

    def close(self) -> None:
        try:
            self._con.close()
        except duckdb.Error as exc:  # the final checkpoint can fail too (a full disk)
            raise SinkError(self._explain(exc)) from exc


# ------------------------------------------------------------------ reading the marts
def connect(path: str, read_only: bool) -> duckdb.DuckDBPyConnection:
    """A connection to the warehouse file for reading the marts (read-only beside a notebook)."""
    try:
        return duckdb.connect(path, read_only=read_only)
    except duckdb.Error as exc:
        raise LoaderError(f"cannot open {path}: {exc}") from exc


def fetch_rows(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any]) -> list[dict[str, Any]]:
    """Rows of a mart query as dicts; a missing mart means the build has not run."""
    try:
        cursor = con.execute(sql, params)
    except duckdb.CatalogException as exc:
        raise LoaderError(f"the marts are not built yet ({exc}); run `goodput-loader build` first") from exc
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def failed_nodes(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Nodes whose latest run failed; none when the warehouse has no record (built before it was kept)."""
    exists = con.execute("select count(*) from information_schema.tables where table_schema = 'main' "
                         "and table_name = 'goodput_build_results'").fetchone()[0]
    return fetch_rows(con, FAILED_NODES_SQL.replace("{t}", "main."), []) if exists else []


def naive_utc(value: dt.datetime) -> dt.datetime:
    """A time as DuckDB's TIMESTAMP (naive, UTC) takes it."""
    return value.astimezone(dt.timezone.utc).replace(tzinfo=None)


class DuckDBMarts:
    """Marts and push state in the DuckDB warehouse (the ``Marts`` protocol of marts.py)."""

    def __init__(self, path: str, read_only: bool):
        self.path = path
        self.con = connect(path, read_only)
        self.read_only = read_only

    @contextlib.contextmanager
    def released(self) -> Iterator[None]:
        """Let another DuckDB instance of this process (a dbt window build attaching the warehouse) open
        the file: DuckDB refuses a second handle on a file one of its instances holds."""
        self.con.close()
        try:
            yield
        finally:
            self.con = connect(self.path, self.read_only)

    def rows(self, sql: str, runs: list[str], times: dict[str, dt.datetime] | None = None,
             read_from: dict[str, dt.datetime] | None = None) -> list[dict[str, Any]]:
        times = times or {}
        params: list[Any] = []
        for name in re.findall(r"\{(\w+)\}", sql):  # positional parameters, in the order they appear
            if name == "runs":
                params.append(runs)
            elif name == "read_from":
                read_from = read_from or {}
                params += [list(read_from), [naive_utc(t) for t in read_from.values()]]
            elif name in times:
                params.append(naive_utc(times[name]))
        sql = sql.replace("{runs}", "(select unnest(?))").replace("{t}", "main.")
        # two lists of one length, unnested side by side: a row per run
        sql = sql.replace("{read_from}", "(select unnest(?::varchar[]) as run_id, unnest(?::timestamp[]) as read_from)")
        for name in times:
            sql = sql.replace("{%s}" % name, "?")
        return [{k: as_utc(v) if isinstance(v, dt.datetime) else v for k, v in row.items()}
                for row in fetch_rows(self.con, sql, params)]

    def failed_nodes(self) -> list[dict[str, Any]]:
        return failed_nodes(self.con)

    def pushed(self) -> dict[str, dt.datetime]:
        if not self.read_only:
            self.con.execute(PUSH_STATE_DDL)
        exists = self.con.execute("select count(*) from information_schema.tables where table_schema = "
                                  "'goodput_push' and table_name = 'push_state'").fetchone()[0]
        if not exists:
            return {}
        return {row[0]: as_utc(row[1]) for row in self.con.execute(
            "select series_id, last_end_time from goodput_push.push_state").fetchall()}

    def record(self, written: list[Point]) -> None:
        now = _utcnow()
        self.con.begin()
        for point in written:
            self.con.execute(
                """insert into goodput_push.push_state values (?, ?, ?, ?)
                   on conflict (series_id) do update set last_end_time = greatest(
                       push_state.last_end_time, excluded.last_end_time), updated_at = excluded.updated_at""",
                [point.series.id, point.series.metric_type, naive_utc(point.end_time), now])
        self.con.commit()

    def close(self) -> None:
        self.con.close()
