"""CreateTimeSeries with the API's failure modes handled: transient errors are retried with
backoff, a partial failure (some series rejected) retries only the series it names."""

from __future__ import annotations

import random
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from goodput_loader.errors import LoaderError
from goodput_loader.push.series import RESOURCE_TYPE, Point

# "...could not be written: <reason>: timeSeries[0-2,5]; <reason>: timeSeries[3]" names the
# rejected series of a request, grouped by reason.
_GROUP = re.compile(r"\s*(.*?):\s*timeSeries\[([0-9,\s-]+)\];?", re.S)
# The answer for a point that is not after the series' last point. After a reply lost on the
# way back, or a push stopped between sending and recording, that point is the one the server
# already holds: it counts as written, or every later push would resend it and fail.
_ALREADY_HELD = re.compile(r"older (start|end) time than the most recent point")


def _indexes(group: str) -> set[int]:
    found: set[int] = set()
    for part in group.split(","):
        part = part.strip()
        if "-" in part:
            low, high = part.split("-", 1)
            found.update(range(int(low), int(high) + 1))
        elif part:
            found.add(int(part))
    return found


def rejections(message: str) -> dict[int, str]:
    """The rejected series of a request, by index, each with the reason the API gave."""
    body = message.split("could not be written:", 1)[-1]
    return {i: match.group(1).strip() for match in _GROUP.finditer(body) for i in _indexes(match.group(2))}


def make_client(endpoint: str | None) -> Any:
    """A MetricServiceClient: default credentials, or an insecure channel to a local server."""
    from goodput_loader.extras import require

    monitoring_v3 = require("google.cloud.monitoring_v3", "monitoring", "push")
    if endpoint:
        import grpc
        from google.cloud.monitoring_v3.services.metric_service.transports import MetricServiceGrpcTransport

        target = endpoint.split("://", 1)[-1]
        transport = MetricServiceGrpcTransport(channel=grpc.insecure_channel(target))
        return monitoring_v3.MetricServiceClient(transport=transport)
    try:
        return monitoring_v3.MetricServiceClient()
    except Exception as exc:  # google.auth.exceptions.DefaultCredentialsError and friends
        raise LoaderError(
            f"cannot create a Cloud Monitoring client: {exc}. Run `gcloud auth application-default login` "
            "or set GOOGLE_APPLICATION_CREDENTIALS (or use --dry-run to see what would be sent)"
        ) from exc


def to_proto(point: Point) -> Any:
    from google.cloud import monitoring_v3

    return monitoring_v3.TimeSeries(
        metric={"type": point.series.metric_type, "labels": dict(point.series.metric_labels)},
        resource={"type": RESOURCE_TYPE, "labels": dict(point.series.resource_labels)},
        points=[monitoring_v3.Point(interval={"end_time": point.end_time},
                                    value={point.series.value_type: point.value})],
    )


@dataclass
class SendResult:
    written: list[Point] = field(default_factory=list)
    held: list[Point] = field(default_factory=list)  # refused: the series already has this point or a later one
    failed: list[tuple[Point, str]] = field(default_factory=list)
    retries: int = 0


@dataclass
class Sender:
    client: Any
    project: str
    max_retries: int = 5
    initial_delay: float = 0.5
    sleep: Callable[[float], None] = time.sleep

    def send(self, points: Sequence[Point]) -> SendResult:
        from google.api_core import exceptions as gexc

        result = SendResult()
        pending = list(points)
        attempt = 0
        while pending:
            try:
                self.client.create_time_series(name=f"projects/{self.project}",
                                               time_series=[to_proto(p) for p in pending], retry=None, timeout=60)
                result.written.extend(pending)
                return result
            except (gexc.ServiceUnavailable, gexc.DeadlineExceeded, gexc.ResourceExhausted) as exc:
                reason = f"{type(exc).__name__}: {exc.message}"
                retry = pending
            except gexc.GoogleAPICallError as exc:
                rejected = rejections(exc.message or "")
                if not rejected:  # the whole request was refused: retrying it changes nothing
                    result.failed.extend((p, f"{type(exc).__name__}: {exc.message}") for p in pending)
                    return result
                result.written.extend(p for i, p in enumerate(pending) if i not in rejected)
                result.held.extend(p for i, p in enumerate(pending) if _ALREADY_HELD.search(rejected.get(i, "")))
                reason = f"{type(exc).__name__}: {exc.message}"
                retry = [p for i, p in enumerate(pending) if i in rejected and not _ALREADY_HELD.search(rejected[i])]
                if not retry:
                    return result
            attempt += 1
            if attempt > self.max_retries:
                result.failed.extend((p, reason) for p in retry)
                return result
            result.retries += 1
            delay = min(30.0, self.initial_delay * 2 ** (attempt - 1))
            self.sleep(delay * random.uniform(0.5, 1.0))
            pending = retry
        return result
