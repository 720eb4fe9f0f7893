"""The rolling models' stored rows always match the configuration they are read with."""

from __future__ import annotations

import datetime as dt
import subprocess

import duckdb
from conftest import BIN, ROOT, dbt_build, query, run_cli

from goodput_loader.simulate import RunSpec, fleet, write_run

START = dt.datetime(2026, 11, 20, tzinfo=dt.timezone.utc)
AS_OF = START + dt.timedelta(hours=8)


def build(db, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / "goodput-loader"), "build", "--duckdb", str(db), "--as-of", AS_OF.isoformat(),
                           *extra], cwd=ROOT, capture_output=True, text=True, timeout=900)


def test_changed_rolling_vars_stop_an_incremental_build_until_a_full_refresh(tmp_path):
    """And while the failed build is the latest, report and push refuse its marts."""
    for spec in fleet(2, seed=5, steps=300, restarts=1, running=1, start=START, base=RunSpec(name="", start=0.0)):
        write_run(spec, tmp_path / "data", "proj", compress=False)
    db = tmp_path / "w.duckdb"
    run_cli("load", "--duckdb", db, tmp_path / "data")
    dbt_build(db, AS_OF, "--var", "rolling_grid_seconds=300")
    before = query(db, "select * from fct_goodput_rolling order by all")

    changed = build(db, "--var", "rolling_grid_seconds=600")
    assert changed.returncode == 1
    assert "holds rows computed with" in changed.stderr + changed.stdout and "--full-refresh" in changed.stderr
    assert query(db, "select * from fct_goodput_rolling order by all") == before  # nothing mixed in
    # The failed build is on record: report and push refuse the marts until a build succeeds.
    refused = run_cli("report", "--duckdb", db, expect=1)
    assert "the last dbt build did not succeed: int_goodput__entries_ordered (error)" in refused.stderr
    assert "--allow-failed-build" in refused.stderr
    assert "Goodput per run" in run_cli("report", "--duckdb", db, "--allow-failed-build").stdout
    pushed = run_cli("push", "--duckdb", db, "--project", "p", "--location", "l", "--dry-run", expect=1)
    assert "did not succeed" in pushed.stderr

    dbt_build(db, AS_OF, "--var", "rolling_grid_seconds=600", "--", "--full-refresh")
    ends = query(db, "select distinct window_end_epoch % 600 from fct_goodput_rolling")
    assert ends == [(0,)]
    assert query(db, "select count(*) from fct_goodput_rolling where window_end_epoch % 600 != 0") == [(0,)]
    dbt_build(db, AS_OF, "--var", "rolling_grid_seconds=600")  # incremental again
    assert "Goodput per run" in run_cli("report", "--duckdb", db).stdout
    [(models,)] = query(db, "select count(*) from goodput_incremental_state")
    per_run = [path for path in (ROOT / "models").rglob("*.sql")
               if "goodput_check_incremental_state()" in path.read_text()]
    assert models == len(per_run) >= 31  # every per-run model records its state
    # A configured ideal step time changes the stored deviations of every run: not mixed in either.
    ideal = build(db, "--var", "rolling_grid_seconds=600", "--var", "goodput_ideal_step_seconds=5")
    assert ideal.returncode == 1 and '"goodput_ideal_step_seconds": 5' in ideal.stderr + ideal.stdout

    # A warehouse whose state was never recorded (built by an older version) is not trusted either.
    con = duckdb.connect(str(db))
    con.execute("drop table goodput_incremental_state")
    con.close()
    unrecorded = build(db, "--var", "rolling_grid_seconds=600")
    assert unrecorded.returncode == 1 and "was not recorded" in unrecorded.stderr + unrecorded.stdout


def test_a_warehouse_of_an_older_version_loses_its_renamed_models_and_their_failures(tmp_path):
    """A model this version renamed leaves a stale table and, if its last build failed, a failure on
    record that no build can clear: the build drops both, so report works after the upgrade."""
    for spec in fleet(1, seed=6, steps=200, restarts=0, running=0, start=START, base=RunSpec(name="", start=0.0)):
        write_run(spec, tmp_path / "data", "proj", compress=False)
    db = tmp_path / "w.duckdb"
    run_cli("load", "--duckdb", db, tmp_path / "data")
    dbt_build(db, AS_OF)
    con = duckdb.connect(str(db))
    con.execute("create table main.int_goodput__rolling_values as select 1 as run_name")
    con.execute("insert into main.goodput_build_results values ('model.goodput_warehouse.int_goodput__rolling_values', "
                "'error', 'an old failure', 'old', now())")
    con.close()
    assert "did not succeed: int_goodput__rolling_values" in run_cli("report", "--duckdb", db, expect=1).stderr
    dbt_build(db, AS_OF)
    assert query(db, "select count(*) from information_schema.tables where table_name = 'int_goodput__rolling_values'") \
        == [(0,)]
    assert "Goodput per run" in run_cli("report", "--duckdb", db).stdout
