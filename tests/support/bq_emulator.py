"""A local BigQuery (bqemulator, DuckDB-backed, real REST API) for the tests, started and stopped here.

bqemulator pins DuckDB 2.x while the loader and dbt-duckdb use 1.5, so it lives in its own
virtualenv (`make test` creates `.venv-bqemu`; GOODPUT_BQEMU_PYTHON points elsewhere).
`bq_emulator_main.py` is what that interpreter runs.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parents[2]


def emulator_python() -> Path:
    configured = os.environ.get("GOODPUT_BQEMU_PYTHON")
    path = Path(configured) if configured else ROOT / ".venv-bqemu" / "bin" / "python"
    if not path.exists():
        raise RuntimeError(f"no BigQuery emulator interpreter at {path}: run `make test` (it creates .venv-bqemu "
                           "with bqemulator==1.4.0) or set GOODPUT_BQEMU_PYTHON")
    return path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def running_emulator(log_path: Path) -> Iterator[str]:
    """Start the emulator on a free loopback port; yield its endpoint (http://127.0.0.1:PORT)."""
    port = _free_port()
    env = dict(os.environ, BQEMU_ENABLE_FORMAT_EXTENSIONS="false")
    with open(log_path, "w") as log:
        process = subprocess.Popen([str(emulator_python()), str(Path(__file__).with_name("bq_emulator_main.py")),
                                    str(port)], stdout=log, stderr=subprocess.STDOUT, env=env)
    endpoint = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{endpoint}/bigquery/v2/projects/probe/datasets", timeout=2)
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the BigQuery emulator did not start: {log_path.read_text()[-3000:]}")
                time.sleep(0.2)
        yield endpoint
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
