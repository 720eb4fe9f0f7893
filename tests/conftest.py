"""Shared fixtures: a temporary warehouse, the CLI, and queries against it."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import pytest
from click.testing import CliRunner

from goodput_loader.cli import main

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def pytest_configure(config: pytest.Config) -> None:
    """Under pytest-xdist, each worker's dbt keeps its own target and log directories (inherited by the
    builds it starts in subprocesses): two dbt processes writing one partial-parse file or manifest
    would read each other's half-written state."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:
        for variable, default in (("DBT_TARGET_PATH", "target"), ("DBT_LOG_PATH", "logs")):
            # a directory set for the whole session is shared too: each worker takes its own under it
            base = ROOT / (os.environ.get(variable) or default)
            os.environ[variable] = str(base / f"xdist-{worker}")


@pytest.fixture
def warehouse(tmp_path: Path) -> Path:
    return tmp_path / "warehouse.duckdb"


def run_cli(*args: str, expect: int | None = 0) -> Any:
    """Run goodput-loader in-process; check the exit code unless expect is None."""
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    if expect is not None:
        assert result.exit_code == expect, f"exit {result.exit_code}\nstdout:{result.stdout}\nstderr:{result.stderr}"
    return result


def query(db: Path, sql: str, params: list[Any] | None = None) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


def land_runs(tmp_path: Path, runs: dict[str, list[dict[str, Any]]]) -> Path:
    """Write every run's LogEntries to one NDJSON file and load it into a new warehouse."""
    path = tmp_path / "entries.ndjson"
    with open(path, "w") as fh:
        for entries in runs.values():
            fh.writelines(json.dumps(e) + "\n" for e in entries)
    db = tmp_path / "warehouse.duckdb"
    run_cli("load", "--duckdb", db, path)
    assert query(db, "select count(*) from goodput_raw.rejected_entries") == [(0,)]
    return db


def dbt_build(db: Path, as_of: dt.datetime, *extra: str) -> subprocess.CompletedProcess:
    """`goodput-loader build` in a subprocess (dbt keeps global state per process)."""
    env = dict(os.environ)
    result = subprocess.run(
        [str(BIN / "goodput-loader"), "build", "--duckdb", str(db), "--as-of", as_of.isoformat(), *extra],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, f"dbt build failed:\n{result.stdout[-6000:]}\n{result.stderr[-6000:]}"
    return result


def cli_subprocess(*args: str, expect: int | None = 0) -> subprocess.CompletedProcess:
    """goodput-loader in a subprocess, for commands that run dbt (it keeps global state per process);
    check the exit code unless expect is None."""
    result = subprocess.run([str(BIN / "goodput-loader"), *map(str, args)], cwd=ROOT, capture_output=True,
                            text=True, timeout=600)
    if expect is not None:
        assert result.returncode == expect, (f"goodput-loader {args} exited {result.returncode}:\n"
                                             f"{result.stdout[-4000:]}\n{result.stderr[-4000:]}")
    return result
