"""Random and simulated Goodput runs, written through the library's real GoodputRecorder.

Shared by the differential tests (cumulative marts against GoodputCalculator)
and the rolling-window tests: the same scenarios exercise both.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

from ml_goodput_measurement.src.goodput import GoodputRecorder
from support.oracle import ListCloudLogger

from goodput_loader.entries import format_rfc3339_us, log_name_for

T0 = 1_795_000_000.123457
PROJECT = "diff"


def utc(t: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(t, tz=dt.timezone.utc)


class Picker:
    """Random choices from a seed. Hypothesis draws the seeds: 80 rich scenarios per example
    would overrun its per-example data budget and come out nearly empty if drawn directly."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)

    def integers(self, low: int, high: int) -> int:
        return self.rng.randint(low, high)

    def booleans(self) -> bool:
        return self.rng.random() < 0.5

    def floats(self, low: float, high: float) -> float:
        return self.rng.uniform(low, high)

    def sampled_from(self, options: list[Any]) -> Any:
        return self.rng.choice(options)


def scenario(seed: int) -> dict[str, Any]:
    """A random run: restarts at random steps (also before earlier resume points), checkpoints,
    custom events, data loading, finished or running, jitter and equal write timestamps."""
    pick = Picker(seed)
    ops: list[tuple] = []
    t = T0 + pick.integers(0, 10_000) / 7.0
    step = 0
    max_step = 0
    for attempt in range(pick.integers(1, 4)):
        if attempt:
            step = pick.integers(0, max_step)
            t += pick.integers(0, 400_000) / 1000
        ops.append(("job_start", t))
        for kind in ("tpu_init", "training_prep"):
            if pick.booleans():
                ops.append((f"{kind}_start", t))
                t += pick.integers(0, 60_000) / 1000
                ops.append((f"{kind}_end", t))
        if attempt and pick.booleans():
            duration = pick.integers(0, 20_000) / 1000
            directory = pick.sampled_from(["gs://bucket/ckpt", "/local/ckpt"])
            ops.append(("restore", t, step, directory, duration))
            t += duration
        if pick.booleans():
            ops.append(("data_loading_start", t))
            t += pick.integers(0, 9_000) / 1000
            ops.append(("data_loading_end", t))
        for _ in range(pick.integers(0, 25)):
            ops.append(("step", t, step))
            duration = pick.integers(100, 9_000) / 1000 + pick.integers(0, 999) / 1e6
            if pick.integers(0, 3) == 0:
                ops.append(("data_loading_start", t + 0.001))
                ops.append(("data_loading_end", t + 0.001 + pick.integers(0, 500) / 1000))
            if pick.integers(0, 4) == 0:
                kind = pick.sampled_from(["eval", "EVAL", "sdc_check"])
                start = t + duration * pick.floats(0.1, 0.5)
                end = start + duration * pick.floats(0.0, 0.7)  # may end after the next step starts
                ops.append(("custom_start", start, kind))
                ops.append(("custom_end", end, kind))
            if pick.integers(0, 5) == 0:
                directory = pick.sampled_from(["gs://bucket/ckpt", "/local/ckpt"])
                blocking = pick.integers(0, 3_000) / 1000
                for _host in range(pick.integers(1, 2)):
                    ops.append(("save", t + duration, step, directory, blocking + _host * 0.25))
                duration += blocking
            t += duration
            max_step = max(max_step, step)
            step += 1
    if pick.booleans():
        t += pick.integers(0, 5_000) / 1000
        ops.append(("job_end", t))
    ties = [pick.integers(0, 3) == 0 for _ in ops]
    return {"ops": ops, "ties": ties, "end": t}


def random_runs(seeds: list[int]) -> tuple[dict[str, list[dict[str, Any]]], float]:
    """One recorded run per seed (rand-000, rand-001, ...) as LogEntries, and the latest time any of them reaches."""
    runs, end = {}, T0
    for i, seed in enumerate(seeds):
        sc = scenario(seed)
        name = f"rand-{i:03d}"
        runs[name] = envelope(name, record(name, sc["ops"]), sc["ties"])
        end = max(end, sc["end"])
    return runs, end


def record(name: str, ops: list[tuple]) -> list[dict[str, Any]]:
    """Replay ops through the real GoodputRecorder; Orbax records go straight into its log."""
    logger = ListCloudLogger(name)
    recorder = GoodputRecorder(job_name=name, logger_name=f"goodput_{name}", logging_enabled=True,
                               cloud_logger=logger)
    for op in ops:
        kind, t = op[0], op[1]
        if kind == "job_start":
            recorder.record_job_start_time(utc(t))
        elif kind == "job_end":
            recorder.record_job_end_time(utc(t))
        elif kind == "step":
            recorder.record_step_start_time(op[2], utc(t))
        elif kind == "custom_start":
            recorder.record_custom_badput_event_start_time(utc(t), op[2])
        elif kind == "custom_end":
            recorder.record_custom_badput_event_end_time(utc(t), op[2])
        elif kind == "save":
            logger.write_cloud_logging_entry({
                "step": op[2], "event_type": "save", "directory": op[3],
                "wait_for_prev_start_time": t, "wait_for_prev_duration_secs": 0.0,
                "checkpointer_blocking_start_time": t, "checkpointer_blocking_duration_secs": op[4] * 0.9,
                "get_old_steps_start_time": t, "get_old_steps_duration_secs": 0.0,
                "checkpoint_manager_blocking_start_time": t, "checkpoint_manager_blocking_duration_secs": op[4],
                "job_name": name,
            })
        elif kind == "restore":
            logger.write_cloud_logging_entry({
                "step": op[2], "event_type": "restore", "directory": op[3],
                "checkpointer_start_time": t, "checkpointer_duration_secs": op[4] * 0.9,
                "checkpoint_manager_start_time": t, "checkpoint_manager_duration_secs": op[4],
                "job_name": name,
            })
        else:
            getattr(recorder, f"record_{kind.replace('training_prep', 'training_preparation')}_time")(utc(t))
    return logger.entries


def envelope(name: str, payloads: list[dict[str, Any]], ties: list[bool]) -> list[dict[str, Any]]:
    """LogEntries in write order; a tie reuses the previous timestamp (insertIds keep the order)."""
    out, ts = [], 1_790_000_000_000_000
    for i, payload in enumerate(payloads):
        if not (ties[i % len(ties)] and i):
            ts += 1000
        out.append({"logName": log_name_for(PROJECT, name), "insertId": f"{i:08d}", "timestamp": format_rfc3339_us(ts),
                    "severity": "INFO", "jsonPayload": payload})
    return out
