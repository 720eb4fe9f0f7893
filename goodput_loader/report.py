"""Read the marts back for `goodput-loader report` and `rejects`.

The report reads the marts read-only through the ``Marts`` protocol (DuckDB, so it
can run beside a notebook, or the BigQuery dataset dbt builds), with the same
portable queries for both; it reads only what a `build` produced and says so
when the marts are missing. Rejected entries are the DuckDB loader's.
"""

from __future__ import annotations

import sys
from typing import Any

from rich.console import Console
from rich.markup import escape  # run names and custom event types are the user's text, never markup
from rich.table import Table

from goodput_loader.runs import labels, select_runs
from goodput_loader.warehouses.duckdb import connect, fetch_rows
from goodput_loader.warehouses.marts import Marts, refuse_failed_build


def load_report(marts: Marts, runs: list[str], allow_failed_build: bool = False) -> dict[str, Any]:
    """Every selected run's cumulative row with its Badput breakdown and latest windows, from the marts of
    either warehouse (closed when read).

    `runs` holds --run values: a run name (every project's run of that name) or PROJECT/RUN."""
    try:
        if not allow_failed_build:
            refuse_failed_build(marts.failed_nodes(), "report")
        cumulative = select_runs(
            marts.rows("select * from {t}fct_goodput_cumulative order by run_name, project_id", []), runs)
        selected = [row["run_id"] for row in cumulative]
        breakdown = marts.rows(
            """select run_id, badput_type, custom_badput_event_type, badput_seconds, badput_pct,
                      badput_type_id, gcm_badput_source, counts_against_goodput
               from {t}fct_badput_breakdown where run_id in {runs}
               order by run_id, badput_type_id, custom_badput_event_type""", selected)
        rolling = marts.rows(
            "select * from {t}fct_goodput_rolling_latest where run_id in {runs} order by run_id, window_seconds",
            selected)
        rolling_badput = marts.rows(
            """select run_id, window_seconds, badput_type, custom_badput_event_type, badput_seconds, badput_pct,
                      badput_type_id, gcm_badput_source, counts_against_goodput
               from {t}fct_badput_rolling_latest where run_id in {runs}
               order by run_id, window_seconds, badput_type_id, custom_badput_event_type""", selected)
    finally:
        marts.close()
    by_run: dict[str, list[dict[str, Any]]] = {}
    for row in breakdown:
        by_run.setdefault(row.pop("run_id"), []).append(row)
    window_badput: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for row in rolling_badput:
        window_badput.setdefault((row.pop("run_id"), row.pop("window_seconds")), []).append(row)
    windows: dict[str, list[dict[str, Any]]] = {}
    for row in rolling:
        row["badput"] = window_badput.get((row["run_id"], row["window_seconds"]), [])
        windows.setdefault(row["run_id"], []).append(row)
    names = labels(cumulative)
    return {"runs": [{**row, "label": names[row["run_id"]], "badput": by_run.get(row["run_id"], []),
                      "windows": windows.get(row["run_id"], [])}
                     for row in cumulative]}


def window_label(seconds: float) -> str:
    """3600 -> '1h', 86400 -> '1d', as the library names its windows."""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"


