"""Interval Goodput with the library's semantics, for any set of windows at once.

GoodputCalculator.get_job_goodput_interval recomputes Goodput from scratch over the entries inside a
window; it does not look the window up in the job's attribution. The warehouse reproduces that by
building the per-run attribution models over each window's entries as a run of its own
(macros/library_windows/library_windows.sql) in a scratch warehouse: on DuckDB a scratch file that
attaches the warehouse read only; on BigQuery a scratch dataset beside the marts', built through the
user's own dbt profile target and dropped afterwards. The warehouse's tables, incremental state and
build watermark stay exactly as they were, and a failed window build leaves nothing behind.

`interval --semantics library` asks for one window; `push` for the live window of every run it sends.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import secrets
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, Iterator

from goodput_loader.dbt import find_project_dir, project_args, run_dbt
from goodput_loader.errors import LoaderError

TARGET = "duckdb_library_windows"
# the attach alias of the warehouse in profiles.yml's duckdb_library_windows target
WAREHOUSE_ALIAS = "warehouse"
# the target of the scratch profile a BigQuery window build writes (one output: the user's, another dataset)
BIGQUERY_TARGET = "library_windows"


@dataclass(frozen=True)
class BigQueryBuild:
    """A window build on BigQuery: the dbt profile target the marts are built with (its credentials,
    project and location), and the project vars that build uses to find the landed entries
    (goodput_raw_schema, goodput_source, ...). The build writes into a scratch dataset named after the
    target's dataset (`<dataset>_library_windows_<random>`), dropped when it is done."""

    target: str = "bigquery"
    profiles_dir: str | None = None
    variables: dict[str, Any] = field(default_factory=dict)

    def check(self, project_dir: str | None = None) -> None:
        """Raise now, before any work, if the profile cannot give a window build its scratch dataset."""
        _bigquery_output(self.target, self.profiles_dir, project_dir)


@dataclass(frozen=True)
class Window:
    """One interval query: a run (run_id, or a run name) and [start, end].

    read_by says which entries are in it, besides a payload time after start (the library's in-memory
    filter): "timestamp", those Cloud Logging returns to get_job_goodput_interval(start, end), logged in
    (start, end]; "payload", those the monitor has when it polls at `end` (everything logged by then):
    payload time not after end. The two differ for entries logged after their time, as Orbax records are."""

    run: str
    start: dt.datetime
    end: dt.datetime
    read_by: str = "timestamp"
    # the run's calculator is ElasticGoodputCalculator (its three buckets in every window); None: the
    # window's own entries tell
    elastic: bool | None = None


def iso(value: dt.datetime) -> str:
    """ISO 8601 UTC to the microsecond, as dbt vars and JSON output carry times."""
    return value.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def plain(value: Any) -> Any:
    """A value dbt show returns, as JSON and Python comparisons want it (DECIMAL columns as float)."""
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


class WindowBuildProcess:
    """The child process a window build runs in, started before its windows are known.

    dbt runs in a child: dbt-duckdb keeps its DuckDB instance (with the warehouse attached) for the life
    of the process, and push holds the warehouse itself before and after. The child imports dbt (1.5 s)
    as soon as it starts and then waits for its windows on stdin, so a push that starts it before reading
    the marts has that import done by the time it knows its live windows. Close it (or leave the `with`)
    when no build is needed: it is killed, having opened nothing."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[str] | None = subprocess.Popen(
            [sys.executable, "-m", "goodput_loader.library_windows"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def __enter__(self) -> WindowBuildProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def ready(self) -> bool:
        """Started, not yet given windows, and still running (not killed meanwhile, say by the OOM killer)."""
        return self._process is not None and self._process.poll() is None

    def close(self) -> None:
        """End a child that was never given windows. It has opened nothing yet (it is importing dbt or
        waiting for its windows), so it is killed, not waited for: a refresh whose load failed says so at
        once, not after dbt's import."""
        process, self._process = self._process, None
        if process is None:
            return
        process.kill()
        process.communicate()

    def rows(self, spec: dict[str, Any]) -> list[dict[str, Any]]:
        """Send the spec, wait for the build, return its rows (JSON as the child wrote them)."""
        process, self._process = self._process, None
        if process is None:
            raise RuntimeError("a WindowBuildProcess builds once")
        stdout, stderr = process.communicate(json.dumps(spec))
        if process.returncode != 0:
            lines = stderr.strip().splitlines()
            raise LoaderError(lines[-1] if lines else f"the window build exited {process.returncode}")
        return json.loads(stdout)


