"""Exclusion windows: time to leave out of Goodput (stock-outs, maintenance, SLO-violation windows).

The library takes them as an argument of get_job_goodput_with_exclusions; the warehouse keeps them as
data, `goodput_raw.exclusion_windows`, so every build computes Goodput with exclusions for every run
they apply to (fct_goodput_with_exclusions, fct_badput_with_exclusions), and the list has a history
and reasons. `goodput-loader exclusions add|list|remove` keeps the table; any other writer may too
(docs/semantics.md, "Goodput with exclusions").
"""

from __future__ import annotations

import datetime as dt
import uuid
from pathlib import Path
from typing import Any

from goodput_loader.errors import LoaderError
from goodput_loader.warehouses.duckdb import RAW_SCHEMA, connect, fetch_rows, naive_utc

DDL = f"""
create schema if not exists {RAW_SCHEMA};
create table if not exists {RAW_SCHEMA}.exclusion_windows (
    exclusion_id varchar primary key,
    run varchar,  -- a run_id (PROJECT/RUN) or a run name; null: every run
    start_at timestamp not null,
    end_at timestamp not null,
    reason varchar not null,
    added_at timestamp not null
);
"""


def add_exclusion(duckdb_path: str, run: str | None, start: dt.datetime, end: dt.datetime,
                  reason: str) -> dict[str, Any]:
    """Record one window (for `run`, or every run when None); it counts from the next build on."""
    if end <= start:
        raise LoaderError(f"--end {end.isoformat()} is not after --start {start.isoformat()}: "
                          "the library would skip such a window")
    if not reason.strip():
        raise LoaderError("--reason is empty: say why the time is left out (it is shown beside the Goodput)")
    row = {"exclusion_id": uuid.uuid4().hex[:12], "run": run, "start_at": naive_utc(start),
           "end_at": naive_utc(end), "reason": reason.strip(),
           "added_at": naive_utc(dt.datetime.now(dt.timezone.utc))}
    con = connect(duckdb_path, read_only=False)
    try:
        con.execute(DDL)
        con.execute(f"insert into {RAW_SCHEMA}.exclusion_windows values (?, ?, ?, ?, ?, ?)", list(row.values()))
    finally:
        con.close()
    return row


def list_exclusions(duckdb_path: str) -> list[dict[str, Any]]:
    """Every declared window, oldest start first."""
    if not Path(duckdb_path).exists():
        return []
    con = connect(duckdb_path, read_only=True)
    try:
        exists = con.execute("select count(*) from information_schema.tables where table_schema = ? "
                             "and table_name = 'exclusion_windows'", [RAW_SCHEMA]).fetchone()[0]
        if not exists:
            return []
        return fetch_rows(con, f"select * from {RAW_SCHEMA}.exclusion_windows order by start_at, exclusion_id", [])
    finally:
        con.close()


def remove_exclusion(duckdb_path: str, exclusion_id: str) -> None:
    """Forget one window; the next build recomputes without it."""
    con = connect(duckdb_path, read_only=False)
    try:
        con.execute(DDL)
        removed = con.execute(f"delete from {RAW_SCHEMA}.exclusion_windows where exclusion_id = ? returning 1",
                              [exclusion_id]).fetchall()
    finally:
        con.close()
    if not removed:
        raise LoaderError(f"no exclusion window {exclusion_id!r} (goodput-loader exclusions list shows them)")
