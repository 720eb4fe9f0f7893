"""Interval Goodput: `goodput-loader interval` against the library's get_job_goodput_interval.

Ours locates the cumulative attribution in time and takes what falls inside the interval;
the library recomputes Goodput from scratch over the entries inside it. They agree on a
window holding the whole job, and differ, by design, in the cases docs/semantics.md lists; each
is pinned here with both values.
"""

from __future__ import annotations

import json
import math
import random
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import BIN, cli_subprocess, dbt_build, land_runs, query
from support.oracle import payload_time, reference_interval
from support.scenarios import PROJECT, record, utc

from goodput_loader.entries import format_rfc3339_us, log_name_for

T = 1_795_000_000.0
NAME = "steady"


def steady_run() -> tuple[list[dict[str, Any]], dict[str, float]]:
    """Accelerator init, training prep, sync data loading, a 40 s first step (compilation),
    2 s steps with one slow 10 s step (100), 300 steps, job end."""
    ops: list[tuple] = [("job_start", T), ("tpu_init_start", T + 1), ("tpu_init_end", T + 31),
                        ("training_prep_start", T + 31), ("training_prep_end", T + 51),
                        ("data_loading_start", T + 51), ("data_loading_end", T + 56)]
    t, times = T + 56, {}
    for step in range(300):
        ops.append(("step", t, step))
        times[f"step{step}"] = t
        t += 40 if step == 0 else 10 if step == 100 else 2
    ops.append(("job_end", t))
    times["job_end"] = t
    return record(NAME, ops), times


def timed_envelope(payloads: list[dict[str, Any]], name: str = NAME) -> list[dict[str, Any]]:
    """LogEntries stamped with their event time, as a real job writes them."""
    out = []
    for i, payload in enumerate(payloads):
        ts = int(round(payload_time(payload) * 1e6)) + i  # + i us keeps the write order on ties
        out.append({"logName": log_name_for(PROJECT, name), "insertId": f"{i:08d}",
                    "timestamp": format_rfc3339_us(ts), "severity": "INFO", "jsonPayload": payload})
    return out


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> tuple[Path, list[dict[str, Any]], dict[str, float]]:
    tmp_path = tmp_path_factory.mktemp("interval")
    payloads, times = steady_run()
    db = land_runs(tmp_path, {NAME: timed_envelope(payloads)})
    dbt_build(db, utc(times["job_end"] + 60))
    return db, payloads, times


def ours(db: Path, start: float, end: float) -> dict[str, Any]:
    return ours_of(db, NAME, start, end)


def ours_of(db: Path, name: str, start: float, end: float) -> dict[str, Any]:
    out = cli_subprocess("interval", "--duckdb", db, "--run", name, "--start", utc(start).isoformat(),
                         "--end", utc(end).isoformat(), "--json", "--semantics", "additive")
    data = json.loads(out.stdout)
    data["badput_seconds"] = {(b["badput_type"], b["custom_badput_event_type"]): b["badput_seconds"]
                              for b in data["badput"]}
    return data


def library(payloads: list[dict[str, Any]], start: float, end: float, tmp_path: Path) -> dict[str, Any]:
    return reference_interval(NAME, payloads, utc(start), utc(end), tmp_path)


def approx(value: float) -> Any:
    return pytest.approx(value, abs=1e-6)


def test_a_window_holding_the_whole_job_agrees(warehouse, tmp_path):
    db, payloads, times = warehouse
    got, ref = ours(db, T - 1, times["job_end"] + 1), library(payloads, T - 1, times["job_end"] + 1, tmp_path)
    cumulative = query(db, "select total_elapsed_seconds, productive_seconds from fct_goodput_cumulative")[0]
    assert got["elapsed_seconds"] == approx(ref["elapsed_seconds"]) == approx(cumulative[0])
    assert got["productive_seconds"] == approx(ref["productive_seconds"]) == approx(cumulative[1])
    for key, seconds in ref["badput_seconds"].items():
        assert got["badput_seconds"].get(key, 0.0) == approx(seconds), key


