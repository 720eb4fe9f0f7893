"""`goodput-loader push` with the real google-cloud-monitoring client against a local gRPC
MetricService (tests/support/fake_monitoring.py) that rejects what Cloud Monitoring rejects."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import grpc
import pytest
from conftest import dbt_build, query, run_cli
from support.fake_monitoring import FakeMonitoring

from goodput_loader.library_windows import WindowBuildProcess
from goodput_loader.push.run import PushRequest, run_push
from goodput_loader.push.series import MIN_SPACING, Target
from goodput_loader.simulate import RunSpec, fleet, write_run

ARGS = ["--project", "proj", "--location", "us-central2", "--accelerator-type", "v5p-128"]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """Two runs that started 6 h ago (one still running), rolling windows every 5 minutes."""
    tmp = tmp_path_factory.mktemp("push")
    now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    start = now - dt.timedelta(hours=6)
    for spec in fleet(2, seed=4, steps=1500, restarts=1, running=1, start=start,
                      base=RunSpec(name="", start=0.0, step_seconds=4.0, duplicate_rate=0.0)):
        write_run(spec, tmp / "data", "proj", compress=True)
    db = tmp / "warehouse.duckdb"
    run_cli("load", "--duckdb", db, tmp / "data")
    dbt_build(db, now, "--var", "rolling_grid_seconds=300")
    return db


def fresh_copy(db: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "warehouse.duckdb"
    copy.write_bytes(db.read_bytes())
    return copy


def push(db: Path, endpoint: str, *extra: str, expect: int | None = 0) -> dict:
    result = run_cli("push", "--duckdb", db, *ARGS, "--endpoint", endpoint, "--json", *extra, expect=expect)
    return json.loads(result.stdout)


def by_metric(server: FakeMonitoring) -> dict[str, dict[tuple, list]]:
    out: dict[str, dict[tuple, list]] = {}
    for (metric, labels, _, resource, _), points in server.points().items():
        out.setdefault(metric.rsplit("/", 1)[1], {})[(dict(resource)["workload_id"], labels)] = points
    return out


def spaced(grid: list[tuple], latest: list[tuple]) -> list[tuple]:
    """The grid's windows a push sends before the window ending at the run's end: of two points closer
    than Cloud Monitoring's 5 s, only the later is sent (1 in 60 runs ends that close to a grid window)."""
    return grid if not grid or latest[0][1] - grid[-1][1] >= MIN_SPACING else grid[:-1]