def library_window_rows(duckdb_path: str, windows: list[Window], project_dir: str | None = None,
                        bigquery: BigQueryBuild | None = None,
                        process: WindowBuildProcess | None = None) -> list[dict[str, Any]]:
    """Every window's measures as the library computes them (rows of goodput_library_window_results:
    window_no, run_id, invalid_reason, elapsed_seconds, measure, seconds, pct, ...), built on the
    DuckDB warehouse at duckdb_path, or on BigQuery when `bigquery` says how.

    The build runs in `process` (started earlier, see WindowBuildProcess), or in a child started now."""
    if not windows:
        if process is not None:
            process.close()
        return []
    with process or WindowBuildProcess() as child:
        if bigquery is None and not Path(duckdb_path).exists():
            raise LoaderError(f"{duckdb_path} does not exist: load entries first (goodput-loader load ...)")
        spec = {"duckdb_path": "" if bigquery else str(duckdb_path), "project_dir": project_dir,
                "bigquery": None if bigquery is None else {"target": bigquery.target,
                                                           "profiles_dir": bigquery.profiles_dir,
                                                           "variables": bigquery.variables},
                "windows": [{"run": w.run, "start": iso(w.start), "end": iso(w.end), "read_by": w.read_by,
                             "elastic": w.elastic} for w in windows]}
        rows = child.rows(spec)
    return [{k: dt.datetime.fromisoformat(v) if k in _TIMES and v else v for k, v in row.items()} for row in rows]


_TIMES = ("requested_start_at", "requested_end_at", "counted_from_at", "counted_until_at")

# A window build's dbt commands write no manifest.json or run_results.json: nobody reads a scratch build's
# artifacts, and dbt writes the manifest twice per command (0.3 s of each of the three; partial parsing
# keeps its own file).
NO_ARTIFACTS = ["--no-write-json"]


