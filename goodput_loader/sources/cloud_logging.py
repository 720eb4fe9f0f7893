"""Read ``goodput_<run>`` entries straight from Cloud Logging.

Uses google-cloud-logging's ``list_entries`` with the reference library's
filter (logName, ``severity=INFO``, ``jsonPayload.job_name``, timestamp bounds),
ascending order and large pages. Each page becomes one batch whose cursor is its
last ``(timestamp, insertId)``; after a commit the next read starts strictly
after it, exactly as the library's incremental reads do.

Three things differ from the library on purpose:

* the upper bound defaults to *now minus a settle delay* (``--settle``): the
  library's writers commit asynchronously, so an entry can arrive with a
  timestamp older than one already readable; reading only settled time means
  the strict cursor never skips such an entry;
* every load also reads again the ``--reread`` window (10 minutes) before its
  cursor: an entry that became readable later than the settle delay still
  lands (deduplication drops what was already there), and the load says how
  many such late entries it found;
* the lower bound defaults to 30 days back (the ``_Default`` bucket's
  retention) instead of the library's 7;
* 429/5xx/deadline/connection failures are retried with capped exponential
  backoff and jitter, restarting from the committed cursor, and reads are paced
  to the project's ``entries.list`` quota (60/min by default).
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
import random
import time
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterator

from goodput_loader.entries import (
    InvalidEntry,
    Rejection,
    format_rfc3339_us,
    from_log_entry,
    log_name_for,
    parse_rfc3339_us,
    truncate_raw,
)
from goodput_loader.errors import SourceError, TransientError
from goodput_loader.sinks.base import Batch, Cursor

DEFAULT_LOOKBACK = dt.timedelta(days=30)
MAX_PAGE_SIZE = 1000


@dataclass(frozen=True)
class LoggingOptions:
    """How to read; the defaults suit a production project's quota."""

    project: str
    since: dt.datetime | None = None
    until: dt.datetime | None = None
    page_size: int = MAX_PAGE_SIZE
    settle: dt.timedelta = dt.timedelta(seconds=120)
    reread: dt.timedelta = dt.timedelta(seconds=600)
    max_retries: int = 8
    retry_initial_delay: float = 1.0
    retry_max_delay: float = 60.0
    requests_per_minute: float = 60.0


def quote_filter_string(value: str) -> str:
    """A Logging query language string literal: backslash-escape ``\\`` and ``"``."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def _iso(value: dt.datetime) -> str:
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.timezone.utc)
    return value.astimezone(dt.timezone.utc).isoformat().replace("+00:00", "Z")


def build_filter(
    project: str,
    run_name: str,
    lower: dt.datetime,
    upper: dt.datetime,
    cursor: tuple[int, str] | None,
    through: tuple[int, str] | None = None,
) -> str:
    """The library's filter for one run, bounded on both sides.

    With a cursor the lower bound is strictly after ``(timestamp, insertId)``;
    without one it is ``timestamp>=lower``. ``through`` ends the range at that
    ``(timestamp, insertId)``, inclusive (the re-read window). An explicit
    timestamp bound is always present, or the client would silently add "the
    last 24 hours".
    """
    parts = [
        f"logName={quote_filter_string(log_name_for(project, run_name))}",
        "severity=INFO",
        f"jsonPayload.job_name={quote_filter_string(run_name)}",
        f'timestamp<="{_iso(upper)}"',
    ]
    if cursor is not None:
        ts = quote_filter_string(format_rfc3339_us(cursor[0]))
        parts.append(
            f"(timestamp>{ts} OR (timestamp={ts} AND insertId>{quote_filter_string(cursor[1])}))"
        )
    else:
        parts.append(f'timestamp>="{_iso(lower)}"')
    if through is not None:
        ts = quote_filter_string(format_rfc3339_us(through[0]))
        parts.append(
            f"(timestamp<{ts} OR (timestamp={ts} AND insertId<={quote_filter_string(through[1])}))"
        )
    return " AND ".join(parts)


class RateLimiter:
    """Token bucket: bursts up to one minute's quota, then paces requests."""

    def __init__(self, per_minute: float, clock: Callable[[], float] = time.monotonic):
        self.capacity = max(per_minute, 1.0)
        self.rate = per_minute / 60.0
        self.tokens = self.capacity
        self.clock = clock
        self.updated = clock()

    def acquire(self) -> None:
        while True:
            now = self.clock()
            self.tokens = min(self.capacity, self.tokens + (now - self.updated) * self.rate)
            self.updated = now
            if self.tokens >= 1.0:
                self.tokens -= 1.0
                return
            time.sleep((1.0 - self.tokens) / self.rate)


