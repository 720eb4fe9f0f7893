"""Rolling-window and interval Goodput: the properties issue #4 requires, on random and simulated runs.

1. A window covering the whole job equals the cumulative marts, bucket by bucket.
2. Consecutive windows that partition the job add up to the cumulative marts (the grid's
   windows of one grid step do; so do arbitrary cut points through `goodput-loader interval`).
3. OTHER in a window is never negative, and equals elapsed - productive - counted buckets
   in every window of a run whose located amounts never overlap.
4. Elastic runs: each window's slice efficiencies (rolling and latest) are what the library's
   ElasticGoodputCalculator._compute_time_weighted_efficiency gives over the window's elapsed time
   from the run's slice-count entries; the whole-job window's equal the cumulative mart's.
Window values are also recomputed here by brute force from the located amounts, so the
curve/sweep machinery is checked against the plain definition.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import random
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from conftest import dbt_build, land_runs, query, run_cli
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from support.elastic import random_elastic_runs
from support.scenarios import envelope, random_runs, utc

from goodput_loader.simulate import RunSpec, fleet, simulate_entries

TOLERANCE = 1e-6
GRID = 10
WINDOWS = [GRID, 25, 100_000_000]
COUNTED_EXCLUDED = ("OTHER", "DATA_LOADING_ASYNC")


def rolling_vars(grid: int = GRID, windows: list[int] = WINDOWS) -> list[str]:
    return ["--var", f"rolling_grid_seconds={grid}", "--var", f"rolling_windows_seconds={json.dumps(windows)}"]


def rows(db: Path, sql: str) -> list[dict[str, Any]]:
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        cursor = con.execute(sql)
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, r)) for r in cursor.fetchall()]
    finally:
        con.close()


def bucket_key(row: dict[str, Any]) -> tuple[str, str | None]:
    return row["badput_type"], row["custom_badput_event_type"]


def check_rolling_properties(db: Path, grid: int, windows: list[int]) -> dict[str, int]:
    """Assert properties 1-3 on every run of the warehouse; return counts for the caller's sanity checks."""
    problems: list[str] = []
    cumulative = {r["run_name"]: r for r in rows(db, "select * from fct_goodput_cumulative")}
    buckets: dict[str, dict[tuple, float]] = defaultdict(dict)
    for r in rows(db, "select * from fct_badput_breakdown"):
        buckets[r["run_name"]][bucket_key(r)] = r["badput_seconds"]
    goodput = rows(db, "select * from fct_goodput_rolling")
    badput = rows(db, "select * from fct_badput_rolling")
    by_window: dict[tuple, dict[tuple, float]] = defaultdict(dict)
    for r in badput:
        by_window[(r["run_name"], r["window_seconds"], r["window_end_epoch"])][bucket_key(r)] = r["badput_seconds"]
    last_end = {}
    for r in goodput:
        last_end[r["run_name"]] = max(last_end.get(r["run_name"], 0), r["window_end_epoch"])
    timed = {name for name, c in cumulative.items() if (c["total_elapsed_seconds"] or 0) > 0}
    if set(last_end) != timed:
        problems.append(f"runs with windows {sorted(set(last_end) ^ timed)} differ from runs with elapsed time")

    def close(a: float, b: float, what: str) -> None:
        if not math.isclose(a, b, rel_tol=0, abs_tol=TOLERANCE):
            problems.append(f"{what}: {a!r} != {b!r}")

    # 1. the widest window at the last grid point covers the whole job
    whole = max(windows)
    for r in goodput:
        name = r["run_name"]
        if r["window_seconds"] != whole or r["window_end_epoch"] != last_end[name]:
            continue
        c = cumulative[name]
        close(r["elapsed_seconds"], c["total_elapsed_seconds"], f"{name} whole-job elapsed")
        close(r["productive_seconds"], c["productive_seconds"], f"{name} whole-job productive")
        if r["disruptions"] != c["disruptions"]:
            problems.append(f"{name} whole-job disruptions {r['disruptions']} != {c['disruptions']}")
        if r["max_productive_step"] != c["max_productive_step"]:
            problems.append(f"{name} max step {r['max_productive_step']} != {c['max_productive_step']}")
        window = by_window[(name, whole, r["window_end_epoch"])]
        for key in set(window) | set(buckets[name]):
            close(window.get(key, 0.0), buckets[name].get(key, 0.0), f"{name} whole-job {key}")

    # 2. windows of one grid step partition the job
    sums: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for r in goodput:
        if r["window_seconds"] == grid:
            s = sums[r["run_name"]]
            s["elapsed"] += r["elapsed_seconds"]
            s["productive"] += r["productive_seconds"]
            s["disruptions"] += r["disruptions"]
    bucket_sums: dict[str, dict[tuple, float]] = defaultdict(lambda: defaultdict(float))
    for (name, size, _), window in by_window.items():
        if size == grid:
            for key, value in window.items():
                bucket_sums[name][key] += value
    for name, s in sums.items():
        c = cumulative[name]
        close(s["elapsed"], c["total_elapsed_seconds"], f"{name} partition elapsed")
        close(s["productive"], c["productive_seconds"], f"{name} partition productive")
        close(s["disruptions"], c["disruptions"], f"{name} partition disruptions")
        for key in set(bucket_sums[name]) | set(buckets[name]):
            close(bucket_sums[name].get(key, 0.0), buckets[name].get(key, 0.0), f"{name} partition {key}")

    # 3. OTHER: never negative; the plain formula wherever amounts never overlap
    non_overlapping = non_overlapping_runs(db)
    formula_checked = 0
    for r in goodput:
        key = (r["run_name"], r["window_seconds"], r["window_end_epoch"])
        window = by_window[key]
        other = window.get(("OTHER", None), 0.0)
        if other < -TOLERANCE:
            problems.append(f"{key} negative OTHER {other}")
        if r["run_id"] in non_overlapping:
            counted = sum(v for k, v in window.items() if k[0] not in COUNTED_EXCLUDED)
            close(other, r["elapsed_seconds"] - r["productive_seconds"] - counted, f"{key} OTHER formula")
            formula_checked += 1
    efficiency_checked = check_slice_efficiency(db, goodput, cumulative, whole, last_end, close)
    assert not problems, "\n".join(problems[:60])
    return {"efficiency_checked": efficiency_checked, "runs": len(last_end), "non_overlapping": len(non_overlapping), "formula_checked": formula_checked,
            "windows": len(goodput)}


