"""Move batches from a source into a sink, one transaction each.

The pipeline owns the counting and the progress display; sources only parse and
sinks only write, so every source/sink pair behaves the same way.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Iterable

from goodput_loader.progress import LoadProgress
from goodput_loader.sinks.base import Batch, Sink


@dataclass
class LoadSummary:
    """What one source contributed: the figures ``--json`` and ``--verbose`` print."""

    source: str
    source_key: str
    read: int = 0
    inserted: int = 0
    duplicates: int = 0
    rejected: int = 0
    seconds: float = 0.0
    shape: str | None = None

    @property
    def rate(self) -> float:
        return self.read / self.seconds if self.seconds > 0 else 0.0

    def as_dict(self) -> dict[str, object]:
        data = asdict(self)
        data["entries_per_second"] = round(self.rate, 1)
        return data


def land(
    batches: Iterable[Batch],
    sink: Sink,
    summary: LoadSummary,
    progress: LoadProgress,
    description: str,
    total_bytes: float | None = None,
) -> LoadSummary:
    """Write every batch; a failure leaves all earlier batches committed and consistent."""
    started = time.monotonic()
    task = progress.start(description, total=total_bytes)
    for batch in batches:
        result = sink.write_batch(summary.source, batch.entries, batch.rejections, batch.cursor)
        summary.read += len(batch.entries)
        summary.inserted += result.inserted
        summary.duplicates += result.duplicates
        summary.rejected += result.rejected
        progress.update(
            task,
            entries=summary.read,
            rejected=summary.rejected,
            completed=batch.bytes_read,
        )
    summary.seconds = time.monotonic() - started
    return summary