def _build_and_read(duckdb_path: str, windows: list[dict[str, str]], project_dir: str | None,
                    bigquery: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The window build and its results, in this process (the child's work)."""
    if bigquery is None:
        return _build_and_read_duckdb(duckdb_path, windows, project_dir)
    with tempfile.TemporaryDirectory(prefix="goodput-library-windows-") as scratch:
        paths = ["--target-path", str(Path(scratch) / "target"), "--log-path", str(Path(scratch) / "logs"),
                 *NO_ARTIFACTS]
        variables = {**bigquery["variables"], "goodput_library_windows": windows}
        suffix = f"_library_windows_{secrets.token_hex(4)}"
        profiles = scratch_bigquery_profile(Path(scratch), suffix, bigquery["target"], bigquery["profiles_dir"],
                                            project_dir)
        dbt = {"duckdb_path": "", "project_dir": project_dir, "target": BIGQUERY_TARGET, "profiles_dir": profiles}
        try:
            return _build(paths, variables, **dbt)
        finally:
            # the scratch dataset goes, whatever happened (dbt may have created it before failing)
            try:
                run_dbt(["run-operation", "goodput_drop_window_build", "--args", json.dumps({"suffix": suffix}),
                         *paths], variables=variables, **dbt)
            except LoaderError as exc:
                raise LoaderError(f"the window build's scratch dataset (the {bigquery['target']!r} output's dataset "
                                  f"+ {suffix!r}) was not dropped: delete it (bq rm -r -f PROJECT:DATASET); "
                                  f"{exc}") from exc


def _build_and_read_duckdb(duckdb_path: str, windows: list[dict[str, str]],
                           project_dir: str | None) -> list[dict[str, Any]]:
    """The window build on DuckDB: a scratch file beside the warehouse's dbt target, deleted after.

    The windows change at every push, so they travel in a file the build reads (goodput_library_windows:
    {file: ...}), not as --vars: dbt parses the whole project again whenever the vars, the scratch file's
    path or the target directory change (3.4 s of a 14 s window build at L), and partially (a few hundred
    ms) otherwise. The file's path is the same at every push, so the vars are; and no dbt command runs
    only to store the windows (a run-operation cost 0.5-0.9 s of a 7 s window build at L)."""
    with _warm_scratch(duckdb_path, project_dir) as scratch:
        paths = ["--target-path", str(scratch / "target"), "--log-path", str(scratch / "logs"), *NO_ARTIFACTS]
        listed = scratch / "windows.json"
        variables = {"goodput_raw_database": WAREHOUSE_ALIAS, "goodput_library_windows": {"file": str(listed)}}
        database = scratch / "windows.duckdb"
        dbt = {"duckdb_path": duckdb_path, "project_dir": project_dir, "target": TARGET}
        _remove_duckdb(database)  # a build killed half-way leaves its file
        try:
            try:
                listed.write_text(json.dumps(windows))
            except OSError as exc:
                raise LoaderError(f"could not write the window build's windows to {listed}: {exc}") from exc
            with _scratch_env(database):
                return _build(paths, variables, **dbt)
        finally:
            _remove_duckdb(database)
            listed.unlink(missing_ok=True)


@contextlib.contextmanager
def _warm_scratch(duckdb_path: str, project_dir: str | None) -> Iterator[Path]:
    """The window builds' directory for this warehouse (<dbt target path>/library_windows/<warehouse hash>),
    kept between pushes so dbt's parse stays warm, held under a lock; a fresh temporary directory (a
    cold parse) while another window build of the same warehouse holds it."""
    import fcntl

    scratch = scratch_dir(duckdb_path, project_dir)
    try:
        scratch.mkdir(parents=True, exist_ok=True)
        lock = open(scratch / "lock", "w")
    except OSError:  # a read-only project checkout: every window build parses cold
        lock = None
    if lock is not None:
        with lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:  # held by another window build (or a filesystem without locks)
                pass
            else:
                yield scratch
                return
    with tempfile.TemporaryDirectory(prefix="goodput-library-windows-") as cold:
        yield Path(cold)


def scratch_dir(duckdb_path: str, project_dir: str | None = None) -> Path:
    """Where window builds of the DuckDB warehouse at duckdb_path keep dbt's target between pushes."""
    import hashlib

    target = Path(os.environ.get("DBT_TARGET_PATH") or "target")
    if not target.is_absolute():
        target = find_project_dir(project_dir) / target
    return target / "library_windows" / hashlib.sha256(str(Path(duckdb_path).resolve()).encode()).hexdigest()[:16]


def _remove_duckdb(path: Path) -> None:
    for leftover in (path, path.with_name(path.name + ".wal")):
        leftover.unlink(missing_ok=True)


def _build(paths: list[str], variables: dict[str, Any], *, duckdb_path: str, project_dir: str | None,
           target: str, profiles_dir: str | None = None) -> list[dict[str, Any]]:
    """Build the attribution models over the windows' entries, then read goodput_library_window_results."""
    from dbt.cli.main import dbtRunner

    run_dbt(["build", "--select", "+int_goodput__badput_buckets", "--exclude-resource-type", "test",
             "unit_test", "--full-refresh", *paths],
            duckdb_path=duckdb_path, project_dir=project_dir, target=target, variables=variables,
            profiles_dir=profiles_dir)
    result = dbtRunner().invoke([
        "--log-level", "none", "show", "--inline", "{{ goodput_library_window_results() }}", "--limit", "-1",
        *paths, *project_args(duckdb_path, project_dir, target, profiles_dir), "--vars", json.dumps(variables),
    ])
    if not result.success:
        raise LoaderError(f"reading the library windows failed: {result.exception}")
    table = result.result.results[0].agate_table
    return [{name: plain(value) for name, value in zip(table.column_names, row)} for row in table.rows]


def scratch_bigquery_profile(directory: Path, suffix: str, target: str, profiles_dir: str | None,
                             project_dir: str | None) -> str:
    """Write a profiles.yml holding one output: the user's BigQuery `target` with its dataset renamed
    `<dataset><suffix>`; return its directory.

    Everything a build writes besides its models (incremental state, build results, the watermark) goes
    to the target's dataset, so the window build must not run in the marts' dataset. The output is
    copied as written (env_var() and all: dbt renders it), so it authenticates as the user's builds do."""
    import yaml

    profile, output, dataset = _bigquery_output(target, profiles_dir, project_dir)
    scratch = {k: v for k, v in output.items() if k not in ("dataset", "schema")}
    scratch["dataset"] = f"{dataset}{suffix}"
    (directory / "profiles.yml").write_text(yaml.safe_dump(
        {profile: {"target": BIGQUERY_TARGET, "outputs": {BIGQUERY_TARGET: scratch}}}))
    return str(directory)


def _bigquery_output(target: str, profiles_dir: str | None, project_dir: str | None) -> tuple[str, dict, str]:
    """The project's profile name, the user's BigQuery output `target` as written and its dataset; an
    actionable LoaderError when the profile cannot be read or has no such output."""
    import yaml

    source_dir = Path(profiles_dir or os.environ.get("DBT_PROFILES_DIR") or find_project_dir(project_dir))
    source = source_dir / "profiles.yml"
    project = yaml.safe_load((find_project_dir(project_dir) / "dbt_project.yml").read_text())
    try:
        profiles = yaml.safe_load(source.read_text()) or {}
    except OSError as exc:
        raise LoaderError(f"cannot read the dbt profile for the BigQuery window build ({source}: {exc.strerror}): "
                          "pass --profiles-dir (the directory of your profiles.yml), or push with "
                          "--interval-semantics additive") from exc
    outputs = (profiles.get(project["profile"]) or {}).get("outputs") or {}
    output = outputs.get(target)
    if not isinstance(output, dict) or output.get("type") != "bigquery":
        raise LoaderError(f"{source}: profile {project['profile']!r} has no BigQuery output {target!r} (it has "
                          f"{', '.join(sorted(outputs)) or 'none'}): pass --dbt-target, or push with "
                          "--interval-semantics additive")
    dataset = output.get("dataset", output.get("schema"))
    if not dataset:
        raise LoaderError(f"{source}: output {target!r} names no dataset")
    return project["profile"], output, dataset


def _die_with_parent() -> None:
    """Ask Linux to kill this child when the push that started it dies (PR_SET_PDEATHSIG).

    A push killed by its scheduler (a timeout, the OOM killer) would otherwise leave its window build
    running with the warehouse attached, and the next command that opens the warehouse would fail on
    DuckDB's file lock until that build ended. Elsewhere a no-op: the orphan ends with its build."""
    import ctypes
    import signal

    if not sys.platform.startswith("linux"):
        return
    parent = os.getppid()
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the push died before the request took effect
        os._exit(1)


def main() -> None:
    """Child process: a JSON spec on stdin, the rows as JSON on stdout, an actionable error on stderr."""
    _die_with_parent()
    from dbt.cli.main import dbtRunner  # noqa: F401  (imported while the parent is still reading the marts)

    text = sys.stdin.read()
    if not text.strip():  # stdin closed without windows: nothing to build
        return
    spec = json.loads(text)
    try:
        rows = _build_and_read(spec["duckdb_path"], spec["windows"], spec["project_dir"], spec["bigquery"])
    except LoaderError as exc:
        print(f"window build failed: {exc}", file=sys.stderr)
        sys.exit(1)
    json.dump(rows, sys.stdout, default=lambda v: v.isoformat() if isinstance(v, dt.datetime) else str(v))


if __name__ == "__main__":
    main()
