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
from pathlib import Path
from typing import Any

from conftest import dbt_build, land_runs, query
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from support.oracle import payloads_in_processing_order, reference_goodput
from support.scenarios import envelope, random_runs, utc

from goodput_loader.simulate import RunSpec, fleet, simulate_entries

TOLERANCE = 1e-6


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
    for field in ["goodput_pct", "productive_seconds", "total_elapsed_seconds"]:
        if not close(ours[field], ref[field]):
            problems.append(f"{field}: ours {ours[field]!r} ref {ref[field]!r}")
    # compute_step_deviation_from_baseline: 0.0 without deviations, as the library exports it
    if not close(ours["step_time_deviation_seconds"], ref["step_time_deviation_seconds"] or 0.0):
        problems.append(f"step_time_deviation_seconds: ours {ours['step_time_deviation_seconds']!r} "
                        f"ref {ref['step_time_deviation_seconds']!r}")
    if not close(ours["ideal_step_seconds"], ref["ideal_step_seconds"]):
        problems.append(f"ideal_step_seconds: ours {ours['ideal_step_seconds']!r} ref {ref['ideal_step_seconds']!r}")
    if (ours["mean_step_deviation_seconds"] is None) != (ref["step_time_deviation_seconds"] is None):
        problems.append(f"step deviations: ours {ours['mean_step_deviation_seconds']!r}, "
                        f"the library {'has none' if ref['step_time_deviation_seconds'] is None else 'has some'}")
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
        got = buckets.get(key, (0.0, 0.0, False))
        if not (close(got[0], want[0]) and close(got[1], want[1])):
            problems.append(f"{key}: ours {got[:2]} ref {want}")
        # the keys of its breakdown, a key at 0.0 included, are the series its monitor writes
        if got[2] != (key in expected):
            problems.append(f"{key}: is_in_library_breakdown {got[2]}, the library's breakdown "
                            f"{'holds' if key in expected else 'lacks'} it")
    return problems


def check_against_library(tmp_path: Path, runs: dict[str, list[dict[str, Any]]], as_of: dt.datetime) -> None:
    """Land all runs, build once, compare each run with the library."""
    db = land_runs(tmp_path, runs)
    dbt_build(db, as_of, "--", "--exclude", "test_type:data")
    columns = [c[0] for c in query(db, "describe fct_goodput_cumulative")]
    ours = {row["run_name"]: row for row in (dict(zip(columns, r)) for r in query(db, "select * from fct_goodput_cumulative"))}
    buckets: dict[str, dict[tuple, tuple]] = {}
    for run, badput_type, sub, seconds, pct, in_library in query(
        db, "select run_name, badput_type, custom_badput_event_type, badput_seconds, badput_pct, "
            "is_in_library_breakdown from fct_badput_breakdown"
    ):
        buckets.setdefault(run, {})[(badput_type, sub)] = (seconds, pct, in_library)
    failures = {}
    for name, entries in runs.items():
        ref = reference_goodput(name, payloads_in_processing_order(entries), as_of, tmp_path / f"cache-{name}")
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
    runs, end = random_runs(seeds)
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