def test_first_step_inside_a_window_is_program_startup_for_the_library_only(warehouse, tmp_path):
    """A window opening just before the slow step 100: the library restarts its attribution at
    the window edge, so step 100 is a 'first step' and 8 s of it (10 s minus the 2 s mean) become
    PROGRAM_STARTUP. In the cumulative attribution step 100 is productive, and stays so in the window."""
    db, payloads, times = warehouse
    start, end = times["step100"] - 0.5, times["step100"] + 599.5
    got, ref = ours(db, start, end), library(payloads, start, end, tmp_path)
    assert ref["badput_seconds"][("PROGRAM_STARTUP", None)] == approx(8.0)
    assert got["badput_seconds"][("PROGRAM_STARTUP", None)] == approx(0.0)
    # the library also counts time from its first to its last entry in the window (step 100 .. job end);
    # ours counts the window, cut at the job end, and the last 0.5 s of step 99 in it
    assert ref["elapsed_seconds"] == approx(times["job_end"] - times["step100"])
    assert got["elapsed_seconds"] == approx(times["job_end"] - start)
    assert ref["productive_seconds"] == approx(times["job_end"] - times["step100"] - 8.0)
    assert got["productive_seconds"] == approx(times["job_end"] - start)


def test_an_interval_cut_through_accelerator_init(warehouse, tmp_path):
    """A window opening in the middle of accelerator init: the library sees the init's end entry
    without its start and counts none of it; ours counts the 15 s of it inside the window."""
    db, payloads, times = warehouse
    start, end = T + 16, T + 616
    got, ref = ours(db, start, end), library(payloads, start, end, tmp_path)
    assert ref["badput_seconds"].get(("TPU_INITIALIZATION", None), 0.0) == approx(0.0)
    assert got["badput_seconds"][("TPU_INITIALIZATION", None)] == approx(15.0)
    assert ref["elapsed_seconds"] == approx(end - (T + 31))  # from its first entry in the window
    assert got["elapsed_seconds"] == approx(600.0)
    # the same training prep, sync data loading and compilation on both sides
    for bucket in ["TRAINING_PREP", "DATA_LOADING_SYNC"]:
        assert got["badput_seconds"][(bucket, None)] == approx(ref["badput_seconds"][(bucket, None)]), bucket


def test_intervals_that_partition_the_job_add_up_to_it(warehouse):
    db, _, times = warehouse
    rng = random.Random(4)
    cuts = sorted(rng.uniform(T, times["job_end"]) for _ in range(3))
    edges = [T - 5, *cuts, times["job_end"] + 5]
    parts = [ours(db, a, b) for a, b in zip(edges, edges[1:])]
    total = query(db, "select total_elapsed_seconds, productive_seconds from fct_goodput_cumulative")[0]
    assert math.isclose(sum(p["elapsed_seconds"] for p in parts), total[0], abs_tol=1e-6)
    assert math.isclose(sum(p["productive_seconds"] for p in parts), total[1], abs_tol=1e-6)
    breakdown = dict(query(db, "select badput_type, badput_seconds from fct_badput_breakdown"))
    for bucket, seconds in breakdown.items():
        assert math.isclose(sum(p["badput_seconds"][(bucket, None)] for p in parts), seconds, abs_tol=1e-6), bucket


def test_unknown_run_or_interval_outside_the_job_is_an_error(warehouse):
    db, _, times = warehouse
    for run, start, end in [("nope", T, T + 60), (NAME, T - 7200, T - 3600)]:
        result = subprocess.run([str(BIN / "goodput-loader"), "interval", "--duckdb", str(db), "--run", run,
                                 "--start", utc(start).isoformat(), "--end", utc(end).isoformat()],
                                capture_output=True, text=True, timeout=300)
        assert result.returncode == 1 and "no Goodput for run" in result.stderr, result.stderr
    backwards = subprocess.run([str(BIN / "goodput-loader"), "interval", "--duckdb", str(db), "--run", NAME,
                                "--start", utc(T + 60).isoformat(), "--end", utc(T).isoformat()],
                               capture_output=True, text=True, timeout=300)
    assert backwards.returncode == 1 and "is not after --start" in backwards.stderr


