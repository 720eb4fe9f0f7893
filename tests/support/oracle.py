"""Drive the reference library (ml-goodput-measurement 0.2.3) offline, as an oracle.

The library's own tests inject a cloud logger into GoodputRecorder and
GoodputCalculator; we do the same: a logger that keeps entries in a list, fed
either by the real GoodputRecorder or by entries already landed. The
calculator's clock is frozen so "now" (the evaluation time of a running job)
is the same instant our dbt build is given with goodput_as_of.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import types
from pathlib import Path
from typing import Any, Iterator

from ml_goodput_measurement.src import goodput as lib_goodput
from ml_goodput_measurement.src import goodput_exclusion as lib_goodput_exclusion


class ListCloudLogger:
    """Stands in for the library's _CloudLogger: entries live in a list, in write order."""

    def __init__(self, job_name: str, entries: list[dict[str, Any]] | None = None):
        self.job_name = job_name
        self.entries: list[dict[str, Any]] = list(entries or [])

    def write_cloud_logging_entry(self, entry: dict[str, Any] | None) -> None:
        if entry is None or entry.get("job_name") != self.job_name:
            return
        self.entries.append(entry)

    def flush(self) -> None:
        pass

    def read_cloud_logging_entries(self, start_time=None, end_time=None, last_entry_info=None):
        """What the real _CloudLogger returns: all entries, or for an interval query those Cloud
        Logging's filter would return (start < timestamp <= end, the payload's first *_time key standing
        for the timestamp); after a previous read (last_entry_info) only the entries written since.

        Like the real one it answers with the last entry's (timestamp, id) (here the id is its position):
        the calculator's cache asks for "after this entry" on its next poll, so a warm poll reads only the
        new entries, as the library's monitor does.
        """
        first = 0
        if last_entry_info is not None and last_entry_info[1] is not None:
            first = int(last_entry_info[1])
        entries = self.entries[first:]
        if start_time is not None or end_time is not None:
            low = start_time.timestamp() if start_time is not None and last_entry_info is None else -float("inf")
            high = end_time.timestamp() if end_time is not None else float("inf")
            entries = [e for e in entries if low < payload_time(e) <= high]
        if not entries:
            return [], (None, None)
        last = entries[-1]
        position = first + next(i for i in range(len(self.entries) - first - 1, -1, -1)
                                if self.entries[first + i] is last) + 1
        return entries, (dt.datetime.fromtimestamp(payload_time(last), dt.timezone.utc), str(position))


