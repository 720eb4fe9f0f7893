"""The daily marts: a run's UTC days add up to its cumulative marts, and the fleet's day to its runs'.

Simulated runs of about 40 hours that cross midnight twice (one elastic, one still running), beside
short random runs (restarts, custom events, invalid runs), built once. For every run: one row per UTC
day from its job start to its end, each inside its day, elapsed, productive, disruptions and every
Badput bucket summed over the days equal to fct_goodput_cumulative and fct_badput_breakdown (an invalid
run's too). For every day: the fleet's row is the sum of its valid runs' rows.
"""

from __future__ import annotations

import datetime as dt
import math
from collections import defaultdict
from pathlib import Path
from typing import Any

from conftest import dbt_build, land_runs
from support.elastic import random_elastic_runs
from support.scenarios import T0, envelope, random_runs, record, utc
from test_rolling import rows

from goodput_loader.simulate import RunSpec, fleet, simulate_entries

TOLERANCE = 1e-6
DAY = dt.timedelta(days=1)


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=0, abs_tol=TOLERANCE)


def test_days_add_up_to_the_cumulative_marts_and_the_fleet_day_to_its_runs(tmp_path: Path) -> None:
    start = dt.datetime(2026, 11, 20, 21, 30, tzinfo=dt.timezone.utc)
    specs = fleet(3, seed=5, steps=2400, restarts=2, running=1, start=start, elastic=1,
                  base=RunSpec(name="", start=0.0, step_seconds=60.0, duplicate_rate=0.0))
    runs = {spec.name: envelope(spec.name, [e.payload for e in simulate_entries(spec)], [False]) for spec in specs}
    short, short_end = random_runs(list(range(60, 72)))
    elastic, elastic_end = random_elastic_runs([5, 6])
    runs.update(short)
    runs.update(elastic)
    # a run the library raises on (restarted after its job end): left out of the fleet's days
    invalid = ([("job_start", T0)] + [("step", T0 + 10 + 3 * i, i) for i in range(6)] + [("job_end", T0 + 30)]
               + [("job_start", T0 + 100)] + [("step", T0 + 120 + 3 * i, i) for i in range(3, 30)])
    runs["ended-then-restarted"] = envelope("ended-then-restarted", record("ended-then-restarted", invalid),
                                            [False] * len(invalid))
    db = land_runs(tmp_path, runs)
    as_of = max(start + dt.timedelta(days=2), utc(max(short_end, elastic_end) + 100))
    dbt_build(db, as_of)

    cumulative = {r["run_id"]: r for r in rows(db, "select * from fct_goodput_cumulative")}
    breakdown: dict[str, dict[tuple, float]] = defaultdict(dict)
    for r in rows(db, "select * from fct_badput_breakdown"):
        breakdown[r["run_id"]][(r["badput_type"], r["custom_badput_event_type"])] = r["badput_seconds"]
    days: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows(db, "select * from fct_goodput_daily order by run_id, day"):
        days[r["run_id"]].append(r)
    bucket_days: dict[str, dict[tuple, float]] = defaultdict(lambda: defaultdict(float))
    for r in rows(db, "select * from fct_badput_daily"):
        bucket_days[r["run_id"]][(r["badput_type"], r["custom_badput_event_type"])] += r["badput_seconds"]

    problems: list[str] = []
    timed = {run_id for run_id, c in cumulative.items() if (c["total_elapsed_seconds"] or 0) > 0}
    assert set(days) == timed
    crossing = 0
    for run_id in timed:
        c, run_days = cumulative[run_id], days[run_id]
        first = c["first_job_start_at"].date()
        expected = [first + DAY * i for i in range(len(run_days))]
        if [d["day"] for d in run_days] != expected:
            problems.append(f"{run_id} days {[d['day'] for d in run_days]} are not consecutive from {first}")
        end = c["first_job_start_at"] + dt.timedelta(seconds=c["total_elapsed_seconds"])
        if run_days[-1]["day"] != (end - dt.timedelta(microseconds=1)).date():
            problems.append(f"{run_id} last day {run_days[-1]['day']} but the run ends {end}")
        crossing += len(run_days) > 1
        for d in run_days:
            midnight = dt.datetime.combine(d["day"], dt.time())
            if not (midnight <= d["counted_from_at"] <= d["counted_until_at"] <= midnight + DAY):
                problems.append(f"{run_id} {d['day']} counts {d['counted_from_at']}..{d['counted_until_at']}")
            if d["is_open"] != (c["is_running"] and d is run_days[-1]):
                problems.append(f"{run_id} {d['day']} is_open {d['is_open']}")
        for column, total in [("elapsed_seconds", c["total_elapsed_seconds"]),
                              ("productive_seconds", c["productive_seconds"]),
                              ("disruptions", c["disruptions"])]:
            summed = sum(d[column] for d in run_days)
            if not close(summed, total):
                problems.append(f"{run_id} {column}: days {summed} cumulative {total}")
        for key in set(breakdown[run_id]) | set(bucket_days[run_id]):
            got, want = bucket_days[run_id].get(key, 0.0), breakdown[run_id].get(key, 0.0)
            if not close(got, want):
                problems.append(f"{run_id} {key}: days {got} breakdown {want}")
    assert crossing >= 3, crossing  # the simulated runs cross midnight

    # the fleet's day: its valid runs' days summed
    fleet_days = {r["day"]: r for r in rows(db, "select * from fct_goodput_fleet_daily")}
    valid = {run_id for run_id in timed if cumulative[run_id]["is_valid"]}
    assert len(timed - valid) == 1, "the restarted run is invalid: the fleet leaves it out"
    want: dict[dt.date, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for run_id in valid:
        for d in days[run_id]:
            for column in ("elapsed_seconds", "productive_seconds", "badput_seconds", "disruptions"):
                want[d["day"]][column] += d[column]
            want[d["day"]]["runs"] += 1
            want[d["day"]]["running_runs"] += d["is_open"]
    assert set(fleet_days) == set(want)
    for day, w in want.items():
        f = fleet_days[day]
        for column, value in w.items():
            if not close(f[column], value):
                problems.append(f"fleet {day} {column}: {f[column]} runs {value}")
        if not close(f["goodput_pct"], w["productive_seconds"] / w["elapsed_seconds"] * 100):
            problems.append(f"fleet {day} goodput_pct {f['goodput_pct']}")
    fleet_buckets: dict[tuple, float] = defaultdict(float)
    for r in rows(db, "select * from fct_badput_daily"):
        if r["run_id"] in valid:
            fleet_buckets[(r["day"], r["gcm_badput_source"])] += r["badput_seconds"]
    got_buckets = {(r["day"], r["gcm_badput_source"]): r for r in rows(db, "select * from fct_badput_fleet_daily")}
    assert set(got_buckets) == set(fleet_buckets)
    for key, value in fleet_buckets.items():
        r = got_buckets[key]
        if not close(r["badput_seconds"], value) or not close(
                r["badput_pct"], value / fleet_days[key[0]]["elapsed_seconds"] * 100):
            problems.append(f"fleet {key}: {r['badput_seconds']} ({r['badput_pct']} %), runs {value}")
    assert not problems, "\n".join(problems[:40])
