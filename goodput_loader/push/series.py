"""The library's Cloud Monitoring time series, built from the marts, and the requests that carry them.

Every metric type, value type, metric label and resource label here is the one
ml-goodput-measurement 0.2.3 writes (monitoring.py, _upload_goodput_metrics_to_gcm and
_upload_interval_goodput_metrics_to_gcm), so its dashboard and alerts read our series unchanged:

| metric (compute.googleapis.com/workload/...) | value | metric labels |
|---|---|---|
| goodput_time | double, seconds | goodput_source=TOTAL, accelerator_type |
| badput_time | double, seconds | badput_source (CUSTOM_BADPUT_EVENTS.<TYPE> flattened), accelerator_type |
| disruptions | int64 | accelerator_type, window_type=cumulative |
| max_productive_steps | int64 | accelerator_type |
| step_time_deviation | double, seconds | accelerator_type |
| total_elapsed_time | double, seconds | accelerator_type, window_type=cumulative |
| performance | double, ideal step seconds; then the mean step deviation, 5 s later | (none) |
| interval_goodput | double, % | goodput_source=TOTAL, accelerator_type, rolling_window_size |
| interval_badput | double, % | badput_source, accelerator_type, rolling_window_size |

Buckets the Badput catalogue marks exported_to_gcm = false (DATA_LOADING_ASYNC, the library's
ACTIVITY_EXCLUSION_LIST) are never written, nor a bucket the library's breakdown would not hold for
that run (fct_badput_breakdown.is_in_library_breakdown): the marts carry both flags. The monitored
resource is compute.googleapis.com/Workload {location, workload_id=<run>, replica_id}; the
accelerator_type and cluster_name labels go on every metric but performance, as the library puts
them, when they are given.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any, Iterable

PREFIX = "compute.googleapis.com/workload/"
RESOURCE_TYPE = "compute.googleapis.com/Workload"
MAX_SERIES_PER_REQUEST = 200
MIN_SPACING = dt.timedelta(seconds=5)
MAX_AGE = dt.timedelta(hours=25)
SLICE_EFFICIENCIES = ("stepping_slice_efficiency", "available_slice_efficiency")


@dataclass(frozen=True)
class Target:
    """Where the series go: the project and the resource/label values the library takes from GCPOptions."""

    project: str
    location: str
    replica_id: str = "0"
    accelerator_type: str = ""
    cluster_name: str | None = None


@dataclass(frozen=True)
class SeriesKey:
    """One time series: the project it is written to, metric type and labels, and the resource labels."""

    metric_type: str
    metric_labels: tuple[tuple[str, str], ...]
    resource_labels: tuple[tuple[str, str], ...]
    value_type: str  # "int64_value" or "double_value"
    project: str = ""

    @property
    def id(self) -> str:
        """A stable text id, the push state's key: the same labels in another project are another series."""
        labels = ",".join(f"{k}={v}" for k, v in self.metric_labels)
        resource = ",".join(f"{k}={v}" for k, v in self.resource_labels)
        return f"projects/{self.project}/{self.metric_type}{{{labels}}}@{resource}"


@dataclass(frozen=True)
class Point:
    series: SeriesKey
    end_time: dt.datetime
    value: float | int


@dataclass
class Plan:
    """The requests to send (each ≤ 200 series, one point per series) and what was left out, and why."""

    requests: list[list[Point]] = field(default_factory=list)
    already_pushed: int = 0
    dropped_too_old: int = 0
    dropped_too_close: int = 0

    @property
    def points(self) -> int:
        return sum(len(r) for r in self.requests)


def _series(target: Target, run: str, metric: str, value_type: str, labels: dict[str, str],
            with_accelerator: bool = True) -> SeriesKey:
    metric_labels = dict(labels)
    if with_accelerator:
        if target.accelerator_type:
            metric_labels["accelerator_type"] = target.accelerator_type
        if target.cluster_name:
            metric_labels["cluster_name"] = target.cluster_name
    resource = {"location": target.location, "workload_id": run, "replica_id": target.replica_id}
    return SeriesKey(PREFIX + metric, tuple(sorted(metric_labels.items())), tuple(sorted(resource.items())),
                     value_type, target.project)


def cumulative_points(target: Target, run: dict[str, Any], badput: Iterable[dict[str, Any]]) -> list[Point]:
    """The monitor's cumulative and step-deviation uploads for one run (a row of fct_goodput_cumulative
    and its fct_badput_breakdown rows), as points at the run's end (job end, or evaluation time)."""
    name = run["run_name"]
    at = run["last_job_end_at"] or run["evaluated_at"]
    performance = _series(target, name, "performance", "double_value", {}, with_accelerator=False)
    points = [
        Point(_series(target, name, "goodput_time", "double_value", {"goodput_source": "TOTAL"}), at,
              float(run["productive_seconds"])),
        Point(_series(target, name, "disruptions", "int64_value", {"window_type": "cumulative"}), at,
              int(run["disruptions"])),
        Point(_series(target, name, "max_productive_steps", "int64_value", {}), at,
              int(run["max_productive_step"])),
        Point(_series(target, name, "total_elapsed_time", "double_value", {"window_type": "cumulative"}), at,
              float(run["total_elapsed_seconds"])),
        Point(performance, at, float(run["ideal_step_seconds"])),
    ]
    if run["mean_step_deviation_seconds"] is not None:
        # what its step-deviation worker sends when it has deviations: the exported figure, and the mean
        # deviation as a second point of performance (5 s later: one series takes a point per 5 s)
        points.append(Point(_series(target, name, "step_time_deviation", "double_value", {}), at,
                            float(run["step_time_deviation_seconds"])))
        points.append(Point(performance, at + MIN_SPACING, float(run["mean_step_deviation_seconds"])))
    points += _slice_efficiency_points(target, name, run, at, 0)
    for row in badput:
        # a series per key of the library's breakdown: none for a bucket its computation never created
        if not (row["exported_to_gcm"] and row["is_in_library_breakdown"]):
            continue
        points.append(Point(_series(target, name, "badput_time", "double_value",
                                    {"badput_source": row["gcm_badput_source"]}), at, float(row["badput_seconds"])))
    return points