def slice_records(db: Path) -> dict[str, list[tuple]]:
    """Each run's slice-count records as the library extracts them from the entries it reads."""
    from ml_goodput_measurement.src.goodput_elastic import ElasticGoodputCalculator

    payloads: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows(db, "select run_name, payload from goodput_raw.log_entries "
                      "where severity = 'INFO' and job_name_matches order by \"timestamp\", insert_id"):
        payloads[r["run_name"]].append(json.loads(r["payload"]))
    return {name: records for name, entries in payloads.items()
            if (records := ElasticGoodputCalculator._extract_slice_count_entries(entries))}


def check_slice_efficiency(db: Path, goodput: list[dict[str, Any]], cumulative: dict[str, dict[str, Any]],
                           whole: int, last_end: dict[str, float], close: Any) -> int:
    """Property 4; returns how many windows it checked."""
    from ml_goodput_measurement.src.goodput_elastic import ElasticGoodputCalculator

    records = slice_records(db)
    latest = rows(db, "select * from fct_goodput_rolling_latest")
    checked = 0
    for r in goodput + latest:
        name = r["run_name"]
        if name not in records:
            assert r["stepping_slice_efficiency"] is None and r["available_slice_efficiency"] is None, r
            continue
        start = r["window_start_at"].replace(tzinfo=dt.timezone.utc).timestamp()
        stepping, available = ElasticGoodputCalculator._compute_time_weighted_efficiency(
            records[name], start, start + r["elapsed_seconds"])
        where = f"{name} {r['window_seconds']}@{r['window_start_at']}"
        close(r["stepping_slice_efficiency"], stepping, f"{where} stepping slice efficiency")
        close(r["available_slice_efficiency"], available, f"{where} available slice efficiency")
        checked += 1
    for r in goodput:
        if r["run_name"] in records and r["window_seconds"] == whole and r["window_end_epoch"] == last_end[r["run_name"]]:
            for column in ("stepping_slice_efficiency", "available_slice_efficiency",
                           "stepping_slice_efficiency_observed", "available_slice_efficiency_observed"):
                got, want = r[column], cumulative[r["run_name"]][column]
                if got is None or want is None:  # the observed figures: no record in force before the end
                    assert got is None and want is None, (r["run_name"], column, got, want)
                else:
                    close(got, want, f"{r['run_name']} whole-job {column}")
    return checked