def test_push_writes_what_the_marts_say_under_the_library_s_names(built, tmp_path):
    """Every value from the marts (live windows as the rolling marts hold them: --interval-semantics additive;
    the library's semantics of the live windows is test_push_library's)."""
    db = fresh_copy(built, tmp_path)
    with FakeMonitoring() as server:
        summary = push(db, server.endpoint, "--interval-semantics", "additive")
        assert summary["failed"] == [] and summary["points_written"] == summary["points_planned"] > 100
        assert max(server.requests) <= 200
        metrics = by_metric(server)
    cumulative = {r[0]: r for r in query(db, "select run_name, productive_seconds, disruptions, max_productive_step, "
                                             "total_elapsed_seconds, ideal_step_seconds, mean_step_deviation_seconds "
                                             "from fct_goodput_cumulative")}
    acc = ("accelerator_type", "v5p-128")
    for run, row in cumulative.items():
        assert metrics["goodput_time"][(run, (acc, ("goodput_source", "TOTAL")))][-1][1] == pytest.approx(row[1])
        assert metrics["disruptions"][(run, (acc, ("window_type", "cumulative")))][-1][1] == row[2]
        assert metrics["max_productive_steps"][(run, (acc,))][-1][1] == row[3]
        assert metrics["total_elapsed_time"][(run, (acc, ("window_type", "cumulative")))][-1][1] == pytest.approx(row[4])
        # the ideal step time, then the mean step deviation: the library's two meanings of one series
        assert [v for _, v in metrics["performance"][(run, ())]] == pytest.approx([row[5], row[6]])
    for run, source, seconds, in_library in query(
            db, "select run_name, gcm_badput_source, badput_seconds, is_in_library_breakdown from fct_badput_breakdown"):
        key = (run, (acc, ("badput_source", source)))
        if source == "DATA_LOADING_ASYNC" or not in_library:
            assert key not in metrics["badput_time"]
        else:
            assert metrics["badput_time"][key][-1][1] == pytest.approx(seconds)
    # interval Goodput: every complete 1h window on the grid, then the one ending at the run's end
    for run, in query(db, "select run_name from fct_goodput_cumulative"):
        series = metrics["interval_goodput"][(run, (acc, ("goodput_source", "TOTAL"), ("rolling_window_size", "3600")))]
        grid = query(db, f"select goodput_pct, window_end_at from fct_goodput_rolling where run_name = '{run}' "
                         "and window_seconds = 3600 and not is_partial order by window_end_epoch")
        latest = query(db, f"select goodput_pct, window_end_at from fct_goodput_rolling_latest where run_name = '{run}' "
                           "and window_seconds = 3600")
        assert [v for _, v in series] == pytest.approx([g[0] for g in spaced(grid, latest)] + [latest[0][0]])
        assert [t for t, _ in series] == sorted(t for t, _ in series)
    # interval Badput: every bucket but DATA_LOADING_ASYNC, every window size, as % of the window
    expected: dict[tuple, list] = {}
    for run, size, source, pct, end_at in query(db, """
            select run_name, window_seconds, gcm_badput_source, badput_pct, window_end_at from (
                select run_name, window_seconds, gcm_badput_source, badput_pct, window_end_at, 0 as is_latest
                from fct_badput_rolling where not is_partial
                union all
                select run_name, window_seconds, gcm_badput_source, badput_pct, window_end_at, 1
                from fct_badput_rolling_latest)
            where gcm_badput_source != 'DATA_LOADING_ASYNC'
            order by run_name, window_seconds, gcm_badput_source, window_end_at, is_latest"""):
        key = (run, (acc, ("badput_source", source), ("rolling_window_size", str(size))))
        values = expected.setdefault(key, [])
        if values and end_at - values[-1][1] < MIN_SPACING:  # Cloud Monitoring's 5 s: the later one is sent
            values.pop()
        values.append((pct, end_at))
    expected = {key: [pct for pct, _ in values] for key, values in expected.items()}
    assert set(metrics["interval_badput"]) == set(expected)
    for key, values in expected.items():
        assert [v for _, v in metrics["interval_badput"][key]] == pytest.approx(values), key


def test_a_second_push_sends_nothing_and_an_interrupted_one_resumes(built, tmp_path):
    db = fresh_copy(built, tmp_path)
    with FakeMonitoring() as server:
        server.fail_from_call = 3  # every call from the third on: UNAVAILABLE
        first = push(db, server.endpoint, "--max-retries", "1", expect=1)
        assert first["points_written"] > 0 and first["failed"]
        server.fail_from_call = None
        second = push(db, server.endpoint)
        assert second["failed"] == [] and second["already_pushed"] == first["points_written"]
        third = push(db, server.endpoint)
        assert third["points_planned"] == 0 and third["points_written"] == 0
        total = sum(len(points) for points in server.points().values())
        assert total == first["points_written"] + second["points_written"]


def test_a_window_build_child_that_died_before_the_push_is_replaced(built, tmp_path):
    """refresh starts the window build's child with its cycle; one killed meanwhile (the OOM killer) is not
    the push's failure: the push starts another and sends the same live windows."""
    db = fresh_copy(built, tmp_path)
    request = PushRequest(duckdb_path=str(db), target=Target("proj", "us-central2", accelerator_type="v5p-128"),
                          dry_run=True, now=dt.datetime.now(dt.timezone.utc))
    expected = run_push(request)
    with WindowBuildProcess() as dead:
        dead._process.kill()
        dead._process.wait()
        assert not dead.ready
        assert run_push(request, dead) == expected
    assert any(series["metric"]["type"].endswith("interval_goodput") for call in expected["requests"]
               for series in call["timeSeries"])


