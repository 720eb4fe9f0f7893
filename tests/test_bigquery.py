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
import re
import subprocess
from pathlib import Path
from typing import Any, Iterator

import duckdb
import pytest
from conftest import BIN, ROOT, dbt_build, query, run_cli
from support.bq_emulator import running_emulator
from support.rows import first_difference, in_stable_order

from goodput_loader.simulate import RunSpec, fleet, log_entries, write_run

PROJECT = "test-project"
RAW = "goodput_raw"
AS_OF = dt.datetime(2026, 11, 21, tzinfo=dt.timezone.utc)
ROLLING_VARS = {"rolling_grid_seconds": 300, "rolling_windows_seconds": [3600, 86400]}
MARTS = ["fct_goodput_cumulative", "fct_badput_breakdown", "fct_steps", "fct_disruptions", "dim_runs",
         "fct_goodput_rolling", "fct_badput_rolling", "fct_goodput_rolling_latest", "fct_badput_rolling_latest",
         "fct_goodput_daily", "fct_badput_daily", "fct_goodput_fleet_daily", "fct_badput_fleet_daily"]


@pytest.fixture(scope="module")
def emulator(tmp_path_factory) -> Iterator[str]:
    with running_emulator(tmp_path_factory.mktemp("bqemu") / "emulator.log") as endpoint:
        yield endpoint


@pytest.fixture(scope="module")
def client(emulator):
    from goodput_loader.warehouses.bigquery import make_client

    bq = make_client(PROJECT, emulator)
    bq.create_dataset(RAW, exists_ok=True)
    return bq


@pytest.fixture(scope="module")
def runs_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("runs")
    start = dt.datetime(2026, 11, 20, tzinfo=dt.timezone.utc)
    # sim-000 is elastic: the elastic buckets and slice efficiencies go through BigQuery too
    for spec in fleet(3, seed=9, steps=700, restarts=1, running=1, start=start, elastic=1,
                      base=RunSpec(name="", start=0.0, step_seconds=3.0, duplicate_rate=0.01)):
        write_run(spec, out, "proj", compress=True)
    # a run name with '/', which a log ID allows: logName spells it %2F, the payloads' job_name does not
    write_run(RunSpec(name="team/llama", start=start.timestamp(), steps=150, step_seconds=3.0, seed=4), out, "proj",
              compress=True)
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
    assert sum(r["entries_landed"] for r in state) == landed and len(state) == len(list(runs_dir.glob("*.ndjson*")))
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


def bigquery_profile(tmp_path: Path, endpoint: str, dataset: str = "goodput") -> Path:
    (tmp_path / "profiles.yml").write_text(f"""
goodput_warehouse:
  target: bigquery
  outputs:
    bigquery:
      type: bigquery
      method: oauth-secrets
      token: unused-by-the-emulator
      project: {PROJECT}
      dataset: {dataset}
      api_endpoint: {endpoint}
      location: US
      threads: 2
      job_retries: 0
""")
    return tmp_path


def dbt_bigquery(profiles: Path, target_path: Path, *args: str, **extra_vars: Any) -> subprocess.CompletedProcess:
    variables = {"goodput_as_of": AS_OF.strftime("%Y-%m-%dT%H:%M:%SZ"), "goodput_raw_schema": RAW, **ROLLING_VARS,
                 **extra_vars}
    result = subprocess.run(
        [str(BIN / "dbt"), *args, "--profiles-dir", str(profiles), "--project-dir", str(ROOT), "--target",
         "bigquery", "--target-path", str(target_path), "--vars", json.dumps(variables)],
        cwd=ROOT, capture_output=True, text=True, timeout=1800, env=dict(os.environ))
    assert result.returncode == 0, f"dbt {args} on BigQuery failed:\n{result.stdout[-8000:]}\n{result.stderr[-3000:]}"
    return result