def interval_points(target: Target, goodput: Iterable[dict[str, Any]],
                    badput: Iterable[dict[str, Any]]) -> list[Point]:
    """interval_goodput / interval_badput (percent of the window's elapsed time) per window size,
    one point per window end (rows of the rolling marts: run_name, window_seconds, end_at, pct)."""
    points = []
    for row in goodput:
        if row["goodput_pct"] is None:
            continue
        series = interval_series(target, row["run_name"], row["window_seconds"])
        points.append(Point(series, row["end_at"], float(row["goodput_pct"])))
    for row in badput:
        if not row["exported_to_gcm"] or row["badput_pct"] is None:
            continue
        series = interval_series(target, row["run_name"], row["window_seconds"], row["gcm_badput_source"])
        points.append(Point(series, row["end_at"], float(row["badput_pct"])))
    return points


def interval_series(target: Target, run_name: str, window_seconds: int, badput_source: str | None = None
                    ) -> SeriesKey:
    """A run's interval_goodput series of one window size, or its interval_badput series of one source."""
    size = str(int(window_seconds))
    if badput_source is None:
        return _series(target, run_name, "interval_goodput", "double_value",
                       {"goodput_source": "TOTAL", "rolling_window_size": size})
    return _series(target, run_name, "interval_badput", "double_value",
                   {"badput_source": badput_source, "rolling_window_size": size})


def slice_efficiency_series(target: Target, run_name: str, window_seconds: int) -> list[SeriesKey]:
    """ElasticGoodputMonitor's two slice efficiency series of one window size (0: the cumulative ones)."""
    labels = {"window_type": "INTERVAL" if window_seconds else "CUMULATIVE", "rolling_window_size": str(window_seconds)}
    return [_series(target, run_name, metric, "double_value", labels) for metric in SLICE_EFFICIENCIES]


def interval_efficiency_points(target: Target, rows: Iterable[dict[str, Any]]) -> list[Point]:
    """stepping/available_slice_efficiency of live windows (rows: run_name, window_seconds, end_at and the two
    efficiencies), as ElasticGoodputMonitor's interval upload sends them: none where a window has no
    slice-count entry."""
    return [point for row in rows
            for point in _slice_efficiency_points(target, row["run_name"], row, row["end_at"],
                                                  int(row["window_seconds"]))]


def _slice_efficiency_points(target: Target, name: str, row: dict[str, Any], at: dt.datetime,
                             window_seconds: int) -> list[Point]:
    """What ElasticGoodputMonitor sends with include_slice_efficiency for one cumulative figure (window 0) or
    window: a point per efficiency the row has (an elastic run's; none without slice counts)."""
    return [Point(series, at, float(row[metric]))
            for metric, series in zip(SLICE_EFFICIENCIES, slice_efficiency_series(target, name, window_seconds))
            if row.get(metric) is not None]


def plan_requests(points: Iterable[Point], pushed: dict[str, dt.datetime], now: dt.datetime) -> Plan:
    """Order, thin and split points the way CreateTimeSeries accepts them.

    Per series: only points after the last one pushed, in time order, none older than the API
    accepts (25 h), none closer than 5 s to another (of two, the later is kept). Request k carries the k-th
    remaining point of every series (one point per series per request), at most 200 series each,
    so a series' points always arrive in order.
    """
    plan = Plan()
    by_series: dict[SeriesKey, list[Point]] = {}
    for point in points:
        by_series.setdefault(point.series, []).append(point)
    queues: list[list[Point]] = []
    for series, series_points in sorted(by_series.items(), key=lambda item: item[0].id):
        last = pushed.get(series.id)
        kept: list[Point] = []
        for point in sorted(series_points, key=lambda p: p.end_time):
            if last is not None and point.end_time <= last:
                plan.already_pushed += 1
            elif point.end_time < now - MAX_AGE:
                plan.dropped_too_old += 1
            elif last is not None and point.end_time - last < MIN_SPACING:
                plan.dropped_too_close += 1
            elif kept and point.end_time - kept[-1].end_time < MIN_SPACING:
                # the later of two close points is the newer figure (the live window right after a grid
                # window): a dashboard's latest value is the monitor's, so keep it
                kept[-1] = point
                plan.dropped_too_close += 1
            else:
                kept.append(point)
        if kept:
            queues.append(kept)
    depth = max((len(q) for q in queues), default=0)
    for k in range(depth):
        round_points = [q[k] for q in queues if len(q) > k]
        for start in range(0, len(round_points), MAX_SERIES_PER_REQUEST):
            plan.requests.append(round_points[start:start + MAX_SERIES_PER_REQUEST])
    return plan


def to_json(point: Point) -> dict[str, Any]:
    """A point as the REST/JSON form of a TimeSeries (what --dry-run prints)."""
    value = {"int64Value": str(point.value)} if point.series.value_type == "int64_value" else {
        "doubleValue": point.value}
    return {
        "metric": {"type": point.series.metric_type, "labels": dict(point.series.metric_labels)},
        "resource": {"type": RESOURCE_TYPE, "labels": dict(point.series.resource_labels)},
        "points": [{"interval": {"endTime": point.end_time.astimezone(dt.timezone.utc)
                                 .strftime("%Y-%m-%dT%H:%M:%S.%fZ")}, "value": value}],
    }
