"""Deterministic, MaxText-like Goodput log streams for demos, tests and benchmarks.

A simulated run goes through what a real training job writes through
``GoodputRecorder`` and Orbax's checkpoint logger: job start, accelerator init,
training prep, a checkpoint restore after each restart, synchronous data
loading, then steps with jitter and rare slow outliers, per-step asynchronous
data loading, an eval (custom badput event) every N steps, a blocking Orbax
save every N steps, crashes that restart from the last checkpoint after an
infrastructure outage, and either a job end or -- for a job still running -- no
end at all.

An elastic run (``elastic_slices``: a Pathways job recording with
``ElasticGoodputRecorder``) also writes its slice counts, and loses a slice a
few times: stepping stops, it waits for the slice (``slice_down``), re-initialises
on the slices left (accelerator init inside the re-initialisation) and steps on,
slower, until the slice is back: it waits to scale up (``scale_up``),
re-initialises and steps at full speed again. Its re-initialisation entries carry
``job_name``, as the recorder's would if the library's logger accepted them
(0.2.3's recorder writes none; see docs/semantics.md, "Elastic runs").

Payload keys and their order match what the recorder writes. Entries are
generated lazily, in timestamp order, so a 3M-entry run never sits in memory.
"""

from __future__ import annotations

import datetime as dt
import gzip
import math
import random
import string
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Iterator

import orjson

from goodput_loader.entries import format_rfc3339_us, log_id_for, log_name_for
from goodput_loader.errors import LoaderError

_INSERT_ID_ALPHABET = string.ascii_lowercase + string.digits


@dataclass(frozen=True)
class RunSpec:
    """One simulated training run."""

    name: str
    start: float
    steps: int = 2000
    step_seconds: float = 2.0
    step_jitter: float = 0.05
    outlier_rate: float = 0.01
    compile_seconds: float = 45.0
    restarts: int = 0
    recovery_seconds: float = 180.0
    checkpoint_every: int = 200
    checkpoint_save_seconds: float = 2.5
    checkpoint_restore_seconds: float = 12.0
    eval_every: int = 500
    eval_seconds: float = 20.0
    data_loading_every: int = 1
    data_loading_seconds: float = 0.02
    sync_data_loading_seconds: float = 5.0
    tpu_init_seconds: float = 30.0
    training_prep_seconds: float = 20.0
    finished: bool = True
    duplicate_rate: float = 0.0
    checkpoint_directory: str = "gs://simulated-bucket/checkpoints"
    seed: int = 0
    elastic_slices: int = 0  # > 1: an elastic (Pathways) job over this many slices
    slice_losses: int = 2  # an elastic job loses a slice this many times (and gets it back)
    slice_wait_seconds: float = 90.0
    reinit_seconds: float = 40.0


@dataclass(frozen=True)
class SimulatedEntry:
    """One LogEntry: when it was written and what the recorder put in it."""

    timestamp: float
    payload: dict


