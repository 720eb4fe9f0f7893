"""`goodput-loader report --html FILE`: the marts as one self-contained HTML page of charts.

Everything the page needs is inside it: the data as JSON and Chart.js (MIT, vendored in assets/: widely
used, no dependencies, a canvas per chart), so the file opens offline, can be mailed or kept as a build
artifact. Long series are thinned in SQL before they reach the page (at most MAX_POINTS points per
line, the slowest steps always kept), so a run of a million steps opens as fast as a short one.

Fleet: Goodput per run (sorted, running / stalled / invalid marked), where the fleet's time went (each
bucket's share of the elapsed time of all valid runs) and the fleet's Goodput per day. Per run: rolling
Goodput over time for each window size with its disruptions marked, Badput by bucket over time (the
smallest window, stacked), step time per step with the ideal step time, and the cumulative breakdown.
"""

from __future__ import annotations

import html
import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

from goodput_loader.errors import LoaderError
from goodput_loader.runs import labels, select_runs
from goodput_loader.warehouses.duckdb import connect, failed_nodes, fetch_rows
from goodput_loader.warehouses.marts import refuse_failed_build

# points per line on the page; a step is an outlier (always kept) at twice the ideal step time
MAX_POINTS = 600
MAX_STEP_POINTS = 1500
OUTLIER_FACTOR = 2.0
# per-run sections on a fleet page (the lowest Goodput first): more would make the page slow to open
MAX_RUN_SECTIONS = 40


def _thinned(columns: str, sql_from: str, partition: str, order: str, limit: int) -> str:
    """`columns` of sql_from, every k-th row of each partition in order, k chosen so that at most about
    `limit` remain (the last row of each partition always kept: a chart ends where the data ends)."""
    return f"""
        select {columns} from (
            select {columns}, row_number() over (partition by {partition} order by {order}) as row_no,
                   count(*) over (partition by {partition}) as row_count
            from {sql_from}
        )
        where (row_no - 1) % greatest(1, ceil(row_count / {limit})) = 0 or row_no = row_count
        order by {partition}, {order}"""


