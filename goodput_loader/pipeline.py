"""Move batches from a source into a sink, one transaction each.

The pipeline owns the counting and the progress display; sources only parse and
sinks only write, so every source/sink pair behaves the same way.
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import asdict, dataclass
from typing import Generator, Iterable, Iterator, Sequence, TypeVar

from goodput_loader.progress import LoadProgress
from goodput_loader.sinks.base import Batch, Sink

T = TypeVar("T")
_DONE = object()


@dataclass
class LoadSummary:
    """What one source contributed: the figures ``--json`` and ``--verbose`` print."""

    source: str
    source_key: str
    read: int = 0
    inserted: int = 0
    duplicates: int = 0
    rejected: int = 0
    late: int = 0  # landed from behind the cursor: readable only after an earlier load passed them
    seconds: float = 0.0
    shape: str | None = None

    @property
    def rate(self) -> float:
        return self.read / self.seconds if self.seconds > 0 else 0.0

    def as_dict(self) -> dict[str, object]:
        data = asdict(self)
        data["entries_per_second"] = round(self.rate, 1)
        return data


def prefetch(items: Iterable[T], depth: int = 1) -> Iterator[T]:
    """Produce the next items in a background thread while the caller consumes this one.

    A source's parsing (the DuckDB screen, Cloud Logging requests) and a
    sink's write both release the GIL, so overlapping them uses both cores.
    At most ``depth`` items wait, which bounds memory. An exception in the
    source is raised here, in order; if the caller stops early, the producer
    stops at its next item.
    """
    handoff: queue.Queue[object] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    source = iter(items)

    def offer(item: object) -> bool:
        """Hand item over; False once the consumer has stopped."""
        while not stop.is_set():
            try:
                handoff.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in source:
                if not offer(item):
                    return
            offer(_DONE)
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer
            offer(exc)
        finally:
            if isinstance(source, Generator):
                source.close()  # releases what the source holds open (files, the screen)

    producer = threading.Thread(target=produce, name="goodput-source", daemon=True)
    producer.start()
    try:
        while True:
            item = handoff.get()
            if item is _DONE:
                return
            if isinstance(item, BaseException):
                raise item
            yield item  # type: ignore[misc]
    finally:
        stop.set()
        producer.join(timeout=5)


@dataclass
class Source:
    """One source to land: its batches, and what its summary and progress line are called."""

    summary: LoadSummary
    batches: Iterable[Batch]
    description: str
    total_bytes: float | None = None


def _tagged(sources: Iterable[Source]) -> Iterator[tuple[Source, Batch]]:
    """Every source's batches in order, each with its source."""
    for source in sources:
        batches = iter(source.batches)
        try:
            for batch in batches:
                yield source, batch
        finally:
            if isinstance(batches, Generator):
                batches.close()  # a stop mid-source releases its file and screen now


def land(sources: Sequence[Source], sink: Sink, progress: LoadProgress) -> list[LoadSummary]:
    """Write every batch of every source, in order; returns their summaries.

    One prefetch spans all the sources rather than one per source: a small
    file is a single batch, and with a prefetch per file the next file's
    screen could not start before this file's write ended (the fleet's 50k-line
    files loaded at half the rate of one large file). A failure leaves all
    earlier batches committed and consistent; nothing after it is written.
    """
    current: Source | None = None
    task = None
    started = time.monotonic()
    for source, batch in prefetch(_tagged(sources)):
        if source is not current:
            now = time.monotonic()
            if current is not None:
                current.summary.seconds = now - started
            current, started = source, now
            task = progress.start(source.description, total=source.total_bytes)
        result = sink.write_batch(source.summary.source, batch)
        summary = source.summary
        summary.read += batch.entry_count
        summary.inserted += result.inserted
        summary.duplicates += result.duplicates
        if batch.reread:  # read again behind the cursor: count only what is new
            summary.late += result.inserted
            summary.rejected += result.rejected if result.new_rejections is None else result.new_rejections
        else:
            summary.rejected += result.rejected
        progress.update(task, entries=summary.read, rejected=summary.rejected, completed=batch.bytes_read)
    if current is not None:
        current.summary.seconds = time.monotonic() - started
    return [source.summary for source in sources]