def _events(spec: RunSpec, rng: random.Random) -> Iterator[tuple[float, dict]]:
    """(write time, payload) in the order a real job writes them."""
    job = spec.name
    # Crash points: strictly inside the run, after the first checkpoint.
    earliest = min(spec.steps - 1, max(spec.checkpoint_every + 1, 2))
    candidates = range(earliest, spec.steps)
    crash_steps = sorted(rng.sample(candidates, min(spec.restarts, len(candidates)))) if spec.restarts else []
    t = spec.start
    last_checkpoint = 0
    attempt = 0
    step = 0
    # elastic episodes come from a generator of their own: a plain run's entries do not change
    elastic = _ElasticJob(spec, random.Random(f"{spec.seed}:{spec.name}:elastic")) if spec.elastic_slices > 1 else None
    while True:
        yield t, {"job_name": job, "job_start_time": t}
        if elastic is not None:
            yield elastic.counts(t + 0.01)
        t += rng.uniform(0.5, 2.0)
        yield t, {"job_name": job, "tpu_init_start_time": t}
        t += spec.tpu_init_seconds * rng.uniform(0.8, 1.2)
        yield t, {"job_name": job, "tpu_init_end_time": t}
        t += rng.uniform(0.1, 0.5)
        yield t, {"job_name": job, "training_prep_start_time": t}
        if attempt > 0:
            restore_start = t + rng.uniform(1.0, 3.0)
            duration = spec.checkpoint_restore_seconds * rng.uniform(0.7, 1.3)
            t = restore_start + duration
            yield t, _restore_record(spec, last_checkpoint, restore_start, duration)
        t += spec.training_prep_seconds * rng.uniform(0.8, 1.2)
        yield t, {"job_name": job, "training_prep_end_time": t}
        t += rng.uniform(0.05, 0.2)
        yield t, {"job_name": job, "data_loading_start_time": t}
        t += spec.sync_data_loading_seconds * rng.uniform(0.7, 1.3)
        yield t, {"job_name": job, "data_loading_end_time": t}
        t += rng.uniform(0.05, 0.2)

        step = last_checkpoint
        first = True
        crash_at = crash_steps[attempt] if attempt < len(crash_steps) else None
        while step < spec.steps:
            if elastic is not None and step in elastic.changes and not first:
                for at, payload in elastic.change(step, t):
                    t = at
                    yield at, payload
                t += 0.05
            step_start = t
            yield t, {"job_name": job, "step_count": step, "step_start_time": t}
            duration = spec.step_seconds * math.exp(rng.gauss(0.0, spec.step_jitter))
            if elastic is not None:
                duration *= elastic.slowdown()
            if rng.random() < spec.outlier_rate:
                duration *= rng.uniform(2.0, 5.0)
            if first:
                duration += spec.compile_seconds * rng.uniform(0.8, 1.2)
                first = False
            inner = step_start + min(0.01, duration / 100)
            if spec.data_loading_every and step % spec.data_loading_every == 0:
                loading = spec.data_loading_seconds * rng.uniform(0.5, 1.5)
                yield inner, {"job_name": job, "data_loading_start_time": inner}
                inner += loading
                yield inner, {"job_name": job, "data_loading_end_time": inner}
            extra = 0.0
            if spec.eval_every and step > 0 and step % spec.eval_every == 0:
                eval_start = step_start + duration + extra
                eval_seconds = spec.eval_seconds * rng.uniform(0.8, 1.2)
                yield eval_start, {
                    "job_name": job,
                    "custom_badput_event_type": "eval_step",
                    "custom_badput_event_start_time": eval_start,
                }
                yield eval_start + eval_seconds, {
                    "job_name": job,
                    "custom_badput_event_type": "eval_step",
                    "custom_badput_event_end_time": eval_start + eval_seconds,
                }
                extra += eval_seconds + rng.uniform(0.001, 0.01)
            if spec.checkpoint_every and step > 0 and step % spec.checkpoint_every == 0:
                save_start = step_start + duration + extra
                blocking = spec.checkpoint_save_seconds * rng.uniform(0.7, 1.3)
                yield save_start + blocking, _save_record(spec, step, save_start, blocking)
                extra += blocking + rng.uniform(0.001, 0.01)
                last_checkpoint = step
            t = step_start + duration + extra
            step += 1
            if crash_at is not None and step == crash_at:
                break
        else:
            if spec.finished:
                yield t, {"job_name": job, "job_end_time": t}
            return
        attempt += 1
        t += spec.recovery_seconds * rng.uniform(0.5, 1.5)


