"""`goodput-loader push`: read the marts, plan against the push state, send, record what landed.

The push state (goodput_push.push_state in the warehouse) keeps the last point written per
series, committed after every request: re-running push sends nothing already written, and an
interrupted push resumes where it stopped.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

import duckdb

from goodput_loader.errors import LoaderError
from goodput_loader.push.sender import Sender, make_client
from goodput_loader.push.series import Plan, Point, Target, cumulative_points, interval_points, plan_requests, to_json

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


def _utc(value: dt.datetime | None) -> dt.datetime | None:
    if value is None:
        return None
    return value.replace(tzinfo=dt.timezone.utc) if value.tzinfo is None else value.astimezone(dt.timezone.utc)


def _rows(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any]) -> list[dict[str, Any]]:
    try:
        cursor = con.execute(sql, params)
    except duckdb.CatalogException as exc:
        raise LoaderError(f"the marts are not built yet ({exc}); run `goodput-loader build` first") from exc
    names = [d[0] for d in cursor.description]
    return [{k: _utc(v) if isinstance(v, dt.datetime) else v for k, v in zip(names, row)}
            for row in cursor.fetchall()]


def read_points(con: duckdb.DuckDBPyConnection, request: PushRequest) -> list[Point]:
    """Every point the marts hold for the selected runs: the cumulative values at each run's end,
    and interval Goodput/Badput at every complete rolling window and at the run's end."""
    runs_filter = "and run_name in (select unnest(?))" if request.runs else ""
    params: list[Any] = [request.runs] if request.runs else []
    runs = _rows(con, f"select * from main.fct_goodput_cumulative where is_valid {runs_filter}", params)
    if request.runs:
        missing = sorted(set(request.runs) - {r["run_name"] for r in runs})
        if missing:
            raise LoaderError(f"no valid Goodput in the marts for: {', '.join(missing)}")
    names = [r["run_name"] for r in runs]
    breakdown: dict[str, list[dict[str, Any]]] = {}
    for row in _rows(con, "select * from main.fct_badput_breakdown where run_name in (select unnest(?))", [names]):
        breakdown.setdefault(row["run_name"], []).append(row)
    points = [p for run in runs for p in cumulative_points(request.target, run, breakdown.get(run["run_name"], []))]
    since = "and window_end_at >= ?" if request.since else ""
    window_params: list[Any] = [names] + ([request.since.replace(tzinfo=None)] if request.since else [])
    goodput = _rows(con, f"""
        select run_name, window_seconds, window_end_at as end_at, goodput_pct from main.fct_goodput_rolling
        where not is_partial and run_name in (select unnest(?)) {since}
        union all
        select run_name, window_seconds, window_end_at, goodput_pct from main.fct_goodput_rolling_latest
        where run_name in (select unnest(?))""", window_params + [names])
    badput = _rows(con, f"""
        select run_name, window_seconds, window_end_at as end_at, badput_type, badput_source, badput_pct
        from main.fct_badput_rolling where not is_partial and run_name in (select unnest(?)) {since}
        union all
        select run_name, window_seconds, window_end_at, badput_type, badput_source, badput_pct
        from main.fct_badput_rolling_latest where run_name in (select unnest(?))""", window_params + [names])
    return points + interval_points(request.target, goodput, badput)


def _pushed(con: duckdb.DuckDBPyConnection) -> dict[str, dt.datetime]:
    return {row[0]: _utc(row[1]) for row in con.execute(
        "select series_id, last_end_time from goodput_push.push_state").fetchall()}


def _record(con: duckdb.DuckDBPyConnection, written: list[Point]) -> None:
    now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    con.begin()
    for point in written:
        con.execute("""insert into goodput_push.push_state values (?, ?, ?, ?)
                       on conflict (series_id) do update set last_end_time = greatest(
                           push_state.last_end_time, excluded.last_end_time), updated_at = excluded.updated_at""",
                    [point.series.id, point.series.metric_type,
                     point.end_time.astimezone(dt.timezone.utc).replace(tzinfo=None), now])
    con.commit()


def run_push(request: PushRequest) -> dict[str, Any]:
    """Push what is new; return a summary (and, for a dry run, the requests as JSON)."""
    now = request.now or dt.datetime.now(dt.timezone.utc)
    try:
        con = duckdb.connect(request.duckdb_path, read_only=request.dry_run)
    except duckdb.Error as exc:
        raise LoaderError(f"cannot open {request.duckdb_path}: {exc}") from exc
    try:
        if not request.dry_run:
            con.execute(STATE_DDL)
        has_state = con.execute("select count(*) from information_schema.tables where table_schema = "
                                "'goodput_push' and table_name = 'push_state'").fetchone()[0]
        plan = plan_requests(read_points(con, request), _pushed(con) if has_state else {}, now)
        summary: dict[str, Any] = _summary(plan)
        if request.dry_run:
            summary["requests"] = [{"name": f"projects/{request.target.project}",
                                    "timeSeries": [to_json(p, request.target.project) for p in points]}
                                   for points in plan.requests]
            return summary
        sender = Sender(make_client(request.endpoint), request.target.project, max_retries=request.max_retries)
        failed_series: set[str] = set()
        for points in plan.requests:
            points = [p for p in points if p.series.id not in failed_series]  # keep each series in order
            if not points:
                continue
            result = sender.send(points)
            _record(con, result.written)
            summary["points_written"] += len(result.written)
            summary["retries"] += result.retries
            summary["requests_sent"] += 1
            for point, reason in result.failed:
                failed_series.add(point.series.id)
                summary["failed"].append({"series": point.series.id, "end_time": point.end_time.isoformat(),
                                          "error": reason})
        return summary
    finally:
        con.close()


def _summary(plan: Plan) -> dict[str, Any]:
    return {"points_planned": plan.points, "requests_planned": len(plan.requests), "requests_sent": 0,
            "points_written": 0, "retries": 0, "already_pushed": plan.already_pushed,
            "dropped_too_old": plan.dropped_too_old, "dropped_too_close": plan.dropped_too_close, "failed": []}
