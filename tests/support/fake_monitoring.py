"""A local Cloud Monitoring MetricService (CreateTimeSeries only) speaking real gRPC with the real
protobuf messages, rejecting what Cloud Monitoring rejects:

- more than 200 time series in one request, a series twice in a request, a series with other than
  one point: the whole request is refused (INVALID_ARGUMENT);
- per series: a resource other than compute.googleapis.com/Workload {location, workload_id,
  replica_id}, a point not after the series' last one or closer than 5 s to it, a point older than
  25 h or in the future, a value type that differs from the metric's earlier points: those series
  are refused, the others written, and the error names them ("...: timeSeries[1,3]"), as the API does.

`failures` queues status codes to answer the next calls with, `fail_from_call` starts an outage
(transient errors for the tests), `lose_replies` names calls whose points are stored but whose
caller hears UNAVAILABLE (a reply lost on the way back).
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from concurrent import futures
from typing import Any

import grpc
from google.cloud import monitoring_v3
from google.protobuf import empty_pb2

RESOURCE_LABELS = {"location", "workload_id", "replica_id"}


def series_key(ts: Any, project: str = "projects/proj") -> tuple:
    """A series is its metric, its resource and the project it is written to."""
    return (ts.metric.type, tuple(sorted(ts.metric.labels.items())), ts.resource.type,
            tuple(sorted(ts.resource.labels.items())), project)


class FakeMonitoring:
    def __init__(self, now: dt.datetime | None = None):
        self.now = now
        self.failures: list[grpc.StatusCode] = []
        self.fail_from_call: int | None = None  # answer UNAVAILABLE from this call on
        self.lose_replies: set[int] = set()  # calls whose points are stored but whose reply is lost
        self.delay = 0.0  # seconds each call takes before its reply (a slow network, for kill tests)
        self.series: dict[tuple, list[tuple[dt.datetime, Any]]] = {}
        self.value_types: dict[str, str] = {}
        self.requests: list[int] = []  # series per accepted call
        self.calls = 0
        self._lock = threading.Lock()
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        handler = grpc.method_handlers_generic_handler("google.monitoring.v3.MetricService", {
            "CreateTimeSeries": grpc.unary_unary_rpc_method_handler(
                self._create, request_deserializer=monitoring_v3.CreateTimeSeriesRequest.deserialize,
                response_serializer=empty_pb2.Empty.SerializeToString),
        })
        self._server.add_generic_rpc_handlers((handler,))
        self.port = self._server.add_insecure_port("127.0.0.1:0")

    @property
    def endpoint(self) -> str:
        return f"127.0.0.1:{self.port}"

    def __enter__(self) -> "FakeMonitoring":
        self._server.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.stop(grace=None)

    def points(self) -> dict[tuple, list[tuple[dt.datetime, Any]]]:
        return self.series

    def _create(self, request: Any, context: grpc.ServicerContext) -> empty_pb2.Empty:
        with self._lock:
            self.calls += 1
            if self.failures:
                context.abort(self.failures.pop(0), "injected failure")
            if self.fail_from_call is not None and self.calls >= self.fail_from_call:
                context.abort(grpc.StatusCode.UNAVAILABLE, "injected outage")
            if not request.name.startswith("projects/"):
                context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"Invalid resource name {request.name!r}")
            if len(request.time_series) > 200:
                context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                              "Exceeded the maximum number of TimeSeries per request (200)")
            seen: set[tuple] = set()
            for i, ts in enumerate(request.time_series):
                if len(ts.points) != 1:
                    context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                                  f"Field timeSeries[{i}].points must contain exactly one point")
                key = series_key(ts, request.name)
                if key in seen:
                    context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"Field timeSeries[{i}] referenced a time "
                                  "series that is already present in the request")
                seen.add(key)
            now = self.now or dt.datetime.now(dt.timezone.utc)
            rejected: dict[str, list[int]] = {}
            for i, ts in enumerate(request.time_series):
                reason = self._check(ts, now, request.name)
                if reason:
                    rejected.setdefault(reason, []).append(i)
                    continue
                point = ts.points[0]
                kind = point.value._pb.WhichOneof("value")
                self.value_types.setdefault(ts.metric.type, kind)
                self.series.setdefault(series_key(ts, request.name), []).append(
                    (point.interval.end_time, getattr(point.value, kind)))
            self.requests.append(len(request.time_series) - sum(len(v) for v in rejected.values()))
            if self.delay:
                time.sleep(self.delay)
            if self.calls in self.lose_replies:
                context.abort(grpc.StatusCode.UNAVAILABLE, "injected: the points were stored, the reply was lost")
            if rejected:
                details = "; ".join(f"{reason}: timeSeries[{','.join(map(str, idx))}]"
                                    for reason, idx in rejected.items())
                context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                              f"One or more TimeSeries could not be written: {details}")
            return empty_pb2.Empty()

    def _check(self, ts: Any, now: dt.datetime, project: str) -> str | None:
        if ts.resource.type != "compute.googleapis.com/Workload" or set(ts.resource.labels) != RESOURCE_LABELS:
            return f"Unrecognized resource or labels {ts.resource.type} {sorted(ts.resource.labels)}"
        if not ts.metric.type.startswith("compute.googleapis.com/workload/"):
            return f"Unknown metric type {ts.metric.type}"
        point = ts.points[0]
        end = point.interval.end_time
        kind = point.value._pb.WhichOneof("value")
        if self.value_types.get(ts.metric.type, kind) != kind:
            return f"Value type for metric {ts.metric.type} must be {self.value_types[ts.metric.type]}"
        if end < now - dt.timedelta(hours=25):
            return "Points must be written in order... The point is older than the allowed 25 hours"
        if end > now + dt.timedelta(minutes=5):
            return "The point's end time is in the future"
        history = self.series.get(series_key(ts, project))
        if history:
            last = history[-1][0]
            if end <= last:
                return ("Points must be written in order. One or more of the points specified had an older "
                        "start time than the most recent point.")
            if end - last < dt.timedelta(seconds=5):
                return "One or more points were written more frequently than the maximum sampling period"
        return None