def payloads_in_processing_order(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The payloads of LogEntries as the library reads them: by (timestamp, insertId), each entry once."""
    seen, payloads = set(), []
    for entry in sorted(entries, key=lambda e: (e["timestamp"], e["insertId"])):
        if (entry["timestamp"], entry["insertId"]) not in seen:
            seen.add((entry["timestamp"], entry["insertId"]))
            payloads.append(entry["jsonPayload"])
    return payloads


def breakdown_by_key(breakdown: dict[Any, Any]) -> dict[tuple[str, str | None], float]:
    """A library Badput breakdown ({BadputType: value, CUSTOM_BADPUT_EVENTS: {type: value}}) keyed as the
    marts key their rows: (badput_type, custom_badput_event_type or None)."""
    flat: dict[tuple[str, str | None], float] = {}
    for badput_type, value in breakdown.items():
        if isinstance(value, dict):
            flat.update({(badput_type.name, sub): v for sub, v in value.items()})
        else:
            flat[(badput_type.name, None)] = value
    return flat


def payload_time(payload: dict[str, Any]) -> float:
    """The time the library reads from an entry: its first key containing "_time"."""
    return next(value for key, value in payload.items() if "_time" in key)


@contextlib.contextmanager
def frozen_library_clock(now: dt.datetime) -> Iterator[None]:
    """Make the library's datetime.datetime.now() return `now`."""

    class FrozenDatetime(dt.datetime):
        @classmethod
        def now(cls, tz=None):  # noqa: D401 - mirrors datetime.now
            return now if tz is None else now.astimezone(tz)

    # goodput.py and its exclusion mixin (goodput_exclusion.py) each read the clock
    modules = [lib_goodput, lib_goodput_exclusion]
    originals = [module.datetime for module in modules]
    for module in modules:
        module.datetime = types.SimpleNamespace(datetime=FrozenDatetime, timezone=dt.timezone,
                                                timedelta=dt.timedelta)
    try:
        yield
    finally:
        for module, original in zip(modules, originals):
            module.datetime = original


def reference_goodput(
    job_name: str,
    payloads: list[dict[str, Any]],
    as_of: dt.datetime,
    cache_dir: Path,
    configured_ideal_step_time: float | None = None,
    calculator_class: Any = None,
) -> dict[str, Any]:
    """What GoodputCalculator (or calculator_class, e.g. ElasticGoodputCalculator) reports for these
    payloads (in processing order) at `as_of`."""
    logger = ListCloudLogger(job_name, payloads)
    calculator = (calculator_class or lib_goodput.GoodputCalculator)(
        job_name=job_name, logger_name=f"goodput_{job_name}", cloud_logger=logger, cache_dir=str(cache_dir)
    )
    result: dict[str, Any] = {}
    with frozen_library_clock(as_of):
        try:
            goodput_pct, breakdown, last_step = calculator.get_job_goodput(
                include_badput_breakdown=True, configured_ideal_step_time=configured_ideal_step_time
            )
        except ValueError as exc:
            return {"error": str(exc)}
        details = calculator.get_job_goodput_details()
    result["goodput_pct"] = goodput_pct
    result["max_productive_step"] = last_step
    result["breakdown_pct"] = breakdown
    result["productive_seconds"] = details["goodput_time"][lib_goodput.GoodputType.TOTAL]
    result["badput_seconds"] = details["badput_time"]
    result["total_elapsed_seconds"] = details["total_elapsed_time"]
    result["disruptions"] = details["disruption_count"]
    result["ideal_step_seconds"] = details["ideal_step_time"]
    # ElasticGoodputCalculator's, when the run has slice counts
    result["stepping_slice_efficiency"] = details.get("stepping_slice_efficiency")
    result["available_slice_efficiency"] = details.get("available_slice_efficiency")
    deviations = details["step_time_deviation"]
    if deviations:
        from ml_goodput_measurement.src import goodput_utils

        result["step_time_deviation_seconds"] = float(
            goodput_utils.compute_step_deviation_from_baseline(deviations)
        )
    else:
        result["step_time_deviation_seconds"] = None
    info = calculator._goodput_cache.get_goodput_info()  # the cache is where it keeps these
    result["last_recorded_step"] = info.last_recorded_step if info else None
    return result


def reference_interval(job_name: str, payloads: list[dict[str, Any]], start: dt.datetime,
                       end: dt.datetime, cache_dir: Path, calculator_class: Any = None) -> dict[str, Any]:
    """What GoodputCalculator (or calculator_class) .get_job_goodput_interval reports for [start, end]:
    seconds per bucket; an ElasticGoodputCalculator's slice efficiencies from its
    get_interval_metric_details (None where it reports none)."""
    logger = ListCloudLogger(job_name, payloads)
    calculator = (calculator_class or lib_goodput.GoodputCalculator)(
        job_name=job_name, logger_name=f"goodput_{job_name}", cloud_logger=logger, cache_dir=str(cache_dir)
    )
    goodput_pct, breakdown, max_step, total, disruptions = calculator.get_job_goodput_interval(start, end)
    details = calculator.get_interval_metric_details(start, end) if calculator_class else {}
    seconds: dict[tuple[str, str | None], float] = {}
    for badput_type, value in breakdown.items():
        if isinstance(value, dict):
            for sub, pct in value.items():
                seconds[(badput_type.name, sub)] = pct * total / 100
        else:
            seconds[(badput_type.name, None)] = value * total / 100
    return {"goodput_pct": goodput_pct, "elapsed_seconds": total, "productive_seconds": goodput_pct * total / 100,
            "badput_seconds": seconds, "max_productive_step": max_step, "disruptions": disruptions,
            "stepping_slice_efficiency": details.get("stepping_slice_efficiency"),
            "available_slice_efficiency": details.get("available_slice_efficiency")}
