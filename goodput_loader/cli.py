"""The ``goodput-loader`` command line.

Quiet by default (Unix habit: silence on success), ``--verbose`` for a summary
on stderr, ``--json`` for machine-readable output on stdout; a progress line on
stderr only when it is a terminal. Exit codes: 0 success, 1 a failure the user
can fix (message on stderr), 2 bad usage, 3 the load finished but rejected some
input (with ``--strict``).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
from pathlib import Path
from typing import Any, Callable

import click

from goodput_loader import __version__
from goodput_loader.errors import LoaderError
from goodput_loader.sinks.base import BATCH_LINES, DUCKDB_ROW_GROUP_ROWS

DEFAULT_DUCKDB = "goodput.duckdb"
EXIT_REJECTED = 3


def _parse_time(value: str | None, name: str) -> dt.datetime | None:
    if value is None:
        return None
    text = value.strip()
    if text.lower() == "now":
        return dt.datetime.now(dt.timezone.utc)
    try:
        parsed = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise click.BadParameter(f"{value!r} is not an ISO 8601 time (e.g. 2026-11-30T00:00:00Z)", param_hint=name) from exc
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.timezone.utc)


class _Context:
    def __init__(self, verbose: bool):
        self.verbose = verbose

    def info(self, message: str) -> None:
        if self.verbose:
            click.echo(message, err=True)


def _json_one_line_each(data: dict[str, Any], key: str) -> str:
    """data as indented JSON, except that each item of the list data[key] is one compact line.

    A dry run's requests reach tens of MB (a month of rolling windows: 66,000 points in 50 MB at L);
    json's indenting encoder is pure Python and took 1.8 s of a 12 s push to print them, the compact one
    is C. One request per line also suits grep, head and wc."""
    items = data.get(key)
    rest = {name: value for name, value in data.items() if name != key}
    if not items:
        return json.dumps(data, indent=2, default=str)
    lines = ",\n".join(f"    {json.dumps(item, default=str, separators=(',', ':'))}" for item in items)
    head = json.dumps(rest, indent=2, default=str)[:-2] + "," if rest else "{"  # the object left open
    return f"{head}\n  {json.dumps(key)}: [\n{lines}\n  ]\n}}"


def _run(fn: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return fn(*args, **kwargs)
    except LoaderError as exc:
        click.echo(f"goodput-loader: error: {exc}", err=True)
        sys.exit(exc.exit_code)


duckdb_option = click.option(
    "--duckdb",
    "duckdb_path",
    type=click.Path(dir_okay=False),
    default=lambda: os.environ.get("GOODPUT_DUCKDB", DEFAULT_DUCKDB),
    show_default=f"$GOODPUT_DUCKDB or {DEFAULT_DUCKDB}",
    help="DuckDB file of the warehouse (created if missing).",
)

project_dir_option = click.option(
    "--project-dir", type=click.Path(file_okay=False, exists=True),
    help="dbt project directory (default: the one shipped with goodput_loader).",
)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="goodput-loader")
@click.option("-v", "--verbose", is_flag=True, help="Print a summary of what was done on stderr.")
@click.pass_context
def main(ctx: click.Context, verbose: bool) -> None:
    """Land ml-goodput-measurement log entries in a warehouse and report Goodput.

    \b
    Typical use:
      goodput-loader load exported/*.ndjson.gz
      goodput-loader load --from-logging --project my-proj --run my-run
      goodput-loader build
      goodput-loader report
      goodput-loader refresh ...   (load, build and push in one scheduled cycle)
    """
    ctx.obj = _Context(verbose)


class OptionGroup:
    """Click options applied as one decorator, and read back as one group.

    As sqlfluff's ``core_options``/``lint_options``: a command lists groups,
    not options, and the options one source needs stay together. ``take``
    removes the group's values from the command's keyword arguments, so the
    command builds each part of its request from a group instead of copying
    every option by hand. Parameter names starting with ``prefix`` lose it
    there (``--bigquery-endpoint`` -> ``endpoint``), which lets two groups of
    one command have a field of the same name.
    """

    def __init__(self, *options: Callable[[Any], Any], prefix: str = ""):
        self.options = options
        self.prefix = prefix
        probe: Any = lambda: None  # noqa: E731 - collects the parameters the options declare
        for option in options:
            option(probe)
        self.names = tuple(param.name for param in probe.__click_params__)

    def __call__(self, fn: Any) -> Any:
        for option in reversed(self.options):  # the first option listed is the first in --help
            fn = option(fn)
        return fn

    def take(self, values: dict[str, Any]) -> dict[str, Any]:
        """This group's values, removed from ``values``, by field name."""
        return {name.removeprefix(self.prefix): values.pop(name) for name in self.names}


# The marts a reader reads: DuckDB (--duckdb) or the BigQuery dataset dbt builds. report, tensorboard and push
# take the same two options.
bigquery_dataset_option = click.option(
    "--bigquery", "bigquery_dataset", metavar="PROJECT.DATASET",
    help="Read the marts from this BigQuery dataset (where dbt builds them) instead of DuckDB.")
bigquery_endpoint_option = click.option(
    "--bigquery-endpoint", envvar="GOODPUT_BIGQUERY_ENDPOINT", help="BigQuery API endpoint (tests).")
marts_source_options = OptionGroup(bigquery_dataset_option, bigquery_endpoint_option, prefix="bigquery_")


def open_marts_from(duckdb_path: str, values: dict[str, Any]) -> Any:
    """The Marts a marts_source_options group names (read only); exits with the error when they cannot open."""
    from goodput_loader.warehouses.marts import open_marts

    source = marts_source_options.take(values)
    return _run(open_marts, duckdb_path, source["dataset"], source["endpoint"])


# --------------------------------------------------------------------- load
load_source_options = OptionGroup(
    click.option("--from-logging", is_flag=True, help="Read from Cloud Logging instead of files."),
    click.option("--project", help="GCP project: the one to read logs from (--from-logging), "
                 "or the one to name bare payload files' logName after (default 'local')."),
    click.option("--run", "runs", multiple=True, help="Run name (log goodput_RUN). Repeat for several runs "
                 "with --from-logging; names the run of bare payload files."),
)

load_logging_options = OptionGroup(
    click.option("--since", help="--from-logging: oldest entry time to read on a first load (ISO 8601). "
                 "Default: 30 days before --until."),
    click.option("--until", help="--from-logging: newest entry time to read (ISO 8601 or 'now'). "
                 "Default: now minus --settle."),
    click.option("--settle", "settle_seconds", type=float, default=120.0, show_default=True,
                 help="--from-logging: seconds to stay behind now, so late-committed entries are never skipped."),
    click.option("--reread", "reread_seconds", type=click.FloatRange(0), default=600.0, show_default=True,
                 help="--from-logging: seconds before the cursor to read again on every load, so entries "
                 "that became readable late still land (duplicates are dropped; 0 turns it off)."),
    click.option("--page-size", type=click.IntRange(1, 1000), default=1000, show_default=True,
                 help="--from-logging: entries per entries.list call."),
    click.option("--requests-per-minute", type=float, default=60.0, show_default=True,
                 help="--from-logging: pace reads to the project's entries.list quota."),
    click.option("--max-retries", type=click.IntRange(0), default=8, show_default=True,
                 help="--from-logging: retries of 429/5xx/timeouts before giving up."),
    click.option("--retry-initial-delay", type=float, default=1.0, show_default=True,
                 help="--from-logging: first backoff delay in seconds (doubles, with jitter, up to 60 s)."),
    click.option("--logging-endpoint", envvar="GOODPUT_LOGGING_ENDPOINT",
                 help="Cloud Logging API endpoint (a local server for tests; http:// sends no credentials)."),
    prefix="logging_",
)

load_bigquery_options = OptionGroup(
    click.option("--bigquery", "bigquery_dataset", metavar="PROJECT.DATASET", envvar="GOODPUT_BIGQUERY_DATASET",
                 help="Land into this BigQuery dataset instead of DuckDB (tables created if missing)."),
    click.option("--bigquery-endpoint", envvar="GOODPUT_BIGQUERY_ENDPOINT",
                 help="BigQuery API endpoint (a local emulator for tests; sends no credentials)."),
    click.option("--bigquery-location", help="BigQuery location of the dataset's jobs (default: the client's)."),
    prefix="bigquery_",
)

load_file_options = OptionGroup(
    click.option("--batch-size", type=click.IntRange(1), default=BATCH_LINES, show_default=True,
                 help="Files: lines per transaction (BigQuery: per load job). "
                 "Large batches keep every DuckDB thread busy; multiples of DuckDB's row group "
                 f"({DUCKDB_ROW_GROUP_ROWS:,} lines) land fastest."),
    click.option("--rescan", is_flag=True,
                 help="Files: read from the start even if a previous load committed part of it."),
)

load_behaviour_options = OptionGroup(
    click.option("--strict", is_flag=True, help=f"Exit with {EXIT_REJECTED} if any input was rejected."),
    click.option("--json", "as_json", is_flag=True, help="Print the load summary as JSON on stdout."),
    click.option("--progress/--no-progress", default=None,
                 help="Show a progress line (default: when stderr is a terminal)."),
)


def _load_request(files: tuple[str, ...], duckdb_path: str, options: dict[str, Any],
                  progress: bool | None = None, bigquery: dict[str, Any] | None = None) -> Any:
    """The LoadRequest of the source, Cloud Logging and file option groups, taken out of ``options``
    (`load` and `refresh` read their sources alike), landing in ``bigquery`` (the values of
    load_bigquery_options; only `load` has them) or else the DuckDB file."""
    from goodput_loader.load import BigQueryDestination, FileRead, LoadRequest, LoggingRead

    source = load_source_options.take(options)
    from_logging, project, runs = source["from_logging"], source["project"], source["runs"]
    if from_logging and files:
        raise click.UsageError("give FILES or --from-logging, not both")
    if not from_logging and not files:
        raise click.UsageError("nothing to load: give FILES or --from-logging")
    if from_logging and (not project or not runs):
        raise click.UsageError("--from-logging needs --project and at least one --run")
    if not from_logging and len(runs) > 1:
        raise click.UsageError("files take at most one --run (the run of bare payload lines)")
    if project is not None and (not project.strip() or "/" in project):
        # a run is (project, run name), read back from projects/<project>/logs/...: a '/' would move it
        raise click.UsageError(f"--project {project!r} is not a GCP project id (it is empty or holds '/')")
    logging = load_logging_options.take(options)
    logging["since"] = _parse_time(logging["since"], "--since")
    logging["until"] = _parse_time(logging["until"], "--until")
    return LoadRequest(
        duckdb_path=duckdb_path,
        files=list(files),
        from_logging=from_logging,
        project=project,
        runs=list(runs),
        logging=LoggingRead(**logging),
        bigquery=BigQueryDestination(**(bigquery or {})),
        file_read=FileRead(**load_file_options.take(options)),
        progress=progress,
    )


@main.command()
@click.argument("files", nargs=-1, type=click.Path(exists=True))
@duckdb_option
@load_source_options
@load_logging_options
@load_bigquery_options
@load_file_options
@load_behaviour_options
@click.pass_obj
def load(obj: _Context, files: tuple[str, ...], duckdb_path: str, **options: Any) -> None:
    """Land log entries from FILES (NDJSON, gcloud JSON arrays, bare payloads; gzip or not) or Cloud Logging.

    Loads are incremental and idempotent: entries are unique on
    (logName, timestamp, insertId), every batch commits with its source cursor,
    and a load killed at any point can simply be run again. Input that cannot
    be landed is kept in goodput_raw.rejected_entries with its file:line or
    entry id and the reason.

    \b
    Examples:
      goodput-loader load logs/goodput_llama3.ndjson.gz
      gcloud logging read 'logName:"goodput_"' --format=json > dump.json && goodput-loader load dump.json
      goodput-loader load --run my-run /tmp/my-run_timeline.jsonl
      goodput-loader load --from-logging --project my-proj --run run-a --run run-b
      goodput-loader load --bigquery my-proj.goodput_raw logs/*.ndjson.gz
    """
    from goodput_loader.load import run_load

    behaviour = load_behaviour_options.take(options)
    request = _load_request(files, duckdb_path, options, behaviour["progress"], load_bigquery_options.take(options))
    assert not options, f"options in no group: {sorted(options)}"
    summaries = _run(run_load, request)
    rejected = sum(s.rejected for s in summaries)
    if behaviour["as_json"]:
        click.echo(json.dumps({"sources": [s.as_dict() for s in summaries]}, indent=2))
    for s in summaries:
        if s.shape == "unchanged":
            obj.info(f"{s.source_key}: unchanged since the last load (same size and modification time), not read")
            continue
        obj.info(
            f"{s.source_key}: {s.read:,} entries read, {s.inserted:,} new, {s.duplicates:,} duplicates, "
            f"{s.rejected:,} rejected in {s.seconds:.2f}s ({s.rate:,.0f} entries/s)"
            + (f"; {s.late:,} of the new ones arrived late (behind an earlier load's cursor)" if s.late else "")
        )
    if rejected:
        click.echo(
            f"goodput-loader: {rejected:,} input record(s) rejected; see goodput_raw.rejected_entries "
            f"(goodput-loader rejects --duckdb {duckdb_path})",
            err=True,
        )
        if behaviour["strict"]:
            sys.exit(EXIT_REJECTED)


@main.command()
@duckdb_option
@click.option("--limit", type=click.IntRange(1), default=20, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print rows as JSON.")
def rejects(duckdb_path: str, limit: int, as_json: bool) -> None:
    """Show the most recent rejected input records and why they were rejected."""
    from goodput_loader.report import rejected_rows

    rows = _run(rejected_rows, duckdb_path, limit)
    if as_json:
        click.echo(json.dumps(rows, indent=2, default=str))
        return
    for row in rows:
        click.echo(f"{row['location']}\t{row['reason']}")


# ----------------------------------------------------------------- simulate
@main.command()
@click.argument("out_dir", type=click.Path(file_okay=False))
@click.option("--runs", type=click.IntRange(1), default=4, show_default=True, help="How many runs.")
@click.option("--steps", type=click.IntRange(2), default=2000, show_default=True, help="Typical steps per run (±30%).")
@click.option("--restarts", type=click.IntRange(0), default=1, show_default=True,
              help="Typical crashes per run (each run gets 0..2x this).")
@click.option("--running", type=click.IntRange(0), default=1, show_default=True,
              help="How many of the runs (the last ones) are still running: no job end.")
@click.option("--step-seconds", type=float, default=2.0, show_default=True, help="Typical step time.")
@click.option("--checkpoint-every", type=click.IntRange(0), default=200, show_default=True)
@click.option("--eval-every", type=click.IntRange(0), default=500, show_default=True)
@click.option("--duplicate-rate", type=click.FloatRange(0, 1), default=0.001, show_default=True,
              help="Share of entries delivered twice (Cloud Logging is at-least-once).")
@click.option("--seed", type=int, default=42, show_default=True)
@click.option("--project", default="demo-project", show_default=True)
@click.option("--prefix", default="sim", show_default=True, help="Run names are PREFIX-000, PREFIX-001, ...")
@click.option("--start", default="2026-11-30T00:00:00Z", show_default=True, help="Start of the first run.")
@click.option("--live-at", metavar="TIME",
              help="Move the running runs so that their last entry is a minute before TIME "
                   "(ISO 8601, or 'now'): they look live when evaluated then.")
@click.option("--elastic", type=click.IntRange(0), default=0, show_default=True,
              help="How many of the runs (the first ones) are elastic Pathways jobs over 4 slices: slice "
                   "counts, slices lost and regained, waits and re-initialisation (ElasticGoodputRecorder).")
@click.option("--gzip/--no-gzip", "compress", default=True, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the files written as JSON.")
@click.pass_obj
def simulate(obj: _Context, out_dir: str, runs: int, steps: int, restarts: int, running: int,
             step_seconds: float, checkpoint_every: int, eval_every: int, duplicate_rate: float,
             seed: int, project: str, prefix: str, start: str, live_at: str | None, elastic: int, compress: bool,
             as_json: bool) -> None:
    """Write seeded, MaxText-like runs as LogEntry NDJSON files into OUT_DIR.

    \b
    Example:
      goodput-loader simulate demo_data --runs 4 --steps 2000 --restarts 1
    """
    from goodput_loader.simulate import RunSpec, fleet, write_run

    if running > runs:
        raise click.UsageError("--running cannot exceed --runs")
    if elastic > runs:
        raise click.UsageError("--elastic cannot exceed --runs")
    base = RunSpec(
        name="",
        start=0.0,
        step_seconds=step_seconds,
        checkpoint_every=checkpoint_every,
        eval_every=eval_every,
        duplicate_rate=duplicate_rate,
    )
    start_time = _parse_time(start, "--start")
    assert start_time is not None
    live_time = _parse_time(live_at, "--live-at")
    specs = fleet(runs, seed=seed, steps=steps, restarts=restarts, running=running, start=start_time,
                  prefix=prefix, base=base, live_at=live_time, elastic=elastic)
    written = []
    for spec in specs:
        path, count = _run(write_run, spec, Path(out_dir), project, compress)
        written.append({"run": spec.name, "path": str(path), "entries": count, "steps": spec.steps,
                        "restarts": spec.restarts, "finished": spec.finished,
                        "elastic": spec.elastic_slices > 1})
        obj.info(f"{path}: {count:,} entries ({spec.steps} steps, {spec.restarts} restarts, "
                 f"{'elastic, ' if spec.elastic_slices > 1 else ''}{'finished' if spec.finished else 'running'})")
    if as_json:
        click.echo(json.dumps({"files": written}, indent=2))


# -------------------------------------------------------------------- build
@main.command(context_settings={"ignore_unknown_options": True})
@duckdb_option
@click.option("--as-of", help="Evaluation time for runs that have not ended (ISO 8601). Default: now.")
@click.option("--var", "assignments", multiple=True, metavar="KEY=VALUE",
              help="Set a project var (VALUE is YAML), e.g. --var rolling_grid_seconds=300. Repeatable.")
@project_dir_option
@click.argument("dbt_args", nargs=-1, type=click.UNPROCESSED)
@click.pass_obj
def build(obj: _Context, duckdb_path: str, as_of: str | None, assignments: tuple[str, ...],
          project_dir: str | None, dbt_args: tuple[str, ...]) -> None:
    """Run `dbt build` on the warehouse; extra DBT_ARGS are passed to dbt (e.g. --select marts).

    \b
    Examples:
      goodput-loader build --as-of 2026-12-01T00:00:00Z -- --select +fct_goodput_cumulative
      goodput-loader build --var 'rolling_windows_seconds=[3600, 86400]' -- --full-refresh
    """
    from goodput_loader.dbt import parse_var, run_dbt

    as_of_time = _parse_time(as_of, "--as-of")
    variables = dict(_run(parse_var, a) for a in assignments)
    _run(run_dbt, ["build", *dbt_args], duckdb_path=duckdb_path, as_of=as_of_time,
         project_dir=project_dir, quiet=not obj.verbose, variables=variables)


# ------------------------------------------------------------------- report
@main.command()
@duckdb_option
@click.option("--run", "runs", multiple=True,
              help="Only these runs (repeatable): a run name (its run in every project) or PROJECT/RUN.")
@click.option("--json", "as_json", is_flag=True, help="Print the marts' rows as JSON.")
@click.option("--allow-failed-build", is_flag=True,
              help="Read the marts even though the last dbt build of some model or test failed.")
@click.option("--html", "html_path", type=click.Path(dir_okay=False),
              help="Write the report as one self-contained HTML page of charts to this file instead.")
@marts_source_options
@click.pass_obj
def report(obj: _Context, duckdb_path: str, runs: tuple[str, ...], as_json: bool, allow_failed_build: bool,
           html_path: str | None, **source: Any) -> None:
    """Print per-run Goodput and the Badput breakdown from the built marts.

    With --html FILE, write charts instead: the fleet's Goodput per run, Badput
    share and days, and per run rolling Goodput, Badput over time, step times and
    the breakdown (the page needs no network to open).

    Reads DuckDB, or with --bigquery the dataset dbt builds. Refuses marts whose
    last build failed (a model error or a failed data test).
    """
    marts = open_marts_from(duckdb_path, source)
    if html_path:
        from goodput_loader.html_report import write_html

        written = _run(write_html, marts, html_path, list(runs), allow_failed_build)
        if as_json:
            click.echo(json.dumps(written, indent=2))
        obj.info(f"{written['path']}: {written['runs']} runs, charts for {written['run_sections']}, "
                 f"{written['bytes']:,} bytes")
        return
    from goodput_loader.report import load_report, render_report

    data = _run(load_report, marts, list(runs), allow_failed_build)
    if as_json:
        click.echo(json.dumps(data, indent=2, default=str))
    else:
        render_report(data)


# --------------------------------------------------------------- tensorboard
@main.command()
@duckdb_option
@click.option("--logdir", required=True, type=click.Path(file_okay=False),
              help="TensorBoard log directory: each run's events go to LOGDIR/<run>/goodput.")
@click.option("--run", "runs", multiple=True,
              help="Only these runs (repeatable): a run name (its run in every project) or PROJECT/RUN.")
@click.option("--json", "as_json", is_flag=True, help="Print what was written, per run, as JSON.")
@click.option("--allow-failed-build", is_flag=True,
              help="Read the marts even though the last dbt build of some model or test failed.")
@marts_source_options
@click.pass_obj
def tensorboard(obj: _Context, duckdb_path: str, logdir: str, runs: tuple[str, ...], as_json: bool,
                allow_failed_build: bool, **source: Any) -> None:
    """Write what the library's monitor writes to TensorBoard, from the built marts.

    Tags goodput/goodput, badput/<bucket>, badput/custom_badput_events/<type> at the
    max productive step, and step_deviation per step. Each export appends only what
    changed since the last one (run it after each build). Needs the [tensorboard] extra.

    \b
      goodput-loader tensorboard --logdir tb/ && tensorboard --logdir tb/
    """
    from goodput_loader.tensorboard import export, require_writer

    _run(require_writer)  # a missing extra is the first thing to fix, before any warehouse
    summary = _run(export, open_marts_from(duckdb_path, source), logdir, list(runs), allow_failed_build)
    if as_json:
        click.echo(json.dumps(summary, indent=2))
    written = [run for run in summary if run["goodput_points"] or run["step_deviation_points"]]
    obj.info(f"{len(written)} of {len(summary)} runs had something new: "
             f"{sum(r['goodput_points'] for r in summary)} Goodput/Badput and "
             f"{sum(r['step_deviation_points'] for r in summary)} step-deviation points written to {logdir}")


# --------------------------------------------------------------- exclusions
@main.group()
def exclusions() -> None:
    """Windows left out of Goodput (stock-outs, maintenance, SLO-violation windows).

    Each build computes fct_goodput_with_exclusions and fct_badput_with_exclusions for
    every run a window applies to, as the library's get_job_goodput_with_exclusions does.
    """


@exclusions.command("add")
@duckdb_option
@click.option("--run", "run_name", help="The run (its name, or PROJECT/RUN); omit for every run.")
@click.option("--start", required=True, help="Window start (ISO 8601; UTC when no offset).")
@click.option("--end", required=True, help="Window end (ISO 8601, or 'now').")
@click.option("--reason", required=True, help="Why the time is left out, e.g. 'maintenance'.")
@click.option("--json", "as_json", is_flag=True, help="Print the recorded window as JSON.")
def exclusions_add(duckdb_path: str, run_name: str | None, start: str, end: str, reason: str,
                   as_json: bool) -> None:
    """Record a window; the next build counts it.

    \b
    Example:
      goodput-loader exclusions add --run llama3-70b --start 2026-12-01T02:00Z --end 2026-12-01T04:00Z --reason maintenance
    """
    from goodput_loader.exclusions import add_exclusion

    start_time, end_time = _parse_time(start, "--start"), _parse_time(end, "--end")
    assert start_time is not None and end_time is not None
    row = _run(add_exclusion, duckdb_path, run_name, start_time, end_time, reason)
    click.echo(json.dumps(row, indent=2, default=str) if as_json else row["exclusion_id"])


@exclusions.command("list")
@duckdb_option
@click.option("--json", "as_json", is_flag=True, help="Print the windows as JSON.")
def exclusions_list(duckdb_path: str, as_json: bool) -> None:
    """Print every declared window (UTC)."""
    from goodput_loader.exclusions import list_exclusions

    rows = _run(list_exclusions, duckdb_path)
    if as_json:
        click.echo(json.dumps(rows, indent=2, default=str))
        return
    for row in rows:
        click.echo(f"{row['exclusion_id']}  {row['run'] or '(every run)'}  {row['start_at'].isoformat()}Z .. "
                   f"{row['end_at'].isoformat()}Z  {row['reason']}")


@exclusions.command("remove")
@duckdb_option
@click.argument("exclusion_id")
def exclusions_remove(duckdb_path: str, exclusion_id: str) -> None:
    """Forget the window EXCLUSION_ID (as `exclusions list` shows it); the next build recomputes."""
    from goodput_loader.exclusions import remove_exclusion

    _run(remove_exclusion, duckdb_path, exclusion_id)


# ----------------------------------------------------------------- interval
@main.command()
@duckdb_option
@click.option("--run", "run_name", required=True,
              help="The run: its name, or PROJECT/RUN when the name is used in several projects.")
@click.option("--start", required=True, help="Interval start (ISO 8601; UTC when no offset).")
@click.option("--end", required=True, help="Interval end (ISO 8601, or 'now').")
@click.option("--semantics", type=click.Choice(["library", "additive"]), default="library", show_default=True,
              help="library: what the library's get_job_goodput_interval returns (its computation rerun over "
                   "the window's entries; exit 1 where it raises). additive: the run's cumulative attribution "
                   "located in time (intervals that partition a run add up to it).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@project_dir_option
def interval(duckdb_path: str, run_name: str, start: str, end: str, semantics: str, as_json: bool,
             project_dir: str | None) -> None:
    """Goodput and Badput of one run between --start and --end.

    By default the numbers the library (and its monitor's rolling windows) give
    for that window, computed in SQL over the landed entries: a few seconds.
    With --semantics additive, the interval is looked up in the built marts:
    cut at the job start and at the job end (or the build's evaluation time),
    amounts located in time, so intervals that partition a job add up to its
    cumulative Goodput. docs/semantics.md has a worked example of each.

    \b
    Example:
      goodput-loader interval --run llama3-70b --start 2026-12-01T00:00Z --end 2026-12-01T06:00Z
    """
    from goodput_loader.interval import interval_goodput
    from goodput_loader.report import render_interval

    start_time = _parse_time(start, "--start")
    end_time = _parse_time(end, "--end")
    assert start_time is not None and end_time is not None
    data = _run(interval_goodput, duckdb_path, run_name, start_time, end_time, project_dir=project_dir,
                semantics=semantics)
    if as_json:
        click.echo(json.dumps(data, indent=2, default=str))
    else:
        render_interval(data)


# --------------------------------------------------------------------- push
def push_target_options(flag_prefix: str = "", gate: str | None = None) -> OptionGroup:
    """Where push writes and what: the project, the library's resource and metric labels, the runs.

    `push` takes them as they are; `refresh` takes them behind ``--push-`` (``gate`` is the option
    that turns its push on), so the two commands can never offer different labels."""
    def text(help_text: str) -> str:
        return f"With {gate}: {help_text[0].lower()}{help_text[1:]}" if gate else help_text

    return OptionGroup(
        click.option(f"--{flag_prefix}project", required=gate is None,
                     help="GCP project to write the time series to."
                     + (" Given, the cycle pushes after its build; default: no push." if gate else "")),
        click.option(f"--{flag_prefix}location", required=gate is None,
                     help=text("Resource label location (the library's GCPOptions.location).")),
        click.option(f"--{flag_prefix}accelerator-type", default="",
                     help=text("Metric label accelerator_type, e.g. v5p-128 (the library always sets it; the "
                               "dashboard groups by it). Omitted when not given.")),
        click.option(f"--{flag_prefix}replica-id", default="0", show_default=True,
                     help=text("Resource label replica_id.")),
        click.option(f"--{flag_prefix}cluster-name",
                     help=text("Optional metric label cluster_name, as the library adds it.")),
        click.option(f"--{flag_prefix}run", f"{flag_prefix.replace('-', '_')}runs", multiple=True,
                     help=text("Only these runs (repeatable; default: every valid run): a run name (its run in "
                               "every project) or PROJECT/RUN.")),
        prefix=flag_prefix.replace("-", "_"),
    )


def push_target(values: dict[str, Any]) -> Any:
    """The Target of a push_target_options group's values."""
    from goodput_loader.push.series import Target

    return Target(project=values["project"], location=values["location"], replica_id=values["replica_id"],
                  accelerator_type=values["accelerator_type"], cluster_name=values["cluster_name"])


push_options = push_target_options()


push_bigquery_options = OptionGroup(
    bigquery_dataset_option,
    bigquery_endpoint_option,
    click.option("--dbt-target", default="bigquery", show_default=True,
                 help="--bigquery: the output of your dbt profile the marts are built with; the live windows' "
                      "build (--interval-semantics library) runs with its credentials in a scratch dataset "
                      "beside its dataset, dropped afterwards."),
    click.option("--profiles-dir", envvar="DBT_PROFILES_DIR", type=click.Path(file_okay=False),
                 help="--bigquery: the directory of that profiles.yml (default: $DBT_PROFILES_DIR, else the "
                      "project's)."),
    click.option("--var", "assignments", multiple=True, metavar="KEY=VALUE",
                 help="--bigquery: a project var your builds set, e.g. goodput_raw_schema=my_raw (VALUE is "
                      "YAML), so the window build reads the same entries. Repeatable."),
    prefix="bigquery_",
)


@main.command()
@duckdb_option
@push_options
@click.option("--since", help="Oldest rolling window end to push (ISO 8601). Points older than ~25 h are "
              "dropped anyway: Cloud Monitoring refuses them.")
@push_bigquery_options
@click.option("--dry-run", is_flag=True, help="Print the CreateTimeSeries requests as JSON; send nothing.")
@click.option("--endpoint", envvar="GOODPUT_MONITORING_ENDPOINT",
              help="Monitoring API endpoint (host:port of a local server for tests; plain gRPC, no credentials).")
@click.option("--max-retries", type=click.IntRange(0), default=5, show_default=True,
              help="Retries of UNAVAILABLE / DEADLINE_EXCEEDED / RESOURCE_EXHAUSTED and of rejected series.")
@click.option("--interval-semantics", type=click.Choice(["library", "additive"]), default="library",
              show_default=True,
              help="Interval Goodput/Badput of each run's live window (the one ending at its end or the build's "
                   "evaluation time): library, as the library's rolling-window monitor computes it (a window "
                   "build over those windows' entries), or additive, as the rolling marts hold it. Complete "
                   "windows of the history are always additive.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.option("--allow-failed-build", is_flag=True,
              help="Push even though the last dbt build of some model or test failed.")
def push(duckdb_path: str, since: str | None, dry_run: bool, endpoint: str | None, max_retries: int,
         interval_semantics: str, as_json: bool, allow_failed_build: bool, **options: Any) -> None:
    """Send the marts to Cloud Monitoring under the library's metric types and labels.

    Cumulative Goodput/Badput, disruptions, max productive step, step deviation, elapsed
    time and ideal step time at each run's end, and interval Goodput/Badput for every
    rolling window. A push state in the warehouse remembers the last point per series:
    running push again sends only what is new. Exit code 1 when any point failed, or when
    runs of one name from several projects were selected (their series would be the same:
    they are not pushed; name one with --run PROJECT/RUN).
    Nothing is sent while the last dbt build of some model or test failed.

    \b
    Examples:
      goodput-loader push --project my-proj --location us-central2 --accelerator-type v5p-128 --run llama3-70b
      goodput-loader push --project my-proj --location us-central2 --accelerator-type v5p-128 --dry-run
      goodput-loader push --bigquery my-proj.goodput --var goodput_raw_schema=goodput_raw \\
          --project my-proj --location us-central2 --accelerator-type v5p-128
    """
    from goodput_loader.dbt import parse_var
    from goodput_loader.push.run import PushRequest, run_push

    target = push_options.take(options)
    bigquery = push_bigquery_options.take(options)
    assert not options, f"options in no group: {sorted(options)}"
    request = PushRequest(
        duckdb_path=duckdb_path, target=push_target(target), runs=list(target["runs"]),
        since=_parse_time(since, "--since"), dry_run=dry_run, endpoint=endpoint, max_retries=max_retries,
        bigquery_dataset=bigquery["dataset"], bigquery_endpoint=bigquery["endpoint"],
        allow_failed_build=allow_failed_build, interval_semantics=interval_semantics,
        dbt_target=bigquery["dbt_target"], profiles_dir=bigquery["profiles_dir"],
        variables=dict(_run(parse_var, a) for a in bigquery["assignments"]),
    )
    summary = _run(run_push, request)
    if as_json or dry_run:
        click.echo(_json_one_line_each(summary, "requests"))
    else:
        click.echo(f"{summary['points_written']} points written in {summary['requests_sent']} requests "
                   f"({summary['already_pushed']} already pushed, {summary['dropped_too_old']} older than "
                   f"Cloud Monitoring accepts, {summary['dropped_too_close']} closer than 5 s to the previous one, "
                   f"{summary['already_on_server']} already on the server, {len(summary['failed'])} failed; "
                   f"{summary['live_windows_already_pushed']} live windows already pushed)")
        for failure in summary["failed"][:20]:
            click.echo(f"failed: {failure['series']} at {failure['end_time']}: {failure['error']}", err=True)
    for name, run_ids in summary["not_pushed_shared_names"].items():
        click.echo(f"not pushed: run name {name!r} is used in several projects ({', '.join(run_ids)}) and their "
                   f"series in {target['project']} would be the same; push one with --run PROJECT/RUN", err=True)
    if summary["failed"] or summary["not_pushed_shared_names"]:
        sys.exit(1)


# ------------------------------------------------------------------ refresh
refresh_push_options = push_target_options("push-", gate="--push-project")


@main.command()
@click.argument("files", nargs=-1, type=click.Path(exists=True))
@duckdb_option
@load_source_options
@load_logging_options
@load_file_options
@click.option("--var", "assignments", multiple=True, metavar="KEY=VALUE",
              help="A project var for the build (VALUE is YAML), as `build --var`. Repeatable.")
@refresh_push_options
@click.option("--push-endpoint", envvar="GOODPUT_MONITORING_ENDPOINT",
              help="Monitoring API endpoint (a local server for tests).")
@click.option("--lock", "lock_path", type=click.Path(dir_okay=False),
              help="Lock file that keeps two cycles of one warehouse apart (default: DUCKDB.refresh.lock).")
@click.option("--json", "as_json", is_flag=True, help="Print what each step did as JSON on stdout.")
@click.pass_obj
def refresh(obj: _Context, files: tuple[str, ...], duckdb_path: str, assignments: tuple[str, ...],
            push_endpoint: str | None, lock_path: str | None, as_json: bool, **options: Any) -> None:
    """One scheduled cycle: load FILES or Cloud Logging, build incrementally, push (with --push-project).

    Takes `load`'s source options and `build`'s --var. A lock beside the warehouse keeps two cycles
    apart: one started while another runs does nothing and exits 75 (EX_TEMPFAIL). The first step
    that fails ends the cycle with exit 1 and its message: nothing is built after a failed load and
    nothing is pushed after a failed build (or a failed data test). Rejected input does not stop it
    (it is kept in goodput_raw.rejected_entries, as `load` keeps it).

    \b
    Examples:
      goodput-loader refresh --from-logging --project my-proj --run llama3-70b \\
          --push-project my-proj --push-location us-central2 --push-accelerator-type v5p-128
      goodput-loader -v refresh exports/
    """
    from goodput_loader.dbt import parse_var
    from goodput_loader.push.run import PushRequest
    from goodput_loader.refresh import LockedError, RefreshRequest, StepError, run_refresh

    load_request = _load_request(files, duckdb_path, options, progress=False)
    push = refresh_push_options.take(options)
    assert not options, f"options in no group: {sorted(options)}"
    if push["project"] and not push["location"]:
        raise click.UsageError("--push-project needs --push-location")
    push_request = None
    if push["project"]:
        push_request = PushRequest(duckdb_path=duckdb_path, target=push_target(push), runs=list(push["runs"]),
                                   endpoint=push_endpoint)
    request = RefreshRequest(load=load_request, variables=dict(_run(parse_var, a) for a in assignments),
                             push=push_request, lock_path=Path(lock_path) if lock_path else None,
                             quiet=not obj.verbose)
    try:
        summary = run_refresh(request, obj.info)
    except StepError as exc:
        if as_json:
            click.echo(json.dumps(exc.summary, indent=2, default=str))
        click.echo(f"goodput-loader: error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except LockedError as exc:  # not an error: this tick's cycle is already running
        click.echo(f"goodput-loader: {exc}", err=True)
        sys.exit(exc.exit_code)
    except LoaderError as exc:  # e.g. the lock file cannot be opened
        click.echo(f"goodput-loader: error: {exc}", err=True)
        sys.exit(exc.exit_code)
    if as_json:
        click.echo(json.dumps(summary, indent=2, default=str))