def test_a_push_leaves_unread_only_points_the_state_already_holds(built, tmp_path):
    """Differential, against push states made at random from the points themselves: reading with the
    state (each run's grid from the time its every series is pushed through; no window build for a live
    window pushed through its end) and planning gives the requests that reading everything gives, and
    every point left unread is counted as already pushed."""
    import random

    from goodput_loader.push.run import read_points
    from goodput_loader.push.series import plan_requests
    from goodput_loader.warehouses.duckdb import DuckDBMarts

    db = fresh_copy(built, tmp_path)
    now = dt.datetime.now(dt.timezone.utc)
    request = PushRequest(duckdb_path=str(db), target=Target("proj", "us-central2", accelerator_type="v5p-128"),
                          dry_run=True, now=now)
    marts = DuckDBMarts(str(db), read_only=True)
    try:
        everything, _, _ = read_points(marts, request, now, {})
        by_series: dict[str, list[dt.datetime]] = {}
        for point in everything:
            by_series.setdefault(point.series.id, []).append(point.end_time)
        ends = {series: sorted(times) for series, times in by_series.items()}
        # an interval series of each run missing: that run is read whole, the other one is not
        interval = sorted(s for s in ends if "interval_badput" in s)
        missing = {s for s in interval if "rolling_window_size=3600" in s and "PROGRAM_STARTUP" in s}
        assert len(missing) == 2
        rng = random.Random(11)
        states = {
            "everything pushed": {s: times[-1] for s, times in ends.items()},
            "everything but the live windows": {s: times[-2] for s, times in ends.items() if len(times) > 1},
            "one series per run never pushed": {s: times[-1] for s, times in ends.items() if s not in missing},
            **{f"at random {i}": {s: rng.choice(times) - rng.choice([dt.timedelta(0), dt.timedelta(seconds=1)])
                                  for s, times in ends.items() if rng.random() < 0.95} for i in range(2)},
        }
        skipped_windows = {}
        for name, pushed in states.items():
            points, _, skipped = read_points(marts, request, now, pushed)
            expected, got = plan_requests(everything, pushed, now), plan_requests(points, pushed, now)
            assert [[(p.series.id, p.end_time) for p in r] for r in got.requests] == \
                [[(p.series.id, p.end_time) for p in r] for r in expected.requests], name
            assert [p.value for r in got.requests for p in r] == \
                pytest.approx([p.value for r in expected.requests for p in r], rel=1e-9), name
            assert (got.dropped_too_close, got.dropped_too_old) == (expected.dropped_too_close,
                                                                    expected.dropped_too_old), name
            read = {(p.series.id, p.end_time) for p in points}
            unread = [p for p in everything if (p.series.id, p.end_time) not in read]
            assert all(p.end_time <= pushed[p.series.id] for p in unread), name
            # the grid's unread points are counted in SQL; a live window not built makes its points unknown
            assert skipped.already_pushed <= len(unread), name
            assert got.already_pushed + skipped.already_pushed <= expected.already_pushed, name
            if not skipped.live_windows:
                assert got.already_pushed + skipped.already_pushed == expected.already_pushed, name
            skipped_windows[name] = skipped.live_windows
            if name == "everything pushed":
                assert got.points == 0 and len(points) < len(everything) / 20, name
            if name == "one series per run never pushed":
                assert len(points) > len(everything) / 2, name
        # no live window is built once its every series holds its end (one the library raises on, which
        # sends nothing, is built at every push); one with a series never pushed is built
        assert skipped_windows["everything pushed"] > 2 and skipped_windows["everything but the live windows"] == 0
        assert 0 < skipped_windows["one series per run never pushed"] < skipped_windows["everything pushed"]
    finally:
        marts.close()


def test_transient_errors_are_retried(built, tmp_path):
    db = fresh_copy(built, tmp_path)
    with FakeMonitoring() as server:
        server.failures = [grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED,
                           grpc.StatusCode.RESOURCE_EXHAUSTED]
        summary = push(db, server.endpoint, "--run", "sim-000")
        assert summary["failed"] == [] and summary["retries"] == 3


