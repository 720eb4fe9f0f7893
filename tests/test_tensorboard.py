"""`goodput-loader tensorboard` against what the library's monitor writes to TensorBoard.

Simulated runs (one elastic, one still running with a restart, one the library raises on) are built; the export's event
files are read back with TensorBoard's own reader and compared with event files the library's monitor
functions (_upload_goodput_metrics_to_tensorboard, _write_step_deviation_to_tensorboard) write from its
real calculator at the same instant, and with the marts read directly: the same tags, steps and values.
Then the running run's next hours
land: a second export appends its new Goodput point and the deviations of the steps timed since (a step
the restart repeats included), and an export with nothing new writes nothing.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from pathlib import Path
from typing import Any

from conftest import cli_subprocess, dbt_build, land_runs, run_cli
from ml_goodput_measurement.src import goodput as lib_goodput
from ml_goodput_measurement.src import monitoring
from ml_goodput_measurement.src.goodput_elastic import ElasticGoodputCalculator
from support.oracle import ListCloudLogger, frozen_library_clock, payloads_in_processing_order
from support.scenarios import T0, envelope, record

from goodput_loader.simulate import RunSpec, fleet, simulate_entries

START = dt.datetime(2026, 11, 20, tzinfo=dt.timezone.utc)


def read_events(directory: Path) -> dict[str, list[tuple[int, float]]]:
    """Every scalar of an event directory, as TensorBoard reads it: tag -> sorted (step, value)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    accumulator = EventAccumulator(str(directory), size_guidance={"scalars": 0})
    accumulator.Reload()
    return {tag: sorted((event.step, event.value) for event in accumulator.Scalars(tag))
            for tag in accumulator.Tags()["scalars"]}


def library_events(name: str, payloads: list[dict[str, Any]], as_of: dt.datetime, elastic: bool,
                   directory: Path) -> dict[str, list[tuple[int, float]]]:
    """What one poll of the library's goodput and step-deviation workers writes to TensorBoard."""
    import tensorboardX

    calculator = (ElasticGoodputCalculator if elastic else lib_goodput.GoodputCalculator)(
        job_name=name, logger_name=f"goodput_{name}", cloud_logger=ListCloudLogger(name, payloads),
        cache_dir=str(directory / "cache"))
    writer = tensorboardX.SummaryWriter(str(directory / "events"))
    with frozen_library_clock(as_of):
        goodput, breakdown, last_step = calculator.get_job_goodput(include_badput_breakdown=True)
        monitoring._upload_goodput_metrics_to_tensorboard(writer, goodput, breakdown, last_step, True)
        monitoring._write_step_deviation_to_tensorboard(writer, calculator.get_step_deviation(None))
    writer.close()
    return read_events(directory / "events")


def assert_same_events(got: dict[str, list[tuple[int, float]]], want: dict[str, list[tuple[int, float]]],
                       what: str) -> None:
    assert set(got) == set(want), f"{what}: tags {sorted(set(got) ^ set(want))}"
    for tag, points in want.items():
        assert [step for step, _ in got[tag]] == [step for step, _ in points], f"{what} {tag} steps"
        for (step, value), (_, expected) in zip(got[tag], points):
            # both are float32 in the event file
            assert math.isclose(value, expected, rel_tol=1e-6, abs_tol=1e-5), f"{what} {tag}@{step}: {value} {expected}"


def marts_events(db: Path, name: str) -> dict[str, list[tuple[int, float]]]:
    """What the export should have written for a run, read from the marts directly: its Goodput and
    breakdown at its max productive step, and every timed step's deviation."""
    import duckdb

    from goodput_loader.tensorboard import badput_tag

    with duckdb.connect(str(db), read_only=True) as con:
        step, goodput = con.execute("select max_productive_step, goodput_pct from fct_goodput_cumulative "
                                    "where run_name = ?", [name]).fetchone()
        events = {"goodput/goodput": [(step, goodput)]}
        for badput_type, custom, pct in con.execute(
                "select badput_type, custom_badput_event_type, badput_pct from fct_badput_breakdown "
                "where run_name = ?", [name]).fetchall():
            tag, _ = badput_tag({"badput_type": badput_type, "custom_badput_event_type": custom})
            events[tag] = [(step, pct or 0.0)]
        events["step_deviation"] = sorted(con.execute(
            "select step_count, deviation_seconds from fct_steps where run_name = ? and deviation_seconds is not null",
            [name]).fetchall())
    return events


