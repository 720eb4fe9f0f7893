"""Runs that are not one run: the same name in two projects, and a name reused for a new experiment.

Until runs are identified by (project, run) in every model, such a run is marked invalid with the
reason, never reported as one merged run; every other run is computed as usual.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from conftest import dbt_build, query, run_cli

from goodput_loader.simulate import RunSpec, log_entries

AS_OF = dt.datetime(2026, 12, 1, tzinfo=dt.timezone.utc)


def land(tmp_path: Path, entries: list[dict]) -> Path:
    path = tmp_path / "entries.ndjson"
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    db = tmp_path / "w.duckdb"
    run_cli("load", "--duckdb", db, path)
    return db


def cumulative(db: Path) -> dict[str, tuple]:
    rows = query(db, "select run_name, is_valid, invalid_reason, goodput_pct, is_name_reused from fct_goodput_cumulative")
    return {row[0]: row[1:] for row in rows}


def test_the_same_run_name_in_two_projects_is_invalid_not_merged(tmp_path):
    a = list(log_entries(RunSpec(name="shared", start=1_795_000_000.0, steps=200), "proj-a"))
    b = list(log_entries(RunSpec(name="shared", start=1_795_000_000.0, steps=150, seed=1), "proj-b"))
    other = list(log_entries(RunSpec(name="alone", start=1_795_000_000.0, steps=100), "proj-a"))
    db = land(tmp_path, a + b + other)
    dbt_build(db, AS_OF)
    runs = cumulative(db)
    assert runs["shared"][0] is False and "logged under 2 log names" in runs["shared"][1]
    assert runs["shared"][2] is None
    assert runs["alone"][0] is True and 0 < runs["alone"][2] < 100
    from goodput_loader.push.run import PushRequest, run_push
    from goodput_loader.push.series import Target

    dry = run_push(PushRequest(duckdb_path=str(db), target=Target("proj-a", "l"), dry_run=True,
                               now=dt.datetime.fromtimestamp(1_795_000_000 + 3 * 3600, dt.timezone.utc)))
    workloads = {ts["resource"]["labels"]["workload_id"] for r in dry["requests"] for ts in r["timeSeries"]}
    assert workloads == {"alone"}


def test_a_run_name_reused_for_a_new_experiment_is_flagged(tmp_path):
    first = list(log_entries(RunSpec(name="exp", start=1_795_000_000.0, steps=200), "proj"))
    assert "job_end_time" in first[-1]["jsonPayload"]
    # The same name a day later: a new job, steps from 0 again.
    second = list(log_entries(RunSpec(name="exp", start=1_795_086_400.0, steps=120, seed=3), "proj"))
    # A job that ended and was started again an hour later from its checkpoint is one run.
    resumed = list(log_entries(RunSpec(name="resumed", start=1_795_000_000.0, steps=200), "proj"))
    resumed_more = [e for e in log_entries(RunSpec(name="resumed", start=1_795_010_000.0, steps=260, seed=5), "proj")
                    if e["jsonPayload"].get("step_count", 200) >= 200 or "job_start_time" in e["jsonPayload"]]
    db = land(tmp_path, first + second + resumed + resumed_more)
    dbt_build(db, AS_OF)
    runs = cumulative(db)
    assert runs["exp"][:1] == (False,) and runs["exp"][3] is True
    assert runs["exp"][1].startswith("the run name was reused")
    assert query(db, "select is_name_reused from dim_runs where run_name = 'exp'") == [(True,)]
    assert runs["resumed"][3] is False
