"""`goodput-loader refresh`: the one command a scheduler runs — load, build, push — under a lock.

A schedule every few minutes must never run two cycles at once on one warehouse (two dbt builds
of one DuckDB file fail, two pushes race on the push state), must never push marts of a build
that failed, and must say which step failed through its exit code, so the scheduler's alerting
works. So: take an exclusive lock beside the warehouse (a second cycle started meanwhile does
nothing and exits EXIT_LOCKED), then load, then build, then push; the first step that fails ends
the cycle with its message, and the later steps are not run.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import os
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goodput_loader.errors import LoaderError

if TYPE_CHECKING:  # imported when the cycle runs: `--help` stays fast, and push's extra stays optional
    from goodput_loader.library_windows import WindowBuildProcess
    from goodput_loader.load import LoadRequest
    from goodput_loader.push.run import PushRequest

# EX_TEMPFAIL (sysexits.h): another cycle holds the lock; try again at the next tick.
EXIT_LOCKED = 75
# The first words of every lock file we write: a file without them is never truncated.
LOCK_MARKER = "goodput-loader refresh lock:"


class LockedError(LoaderError):
    """Another refresh of the same warehouse is running."""

    exit_code = EXIT_LOCKED


class StepError(LoaderError):
    """A step of the cycle failed: its name, the error it raised, and what the cycle did until then."""

    def __init__(self, step: str, cause: LoaderError, summary: dict[str, Any]):
        later = {"load": "nothing was built or pushed", "build": "nothing was pushed", "push": "the marts are built"}
        super().__init__(f"{step} failed ({later[step]}): {cause}")
        self.step = step
        self.exit_code = cause.exit_code
        self.summary = summary


@contextlib.contextmanager
def exclusive_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive, non-blocking flock on `path` for the block.

    The kernel drops the lock when the process dies, so a killed cycle never leaves a stale lock
    behind; the file keeps the holder's pid and start time only to say who holds it."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(path, "a+b")  # binary: --lock may point at any file
    except OSError as exc:
        raise LoaderError(f"cannot open the refresh lock {path}: {exc.strerror or exc} "
                          "(give a writable file with --lock)") from exc
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().decode(errors="replace").removeprefix(LOCK_MARKER).strip() or "an unknown process"
            raise LockedError(f"another refresh holds {path} ({holder}); this one does nothing") from None
        handle.seek(0)
        held_before = handle.read()
        if held_before and not held_before.startswith(LOCK_MARKER.encode()):
            # never overwrite a file that is not ours (--lock pointed at the warehouse, an input, ...)
            raise LoaderError(f"--lock {path} is an existing file that is not a refresh lock; give a new path")
        handle.seek(0)
        handle.truncate()
        handle.write(f"{LOCK_MARKER} held by pid {os.getpid()} since "
                     f"{dt.datetime.now(dt.timezone.utc).isoformat(timespec='seconds')}".encode())
        handle.flush()
        yield
    finally:
        handle.close()


@dataclass
class RefreshRequest:
    """One cycle: what to load (a LoadRequest), the dbt vars of the build, and where to push (or not)."""

    load: LoadRequest
    variables: dict[str, Any] = field(default_factory=dict)
    push: PushRequest | None = None  # None: stop after the build
    lock_path: Path | None = None
    quiet: bool = True

    def lock_file(self) -> Path:
        """Beside the DuckDB file by default, so every schedule of one warehouse shares it."""
        return self.lock_path or Path(f"{self.load.duckdb_path}.refresh.lock")


def run_refresh(request: RefreshRequest, info: Callable[[str], None] = lambda _: None) -> dict[str, Any]:
    """Run the cycle; return what each step did. Raises LockedError or StepError."""
    from goodput_loader.dbt import run_dbt
    from goodput_loader.load import run_load

    summary: dict[str, Any] = {"lock": str(request.lock_file()), "steps": {}}
    with exclusive_lock(request.lock_file()), _window_build_child(request.push) as window_build:
        started = time.monotonic()
        sources = _step(summary, "load", run_load, request.load)
        summary["steps"]["load"] = {
            "seconds": round(time.monotonic() - started, 3),
            "read": sum(s.read for s in sources), "inserted": sum(s.inserted for s in sources),
            "rejected": sum(s.rejected for s in sources),
        }
        info(f"load: {summary['steps']['load']['inserted']:,} new entries, "
             f"{summary['steps']['load']['rejected']:,} rejected")

        started = time.monotonic()
        with contextlib.redirect_stdout(sys.stderr):  # stdout is the summary's (--json); dbt's log is not data
            _step(summary, "build", run_dbt, ["build"], duckdb_path=request.load.duckdb_path, quiet=request.quiet,
                  variables=request.variables)
        summary["steps"]["build"] = {"seconds": round(time.monotonic() - started, 3)}
        info(f"build: done in {summary['steps']['build']['seconds']:.1f}s")

        if request.push is None:
            return summary
        from goodput_loader.push.run import run_push

        started = time.monotonic()
        pushed = _step(summary, "push", run_push, request.push, window_build)
        pushed["seconds"] = round(time.monotonic() - started, 3)
        summary["steps"]["push"] = pushed
        info(f"push: {pushed['points_written']:,} points written, {len(pushed['failed'])} failed")
        if pushed["failed"] or pushed["not_pushed_shared_names"]:
            summary["failed_step"] = "push"
            raise StepError("push", LoaderError(
                f"{len(pushed['failed'])} points failed and {len(pushed['not_pushed_shared_names'])} run names "
                "were left out (see the summary: refresh --json)"), summary)
    return summary


@contextlib.contextmanager
def _window_build_child(push: PushRequest | None) -> Iterator[WindowBuildProcess | None]:
    """The push's window build child, started with the cycle when the push sends the library's live windows.

    The child imports dbt (1.5 s) and then waits; started by the push, most of that import is on the cycle's
    path, started here it happens while the load and the build run. It is closed when the cycle ends, used or
    not. A child that cannot be started now is left to the push, which says why if it fails there too."""
    if push is None or push.interval_semantics != "library":
        yield None
        return
    from goodput_loader.library_windows import WindowBuildProcess

    try:
        child = WindowBuildProcess()
    except OSError:
        yield None
        return
    with child:
        yield child


def _step(summary: dict[str, Any], name: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    try:
        return fn(*args, **kwargs)
    except LoaderError as exc:
        summary["failed_step"] = name
        raise StepError(name, exc, summary) from exc
