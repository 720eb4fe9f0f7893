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

import datetime as dt
import math
from typing import Any

import grpc
from conftest import dbt_build, land_runs
from google.cloud import monitoring_v3
from google.cloud.monitoring_v3.services.metric_service.transports import MetricServiceGrpcTransport
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from ml_goodput_measurement.src import gcp_metrics, goodput_utils, monitoring
from ml_goodput_measurement.src import goodput as lib_goodput
from support.fake_monitoring import FakeMonitoring
from support.oracle import ListCloudLogger, frozen_library_clock, payloads_in_processing_order
from support.scenarios import T0, envelope, random_runs, record, utc

from goodput_loader.push.run import PushRequest, run_push
from goodput_loader.push.series import Target

PROJECT, LOCATION, ACCELERATOR = "proj", "us-central2", "v5p-128"
# what the cumulative upload and the step-deviation worker write (push's interval series are not theirs)
CUMULATIVE = {f"compute.googleapis.com/workload/{m}" for m in (
    "goodput_time", "badput_time", "disruptions", "max_productive_steps", "step_time_deviation",
    "total_elapsed_time", "performance")}

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


def library_series(name: str, payloads: list[dict[str, Any]], as_of: dt.datetime, cache: str) -> dict[tuple, list]:
    """What the library's monitor writes for one run at `as_of`: series key -> values, in sending order."""
    config = {"job_name": name, "include_badput_breakdown": True, "configured_ideal_step_time": None,
              "gcp_options": goodput_utils.GCPOptions(project_id=PROJECT, location=LOCATION, replica_id="0",
                                                      acc_type=ACCELERATOR)}
    calculator = lib_goodput.GoodputCalculator(job_name=name, logger_name=f"goodput_{name}",
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


def our_series(db, as_of: dt.datetime) -> dict[str, dict[tuple, list]]:
    """What `push` writes, per run (workload_id): series key -> values in time order."""
    with FakeMonitoring(now=as_of) as server:
        summary = run_push(PushRequest(duckdb_path=str(db), endpoint=server.endpoint, now=as_of,
                                       target=Target(project=PROJECT, location=LOCATION,
                                                     accelerator_type=ACCELERATOR)))
        assert not summary["failed"], summary["failed"]
        by_run: dict[str, dict[tuple, list]] = {}
        for key, points in server.points().items():
            if key[0] in CUMULATIVE:
                by_run.setdefault(dict(key[3])["workload_id"], {})[key] = [value for _, value in points]
    return by_run


def same(a: list, b: list) -> bool:
    return len(a) == len(b) and all(math.isclose(float(x), float(y), rel_tol=0, abs_tol=1e-6) for x, y in zip(a, b))


def check_push_against_the_monitor(tmp_path, runs: dict[str, list[dict[str, Any]]], as_of: dt.datetime) -> None:
    db = land_runs(tmp_path, runs)
    dbt_build(db, as_of, "--", "--exclude", "test_type:data")
    ours = our_series(db, as_of)
    failures: dict[str, list[str]] = {}
    for name, entries in runs.items():
        theirs = library_series(name, payloads_in_processing_order(entries), as_of, str(tmp_path / f"cache-{name}"))
        mine = ours.get(name, {})
        problems = [f"only the library writes {key[0]} {dict(key[1])}" for key in theirs.keys() - mine.keys()]
        problems += [f"only push writes {key[0]} {dict(key[1])}" for key in mine.keys() - theirs.keys()]
        problems += [f"{key[0]} {dict(key[1])}: ours {mine[key]} library {theirs[key]}"
                     for key in theirs.keys() & mine.keys() if not same(mine[key], theirs[key])]
        if problems:
            failures[name] = problems
    assert not failures, "\n".join(f"{run}: {p}" for run, problems in failures.items() for p in problems)[:8000]


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
