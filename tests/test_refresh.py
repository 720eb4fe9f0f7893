"""`goodput-loader refresh`: one scheduled cycle (load, build, push) under a lock, stopping at the
first failed step, against the local Monitoring server."""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import socket
from pathlib import Path

from conftest import cli_subprocess, query
from support.fake_monitoring import FakeMonitoring

from goodput_loader.refresh import EXIT_LOCKED
from goodput_loader.simulate import RunSpec, fleet, write_run

PUSH = ["--push-project", "proj", "--push-location", "us-central2", "--push-accelerator-type", "v5p-128"]


def simulated(tmp_path: Path) -> Path:
    """Two runs of the last three hours, one still running (its last entry a minute old)."""
    now = dt.datetime.now(dt.timezone.utc)
    data = tmp_path / "data"
    for spec in fleet(2, seed=5, steps=600, restarts=1, running=1, start=now - dt.timedelta(hours=3),
                      base=RunSpec(name="", start=0.0, step_seconds=4.0, duplicate_rate=0.0), live_at=now):
        write_run(spec, data, "proj", compress=True)
    return data


def refresh(db: Path, *args: str, expect: int = 0) -> tuple[dict | None, str]:
    result = cli_subprocess("refresh", "--duckdb", str(db), "--json", *args, expect=expect)
    return (json.loads(result.stdout) if result.stdout.strip() else None), result.stderr


def test_a_cycle_loads_builds_and_pushes_and_the_next_one_sends_only_what_is_new(tmp_path):
    data = simulated(tmp_path)
    db = tmp_path / "w.duckdb"
    with FakeMonitoring() as server:
        first, _ = refresh(db, str(data), *PUSH, "--push-endpoint", server.endpoint)
        assert first["steps"]["load"]["inserted"] > 1000 and first["steps"]["load"]["rejected"] == 0
        push = first["steps"]["push"]
        assert push["failed"] == [] and push["points_written"] == push["points_planned"] > 100
        assert sum(server.requests) == push["points_written"]
        # the marts the push read are the ones built in this cycle
        assert query(db, "select count(*) from fct_goodput_cumulative where is_valid") == [(2,)]

        second, _ = refresh(db, str(data), *PUSH, "--push-endpoint", server.endpoint)
        assert second["steps"]["load"]["inserted"] == 0
        again = second["steps"]["push"]
        # the finished run's points were all sent; the running run's latest windows moved on
        assert again["failed"] == [] and again["already_pushed"] > 0
        assert again["points_written"] < push["points_written"]
    assert (tmp_path / "w.duckdb.refresh.lock").read_text().startswith("goodput-loader refresh lock: held by pid")


def test_a_cycle_started_while_another_holds_the_lock_does_nothing(tmp_path):
    data = simulated(tmp_path)
    db = tmp_path / "w.duckdb"
    lock = tmp_path / "w.duckdb.refresh.lock"
    with open(lock, "a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        held.write("goodput-loader refresh lock: held by pid 1 since earlier")
        held.flush()
        result, stderr = refresh(db, str(data), expect=EXIT_LOCKED)
    assert result is None and "another refresh holds" in stderr and "(held by pid 1 since earlier)" in stderr
    assert "Traceback" not in stderr
    assert not db.exists()  # nothing was loaded


def test_a_lock_that_cannot_be_opened_is_one_line_not_a_traceback(tmp_path):
    data = simulated(tmp_path)
    result, stderr = refresh(tmp_path / "w.duckdb", str(data), "--lock", "/proc/goodput-refresh.lock", expect=1)
    assert result is None and stderr.startswith("goodput-loader: error: cannot open the refresh lock")
    assert "Traceback" not in stderr and not (tmp_path / "w.duckdb").exists()


def test_a_lock_path_that_is_not_a_lock_file_is_refused_and_left_intact(tmp_path):
    data = simulated(tmp_path)
    db = tmp_path / "w.duckdb"
    refresh(db, str(data))
    before = db.read_bytes()
    result, stderr = refresh(db, str(data), "--lock", str(db), expect=1)
    assert "is an existing file that is not a refresh lock" in stderr and result is None
    assert db.read_bytes() == before  # the warehouse is untouched


def test_nothing_is_pushed_after_a_failed_build(tmp_path):
    data = simulated(tmp_path)
    db = tmp_path / "w.duckdb"
    refresh(db, str(data))  # no push: load and build only
    with FakeMonitoring() as server:
        # another grid than the stored rolling history: the incremental build refuses to mix them
        result, stderr = refresh(db, str(data), "--var", "rolling_grid_seconds=120", *PUSH,
                                 "--push-endpoint", server.endpoint, expect=1)
        assert server.requests == []
    assert result["failed_step"] == "build" and "push" not in result["steps"]
    assert "build failed (nothing was pushed)" in stderr and "--full-refresh" in stderr


def test_nothing_is_built_after_a_failed_load(tmp_path):
    db = tmp_path / "w.duckdb"
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result, stderr = refresh(db, "--from-logging", "--project", "proj", "--run", "r", "--max-retries", "0",
                             "--logging-endpoint", f"http://127.0.0.1:{port}", *PUSH, expect=1)
    assert result["failed_step"] == "load" and list(result["steps"]) == []
    assert "load failed (nothing was built or pushed)" in stderr and "Traceback" not in stderr
    tables = query(db, "select table_name from information_schema.tables") if db.exists() else []
    assert ("fct_goodput_cumulative",) not in tables