MAX_STEPS_SIM_000 = ("compute.googleapis.com/workload/max_productive_steps", (("accelerator_type", "v5p-128"),),
                     "compute.googleapis.com/Workload",
                     (("location", "us-central2"), ("replica_id", "0"), ("workload_id", "sim-000")), "projects/proj")


def test_rejected_series_are_reported_and_only_they_are_retried(built, tmp_path):
    """A series refused for its value type is reported as failed and retried alone; the rest is written."""
    db = fresh_copy(built, tmp_path)
    with FakeMonitoring() as server:
        server.value_types[MAX_STEPS_SIM_000[0]] = "double_value"  # the library writes int64
        summary = push(db, server.endpoint, "--run", "sim-000", "--max-retries", "2", expect=1)
        assert [f["series"].split("{")[0].rsplit("/", 1)[1] for f in summary["failed"]] == ["max_productive_steps"]
        assert "Value type" in summary["failed"][0]["error"] and summary["retries"] == 2
        assert summary["points_written"] == summary["points_planned"] - 1
        state = query(db, "select count(*) from goodput_push.push_state where metric_type like '%max_productive%'")
        assert state == [(0,)]


def test_a_series_that_already_holds_a_later_point_is_not_a_failure(built, tmp_path):
    """Refused as out of order: the server holds this point or a later one (an earlier push whose
    record was lost, or another writer). Counted, recorded, never resent."""
    db = fresh_copy(built, tmp_path)
    with FakeMonitoring() as server:
        server.series[MAX_STEPS_SIM_000] = [(dt.datetime.now(dt.timezone.utc), 1)]
        summary = push(db, server.endpoint, "--run", "sim-000")
        assert summary["failed"] == [] and summary["already_on_server"] == 1 and summary["retries"] == 0
        assert summary["points_written"] == summary["points_planned"] - 1
        again = push(db, server.endpoint, "--run", "sim-000")
        assert again["points_planned"] == 0


def planned_points(db: Path) -> int:
    return json.loads(run_cli("push", "--duckdb", db, *ARGS, "--dry-run").stdout)["points_planned"]


def assert_each_point_once_in_order(server: FakeMonitoring, expected: int) -> None:
    held = server.points()
    assert sum(len(points) for points in held.values()) == expected
    for points in held.values():
        times = [t for t, _ in points]
        assert times == sorted(set(times))


def test_a_lost_reply_is_retried_and_every_point_lands_once(built, tmp_path):
    db = fresh_copy(built, tmp_path)
    expected = planned_points(db)
    with FakeMonitoring() as server:
        server.lose_replies = {1, 3, 4}
        summary = push(db, server.endpoint)
        assert summary["failed"] == [] and summary["already_on_server"] > 0
        assert summary["points_written"] + summary["already_on_server"] == expected
        assert_each_point_once_in_order(server, expected)
        assert push(db, server.endpoint)["points_planned"] == 0


