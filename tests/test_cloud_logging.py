"""The Cloud Logging path: the real google-cloud-logging client against a local server."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from conftest import query, run_cli
from support.fake_logging import FakeLoggingServer, compile_filter

from goodput_loader.simulate import RunSpec, log_entries
from goodput_loader.sources.cloud_logging import build_filter

UNTIL = "2026-12-01T00:00:00Z"


def simulated(name: str, steps: int = 300, start: float = 1_795_000_000.0) -> list[dict]:
    return list(log_entries(RunSpec(name=name, start=start, steps=steps, restarts=1), "proj"))


def load(server: FakeLoggingServer, db, *runs: str, extra: tuple[str, ...] = (), expect: int = 0):
    args = ["load", "--json", "--from-logging", "--project", "proj", "--until", UNTIL,
            "--since", "2026-11-01T00:00:00Z", "--logging-endpoint", server.endpoint,
            "--page-size", "100", "--retry-initial-delay", "0.01", "--requests-per-minute", "100000",
            "--duckdb", db]
    for run in runs:
        args += ["--run", run]
    return run_cli(*args, *extra, expect=expect)


def test_filter_quotes_run_names_and_has_both_time_bounds():
    lower = dt.datetime(2026, 11, 1, tzinfo=dt.timezone.utc)
    upper = dt.datetime(2026, 12, 1, tzinfo=dt.timezone.utc)
    text = build_filter("p", 'we"ird\\run', lower, upper, None)
    assert 'jsonPayload.job_name="we\\"ird\\\\run"' in text
    assert 'timestamp<="2026-12-01T00:00:00Z"' in text and 'timestamp>="2026-11-01T00:00:00Z"' in text
    predicate = compile_filter(text)
    entry = {"logName": "projects/p/logs/goodput_we%22ird%5Crun", "severity": "INFO",
             "jsonPayload": {"job_name": 'we"ird\\run'}, "timestamp": "2026-11-15T00:00:00Z", "insertId": "a"}
    assert predicate(entry)
    cursor_filter = build_filter("p", "r", lower, upper, (1_795_000_000_000_000, "b"))
    assert "insertId>\"b\"" in cursor_filter


def test_loads_all_runs_pages_and_is_incremental(warehouse):
    run_a, run_b = simulated("run-a"), simulated("run-b", start=1_795_100_000.0)
    noise = [dict(run_a[0], severity="DEBUG", insertId="debug-1"),
             dict(run_a[1], insertId="foreign", jsonPayload=dict(run_a[1]["jsonPayload"], job_name="x"))]
    with FakeLoggingServer(run_a + run_b + noise) as server:
        summary = json.loads(load(server, warehouse, "run-a", "run-b").stdout)["sources"]
        unique_a = len({(e["timestamp"], e["insertId"]) for e in run_a})
        assert summary[0]["inserted"] == unique_a  # the filter leaves out DEBUG and foreign job_name
        assert summary[0]["duplicates"] == len(run_a) - unique_a
        assert len(server.requests) > 10  # pageSize 100: many pages
        assert all(r["orderBy"] == "timestamp asc" and r["pageSize"] == 100 for r in server.requests)

        # Second run, without the re-read window: new entries only.
        more = simulated("run-a", steps=20, start=1_795_050_000.0)
        server.entries.extend(more)
        before = len(server.requests)
        second = json.loads(load(server, warehouse, "run-a", extra=("--reread", "0")).stdout)["sources"][0]
        assert second["read"] == len(more)
        assert second["inserted"] == len({(e["timestamp"], e["insertId"]) for e in more})
        # every request of the incremental load starts strictly after the committed cursor
        assert all("insertId>" in r["filter"] for r in server.requests[before:])
        assert len(server.requests) - before == -(-len(more) // 100) + (len(more) % 100 == 0)
        third = json.loads(load(server, warehouse, "run-a", extra=("--reread", "0")).stdout)["sources"][0]
        assert third["read"] == 0
    rows = query(warehouse, "select run_name, count(*) from goodput_raw.log_entries group by 1 order by 1")
    assert rows[0][0] == "run-a" and rows[1][0] == "run-b"


def test_entries_readable_late_land_on_the_next_load_and_are_counted(warehouse, tmp_path):
    """An entry committed late (its timestamp behind a cursor an earlier load already moved past)
    lands through the re-read window; the cursor never moves back."""
    entries = simulated("run-a")
    late = entries[-30:-20]  # seconds before the end of the run
    bad = dict(entries[-15], insertId="bad-step", jsonPayload={"job_name": "run-a", "step_count": "x",
                                                               "step_start_time": 1_795_000_000.0})
    with FakeLoggingServer([e for e in entries if e not in late] + [bad]) as server:
        first = json.loads(load(server, warehouse, "run-a").stdout)["sources"][0]
        assert first["late"] == 0 and first["rejected"] == 1
        cursor = query(warehouse, "select cursor_timestamp, cursor_insert_id from goodput_raw.load_state")
        server.entries.extend(late)
        result = load(server, warehouse, "run-a")
        second = json.loads(result.stdout)["sources"][0]
        assert second["late"] == second["inserted"] == len({(e["timestamp"], e["insertId"]) for e in late})
        assert second["rejected"] == 0  # read again in the window, but not new
        assert query(warehouse, "select cursor_timestamp, cursor_insert_id from goodput_raw.load_state") == cursor
    reference = tmp_path / "reference.duckdb"
    with FakeLoggingServer(entries + [bad]) as server:
        load(server, reference, "run-a")
    sql = "select log_name, timestamp, insert_id, payload from goodput_raw.log_entries order by all"
    assert query(warehouse, sql) == query(reference, sql)


@pytest.mark.parametrize("failures", [
    [429, 503, 429],
    # a reply cut mid-body, a 200 whose body is a proxy's HTML page: retried like a 503
    ["cut", "not-json", 503, "cut"],
])
def test_transient_failures_are_retried_and_lose_nothing(warehouse, tmp_path, failures):
    entries = simulated("run-a")
    with FakeLoggingServer(entries) as server:
        server.failures = list(failures)
        result = load(server, warehouse, "run-a")
        assert "Traceback" not in result.stderr
        retried = len(server.requests)
    reference = tmp_path / "reference.duckdb"
    with FakeLoggingServer(entries) as server:
        load(server, reference, "run-a")
        assert retried == len(server.requests) + len(failures)
    sql = "select log_name, timestamp, insert_id, payload from goodput_raw.log_entries order by all"
    assert query(warehouse, sql) == query(reference, sql)


def test_persistent_failure_exits_nonzero_and_keeps_committed_pages(warehouse):
    entries = simulated("run-a")
    with FakeLoggingServer(entries) as server:
        server.fail_after = 3
        result = load(server, warehouse, "run-a", extra=("--max-retries", "2"), expect=1)
        assert "kept failing" in result.stderr and "run the same command again" in result.stderr
        assert query(warehouse, "select count(*) from goodput_raw.log_entries")[0][0] == 300
        server.fail_after = None
        load(server, warehouse, "run-a")
    unique = len({(e["timestamp"], e["insertId"]) for e in entries})
    assert query(warehouse, "select count(*) from goodput_raw.log_entries")[0][0] == unique


@pytest.mark.parametrize("page_size", [1001])
def test_page_size_above_api_limit_is_refused_before_any_call(warehouse, page_size):
    result = run_cli("load", "--from-logging", "--project", "p", "--run", "r", "--page-size", page_size,
                     "--duckdb", warehouse, expect=2)
    assert "1001" in result.stderr or "page-size" in result.stderr