def make_client(project: str, api_endpoint: str | None = None) -> Any:
    """A google-cloud-logging client on the HTTP transport.

    With an ``http://`` endpoint (a local server, tests) the client sends no
    credentials: real credentials must never travel over plain HTTP.
    """
    import google.cloud.logging
    from google.auth.credentials import AnonymousCredentials

    kwargs: dict[str, Any] = {"project": project, "_use_grpc": False}
    if api_endpoint:
        kwargs["client_options"] = {"api_endpoint": api_endpoint}
        if api_endpoint.startswith("http://"):
            kwargs["credentials"] = AnonymousCredentials()
    try:
        return google.cloud.logging.Client(**kwargs)
    except Exception as exc:  # google.auth.exceptions.DefaultCredentialsError and friends
        raise SourceError(
            f"cannot create a Cloud Logging client for project {project}: {exc}. "
            "Run `gcloud auth application-default login` or set GOOGLE_APPLICATION_CREDENTIALS."
        ) from exc


def _transient_errors() -> tuple[type[BaseException], ...]:
    import requests
    from google.api_core import exceptions as gexc

    return (
        gexc.TooManyRequests,
        gexc.ServiceUnavailable,
        gexc.DeadlineExceeded,
        gexc.InternalServerError,
        gexc.BadGateway,
        gexc.GatewayTimeout,
        requests.exceptions.ConnectionError,
        requests.exceptions.Timeout,
        # A reply cut mid-body, or a 200 whose body is not JSON (a proxy's error page):
        # the request did not complete, so it is asked again like a 503.
        requests.exceptions.ChunkedEncodingError,
        requests.exceptions.ContentDecodingError,
        requests.exceptions.JSONDecodeError,
    )


def _entry_to_api_dict(entry: Any) -> dict[str, Any]:
    """The REST LogEntry shape of a client entry, so one validator serves every source."""
    obj: dict[str, Any] = {
        "logName": entry.log_name,
        "insertId": entry.insert_id,
        "severity": entry.severity,
    }
    if entry.timestamp is not None:
        obj["timestamp"] = _iso(entry.timestamp)
    received = getattr(entry, "received_timestamp", None)
    if received is not None:
        obj["receiveTimestamp"] = _iso(received)
    payload = entry.payload
    if isinstance(payload, dict):
        obj["jsonPayload"] = payload
    elif isinstance(payload, str):
        obj["textPayload"] = payload
    elif payload is not None:
        obj["protoPayload"] = str(payload)
    return obj


