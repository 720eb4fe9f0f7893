"""Incremental by run: a build recomputes the runs whose inputs changed and equals a build from scratch.

Every per-run model keeps its rows between builds and recomputes only the runs of
int_goodput__runs_to_rebuild: runs with entries landed since the last complete build
(late ones included) and runs without a job end. Here random fleets grow between
builds (runs start, restart, finish, receive late checkpoint records, new runs
appear) and after every incremental build each table must equal, row for row, the
same table of a warehouse built from scratch on the same entries at the same time.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import subprocess
from pathlib import Path
from typing import Any

import duckdb
import pytest
from conftest import BIN, ROOT, dbt_build, query, run_cli
from test_rolling import rows, write_ndjson

from support.rows import first_difference, in_stable_order

from goodput_loader.simulate import RunSpec, fleet, log_entries

START = dt.datetime(2026, 11, 20, tzinfo=dt.timezone.utc)
ROLLING = ["--var", "rolling_grid_seconds=300", "--var", "rolling_windows_seconds=[3600, 86400]"]
# bookkeeping that differs between two warehouses holding the same entries
NOT_COMPARED = {"computed_at", "final_segment_no", "loaded_at", "last_loaded_at"}


def per_run_tables(db: Path) -> list[str]:
    """Every table the project builds, but the build's own bookkeeping."""
    found = query(db, "select table_name from information_schema.tables where table_schema = 'main' "
                      "and table_type = 'BASE TABLE' and table_name not like 'goodput\\_%' escape '\\' "
                      "and table_name != 'int_goodput__runs_to_rebuild' and table_name != 'badput_types'")
    return sorted(name for (name,) in found)


def table_rows(db: Path, table: str) -> list[tuple]:
    """A table's rows without bookkeeping columns, in a stable order (floats rounded for sorting only)."""
    return in_stable_order(tuple(v for c, v in r.items() if c not in NOT_COMPARED)
                           for r in rows(db, f"select * from {table}"))


def assert_same_table(got: list[tuple], want: list[tuple], table: str) -> None:
    difference = first_difference(got, want)
    assert difference is None, f"{table} against a build from scratch: {difference}"


def assert_equals_a_build_from_scratch(db: Path, entries: list[dict[str, Any]] | Path, as_of: dt.datetime,
                                       scratch: Path, label: str = "") -> list[str]:
    """Loads the same entries (a list, or a file already written) into the new warehouse `scratch`, builds
    it at the same evaluation time, and asserts that db holds the same tables, each row for row: the
    promise of every incremental build. Returns the tables compared."""
    if not isinstance(entries, Path):
        entries = write_ndjson(scratch.with_suffix(".ndjson"), entries)
    run_cli("load", "--duckdb", scratch, entries)
    dbt_build(scratch, as_of, *ROLLING)
    tables = per_run_tables(scratch)
    assert per_run_tables(db) == tables
    for table in tables:
        assert_same_table(table_rows(db, table), table_rows(scratch, table), f"{label}{table}")
    return tables


def at(entry: dict[str, Any]) -> dt.datetime:
    return dt.datetime.fromisoformat(entry["timestamp"].replace("Z", "+00:00"))


def late_copy(entry: dict[str, Any], arrives: dt.datetime, name: str) -> dict[str, Any]:
    """Another host's record of the same checkpoint, landing long after the run ended."""
    copy = json.loads(json.dumps(entry))
    copy["insertId"] = name
    copy["timestamp"] = arrives.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    copy["jsonPayload"]["checkpoint_manager_blocking_duration_secs"] += 1.25
    return copy


