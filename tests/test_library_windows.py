"""Interval Goodput with the library's semantics against the real GoodputCalculator.get_job_goodput_interval.

Random runs recorded by the real GoodputRecorder (restarts, rollbacks, checkpoints, custom events,
data loading, running and finished), windows cut at random points and where the two computations
part ways: near a restart, inside accelerator init, after a rollback, live at a running job's last
entry, on an entry's exact time, under a second, holding one entry, holding none. Every window is
computed by one window build (goodput_loader/library_windows.py) and by a fresh library calculator;
where the library raises ours must give its reason, elsewhere Goodput, the total, every key of the
Badput breakdown, the last productive step and the disruptions must be equal within 1e-6.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from conftest import land_runs
from ml_goodput_measurement.src import goodput as lib_goodput
from support.oracle import ListCloudLogger, breakdown_by_key, payload_time, payloads_in_processing_order
from support.scenarios import random_runs, utc

from goodput_loader.library_windows import Window, library_window_rows

SEEDS = list(range(500, 540))


def library_interval(name: str, payloads: list[dict[str, Any]], start: float, end: float,
                     cache_dir: Path) -> dict[str, Any]:
    """What get_job_goodput_interval returns for [start, end], or the error it raises."""
    calculator = lib_goodput.GoodputCalculator(job_name=name, logger_name=f"goodput_{name}",
                                               cloud_logger=ListCloudLogger(name, payloads),
                                               cache_dir=str(cache_dir))
    try:
        goodput, breakdown, max_step, total, disruptions = calculator.get_job_goodput_interval(utc(start), utc(end))
    except Exception as exc:  # noqa: BLE001 - the monitor catches every exception the same way
        return {"error": f"{type(exc).__name__}: {exc}"}
    pct = breakdown_by_key(breakdown)
    return {"goodput_pct": goodput, "badput_pct": pct, "max_productive_step": max_step,
            "elapsed_seconds": total, "disruptions": disruptions}


def windows_of(payloads: list[dict[str, Any]], seed: int) -> list[tuple[float, float]]:
    """Windows over one run: whole, random, at restarts and init, live at its end, degenerate."""
    import random

    rng = random.Random(seed)
    times = [payload_time(p) for p in payloads]
    first, last = min(times), max(times)
    starts = [payload_time(p) for p in payloads if "job_start_time" in p]
    inits = [payload_time(p) for p in payloads if "tpu_init_start_time" in p or "training_prep_start_time" in p]
    out = [(first - 1, last + 1), (last - 3600, last), (last - 60, last + 30), (first - 100, first - 50)]
    for _ in range(3):
        a, b = sorted(rng.uniform(first - 5, last + 5) for _ in range(2))
        out.append((a, b))
    for t in starts[1:] + inits:
        out.append((t - rng.uniform(0, 30), t + rng.uniform(1, 600)))
        out.append((t + rng.uniform(0, 3), t + rng.uniform(30, 3000)))
    k = rng.randrange(len(times))
    out.append((times[k], times[k] + rng.uniform(1, 200)))       # starts on an entry's time (excluded)
    out.append((times[k] - rng.uniform(1, 200), times[k]))       # ends on an entry's time (included)
    out.append((times[k] - 1e-4, times[k]))                      # holds (about) one entry
    out.append((times[k], times[k] + 0.5))                       # under a second
    return out


def ours(db: Path, windows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One window build for every window."""
    return library_window_rows(str(db), [Window(w["run"], dt.datetime.fromisoformat(w["start"]),
                                                dt.datetime.fromisoformat(w["end"])) for w in windows])


@pytest.fixture(scope="module")
def compared(tmp_path_factory) -> list[tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]]:
    tmp_path = tmp_path_factory.mktemp("library-windows")
    runs, _ = random_runs(SEEDS)
    db = land_runs(tmp_path, runs)
    cases = []
    for i, (name, entries) in enumerate(runs.items()):
        payloads = payloads_in_processing_order(entries)
        for start, end in windows_of(payloads, SEEDS[i]):
            cases.append({"run": name, "start": utc(start).isoformat(), "end": utc(end).isoformat(),
                          "payloads": payloads, "bounds": (start, end)})
    rows = ours(db, [{k: c[k] for k in ("run", "start", "end")} for c in cases])
    by_window: dict[int, list[dict[str, Any]]] = {}
    for row in rows:
        by_window.setdefault(int(row["window_no"]), []).append(row)
    out = []
    for no, case in enumerate(cases):
        start, end = case["bounds"]
        # round-trip the bounds through the ISO text dbt got, so both sides see the same microseconds
        start = dt.datetime.fromisoformat(case["start"]).timestamp()
        end = dt.datetime.fromisoformat(case["end"]).timestamp()
        out.append((case, library_interval(case["run"], case["payloads"], start, end, tmp_path / f"c{no}"),
                    by_window[no]))
    return out


def test_every_window_equals_the_library(compared):
    raised = computed = 0
    for case, lib, rows in compared:
        where = f"{case['run']} [{case['start']}, {case['end']}]"
        reason = rows[0]["invalid_reason"]
        if "error" in lib:
            raised += 1
            assert reason is not None, f"{where}: the library raises {lib['error']}, we computed {rows}"
            assert lib["error"].split(": ", 1)[1].startswith(reason.rstrip(".")), (where, lib["error"], reason)
            continue
        computed += 1
        assert reason is None, f"{where}: we refuse ({reason}), the library gives {lib}"
        measures = {(r["measure"], r["custom_badput_event_type"]): r for r in rows}
        assert measures[("PRODUCTIVE", None)]["pct"] == pytest.approx(lib["goodput_pct"], abs=1e-6), where
        assert rows[0]["elapsed_seconds"] == pytest.approx(lib["elapsed_seconds"], abs=1e-6), where
        assert int(rows[0]["max_productive_step"]) == lib["max_productive_step"], where
        assert int(measures[("DISRUPTIONS", None)]["seconds"]) == lib["disruptions"], where
        ours_pct = {key: r["pct"] for key, r in measures.items() if key[0] not in ("PRODUCTIVE", "DISRUPTIONS")}
        assert set(ours_pct) == set(lib["badput_pct"]), where
        for key, value in lib["badput_pct"].items():
            assert ours_pct[key] == pytest.approx(value, abs=1e-6), (where, key)
    # the comparison covers both outcomes, many times each
    assert computed > 300 and raised > 60, (computed, raised)


def test_windows_where_the_two_semantics_part_ways_are_covered(compared):
    """The cases the README's worked example rests on do occur: a window whose Goodput differs from the
    run's cumulative attribution located in time (a restart or a step cut at the window edge)."""
    restarts = [lib for case, lib, _ in compared if "error" not in lib and lib["disruptions"] > 0]
    startup_at_edge = [lib for case, lib, _ in compared
                       if "error" not in lib and lib["badput_pct"].get(("PROGRAM_STARTUP", None), 0) > 0]
    assert len(restarts) > 20 and len(startup_at_edge) > 50, (len(restarts), len(startup_at_edge))
