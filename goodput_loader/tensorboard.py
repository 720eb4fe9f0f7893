"""`goodput-loader tensorboard`: what the library's monitor writes to TensorBoard, from the marts.

GoodputMonitor (monitoring.py, 0.2.3) writes, at every poll, the job's Goodput (`goodput/goodput`) and its
Badput breakdown in % (`badput/<bucket>`, `badput/custom_badput_events/<type>`, lower case) at global step
= the max productive step, and every step's deviation from the ideal step time (`step_deviation`, at that
step), into `<tensorboard_dir>/goodput`. This writes the same tags, values and steps for every run of
the warehouse into `<logdir>/<run>/goodput`, with tensorboardX as the library does.

A warehouse has no polls: each export is one. It writes a run's Goodput and Badput when they differ from
what the last export wrote (a new build after new entries), and the deviation of the steps timed since
(the library rewrites every step at every poll; a step is written once here), so a scheduled export
appends only what is new and TensorBoard shows the run's history from the first export on. What was
written is kept in `<logdir>/goodput_warehouse_tensorboard.json`. A run whose Goodput the library cannot
compute (fct_goodput_cumulative.invalid_reason) gets nothing, as the monitor skips such a poll.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path
from typing import Any

from goodput_loader.errors import LoaderError
from goodput_loader.extras import require
from goodput_loader.runs import labels, select_runs
from goodput_loader.warehouses.marts import Marts, as_utc, refuse_failed_build

STATE_FILE = "goodput_warehouse_tensorboard.json"
# monitoring.py's _TENSORBOARD_GCS_SUBDIR and labels
SUBDIR = "goodput"
GOODPUT_TAG = "goodput/goodput"
STEP_DEVIATION_TAG = "step_deviation"


def badput_tag(row: dict[str, Any]) -> tuple[str, str]:
    """The tag and display name _log_tensorboard_scalars gives a breakdown key."""
    if row["custom_badput_event_type"] is not None:
        custom = row["custom_badput_event_type"].lower()
        return f"badput/{row['badput_type'].lower()}/{custom}", custom
    return f"badput/{row['badput_type'].lower()}", row["badput_type"].lower()


def _read_marts(marts: Marts, runs: list[str], allow_failed_build: bool) -> dict[str, Any]:
    """Each valid selected run's figures, its breakdown and its timed steps, from either warehouse (closed
    when read)."""
    try:
        if not allow_failed_build:
            refuse_failed_build(marts.failed_nodes(), "tensorboard")
        cumulative = select_runs(marts.rows(
            "select * from {t}fct_goodput_cumulative where invalid_reason is null order by run_id", []), runs)
        selected = [run["run_id"] for run in cumulative]
        badput = marts.rows("""
            select run_id, badput_type, custom_badput_event_type, badput_pct
            from {t}fct_badput_breakdown where run_id in {runs}
            order by run_id, badput_type_id, custom_badput_event_type""", selected)
        deviations = marts.rows("""
            select run_id, step_count, deviation_seconds, step_start_at
            from {t}fct_steps where run_id in {runs} and deviation_seconds is not null
            order by run_id, step_start_at, event_seq""", selected)
    finally:
        marts.close()
    return {"runs": cumulative, "badput": badput, "deviations": deviations}


def _epoch(value: dt.datetime) -> float:
    """A mart time (naive UTC from DuckDB, aware from BigQuery) in epoch seconds."""
    return as_utc(value).timestamp()


def _iso(value: dt.datetime) -> str:
    """A mart time as a naive UTC string that sorts as the time does (the state file's form, whichever
    warehouse wrote it)."""
    return as_utc(value).replace(tzinfo=None).isoformat(timespec="microseconds")


def require_writer() -> Any:
    """tensorboardX, as the library writes with it; a missing [tensorboard] extra is a LoaderError that says
    what to install."""
    return require("tensorboardX", "tensorboard", "goodput-loader tensorboard")


def export(marts: Marts, logdir: str, runs: list[str] | None = None,
           allow_failed_build: bool = False) -> list[dict[str, Any]]:
    """Write what is new since the last export for every (selected) run of the marts (DuckDB or BigQuery:
    warehouses.marts.open_marts); return, per run, its directory and how many Goodput/Badput and
    step-deviation points were written."""
    try:
        writer_module = require_writer()
    except LoaderError:
        marts.close()
        raise
    data = _read_marts(marts, list(runs or []), allow_failed_build)
    root = Path(logdir)
    state_path = root / STATE_FILE
    try:
        root.mkdir(parents=True, exist_ok=True)
        state = json.loads(state_path.read_text()) if state_path.exists() else {}
    except (OSError, ValueError) as exc:
        raise LoaderError(f"cannot use --logdir {logdir}: {exc}") from exc
    badput: dict[str, list[dict[str, Any]]] = {}
    for row in data["badput"]:
        badput.setdefault(row["run_id"], []).append(row)
    deviations: dict[str, list[dict[str, Any]]] = {}
    for row in data["deviations"]:
        deviations.setdefault(row["run_id"], []).append(row)
    names = labels(data["runs"])
    summary = []
    for run in data["runs"]:
        run_id = run["run_id"]
        written = state.get(run_id, {})
        # tag -> (value, display name), as _log_tensorboard_scalars writes them
        scalars = {GOODPUT_TAG: (float(run["goodput_pct"]), "goodput")}
        for row in badput.get(run_id, []):
            tag, display = badput_tag(row)
            scalars[tag] = (float(row["badput_pct"] or 0.0), display)
        snapshot = {"step": int(run["max_productive_step"]),
                    "scalars": {tag: value for tag, (value, _) in scalars.items()}}
        new_steps = [row for row in deviations.get(run_id, [])
                     if written.get("deviation_until") is None
                     or _iso(row["step_start_at"]) > written["deviation_until"]]
        changed = snapshot != written.get("snapshot")
        if changed or new_steps:
            try:
                writer = writer_module.SummaryWriter(str(root / names[run_id] / SUBDIR))
                try:
                    if changed:
                        at = _epoch(run["last_job_end_at"] or run["evaluated_at"])
                        for tag, (value, display) in scalars.items():
                            writer.add_scalar(tag, value, snapshot["step"], walltime=at, display_name=display)
                    for row in new_steps:
                        writer.add_scalar(STEP_DEVIATION_TAG, float(row["deviation_seconds"]),
                                          int(row["step_count"]), walltime=_epoch(row["step_start_at"]))
                    writer.flush()
                finally:
                    writer.close()
            except OSError as exc:  # full disk, no permission: what was written before stays in the state
                _write_state(state_path, state)
                raise LoaderError(f"cannot write TensorBoard events for {run_id} under {logdir}: "
                                  f"{exc.strerror or exc}") from exc
        state[run_id] = {"snapshot": snapshot,
                         "deviation_until": _iso(new_steps[-1]["step_start_at"]) if new_steps
                         else written.get("deviation_until")}
        summary.append({"run_id": run_id, "logdir": str(root / names[run_id] / SUBDIR),
                        "goodput_points": len(scalars) if changed else 0, "step_deviation_points": len(new_steps)})
    _write_state(state_path, state)
    return summary


def _write_state(path: Path, state: dict[str, Any]) -> None:
    """Replace the state file whole (a crash leaves the old one: the next export writes again)."""
    scratch = path.with_name(path.name + ".tmp")
    try:
        scratch.write_text(json.dumps(state, indent=1, sort_keys=True))
        os.replace(scratch, path)
    except OSError as exc:
        raise LoaderError(f"cannot write {path}: {exc.strerror or exc}") from exc
