"""Our dbt marts against the reference library, on the same entries.

Scenarios drive the library's real GoodputRecorder (with an injected logger
that keeps its entries), Orbax-shaped checkpoint records go into the same log,
and the entries are landed as LogEntry NDJSON. The library's real
GoodputCalculator then computes over the entries in processing order with a
frozen clock, and one dbt build computes every run at once; every field must
agree within 1e-6 s (or 1e-6 percentage points).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import random
from pathlib import Path
from typing import Any

from conftest import dbt_build, query, run_cli
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from ml_goodput_measurement.src.goodput import GoodputRecorder
from support.oracle import ListCloudLogger, reference_goodput

from goodput_loader.entries import format_rfc3339_us, log_name_for
from goodput_loader.simulate import RunSpec, fleet, simulate_entries

TOLERANCE = 1e-6
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


def close(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(float(a), float(b), rel_tol=0, abs_tol=TOLERANCE)


def compare_run(ours: dict[str, Any], buckets: dict[tuple, tuple], ref: dict[str, Any]) -> list[str]:
    problems = []
    if "error" in ref:
        if ours["is_valid"]:
            problems.append(f"library raised {ref['error']!r} but ours is valid")
        return problems
    for field in ["goodput_pct", "productive_seconds", "total_elapsed_seconds", "step_time_deviation_seconds"]:
        if not close(ours[field], ref[field]):
            problems.append(f"{field}: ours {ours[field]!r} ref {ref[field]!r}")
    ideal = ref["ideal_step_seconds"] or None
    if not close(ours["ideal_step_seconds"], ideal):
        problems.append(f"ideal_step_seconds: ours {ours['ideal_step_seconds']!r} ref {ideal!r}")
    for field in ["max_productive_step", "last_recorded_step", "disruptions"]:
        if ours[field] != ref[field]:
            problems.append(f"{field}: ours {ours[field]!r} ref {ref[field]!r}")
    expected: dict[tuple, tuple] = {}
    for badput_type, value in ref["badput_seconds"].items():
        pct = ref["breakdown_pct"].get(badput_type, 0.0)
        if isinstance(value, dict):
            for sub, sub_value in value.items():
                expected[(badput_type.name, sub)] = (sub_value, pct.get(sub, 0.0))
        else:
            expected[(badput_type.name, None)] = (value, pct)
    for key in set(expected) | set(buckets):
        want = expected.get(key, (0.0, 0.0))
        got = buckets.get(key, (0.0, 0.0))
        if not (close(got[0], want[0]) and close(got[1], want[1])):
            problems.append(f"{key}: ours {got} ref {want}")
    return problems


def check_against_library(tmp_path: Path, runs: dict[str, list[dict[str, Any]]], as_of: dt.datetime) -> None:
    """Land all runs, build once, compare each run with the library."""
    path = tmp_path / "entries.ndjson"
    with open(path, "w") as fh:
        for entries in runs.values():
            fh.writelines(json.dumps(e) + "\n" for e in entries)
    db = tmp_path / "diff.duckdb"
    run_cli("load", "--duckdb", db, path)
    assert query(db, "select count(*) from goodput_raw.rejected_entries") == [(0,)]
    dbt_build(db, as_of, "--", "--exclude", "test_type:data")
    columns = [c[0] for c in query(db, "describe fct_goodput_cumulative")]
    ours = {row[0]: dict(zip(columns, row)) for row in query(db, "select * from fct_goodput_cumulative")}
    buckets: dict[str, dict[tuple, tuple]] = {}
    for run, badput_type, sub, seconds, pct in query(
        db, "select run_name, badput_type, custom_badput_event_type, badput_seconds, badput_pct from fct_badput_breakdown"
    ):
        buckets.setdefault(run, {})[(badput_type, sub)] = (seconds, pct)
    failures = {}
    for name, entries in runs.items():
        ordered = sorted(entries, key=lambda e: (e["timestamp"], e["insertId"]))
        seen, payloads = set(), []
        for e in ordered:
            if (e["timestamp"], e["insertId"]) not in seen:
                seen.add((e["timestamp"], e["insertId"]))
                payloads.append(e["jsonPayload"])
        ref = reference_goodput(name, payloads, as_of, tmp_path / f"cache-{name}")
        if name not in ours:
            failures[name] = ["missing from fct_goodput_cumulative"]
            continue
        problems = compare_run(ours[name], buckets.get(name, {}), ref)
        if problems:
            failures[name] = problems
    assert not failures, json.dumps(failures, indent=1, default=str)[:8000]


# No shrinking: a failing example's seeds are printed, and shrinking seeds means nothing.
@settings(max_examples=3, deadline=None, database=None, phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(st.integers(0, 2**32 - 1), min_size=80, max_size=80))
def test_random_scenarios_match_the_library(tmp_path_factory, seeds):
    tmp_path = tmp_path_factory.mktemp("diff")
    runs = {}
    end = T0
    for i, seed in enumerate(seeds):
        sc = scenario(seed)
        name = f"rand-{i:03d}"
        runs[name] = envelope(name, record(name, sc["ops"]), sc["ties"])
        end = max(end, sc["end"])
    check_against_library(tmp_path, runs, utc(end + 100))


def test_simulated_maxtext_fleet_matches_the_library(tmp_path):
    start = dt.datetime(2026, 11, 20, tzinfo=dt.timezone.utc)
    specs = fleet(6, seed=7, steps=3000, restarts=2, running=2, start=start,
                  base=RunSpec(name="", start=0.0, step_seconds=1.5, duplicate_rate=0.0))
    runs = {}
    for spec in specs:
        payloads = [e.payload for e in simulate_entries(spec)]
        runs[spec.name] = envelope(spec.name, payloads, [False])
    check_against_library(tmp_path, runs, start + dt.timedelta(days=2))
