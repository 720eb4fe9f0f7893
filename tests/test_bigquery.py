"""BigQuery: the loader's sink and every dbt model, against a local BigQuery emulator.

The real google-cloud-bigquery client and dbt-bigquery talk REST to bqemulator on 127.0.0.1
(started and stopped here). The same simulated runs also go through DuckDB; every mart must
come out the same on both. The emulator runs BigQuery SQL through SQLGlot on DuckDB, so in
addition every compiled model is parsed as BigQuery SQL by sqlglot.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import subprocess
from pathlib import Path
from typing import Any, Iterator

import pytest
from conftest import BIN, ROOT, dbt_build, query, run_cli
from support.bq_emulator import running_emulator

from goodput_loader.simulate import RunSpec, fleet, write_run

PROJECT = "test-project"
RAW = "goodput_raw"
AS_OF = dt.datetime(2026, 11, 21, tzinfo=dt.timezone.utc)
ROLLING_VARS = {"rolling_grid_seconds": 300, "rolling_windows_seconds": [3600, 86400]}
MARTS = ["fct_goodput_cumulative", "fct_badput_breakdown", "fct_steps", "fct_disruptions", "dim_runs",
         "fct_goodput_rolling", "fct_badput_rolling", "fct_goodput_rolling_latest", "fct_badput_rolling_latest"]


@pytest.fixture(scope="module")
def emulator(tmp_path_factory) -> Iterator[str]:
    with running_emulator(tmp_path_factory.mktemp("bqemu") / "emulator.log") as endpoint:
        yield endpoint


@pytest.fixture(scope="module")
def client(emulator):
    from goodput_loader.sinks.bigquery_sink import make_client

    bq = make_client(PROJECT, emulator)
    bq.create_dataset(RAW, exists_ok=True)
    return bq


@pytest.fixture(scope="module")
def runs_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("runs")
    start = dt.datetime(2026, 11, 20, tzinfo=dt.timezone.utc)
    for spec in fleet(3, seed=9, steps=700, restarts=1, running=1, start=start,
                      base=RunSpec(name="", start=0.0, step_seconds=3.0, duplicate_rate=0.01)):
        write_run(spec, out, "proj", compress=True)
    (out / "broken.ndjson").write_text('{"logName": "projects/proj/logs/goodput_x", "insertId": "a"}\nnot json\n')
    return out


def bq_rows(client, sql: str) -> list[dict[str, Any]]:
    return [dict(row.items()) for row in client.query(sql).result()]


def test_load_creates_tables_and_reloads_without_duplicates(client, emulator, runs_dir):
    args = ["load", "--bigquery", f"{PROJECT}.{RAW}", "--bigquery-endpoint", emulator, "--batch-size", "2000",
            "--json", *sorted(map(str, runs_dir.glob("*.ndjson*")))]
    first = json.loads(run_cli(*args).stdout)
    landed = sum(s["inserted"] for s in first["sources"])
    count = bq_rows(client, f"select count(*) as n, count(distinct concat(log_name, insert_id, "
                            f"cast(`timestamp` as string))) as keys from {RAW}.log_entries")[0]
    assert count["n"] == count["keys"] == landed > 2000
    again = json.loads(run_cli(*args, "--rescan").stdout)
    assert sum(s["inserted"] for s in again["sources"]) == 0
    assert bq_rows(client, f"select count(*) as n from {RAW}.log_entries")[0]["n"] == landed
    # the bad lines are kept with their location, once
    rejected = bq_rows(client, f"select location, reason from {RAW}.rejected_entries order by location")
    assert [r["location"].rsplit(":", 1)[1] for r in rejected] == ["1", "2"]
    state = bq_rows(client, f"select source_key, entries_landed from {RAW}.load_state order by source_key")
    assert sum(r["entries_landed"] for r in state) == landed and len(state) == 4
    # no staging table is left behind
    assert sorted(t.table_id for t in client.list_tables(RAW)) == ["load_state", "log_entries", "rejected_entries"]
    table = client.get_table(f"{PROJECT}.{RAW}.log_entries")
    assert table.time_partitioning.field == "timestamp" and table.clustering_fields == ["log_name"]


def test_load_into_a_missing_dataset_says_how_to_create_it(emulator, runs_dir):
    result = run_cli("load", "--bigquery", f"{PROJECT}.no_such_dataset", "--bigquery-endpoint", emulator,
                     str(next(runs_dir.glob("goodput_*"))), expect=None)
    assert result.exit_code == 1 and "bq mk --dataset test-project:no_such_dataset" in result.stderr
    bad = run_cli("load", "--bigquery", "no-dot", str(next(runs_dir.glob("goodput_*"))), expect=None)
    assert bad.exit_code == 1 and "expected PROJECT.DATASET" in bad.stderr


def bigquery_profile(tmp_path: Path, endpoint: str) -> Path:
    (tmp_path / "profiles.yml").write_text(f"""