class _ElasticJob:
    """The slices of an elastic run: which steps lose or regain one, and what it writes then."""

    def __init__(self, spec: RunSpec, rng: random.Random):
        self.spec = spec
        self.rng = rng
        self.active = spec.elastic_slices
        candidates = range(2, max(3, spec.steps - 1))
        picks = sorted(rng.sample(candidates, min(2 * spec.slice_losses, len(candidates))))
        # alternate: lose a slice at one step, get it back at the next picked step
        self.changes = {step: i % 2 == 0 for i, step in enumerate(picks)}

    def counts(self, at: float, available: int | None = None) -> tuple[float, dict]:
        total = self.spec.elastic_slices
        return at, {"job_name": self.spec.name, "active_slices": self.active, "total_slices": total,
                    "available_slices": self.active if available is None else available,
                    "elastic_slice_counts_timestamp": at}

    def slowdown(self) -> float:
        """Fewer slices step slower: the same global batch on fewer chips."""
        return self.spec.elastic_slices / max(self.active, 1)

    def change(self, step: int, t: float) -> Iterator[tuple[float, dict]]:
        """Lose a slice (lost=True) or get it back: counts, a wait, a re-initialisation, counts."""
        spec, rng, job = self.spec, self.rng, self.spec.name
        lost = self.changes.pop(step)
        kind = "slice_down" if lost else "scale_up"
        if lost:
            self.active = 0  # nothing steps while it waits
            yield self.counts(t, available=spec.elastic_slices - 1)
        else:
            self.active = 0  # it stops stepping to grow back
            yield self.counts(t, available=spec.elastic_slices)
        t += 0.01
        yield t, {"job_name": job, "elastic_wait_event_type": kind, "elastic_wait_start_time": t}
        t += spec.slice_wait_seconds * rng.uniform(0.5, 1.5)
        yield t, {"job_name": job, "elastic_wait_event_type": kind, "elastic_wait_end_time": t}
        t += rng.uniform(0.05, 0.2)
        yield t, {"job_name": job, "elastic_reinit_start_time": t}
        reinit_end = t + spec.reinit_seconds * rng.uniform(0.8, 1.2)
        t += rng.uniform(0.5, 2.0)
        yield t, {"job_name": job, "tpu_init_start_time": t}
        t = min(reinit_end - 0.5, t + spec.tpu_init_seconds * rng.uniform(0.3, 0.6))
        yield t, {"job_name": job, "tpu_init_end_time": t}
        t = reinit_end
        yield t, {"job_name": job, "elastic_reinit_end_time": t}
        self.active = spec.elastic_slices - 1 if lost else spec.elastic_slices
        yield self.counts(t + 0.01, available=self.active)


def _save_record(spec: RunSpec, step: int, start: float, blocking: float) -> dict:
    wait = blocking * 0.05
    get_old = blocking * 0.02
    checkpointer = blocking * 0.85
    return {
        "step": step,
        "event_type": "save",
        "directory": spec.checkpoint_directory,
        "reached_preemption": False,
        "preemption_received_at": None,
        "synchronous": False,
        "wait_for_prev_start_time": start,
        "wait_for_prev_duration_secs": wait,
        "time_between_consecutive_saves_sec": None,
        "checkpointer_blocking_start_time": start + wait,
        "checkpointer_blocking_duration_secs": checkpointer,
        "get_old_steps_start_time": start + wait + checkpointer,
        "get_old_steps_duration_secs": get_old,
        "checkpoint_manager_blocking_start_time": start,
        "checkpoint_manager_blocking_duration_secs": blocking,
        "job_name": spec.name,
    }


def _restore_record(spec: RunSpec, step: int, start: float, duration: float) -> dict:
    return {
        "step": step,
        "event_type": "restore",
        "directory": spec.checkpoint_directory,
        "checkpointer_start_time": start + duration * 0.05,
        "checkpointer_duration_secs": duration * 0.9,
        "checkpoint_manager_start_time": start,
        "checkpoint_manager_duration_secs": duration,
        "job_name": spec.name,
    }


def _round_times(payload: dict) -> dict:
    """Epoch floats as datetime.timestamp() yields them: microsecond resolution."""
    return {k: (round(v, 6) if isinstance(v, float) and k.endswith("_time") else v) for k, v in payload.items()}


def simulate_entries(spec: RunSpec) -> Iterator[SimulatedEntry]:
    """The run's entries in write order, with strictly increasing write times."""
    rng = random.Random(f"{spec.seed}:{spec.name}")
    last_written = -math.inf
    for event_time, payload in _events(spec, rng):
        written = max(event_time + rng.uniform(0.0002, 0.003), last_written + 1e-6)
        last_written = written
        yield SimulatedEntry(written, _round_times(payload))


