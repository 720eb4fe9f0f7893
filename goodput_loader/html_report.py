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
from decimal import Decimal
from importlib import resources
from pathlib import Path
from typing import Any

from goodput_loader.errors import LoaderError
from goodput_loader.runs import labels, select_runs
from goodput_loader.warehouses.marts import Marts, refuse_failed_build

# points per line on the page; a step is an outlier (always kept) at twice the ideal step time
MAX_POINTS = 600
MAX_STEP_POINTS = 1500
OUTLIER_FACTOR = 2.0
# per-run sections on a fleet page (the lowest Goodput first): more would make the page slow to open
MAX_RUN_SECTIONS = 40


def _thinned(columns: str, source: str, partition: str, order: str, limit: int, keep: str = "false") -> str:
    """`columns` of `source` (a from clause, {t} and {runs} as Marts.rows takes them), about `limit` rows
    of each partition evenly spread in order: the first row of each of `limit` equal stretches, and the
    last row (a chart ends where the data ends), and every row where `keep` holds. Portable SQL, so the
    page reads DuckDB and BigQuery alike."""
    return f"""
        select {columns} from (
            select {columns},
                   row_number() over (partition by {partition} order by {order}) as row_no,
                   count(*) over (partition by {partition}) as row_count,
                   {keep} as is_kept
            from {source}
        ) as numbered
        where is_kept or row_no = row_count
            or floor((row_no - 1) * {limit} / row_count) > floor((row_no - 2) * {limit} / row_count)
        order by {partition}, {order}"""


def load_html_data(marts: Marts, runs: list[str], allow_failed_build: bool = False) -> dict[str, Any]:
    """The fleet's and each selected run's series, thinned, from the marts of either warehouse."""
    if not allow_failed_build:
        refuse_failed_build(marts.failed_nodes(), "report")
    cumulative = select_runs(marts.rows(
        "select * from {t}fct_goodput_cumulative order by goodput_pct nulls first, run_id", []), runs)
    # a run without a valid Goodput is named with its reason, not charted: its located values are not numbers
    # anyone should read
    sections = [run["run_id"] for run in cumulative if run["goodput_pct"] is not None][:MAX_RUN_SECTIONS]
    breakdown = marts.rows("""
        select run_id, badput_type, custom_badput_event_type, gcm_badput_source, badput_type_id,
               counts_against_goodput, badput_seconds, badput_pct
        from {t}fct_badput_breakdown where run_id in {runs}
        order by run_id, badput_type_id, custom_badput_event_type""", sections)
    rolling = marts.rows(_thinned(
        "run_id, window_seconds, window_end_epoch, goodput_pct", "{t}fct_goodput_rolling where run_id in {runs}",
        "run_id, window_seconds", "window_end_epoch", MAX_POINTS), sections)
    # Badput over time, in each run's smallest window: every bucket has a row in every window, so the same
    # thinning keeps the same window ends as the Goodput line's
    rolling_badput = marts.rows(_thinned(
        "run_id, window_seconds, window_end_epoch, gcm_badput_source, badput_type_id, badput_pct",
        """(select badput.* from {t}fct_badput_rolling as badput
            inner join (select run_id, min(window_seconds) as window_seconds from {t}fct_goodput_rolling
                        where run_id in {runs} group by run_id) as smallest
                on smallest.run_id = badput.run_id and smallest.window_seconds = badput.window_seconds
            where badput.counts_against_goodput) as badput""",
        "run_id, window_seconds, badput_type_id, gcm_badput_source", "window_end_epoch", MAX_POINTS), sections)
    disruptions = marts.rows("""
        select run_id, disruption_no, resumed_at, resume_step, wasted_seconds, infrastructure_recovery_seconds
        from {t}fct_disruptions where run_id in {runs} order by run_id, disruption_no""", sections)
    steps = marts.rows(_thinned(
        "run_id, step_count, step_start_epoch, duration_seconds, is_outlier",
        f"""(select steps.run_id, steps.step_count, steps.step_start_epoch, steps.duration_seconds,
                    coalesce(runs.ideal_step_seconds > 0
                             and steps.duration_seconds >= {OUTLIER_FACTOR} * runs.ideal_step_seconds, false)
                        as is_outlier
             from {{t}}fct_steps as steps
             inner join {{t}}fct_goodput_cumulative as runs on runs.run_id = steps.run_id
             where steps.run_id in {{runs}} and steps.interval_class = 'productive') as steps""",
        "run_id", "step_start_epoch", MAX_STEP_POINTS, keep="is_outlier"), sections)
    daily = marts.rows("select day, runs, running_runs, goodput_pct, elapsed_seconds "
                       "from {t}fct_goodput_fleet_daily order by day", [])
    fleet_badput = marts.rows("""
        select gcm_badput_source, min(badput_type_id) as badput_type_id,
               sum(badput_seconds) / nullif((select sum(elapsed_seconds) from {t}fct_goodput_fleet_daily), 0) * 100
                   as share_pct
        from {t}fct_badput_fleet_daily
        where counts_against_goodput
        group by gcm_badput_source
        order by share_pct desc, gcm_badput_source""", [])
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
                "disruptions": [{"x": row["resumed_at"].timestamp() * 1000, "resume_step": row["resume_step"],
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
              "/*DATA*/": json.dumps(data, default=_plain).replace("</", "<\\/")}
    return re.sub("|".join(re.escape(marker) for marker in values), lambda m: values[m.group()], page)


def _plain(value: Any) -> Any:
    """What json cannot write itself: BigQuery's NUMERIC as a number, anything else as text."""
    return float(value) if isinstance(value, Decimal) else str(value)


def _title(data: dict[str, Any]) -> str:
    if data["selected"] == 1:
        return f"Goodput of {data['runs'][0]['label']}"
    return f"Goodput of {data['selected']} runs"


def write_html(marts: Marts, path: str, runs: list[str], allow_failed_build: bool = False) -> dict[str, Any]:
    """Write the page; return what it holds (runs, per-run sections, bytes)."""
    try:
        data = load_html_data(marts, runs, allow_failed_build)
    finally:
        marts.close()
    page = render_html(data)
    try:
        Path(path).write_text(page, encoding="utf-8")
    except OSError as exc:
        raise LoaderError(f"cannot write {path}: {exc.strerror or exc}") from exc
    return {"path": path, "runs": data["selected"], "run_sections": data["sections"], "bytes": len(page.encode())}