class LoggingReader:
    """Reads one run's log into committed-cursor batches."""

    def __init__(
        self,
        client: Any,
        run_name: str,
        options: LoggingOptions,
        cursor: Cursor | None,
        limiter: RateLimiter,
        sleep: Callable[[float], None] = time.sleep,
    ):
        if not 1 <= options.page_size <= MAX_PAGE_SIZE:
            raise SourceError(f"--page-size must be between 1 and {MAX_PAGE_SIZE}, got {options.page_size}")
        self.client = client
        self.run_name = run_name
        self.options = options
        self.log_name = log_name_for(options.project, run_name)
        self.key = self.source_key_for(options.project, run_name)
        self.limiter = limiter
        self.sleep = sleep
        self._last: tuple[int, str] | None = None
        if cursor is not None and cursor.timestamp_us is not None and cursor.insert_id is not None:
            self._last = (cursor.timestamp_us, cursor.insert_id)
        now = dt.datetime.now(dt.timezone.utc)
        self.upper = options.until or (now - options.settle)
        self.lower = options.since or (self.upper - DEFAULT_LOOKBACK)
        if self.lower > self.upper:
            raise SourceError(f"--since {_iso(self.lower)} is after the upper bound {_iso(self.upper)}")

    @staticmethod
    def source_key_for(project: str, run_name: str) -> str:
        """The load_state key of one run's log."""
        return f"logging:{log_name_for(project, run_name)}"

    def _backoff(self, attempt: int) -> float:
        cap = min(self.options.retry_max_delay, self.options.retry_initial_delay * 2 ** (attempt - 1))
        return random.uniform(cap / 2, cap)

    def batches(self) -> Iterator[Batch]:
        """The re-read window before the cursor (batches that leave the cursor alone), then what is new."""
        if self._last is not None and self.options.reread > dt.timedelta(0):
            since_us = self._last[0] - int(self.options.reread.total_seconds() * 1_000_000)
            lower = dt.datetime.fromtimestamp(since_us / 1_000_000, dt.timezone.utc)
            for batch in self._pages(lower, None, through=self._last):
                yield replace(batch, cursor=None, reread=True)  # a rerun of this part is free: dedup
        yield from self._pages(self.lower, self._last)

    def _pages(self, lower: dt.datetime, after: tuple[int, str] | None,
               through: tuple[int, str] | None = None) -> Iterator[Batch]:
        """Keyset pagination: each request asks for the next page strictly after the last one.

        google-cloud-logging hides page boundaries behind a generator, and a page
        token cannot survive a crash anyway; a fresh query per page from the
        committed cursor is restart-safe, and one request per page is what the
        rate limiter paces.
        """
        import google.cloud.logging
        from google.api_core import exceptions as gexc

        transient = _transient_errors()
        attempt = 0
        while True:
            filter_ = build_filter(self.options.project, self.run_name, lower, self.upper, after, through)
            try:
                self.limiter.acquire()
                # islice: asking the client's generator for one entry more than a
                # page would make it fetch (and bill) the next page.
                page = list(
                    itertools.islice(
                        self.client.list_entries(
                            resource_names=[f"projects/{self.options.project}"],
                            filter_=filter_,
                            order_by=google.cloud.logging.ASCENDING,
                            page_size=self.options.page_size,
                        ),
                        self.options.page_size,
                    )
                )
            except transient as exc:
                attempt += 1
                if attempt > self.options.max_retries:
                    raise TransientError(
                        f"Cloud Logging kept failing for {self.log_name} after "
                        f"{self.options.max_retries} retries: {exc}. Everything read before "
                        "the failure is committed; run the same command again to resume."
                    ) from exc
                self.sleep(self._backoff(attempt))
                continue
            except (gexc.PermissionDenied, gexc.Unauthenticated, gexc.Forbidden, gexc.Unauthorized) as exc:
                raise SourceError(
                    f"Cloud Logging refused to list entries of project {self.options.project}: {exc}. "
                    "The caller needs roles/logging.viewer (logging.logEntries.list)."
                ) from exc
            except gexc.GoogleAPICallError as exc:
                raise SourceError(f"Cloud Logging rejected the query for {self.log_name}: {exc}") from exc
            attempt = 0
            if not page:
                return
            batch = self._convert_page(page)
            yield batch
            if batch.cursor is None or len(page) < self.options.page_size:
                return
            after = (batch.cursor.timestamp_us, batch.cursor.insert_id)  # type: ignore[assignment]

    def _convert_page(self, page: Any) -> Batch:
        """Validate a page; the cursor moves past rejected entries too, so they are not re-read."""
        batch = Batch()
        last: tuple[int, str] | None = None
        for entry in page:
            obj = _entry_to_api_dict(entry)
            location = f"{entry.log_name} insertId={entry.insert_id} timestamp={obj.get('timestamp')}"
            try:
                landed = from_log_entry(obj, location)
            except InvalidEntry as exc:
                batch.rejections.append(
                    Rejection(location, str(exc), truncate_raw(json.dumps(obj, default=str)))
                )
                if entry.timestamp is not None and entry.insert_id:
                    try:
                        key = (parse_rfc3339_us(obj["timestamp"], "timestamp"), entry.insert_id)
                    except InvalidEntry:  # outside 2000-2099: the server's order still puts it here
                        continue
                    last = key if last is None or key > last else last
                continue
            batch.entries.append(landed)
            key = (landed.timestamp_us, landed.insert_id)
            last = key if last is None or key > last else last
        if last is not None:
            batch.cursor = Cursor(source_key=self.key, timestamp_us=last[0], insert_id=last[1])
        return batch