def load_html_data(duckdb_path: str, runs: list[str], allow_failed_build: bool = False) -> dict[str, Any]:
    """The fleet's and each selected run's series, thinned, from the DuckDB warehouse's marts."""
    if not Path(duckdb_path).exists():
        raise LoaderError(f"{duckdb_path} does not exist: load entries and run `goodput-loader build` first")
    con = connect(duckdb_path, read_only=True)
    try:
        if not allow_failed_build:
            refuse_failed_build(failed_nodes(con), "report")
        cumulative = select_runs(fetch_rows(
            con, "select * from main.fct_goodput_cumulative order by goodput_pct nulls first, run_id", []), runs)
        ids = [run["run_id"] for run in cumulative]
        # a run without a valid Goodput is named with its reason, not charted: its located values are not numbers
        # anyone should read
        sections = [run["run_id"] for run in cumulative if run["goodput_pct"] is not None][:MAX_RUN_SECTIONS]
        ids_param: list[Any] = [ids]
        sections_param: list[Any] = [sections]
        breakdown = fetch_rows(con, """
            select run_id, badput_type, custom_badput_event_type, gcm_badput_source, badput_type_id,
                   counts_against_goodput, badput_seconds, badput_pct
            from main.fct_badput_breakdown where run_id in (select unnest(?))
            order by run_id, badput_type_id, custom_badput_event_type""", ids_param)
        rolling = fetch_rows(con, _thinned(
            "run_id, window_seconds, window_end_epoch, goodput_pct",
            "main.fct_goodput_rolling where run_id in (select unnest(?))", "run_id, window_seconds",
            "window_end_epoch", MAX_POINTS), sections_param)
        # Badput over time: the smallest window of each run, at the window ends kept above
        smallest: dict[str, int] = {}
        for row in rolling:
            smallest[row["run_id"]] = min(smallest.get(row["run_id"], row["window_seconds"]), row["window_seconds"])
        kept = [row for row in rolling if row["window_seconds"] == smallest[row["run_id"]]]
        rolling_badput = fetch_rows(con, """
            select badput.run_id, badput.window_seconds, badput.window_end_epoch, badput.gcm_badput_source,
                   badput.badput_pct
            from main.fct_badput_rolling as badput
            inner join (select unnest(?) as run_id, unnest(?) as window_seconds, unnest(?) as window_end_epoch) as kept
                on kept.run_id = badput.run_id and kept.window_seconds = badput.window_seconds
                and kept.window_end_epoch = badput.window_end_epoch
            where badput.counts_against_goodput
            order by badput.run_id, badput.badput_type_id, badput.gcm_badput_source, badput.window_end_epoch""",
            [[row["run_id"] for row in kept], [row["window_seconds"] for row in kept],
             [row["window_end_epoch"] for row in kept]])
        disruptions = fetch_rows(con, """
            select run_id, disruption_no, epoch(resumed_at) as resumed_epoch, resume_step, wasted_seconds,
                   infrastructure_recovery_seconds
            from main.fct_disruptions where run_id in (select unnest(?)) order by run_id, disruption_no""",
            sections_param)
        steps = fetch_rows(con, f"""
            select run_id, step_count, step_start_epoch, duration_seconds, is_outlier from (
                select steps.*, row_number() over (partition by steps.run_id order by steps.step_start_epoch)
                           as row_no,
                       count(*) over (partition by steps.run_id) as row_count,
                       steps.duration_seconds >= {OUTLIER_FACTOR} * runs.ideal_step_seconds
                           and runs.ideal_step_seconds > 0 as is_outlier
                from main.fct_steps as steps
                inner join main.fct_goodput_cumulative as runs on runs.run_id = steps.run_id
                where steps.run_id in (select unnest(?)) and steps.interval_class = 'productive'
            )
            where is_outlier or (row_no - 1) % greatest(1, ceil(row_count / {MAX_STEP_POINTS})) = 0
            order by run_id, step_start_epoch""", sections_param)
        daily = fetch_rows(con, "select day, runs, running_runs, goodput_pct, elapsed_seconds "
                                "from main.fct_goodput_fleet_daily order by day", [])
        fleet_badput = fetch_rows(con, """
            select badput.gcm_badput_source, min(badput.badput_type_id) as badput_type_id,
                   sum(badput.badput_seconds) / nullif((select sum(elapsed_seconds)
                                                        from main.fct_goodput_fleet_daily), 0) * 100 as share_pct
            from main.fct_badput_fleet_daily as badput
            where badput.counts_against_goodput
            group by badput.gcm_badput_source
            order by share_pct desc, badput.gcm_badput_source""", [])
    finally:
        con.close()
    return _assemble(cumulative, sections, breakdown, rolling, rolling_badput, disruptions, steps, daily,
                     fleet_badput)


