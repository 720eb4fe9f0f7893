"""A load killed at any point and run again ends with exactly the uninterrupted table."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import BIN, query, run_cli

from goodput_loader.simulate import RunSpec, write_run

SQL = "select log_name, timestamp, insert_id, payload from goodput_raw.log_entries order by all"


@pytest.fixture(scope="module")
def big_file(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("kill")
    spec = RunSpec(name="killed", start=1_795_000_000.0, steps=40_000, restarts=3, duplicate_rate=0.01)
    path, _ = write_run(spec, out, "proj", compress=True)
    return path


@pytest.mark.parametrize("delay", [0.8, 1.6, 2.4])
def test_killed_load_resumes_to_the_same_table(tmp_path, big_file, delay):
    reference = tmp_path / "reference.duckdb"
    run_cli("load", "--duckdb", reference, big_file)
    expected = query(reference, SQL)

    target = tmp_path / "killed.duckdb"
    process = subprocess.Popen(
        [str(BIN / "goodput-loader"), "load", "--batch-size", "5000", "--duckdb", str(target), str(big_file)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(delay)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    partial = query(target, "select count(*) from goodput_raw.log_entries")[0][0] if target.exists() else 0
    run_cli("load", "--duckdb", target, big_file)
    assert query(target, SQL) == expected
    # the cursor matches what was committed, so nothing was lost or read twice into the table
    state = query(target, "select cursor_offset, entries_landed from goodput_raw.load_state")
    assert state[0][1] == len(expected)
    assert partial <= len(expected)
    print(f"killed after {delay}s with {partial} of {len(expected)} rows committed", file=sys.stderr)