def _fmt_seconds(value: float | None) -> str:
    if value is None:
        return "-"
    hours, rest = divmod(float(value), 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{int(hours)}h{int(minutes):02d}m{seconds:04.1f}s" if hours else f"{int(minutes)}m{seconds:04.1f}s"


def _share(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def render_report(data: dict[str, Any], console: Console | None = None) -> None:
    """Two tables: Goodput per run, then Badput % per bucket and run."""
    # Wide enough for the tables when piped (rich would assume 80 columns).
    console = console or Console(width=None if sys.stdout.isatty() else 160)
    runs = data["runs"]
    if not runs:
        console.print("no runs in the warehouse: load some entries, then `goodput-loader build`")
        return
    summary = Table(title="Goodput per run", header_style="bold")
    for column in ["run", "status", "elapsed", "productive", "goodput %", "max step", "disruptions",
                   "ideal step s", "step dev s"]:
        summary.add_column(column, justify="left" if column in ("run", "status") else "right")
    for run in runs:
        status = "running" if run["is_running"] else "finished"
        if run.get("is_stalled"):
            silent = (run["evaluated_at"] - run["last_entry_at"]).total_seconds()
            status = f"stalled: silent for {_fmt_seconds(silent)}"
        if not run["is_valid"]:
            status = f"invalid: {run['invalid_reason']}"
        summary.add_row(
            escape(run["label"]),
            escape(status),
            _fmt_seconds(run["total_elapsed_seconds"]),
            _fmt_seconds(run["productive_seconds"]),
            "-" if run["goodput_pct"] is None else f"{run['goodput_pct']:.2f}",
            str(run["max_productive_step"]),
            str(run["disruptions"]),
            # the marts hold the library's 0.0 where it has no step deviation: a reader is told "-"
            "-" if run["mean_step_deviation_seconds"] is None else f"{run['ideal_step_seconds']:.3f}",
            "-" if run["mean_step_deviation_seconds"] is None else f"{run['step_time_deviation_seconds']:.3f}",
        )
    console.print(summary)

    # Buckets in the catalogue's order (badput_type_id), custom event types by name.
    rows = sorted((row for run in runs for row in run["badput"]),
                  key=lambda row: (row["badput_type_id"], row["custom_badput_event_type"] or ""))
    labels = list(dict.fromkeys(row["gcm_badput_source"] for row in rows))
    not_counted = list(dict.fromkeys(row["badput_type"] for row in rows if not row["counts_against_goodput"]))
    title = "Badput % of elapsed time"
    if not_counted:
        title += f" ({', '.join(not_counted)} overlaps training: not counted)"
    badput = Table(title=title, header_style="bold")
    badput.add_column("badput")
    for run in runs:
        badput.add_column(escape(run["label"]), justify="right")
    for label in labels:
        cells = []
        for run in runs:
            match = [r for r in run["badput"] if r["gcm_badput_source"] == label]
            cells.append(f"{match[0]['badput_pct']:.2f}" if match else "-")
        badput.add_row(escape(label), *cells)
    console.print(badput)

    elastic = [run for run in runs if run.get("stepping_slice_efficiency") is not None]
    if elastic:
        # ElasticGoodputCalculator's figures: time before the first slice-count record counts as 0
        slices = Table(title="Elastic runs: slice efficiency over the job (observed: over the time slice counts were "
                             "known); Goodput net of waits and re-initialisation (the library also counts them "
                             "as productive)",
                       header_style="bold")
        for column in ["run", "stepping", "available", "stepping observed", "available observed", "goodput %",
                       "goodput % net"]:
            slices.add_column(column, justify="left" if column == "run" else "right")

        for run in elastic:
            # observed and net: corrected figures beside the library's (docs/semantics.md#elastic-runs)
            slices.add_row(escape(run["label"]), _share(run["stepping_slice_efficiency"]),
                           _share(run["available_slice_efficiency"]), _share(run["stepping_slice_efficiency_observed"]),
                           _share(run["available_slice_efficiency_observed"]), _share(run["goodput_pct"], 2),
                           _share(run["goodput_pct_net_of_elastic"], 2))
        console.print(slices)

    rolling = Table(title="Rolling Goodput: the last window of each size, up to the job end or now "
                          "(what the library's monitor reports)", header_style="bold")
    columns = ["run", "window", "elapsed", "goodput %", "disruptions", "largest badput"]
    if elastic:
        # the elastic calculator's efficiencies over each window (fct_goodput_rolling_latest)
        columns += ["stepping eff.", "available eff."]
    for column in columns:
        rolling.add_column(column, justify="left" if column in ("run", "window", "largest badput") else "right")
    for run in runs:
        for window in run["windows"]:
            counted = [b for b in window["badput"] if b["counts_against_goodput"]]
            top = max(counted, key=lambda b: b["badput_seconds"], default=None)
            top_label = "-"
            if top is not None and top["badput_seconds"] > 0:
                top_label = escape(f"{top['gcm_badput_source']} {top['badput_pct']:.2f}%")
            rolling.add_row(
                escape(run["label"]),
                window_label(window["window_seconds"]),
                _fmt_seconds(window["elapsed_seconds"]),
                "-" if window["goodput_pct"] is None else f"{window['goodput_pct']:.2f}",
                str(window["disruptions"]),
                top_label,
                *([_share(window["stepping_slice_efficiency"]), _share(window["available_slice_efficiency"])]
                  if elastic else []),
            )
    console.print(rolling)


def render_interval(data: dict[str, Any], console: Console | None = None) -> None:
    """One interval's Goodput line and its Badput buckets."""
    console = console or Console(width=None if sys.stdout.isatty() else 160)
    goodput = "-" if data["goodput_pct"] is None else f"{data['goodput_pct']:.2f} %"
    console.print(f"{escape(data['run_id'])}: {data['counted_from']} .. {data['counted_until']}  "
                  f"elapsed {_fmt_seconds(data['elapsed_seconds'])}  productive "
                  f"{_fmt_seconds(data['productive_seconds'])}  goodput {goodput}  "
                  f"disruptions {data['disruptions']}  ({data['semantics']} semantics)")
    if data.get("stepping_slice_efficiency") is not None:
        console.print(f"slice efficiency: stepping {data['stepping_slice_efficiency']:.4f}  "
                      f"available {data['available_slice_efficiency']:.4f}")
    table = Table(header_style="bold")
    for column in ["badput", "seconds", "% of elapsed"]:
        table.add_column(column, justify="left" if column == "badput" else "right")
    for row in sorted(data["badput"], key=lambda r: (r["badput_type_id"], r["custom_badput_event_type"] or "")):
        name = row["badput_type"] + (f".{row['custom_badput_event_type']}" if row["custom_badput_event_type"] else "")
        pct = "-" if row["badput_pct"] is None else f"{row['badput_pct']:.2f}"
        table.add_row(escape(name), f"{row['badput_seconds']:.3f}", pct)
    console.print(table)


def rejected_rows(duckdb_path: str, limit: int) -> list[dict[str, Any]]:
    con = connect(duckdb_path, read_only=True)
    try:
        return fetch_rows(
            con,
            "select source, location, reason, raw, rejected_at from goodput_raw.rejected_entries "
            "order by rejected_at desc, location limit ?",
            [limit],
        )
    finally:
        con.close()
