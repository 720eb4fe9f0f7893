"""The ``load`` command's work: pick sources, open the sink, land each source."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from goodput_loader.pipeline import LoadSummary, Source, land
from goodput_loader.progress import LoadProgress
from goodput_loader.sinks.base import BATCH_LINES, Sink
from goodput_loader.warehouses.duckdb import DuckDBSink


@dataclass(frozen=True)
class LoggingRead:
    """How to read Cloud Logging (``--from-logging``): the time bounds, the pacing, the retries."""

    since: dt.datetime | None = None
    until: dt.datetime | None = None
    settle_seconds: float = 120.0
    reread_seconds: float = 600.0
    page_size: int = 1000
    requests_per_minute: float = 60.0
    max_retries: int = 8
    retry_initial_delay: float = 1.0
    endpoint: str | None = None


@dataclass(frozen=True)
class BigQueryDestination:
    """Where to land instead of DuckDB (``--bigquery``); no dataset means the DuckDB file."""

    dataset: str | None = None
    endpoint: str | None = None
    location: str | None = None


@dataclass(frozen=True)
class FileRead:
    """How to read files: lines per transaction, and whether to ignore earlier cursors."""

    batch_size: int = BATCH_LINES
    rescan: bool = False


@dataclass
class LoadRequest:
    """Everything ``goodput-loader load`` was asked to do, grouped as its options are."""

    duckdb_path: str
    files: list[str] = field(default_factory=list)
    from_logging: bool = False
    project: str | None = None
    runs: list[str] = field(default_factory=list)
    logging: LoggingRead = field(default_factory=LoggingRead)
    bigquery: BigQueryDestination = field(default_factory=BigQueryDestination)
    file_read: FileRead = field(default_factory=FileRead)
    progress: bool | None = None


def open_sink(request: LoadRequest) -> Sink:
    """BigQuery when --bigquery names a dataset, else the DuckDB file."""
    destination = request.bigquery
    if destination.dataset:
        from goodput_loader.warehouses.bigquery import BigQuerySink

        return BigQuerySink(destination.dataset, destination.endpoint, destination.location)
    return DuckDBSink(request.duckdb_path)


def run_load(request: LoadRequest) -> list[LoadSummary]:
    """Land every source of the request into its sink; one summary per source, in order."""
    sink = open_sink(request)
    try:
        with LoadProgress(request.progress) as progress:
            if request.from_logging:
                return _load_logging(request, sink, progress)
            return _load_files(request, sink, progress)
    finally:
        sink.close()


def _load_files(request: LoadRequest, sink: Sink, progress: LoadProgress) -> list[LoadSummary]:
    from goodput_loader.sources.files import FileOptions, FileReader, expand_paths, source_key

    options = FileOptions(
        run_name=request.runs[0] if request.runs else None,
        project=request.project or "local",
        batch_size=request.file_read.batch_size,
        rescan=request.file_read.rescan,
    )
    # Every cursor is read here, before the first write: the sources are read
    # ahead in another thread, which must not share the sink's connection.
    readers = [FileReader(path, options, sink.get_cursor(source_key(path))) for path in expand_paths(request.files)]
    summaries = land(
        [
            Source(LoadSummary(source="file", source_key=r.key), r.batches(), r.path.name, total_bytes=r.size)
            for r in readers
        ],
        sink,
        progress,
    )
    for reader, summary in zip(readers, summaries):
        summary.shape = reader.shape
    return summaries


def _load_logging(request: LoadRequest, sink: Sink, progress: LoadProgress) -> list[LoadSummary]:
    from goodput_loader.sources.cloud_logging import (
        LoggingOptions,
        LoggingReader,
        RateLimiter,
        make_client,
    )

    assert request.project is not None
    read = request.logging
    options = LoggingOptions(
        project=request.project,
        since=read.since,
        until=read.until,
        page_size=read.page_size,
        settle=dt.timedelta(seconds=read.settle_seconds),
        reread=dt.timedelta(seconds=read.reread_seconds),
        max_retries=read.max_retries,
        retry_initial_delay=read.retry_initial_delay,
        requests_per_minute=read.requests_per_minute,
    )
    client = make_client(request.project, read.endpoint)
    limiter = RateLimiter(read.requests_per_minute)
    sources = []
    for run in dict.fromkeys(request.runs):  # each run once, in the order given
        key = LoggingReader.source_key_for(request.project, run)
        reader = LoggingReader(client, run, options, sink.get_cursor(key), limiter)
        summary = LoadSummary(source="cloud_logging", source_key=key, shape="log_entry")
        sources.append(Source(summary, reader.batches(), run))
    return land(sources, sink, progress)
