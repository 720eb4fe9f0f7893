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
from ml_goodput_measurement.src.goodput_elastic import ElasticGoodputCalculator
from support.elastic import random_elastic_runs
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
    for field in ["stepping_slice_efficiency", "available_slice_efficiency"]:
        if not close(ours[field], ref[field]):
            problems.append(f"{field}: ours {ours[field]!r} ref {ref[field]!r}")
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


def compare_observed_efficiency(ours: dict[str, Any], ref: dict[str, Any],
                                payloads: list[dict[str, Any]]) -> list[str]:
    """The corrected efficiencies (not library outputs): the library's weighted sums, divided by the time
    some slice-count record was in force instead of the whole [job start, job start + total]."""
    if ref["stepping_slice_efficiency"] is None:
        if ours["stepping_slice_efficiency_observed"] is not None:
            return [f"observed efficiency {ours['stepping_slice_efficiency_observed']!r} without slice counts"]
        return []
    start = round(next(p["job_start_time"] for p in payloads if "job_start_time" in p), 6)
    end = start + ref["total_elapsed_seconds"]
    times = [p["elastic_slice_counts_timestamp"] for p in payloads if "elastic_slice_counts_timestamp" in p]
    inside = [t for t in times if start < t < end]
    covered_from = start if any(t <= start for t in times) else min(inside, default=None)
    problems = []
    for kind in ("stepping", "available"):
        got = ours[f"{kind}_slice_efficiency_observed"]
        want = None if covered_from is None or end <= covered_from else \
            ref[f"{kind}_slice_efficiency"] * (end - start) / (end - covered_from)
        if not close(got, want):
            problems.append(f"{kind}_slice_efficiency_observed: ours {got!r} expected {want!r}")
    return problems


def check_against_library(tmp_path: Path, runs: dict[str, list[dict[str, Any]]], as_of: dt.datetime,
                          elastic: frozenset[str] = frozenset()) -> None:
    """Land all runs, build once, compare each run with the library: with its ElasticGoodputCalculator
    for the runs named in `elastic`, with the plain GoodputCalculator for the others."""
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
        ref = reference_goodput(name, payloads_in_processing_order(entries), as_of, tmp_path / f"cache-{name}",
                                calculator_class=ElasticGoodputCalculator if name in elastic else None)
        if name not in ours:
            failures[name] = ["missing from fct_goodput_cumulative"]
            continue
        problems = compare_run(ours[name], buckets.get(name, {}), ref)
        if name in elastic and "error" not in ref:
            problems += compare_observed_efficiency(ours[name], ref, payloads_in_processing_order(entries))
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


@settings(max_examples=2, deadline=None, database=None, phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(st.integers(0, 2**32 - 1), min_size=60, max_size=60))
def test_random_elastic_scenarios_match_the_elastic_calculator(tmp_path_factory, seeds):
    """Elastic runs (slice counts, waits, re-initialisation over random restarts) beside plain runs, in
    one build: the elastic ones against ElasticGoodputCalculator, the plain ones against the plain
    calculator, which they must still match exactly."""
    tmp_path = tmp_path_factory.mktemp("elastic")
    elastic, elastic_end = random_elastic_runs(seeds[:40])
    plain, plain_end = random_runs(seeds[40:])
    check_against_library(tmp_path, {**elastic, **plain}, utc(max(elastic_end, plain_end) + 100),
                          elastic=frozenset(elastic))


def test_simulated_maxtext_fleet_matches_the_library(tmp_path):
    """`simulate`'s runs, two of them elastic (`simulate --elastic`), against the calculator of each."""
    start = dt.datetime(2026, 11, 20, tzinfo=dt.timezone.utc)
    specs = fleet(6, seed=7, steps=3000, restarts=2, running=2, start=start, elastic=2,
                  base=RunSpec(name="", start=0.0, step_seconds=1.5, duplicate_rate=0.0))
    runs = {}
    for spec in specs:
        payloads = [e.payload for e in simulate_entries(spec)]
        runs[spec.name] = envelope(spec.name, payloads, [False])
    elastic = frozenset(spec.name for spec in specs if spec.elastic_slices)
    assert len(elastic) == 2
    check_against_library(tmp_path, runs, start + dt.timedelta(days=2), elastic=elastic)
