"""Runs are (project, run): the same name in two projects is two runs, each with its own numbers;
a name reused for a new experiment within one project is flagged.

Every model is keyed by run_id = <project_id>/<run_name>; the marts also carry project_id and
run_name (the library's name, and the push's workload_id label). Commands take a name or PROJECT/RUN.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from conftest import cli_subprocess, dbt_build, query, run_cli
from support.rows import first_difference

from goodput_loader.push.run import PushRequest, run_push
from goodput_loader.push.series import Target
from goodput_loader.simulate import RunSpec, log_entries

AS_OF = dt.datetime(2026, 12, 1, tzinfo=dt.timezone.utc)
START = 1_795_000_000.0


def land(directory: Path, entries: list[dict]) -> Path:
    directory.mkdir(exist_ok=True)
    path = directory / "entries.ndjson"
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    db = directory / "w.duckdb"
    run_cli("load", "--duckdb", db, path)
    return db


def cumulative(db: Path) -> dict[str, tuple]:
    rows = query(db, "select run_name, is_valid, invalid_reason, goodput_pct, is_name_reused from fct_goodput_cumulative")
    return {row[0]: row[1:] for row in rows}


MART_KEYS = {
    "fct_goodput_cumulative": "run_id",
    "fct_badput_breakdown": "run_id, badput_type, custom_badput_event_type",
    "fct_steps": "run_id, event_seq",
    "fct_disruptions": "run_id, disruption_no",
    "fct_goodput_rolling": "run_id, window_seconds, window_end_epoch",
    "fct_badput_rolling": "run_id, window_seconds, window_end_epoch, gcm_badput_source",
    "fct_goodput_rolling_latest": "run_id, window_seconds",
    "fct_badput_rolling_latest": "run_id, window_seconds, badput_type, custom_badput_event_type",
}


def mart_rows(db: Path, mart: str, project: str) -> list[tuple]:
    return query(db, f"select * exclude (computed_at) from {mart} where project_id = ? order by {MART_KEYS[mart]}"
                 if "rolling" in mart and "latest" not in mart else
                 f"select * from {mart} where project_id = ? order by {MART_KEYS[mart]}", [project])


def test_the_same_run_name_in_two_projects_is_two_runs(tmp_path):
    a = list(log_entries(RunSpec(name="shared", start=START, steps=200, restarts=1), "proj-a"))
    b = list(log_entries(RunSpec(name="shared", start=START + 600, steps=150, seed=1, restarts=1), "proj-b"))
    other = list(log_entries(RunSpec(name="alone", start=START, steps=100), "proj-a"))
    db = land(tmp_path / "both", a + b + other)
    dbt_build(db, AS_OF)
    rows = query(db, "select run_id, project_id, run_name, is_valid, goodput_pct from fct_goodput_cumulative "
                     "order by run_id")
    assert [r[:4] for r in rows] == [("proj-a/alone", "proj-a", "alone", True),
                                      ("proj-a/shared", "proj-a", "shared", True),
                                      ("proj-b/shared", "proj-b", "shared", True)]
    assert rows[1][4] != rows[2][4]
    assert query(db, "select run_id, status from dim_runs order by run_id") == [
        ("proj-a/alone", "finished"), ("proj-a/shared", "finished"), ("proj-b/shared", "finished")]

    # Each run's marts are those of a warehouse holding only its project's entries (floats within 1e-9).
    alone_a = land(tmp_path / "a", a + other)
    alone_b = land(tmp_path / "b", b)
    dbt_build(alone_a, AS_OF)
    dbt_build(alone_b, AS_OF)
    for mart in MART_KEYS:
        for project, single in (("proj-a", alone_a), ("proj-b", alone_b)):
            expected = mart_rows(single, mart, project)
            assert expected, mart
            difference = first_difference(mart_rows(db, mart, project), expected)
            assert difference is None, (mart, project, difference)

    # report: a name matches its run in every project, labelled by run_id where shared
    report = json.loads(run_cli("report", "--duckdb", db, "--json", "--run", "shared").stdout)
    assert [(r["run_id"], r["label"]) for r in report["runs"]] == [("proj-a/shared", "proj-a/shared"),
                                                                    ("proj-b/shared", "proj-b/shared")]
    report = json.loads(run_cli("report", "--duckdb", db, "--json", "--run", "proj-b/shared", "--run", "alone").stdout)
    assert [(r["run_id"], r["label"]) for r in report["runs"]] == [("proj-a/alone", "alone"),
                                                                    ("proj-b/shared", "shared")]
    assert "no such run in the marts: proj-c/shared" in run_cli(
        "report", "--duckdb", db, "--run", "proj-c/shared", expect=1).stderr

    # interval needs one run: a shared name is refused with the choices, PROJECT/RUN is answered
    window = ["--start", "2026-11-18T11:30:00Z", "--end", "2026-11-18T12:30:00Z", "--json"]
    refused = cli_subprocess("interval", "--duckdb", str(db), "--run", "shared", *window, expect=1)
    assert "proj-a/shared, proj-b/shared" in refused.stderr and "Traceback" not in refused.stderr
    answered = cli_subprocess("interval", "--duckdb", str(db), "--run", "proj-b/shared", *window)
    assert json.loads(answered.stdout)["run_id"] == "proj-b/shared"

    # push labels series by run name (the library's workload_id): two runs of one name would
    # write the same series, so they are left out with the reason; one chosen by run_id is pushed.
    now = dt.datetime.fromtimestamp(START + 3 * 3600, dt.timezone.utc)
    dry = run_push(PushRequest(duckdb_path=str(db), target=Target("proj-a", "l"), dry_run=True, now=now))
    assert dry["not_pushed_shared_names"] == {"shared": ["proj-a/shared", "proj-b/shared"]}
    assert workloads(dry) == {"alone"}
    dry = run_push(PushRequest(duckdb_path=str(db), target=Target("proj-b", "l"), runs=["proj-b/shared"],
                               dry_run=True, now=now))
    assert dry["not_pushed_shared_names"] == {} and workloads(dry) == {"shared"}
    single = run_push(PushRequest(duckdb_path=str(alone_b), target=Target("proj-b", "l"), dry_run=True, now=now))
    # the same requests; values as equal as the marts above are (floats within 1e-9: DuckDB's threads set
    # the order of a float sum, so two warehouses can differ in its last bit)
    assert without_values(dry["requests"]) == without_values(single["requests"])
    assert values(dry["requests"]) == pytest.approx(values(single["requests"]), rel=1e-9, abs=1e-9)
    cli = run_cli("push", "--duckdb", db, "--project", "proj-a", "--location", "l", "--dry-run", expect=1)
    assert "not pushed: run name 'shared' is used in several projects" in cli.stderr


def values(requests: list[dict]) -> list[float]:
    """Every point's value, in request order."""
    return [float(next(iter(p["value"].values()))) for r in requests for ts in r["timeSeries"] for p in ts["points"]]


