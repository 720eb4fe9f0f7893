"""A fresh library calculator reads only the last 7 days of a job's log; the warehouse reads every entry.

docs/semantics.md's table of library outputs says so with both numbers: on day 8 of a job, a
calculator started cold (a new monitor, a restarted one without its cache) finds no job start and
raises "Total job time is zero"; the warehouse reports the Goodput of all 8 days. The cut-off is the library's own: its
_CloudLogger builds the Cloud Logging filter of a cold read here, and the test's logger answers it.
"""

from __future__ import annotations

import datetime as dt
import re

import pytest
from conftest import dbt_build, land_runs, query
from ml_goodput_measurement.src import goodput as lib_goodput
from support.oracle import ListCloudLogger, frozen_library_clock, payload_time, payloads_in_processing_order
from support.scenarios import PROJECT, record, utc

from goodput_loader.entries import format_rfc3339_us, log_name_for

T = 1_795_000_000.0
NAME = "eight-days"
DAY = 86_400.0


class RetainingLogger(ListCloudLogger):
    """Answers a cold read (no start, no last entry) with the entries after the cut-off the library's
    filter asks for; every other read as ListCloudLogger does."""

    def __init__(self, job_name: str, entries: list, cutoff: float):
        super().__init__(job_name, entries)
        self.cutoff = cutoff

    def read_cloud_logging_entries(self, start_time=None, end_time=None, last_entry_info=None):
        entries, last = super().read_cloud_logging_entries(start_time, end_time, last_entry_info)
        if start_time is None and last_entry_info is None:
            entries = [e for e in entries if payload_time(e) > self.cutoff]
        return entries, last


def cold_read_cutoff(now: dt.datetime) -> float:
    """The `timestamp>` bound of the filter the library's _CloudLogger sends on a cold read at `now`."""
    logger = lib_goodput._CloudLogger.__new__(lib_goodput._CloudLogger)
    logger.project_id, logger.log_name, logger.job_name = None, f"goodput_{NAME}", NAME
    logger.job_start_time, logger.retention_period = None, lib_goodput._CLOUD_LOGGING_DEFAULT_RETENTION
    bound = re.search(r'timestamp>"([^"]+)"', logger._get_filter_msg(None, now)).group(1)
    return dt.datetime.fromisoformat(bound).timestamp()


def test_on_day_8_a_cold_library_calculator_has_no_goodput_and_the_warehouse_has_all_of_it(tmp_path):
    ops = [("job_start", T)] + [("step", T + 60 + 600 * i, i) for i in range(int(8 * DAY / 600) - 1)]
    payloads = record(NAME, ops)
    now = utc(T + 8 * DAY)
    cutoff = cold_read_cutoff(now)
    assert cutoff == pytest.approx(T + DAY)  # 7 days back

    calculator = lib_goodput.GoodputCalculator(job_name=NAME, logger_name=f"goodput_{NAME}",
                                               cloud_logger=RetainingLogger(NAME, payloads, cutoff),
                                               cache_dir=str(tmp_path / "cache"))
    with frozen_library_clock(now), pytest.raises(ValueError, match="Total job time is zero"):
        calculator.get_job_goodput()

    entries = [{"logName": log_name_for(PROJECT, NAME), "insertId": f"{i:08d}", "severity": "INFO",
                "timestamp": format_rfc3339_us(int(round(payload_time(p) * 1e6))), "jsonPayload": p}
               for i, p in enumerate(payloads)]
    db = land_runs(tmp_path, {NAME: entries})
    dbt_build(db, now)
    [(elapsed, goodput)] = query(db, "select total_elapsed_seconds, goodput_pct from fct_goodput_cumulative")
    assert elapsed == pytest.approx(8 * DAY)
    # and it is what a library calculator that has read every entry (a monitor running since day 0) says
    warm = lib_goodput.GoodputCalculator(job_name=NAME, logger_name=f"goodput_{NAME}",
                                         cloud_logger=ListCloudLogger(NAME, payloads_in_processing_order(entries)),
                                         cache_dir=str(tmp_path / "warm"))
    with frozen_library_clock(now):
        assert goodput == pytest.approx(warm.get_job_goodput()[0], abs=1e-6)