goodput_warehouse:
  target: bigquery
  outputs:
    bigquery:
      type: bigquery
      method: oauth-secrets
      token: unused-by-the-emulator
      project: {PROJECT}
      dataset: goodput
      api_endpoint: {endpoint}
      location: US
      threads: 2
      job_retries: 0
""")
    return tmp_path


def dbt_bigquery(profiles: Path, target_path: Path, *args: str) -> subprocess.CompletedProcess:
    variables = {"goodput_as_of": AS_OF.strftime("%Y-%m-%dT%H:%M:%SZ"), "goodput_raw_schema": RAW, **ROLLING_VARS}
    result = subprocess.run(
        [str(BIN / "dbt"), *args, "--profiles-dir", str(profiles), "--project-dir", str(ROOT), "--target",
         "bigquery", "--target-path", str(target_path), "--vars", json.dumps(variables)],
        cwd=ROOT, capture_output=True, text=True, timeout=1800, env=dict(os.environ))
    assert result.returncode == 0, f"dbt {args} on BigQuery failed:\n{result.stdout[-8000:]}\n{result.stderr[-3000:]}"
    return result


def normalise(row: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, value in row.items():
        if key in ("computed_at", "first_loaded_at", "last_loaded_at"):
            continue
        if isinstance(value, dt.datetime) and value.tzinfo is not None:
            value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
        out[key] = value
    return out


def keyed(rows: list[dict[str, Any]]) -> dict[tuple, dict[str, Any]]:
    return {tuple(str(v) for k, v in sorted(r.items()) if not isinstance(v, float)): r for r in map(normalise, rows)}


def test_every_model_builds_on_bigquery_and_equals_duckdb(client, emulator, runs_dir, tmp_path):
    # DuckDB: the same files, the same vars
    duck = tmp_path / "duck.duckdb"
    run_cli("load", "--duckdb", duck, *sorted(map(str, runs_dir.glob("goodput_*"))))
    dbt_build(duck, AS_OF, *[a for k, v in ROLLING_VARS.items() for a in ("--var", f"{k}={json.dumps(v)}")])
    # BigQuery: entries landed by the loader test above (or land them now)
    if not bq_rows(client, f"select count(*) as n from {RAW}.log_entries")[0]["n"]:
        run_cli("load", "--bigquery", f"{PROJECT}.{RAW}", "--bigquery-endpoint", emulator,
                *sorted(map(str, runs_dir.glob("goodput_*"))))
    profiles = bigquery_profile(tmp_path, emulator)
    target = tmp_path / "target"
    # unit tests run on DuckDB only: the emulator reads their fractional-second timestamp literals as null
    dbt_bigquery(profiles, target, "build", "--exclude", "test_type:unit")
    dbt_bigquery(profiles, target, "build", "--exclude", "test_type:unit")  # the incremental path, merge
    problems = []
    for mart in MARTS:
        ours = keyed(bq_rows(client, f"select * from goodput.{mart}"))
        theirs_cursor = query(duck, f"select * from main.{mart}")
        names = [c[0] for c in query(duck, f"describe main.{mart}")]
        theirs = keyed([dict(zip(names, r)) for r in theirs_cursor])
        if ours.keys() != theirs.keys():
            problems.append(f"{mart}: {len(ours)} rows on BigQuery, {len(theirs)} on DuckDB; e.g. "
                            f"{sorted(set(ours) ^ set(theirs), key=str)[:2]}")
            continue
        for key, row in theirs.items():
            for column, value in row.items():
                other = ours[key][column]
                if isinstance(value, float) and not math.isclose(value, other, rel_tol=1e-9, abs_tol=1e-6):
                    problems.append(f"{mart} {key} {column}: BigQuery {other!r} DuckDB {value!r}")
    assert not problems, "\n".join(problems[:30])
    assert len(keyed(bq_rows(client, "select * from goodput.fct_goodput_rolling"))) > 100

    # every model compiled for BigQuery parses as BigQuery SQL
    import sqlglot

    compiled = sorted((target / "compiled" / "goodput_warehouse" / "models").rglob("*.sql"))
    assert len([p for p in compiled if "/marts/" in str(p) or "/intermediate/" in str(p)]) >= 25
    for path in compiled:
        sqlglot.parse(path.read_text(), read="bigquery")
