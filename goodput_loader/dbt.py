"""Run the dbt project programmatically, so users need not know where it lives.

``goodput-loader build`` = ``dbt build`` with this project's directory and
profile, the warehouse file the loader wrote, and ``goodput_as_of`` when an
evaluation time is given. Plain ``dbt build`` from the repository root works
too (profiles.yml sits there).
"""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path
from typing import Any, Sequence

from goodput_loader.errors import LoaderError


def find_project_dir(explicit: str | None = None) -> Path:
    """The dbt project: --project-dir, $GOODPUT_DBT_PROJECT_DIR, or the checkout holding this package."""
    candidates = [explicit, os.environ.get("GOODPUT_DBT_PROJECT_DIR"), str(Path(__file__).resolve().parents[1])]
    for candidate in candidates:
        if candidate and (Path(candidate) / "dbt_project.yml").is_file():
            return Path(candidate).resolve()
    raise LoaderError(
        "cannot find the goodput_warehouse dbt project (dbt_project.yml): pass --project-dir "
        "or set GOODPUT_DBT_PROJECT_DIR to the repository checkout"
    )


def dbt_vars(as_of: dt.datetime | None, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The --vars dbt gets: the evaluation time plus any user-given project vars."""
    variables: dict[str, Any] = dict(extra or {})
    if as_of is not None:
        variables["goodput_as_of"] = as_of.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return variables


def parse_var(assignment: str) -> tuple[str, Any]:
    """KEY=VALUE from the command line; VALUE is YAML, so 60 is a number and [5, 60] a list."""
    import yaml

    key, sep, value = assignment.partition("=")
    if not sep or not key.strip():
        raise LoaderError(f"--var {assignment!r}: expected KEY=VALUE, e.g. rolling_grid_seconds=300")
    try:
        return key.strip(), yaml.safe_load(value)
    except yaml.YAMLError as exc:
        raise LoaderError(f"--var {key}: value {value!r} is not valid YAML: {exc}") from exc


def project_args(duckdb_path: str, project_dir: str | None = None, target: str = "duckdb",
                 profiles_dir: str | None = None) -> list[str]:
    """The arguments (and GOODPUT_DUCKDB) every dbt invocation of ours needs: this project, its profile
    (the project's profiles.yml unless another directory is given), the target, and the warehouse file."""
    project = find_project_dir(project_dir)
    if duckdb_path:
        os.environ["GOODPUT_DUCKDB"] = str(Path(duckdb_path).resolve())
    return ["--project-dir", str(project), "--profiles-dir", str(profiles_dir or project), "--target", target]


def run_dbt(
    args: Sequence[str],
    *,
    duckdb_path: str,
    as_of: dt.datetime | None = None,
    project_dir: str | None = None,
    quiet: bool = True,
    target: str = "duckdb",
    variables: dict[str, Any] | None = None,
    profiles_dir: str | None = None,
) -> None:
    """Invoke dbt in-process; raise LoaderError naming what failed."""
    from dbt.cli.main import dbtRunner

    os.environ.setdefault("GOODPUT_DBT_TARGET", target)
    cli_args = [*args, *project_args(duckdb_path, project_dir, target, profiles_dir)]
    all_vars = dbt_vars(as_of, variables)
    if all_vars:
        cli_args += ["--vars", json.dumps(all_vars)]
    if quiet:
        cli_args = ["--quiet", *cli_args]
    try:
        result = dbtRunner().invoke(cli_args)
    finally:
        release_duckdb()
    if result.success:
        return
    failures = []
    for node_result in getattr(result.result, "results", None) or []:
        status = str(getattr(node_result, "status", ""))
        if status in {"error", "fail", "runtime error"}:
            failures.append(f"{node_result.node.name}: {status}: {node_result.message}")
    detail = "; ".join(failures[:5]) or (str(result.exception) if result.exception else "see dbt's output above")
    raise LoaderError(f"dbt {' '.join(args)} failed: {detail}")


def release_duckdb() -> None:
    """Close the DuckDB instance dbt-duckdb keeps open for the life of the process after a dbt command.

    Holding it keeps the warehouse file locked: the process that just built could then not hand the
    warehouse to another one (push's window build runs in a child process) nor reopen it itself."""
    try:
        from dbt.adapters.duckdb.connections import DuckDBConnectionManager
    except ImportError:  # the duckdb adapter is not installed: nothing is held
        return
    with DuckDBConnectionManager._LOCK:
        if DuckDBConnectionManager._ENV is not None:
            DuckDBConnectionManager._ENV.close()
            DuckDBConnectionManager._ENV = None
