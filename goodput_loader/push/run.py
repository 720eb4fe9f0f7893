"""`goodput-loader push`: read the marts, plan against the push state, send, record what landed.

Reads DuckDB (default) or the BigQuery dataset dbt builds into (--bigquery). The push state
(goodput_push.push_state in DuckDB, push_state in the BigQuery dataset) keeps the last point
written per series, committed after every request: re-running push sends nothing already
written, and an interrupted push resumes where it stopped.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any, Protocol

import duckdb

from goodput_loader.errors import LoaderError
from goodput_loader.push.sender import Sender, make_client
from goodput_loader.push.series import Plan, Point, Target, cumulative_points, interval_points, plan_requests, to_json
from goodput_loader.report import FAILED_NODES_SQL, failed_nodes, fetch_rows, refuse_failed_build
from goodput_loader.runs import select_runs, shared_names

STATE_DDL = """
create schema if not exists goodput_push;
create table if not exists goodput_push.push_state (
    series_id varchar primary key,
    metric_type varchar not null,
    last_end_time timestamp not null,
    updated_at timestamp not null
);
"""


@dataclass
class PushRequest:
    duckdb_path: str
    target: Target
    runs: list[str] = field(default_factory=list)
    since: dt.datetime | None = None
    dry_run: bool = False
    endpoint: str | None = None
    max_retries: int = 5
    now: dt.datetime | None = None
    bigquery_dataset: str | None = None
    bigquery_endpoint: str | None = None
    allow_failed_build: bool = False


def _utc(value: dt.datetime | None) -> dt.datetime | None:
    if value is None:
        return None
    return value.replace(tzinfo=dt.timezone.utc) if value.tzinfo is None else value.astimezone(dt.timezone.utc)


class Marts(Protocol):
    """Where push reads the marts and keeps its state. Queries name tables as {t}<mart> and take the
    run list as {runs} and the --since time as {since}."""

    def rows(self, sql: str, runs: list[str], since: dt.datetime | None = None) -> list[dict[str, Any]]: ...

    def pushed(self) -> dict[str, dt.datetime]: ...

    def failed_nodes(self) -> list[dict[str, Any]]: ...

    def record(self, written: list[Point]) -> None: ...

    def close(self) -> None: ...


class DuckDBMarts:
    """Marts and push state in the DuckDB warehouse."""

    def __init__(self, path: str, read_only: bool):
        try:
            self.con = duckdb.connect(path, read_only=read_only)
        except duckdb.Error as exc:
            raise LoaderError(f"cannot open {path}: {exc}") from exc
        self.read_only = read_only

    def rows(self, sql: str, runs: list[str], since: dt.datetime | None = None) -> list[dict[str, Any]]:
        params: list[Any] = []
        for token in re.findall(r"\{runs\}|\{since\}", sql):
            params.append(runs if token == "{runs}" else since.astimezone(dt.timezone.utc).replace(tzinfo=None))
        sql = sql.replace("{runs}", "(select unnest(?))").replace("{since}", "?").replace("{t}", "main.")
        return [{k: _utc(v) if isinstance(v, dt.datetime) else v for k, v in row.items()}
                for row in fetch_rows(self.con, sql, params)]

    def failed_nodes(self) -> list[dict[str, Any]]:
        return failed_nodes(self.con)

    def pushed(self) -> dict[str, dt.datetime]:
        if not self.read_only:
            self.con.execute(STATE_DDL)
        exists = self.con.execute("select count(*) from information_schema.tables where table_schema = "
                                  "'goodput_push' and table_name = 'push_state'").fetchone()[0]
        if not exists:
            return {}
        return {row[0]: _utc(row[1]) for row in self.con.execute(
            "select series_id, last_end_time from goodput_push.push_state").fetchall()}

    def record(self, written: list[Point]) -> None:
        now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
        self.con.begin()
        for point in written:
            self.con.execute(
                """insert into goodput_push.push_state values (?, ?, ?, ?)
                   on conflict (series_id) do update set last_end_time = greatest(
                       push_state.last_end_time, excluded.last_end_time), updated_at = excluded.updated_at""",
                [point.series.id, point.series.metric_type,
                 point.end_time.astimezone(dt.timezone.utc).replace(tzinfo=None), now])
        self.con.commit()

    def close(self) -> None:
        self.con.close()


class BigQueryMarts:
    """Marts in the BigQuery dataset dbt builds into; the push state is its push_state table."""

    def __init__(self, spec: str, endpoint: str | None, read_only: bool):
        from goodput_loader.sinks.bigquery_sink import make_client as bigquery_client
        from goodput_loader.sinks.bigquery_sink import parse_dataset

        self.project, self.dataset = parse_dataset(spec)
        self.client = bigquery_client(self.project, endpoint)
        self.state = f"{self.project}.{self.dataset}.push_state"
        self.read_only = read_only

    def rows(self, sql: str, runs: list[str], since: dt.datetime | None = None) -> list[dict[str, Any]]:
        from google.api_core import exceptions as gexc
        from google.cloud import bigquery

        params: list[Any] = [bigquery.ArrayQueryParameter("runs", "STRING", runs)]
        if since is not None:
            params.append(bigquery.ScalarQueryParameter("since", "TIMESTAMP", since))
        sql = (sql.replace("{runs}", "unnest(@runs)").replace("{since}", "@since")
               .replace("{t}", f"`{self.project}.{self.dataset}`."))
        try:
            result = self.client.query(sql, job_config=bigquery.QueryJobConfig(query_parameters=params)).result()
        except gexc.NotFound as exc:
            raise LoaderError(f"the marts are not built in {self.project}.{self.dataset} ({exc.message}); "
                              "run `dbt build` with the bigquery target first") from exc
        return [{k: _utc(v) if isinstance(v, dt.datetime) else v for k, v in row.items()} for row in result]

    def failed_nodes(self) -> list[dict[str, Any]]:
        from google.api_core import exceptions as gexc

        try:
            return self.rows(FAILED_NODES_SQL, [])
        except LoaderError as exc:
            if isinstance(exc.__cause__, gexc.NotFound):  # built before outcomes were kept
                return []
            raise

    def pushed(self) -> dict[str, dt.datetime]:
        from google.api_core import exceptions as gexc
        from google.cloud import bigquery

        if not self.read_only:
            schema = [bigquery.SchemaField("series_id", "STRING", "REQUIRED"),
                      bigquery.SchemaField("metric_type", "STRING", "REQUIRED"),
                      bigquery.SchemaField("last_end_time", "TIMESTAMP", "REQUIRED"),
                      bigquery.SchemaField("updated_at", "TIMESTAMP", "REQUIRED")]
            self.client.create_table(bigquery.Table(self.state, schema=schema), exists_ok=True)
        try:
            rows = self.client.query(f"select series_id, last_end_time from `{self.state}`").result()
        except gexc.NotFound:  # a dry run before the first push
            return {}
        return {row[0]: _utc(row[1]) for row in rows}

    def record(self, written: list[Point]) -> None:
        from goodput_loader.sinks.bigquery_sink import _literal

        if not written:
            return
        pushed = ", ".join(
            f"struct({_literal(p.series.id)} as series_id, {_literal(p.series.metric_type)} as metric_type, "
            f"timestamp_micros({int(p.end_time.timestamp() * 1_000_000)}) as last_end_time)" for p in written)
        self.client.query(f"""
            merge `{self.state}` as target
            using (select * from unnest([{pushed}])) as pushed
            on target.series_id = pushed.series_id
            when matched then update set
                last_end_time = greatest(target.last_end_time, pushed.last_end_time),
                updated_at = current_timestamp()
            when not matched then insert (series_id, metric_type, last_end_time, updated_at)
                values (pushed.series_id, pushed.metric_type, pushed.last_end_time, current_timestamp())""").result()

    def close(self) -> None:
        self.client.close()


def read_points(marts: Marts, request: PushRequest) -> tuple[list[Point], dict[str, list[str]]]:
    """Every point the marts hold for the selected runs: the cumulative values at each run's end,
    and interval Goodput/Badput at every complete rolling window and at the run's end.

    Series are labelled by run name (workload_id), as the library's monitor labels them, so two
    runs of one name from different projects would write into the same series of the target
    project. Such runs are left out and returned by name with their run_ids: push one of them with
    --run PROJECT/RUN."""
    valid = marts.rows("select * from {t}fct_goodput_cumulative where is_valid", [])
    runs = select_runs(valid, request.runs, what="valid Goodput in the marts for")
    shared = shared_names(runs)
    runs = [run for run in runs if run["run_name"] not in shared]
    ids = [run["run_id"] for run in runs]
    breakdown: dict[str, list[dict[str, Any]]] = {}
    for row in marts.rows("select * from {t}fct_badput_breakdown where run_id in {runs}", ids):
        breakdown.setdefault(row["run_id"], []).append(row)
    points = [p for run in runs for p in cumulative_points(request.target, run, breakdown.get(run["run_id"], []))]
    since = "and window_end_at >= {since}" if request.since else ""
    goodput = marts.rows(f"""
        select run_name, window_seconds, window_end_at as end_at, goodput_pct from {{t}}fct_goodput_rolling
        where not is_partial and run_id in {{runs}} {since}
        union all
        select run_name, window_seconds, window_end_at, goodput_pct from {{t}}fct_goodput_rolling_latest
        where run_id in {{runs}} {since}""", ids, request.since)
    badput = marts.rows(f"""
        select run_name, window_seconds, window_end_at as end_at, gcm_badput_source, exported_to_gcm, badput_pct
        from {{t}}fct_badput_rolling where not is_partial and run_id in {{runs}} {since}
        union all
        select run_name, window_seconds, window_end_at, gcm_badput_source, exported_to_gcm, badput_pct
        from {{t}}fct_badput_rolling_latest where run_id in {{runs}} {since}""", ids, request.since)
    return points + interval_points(request.target, goodput, badput), shared


def run_push(request: PushRequest) -> dict[str, Any]:
    """Push what is new; return a summary (and, for a dry run, the requests as JSON)."""
    now = request.now or dt.datetime.now(dt.timezone.utc)
    # The client first: a missing extra or missing credentials fail before any work.
    client = None if request.dry_run else make_client(request.endpoint)
    marts: Marts = (BigQueryMarts(request.bigquery_dataset, request.bigquery_endpoint, request.dry_run)
                    if request.bigquery_dataset else DuckDBMarts(request.duckdb_path, request.dry_run))
    try:
        if not request.allow_failed_build:
            refuse_failed_build(marts.failed_nodes(), "push")
        points, shared = read_points(marts, request)
        plan = plan_requests(points, marts.pushed(), now)
        summary: dict[str, Any] = _summary(plan)
        summary["not_pushed_shared_names"] = shared
        if request.dry_run:
            summary["requests"] = [{"name": f"projects/{request.target.project}",
                                    "timeSeries": [to_json(p) for p in points]} for points in plan.requests]
            return summary
        sender = Sender(client, request.target.project, max_retries=request.max_retries)
        failed_series: set[str] = set()
        for points in plan.requests:
            points = [p for p in points if p.series.id not in failed_series]  # keep each series in order
            if not points:
                continue
            result = sender.send(points)
            marts.record(result.written + result.held)
            summary["points_written"] += len(result.written)
            summary["already_on_server"] += len(result.held)
            summary["retries"] += result.retries
            summary["requests_sent"] += 1
            for point, reason in result.failed:
                failed_series.add(point.series.id)
                summary["failed"].append({"series": point.series.id, "end_time": point.end_time.isoformat(),
                                          "error": reason})
        return summary
    finally:
        marts.close()


def _summary(plan: Plan) -> dict[str, Any]:
    return {"points_planned": plan.points, "requests_planned": len(plan.requests), "requests_sent": 0,
            "points_written": 0, "retries": 0, "already_pushed": plan.already_pushed,
            "dropped_too_old": plan.dropped_too_old, "dropped_too_close": plan.dropped_too_close,
            "already_on_server": 0, "failed": []}