def running_in_session(session_id: int) -> bool:
    """Whether a process of that session is still running (a zombie has exited: its files are closed)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # exited meanwhile
        if int(fields[3]) == session_id and fields[0] != "Z":
            return True
    return False


def test_a_push_killed_at_any_moment_resumes_and_sends_each_point_once(built, tmp_path):
    """SIGKILL six times, then a push to the end: three kills at a random moment of a push's start (reading
    the warehouse, its window build), three while it sends, each after a random number of requests reached
    the server (its reply not yet back: the server holds each for 0.1 s)."""
    import random
    import signal
    import subprocess
    import time

    from conftest import BIN

    db = fresh_copy(built, tmp_path)
    expected = planned_points(db)
    rng = random.Random(7)
    with FakeMonitoring() as server:
        server.delay = 0.1
        command = [str(BIN / "goodput-loader"), "push", "--duckdb", str(db), *ARGS, "--endpoint", server.endpoint]
        started = time.monotonic()
        whole = subprocess.run(command + ["--dry-run"], capture_output=True, timeout=120)
        assert whole.returncode == 0
        startup = time.monotonic() - started
        requests = len(json.loads(whole.stdout)["requests"])
        assert requests >= 16  # three kills while sending, each after at most an eighth of them, leave some unsent
        interrupted = 0
        for kill in range(6):
            # a session of its own, as a scheduler's job: its window build (a child process) is found by it
            calls = server.calls
            process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                       start_new_session=True)
            if kill % 2 == 0:
                time.sleep(rng.uniform(0, startup))
            else:
                sent = rng.randint(1, requests // 8)
                deadline = time.monotonic() + 120
                while server.calls < calls + sent and process.poll() is None:
                    assert time.monotonic() < deadline, "the push sent nothing for two minutes"
                    time.sleep(0.01)
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=30)
            # a kill inside the window build: the child dies with the push (PR_SET_PDEATHSIG), a moment
            # later; until it has, it holds the warehouse's file lock
            deadline = time.monotonic() + 60
            while running_in_session(process.pid):
                assert time.monotonic() < deadline, "a window build outlived its killed push"
                time.sleep(0.05)
            interrupted += kill % 2 == 1 and 0 < sum(len(p) for p in server.points().values()) < expected
        assert interrupted == 3  # every kill while sending stopped a push half-way
        server.delay = 0.0
        final = push(db, server.endpoint)
        assert final["failed"] == []
        assert_each_point_once_in_order(server, expected)
        assert push(db, server.endpoint)["points_planned"] == 0


def test_the_same_series_in_another_project_is_pushed_again(built, tmp_path):
    db = fresh_copy(built, tmp_path)
    with FakeMonitoring() as server:
        first = push(db, server.endpoint)
        args = [a if a != "proj" else "other-proj" for a in ARGS]
        second = json.loads(run_cli("push", "--duckdb", db, *args, "--endpoint", server.endpoint, "--json").stdout)
        assert second["already_pushed"] == 0 and second["points_written"] == first["points_written"] > 0


def test_dry_run_prints_requests_that_obey_the_api_rules(built, tmp_path):
    db = fresh_copy(built, tmp_path)
    result = run_cli("push", "--duckdb", db, *ARGS, "--dry-run")
    data = json.loads(result.stdout)
    assert data["requests"] and data["points_written"] == 0
    # the summary indented, then one request per line (for grep, head and wc)
    lines = [line for line in result.stdout.splitlines() if line.startswith("    {")]
    assert [json.loads(line.rstrip(",")) for line in lines] == data["requests"]
    last: dict[str, str] = {}
    for req in data["requests"]:
        assert req["name"] == "projects/proj" and len(req["timeSeries"]) <= 200
        ids = [json.dumps([ts["metric"], ts["resource"]], sort_keys=True) for ts in req["timeSeries"]]
        assert len(ids) == len(set(ids))
        for sid, ts in zip(ids, req["timeSeries"]):
            assert len(ts["points"]) == 1
            end = ts["points"][0]["interval"]["endTime"]
            assert sid not in last or last[sid] < end
            last[sid] = end
    assert query(db, "select count(*) from information_schema.tables where table_schema = 'goodput_push'") == [(0,)]


def test_points_older_than_the_api_accepts_are_dropped_and_counted(built, tmp_path):
    from goodput_loader.push.run import PushRequest, run_push
    from goodput_loader.push.series import Target

    db = fresh_copy(built, tmp_path)
    later = dt.datetime.now(dt.timezone.utc) + dt.timedelta(hours=27)
    summary = run_push(PushRequest(duckdb_path=str(db), target=Target("proj", "us-central2", "0", "v5p-128"),
                                   dry_run=True, now=later))
    assert summary["points_planned"] == 0 and summary["dropped_too_old"] > 100


def test_the_library_dashboard_reads_only_what_we_write(built, tmp_path):
    """Every metric type and label of the library's goodput_dashboard.json is one push writes."""
    import ml_goodput_measurement

    dashboard = Path(ml_goodput_measurement.__file__).parent / "dashboards" / "goodput_dashboard.json"
    text = dashboard.read_text()
    data = json.loads(run_cli("push", "--duckdb", fresh_copy(built, tmp_path), *ARGS, "--dry-run").stdout)
    series = [ts for req in data["requests"] for ts in req["timeSeries"]]
    types = {ts["metric"]["type"] for ts in series}
    labels = {k for ts in series for k in ts["metric"]["labels"]} | {k for ts in series for k in ts["resource"]["labels"]}
    used_types = set(re.findall(r"compute\.googleapis\.com/workload/(\w+)", text))
    used_types |= set(re.findall(r"compute_googleapis_com:workload_(\w+)", text))
    assert used_types and {f"compute.googleapis.com/workload/{t}" for t in used_types} <= types
    used_labels = set(re.findall(r'(?:metric|resource)\.labels?\.\\?"?(\w+)', text))
    used_labels |= {name.strip() for group in re.findall(r"by \(([\w, ]+)\)", text) for name in group.split(",")}
    # PromQL label matchers; monitored_resource is PromQL's name for the resource type, not a label
    used_labels |= set(re.findall(r'[{,]\s*(\w+)\s*!?=~?\s*\\"', text)) - {"monitored_resource"}
    assert used_labels and used_labels <= labels, used_labels - labels