def _assemble(cumulative: list[dict[str, Any]], sections: list[str], breakdown: list[dict[str, Any]],
              rolling: list[dict[str, Any]], rolling_badput: list[dict[str, Any]], disruptions: list[dict[str, Any]],
              steps: list[dict[str, Any]], daily: list[dict[str, Any]],
              fleet_badput: list[dict[str, Any]]) -> dict[str, Any]:
    """The page's data: plain lists of numbers, times as epoch milliseconds (what Chart.js plots)."""
    names = labels(cumulative)

    def grouped(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            out.setdefault(row["run_id"], []).append(row)
        return out

    by_breakdown, by_rolling, by_badput = grouped(breakdown), grouped(rolling), grouped(rolling_badput)
    by_disruption, by_steps = grouped(disruptions), grouped(steps)
    runs = []
    for run in cumulative:
        status = ("invalid" if not run["is_valid"] else "stalled" if run["is_stalled"]
                  else "running" if run["is_running"] else "finished")
        entry: dict[str, Any] = {"run_id": run["run_id"], "label": names[run["run_id"]], "status": status,
                                 "goodput_pct": run["goodput_pct"], "invalid_reason": run["invalid_reason"]}
        if run["run_id"] in sections:
            windows: dict[int, dict[str, list]] = {}
            for row in by_rolling.get(run["run_id"], []):
                series = windows.setdefault(int(row["window_seconds"]), {"x": [], "y": []})
                series["x"].append(row["window_end_epoch"] * 1000)
                series["y"].append(row["goodput_pct"])
            buckets: dict[str, dict[str, list]] = {}
            for row in by_badput.get(run["run_id"], []):
                series = buckets.setdefault(row["gcm_badput_source"], {"x": [], "y": []})
                series["x"].append(row["window_end_epoch"] * 1000)
                series["y"].append(row["badput_pct"])
            entry.update({
                "ideal_step_seconds": run["ideal_step_seconds"],
                "breakdown": [{"source": row["gcm_badput_source"], "pct": row["badput_pct"],
                               "counts": row["counts_against_goodput"]}
                              for row in by_breakdown.get(run["run_id"], [])],
                "rolling": [{"window_seconds": size, **series} for size, series in sorted(windows.items())],
                "badput_window_seconds": min(windows) if windows else None,
                # a bucket the run never had would only crowd the legend
                "badput": [{"source": source, **series} for source, series in buckets.items()
                           if any(value for value in series["y"])],
                "disruptions": [{"x": row["resumed_epoch"] * 1000, "resume_step": row["resume_step"],
                                 "wasted_seconds": row["wasted_seconds"],
                                 "recovery_seconds": row["infrastructure_recovery_seconds"]}
                                for row in by_disruption.get(run["run_id"], [])],
                "steps": {"step": [row["step_count"] for row in by_steps.get(run["run_id"], [])],
                          "seconds": [row["duration_seconds"] for row in by_steps.get(run["run_id"], [])],
                          "outlier": [bool(row["is_outlier"]) for row in by_steps.get(run["run_id"], [])]},
            })
        runs.append(entry)
    return {"runs": runs, "sections": len(sections), "selected": len(cumulative),
            "daily": [{"day": row["day"].isoformat(), "goodput_pct": row["goodput_pct"], "runs": row["runs"]}
                      for row in daily],
            "fleet_badput": [{"source": row["gcm_badput_source"], "pct": row["share_pct"]} for row in fleet_badput]}


def render_html(data: dict[str, Any]) -> str:
    """The page: the template with the data and Chart.js inlined, in one pass (so no inserted text, a run
    name included, is ever read as a placeholder)."""
    assets = resources.files("goodput_loader") / "assets"
    chart_js = (assets / "chart.umd.min.js").read_text(encoding="utf-8")
    page = (assets / "report.html").read_text(encoding="utf-8")
    # inside <script>, "</" must not close the element early (run names are the user's text)
    values = {"<!--TITLE-->": html.escape(_title(data)),
              "/*CHART_JS*/": chart_js.replace("</script", "<\\/script"),
              "/*DATA*/": json.dumps(data, default=str).replace("</", "<\\/")}
    return re.sub("|".join(re.escape(marker) for marker in values), lambda m: values[m.group()], page)


def _title(data: dict[str, Any]) -> str:
    if data["selected"] == 1:
        return f"Goodput of {data['runs'][0]['label']}"
    return f"Goodput of {data['selected']} runs"


def write_html(duckdb_path: str, path: str, runs: list[str], allow_failed_build: bool = False) -> dict[str, Any]:
    """Write the page; return what it holds (runs, per-run sections, bytes)."""
    data = load_html_data(duckdb_path, runs, allow_failed_build)
    page = render_html(data)
    try:
        Path(path).write_text(page, encoding="utf-8")
    except OSError as exc:
        raise LoaderError(f"cannot write {path}: {exc.strerror or exc}") from exc
    return {"path": path, "runs": data["selected"], "run_sections": data["sections"], "bytes": len(page.encode())}
