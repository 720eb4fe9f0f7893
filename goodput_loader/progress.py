"""Progress display for long loads: rows landed and rate, on stderr.

Shown only when stderr is a terminal (or when forced), so pipes, CI logs and
``--json`` output stay clean, as Unix tools do.
"""

from __future__ import annotations

import sys
import time
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn


class LoadProgress:
    """One progress line per source: entries, rejections, entries/s."""

    def __init__(self, enabled: bool | None = None):
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self._progress: Progress | None = None
        self._started: dict[TaskID, float] = {}

    def __enter__(self) -> "LoadProgress":
        if self.enabled:
            self._progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                TextColumn("{task.fields[entries]:>10,} entries"),
                TextColumn("{task.fields[rejected]:>6,} rejected"),
                TextColumn("{task.fields[rate]:>9,.0f}/s"),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                transient=False,
            )
            self._progress.__enter__()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._progress is not None:
            self._progress.__exit__(exc_type, exc, tb)

    def start(self, description: str, total: float | None = None) -> TaskID | None:
        if self._progress is None:
            return None
        task = self._progress.add_task(description, total=total, entries=0, rejected=0, rate=0.0)
        self._started[task] = time.monotonic()
        return task

    def update(self, task: TaskID | None, *, entries: int, rejected: int, completed: float | None = None) -> None:
        if self._progress is None or task is None:
            return
        elapsed = max(time.monotonic() - self._started[task], 1e-9)
        self._progress.update(
            task, entries=entries, rejected=rejected, rate=entries / elapsed, completed=completed
        )