def test_a_run_restarted_after_its_job_end_has_no_interval_goodput(tmp_path):
    """The library raises for it (productive time outside [0, total]); its located attribution gives windows
    with negative productive time (-300 % once): `interval` exits 1 with the reason, the rolling marts hold
    no Goodput outside [0, 100] %."""
    name = "ended-then-restarted"
    ops = ([("job_start", T)] + [("step", T + 10 + 3 * i, i) for i in range(6)] + [("job_end", T + 30)]
           + [("job_start", T + 100)] + [("step", T + 120 + 3 * i, i) for i in range(3, 30)])
    entries = [dict(e, logName=log_name_for(PROJECT, name)) for e in timed_envelope(record(name, ops))]
    db = land_runs(tmp_path, {name: entries})
    dbt_build(db, utc(T + 400))
    [(valid, reason)] = query(db, "select is_valid, invalid_reason from fct_goodput_cumulative")
    assert not valid and reason == "productive time outside [0, total]"
    result = subprocess.run([str(BIN / "goodput-loader"), "interval", "--duckdb", str(db), "--run", name,
                             "--start", utc(T).isoformat(), "--end", utc(T + 250).isoformat(),
                             "--semantics", "additive"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 1 and f"has no valid Goodput: {reason}" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    # the library raises on that window too, and the default semantics says so with its reason ...
    with pytest.raises(ValueError, match="Productive training time is invalid"):
        reference_interval(name, record(name, ops), utc(T), utc(T + 250), tmp_path / "lib")
    refused = cli_subprocess("interval", "--duckdb", db, "--run", name, "--start", utc(T).isoformat(),
                             "--end", utc(T + 250).isoformat(), expect=1)
    assert 'the library raises "Productive training time is invalid' in refused.stderr, refused.stderr
    # ... but computes the second attempt alone, as its monitor's windows did once it restarted
    window = json.loads(cli_subprocess("interval", "--duckdb", db, "--run", name, "--start", utc(T + 90).isoformat(),
                                       "--end", utc(T + 250).isoformat(), "--json").stdout)
    lib = reference_interval(name, record(name, ops), utc(T + 90), utc(T + 250), tmp_path / "lib2")
    assert window["semantics"] == "library" and window["goodput_pct"] == approx(lib["goodput_pct"])
    assert lib["goodput_pct"] > 0
    for mart in ("fct_goodput_rolling", "fct_goodput_rolling_latest"):
        [(windows, out_of_range, nulls)] = query(db, f"""
            select count(*), count(*) filter (where goodput_pct < 0 or goodput_pct > 100),
                   count(*) filter (where goodput_pct is null and elapsed_seconds > 0) from {mart}""")
        assert windows > 0 and out_of_range == 0 and nulls > 0, (mart, windows, out_of_range, nulls)


def test_library_semantics_is_the_default_and_equals_the_library(warehouse, tmp_path):
    """`interval` without --semantics gives get_job_goodput_interval's numbers. The worked example of
    docs/semantics.md (where the two interval semantics differ): the 600 s window opening 0.5 s before the
    slow step 100 reads 400 / 408 = 98.04 % (that step is program startup for the library), 100 % with
    --semantics additive."""
    db, payloads, times = warehouse
    start, end = times["step100"] - 0.5, times["step100"] + 599.5
    out = json.loads(cli_subprocess("interval", "--duckdb", db, "--run", NAME, "--start", utc(start).isoformat(),
                                    "--end", utc(end).isoformat(), "--json").stdout)
    lib = library(payloads, start, end, tmp_path)
    assert out["semantics"] == "library"
    assert out["goodput_pct"] == approx(lib["goodput_pct"]) and out["elapsed_seconds"] == approx(lib["elapsed_seconds"])
    assert out["max_productive_step"] == lib["max_productive_step"]
    seconds = {(b["badput_type"], b["custom_badput_event_type"]): b["badput_seconds"] for b in out["badput"]}
    assert set(seconds) == set(lib["badput_seconds"])
    for key, value in lib["badput_seconds"].items():
        assert seconds[key] == approx(value), key
    assert out["goodput_pct"] == approx(400 / 408 * 100)
    additive = ours(db, start, end)
    assert additive["semantics"] == "additive" and additive["goodput_pct"] == approx(100.0)
    # a window with no entry: the library raises, so does interval (exit 1, its reason, no traceback)
    empty = subprocess.run([str(BIN / "goodput-loader"), "interval", "--duckdb", str(db), "--run", NAME,
                            "--start", utc(T - 7200).isoformat(), "--end", utc(T - 3600).isoformat()],
                           capture_output=True, text=True, timeout=300)
    assert empty.returncode == 1 and "No log entries found within the interval window" in empty.stderr
    assert "Traceback" not in empty.stderr