def test_the_export_writes_what_the_monitor_writes_and_then_only_what_is_new(tmp_path: Path) -> None:
    specs = fleet(3, seed=3, steps=1500, restarts=1, running=1, start=START, elastic=1,
                  base=RunSpec(name="", start=0.0, step_seconds=2.0, duplicate_rate=0.0))
    payloads = {spec.name: [e.payload for e in simulate_entries(spec)] for spec in specs}
    running = specs[-1].name
    held_back = payloads[running][len(payloads[running]) * 7 // 10:]
    payloads[running] = payloads[running][:len(payloads[running]) * 7 // 10]
    # the library raises on a run restarted after its job end: its monitor writes nothing for it
    invalid = ([("job_start", T0)] + [("step", T0 + 10 + 3 * i, i) for i in range(6)] + [("job_end", T0 + 30)]
               + [("job_start", T0 + 100)] + [("step", T0 + 120 + 3 * i, i) for i in range(3, 30)])
    payloads["invalid"] = record("invalid", invalid)
    db = land_runs(tmp_path, {name: envelope(name, p, [False] * len(p)) for name, p in payloads.items()})
    first = START + dt.timedelta(hours=3)
    dbt_build(db, first)
    logdir = tmp_path / "tb"
    summary = json.loads(cli_subprocess("tensorboard", "--duckdb", db, "--logdir", logdir, "--json").stdout)
    assert {run["run_id"].split("/")[1] for run in summary} == {spec.name for spec in specs}
    assert not (logdir / "invalid").exists()
    elastic = {spec.name for spec in specs if spec.elastic_slices}
    for name in [spec.name for spec in specs]:
        want = library_events(name, payloads_in_processing_order(envelope(name, payloads[name], [False])), first,
                              name in elastic, tmp_path / "library" / name)
        got = read_events(logdir / name / "goodput")
        assert "goodput/goodput" in got and "step_deviation" in got and "badput/other" in got
        assert_same_events(got, want, name)
        assert_same_events(got, marts_events(db, name), f"{name} against the marts")

    # nothing new: nothing written
    again = json.loads(cli_subprocess("tensorboard", "--duckdb", db, "--logdir", logdir, "--json").stdout)
    assert all(run["goodput_points"] == 0 and run["step_deviation_points"] == 0 for run in again)

    # the running run's next entries: its new Goodput point and its new steps' deviations only
    later = tmp_path / "later.ndjson"
    entries = envelope(running, payloads[running] + held_back, [False])[len(payloads[running]):]
    later.write_text("".join(json.dumps(e) + "\n" for e in entries))
    run_cli("load", "--duckdb", db, later)
    second = START + dt.timedelta(hours=6)
    dbt_build(db, second)
    before = read_events(logdir / running / "goodput")
    cli_subprocess("tensorboard", "--duckdb", db, "--logdir", logdir)
    after = read_events(logdir / running / "goodput")
    want = library_events(running, payloads_in_processing_order(envelope(running, payloads[running] + held_back,
                                                                         [False])),
                          second, False, tmp_path / "library-later")
    assert len(after["goodput/goodput"]) == 2
    assert_same_events({tag: points[-1:] for tag, points in after.items() if tag != "step_deviation"},
                       {tag: points for tag, points in want.items() if tag != "step_deviation"}, "second export")
    # deviations are written once per timing: a step the restart repeats is written again (the monitor
    # rewrites every step at every poll); each new point is the library's value for its step now
    old_steps = {step for step, _ in before["step_deviation"]}
    new_points = [point for point in after["step_deviation"] if point not in before["step_deviation"]]
    latest = dict(want["step_deviation"])
    assert new_points and {step for step in latest if step not in old_steps} <= {step for step, _ in new_points}
    for step, value in new_points:
        assert math.isclose(value, latest[step], rel_tol=1e-6, abs_tol=1e-5), (step, value, latest[step])
    assert len(after["step_deviation"]) - len(before["step_deviation"]) == len(new_points)
    for other in (spec.name for spec in specs if spec.name != running):
        assert len(read_events(logdir / other / "goodput")["goodput/goodput"]) == 1