def non_overlapping_runs(db: Path) -> set[str]:
    """Runs whose slack S(x) = x - counted(x) never decreases: no two counted amounts overlap in time."""
    found = rows(db, """
        with curve as (
            select
                run_id,
                at_offset - value_at as slack,
                min(at_offset - value_at) over (
                    partition by run_id order by at_offset rows between 1 following and unbounded following
                ) as later_min,
                slope_after
            from int_goodput__timeline_curves
            where measure = 'COUNTED'
        )
        select run_id from curve
        group by run_id
        having bool_and((later_min is null or slack <= later_min + 1e-9) and slope_after <= 1 + 1e-9)
    """)
    return {r["run_id"] for r in found}


class LocatedRun:
    """One run's located amounts (sanitised buckets dropped), evaluated by the plain definition:
    each amount spread evenly over its span (clamped into [0, total]), a point when shorter than 1 us."""

    def __init__(self, origin: float, span: float, amounts: list[dict[str, Any]]):
        self.span = span
        keys = [(a["measure"], a["custom_badput_event_type"]) for a in amounts]
        self.start = np.clip(np.array([a["start_epoch"] - origin for a in amounts], dtype=float), 0, span)
        self.end = np.clip(np.array([a["end_epoch"] - origin for a in amounts], dtype=float), 0, span)
        self.amount = np.array([a["amount"] for a in amounts], dtype=float)
        self.masks = {key: np.array([k == key for k in keys], dtype=bool) for key in set(keys)}
        self.masks[("COUNTED", "")] = np.array([k[0] not in ("DATA_LOADING_ASYNC", "DISRUPTIONS") for k in keys],
                                               dtype=bool)
        self._slack: tuple[np.ndarray, np.ndarray] | None = None

    def cumulative(self, measure: str, custom: str, x: np.ndarray | float, strict: bool = False) -> np.ndarray:
        """Amount of the measure located up to each x (points at x count unless strict)."""
        x = np.atleast_1d(np.asarray(x, dtype=float))[:, None]
        mask = self.masks.get((measure, custom), np.zeros(len(self.amount), dtype=bool))
        s, e, a = self.start[mask], self.end[mask], self.amount[mask]
        is_span = e - s > 1e-6
        length = np.where(is_span, e - s, 1.0)
        spread = np.clip((x - s) / length, 0.0, 1.0)
        reached = (x > s) | ((x == s) & (not strict))
        total = (a * np.where(is_span, spread, reached)).sum(axis=1)
        return np.where(x[:, 0] <= 0, 0.0, total)

    def other(self, x: float) -> float:
        """max(0, min over [x, total] of S), S(y) = y - counted(y): S is linear between breakpoints,
        so the minimum is at x or at a breakpoint after it (either side of a jump)."""
        if x <= 0:
            return 0.0
        if self._slack is None:
            points = np.unique(np.concatenate([self.start, self.end, [self.span]]))
            lows = []
            for chunk in np.array_split(points, max(1, len(points) // 256)):
                lows.append(np.minimum(chunk - self.cumulative("COUNTED", "", chunk),
                                       chunk - self.cumulative("COUNTED", "", chunk, strict=True)))
            low = np.concatenate(lows)
            self._slack = (points, np.minimum.accumulate(low[::-1])[::-1])
        points, suffix_min = self._slack
        later = np.searchsorted(points, x, side="right")
        here = x - float(self.cumulative("COUNTED", "", x)[0])
        return max(0.0, min(here, float(suffix_min[later])) if later < len(points) else here)


def brute_force_windows(db: Path, sample: int, seed: int) -> None:
    """Recompute sampled window values straight from int_goodput__timeline_amounts."""
    sanitized = {(r["run_id"], r["badput_type"], r["custom_badput_event_type"] or "")
                 for r in rows(db, "select * from int_goodput__badput_buckets where was_sanitized")}
    amounts = defaultdict(list)
    for r in rows(db, "select * from int_goodput__timeline_amounts"):
        if (r["run_id"], r["measure"], r["custom_badput_event_type"]) not in sanitized:
            amounts[r["run_id"]].append(r)
    located = {r["run_id"]: LocatedRun(r["elapsed_origin_epoch"], r["total_elapsed_seconds"], amounts[r["run_id"]])
               for r in rows(db, "select run_id, elapsed_origin_epoch, total_elapsed_seconds "
                                 "from int_goodput__run_totals where total_elapsed_seconds > 0")}
    values = rows(db, "select * from int_goodput__rolling_window_values")
    rng = random.Random(seed)
    problems = []
    picked = rng.sample(values, min(sample, len(values)))
    picked += rng.sample([v for v in values if v["measure"] == "OTHER"], min(sample // 3, len(values)))
    for v in picked:
        run = located[v["run_id"]]
        if v["measure"] == "OTHER":
            expected = run.other(v["end_offset"]) - run.other(v["start_offset"])
        else:
            at = run.cumulative(v["measure"], v["custom_badput_event_type"], [v["end_offset"], v["start_offset"]])
            expected = float(at[0] - at[1])
        if not math.isclose(expected, v["window_amount"], rel_tol=0, abs_tol=TOLERANCE):
            problems.append(f"{v['run_id']} {v['measure']} {v['window_seconds']}@{v['window_end_epoch']}: "
                            f"sweep {v['window_amount']!r} brute force {expected!r}")
    assert not problems, "\n".join(problems[:40])


@settings(max_examples=2, deadline=None, database=None, phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(st.integers(0, 2**32 - 1), min_size=40, max_size=40))
def test_rolling_properties_on_random_runs(tmp_path_factory, seeds):
    tmp_path = tmp_path_factory.mktemp("rolling")
    runs, end = random_runs(seeds[:30])
    elastic, elastic_end = random_elastic_runs(seeds[30:])  # their elastic buckets are located too
    runs.update(elastic)
    end = max(end, elastic_end)
    db = land_runs(tmp_path, runs)
    dbt_build(db, utc(end + 100), *rolling_vars(), "--", "--exclude", "test_type:data")
    counts = check_rolling_properties(db, GRID, WINDOWS)
    assert counts["runs"] >= 30 and counts["efficiency_checked"] > 0, counts
    brute_force_windows(db, sample=300, seed=seeds[0])


def test_rolling_properties_on_simulated_runs(tmp_path):
    start = dt.datetime(2026, 11, 20, tzinfo=dt.timezone.utc)
    specs = fleet(3, seed=11, steps=2500, restarts=2, running=1, start=start, elastic=1,
                  base=RunSpec(name="", start=0.0, step_seconds=1.5, duplicate_rate=0.0))
    runs = {spec.name: envelope(spec.name, [e.payload for e in simulate_entries(spec)], [False]) for spec in specs}
    db = land_runs(tmp_path, runs)
    windows = [60, 3600, 10**8]
    dbt_build(db, start + dt.timedelta(days=1), *rolling_vars(60, windows))
    counts = check_rolling_properties(db, 60, windows)
    assert counts["runs"] == 3 and counts["efficiency_checked"] > 0, counts
    brute_force_windows(db, sample=150, seed=1)


def write_ndjson(path: Path, entries: list[dict[str, Any]]) -> Path:
    with open(path, "w") as fh:
        fh.writelines(json.dumps(e) + "\n" for e in entries)
    return path


def snapshot(db: Path, table: str) -> dict[tuple, tuple]:
    """A mart's rows without computed_at, keyed by everything but the measured values."""
    found = rows(db, f"select * from {table}")
    out = {}
    for r in found:
        r.pop("computed_at", None)
        r.pop("final_segment_no", None)  # bookkeeping: the final segment when the row was computed
        values = tuple(v for k, v in r.items() if isinstance(v, float))
        key = tuple(v for k, v in r.items() if not isinstance(v, float))
        out[key] = values
    return out


def assert_same_rows(got: dict[tuple, tuple], want: dict[tuple, tuple], table: str) -> None:
    assert got.keys() == want.keys(), f"{table}: keys differ, e.g. {sorted(set(got) ^ set(want), key=str)[:5]}"
    bad = [k for k in want if not all(
        (a is None and b is None) or (a is not None and b is not None and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-6))
        for a, b in zip(got[k], want[k]))]
    assert not bad, f"{table}: {len(bad)} rows differ, e.g. {bad[0]}: {got[bad[0]]} != {want[bad[0]]}"


def test_incremental_build_equals_a_full_build(tmp_path):
    """Append entries (new steps, a restart, a job end, a late checkpoint record of an old step)
    to a built warehouse: the incremental rebuild must equal a full build of everything, and keep
    the rows it did not need to recompute."""
    from goodput_loader.simulate import log_entries

    start = dt.datetime(2026, 11, 20, tzinfo=dt.timezone.utc)
    # seed 6: sim-000 restarts at 0.3 h and 0.6 h, sim-001 at 1.4 h and 2.1 h, the others start after the cut
    specs = fleet(4, seed=6, steps=2400, restarts=2, running=1, start=start,
                  base=RunSpec(name="", start=0.0, step_seconds=2.0, duplicate_rate=0.0))
    everything = [e for spec in specs for e in log_entries(spec, "proj")]
    cut = start + dt.timedelta(hours=1, minutes=30)
    cut_text = cut.strftime("%Y-%m-%dT%H:%M:%S")
    before = [e for e in everything if e["timestamp"] <= cut_text]
    after = [e for e in everything if e["timestamp"] > cut_text]
    # a second host's record of sim-001's first checkpoint save arrives late, with another duration
    first_save = next(e for e in before if e["jsonPayload"].get("event_type") == "save"
                      and e["logName"].endswith("goodput_sim-001"))
    late = json.loads(json.dumps(first_save))
    late["insertId"] = "late-host-record"
    late["timestamp"] = after[0]["timestamp"]
    late["jsonPayload"]["checkpoint_manager_blocking_duration_secs"] += 1.75
    after.append(late)
    end = max(e["timestamp"] for e in everything)
    final_as_of = dt.datetime.fromisoformat(end.replace("Z", "+00:00")) + dt.timedelta(minutes=5)
    windows = [60, 3600, 86400]

    incremental = tmp_path / "incremental.duckdb"
    run_cli("load", "--duckdb", incremental, write_ndjson(tmp_path / "before.ndjson", before))
    dbt_build(incremental, cut, *rolling_vars(60, windows))
    first_rows = query(incremental, "select count(*) from fct_badput_rolling")[0][0]
    run_cli("load", "--duckdb", incremental, write_ndjson(tmp_path / "after.ndjson", after))
    dbt_build(incremental, final_as_of, *rolling_vars(60, windows))

    full = tmp_path / "full.duckdb"
    run_cli("load", "--duckdb", full, write_ndjson(tmp_path / "all.ndjson", before + after))
    dbt_build(full, final_as_of, *rolling_vars(60, windows))

    for table in ["int_goodput__rolling_window_values", "fct_goodput_rolling", "fct_badput_rolling"]:
        assert_same_rows(snapshot(incremental, table), snapshot(full, table), table)
    kept = query(incremental, "select count(*) from fct_badput_rolling where computed_at = "
                              "(select min(computed_at) from fct_badput_rolling)")[0][0]
    total = query(incremental, "select count(*) from fct_badput_rolling")[0][0]
    assert 0 < kept < first_rows < total, (kept, first_rows, total)
    # sim-000 kept the windows before its last segment; the late record (segment 0) made sim-001 recompute
    # from its start, and the new runs are new
    recomputed_whole = dict(query(incremental, "select run_name, min(computed_at) = max(computed_at) "
                                               "from fct_goodput_rolling group by run_name"))
    assert recomputed_whole == {"sim-000": False, "sim-001": True, "sim-002": True, "sim-003": True}