def custom_event(like: dict[str, Any], logged_after: dt.datetime, start: float, end: float) -> list[dict[str, Any]]:
    """A custom badput event's start and end entries, logged just after logged_after, timed start to end."""
    entries = []
    for i, (field, value) in enumerate((("custom_badput_event_start_time", start),
                                        ("custom_badput_event_end_time", end))):
        entry = json.loads(json.dumps(like))
        payload = entry["jsonPayload"]
        payload.pop("custom_badput_event_start_time", None)
        payload[field] = value
        entry["insertId"] = f"logged-late-{i}"
        entry["timestamp"] = (logged_after + dt.timedelta(seconds=i + 1)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        entries.append(entry)
    return entries


@pytest.mark.parametrize("seed", [3, 8])
def test_incremental_builds_equal_builds_from_scratch_on_a_growing_fleet(tmp_path, seed):
    rng = random.Random(seed)
    specs = fleet(7, seed=seed, steps=rng.randint(400, 900), restarts=1, running=2, start=START,
                  base=RunSpec(name="", start=0.0, step_seconds=2.0, duplicate_rate=0.0))
    everything = sorted((e for spec in specs for e in log_entries(spec, "proj")), key=lambda e: e["timestamp"])
    first, last = at(everything[0]), at(everything[-1])
    cuts = sorted(first + (last - first) * rng.uniform(0.15, 0.9) for _ in range(3)) + [last]

    incremental = tmp_path / "incremental.duckdb"
    landed: list[dict[str, Any]] = []
    previous = first - dt.timedelta(seconds=1)
    for round_no, cut in enumerate(cuts):
        batch = [e for e in everything if previous < at(e) <= cut]
        ended = {e["logName"] for e in landed if "job_end_time" in e["jsonPayload"]}
        saves = [e for e in landed if e["jsonPayload"].get("event_type") == "save" and e["logName"] in ended]
        if saves and round_no >= 2:  # a finished run receives a late Orbax record
            batch.append(late_copy(rng.choice(saves), cut, f"late-{round_no}"))
        landed += batch
        previous = cut
        as_of = cut + dt.timedelta(minutes=rng.choice([1, 30, 90]))  # the last also stalls the silent runs
        unended = {r for (r,) in query(incremental, "select run_id from int_goodput__run_totals "
                                                    "where last_job_end_epoch is null")} if round_no else set()
        run_cli("load", "--duckdb", incremental, write_ndjson(tmp_path / f"round-{round_no}.ndjson", batch))
        dbt_build(incremental, as_of, *ROLLING)

        scratch = tmp_path / f"scratch-{round_no}.duckdb"
        tables = assert_equals_a_build_from_scratch(incremental, landed, as_of, scratch, f"round {round_no}: ")
        assert len(tables) >= 25
        # it recomputed the runs with new entries and those without a job end at the last build, no other
        if round_no:
            rebuilt = dict(query(incremental, "select run_id, has_new_entries from int_goodput__runs_to_rebuild"))
            touched = {"proj/" + e["logName"].rsplit("goodput_", 1)[1] for e in batch}
            assert {r for r, new in rebuilt.items() if new} == touched
            assert set(rebuilt) == touched | unended


def test_an_untouched_run_keeps_its_rows_and_a_late_entry_makes_it_dirty_again(tmp_path):
    """A finished run with no new entry costs nothing: its rows are not rewritten (a mark put on them
    survives the build), while a late entry for it makes the next build recompute it."""
    specs = fleet(3, seed=4, steps=300, restarts=1, running=1, start=START,
                  base=RunSpec(name="", start=0.0, step_seconds=2.0, duplicate_rate=0.0))
    entries = {spec.name: list(log_entries(spec, "proj")) for spec in specs}
    finished, other, running = (spec.name for spec in specs)
    cut = max(at(e) for e in entries[running]) - dt.timedelta(minutes=5)
    db = tmp_path / "w.duckdb"
    first = [e for name in (finished, other) for e in entries[name]] + [e for e in entries[running] if at(e) <= cut]
    run_cli("load", "--duckdb", db, write_ndjson(tmp_path / "first.ndjson", first))
    dbt_build(db, cut + dt.timedelta(minutes=1), *ROLLING)

    # mark the finished run's rows: a build that rewrote them would lose the marks
    con = duckdb.connect(str(db))
    con.execute("update fct_goodput_cumulative set counted_entries = -1 where run_name = ?", [finished])
    con.execute("update int_goodput__segments set segment_start_seq = -1 where run_id = ?", [f"proj/{finished}"])
    con.close()

    rest = [e for e in entries[running] if at(e) > cut]
    run_cli("load", "--duckdb", db, write_ndjson(tmp_path / "rest.ndjson", rest))
    dbt_build(db, max(at(e) for e in rest) + dt.timedelta(minutes=1), *ROLLING)
    assert dict(query(db, "select run_id, has_new_entries from int_goodput__runs_to_rebuild")) == {
        f"proj/{running}": True}
    assert query(db, "select counted_entries from fct_goodput_cumulative where run_name = ?", [finished]) == [(-1,)]
    assert query(db, "select min(segment_start_seq) from int_goodput__segments where run_id = ?",
                 [f"proj/{finished}"]) == [(-1,)]

    save = next(e for e in entries[finished] if e["jsonPayload"].get("event_type") == "save")
    late = late_copy(save, max(at(e) for e in rest), "late-record")
    run_cli("load", "--duckdb", db, write_ndjson(tmp_path / "late.ndjson", [late]))
    as_of = max(at(e) for e in rest) + dt.timedelta(minutes=20)  # the running run: nothing new, 19 min later
    dbt_build(db, as_of, *ROLLING)
    assert dict(query(db, "select run_id, has_new_entries from int_goodput__runs_to_rebuild")) == {
        f"proj/{finished}": True, f"proj/{running}": False}
    [(counted,)] = query(db, "select counted_entries from fct_goodput_cumulative where run_name = ?", [finished])
    assert counted == len(entries[finished]) + 1
    assert query(db, "select min(segment_start_seq) from int_goodput__segments where run_id = ?",
                 [f"proj/{finished}"]) == [(0,)]

    # the marks are gone with the rebuild, and everything equals a build from scratch (the running run was
    # recomputed for the evaluation time alone)
    assert_equals_a_build_from_scratch(db, first + rest + [late], as_of, tmp_path / "scratch.duckdb")


def small_fleet(tmp_path: Path) -> tuple[Path, dict[str, list[dict[str, Any]]], dt.datetime]:
    """A finished run and a running one, landed and built; returns the warehouse, the entries, the as-of."""
    specs = fleet(2, seed=7, steps=300, restarts=1, running=1, start=START,
                  base=RunSpec(name="", start=0.0, step_seconds=2.0, duplicate_rate=0.0))
    entries = {spec.name: list(log_entries(spec, "proj")) for spec in specs}
    db = tmp_path / "w.duckdb"
    run_cli("load", "--duckdb", db, write_ndjson(tmp_path / "all.ndjson", [e for es in entries.values() for e in es]))
    as_of = max(at(e) for es in entries.values() for e in es) + dt.timedelta(minutes=5)
    dbt_build(db, as_of, *ROLLING)
    return db, entries, as_of


def test_a_build_that_did_not_complete_is_redone_by_the_next(tmp_path):
    """On BigQuery a model that fails after its pre-hook delete leaves its rebuilt runs out of its table
    (DuckDB rolls back; here the rows are deleted by hand after a build that did not complete). The next
    build recomputes every run the unfinished one set out to, so nothing stays lost."""
    db, entries, as_of = small_fleet(tmp_path)
    later = as_of + dt.timedelta(minutes=30)
    partial = dbt_build(db, later, *ROLLING, "--", "--select", "int_goodput__runs_to_rebuild", "int_goodput__run_totals")
    assert partial.returncode == 0
    running = [name for name in entries if not any("job_end_time" in e["jsonPayload"] for e in entries[name])]
    con = duckdb.connect(str(db))
    con.execute("delete from int_goodput__run_totals where run_name = ?", running)
    con.close()
    final = as_of + dt.timedelta(minutes=40)
    dbt_build(db, final, *ROLLING)
    assert query(db, "select count(*) from int_goodput__run_totals") == [(2,)]
    assert_equals_a_build_from_scratch(db, tmp_path / "all.ndjson", final, tmp_path / "scratch.duckdb")


def test_a_failure_found_over_every_row_is_not_cleared_by_tests_of_rebuilt_runs(tmp_path):
    """An incremental build tests only the runs it rebuilt: its pass must not hide a failure that a test
    of every row found (report and push keep refusing until every row passes again)."""
    db, entries, as_of = small_fleet(tmp_path)
    finished = next(name for name in entries if any("job_end_time" in e["jsonPayload"] for e in entries[name]))
    con = duckdb.connect(str(db))
    con.execute("insert into dim_runs select * from dim_runs where run_name = ?", [finished])
    con.close()
    tested = subprocess.run([str(BIN / "dbt"), "test", "--select", "dim_runs", "--profiles-dir", str(ROOT),
                             "--project-dir", str(ROOT), "--target-path", str(tmp_path / "target")],
                            cwd=ROOT, capture_output=True, text=True, env={**os.environ, "GOODPUT_DUCKDB": str(db)})
    assert tested.returncode == 1 and "unique_dim_runs_run_id" in tested.stdout
    dbt_build(db, as_of + dt.timedelta(minutes=10), *ROLLING)  # rebuilds the running run only: its tests pass
    refused = run_cli("report", "--duckdb", db, expect=1)
    assert "unique_dim_runs_run_id" in refused.stderr
    dbt_build(db, as_of + dt.timedelta(minutes=10), *ROLLING, "--", "--full-refresh")
    assert "Goodput per run" in run_cli("report", "--duckdb", db).stdout


# Rows of a closed segment an appended run keeps, each marked in a column no other model computes with:
# table -> (marked column, its mark, the row's segment column, the column that picks the row, the tables
# that copy the column as they find it).
SEGMENT_MARKS = {
    "int_goodput__paired_intervals": ("start_seq", -7, "end_segment_no", "end_seq", ()),
    "int_goodput__data_loading": ("start_seq", -8, "end_segment_no", "end_seq", ()),
    "int_goodput__step_intervals": ("bound_step", -9, "segment_no", "event_seq",
                                    ("int_goodput__step_productive_time",)),
    "int_goodput__step_productive_time": ("bound_step", -10, "segment_no", "event_seq", ()),
}


def test_entries_after_the_stored_ones_are_appended_and_a_late_one_among_them_renumbers_the_run(tmp_path):
    """A running run whose new entries follow its stored ones keeps its per-entry rows (a mark on its first
    entry survives) and its per-segment rows of the segments closed before (marks on segment 0 survive), and
    numbers the new entries on, into a restart; a custom event logged late, timed inside a closed step, is
    paired with that step alone, and a late record of a closed segment's checkpoint moves its average. A late
    entry that sorts among the stored ones renumbers the run whole. Both equal a build from scratch."""
    running = RunSpec(name="running", start=START.timestamp(), steps=600, restarts=2, finished=False,
                      eval_every=100)
    entries = list(log_entries(running, "proj"))
    run_id = "proj/running"
    restart_at = [at(e) for e in entries if "job_start_time" in e["jsonPayload"]][-1]  # the last restart's job start
    # just after a data-loading start: its end, the first new entry, pairs with a stored start
    cut = max(at(e) for e in entries
              if "data_loading_start_time" in e["jsonPayload"] and at(e) <= restart_at - dt.timedelta(minutes=3))
    first, rest = [e for e in entries if at(e) <= cut], [e for e in entries if at(e) > cut]
    assert "data_loading_end_time" in rest[0]["jsonPayload"]
    db = tmp_path / "w.duckdb"
    run_cli("load", "--duckdb", db, write_ndjson(tmp_path / "first.ndjson", first))
    dbt_build(db, cut + dt.timedelta(minutes=1), *ROLLING)
    [(stored_last, segment_before)] = query(db, "select max(event_seq), max(segment_no) from "
                                                "int_goodput__entries_segmented where run_id = ?", [run_id])
    assert segment_before == 1

    marks = {}
    con = duckdb.connect(str(db))
    for table in ("int_goodput__entries_ordered", "int_goodput__entries_segmented"):
        [(marks[table],)] = con.execute(f"select insert_id from {table} where run_id = ? and event_seq = 1",
                                        [run_id]).fetchall()
        con.execute(f"update {table} set insert_id = 'kept' where run_id = ? and event_seq = 1", [run_id])
    segment_marks = {}
    for table, (column, mark, segment, key, _) in SEGMENT_MARKS.items():
        [(row_key, value)] = con.execute(f"select {key}, {column} from {table} where run_id = ? and {segment} = 0 "
                                         f"order by {key} limit 1", [run_id]).fetchall()
        segment_marks[table] = (row_key, value)
        con.execute(f"update {table} set {column} = ? where run_id = ? and {key} = ?", [mark, run_id, row_key])
    # a located amount of segment 0 (its component is read by no model): kept
    [(kept_step,)] = con.execute("select min(source_seq) from int_goodput__timeline_amounts where run_id = ? "
                                 "and segment_no = 0 and component = 'step interval'", [run_id]).fetchall()
    con.execute("update int_goodput__timeline_amounts set component = 'kept' where run_id = ? and source_seq = ? "
                "and component = 'step interval'", [run_id, kept_step])
    # a custom event logged late, timed inside a productive step of segment 0: that closed step loses it
    [(inside_start, inside_end)] = con.execute(
        "select start_epoch, end_epoch from int_goodput__step_intervals where run_id = ? and segment_no = 0 "
        "and interval_class = 'productive' order by event_seq limit 1 offset 20", [run_id]).fetchall()
    con.close()
    logged_late = custom_event(next(e for e in entries if "custom_badput_event_start_time" in e["jsonPayload"]),
                               max(at(e) for e in rest), inside_start + 0.2 * (inside_end - inside_start),
                               inside_start + 0.6 * (inside_end - inside_start))
    # and another host's record of a segment-0 save, landing now: that checkpoint's average moves
    save = next(e for e in first if e["jsonPayload"].get("event_type") == "save")
    late_record = late_copy(save, max(at(e) for e in rest) + dt.timedelta(seconds=2), "late-after")
    rest = rest + logged_late + [late_record]

    as_of = max(at(e) for e in rest) + dt.timedelta(minutes=1)
    run_cli("load", "--duckdb", db, write_ndjson(tmp_path / "rest.ndjson", rest))
    dbt_build(db, as_of, *ROLLING)
    assert query(db, "select appends_after_seq from int_goodput__runs_to_rebuild where run_id = ?",
                 [run_id]) == [(stored_last,)]
    for table in marks:  # kept, not recomputed
        assert query(db, f"select insert_id from {table} where run_id = ? and event_seq = 1", [run_id]) == [("kept",)]
    for table, (column, mark, _, key, _) in SEGMENT_MARKS.items():
        assert query(db, f"select {column} from {table} where run_id = ? and {key} = ?",
                     [run_id, segment_marks[table][0]]) == [(mark,)], table
    assert query(db, "select source_seq from int_goodput__timeline_amounts where run_id = ? and component = 'kept'",
                 [run_id]) == [(kept_step,)]
    # the late custom event was paired with that closed step alone, which was recomputed
    assert query(db, "select segment_no, event_end_seq > ? from int_goodput__custom_badput_in_steps "
                     "where run_id = ? and start_epoch >= ? and end_epoch <= ?",
                 [stored_last, run_id, inside_start, inside_end]) == [(0, True)]
    assert query(db, "select measure from int_goodput__timeline_amounts where run_id = ? and segment_no = 0 "
                     "and component = 'custom event in step' and event_end_seq > ? order by measure",
                 [run_id, stored_last]) == [("CUSTOM_BADPUT_EVENTS",), ("PRODUCTIVE",)]
    # the appended entries went on into the next segment
    assert query(db, "select min(event_seq) > ?, count(*) from int_goodput__entries_segmented "
                     "where run_id = ? and is_restart and segment_no = 2", [stored_last, run_id]) == [(True, 1)]

    con = duckdb.connect(str(db))
    for table, insert_id in marks.items():
        con.execute(f"update {table} set insert_id = ? where run_id = ? and event_seq = 1", [insert_id, run_id])
    for table, (column, _, _, key, copies) in SEGMENT_MARKS.items():
        row_key, value = segment_marks[table]
        for holder in (table, *copies):
            con.execute(f"update {holder} set {column} = ? where run_id = ? and {key} = ?", [value, run_id, row_key])
    con.execute("update int_goodput__timeline_amounts set component = 'step interval' where run_id = ? "
                "and component = 'kept'", [run_id])
    con.close()
    assert_equals_a_build_from_scratch(db, first + rest, as_of, tmp_path / "scratch.duckdb", "appended: ")

    # a late record of a checkpoint, timed among the stored entries: the run is numbered again, whole
    late = late_copy(save, at(save) + dt.timedelta(milliseconds=1), "late-among")
    run_cli("load", "--duckdb", db, write_ndjson(tmp_path / "late.ndjson", [late]))
    as_of = as_of + dt.timedelta(minutes=5)
    dbt_build(db, as_of, *ROLLING)
    assert query(db, "select has_new_entries, appends_after_seq from int_goodput__runs_to_rebuild "
                     "where run_id = ?", [run_id]) == [(True, None)]
    assert_equals_a_build_from_scratch(db, first + rest + [late], as_of, tmp_path / "scratch-late.duckdb",
                                       "late among: ")


def test_after_a_build_of_some_models_alone_nothing_appends_until_a_complete_build(tmp_path):
    """`-- --select int_goodput__entries_ordered` renumbers a run alone: the segments stored beside it are
    of the numbering before. Such an incomplete build stops every model from appending until a complete
    build has recomputed the runs with new entries whole; after that, appending resumes."""
    running = RunSpec(name="running", start=START.timestamp(), steps=800, restarts=2, finished=False)
    entries = list(log_entries(running, "proj"))
    first, last = at(entries[0]), at(entries[-1])
    cuts = [first + (last - first) * share for share in (0.3, 0.5, 0.7)] + [last]
    parts = [[e for e in entries if (cuts[i - 1] if i else first - dt.timedelta(seconds=1)) < at(e) <= cut]
             for i, cut in enumerate(cuts)]
    db = tmp_path / "w.duckdb"

    def land_and_build(i: int, *extra: str) -> dt.datetime:
        as_of = cuts[i] + dt.timedelta(minutes=1)
        run_cli("load", "--duckdb", db, write_ndjson(tmp_path / f"part-{i}.ndjson", parts[i]))
        dbt_build(db, as_of, *ROLLING, *extra)
        return as_of

    def appends_after() -> Any:
        [(seq,)] = query(db, "select appends_after_seq from int_goodput__runs_to_rebuild where run_id = 'proj/running'")
        return seq

    land_and_build(0)
    land_and_build(1, "--", "--select", "int_goodput__entries_ordered")
    as_of = land_and_build(2)
    assert appends_after() is None
    assert_equals_a_build_from_scratch(db, [e for part in parts[:3] for e in part], as_of,
                                       tmp_path / "scratch-2.duckdb", "part 2: ")
    as_of = land_and_build(3)
    assert appends_after() is not None
    assert_equals_a_build_from_scratch(db, [e for part in parts[:4] for e in part], as_of,
                                       tmp_path / "scratch-3.duckdb", "part 3: ")


def test_a_running_run_keeps_its_curve_before_the_final_segment_unless_that_head_moved(tmp_path):
    """int_goodput__timeline_curves keeps an appended run's stored breakpoints before its final segment and
    recomputes the rest from the exact sums there: a mark on its first breakpoint survives a restart into a
    checkpoint of the final segment (its overlapping buckets take the slack lower than anywhere before, and
    the kept breakpoints' minimum slack ahead takes that in), the final segment going on (with the run's
    first eval step, a custom Badput type its stored rolling windows have no row for) and a job end landing
    before the last build's evaluation time (the total shrinks). A late record of an early checkpoint moves
    the head (the save average changes every save's amount): the run is recomputed whole, the mark goes.
    After every build the warehouse equals one built from scratch on the same entries."""
    # seed 1: the second restart resumes from step 400, saved in the second segment (steps 200-494)
    running = RunSpec(name="running", start=START.timestamp(), steps=600, restarts=2, finished=False, seed=1)
    entries = list(log_entries(running, "proj"))
    run_id = "proj/running"
    restart_at = [at(e) for e in entries if "job_start_time" in e["jsonPayload"]][-1]
    before = restart_at - dt.timedelta(minutes=3)  # inside the segment before the final one
    cut = restart_at + dt.timedelta(minutes=4)  # inside the final segment
    first = [e for e in entries if at(e) <= before]
    restart = [e for e in entries if before < at(e) <= cut]
    rest = [e for e in entries if at(e) > cut]
    assert not any("custom_badput_event_type" in e["jsonPayload"] for e in first + restart)
    assert any("custom_badput_event_type" in e["jsonPayload"] for e in rest)
    db = tmp_path / "w.duckdb"
    run_cli("load", "--duckdb", db, write_ndjson(tmp_path / "first.ndjson", first))
    dbt_build(db, before + dt.timedelta(minutes=1), *ROLLING)
    mark = "update int_goodput__timeline_curves set value_at = ? where run_id = ? and measure = 'PRODUCTIVE' " \
           "and at_offset = (select min(at_offset) from int_goodput__timeline_curves where measure = 'PRODUCTIVE')"
    marked = "select count(*) from int_goodput__timeline_curves where value_at = -4242.5"
    [(first_value,)] = query(db, "select value_at from int_goodput__timeline_curves where measure = 'PRODUCTIVE' "
                                 "order by at_offset limit 1")
    landed = list(first)

    def land_build_and_compare(name: str, batch: list[dict[str, Any]], as_of: dt.datetime) -> int:
        """Marks the head, lands the batch and builds: how many marks survived; then equal to from scratch."""
        con = duckdb.connect(str(db))
        con.execute(mark, [-4242.5, run_id])
        con.close()
        run_cli("load", "--duckdb", db, write_ndjson(tmp_path / f"{name}.ndjson", batch))
        dbt_build(db, as_of, *ROLLING)
        assert query(db, "select appends_after_seq is not null from int_goodput__runs_to_rebuild "
                         "where run_id = ?", [run_id]) == [(True,)]
        [(survived,)] = query(db, marked)
        con = duckdb.connect(str(db))
        con.execute(mark, [first_value, run_id])
        con.close()
        landed.extend(batch)
        assert_equals_a_build_from_scratch(db, landed, as_of, tmp_path / f"scratch-{name}.duckdb", f"{name}: ")
        return survived

    [(stored_lowest,)] = query(db, "select min(next_future_min) from int_goodput__timeline_curves")
    assert land_build_and_compare("restart", restart, cut + dt.timedelta(minutes=1)) == 1
    [(lowest,)] = query(db, "select min(next_future_min) from int_goodput__timeline_curves")
    assert lowest < stored_lowest

    last = max(at(e) for e in rest)
    assert land_build_and_compare("rest", rest, last + dt.timedelta(minutes=30)) == 1

    ended = last + dt.timedelta(seconds=5)
    end = {"insertId": "end-1", "jsonPayload": {"job_name": "running", "job_end_time": ended.timestamp()},
           "resource": {"type": "global", "labels": {"project_id": "proj"}},
           "timestamp": ended.strftime("%Y-%m-%dT%H:%M:%S.%fZ"), "severity": "INFO",
           "logName": "projects/proj/logs/goodput_running"}
    assert land_build_and_compare("ended", [end], last + dt.timedelta(minutes=40)) == 1

    # another host's record of the first checkpoint, logged after everything stored: the save average moves
    # every save's amount, the first segment's too, so the head moved and the run is recomputed whole
    save = next(e for e in first if e["jsonPayload"].get("event_type") == "save")
    late = late_copy(save, ended + dt.timedelta(minutes=1), "late-save")
    stored_saves = query(db, "select max(value_at) from int_goodput__timeline_curves "
                             "where measure = 'UNPRODUCTIVE_CHECKPOINT_SAVE_TIME'")
    assert land_build_and_compare("late-save", [late], last + dt.timedelta(minutes=50)) == 0
    assert query(db, "select max(value_at) from int_goodput__timeline_curves "
                     "where measure = 'UNPRODUCTIVE_CHECKPOINT_SAVE_TIME'") != stored_saves


def test_a_late_slice_count_record_moves_the_slice_efficiency_of_the_windows_after_it(tmp_path):
    """A slice-count record logged after the stored entries (the run appends) but timed in a closed segment
    moves no located amount, yet changes the slice efficiencies of every rolling window after its time: those
    windows are recomputed (found by a randomized test: they kept their old efficiencies)."""
    elastic = RunSpec(name="el", start=START.timestamp(), steps=300, restarts=1, finished=False, eval_every=100,
                      checkpoint_every=70, elastic_slices=3)
    entries = list(log_entries(elastic, "proj"))
    run_id = "proj/el"
    cut = [at(e) for e in entries if "job_start_time" in e["jsonPayload"]][1] + dt.timedelta(minutes=3)
    first = [e for e in entries if at(e) <= cut]
    db = tmp_path / "w.duckdb"
    run_cli("load", "--duckdb", db, write_ndjson(tmp_path / "first.ndjson", first))
    dbt_build(db, cut + dt.timedelta(minutes=1), *ROLLING)
    window = ("select stepping_slice_efficiency from fct_goodput_rolling where run_id = ? and window_seconds = 3600 "
              "order by window_end_epoch limit 1 offset 1")
    before = query(db, window, [run_id])

    late = json.loads(json.dumps(next(e for e in entries if "elastic_slice_counts_timestamp" in e["jsonPayload"])))
    late["insertId"] = "late-counts"
    late["timestamp"] = (cut + dt.timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    late["jsonPayload"].update({"active_slices": 1, "available_slices": 2,
                                "elastic_slice_counts_timestamp": START.timestamp() + 200.0})
    as_of = cut + dt.timedelta(minutes=2)
    run_cli("load", "--duckdb", db, write_ndjson(tmp_path / "late.ndjson", [late]))
    dbt_build(db, as_of, *ROLLING)
    assert query(db, "select appends_after_seq is not null from int_goodput__runs_to_rebuild where run_id = ?",
                 [run_id]) == [(True,)]
    assert query(db, window, [run_id]) != before  # the early window's efficiency moved

    assert_equals_a_build_from_scratch(db, first + [late], as_of, tmp_path / "scratch.duckdb")