def log_entries(spec: RunSpec, project: str) -> Iterator[dict]:
    """LogEntry objects as the Logging REST API returns them (at-least-once, if asked)."""
    rng = random.Random(f"{spec.seed}:{spec.name}:envelope")
    log_name = log_name_for(project, spec.name)
    for entry in simulate_entries(spec):
        timestamp_us = int(round(entry.timestamp * 1_000_000))
        obj = {
            "insertId": "".join(rng.choices(_INSERT_ID_ALPHABET, k=14)),
            "jsonPayload": entry.payload,
            "resource": {"type": "global", "labels": {"project_id": project}},
            "timestamp": format_rfc3339_us(timestamp_us),
            "severity": "INFO",
            "logName": log_name,
            "receiveTimestamp": format_rfc3339_us(timestamp_us + rng.randint(50_000, 2_000_000)),
        }
        yield obj
        if spec.duplicate_rate and rng.random() < spec.duplicate_rate:
            yield obj


def fleet(
    runs: int,
    *,
    seed: int,
    steps: int,
    restarts: int,
    running: int,
    start: dt.datetime,
    prefix: str = "sim",
    base: RunSpec | None = None,
    live_at: dt.datetime | None = None,
    elastic: int = 0,
    slices: int = 4,
) -> list[RunSpec]:
    """A deterministic mix of runs around the given size; the last ``running`` never end, the first
    ``elastic`` are elastic jobs over ``slices`` slices.

    With ``live_at``, each running run is moved in time so that its last entry is
    written a minute before ``live_at``: evaluated then, it looks like a job that
    is really running, not one that fell silent hours ago.
    """
    rng = random.Random(seed)
    template = base or RunSpec(name="", start=0.0)
    specs = []
    t0 = start.replace(tzinfo=start.tzinfo or dt.timezone.utc).timestamp()
    for i in range(runs):
        spec = replace(
            template,
            name=f"{prefix}-{i:03d}",
            start=t0 + i * 3600.0 * rng.uniform(0.5, 2.0),
            steps=max(10, int(steps * rng.uniform(0.7, 1.3))),
            step_seconds=template.step_seconds * rng.uniform(0.6, 1.6),
            restarts=rng.randint(0, 2 * restarts) if restarts else 0,
            finished=i < runs - running,
            seed=seed,
            elastic_slices=slices if i < elastic else 0,
        )
        if live_at is not None and not spec.finished:
            spec = live_until(spec, live_at.replace(tzinfo=live_at.tzinfo or dt.timezone.utc).timestamp() - 60.0)
        specs.append(spec)
    return specs


def live_until(spec: RunSpec, last_entry_at: float) -> RunSpec:
    """The same run, started so that its last entry is written at ``last_entry_at``.

    Event times are offsets from ``spec.start`` drawn from a generator seeded by
    the run's name, so moving the start moves the whole run unchanged.
    """
    last = spec.start
    for entry in simulate_entries(spec):
        last = entry.timestamp
    return replace(spec, start=spec.start + (last_entry_at - last))


def write_run(spec: RunSpec, out_dir: Path, project: str, compress: bool) -> tuple[Path, int]:
    """Write one run as LogEntry NDJSON (``goodput_<run>.ndjson[.gz]``); return path and count.

    The file is named after the run's log ID as Cloud Logging spells it in logName (URL-encoded), so a
    run name holding '/' (which log IDs allow) names one file, not a directory. The loader reads the run
    from each entry's logName, never from the file name."""
    path = out_dir / f"{log_id_for(spec.name)}.ndjson{'.gz' if compress else ''}"
    count = 0
    fh: IO[bytes]
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        with (gzip.open(path, "wb", compresslevel=1) if compress else open(path, "wb")) as fh:
            buffer: list[bytes] = []
            for obj in log_entries(spec, project):
                buffer.append(orjson.dumps(obj))
                count += 1
                if len(buffer) >= 10_000:
                    fh.write(b"\n".join(buffer) + b"\n")
                    buffer.clear()
            if buffer:
                fh.write(b"\n".join(buffer) + b"\n")
    except OSError as exc:  # full disk, no permission, a file where the directory should be
        raise LoaderError(f"cannot write {path}: {exc.strerror or exc}") from exc
    return path, count
