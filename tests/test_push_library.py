"""`push` against the library's own monitor: the same Cloud Monitoring series, with the same values.

The differential scenarios (runs written by the library's real GoodputRecorder) are landed and built
once. For each run the library's real GoodputCalculator computes at the same instant, and its real
`monitoring` upload functions (the cumulative upload and the step-deviation worker's) send through a
real MetricServiceClient to a local MetricService, as its monitor would; `push` sends the marts through
its own client to another. The set of series (metric type, metric labels, resource labels) must be the
same, and every value equal within 1e-6: a bucket the library never created has no series, a run the
library raises on has none at all.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import math
from typing import Any

import grpc
from conftest import dbt_build, land_runs, query
from google.cloud import monitoring_v3
from google.cloud.monitoring_v3.services.metric_service.transports import MetricServiceGrpcTransport
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from ml_goodput_measurement.src import gcp_metrics, goodput_utils, monitoring
from ml_goodput_measurement.src import goodput as lib_goodput
from ml_goodput_measurement.src.goodput_elastic import ElasticGoodputCalculator
from support.elastic import random_elastic_runs, record_elastic
from support.fake_monitoring import FakeMonitoring
from support.oracle import ListCloudLogger, frozen_library_clock, payloads_in_processing_order
from support.scenarios import T0, envelope, random_runs, record, utc

from goodput_loader.library_windows import WindowBuildProcess
from goodput_loader.push.run import PushRequest, run_push
from goodput_loader.push.series import Target

PROJECT, LOCATION, ACCELERATOR = "proj", "us-central2", "v5p-128"
# what the cumulative upload and the step-deviation worker write (push's interval series are not theirs)
CUMULATIVE = {f"compute.googleapis.com/workload/{m}" for m in (
    "goodput_time", "badput_time", "disruptions", "max_productive_steps", "step_time_deviation",
    "total_elapsed_time", "performance", "stepping_slice_efficiency", "available_slice_efficiency")}

# what the rolling-window worker writes, for the window sizes of the rolling marts (dbt_project.yml)
INTERVAL = {"compute.googleapis.com/workload/interval_goodput", "compute.googleapis.com/workload/interval_badput"}
WINDOWS = [3600, 86400, 259200, 432000]

# Runs the random scenarios reach only by chance: no step, one step, steps all under 1 s (no ideal
# step time), a restart from step 0 after a new job start, data loading and nothing else, a restart
# after a job end.
FIXED = {
    "no-steps": [("job_start", T0), ("tpu_init_start", T0 + 1), ("tpu_init_end", T0 + 30), ("job_end", T0 + 60)],
    "one-step": [("job_start", T0), ("step", T0 + 10, 5), ("job_end", T0 + 40)],
    "short-steps": [("job_start", T0)] + [("step", T0 + 5 + 0.4 * i, i) for i in range(8)] + [("job_end", T0 + 9)],
    "restart-at-0": [("job_start", T0)] + [("step", T0 + 10 + 3 * i, i) for i in range(6)]
    + [("job_start", T0 + 100)] + [("step", T0 + 120 + 3 * i, i) for i in range(4)],
    "data-loading-only": [("job_start", T0), ("data_loading_start", T0 + 2), ("data_loading_end", T0 + 9)],
    # a job end, then a restart: the library raises on it (its monitor skips the cycle) or it does not
    "ended-then-restarted": [("job_start", T0)] + [("step", T0 + 10 + 3 * i, i) for i in range(6)]
    + [("job_end", T0 + 30), ("job_start", T0 + 100)] + [("step", T0 + 120 + 3 * i, i) for i in range(3, 10)],
}


def library_client(server: FakeMonitoring) -> Any:
    """GCPMetrics as the monitor builds it, its real client pointed at a local server."""
    sender = gcp_metrics.GCPMetrics.__new__(gcp_metrics.GCPMetrics)
    sender.project_id = PROJECT
    sender.project_name = f"projects/{PROJECT}"
    sender.client = monitoring_v3.MetricServiceClient(
        transport=MetricServiceGrpcTransport(channel=grpc.insecure_channel(server.endpoint)))
    return sender


def library_series(name: str, payloads: list[dict[str, Any]], as_of: dt.datetime, cache: str,
                   elastic: bool = False) -> dict[tuple, list]:
    """What the library's monitor writes for one run at `as_of`: series key -> values, in sending order.
    elastic: as ElasticGoodputMonitor(include_slice_efficiency=True) writes it."""
    config = {"job_name": name, "include_badput_breakdown": True, "configured_ideal_step_time": None,
              "include_slice_efficiency": elastic,
              "gcp_options": goodput_utils.GCPOptions(project_id=PROJECT, location=LOCATION, replica_id="0",
                                                      acc_type=ACCELERATOR)}
    calculator_class = ElasticGoodputCalculator if elastic else lib_goodput.GoodputCalculator
    calculator = calculator_class(job_name=name, logger_name=f"goodput_{name}",
                                  cloud_logger=ListCloudLogger(name, payloads), cache_dir=cache)
    found: dict[tuple, list] = {}
    # one server per upload: both write `performance` within the same second, which one series refuses
    with FakeMonitoring() as cumulative, FakeMonitoring() as deviation, frozen_library_clock(as_of):
        try:
            calculator.get_job_goodput(include_badput_breakdown=True)
        except ValueError:
            return {}  # _query_and_upload_goodput_once skips the cycle: nothing is sent
        monitoring._upload_goodput_metrics_to_gcm(library_client(cumulative), calculator.get_job_goodput_details(),
                                                  config)
        try:
            deviations = calculator.get_step_deviation(None)
        except ValueError:
            deviations = None  # _query_and_upload_step_deviation_once skips the cycle
        if deviations is not None:
            monitoring._send_step_deviation_metric_to_gcp(library_client(deviation), deviations, config)
        for server in (cumulative, deviation):
            for key, points in server.points().items():
                found.setdefault(key, []).extend(value for _, value in points)
    return found


def library_interval_series(name: str, payloads: list[dict[str, Any]], end: dt.datetime,
                            cache: str, elastic: bool = False) -> dict[tuple, float]:
    """What the library's rolling-window worker writes for one run at `end`: one calculator, every window
    size of the rolling marts, get_interval_metric_details and _upload_interval_goodput_metrics_to_gcm
    (elastic: ElasticGoodputMonitor's, with include_slice_efficiency)."""
    config = {"job_name": name, "include_slice_efficiency": elastic,
              "gcp_options": goodput_utils.GCPOptions(project_id=PROJECT, location=LOCATION, replica_id="0",
                                                      acc_type=ACCELERATOR)}
    calculator_class = ElasticGoodputCalculator if elastic else lib_goodput.GoodputCalculator
    calculator = calculator_class(job_name=name, logger_name=f"goodput_{name}",
                                  cloud_logger=ListCloudLogger(name, payloads), cache_dir=cache)
    found: dict[tuple, float] = {}
    for size in WINDOWS:
        details = calculator.get_interval_metric_details(end - dt.timedelta(seconds=size), end)
        with FakeMonitoring() as server:
            monitoring._upload_interval_goodput_metrics_to_gcm(library_client(server), details, config)
            found.update({key: points[-1][1] for key, points in server.points().items()})
    return found


def our_series(db, as_of: dt.datetime, started: WindowBuildProcess | None = None) -> dict[str, dict[tuple, list]]:
    """What `push` writes, per run (workload_id): series key -> (time, value) in time order. `started`: a
    window build child started beforehand, as refresh starts it, which the push must use."""
    with FakeMonitoring(now=as_of) as server:
        summary = run_push(PushRequest(duckdb_path=str(db), endpoint=server.endpoint, now=as_of,
                                       target=Target(project=PROJECT, location=LOCATION,
                                                     accelerator_type=ACCELERATOR)), started)
        assert not summary["failed"], summary["failed"]
        assert started is None or not started.ready, "the push started its own window build"
        by_run: dict[str, dict[tuple, list]] = {}
        for key, points in server.points().items():
            by_run.setdefault(dict(key[3])["workload_id"], {})[key] = list(points)
    return by_run


def is_interval(key: tuple) -> bool:
    """A series of the rolling-window worker: interval Goodput/Badput, and the slice efficiencies it writes
    with window_type INTERVAL (the cumulative upload writes them with CUMULATIVE)."""
    return key[0] in INTERVAL or dict(key[1]).get("window_type") == "INTERVAL"


def same(a: list, b: list) -> bool:
    return len(a) == len(b) and all(math.isclose(float(x), float(y), rel_tol=0, abs_tol=1e-6) for x, y in zip(a, b))


def check_push_against_the_monitor(tmp_path, runs: dict[str, list[dict[str, Any]]], as_of: dt.datetime,
                                   elastic: frozenset[str] = frozenset(), started_child: bool = False) -> None:
    """The cumulative series (values at the run's end), and the interval series' live point: the window of
    every size ending at the run's end (job end or as_of), as the rolling-window worker computes it there.
    Runs in `elastic`: as ElasticGoodputMonitor(include_slice_efficiency=True) writes them."""
    db = land_runs(tmp_path, runs)
    dbt_build(db, as_of, "--", "--exclude", "test_type:data")
    with WindowBuildProcess() if started_child else contextlib.nullcontext() as started:
        ours = our_series(db, as_of, started)
    ends = {name: end.replace(tzinfo=dt.timezone.utc) for name, end in query(
        db, "select distinct run_name, window_end_at from fct_goodput_rolling_latest")}
    failures: dict[str, list[str]] = {}
    live_points = 0
    for name, entries in runs.items():
        payloads = payloads_in_processing_order(entries)
        theirs = {key: [value] for key, value in library_interval_series(
            name, payloads, ends[name], str(tmp_path / f"interval-{name}"), name in elastic).items()} \
            if name in ends else {}
        theirs.update(library_series(name, payloads, as_of, str(tmp_path / f"cache-{name}"), name in elastic))
        mine = {key: [value for _, value in points] for key, points in ours.get(name, {}).items()
                if key[0] in CUMULATIVE and not is_interval(key)}
        # interval series: the point at the live window's end (the ones before are the additive history)
        mine.update({key: [value for at, value in points if at == ends.get(name)]
                     for key, points in ours.get(name, {}).items() if is_interval(key)})
        mine = {key: values for key, values in mine.items() if values}
        live_points += sum(1 for key in mine if is_interval(key))
        problems = [f"only the library writes {key[0]} {dict(key[1])}" for key in theirs.keys() - mine.keys()]
        problems += [f"only push writes {key[0]} {dict(key[1])}" for key in mine.keys() - theirs.keys()]
        problems += [f"{key[0]} {dict(key[1])}: ours {mine[key]} library {theirs[key]}"
                     for key in theirs.keys() & mine.keys() if not same(mine[key], theirs[key])]
        if problems:
            failures[name] = problems
    assert not failures, "\n".join(f"{run}: {p}" for run, problems in failures.items() for p in problems)[:8000]
    assert live_points > 10 * len(runs), live_points
    if elastic:  # the elastic series were there to compare, cumulative and interval
        kinds = {dict(key[1]).get("window_type") for mine in ours.values() for key in mine if "slice_efficiency" in key[0]}
        assert kinds == {"CUMULATIVE", "INTERVAL"}, kinds


# No shrinking: a failing example's seeds are printed, and shrinking seeds means nothing.
@settings(max_examples=2, deadline=None, database=None, phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(st.integers(0, 2**32 - 1), min_size=60, max_size=60))
def test_push_writes_the_series_the_library_s_monitor_writes(tmp_path_factory, seeds):
    tmp_path = tmp_path_factory.mktemp("push-library")
    runs, end = random_runs(seeds)
    for name, ops in FIXED.items():
        runs[name] = envelope(name, record(name, ops), [False] * len(ops))
    check_push_against_the_monitor(tmp_path, runs, utc(max(end, T0 + 200) + 100))


@settings(max_examples=1, deadline=None, database=None, phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(st.integers(0, 2**32 - 1), min_size=30, max_size=30))
def test_push_writes_the_series_the_elastic_monitor_writes(tmp_path_factory, seeds):
    """Elastic runs: the ELASTIC_* badput_time series the library created, and both slice efficiencies."""
    tmp_path = tmp_path_factory.mktemp("push-elastic")
    runs, end = random_elastic_runs(seeds)
    # an elastic job whose last hours hold no elastic entry: its 1 h window still has the elastic keys (at 0)
    quiet = [("job_start", T0), ("slices", T0 + 1, 2, 4, 3)] + [("step", T0 + 10 + 60 * i, i) for i in range(150)] \
        + [("job_end", T0 + 10 + 60 * 150)]
    runs["elastic-quiet"] = envelope("elastic-quiet", record_elastic("elastic-quiet", quiet), [False])
    # with the window build's child started before the push, as refresh does
    check_push_against_the_monitor(tmp_path, runs, utc(max(end, T0 + 9100) + 100), elastic=frozenset(runs),
                                   started_child=True)
