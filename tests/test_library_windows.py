"""Interval Goodput with the library's semantics against the real GoodputCalculator.get_job_goodput_interval.

Random runs recorded by the real GoodputRecorder (restarts, rollbacks, checkpoints, custom events,
data loading, running and finished), windows cut at random points and where the two computations
part ways: near a restart, inside accelerator init, after a rollback, live at a running job's last
entry, on an entry's exact time, under a second, holding one entry, holding none. Every window is
computed by one window build (goodput_loader/library_windows.py) and by a fresh library calculator;
where the library raises ours must give its reason, elsewhere Goodput, the total, every key of the
Badput breakdown, the last productive step and the disruptions must be equal within 1e-6.

The LogEntries are stamped as Cloud Logging stamps them, when written: a few milliseconds after the
recorder's times, an Orbax record when its checkpoint is done. The library's read filters on those
stamps (start < timestamp <= end), then keeps the payloads whose time is after start; the oracle's
logger does the same, and windows end between an Orbax record's time and its stamp.
"""

from __future__ import annotations

import datetime as dt
import os
import random
import signal
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, land_runs
from ml_goodput_measurement.src import goodput as lib_goodput
from support.oracle import ListCloudLogger, breakdown_by_key, payload_time
from support.scenarios import random_runs, utc

from goodput_loader.entries import format_rfc3339_us, parse_rfc3339_us

from goodput_loader.library_windows import Window, library_window_rows

SEEDS = list(range(500, 540))


class LoggedCloudLogger(ListCloudLogger):
    """The library's _CloudLogger over entries with their LogEntry timestamps: an interval read returns
    the payloads Cloud Logging's filter `timestamp > start AND timestamp <= end` returns, in order."""

    def __init__(self, job_name: str, logged: list[tuple[int, dict[str, Any]]]):
        super().__init__(job_name, [payload for _, payload in logged])
        self.logged = logged

    def read_cloud_logging_entries(self, start_time=None, end_time=None, last_entry_info=None):
        assert start_time is not None and end_time is not None and last_entry_info is None  # one cold read
        low, high = as_us(start_time), as_us(end_time)
        kept = [(ts, payload) for ts, payload in self.logged if low < ts <= high]
        if not kept:
            return [], (None, None)
        return [payload for _, payload in kept], (dt.datetime.fromtimestamp(kept[-1][0] / 1e6, dt.timezone.utc),
                                                  str(len(kept)))


def as_us(value: dt.datetime) -> int:
    """A datetime as exact epoch microseconds, as Cloud Logging compares its isoformat() with timestamps."""
    return (value - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)) // dt.timedelta(microseconds=1)


def logged_when_written(entries: list[dict[str, Any]], seed: int) -> list[dict[str, Any]]:
    """The entries stamped when written, in write order: never before the payload's time, the recorder's
    up to 50 ms after it, an Orbax record (written with its checkpoint's start time) when it is done."""
    rng = random.Random(seed)
    out, previous = [], 0
    for entry in entries:
        payload = entry["jsonPayload"]
        delay = payload.get("checkpoint_manager_duration_secs", rng.uniform(0, 0.05))
        previous = max(previous, int(round((payload_time(payload) + delay) * 1e6)))
        out.append({**entry, "timestamp": format_rfc3339_us(previous)})
    return out


