"""Interval Goodput with the library's semantics, for any set of windows at once.

GoodputCalculator.get_job_goodput_interval recomputes Goodput from scratch over the entries inside a
window; it does not look the window up in the job's attribution. The warehouse reproduces that by
building the per-run attribution models over each window's entries as a run of its own
(macros/library_windows/library_windows.sql), in a scratch DuckDB file that attaches the warehouse
read only: the warehouse's tables, incremental state and build watermark stay exactly as they were,
and a failed window build leaves nothing behind.

`interval --semantics library` asks for one window; `push` for the live window of every run it sends.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, Iterator

from goodput_loader.dbt import project_args, run_dbt
from goodput_loader.errors import LoaderError

TARGET = "duckdb_library_windows"
# the attach alias of the warehouse in profiles.yml's duckdb_library_windows target
WAREHOUSE_ALIAS = "warehouse"


@dataclass(frozen=True)
class Window:
    """One interval query: a run (run_id, or a run name) and [start, end]."""

    run: str
    start: dt.datetime
    end: dt.datetime


def iso(value: dt.datetime) -> str:
    """ISO 8601 UTC to the microsecond, as dbt vars and JSON output carry times."""
    return value.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _plain(value: Any) -> Any:
    return float(value) if isinstance(value, Decimal) else value


@contextlib.contextmanager
def _scratch_env(path: Path) -> Iterator[None]:
    previous = os.environ.get("GOODPUT_LIBRARY_WINDOWS_DUCKDB")
    os.environ["GOODPUT_LIBRARY_WINDOWS_DUCKDB"] = str(path)
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("GOODPUT_LIBRARY_WINDOWS_DUCKDB", None)
        else:
            os.environ["GOODPUT_LIBRARY_WINDOWS_DUCKDB"] = previous


def library_window_rows(duckdb_path: str, windows: list[Window],
                        project_dir: str | None = None) -> list[dict[str, Any]]:
    """Every window's measures as the library computes them (rows of goodput_library_window_results:
    window_no, run_id, invalid_reason, elapsed_seconds, measure, seconds, pct, ...).

    dbt runs in a child process: dbt-duckdb keeps its DuckDB instance (with the warehouse attached) for
    the life of the process, and push holds the warehouse itself before and after."""
    if not windows:
        return []
    if not Path(duckdb_path).exists():
        raise LoaderError(f"{duckdb_path} does not exist: load entries first (goodput-loader load ...)")
    spec = {"duckdb_path": str(duckdb_path), "project_dir": project_dir,
            "windows": [{"run": w.run, "start": iso(w.start), "end": iso(w.end)} for w in windows]}
    child = subprocess.run([sys.executable, "-m", "goodput_loader.library_windows"], input=json.dumps(spec),
                           capture_output=True, text=True)
    if child.returncode != 0:
        lines = child.stderr.strip().splitlines()
        raise LoaderError(lines[-1] if lines else f"the window build exited {child.returncode}")
    return [{k: dt.datetime.fromisoformat(v) if k in _TIMES and v else v for k, v in row.items()}
            for row in json.loads(child.stdout)]


_TIMES = ("requested_start_at", "requested_end_at", "counted_from_at", "counted_until_at")


def _build_and_read(duckdb_path: str, windows: list[dict[str, str]], project_dir: str | None) -> list[dict[str, Any]]:
    """The window build and its results, in this process (the child's work)."""
    from dbt.cli.main import dbtRunner

    variables = {"goodput_raw_database": WAREHOUSE_ALIAS, "goodput_library_windows": windows}
    with tempfile.TemporaryDirectory(prefix="goodput-library-windows-") as scratch, \
            _scratch_env(Path(scratch) / "windows.duckdb"):
        paths = ["--target-path", str(Path(scratch) / "target"), "--log-path", str(Path(scratch) / "logs")]
        run_dbt(["build", "--select", "+int_goodput__badput_buckets", "--exclude-resource-type", "test",
                 "unit_test", "--full-refresh", *paths],
                duckdb_path=duckdb_path, project_dir=project_dir, target=TARGET, variables=variables)
        result = dbtRunner().invoke([
            "--log-level", "none", "show", "--inline", "{{ goodput_library_window_results() }}", "--limit", "-1",
            *paths, *project_args(duckdb_path, project_dir, TARGET), "--vars", json.dumps(variables),
        ])
        if not result.success:
            raise LoaderError(f"reading the library windows failed: {result.exception}")
        table = result.result.results[0].agate_table
        return [{name: _plain(value) for name, value in zip(table.column_names, row)} for row in table.rows]


def main() -> None:
    """Child process: a JSON spec on stdin, the rows as JSON on stdout, an actionable error on stderr."""
    spec = json.load(sys.stdin)
    try:
        rows = _build_and_read(spec["duckdb_path"], spec["windows"], spec["project_dir"])
    except LoaderError as exc:
        print(f"window build failed: {exc}", file=sys.stderr)
        sys.exit(1)
    json.dump(rows, sys.stdout, default=lambda v: v.isoformat() if isinstance(v, dt.datetime) else str(v))


if __name__ == "__main__":
    main()
