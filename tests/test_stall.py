"""A run that stops logging without a job end: flagged as stalled, its rolling grid bounded."""

from __future__ import annotations

import datetime as dt

from conftest import dbt_build, query, run_cli

from goodput_loader.simulate import RunSpec, write_run

START = dt.datetime(2026, 6, 1, tzinfo=dt.timezone.utc)
GRID = ["--var", "rolling_grid_seconds=300"]


def test_a_silent_run_is_stalled_and_its_grid_stops_growing(tmp_path):
    spec = RunSpec(name="hung", start=START.timestamp(), steps=400, finished=False)
    write_run(spec, tmp_path / "data", "proj", compress=False)
    counts = {}
    for label, as_of in [("a minute later", None), ("ten days later", 10), ("300 days later", 300)]:
        db = tmp_path / f"{label}.duckdb"
        run_cli("load", "--duckdb", db, tmp_path / "data")
        [(last_entry,)] = query(db, 'select max("timestamp") from goodput_raw.log_entries')
        last_entry = last_entry.replace(tzinfo=dt.timezone.utc)
        evaluated = last_entry + (dt.timedelta(minutes=1) if as_of is None else dt.timedelta(days=as_of))
        dbt_build(db, evaluated, *GRID)
        [(stalled, running, total, first_start)] = query(
            db, "select is_stalled, is_running, total_elapsed_seconds, first_job_start_epoch from fct_goodput_cumulative")
        assert running and stalled == (as_of is not None)
        # The library's number stays: elapsed time counts up to the evaluation time.
        assert abs(total - (evaluated.timestamp() - first_start)) < 1e-3
        assert query(db, "select status from dim_runs") == [("stalled" if as_of else "running",)]
        counts[label] = query(db, "select count(*), max(window_end_at) from fct_goodput_rolling")[0]
        bound = last_entry + dt.timedelta(days=5, seconds=300)
        assert counts[label][1].replace(tzinfo=dt.timezone.utc) <= bound
        if as_of:
            report = run_cli("report", "--duckdb", db)
            assert "stalled: silent for" in report.stdout
    # The grid ends at the last entry plus the largest window (5 days), however late the evaluation.
    assert counts["ten days later"] == counts["300 days later"]
    assert counts["a minute later"][0] < counts["ten days later"][0]