def without_values(requests: list[dict]) -> list[dict]:
    """The requests with every point's value left out (series, labels, times and value types kept)."""
    return [{**r, "timeSeries": [{**ts, "points": [{**p, "value": list(p["value"])} for p in ts["points"]]}
                                 for ts in r["timeSeries"]]} for r in requests]


def workloads(summary: dict) -> set[str]:
    return {ts["resource"]["labels"]["workload_id"] for r in summary["requests"] for ts in r["timeSeries"]}


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


def test_a_run_id_names_that_run_alone_even_when_another_run_has_it_as_its_name():
    from goodput_loader.runs import labels, select_runs

    runs = [{"run_id": "p1/x/y", "run_name": "x/y"}, {"run_id": "q2/p1/x/y", "run_name": "p1/x/y"},
            {"run_id": "q3/x/y", "run_name": "x/y"}]
    assert [r["run_id"] for r in select_runs(runs, ["p1/x/y"])] == ["p1/x/y"]
    assert [r["run_id"] for r in select_runs(runs, ["x/y"])] == ["p1/x/y", "q3/x/y"]
    assert [r["run_id"] for r in select_runs(runs, ["q2/p1/x/y"])] == ["q2/p1/x/y"]
    # a label is never another run's run_id
    assert labels(runs) == {"p1/x/y": "p1/x/y", "q2/p1/x/y": "q2/p1/x/y", "q3/x/y": "q3/x/y"}
    assert labels(runs[1:2]) == {"q2/p1/x/y": "p1/x/y"}


def test_a_project_that_would_move_a_bare_payload_run_into_another_project_is_refused(tmp_path):
    path = tmp_path / "bare.jsonl"
    path.write_text(json.dumps({"job_name": "r", "job_start_time": 1_795_000_000.0}) + "\n")
    for project in ("p1/other", " "):
        refused = run_cli("load", "--duckdb", tmp_path / "w.duckdb", "--run", "r", "--project", project, path,
                          expect=2)
        assert "is not a GCP project id" in refused.stderr
    assert not (tmp_path / "w.duckdb").exists()