def test_since_limits_the_rolling_history(built, tmp_path):
    db = fresh_copy(built, tmp_path)
    everything = json.loads(run_cli("push", "--duckdb", db, *ARGS, "--dry-run").stdout)
    since = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=2)).isoformat()
    recent = json.loads(run_cli("push", "--duckdb", db, *ARGS, "--dry-run", "--since", since).stdout)
    assert 0 < recent["points_planned"] < everything["points_planned"]
    ends = [ts["points"][0]["interval"]["endTime"] for req in recent["requests"] for ts in req["timeSeries"]
            if ts["metric"]["type"].endswith("interval_goodput")]
    assert min(ends) >= since[:19]


def test_many_series_are_split_into_requests_of_at_most_200():
    from goodput_loader.push.series import Point, SeriesKey, plan_requests

    now = dt.datetime.now(dt.timezone.utc)
    points = [Point(SeriesKey("compute.googleapis.com/workload/goodput_time", (("run", str(i)),), (), "double_value"),
                    now - dt.timedelta(minutes=k), float(k)) for i in range(450) for k in range(3)]
    plan = plan_requests(points, {}, now)
    assert [len(r) for r in plan.requests] == [200, 200, 50] * 3
    for request in plan.requests:
        assert len({p.series for p in request}) == len(request)
    firsts = {p.series: p.end_time for p in plan.requests[0]}
    assert all(p.end_time > firsts[p.series] for p in plan.requests[3])


def test_accelerator_and_cluster_labels_are_optional(built, tmp_path):
    db = fresh_copy(built, tmp_path)
    plain = json.loads(run_cli("push", "--duckdb", db, "--project", "proj", "--location", "l", "--dry-run").stdout)
    labels = {k for req in plain["requests"] for ts in req["timeSeries"] for k in ts["metric"]["labels"]}
    assert "accelerator_type" not in labels and "cluster_name" not in labels
    named = json.loads(run_cli("push", "--duckdb", db, *ARGS, "--cluster-name", "c1", "--dry-run").stdout)
    for ts in (ts for req in named["requests"] for ts in req["timeSeries"]):
        expected = {} if ts["metric"]["type"].endswith("/performance") else {"accelerator_type": "v5p-128",
                                                                             "cluster_name": "c1"}
        assert {k: ts["metric"]["labels"][k] for k in expected} == expected
        if not expected:
            assert ts["metric"]["labels"] == {}


def test_missing_credentials_say_how_to_authenticate_without_a_traceback(tmp_path, monkeypatch):
    """No endpoint and no usable credentials: one line that says what to do, exit 1 (no network call:
    the credentials file named does not exist and the GCE metadata check is off)."""
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "missing-key.json"))
    monkeypatch.setenv("NO_GCE_CHECK", "True")
    monkeypatch.delenv("GOODPUT_MONITORING_ENDPOINT", raising=False)
    result = run_cli("push", "--duckdb", tmp_path / "w.duckdb", "--project", "p", "--location", "l", expect=1)
    assert "gcloud auth application-default login" in result.stderr
    export = tmp_path / "goodput_r.ndjson"
    export.write_text("")
    result = run_cli("load", "--bigquery", "p.d", export, expect=1)
    assert "gcloud auth application-default login" in result.stderr
