"""Time the reference library over one run's entries, fed from memory: the baseline of bench.py.

    python bench/reference.py FILE.ndjson AS_OF_ISO   ->  prints {"seconds": ..., "goodput_pct": ...}

The entries are read and ordered first (not timed), then GoodputCalculator.get_job_goodput(
include_badput_breakdown=True) runs once over them with a frozen clock, as tests/support/oracle.py
drives it for the differential tests.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from ml_goodput_measurement.src import goodput as lib_goodput  # noqa: E402
from support.oracle import ListCloudLogger, frozen_library_clock  # noqa: E402


def main() -> None:
    path, as_of = Path(sys.argv[1]), dt.datetime.fromisoformat(sys.argv[2].replace("Z", "+00:00"))
    entries = [json.loads(line) for line in path.open()]
    entries.sort(key=lambda e: (e["timestamp"], e["insertId"]))
    seen, payloads = set(), []
    for e in entries:
        if (e["timestamp"], e["insertId"]) not in seen:
            seen.add((e["timestamp"], e["insertId"]))
            payloads.append(e["jsonPayload"])
    job = path.name.removeprefix("goodput_").split(".")[0]
    del entries, seen
    with tempfile.TemporaryDirectory() as cache:
        calculator = lib_goodput.GoodputCalculator(job_name=job, logger_name=f"goodput_{job}",
                                                   cloud_logger=ListCloudLogger(job, payloads), cache_dir=cache)
        started = time.perf_counter()
        error = None
        with frozen_library_clock(as_of):
            try:
                goodput_pct, _, _ = calculator.get_job_goodput(include_badput_breakdown=True)
            except ValueError as exc:  # the library's verdict on invalid input: still a full computation
                goodput_pct, error = None, str(exc)
        seconds = time.perf_counter() - started
    print(json.dumps({"seconds": seconds, "goodput_pct": goodput_pct, "entries": len(payloads), "error": error}))


if __name__ == "__main__":
    main()