def in_read_order(entries: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
    """(timestamp in µs, payload) as the library reads them: by (timestamp, insertId), each entry once."""
    seen, out = set(), []
    for entry in sorted(entries, key=lambda e: (e["timestamp"], e["insertId"])):
        if (entry["timestamp"], entry["insertId"]) not in seen:
            seen.add((entry["timestamp"], entry["insertId"]))
            out.append((parse_rfc3339_us(entry["timestamp"], "timestamp"), entry["jsonPayload"]))
    return out


def library_interval(name: str, logged: list[tuple[int, dict[str, Any]]], start: float, end: float,
                     cache_dir: Path) -> dict[str, Any]:
    """What get_job_goodput_interval returns for [start, end], or the error it raises."""
    calculator = lib_goodput.GoodputCalculator(job_name=name, logger_name=f"goodput_{name}",
                                               cloud_logger=LoggedCloudLogger(name, logged),
                                               cache_dir=str(cache_dir))
    try:
        goodput, breakdown, max_step, total, disruptions = calculator.get_job_goodput_interval(utc(start), utc(end))
    except Exception as exc:  # noqa: BLE001 - the monitor catches every exception the same way
        return {"error": f"{type(exc).__name__}: {exc}"}
    pct = breakdown_by_key(breakdown)
    return {"goodput_pct": goodput, "badput_pct": pct, "max_productive_step": max_step,
            "elapsed_seconds": total, "disruptions": disruptions}


def windows_of(logged: list[tuple[int, dict[str, Any]]], seed: int) -> list[tuple[float, float]]:
    """Windows over one run: whole, random, at restarts and init, live at its end, degenerate, and ending
    while a checkpoint is being written (after its record's time, before the record is logged)."""
    rng = random.Random(seed)
    payloads = [payload for _, payload in logged]
    times = [payload_time(p) for p in payloads]
    first, last = min(times), max(times)
    starts = [payload_time(p) for p in payloads if "job_start_time" in p]
    inits = [payload_time(p) for p in payloads if "tpu_init_start_time" in p or "training_prep_start_time" in p]
    out = [(first - 1, last + 1), (last - 3600, last), (last - 60, last + 30), (first - 100, first - 50)]
    for _ in range(3):
        a, b = sorted(rng.uniform(first - 5, last + 5) for _ in range(2))
        out.append((a, b))
    for t in starts[1:] + inits:
        out.append((t - rng.uniform(0, 30), t + rng.uniform(1, 600)))
        out.append((t + rng.uniform(0, 3), t + rng.uniform(30, 3000)))
    k = rng.randrange(len(times))
    out.append((times[k], times[k] + rng.uniform(1, 200)))       # starts on an entry's time (excluded)
    out.append((times[k] - rng.uniform(1, 200), times[k]))       # ends on an entry's time (logged later)
    out.append((times[k] - 1e-4, times[k]))                      # holds (about) one entry
    out.append((times[k], times[k] + 0.5))                       # under a second
    late = [(payload_time(p), ts / 1e6) for ts, p in logged if ts / 1e6 - payload_time(p) > 0.2]
    for at, stamped in rng.sample(late, min(3, len(late))):
        out.append((at - rng.uniform(1, 300), rng.uniform(at, stamped)))
    return out


def read_by_payload_differs(logged: list[tuple[int, dict[str, Any]]], start: float, end: float) -> bool:
    """Whether the entries of [start, end] by payload time alone differ from those Cloud Logging returns."""
    low, high = as_us(utc(start)), as_us(utc(end))
    return any((low < ts <= high) != (start < payload_time(p) <= end) and payload_time(p) > start
               for ts, p in logged)


def ours(db: Path, windows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One window build for every window."""
    return library_window_rows(str(db), [Window(w["run"], dt.datetime.fromisoformat(w["start"]),
                                                dt.datetime.fromisoformat(w["end"])) for w in windows])


@pytest.fixture(scope="module")
def compared(tmp_path_factory) -> list[tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]]:
    tmp_path = tmp_path_factory.mktemp("library-windows")
    runs, _ = random_runs(SEEDS)
    runs = {name: logged_when_written(entries, SEEDS[i]) for i, (name, entries) in enumerate(runs.items())}
    db = land_runs(tmp_path, runs)
    cases = []
    for i, (name, entries) in enumerate(runs.items()):
        logged = in_read_order(entries)
        for start, end in windows_of(logged, SEEDS[i]):
            cases.append({"run": name, "start": utc(start).isoformat(), "end": utc(end).isoformat(),
                          "logged": logged, "bounds": (start, end)})
    rows = ours(db, [{k: c[k] for k in ("run", "start", "end")} for c in cases])
    by_window: dict[int, list[dict[str, Any]]] = {}
    for row in rows:
        by_window.setdefault(int(row["window_no"]), []).append(row)
    out = []
    for no, case in enumerate(cases):
        start, end = case["bounds"]
        # round-trip the bounds through the ISO text dbt got, so both sides see the same microseconds
        start = dt.datetime.fromisoformat(case["start"]).timestamp()
        end = dt.datetime.fromisoformat(case["end"]).timestamp()
        case["read_by_payload_differs"] = read_by_payload_differs(case["logged"], start, end)
        out.append((case, library_interval(case["run"], case["logged"], start, end, tmp_path / f"c{no}"),
                    by_window[no]))
    return out


def test_every_window_equals_the_library(compared):
    raised = computed = 0
    for case, lib, rows in compared:
        where = f"{case['run']} [{case['start']}, {case['end']}]"
        reason = rows[0]["invalid_reason"]
        if "error" in lib:
            raised += 1
            assert reason is not None, f"{where}: the library raises {lib['error']}, we computed {rows}"
            assert lib["error"].split(": ", 1)[1].startswith(reason.rstrip(".")), (where, lib["error"], reason)
            continue
        computed += 1
        assert reason is None, f"{where}: we refuse ({reason}), the library gives {lib}"
        measures = {(r["measure"], r["custom_badput_event_type"]): r for r in rows}
        assert measures[("PRODUCTIVE", None)]["pct"] == pytest.approx(lib["goodput_pct"], abs=1e-6), where
        assert rows[0]["elapsed_seconds"] == pytest.approx(lib["elapsed_seconds"], abs=1e-6), where
        assert int(rows[0]["max_productive_step"]) == lib["max_productive_step"], where
        assert int(measures[("DISRUPTIONS", None)]["seconds"]) == lib["disruptions"], where
        ours_pct = {key: r["pct"] for key, r in measures.items() if key[0] not in ("PRODUCTIVE", "DISRUPTIONS")}
        assert set(ours_pct) == set(lib["badput_pct"]), where
        for key, value in lib["badput_pct"].items():
            assert ours_pct[key] == pytest.approx(value, abs=1e-6), (where, key)
    # the comparison covers both outcomes, many times each, and windows where reading by payload time
    # alone (as push's live windows do) would give other entries
    assert computed > 300 and raised > 60, (computed, raised)
    assert sum(case["read_by_payload_differs"] for case, _, _ in compared) > 30


def test_windows_where_the_two_semantics_part_ways_are_covered(compared):
    """The cases docs/semantics.md's worked example rests on do occur: a window whose Goodput differs from
    the run's cumulative attribution located in time (a restart or a step cut at the window edge)."""
    restarts = [lib for case, lib, _ in compared if "error" not in lib and lib["disruptions"] > 0]
    startup_at_edge = [lib for case, lib, _ in compared
                       if "error" not in lib and lib["badput_pct"].get(("PROGRAM_STARTUP", None), 0) > 0]
    assert len(restarts) > 20 and len(startup_at_edge) > 50, (len(restarts), len(startup_at_edge))


def test_a_bigquery_window_build_writes_into_a_scratch_copy_of_the_users_output(tmp_path):
    """The window build's profile is the user's BigQuery output as written (credentials, env_var() and all),
    with only its dataset renamed, so nothing the build writes lands in the marts' dataset. The build
    itself runs against the BigQuery emulator in test_bigquery.py."""
    import yaml

    from goodput_loader.errors import LoaderError
    from goodput_loader.library_windows import BIGQUERY_TARGET, BigQueryBuild, scratch_bigquery_profile

    user = tmp_path / "user"
    user.mkdir()
    (user / "profiles.yml").write_text("""
goodput_warehouse:
  target: prod
  outputs:
    prod:
      type: bigquery
      method: service-account
      keyfile: "{{ env_var('KEYFILE') }}"
      project: my-proj
      schema: "{{ env_var('DATASET', 'goodput') }}"
      location: EU
    local:
      type: duckdb
      path: x.duckdb
""")
    out = tmp_path / "out"
    out.mkdir()
    written = yaml.safe_load(Path(scratch_bigquery_profile(out, "_library_windows_ab12", "prod", str(user), None),
                                  "profiles.yml").read_text())
    assert written == {"goodput_warehouse": {"target": BIGQUERY_TARGET, "outputs": {BIGQUERY_TARGET: {
        "type": "bigquery", "method": "service-account", "keyfile": "{{ env_var('KEYFILE') }}",
        "project": "my-proj", "location": "EU",
        "dataset": "{{ env_var('DATASET', 'goodput') }}_library_windows_ab12"}}}}
    with pytest.raises(LoaderError, match=r"has no BigQuery output 'local' \(it has local, prod\).*--dbt-target"):
        BigQueryBuild(target="local", profiles_dir=str(user)).check()
    with pytest.raises(LoaderError, match="cannot read the dbt profile.*--profiles-dir.*additive"):
        BigQueryBuild(profiles_dir=str(tmp_path / "missing")).check()
    BigQueryBuild(target="prod", profiles_dir=str(user)).check()


def test_window_builds_store_their_windows_keep_dbts_parse_warm_and_leave_nothing(tmp_path):
    """push asks for other windows at every poll: they travel in a file the build reads, not --vars, so the
    next window build of the warehouse finds dbt's parse warm (a change of vars re-parses the whole project);
    a build while another holds the warm directory parses cold beside it; the scratch file goes; and the
    windows listed in the var by hand (docs/semantics.md) give the same rows."""
    import fcntl
    import json
    import subprocess
    import sys

    from goodput_loader.library_windows import scratch_dir

    runs, _ = random_runs(SEEDS[:2])
    runs = {name: logged_when_written(entries, SEEDS[i]) for i, (name, entries) in enumerate(runs.items())}
    db = land_runs(tmp_path, runs)
    times = {name: sorted(payload_time(e["jsonPayload"]) for e in entries) for name, entries in runs.items()}
    (a, ta), (b, tb) = times.items()
    windows = [{"run": a, "start": utc(ta[0] - 1).isoformat(), "end": utc((ta[0] + ta[-1]) / 2).isoformat()},
               {"run": b, "start": utc((tb[0] + tb[-1]) / 3).isoformat(), "end": utc(tb[-1] + 1).isoformat()}]

    def by_window(rows: list[dict[str, Any]]) -> dict[int, dict[Any, Any]]:
        out: dict[int, dict[Any, Any]] = {}
        for row in rows:
            out.setdefault(int(row["window_no"]), {})[(row["measure"], row["custom_badput_event_type"])] = (
                row["run_id"], row["invalid_reason"], row["seconds"], row["pct"])
        return out

    first = by_window(ours(db, windows))
    assert len(first) == 2 and all(v[1] is None for w in first.values() for v in w.values()), first
    scratch = scratch_dir(str(db))
    log = scratch / "logs" / "dbt.log"
    seen = log.stat().st_size
    # other windows (the same two swapped, one moved by a second): parsed partially, numbered as asked
    moved = [{**windows[1], "end": utc(tb[-1] + 2).isoformat()}, windows[0]]
    second = by_window(ours(db, moved))
    assert second[1] == first[0] and second[0].keys() == first[1].keys()
    with open(log) as fh:
        fh.seek(seen)
        parse_log = fh.read()
    assert "Unable to do partial parsing" not in parse_log and parse_log.count("Partial parsing enabled") >= 2
    # a window build while another holds the warm directory: its own temporary one, the same rows
    with open(scratch / "lock") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        assert by_window(ours(db, windows)) == first
        assert log.stat().st_size == seen + len(parse_log.encode())
    assert sorted(p.name for p in scratch.iterdir()) == ["lock", "logs", "target"]

    # by hand, as docs/semantics.md shows: the windows listed in the var (or in a file it names),
    # then goodput_interval(semantics=library) picks one
    dbt = [str(Path(sys.executable).parent / "dbt"), "--quiet"]
    inline = "{{ goodput_interval(%r, %r, %r, semantics='library') }}" % (b, windows[1]["start"], windows[1]["end"])
    (tmp_path / "windows.json").write_text(json.dumps(windows))
    for listed in (windows, {"file": str(tmp_path / "windows.json")}):
        env = {**os.environ, "GOODPUT_DUCKDB": str(db),
               "GOODPUT_LIBRARY_WINDOWS_DUCKDB": str(tmp_path / f"{type(listed).__name__}.duckdb")}
        common = ["--project-dir", str(ROOT), "--profiles-dir", str(ROOT), "--target", "duckdb_library_windows",
                  "--target-path", str(tmp_path / "target"), "--log-path", str(tmp_path / "logs"), "--vars",
                  json.dumps({"goodput_raw_database": "warehouse", "goodput_library_windows": listed})]
        subprocess.run([*dbt, "build", "--select", "+int_goodput__badput_buckets", "--exclude-resource-type", "test",
                        "unit_test", "--full-refresh", *common], env=env, check=True, capture_output=True)
        shown = subprocess.run([*dbt, "show", "--inline", inline, "--limit", "-1", "--output", "json", *common],
                               env=env, check=True, capture_output=True, text=True)
        rows = json.loads(shown.stdout)["show"]
        assert {(r["measure"], r["custom_badput_event_type"]): r["pct"] for r in rows} == pytest.approx(
            {key: value[3] for key, value in first[1].items()}, abs=1e-9), listed
    # a file's window with a read_by the build cannot use fails the build, naming the window and the file
    (tmp_path / "windows.json").write_text(json.dumps([{**windows[0], "read_by": "receive"}]))
    failed = subprocess.run([*dbt, "show", "--inline", "{{ goodput_library_window_rows() }}", *common], env=env,
                            capture_output=True, text=True)
    assert failed.returncode != 0
    expected = f"window 0 of {tmp_path / 'windows.json'}: read_by is timestamp or payload, not receive"
    assert expected in failed.stdout + failed.stderr


def test_a_window_build_process_closed_unused_exits_without_building(monkeypatch):
    """push starts the window build's child before it knows its windows (dbt imports meanwhile; refresh
    starts it with the cycle); when it then needs none (or the cycle fails first), closing the child ends it
    at once, killed, having opened nothing; and no windows start no child at all (a push over finished runs
    would pay dbt's import for nothing)."""
    from goodput_loader import library_windows
    from goodput_loader.library_windows import WindowBuildProcess

    process = WindowBuildProcess()
    child = process._process
    assert child is not None and child.poll() is None
    process.close()
    assert child.returncode == -signal.SIGKILL and not process.ready
    assert library_window_rows("/nonexistent/warehouse.duckdb", [], process=WindowBuildProcess()) == []

    def no_child(self: WindowBuildProcess) -> None:
        raise AssertionError("a window build process was started for no windows")

    monkeypatch.setattr(library_windows.WindowBuildProcess, "__init__", no_child)
    assert library_window_rows("/nonexistent/warehouse.duckdb", []) == []
