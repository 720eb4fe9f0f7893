"""One elastic run, built once: its intervals against ElasticGoodputCalculator, and the corrected figures.

The run: job start, a slice-count record, 10 s steps; a slice-down wait over the 40 s step 9 with a
scale-up wait inside it and a re-initialisation right after it; a new slice-count record; later a
wait of a type that does not say slice down ('maintenance'), and the job end. The random elastic
scenarios against the library are in test_differential.py and test_push_library.py; here each of
the library's questionable rules is pinned with both numbers.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import cli_subprocess, dbt_build, land_runs, query
from ml_goodput_measurement.src.goodput_elastic import ElasticGoodputCalculator
from support.elastic import record_elastic
from support.oracle import reference_goodput, reference_interval
from support.scenarios import utc
from test_interval import T, approx, ours_of, timed_envelope

NAME = "elastic-steady"
AS_OF = T + 1200


def ops() -> list[tuple]:
    out: list[tuple] = [("job_start", T), ("slices", T + 1, 2, 4, 3)]
    out += [("step", T + 10 + 10 * i, i) for i in range(10)]  # steps 0..9; step 9 lasts 40 s
    out += [("wait_start", T + 105, "slice_down"), ("wait_start", T + 120, "elastic_scale_up"),
            ("wait_end", T + 130, "elastic_scale_up"), ("wait_end", T + 135, "slice_down"),
            ("reinit_start", T + 135), ("reinit_end", T + 138), ("slices", T + 135, 4, 4, 4)]
    out += [("step", T + 140 + 10 * i, 10 + i) for i in range(36)]  # ... step 45 at T + 490
    out += [("wait_start", T + 500, "maintenance"), ("wait_end", T + 505, "maintenance")]
    out += [("step", T + 500 + 10 * i, 46 + i) for i in range(64)] + [("job_end", T + 1140)]
    return sorted(out, key=lambda op: op[1])


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> tuple[Path, list[dict[str, Any]], Path]:
    tmp_path = tmp_path_factory.mktemp("elastic")
    payloads = record_elastic(NAME, ops())
    db = land_runs(tmp_path, {NAME: timed_envelope(payloads, NAME)})
    dbt_build(db, utc(AS_OF))
    return db, payloads, tmp_path


def test_intervals_are_the_elastic_calculators(warehouse):
    """A run with ElasticGoodputRecorder entries is measured by ElasticGoodputCalculator in every window:
    a window holding waits and a slice-count record gets the ELASTIC_* buckets and both slice
    efficiencies; a later window with no elastic entry still has the three buckets (at 0) and, like the
    library, no efficiency. --semantics additive weighs the slice counts over the counted interval with the
    record in force at its start (the run's), as the rolling marts do."""
    db, payloads, tmp_path = warehouse
    records = ElasticGoodputCalculator._extract_slice_count_entries(payloads)
    additive: dict[str, Any] = {}
    for start, end, has_efficiency in [(T + 50, T + 200, True), (T + 600, T + 900, False)]:
        out = json.loads(cli_subprocess("interval", "--duckdb", db, "--run", NAME, "--start", utc(start).isoformat(),
                                        "--end", utc(end).isoformat(), "--json").stdout)
        lib = reference_interval(NAME, payloads, utc(start), utc(end), tmp_path, ElasticGoodputCalculator)
        seconds = {(b["badput_type"], b["custom_badput_event_type"]): b["badput_seconds"] for b in out["badput"]}
        assert {"ELASTIC_SLICE_DOWN", "ELASTIC_SCALE_UP", "ELASTIC_REINITIALIZATION"} <= {k[0] for k in seconds}
        assert set(seconds) == set(lib["badput_seconds"])
        for key, value in lib["badput_seconds"].items():
            assert seconds[key] == approx(value), key
        assert seconds[("ELASTIC_SLICE_DOWN", None)] == approx(30.0 if has_efficiency else 0.0)
        assert out["goodput_pct"] == approx(lib["goodput_pct"])
        if has_efficiency:
            # one record before the window (not in it: counts as 0 for the library), one inside
            assert lib["stepping_slice_efficiency"] == approx((200 - 135) / 150)
            assert out["stepping_slice_efficiency"] == approx(lib["stepping_slice_efficiency"])
            assert out["available_slice_efficiency"] == approx(lib["available_slice_efficiency"])
        else:
            assert lib["stepping_slice_efficiency"] is None and "stepping_slice_efficiency" not in out
        additive = ours_of(db, NAME, start, end)
        counted_from = dt.datetime.fromisoformat(additive["counted_from"].replace("Z", "+00:00")).timestamp()
        stepping, available = ElasticGoodputCalculator._compute_time_weighted_efficiency(
            records, counted_from, counted_from + additive["elapsed_seconds"])
        assert additive["stepping_slice_efficiency"] == approx(stepping)
        assert additive["available_slice_efficiency"] == approx(available)
    assert additive["stepping_slice_efficiency"] == approx(1.0)  # the second record holds over the quiet window


def test_the_library_counts_wait_time_twice_and_the_net_figure_does_not(warehouse):
    """The library adds the waits and the re-initialisation (30 + 10 + 3 + 5 s) as Badput and leaves them in
    productive time: step 9 (T+100..T+140) stays productive through the slice-down wait, the nested
    scale-up wait and the re-initialisation, and step 46 through the maintenance wait. So productive plus
    Badput exceed the elapsed time and OTHER is 0. The net figure takes out the 33 + 5 s of productive
    time under way while a wait or re-initialisation was (the nested wait once)."""
    db, payloads, tmp_path = warehouse
    lib = reference_goodput(NAME, payloads, utc(AS_OF), tmp_path / "cache", calculator_class=ElasticGoodputCalculator)
    (goodput, productive, total, net, net_pct, unnamed, other), = query(db, """
        select goodput_pct, productive_seconds, total_elapsed_seconds, productive_seconds_net_of_elastic,
               goodput_pct_net_of_elastic, elastic_slice_down_unnamed_seconds, other_seconds
        from fct_goodput_cumulative""")
    assert goodput == approx(lib["goodput_pct"]) and productive == approx(lib["productive_seconds"])
    badput = {bucket.name: seconds for bucket, seconds in lib["badput_seconds"].items()
              if not isinstance(seconds, dict)}
    assert badput["ELASTIC_SLICE_DOWN"] == approx(35.0) and badput["ELASTIC_SCALE_UP"] == approx(10.0)
    assert badput["ELASTIC_REINITIALIZATION"] == approx(3.0)
    # the quirk, pinned: productive + counted Badput > elapsed, OTHER clamped to 0
    assert productive + 48.0 > total and other == approx(0.0) and badput["OTHER"] == approx(0.0)
    assert net == approx(productive - 38.0)
    assert net_pct == approx(net / total * 100) and net_pct < goodput
    # of the 35 s of ELASTIC_SLICE_DOWN, the 5 s 'maintenance' wait does not say slice down
    assert unnamed == approx(5.0)
