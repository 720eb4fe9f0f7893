"""`goodput-loader push`: read the marts, plan against the push state, send, record what landed.

Reads DuckDB (default) or the BigQuery dataset dbt builds into (--bigquery); how is each
warehouse module's business (warehouses/duckdb.py, warehouses/bigquery.py). The push state
(goodput_push.push_state in DuckDB, push_state in the BigQuery dataset) keeps the last point
written per series, committed after every request: re-running push sends nothing already
written, and an interrupted push resumes where it stopped.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from goodput_loader.library_windows import BigQueryBuild, Window, WindowBuildProcess, library_window_rows
from goodput_loader.push.sender import Sender, make_client
from goodput_loader.push.series import (MAX_AGE, Plan, Point, SeriesKey, Target, cumulative_points,
                                         interval_efficiency_points, interval_points, interval_series,
                                         plan_requests, slice_efficiency_series, to_json)
from goodput_loader.runs import select_runs, shared_names
from goodput_loader.warehouses.bigquery import BigQueryMarts
from goodput_loader.warehouses.duckdb import DuckDBMarts
from goodput_loader.warehouses.marts import Marts, as_utc, refuse_failed_build


@dataclass
class PushRequest:
    """Everything `goodput-loader push` was asked to do."""

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
    # of the live windows: library (the default) or additive
    interval_semantics: str = "library"
    project_dir: str | None = None
    # BigQuery's window build: the dbt profile target the marts are built with, and that build's vars
    dbt_target: str = "bigquery"
    profiles_dir: str | None = None
    variables: dict[str, Any] = field(default_factory=dict)

    def window_build(self) -> BigQueryBuild | None:
        """How a window build reaches BigQuery (None: it runs on the DuckDB warehouse)."""
        if not self.bigquery_dataset:
            return None
        return BigQueryBuild(target=self.dbt_target, profiles_dir=self.profiles_dir, variables=self.variables)


def read_points(marts: Marts, request: PushRequest, now: dt.datetime, pushed: dict[str, dt.datetime],
                window_build: WindowBuildProcess | None = None) -> tuple[list[Point], dict[str, list[str]], Skipped]:
    """Every point the marts hold for the selected runs that Cloud Monitoring would still accept: the
    cumulative values at each run's end, and interval Goodput/Badput at every complete rolling window
    (additive, as the rolling marts hold them) and at the run's end (the live window: by default as the
    library's rolling-window worker computes it there), from max(--since, now - 25 h) on.

    What the push state (`pushed`) already holds is left unread, and only counted (in SQL, returned
    third), as is the rolling history older than the API's 25 hours: a push every few minutes then reads
    its few new windows, not 25 h of every running run's grid (66k points for one 3.3M-entry run, 2–3 s
    of reading and planning), and a run pushed through its end builds no live window again.

    Series are labelled by run name (workload_id), as the library's monitor labels them, so two
    runs of one name from different projects would write into the same series of the target
    project. Such runs are left out and returned by name with their run_ids: push one of them with
    --run PROJECT/RUN."""
    chosen = select_runs(marts.rows("select * from {t}fct_goodput_cumulative", []), request.runs)
    shared = shared_names(chosen)
    chosen = [run for run in chosen if run["run_name"] not in shared]
    # the cumulative upload skips a run the library raises on; its rolling-window worker does not, and
    # computes each window on its own: with the library's semantics the live windows of every run are sent
    runs = [run for run in chosen if run["is_valid"]]
    ids = [run["run_id"] for run in runs]
    semantics = request.interval_semantics
    live_ids = [run["run_id"] for run in chosen] if semantics == "library" else ids
    oldest = now - MAX_AGE
    since = max(request.since, oldest) if request.since else oldest
    times = {"since": since, "oldest": oldest,
             "asked": request.since or dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)}
    live = marts.rows("""
        select run_id, run_name, window_seconds, window_end_at as end_at, goodput_pct
        from {t}fct_goodput_rolling_latest where run_id in {runs} and window_end_at >= {since}""", live_ids, times)
    through = PushedThrough(request.target, pushed, marts.rows(ROLLING_SERIES_SQL, live_ids, times))
    read_from = {run_id: max(since, through.grid(run_id) or since) for run_id in ids}
    elastic = {run["run_id"]: bool(run.get("is_elastic")) for run in chosen}
    # a library window build for each live window that can still make a new point
    to_build = [row for row in live if not through.window(row, elastic.get(row["run_id"], False))]
    # the window build's child starts now (unless the caller started one that is still there): it imports dbt
    # while the marts are read
    needed = semantics == "library" and to_build
    started = window_build if window_build is not None and window_build.ready else None
    with (started or WindowBuildProcess()) if needed else contextlib.nullcontext() as process:
        breakdown: dict[str, list[dict[str, Any]]] = {}
        for row in marts.rows("select * from {t}fct_badput_breakdown where run_id in {runs}", ids):
            breakdown.setdefault(row["run_id"], []).append(row)
        points = [p for run in runs
                  for p in cumulative_points(request.target, run, breakdown.get(run["run_id"], []))]
        goodput = marts.rows("""
            select rolling.run_name, rolling.window_seconds, rolling.window_end_at as end_at, rolling.goodput_pct
            from {t}fct_goodput_rolling as rolling inner join {read_from} as pushed on pushed.run_id = rolling.run_id
            where not rolling.is_partial and rolling.run_id in {runs} and rolling.window_end_at >= {since}
                and rolling.window_end_at >= pushed.read_from""", ids, times, read_from)
        badput = marts.rows("""
            select rolling.run_name, rolling.window_seconds, rolling.window_end_at as end_at,
                rolling.gcm_badput_source, rolling.exported_to_gcm, rolling.badput_pct
            from {t}fct_badput_rolling as rolling inner join {read_from} as pushed on pushed.run_id = rolling.run_id
            where not rolling.is_partial and rolling.run_id in {runs} and rolling.window_end_at >= {since}
                and rolling.window_end_at >= pushed.read_from""", ids, times, read_from)
        if semantics == "library":
            with marts.released():
                live_goodput, live_badput, live_efficiency = library_live_windows(request, to_build, elastic, process)
    if semantics == "library":
        points_efficiency = interval_efficiency_points(request.target, live_efficiency)
    else:  # the rolling marts' latest rows: a few per run, read whatever the push state holds
        live_goodput = live
        points_efficiency = []
        live_badput = marts.rows("""
            select run_name, window_seconds, window_end_at as end_at, gcm_badput_source, exported_to_gcm, badput_pct
            from {t}fct_badput_rolling_latest where run_id in {runs} and window_end_at >= {since}""", ids, times)
    goodput += live_goodput
    badput += live_badput
    [counted] = marts.rows(COUNTS_SQL, ids, times, read_from)
    skipped = Skipped(too_old=int(counted["too_old"]), already_pushed=int(counted["already_pushed"]),
                      live_windows=len(live) - len(to_build) if semantics == "library" else 0)
    return points + interval_points(request.target, goodput, badput) + points_efficiency, shared, skipped


# Each run's interval series in the rolling marts from {since} on (has_value: a row of it makes a point)
ROLLING_SERIES_SQL = """
    select run_id, run_name, window_seconds, cast(null as string) as gcm_badput_source,
        max(case when goodput_pct is null then 0 else 1 end) as has_value
    from {t}fct_goodput_rolling
    where not is_partial and run_id in {runs} and window_end_at >= {since}
    group by run_id, run_name, window_seconds
    union all
    select run_id, run_name, window_seconds, gcm_badput_source,
        max(case when badput_pct is null then 0 else 1 end) as has_value
    from {t}fct_badput_rolling
    where not is_partial and exported_to_gcm and run_id in {runs} and window_end_at >= {since}
    group by run_id, run_name, window_seconds, gcm_badput_source"""

# The points interval_points would have made of rows left unread: older than the API's limit (after
# --since), or before a run's read_from (every series of the run holds a later point)
COUNTS_SQL = "select " + " + ".join(
    f"""(select count(*) from {{t}}{mart} where {partial} run_id in {{runs}} and {kept}
           and window_end_at >= {{asked}} and window_end_at < {{oldest}})"""
    for mart, partial, kept in [
        ("fct_goodput_rolling", "not is_partial and", "goodput_pct is not null"),
        ("fct_goodput_rolling_latest", "", "goodput_pct is not null"),
        ("fct_badput_rolling", "not is_partial and", "exported_to_gcm and badput_pct is not null"),
        ("fct_badput_rolling_latest", "", "exported_to_gcm and badput_pct is not null")]
) + " as too_old, " + " + ".join(
    f"""(select count(*) from {{t}}{mart} as rolling inner join {{read_from}} as pushed
           on pushed.run_id = rolling.run_id
         where not rolling.is_partial and rolling.run_id in {{runs}} and {kept}
           and rolling.window_end_at >= {{since}} and rolling.window_end_at < pushed.read_from)"""
    for mart, kept in [("fct_goodput_rolling", "rolling.goodput_pct is not null"),
                       ("fct_badput_rolling", "rolling.exported_to_gcm and rolling.badput_pct is not null")]
) + " as already_pushed"


@dataclass
class Skipped:
    """What a push left unread: points too old for the API, points already pushed, live windows already pushed."""

    too_old: int = 0
    already_pushed: int = 0
    live_windows: int = 0


class PushedThrough:
    """How far the push state covers each run's interval series, so a push reads only what can be new.

    rows: ROLLING_SERIES_SQL's, every interval series the run's rolling marts hold from --since on. A
    series the state does not hold yet covers nothing, so its run is read whole (from --since): a new
    Badput source, a first push, another --project."""

    def __init__(self, target: Target, pushed: dict[str, dt.datetime], rows: list[dict[str, Any]]):
        self.target = target
        self.pushed = pushed
        self.series: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            self.series.setdefault(row["run_id"], []).append(row)

    def _last(self, series: SeriesKey) -> dt.datetime | None:
        return self.pushed.get(series.id)

    def grid(self, run_id: str) -> dt.datetime | None:
        """The time through which every series with a point in the run's rolling grid has been pushed: no
        grid row before it can make a new point (None: read the grid from --since)."""
        lasts = [self._last(interval_series(self.target, row["run_name"], row["window_seconds"],
                                            row["gcm_badput_source"]))
                 for row in self.series.get(run_id, []) if row["has_value"]]
        return None if not lasts or None in lasts else min(lasts)

    def window(self, live: dict[str, Any], elastic: bool) -> bool:
        """Whether every series the live window `live` (a row of fct_goodput_rolling_latest) can write has
        been pushed through its end, so its (library) window build would make no new point.

        Its series: interval Goodput of its size, interval Badput of every exported source its run's grid
        holds at that size (a window's buckets are among its run's), and an elastic run's slice
        efficiencies. A run without grid rows since --since is always built."""
        rows = [row for row in self.series.get(live["run_id"], []) if row["window_seconds"] == live["window_seconds"]]
        if not any(row["gcm_badput_source"] is not None for row in rows):
            return False
        size = int(live["window_seconds"])
        keys = [interval_series(self.target, live["run_name"], size)]
        keys += [interval_series(self.target, live["run_name"], size, row["gcm_badput_source"])
                 for row in rows if row["gcm_badput_source"] is not None]
        if elastic:
            keys += slice_efficiency_series(self.target, live["run_name"], size)
        end = as_utc(live["end_at"])
        return all((last := self._last(key)) is not None and last >= end for key in keys)


def library_live_windows(request: PushRequest, live: list[dict[str, Any]], elastic: dict[str, bool],
                         process: WindowBuildProcess | None = None
                         ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """Interval Goodput/Badput of each live window as the library's rolling-window monitor computes it
    (get_interval_metric_details over [end - size, end]; ElasticGoodputMonitor's for the runs `elastic`
    marks, with the window's slice efficiencies): one window build for all of them. A window the library
    raises on gets no point, as its monitor then uploads nothing."""
    # read by payload time: the monitor polls after the run's last entry (its end) has been logged
    windows = [Window(row["run_id"], as_utc(row["end_at"]) - dt.timedelta(seconds=int(row["window_seconds"])),
                      as_utc(row["end_at"]), read_by="payload", elastic=elastic.get(row["run_id"], False))
               for row in live]
    goodput: list[dict[str, Any]] = []
    badput: list[dict[str, Any]] = []
    efficiency: list[dict[str, Any]] = []
    for row in library_window_rows(request.duckdb_path, windows, request.project_dir, request.window_build(), process):
        window = live[int(row["window_no"])]
        if row["invalid_reason"] is not None:
            continue
        keys = {"run_name": window["run_name"], "window_seconds": window["window_seconds"], "end_at": window["end_at"]}
        if row["measure"] == "PRODUCTIVE":
            goodput.append({**keys, "goodput_pct": row["pct"]})
            efficiency.append({**keys, "stepping_slice_efficiency": row["stepping_slice_efficiency"],
                               "available_slice_efficiency": row["available_slice_efficiency"]})
        elif row["measure"] != "DISRUPTIONS":
            badput.append({**keys, "gcm_badput_source": row["gcm_badput_source"],
                           "exported_to_gcm": row["exported_to_gcm"], "badput_pct": row["pct"]})
    return goodput, badput, efficiency


def run_push(request: PushRequest, window_build: WindowBuildProcess | None = None) -> dict[str, Any]:
    """Push what is new; return a summary (and, for a dry run, the requests as JSON).

    window_build: a window build's child the caller started earlier (refresh starts it with the cycle), used
    if the live windows need one and it is still running (else a new one is started); the caller closes it
    either way (closing twice is harmless)."""
    now = request.now or dt.datetime.now(dt.timezone.utc)
    # The client first: a missing extra or missing credentials fail before any work.
    client = None if request.dry_run else make_client(request.endpoint)
    build = request.window_build()
    if build is not None and request.interval_semantics == "library":
        build.check(request.project_dir)
    marts: Marts = (BigQueryMarts(request.bigquery_dataset, request.bigquery_endpoint, request.dry_run)
                    if request.bigquery_dataset else DuckDBMarts(request.duckdb_path, request.dry_run))
    try:
        if not request.allow_failed_build:
            refuse_failed_build(marts.failed_nodes(), "push")
        pushed = marts.pushed()
        points, shared, skipped = read_points(marts, request, now, pushed, window_build)
        plan = plan_requests(points, pushed, now)
        plan.dropped_too_old += skipped.too_old
        plan.already_pushed += skipped.already_pushed
        summary: dict[str, Any] = _summary(plan)
        summary["live_windows_already_pushed"] = skipped.live_windows
        summary["not_pushed_shared_names"] = shared
        summary["live_window_semantics"] = request.interval_semantics
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
