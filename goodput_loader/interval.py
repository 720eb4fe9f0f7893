"""Goodput of one run over an arbitrary interval: `goodput-loader interval`.

Two semantics (docs/semantics.md, "Interval Goodput"):
- library (default): what GoodputCalculator.get_job_goodput_interval returns for the window, its whole
  computation rerun over the window's entries (goodput_loader/library_windows.py);
- additive: the cumulative attribution located in time, from the dbt macro `goodput_interval`
  (macros/rolling/interval.sql) over the built curves, so intervals that partition a job add up to it.
Both are SQL run through dbt, one definition for the command line and for SQL users.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from goodput_loader.dbt import project_args
from goodput_loader.entries import ELASTIC_TIME_KEYS
from goodput_loader.errors import LoaderError
from goodput_loader.library_windows import Window, library_window_rows, plain
from goodput_loader.library_windows import iso as _iso

SEMANTICS = ("library", "additive")


def interval_goodput(duckdb_path: str, run: str, start: dt.datetime, end: dt.datetime,
                     project_dir: str | None = None, semantics: str = "library") -> dict[str, Any]:
    """Productive time, Badput per bucket and disruptions of `run` (a run name, or PROJECT/RUN
    when the name is used in several projects) inside [start, end], with either semantics."""
    if end <= start:
        raise LoaderError(f"--end {_iso(end)} is not after --start {_iso(start)}")
    if semantics == "library":
        return library_interval(duckdb_path, run, start, end, project_dir)
    if semantics != "additive":
        raise LoaderError(f"semantics {semantics!r}: expected one of {', '.join(SEMANTICS)}")
    return additive_interval(duckdb_path, run, start, end, project_dir)


def _one_run(rows: list[dict[str, Any]], run: str) -> str:
    """The run_id the rows are of; a name several projects use is an error."""
    run_ids = sorted({r["run_id"] for r in rows if r["run_id"]})
    if len(run_ids) > 1:
        raise LoaderError(f"run name {run!r} is used in several projects ({', '.join(run_ids)}): "
                          "name one as --run PROJECT/RUN")
    return run_ids[0] if run_ids else run


def _result(rows: list[dict[str, Any]], run_id: str, semantics: str, start: dt.datetime,
            end: dt.datetime) -> dict[str, Any]:
    """The interval as `interval --json` prints it, from the rows of either macro (one per measure)."""
    first = rows[0]
    measures = {(r["measure"], r["custom_badput_event_type"]): r for r in rows}
    productive = measures[("PRODUCTIVE", None)]
    result = {
        "run_id": run_id,
        "semantics": semantics,
        "requested_start": _iso(start),
        "requested_end": _iso(end),
        "counted_from": _iso(first["counted_from_at"].replace(tzinfo=dt.timezone.utc)),
        "counted_until": _iso(first["counted_until_at"].replace(tzinfo=dt.timezone.utc)),
        "elapsed_seconds": first["elapsed_seconds"],
        "productive_seconds": productive["seconds"],
        "goodput_pct": productive["pct"],
        "disruptions": int(round(measures[("DISRUPTIONS", None)]["seconds"])),
        "badput": [
            {"badput_type": r["measure"], "custom_badput_event_type": r["custom_badput_event_type"],
             "badput_type_id": r["badput_type_id"], "counts_against_goodput": r["counts_against_goodput"],
             "badput_seconds": r["seconds"], "badput_pct": r["pct"]}
            for r in rows if r["measure"] not in ("PRODUCTIVE", "DISRUPTIONS")
        ],
    }
    if "max_productive_step" in first:
        result["max_productive_step"] = int(first["max_productive_step"])
    if first.get("stepping_slice_efficiency") is not None:
        # an elastic run's slice efficiencies over the interval (ElasticGoodputCalculator's figures)
        result["stepping_slice_efficiency"] = first["stepping_slice_efficiency"]
        result["available_slice_efficiency"] = first["available_slice_efficiency"]
    return result


def _landed_runs(duckdb_path: str, run: str) -> dict[str, bool]:
    """The landed runs `run` names (its run_id, or every project's run of that name), whether or not
    they have entries in the window, each with whether it is elastic.

    The library's user picks the calculator for the job, not for a window: a run with any
    ElasticGoodputRecorder entry the library reads is measured by ElasticGoodputCalculator in every
    window, even one without elastic entries (its three buckets are then 0)."""
    import duckdb

    from goodput_loader.warehouses.duckdb import connect

    elastic = " or ".join(f"json_exists(payload, '$.{key}')" for key in ELASTIC_TIME_KEYS)
    con = connect(duckdb_path, read_only=True)
    try:
        rows = con.execute(
            f"select log_name, run_name, bool_or(severity = 'INFO' and job_name_matches and ({elastic})) "
            "from goodput_raw.log_entries where run_name = ? or run_name = ? group by all",
            [run, run.split("/", 1)[-1]]).fetchall()
    except duckdb.CatalogException:  # nothing landed yet
        rows = []
    finally:
        con.close()
    ids: dict[str, bool] = {}
    for log_name, run_name, is_elastic in rows:
        run_id = f"{log_name.split('/')[1]}/{run_name}"
        ids[run_id] = ids.get(run_id, False) or bool(is_elastic)
    if run in ids:
        return {run: ids[run]}
    return {run_id: is_elastic for run_id, is_elastic in sorted(ids.items()) if run_id.split("/", 1)[1] == run}


def library_interval(duckdb_path: str, run: str, start: dt.datetime, end: dt.datetime,
                     project_dir: str | None = None) -> dict[str, Any]:
    """What get_job_goodput_interval(start, end) returns for the run; LoaderError where it raises."""
    if not Path(duckdb_path).exists():
        raise LoaderError(f"{duckdb_path} does not exist: load entries first (goodput-loader load ...)")
    # a name several projects use is refused even when only one of its runs has entries in the window
    landed = _landed_runs(duckdb_path, run)
    _one_run([{"run_id": run_id} for run_id in landed], run)
    run_id, elastic = next(iter(landed.items()), (run, None))
    rows = library_window_rows(duckdb_path, [Window(run_id, start, end, elastic=elastic)], project_dir)
    run_id = _one_run(rows, run)
    if rows[0]["invalid_reason"]:
        # the library raises ValueError here (its monitor sends nothing for the window)
        raise LoaderError(f"no Goodput for run {run!r} between {_iso(start)} and {_iso(end)}: the library "
                          f"raises \"{rows[0]['invalid_reason']}\"")
    return _result(rows, run_id, "library", start, end)


def additive_interval(duckdb_path: str, run: str, start: dt.datetime, end: dt.datetime,
                      project_dir: str | None = None) -> dict[str, Any]:
    """The run's located attribution inside [start, end] (macro goodput_interval over the built marts)."""
    from dbt.cli.main import dbtRunner

    if not Path(duckdb_path).exists():
        raise LoaderError(f"{duckdb_path} does not exist: load entries and run `goodput-loader build` first")
    inline = "{{ goodput_interval(%r, %r, %r) }}" % (run, _iso(start), _iso(end))
    result = dbtRunner().invoke([
        "--log-level", "none", "show", "--inline", inline, "--limit", "-1", *project_args(duckdb_path, project_dir),
    ])
    if not result.success:
        detail = str(result.exception) if result.exception else "; ".join(
            str(r.message) for r in getattr(result.result, "results", []) or [])
        if "does not exist" in detail or "Catalog Error" in detail:
            detail += " (run `goodput-loader build` first)"
        raise LoaderError(f"interval lookup failed: {detail}")
    table = result.result.results[0].agate_table
    rows = [{name: plain(value) for name, value in zip(table.column_names, row)} for row in table.rows]
    if not rows:
        raise LoaderError(f"no Goodput for run {run!r} between {_iso(start)} and {_iso(end)}: the run is not in "
                          "the marts, or has no job start, or the interval lies outside it")
    run_id = _one_run(rows, run)
    if rows[0]["invalid_reason"]:
        # the library raises ValueError for such a run, over any interval: no number is better than a wrong one
        raise LoaderError(f"run {run_id} has no valid Goodput: {rows[0]['invalid_reason']}")
    productive = next(r for r in rows if r["measure"] == "PRODUCTIVE")
    if productive["pct"] is None:
        raise LoaderError(f"no Goodput for run {run_id} between {_iso(start)} and {_iso(end)}: its productive "
                          f"time there ({productive['seconds']} s) is outside [0, {rows[0]['elapsed_seconds']}] s")
    return _result(rows, run_id, "additive", start, end)
