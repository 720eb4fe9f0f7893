"""What `report`, `tensorboard` and `push` ask of the marts, whichever warehouse holds them.

dbt builds the same marts in DuckDB and in BigQuery; only the SQL dialect and
the client differ. This module holds what does not differ: the ``Marts``
protocol both warehouse modules implement (duckdb.py, bigquery.py), the query
that finds failed dbt nodes, the rule that refuses marts built by a failed
build, and open_marts, which picks the warehouse a reader names. Nothing here
imports a warehouse client at import time, so it loads without the bigquery
extra.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from goodput_loader.errors import LoaderError

if TYPE_CHECKING:
    from goodput_loader.push.series import Point

# Outcomes in goodput_build_results (macros/incremental/build_results.sql) that make the marts untrustworthy.
FAILED_OUTCOMES = ("error", "fail", "skipped", "runtime error")
# {t} is the warehouse's prefix of a mart's name (see Marts.rows).
FAILED_NODES_SQL = ("select unique_id, status, message from {t}goodput_build_results "
                    f"where status in ({', '.join(repr(s) for s in FAILED_OUTCOMES)}) "
                    "order by case when status = 'skipped' then 1 else 0 end, unique_id")  # causes first


def node_name(unique_id: str) -> str:
    """A dbt node's name from its unique id, <type>.<project>.<name>[.<hash> for a generic test]."""
    parts = unique_id.split(".")
    return parts[2] if len(parts) >= 3 else unique_id


def refuse_failed_build(failed: list[dict[str, Any]], command: str) -> None:
    """Stop when the latest run of any dbt node failed: its mart is stale, or breaks a promise a test checks."""
    if not failed:
        return
    names = ", ".join(f"{node_name(row['unique_id'])} ({row['status']})" for row in failed[:8])
    more = f" and {len(failed) - 8} more" if len(failed) > 8 else ""
    raise LoaderError(
        f"the last dbt build did not succeed: {names}{more}. Its marts may be stale or wrong, so {command} "
        "refuses them: fix the cause and build again (goodput-loader build), or pass --allow-failed-build "
        "to use them anyway"
    )


def as_utc(value: dt.datetime | None) -> dt.datetime | None:
    """A timestamp as an aware UTC time: DuckDB returns naive UTC, BigQuery aware times."""
    if value is None:
        return None
    return value.replace(tzinfo=dt.timezone.utc) if value.tzinfo is None else value.astimezone(dt.timezone.utc)


class Marts(Protocol):
    """Where push reads the marts and keeps its state. Queries name tables as {t}<mart>, take the run
    list as {runs}, each time of `times` as {<its name>} and `read_from` as the relation {read_from}
    (run_id, read_from): a row per run it names (query parameters, never spliced text)."""

    def rows(self, sql: str, runs: list[str], times: dict[str, dt.datetime] | None = None,
             read_from: dict[str, dt.datetime] | None = None) -> list[dict[str, Any]]:
        ...

    def pushed(self) -> dict[str, dt.datetime]: ...

    def failed_nodes(self) -> list[dict[str, Any]]: ...

    def record(self, written: list[Point]) -> None: ...

    def released(self) -> contextlib.AbstractContextManager[None]:
        """Hand the warehouse to another reader of this process for the duration (a dbt window build)."""
        ...

    def close(self) -> None: ...


def open_marts(duckdb_path: str, bigquery: str | None = None, endpoint: str | None = None) -> Marts:
    """The marts to read, read only: the BigQuery dataset PROJECT.DATASET when given, else the DuckDB file.

    Every reader (report, report --html, tensorboard) goes through this, so each reads both warehouses
    with the same queries; the warehouse modules are imported here only, so the BigQuery client stays an
    extra."""
    if bigquery:
        from goodput_loader.warehouses.bigquery import BigQueryMarts

        return BigQueryMarts(bigquery, endpoint, read_only=True)
    if not Path(duckdb_path).exists():
        raise LoaderError(f"{duckdb_path} does not exist: load entries and run `goodput-loader build` first")
    from goodput_loader.warehouses.duckdb import DuckDBMarts

    return DuckDBMarts(duckdb_path, read_only=True)