def normalise(row: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, value in row.items():
        # bookkeeping that differs between two warehouses of the same entries built different ways; run_key
        # is DuckDB's alone (macros/cross_db/run_key.sql)
        if key in ("computed_at", "first_loaded_at", "last_loaded_at", "final_segment_no", "run_key"):
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
    # BigQuery: the same files through the loader (a no-op when the test above landed them)
    run_cli("load", "--bigquery", f"{PROJECT}.{RAW}", "--bigquery-endpoint", emulator,
            *sorted(map(str, runs_dir.glob("goodput_*"))))
    profiles = bigquery_profile(tmp_path, emulator)
    target = tmp_path / "target"
    # unit tests run on DuckDB only: the emulator reads their fractional-second timestamp literals as null
    dbt_bigquery(profiles, target, "build", "--exclude", "test_type:unit")
    dbt_bigquery(profiles, target, "build", "--exclude", "test_type:unit")  # incremental: the unended run again
    assert_same_as_duckdb(client, "goodput", duck, MARTS)
    assert len(keyed(bq_rows(client, "select * from goodput.fct_goodput_rolling"))) > 100

    # every model compiled for BigQuery parses as BigQuery SQL
    import sqlglot

    compiled = sorted((target / "compiled" / "goodput_warehouse" / "models").rglob("*.sql"))
    assert len([p for p in compiled if "/marts/" in str(p) or "/intermediate/" in str(p)]) >= 25
    for path in compiled:
        sqlglot.parse(path.read_text(), read="bigquery")

    # report --html reads the BigQuery marts as it reads DuckDB's: the same page data
    pages = []
    for source in (["--bigquery", f"{PROJECT}.goodput", "--bigquery-endpoint", emulator], []):
        page = tmp_path / f"report-{len(pages)}.html"
        run_cli("report", "--duckdb", duck, "--html", page, *source)
        found = re.search(r'<script id="goodput-data" type="application/json">(.*?)</script>', page.read_text(), re.S)
        pages.append(json.loads(found.group(1)))
    assert pages[0]["sections"] >= 3
    assert_same_structure(pages[0], pages[1], "report --html")
    # so do the text report and the TensorBoard export
    reports = [json.loads(run_cli("report", "--duckdb", duck, "--json", *source).stdout, parse_float=float)
               for source in (["--bigquery", f"{PROJECT}.goodput", "--bigquery-endpoint", emulator], [])]
    assert len(reports[0]["runs"]) >= 3
    assert_same_structure(as_numbers(reports[0]), as_numbers(reports[1]), "report --json")
    from test_tensorboard import read_events

    exported = []
    for source in (["--bigquery", f"{PROJECT}.goodput", "--bigquery-endpoint", emulator], []):
        logdir = tmp_path / f"tb-{len(exported)}"
        run_cli("tensorboard", "--duckdb", duck, "--logdir", logdir, *source)
        # (the run named team/llama writes into team/llama/goodput)
        exported.append({str(path.parent.relative_to(logdir)): read_events(path)
                         for path in sorted(logdir.rglob("goodput")) if path.is_dir()})
    assert "team/llama" in exported[0] and all(events["goodput/goodput"] for events in exported[0].values())
    assert_same_structure(exported[0], exported[1], "tensorboard")

    # push reads the BigQuery marts and writes what it writes from DuckDB; its state lives in BigQuery.
    # Live windows both ways: additive (the rolling marts) and the library's (a window build in a scratch
    # dataset through the profile above, dropped afterwards; on DuckDB a scratch file)
    from goodput_loader.push.run import PushRequest, run_push
    from goodput_loader.push.series import Target
    from support.fake_monitoring import FakeMonitoring

    now = AS_OF + dt.timedelta(hours=1)
    target = Target("proj", "us-central2", "0", "v5p-128")
    bigquery = {"bigquery_dataset": f"{PROJECT}.goodput", "bigquery_endpoint": emulator,
                "profiles_dir": str(profiles), "variables": {"goodput_raw_schema": RAW}}
    datasets = sorted(d.dataset_id for d in client.list_datasets())
    tables = sorted(t.table_id for t in client.list_tables("goodput"))
    state = bq_rows(client, "select * from goodput.goodput_build_watermark")
    by_semantics = {}
    for semantics in ["additive", "library"]:
        pushed = []
        for source in [bigquery, {}]:
            with FakeMonitoring(now=now) as server:
                summary = run_push(PushRequest(duckdb_path=str(duck), target=target, endpoint=server.endpoint,
                                               now=now, interval_semantics=semantics, **source))
                assert summary["failed"] == [] and summary["points_written"] > 100, summary
                assert summary["live_window_semantics"] == semantics
                pushed.append({k: [v for _, v in points] for k, points in server.points().items()})
                # a second push reads from each run's pushed-through time (the state's {read_from} relation)
                # and builds no window pushed through its end: it sends nothing, and counts what it skipped
                again = run_push(PushRequest(duckdb_path=str(duck), target=target, endpoint=server.endpoint,
                                             now=now, interval_semantics=semantics, **source))
                assert again["points_planned"] == 0 and again["failed"] == [], again
                skipped_live = again["live_windows_already_pushed"]
                assert (skipped_live > 0) == (semantics == "library"), again
                # (points dropped as closer than 5 s to a later one count as behind the pushed ones); the
                # points of a live window not built are not known, so not counted
                behind = summary["points_written"] + summary["dropped_too_close"]
                assert (again["already_pushed"] == behind) == (semantics == "additive"), again
                assert again["already_pushed"] <= behind, again
            # the next push starts afresh
            if source:
                client.query("drop table goodput.push_state").result()
            else:
                with duckdb.connect(str(duck)) as con:
                    con.execute("drop table goodput_push.push_state")
        assert pushed[0].keys() == pushed[1].keys(), semantics
        for key, values in pushed[1].items():
            assert pushed[0][key] == pytest.approx(values, abs=1e-9), (semantics, key)
        by_semantics[semantics] = {key: values for key, values in pushed[0].items() if "interval" in str(key)}
    # the library's live windows differ from the located ones (the running run's last step is not OTHER there)
    assert by_semantics["library"] and by_semantics["library"].keys() <= by_semantics["additive"].keys()
    assert any(values != pytest.approx(by_semantics["additive"][key]) for key, values in by_semantics["library"].items())
    # the window builds left no dataset behind, and nothing in the marts' dataset changed
    assert sorted(d.dataset_id for d in client.list_datasets()) == datasets
    assert sorted(t.table_id for t in client.list_tables("goodput")) == tables
    assert bq_rows(client, "select * from goodput.goodput_build_watermark") == state
    summary = run_push(PushRequest(duckdb_path="", target=target, dry_run=True, now=now, **bigquery))
    again = run_push(PushRequest(duckdb_path="", target=target, dry_run=True, now=now, **bigquery))
    # (points once dropped as closer than 5 s to the next now count as behind the pushed ones)
    assert summary["points_planned"] > 100 and again["points_planned"] == summary["points_planned"]


def assert_same_structure(ours: Any, theirs: Any, where: str) -> None:
    """Equal JSON values, floats within 1e-9 relative."""
    if isinstance(theirs, dict):
        assert isinstance(ours, dict) and ours.keys() == theirs.keys(), where
        for key in theirs:
            assert_same_structure(ours[key], theirs[key], f"{where}.{key}")
    elif isinstance(theirs, list):
        assert isinstance(ours, list) and len(ours) == len(theirs), (where, len(ours), len(theirs))
        for i, (a, b) in enumerate(zip(ours, theirs)):
            assert_same_structure(a, b, f"{where}[{i}]")
    elif isinstance(theirs, float) or isinstance(ours, float):
        assert ours == pytest.approx(theirs, rel=1e-9, abs=1e-9), (where, ours, theirs)
    else:
        assert ours == theirs, (where, ours, theirs)


def as_numbers(value: Any) -> Any:
    """A JSON document with the strings that are numbers as floats (`report --json` prints BigQuery's NUMERIC
    as a string, DuckDB's DECIMAL as well, and times with either warehouse's offset form)."""
    if isinstance(value, dict):
        return {key: as_numbers(item) for key, item in value.items()
                if key not in ("computed_at", "first_loaded_at", "last_loaded_at", "final_segment_no")}
    if isinstance(value, list):
        return [as_numbers(item) for item in value]
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            try:
                return dt.datetime.fromisoformat(value).astimezone(dt.timezone.utc).isoformat()
            except ValueError:
                return value
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def comparable(rows: list[dict[str, Any]]) -> list[tuple]:
    """Rows as tuples of their values by column name, in a stable order (floats rounded for sorting only):
    intermediate tables are keyed by float offsets too, so rows are matched by sorting, not by a key."""
    import decimal

    out = []
    for row in map(normalise, rows):
        out.append(tuple(float(v) if isinstance(v, decimal.Decimal) else v for _, v in sorted(row.items())))
    return in_stable_order(out)


def assert_same_as_duckdb(client, dataset: str, duck: Path, tables: list[str]) -> None:
    """Every row of every table equal on BigQuery and DuckDB (floats within 1e-9 relative)."""
    problems = []
    for table in tables:
        ours = comparable(bq_rows(client, f"select * from {dataset}.{table}"))
        names = [c[0] for c in query(duck, f"describe main.{table}")]
        theirs = comparable([dict(zip(names, r)) for r in query(duck, f"select * from main.{table}")])
        difference = first_difference(ours, theirs)
        if difference:
            problems.append(f"{table} on BigQuery against DuckDB: {difference}")
    assert not problems, "\n".join(problems[:30])


def test_an_incremental_build_on_bigquery_equals_a_full_build(client, emulator, runs_dir, tmp_path):
    """Half of every run lands and is built; then the rest lands (new steps, restarts, job ends) and
    the incremental build (delete of the rebuilt runs, then merge) must equal DuckDB's full build."""
    raw, dataset = "goodput_raw_incremental", "goodput_incremental"
    client.create_dataset(raw, exists_ok=True)
    files = sorted(map(str, runs_dir.glob("goodput_*.ndjson.gz")))
    entries = read_entries(runs_dir)
    cut = sorted(e["timestamp"] for e in entries)[len(entries) // 2]
    first = tmp_path / "first-half.ndjson"
    first.write_text("".join(json.dumps(e) + "\n" for e in entries if e["timestamp"] <= cut))
    endpoint = ["--bigquery", f"{PROJECT}.{raw}", "--bigquery-endpoint", emulator]
    run_cli("load", *endpoint, first)
    profiles = bigquery_profile(tmp_path, emulator, dataset=dataset)
    target = tmp_path / "target"
    dbt_bigquery(profiles, target, "build", "--exclude", "test_type:unit", goodput_raw_schema=raw)
    run_cli("load", *endpoint, *files)  # the first half again (deduplicated) and the rest
    dbt_bigquery(profiles, target, "build", "--exclude", "test_type:unit", goodput_raw_schema=raw)
    rebuilt = bq_rows(client, f"select run_id, has_new_entries, appends_after_seq "
                              f"from {dataset}.int_goodput__runs_to_rebuild")
    assert {r["run_id"] for r in rebuilt if r["has_new_entries"]} == {
        "proj/" + e["logName"].rsplit("/goodput_", 1)[1] for e in entries if e["timestamp"] > cut}
    # the second halves follow the first: the per-entry models appended them
    assert any(r["appends_after_seq"] is not None for r in rebuilt)

    duck = tmp_path / "duck.duckdb"
    run_cli("load", "--duckdb", duck, *files)
    dbt_build(duck, AS_OF, *[a for k, v in ROLLING_VARS.items() for a in ("--var", f"{k}={json.dumps(v)}")])
    intermediate = [name for (name,) in query(duck, "select table_name from information_schema.tables where "
                                                     "table_name like 'int_goodput__%' and table_type = 'BASE TABLE' "
                                                     "and table_name != 'int_goodput__runs_to_rebuild'")]
    assert len(intermediate) >= 15
    assert_same_as_duckdb(client, dataset, duck, MARTS + sorted(intermediate))


def read_entries(runs_dir: Path) -> list[dict[str, Any]]:
    import gzip

    return [json.loads(line) for path in sorted(runs_dir.glob("goodput_*.ndjson.gz")) for line in gzip.open(path)]


def sink_field(key: str) -> str:
    """A classic log sink's column name for a jsonPayload key: lower-cased, non-alphanumerics to _."""
    return re.sub(r"[^a-z0-9_]", "_", key.lower())


def create_log_sink_tables(client, dataset: str, entries: list[dict[str, Any]]) -> int:
    """Tables shaped exactly like a classic Cloud Logging -> BigQuery sink's: one per log and day
    (goodput_<run>_YYYYMMDD), LogEntry columns in camelCase, jsonPayload a RECORD whose numbers
    are FLOAT64. Duplicated deliveries stay in, as a sink keeps them."""
    from google.cloud.bigquery import LoadJobConfig, SchemaField as F

    client.create_dataset(dataset, exists_ok=True)
    kinds: dict[str, str] = {}
    for e in entries:
        for key, value in e["jsonPayload"].items():
            if value is None:
                continue
            kind = "BOOL" if isinstance(value, bool) else "STRING" if isinstance(value, str) else "FLOAT64"
            kinds[sink_field(key)] = "STRING" if kinds.get(sink_field(key), kind) != kind else kind
    for e in entries:  # keys that are only ever null
        for key in e["jsonPayload"]:
            kinds.setdefault(sink_field(key), "STRING")
    schema = [F("logName", "STRING"), F("resource", "RECORD", fields=[
                  F("type", "STRING"), F("labels", "RECORD", fields=[F("project_id", "STRING")])]),
              F("timestamp", "TIMESTAMP"), F("receiveTimestamp", "TIMESTAMP"), F("severity", "STRING"),
              F("insertId", "STRING"), F("jsonPayload", "RECORD", fields=[F(k, v) for k, v in sorted(kinds.items())])]
    tables: dict[str, list[dict[str, Any]]] = {}
    for e in entries:
        payload = {sink_field(k): float(v) if kinds[sink_field(k)] == "FLOAT64" and v is not None else v
                   for k, v in e["jsonPayload"].items()}
        log_id = e["logName"].rsplit("/logs/", 1)[1]
        table = f"{sink_field(log_id)}_{e['timestamp'][:10].replace('-', '')}"
        tables.setdefault(table, []).append({
            "logName": e["logName"], "resource": e["resource"], "timestamp": e["timestamp"],
            "receiveTimestamp": e.get("receiveTimestamp"), "severity": e["severity"], "insertId": e["insertId"],
            "jsonPayload": payload})
    for table, rows in tables.items():
        client.load_table_from_json(rows, f"{PROJECT}.{dataset}.{table}",
                                    job_config=LoadJobConfig(schema=schema)).result()
    return len(tables)


def create_log_analytics_view(client, dataset: str, entries: list[dict[str, Any]]) -> None:
    """_AllLogs as a Log Analytics linked dataset shows it: snake_case columns, json_payload JSON,
    other logs of the bucket mixed in."""
    from google.cloud.bigquery import LoadJobConfig, SchemaField as F

    client.create_dataset(dataset, exists_ok=True)
    schema = [F("timestamp", "TIMESTAMP"), F("receive_timestamp", "TIMESTAMP"), F("log_name", "STRING"),
              F("insert_id", "STRING"), F("severity", "STRING"), F("json_payload", "JSON"),
              F("text_payload", "STRING")]
    rows = [{"timestamp": e["timestamp"], "receive_timestamp": e.get("receiveTimestamp"), "log_name": e["logName"],
             "insert_id": e["insertId"], "severity": e["severity"], "json_payload": e["jsonPayload"],
             "text_payload": None} for e in entries]
    rows.append({"timestamp": entries[0]["timestamp"], "receive_timestamp": None, "severity": "INFO",
                 "log_name": "projects/proj/logs/cloudaudit.googleapis.com%2Factivity", "insert_id": "other",
                 "json_payload": None, "text_payload": "not ours"})
    client.load_table_from_json(rows, f"{PROJECT}.{dataset}._AllLogs",
                                job_config=LoadJobConfig(schema=schema)).result()


@pytest.mark.parametrize("kind", ["log_sink", "log_analytics"])
def test_staging_reads_existing_log_sinks(client, emulator, runs_dir, tmp_path, kind):
    """The same runs read from sink-shaped tables give the loader path's cumulative marts."""
    entries = read_entries(runs_dir)
    run = "sim-000"
    if kind == "log_sink":
        assert create_log_sink_tables(client, "sink_logs", entries) >= 3
        # one run's day table: the emulator cannot run the default wildcard (goodput_*) inside a
        # view, so that path is compiled and parse-checked below instead of run
        extra = {"goodput_source": kind, "goodput_log_sink_dataset": "sink_logs",
                 "goodput_log_sink_table": f"goodput_{sink_field(run)}_20261120"}
        entries = [e for e in entries if e["logName"].endswith(f"goodput_{run}")]
    else:
        create_log_analytics_view(client, "analytics_logs", entries)
        extra = {"goodput_source": kind, "goodput_log_analytics_dataset": "analytics_logs"}
    duck = tmp_path / "duck.duckdb"
    files = sorted(map(str, runs_dir.glob(f"goodput_{run}*" if kind == "log_sink" else "goodput_*")))
    run_cli("load", "--duckdb", duck, *files)
    selection = ["--select", "+fct_badput_breakdown", "+fct_goodput_cumulative", "--indirect-selection", "cautious"]
    dbt_build(duck, AS_OF, "--", *selection)
    profiles = bigquery_profile(tmp_path, emulator, dataset=f"goodput_{kind}")
    dbt_bigquery(profiles, tmp_path / "target", "build", *selection, "--exclude", "test_type:unit", **extra)
    for mart in ["fct_goodput_cumulative", "fct_badput_breakdown"]:
        ours = keyed(bq_rows(client, f"select * from goodput_{kind}.{mart}"))
        names = [c[0] for c in query(duck, f"describe main.{mart}")]
        theirs = keyed([dict(zip(names, r)) for r in query(duck, f"select * from main.{mart}")])
        assert ours.keys() == theirs.keys(), mart
        for key, row in theirs.items():
            for column, value in row.items():
                if isinstance(value, float):
                    assert math.isclose(value, ours[key][column], rel_tol=1e-9, abs_tol=1e-6), (mart, key, column)
    if kind == "log_sink":
        import sqlglot

        dbt_bigquery(profiles, tmp_path / "wildcard", "compile", "--select", "stg_goodput__events",
                     goodput_source=kind, goodput_log_sink_dataset="sink_logs")
        compiled = next((tmp_path / "wildcard").rglob("stg_goodput__events.sql")).read_text()
        assert "`sink_logs`.`goodput_*`" in compiled
        sqlglot.parse(compiled, read="bigquery")


def test_api_errors_become_actionable_messages():
    """Permission and quota errors (which the emulator never raises) name what to do."""
    from google.api_core import exceptions as gexc

    from goodput_loader.warehouses.bigquery import explain as _explain

    denied = _explain(gexc.Forbidden("Access Denied: Dataset p:raw"), "p.raw")
    assert "roles/bigquery.dataEditor" in denied and "roles/bigquery.jobUser" in denied
    quota = _explain(gexc.Forbidden("Quota exceeded: Your table exceeded quota for imports or query appends"), "p.raw")
    assert "quota" in quota.lower() and "--batch-size" in quota
    assert "--batch-size" in _explain(gexc.TooManyRequests("rateLimitExceeded"), "p.raw")
    assert "bq mk --dataset p:raw" in _explain(gexc.NotFound("Not found: Dataset p:raw"), "p.raw")


def test_a_half_written_last_line_lands_once_complete_and_its_rejection_is_withdrawn(client, emulator, tmp_path):
    """The sink deletes a withdrawn rejection in the batch's own transaction."""
    dataset = "goodput_raw_resume"
    client.create_dataset(dataset, exists_ok=True)
    entries = [json.dumps(e) + "\n" for e in log_entries(RunSpec(name="half", start=1_795_000_000.0, steps=10), "proj")]
    path = tmp_path / "half.ndjson"
    path.write_text("".join(entries[:8]) + entries[8][:40])
    args = ["load", "--bigquery", f"{PROJECT}.{dataset}", "--bigquery-endpoint", emulator, str(path)]
    run_cli(*args)
    rejected = bq_rows(client, f"select location, reason from {dataset}.rejected_entries")
    assert [r["location"] for r in rejected] == [f"{path}:9"]
    path.write_text("".join(entries))
    run_cli(*args)
    assert bq_rows(client, f"select count(*) as n from {dataset}.rejected_entries")[0]["n"] == 0
    assert bq_rows(client, f"select count(*) as n from {dataset}.log_entries")[0]["n"] == len(entries)


def test_user_text_is_the_same_string_literal_on_both_warehouses(client, emulator, tmp_path):
    """goodput_string_literal escapes the way each warehouse reads: BigQuery with backslashes."""
    text = "we\"i'rd\\run '' \\' end\nnext"
    sql = "select {{ goodput_string_literal(var('text')) }} as v"
    profiles = bigquery_profile(tmp_path, emulator)
    shown = dbt_bigquery(profiles, tmp_path / "target", "compile", "--inline", sql, "--quiet", text=text)
    compiled = shown.stdout.strip()
    assert compiled.startswith("select '") and "\\'" in compiled
    assert bq_rows(client, compiled) == [{"v": text}]
    duck = duckdb_compile(sql, text)
    assert duckdb.sql(duck).fetchall() == [(text,)]


def duckdb_compile(sql: str, text: str) -> str:
    result = subprocess.run(
        [str(BIN / "dbt"), "compile", "--inline", sql, "--quiet", "--project-dir", str(ROOT), "--profiles-dir",
         str(ROOT), "--target", "duckdb", "--vars", json.dumps({"text": text})],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
        env={**os.environ, "GOODPUT_DUCKDB": str(ROOT / "target" / "compile-only.duckdb")})
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout.strip()
