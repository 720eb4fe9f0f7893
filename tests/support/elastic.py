"""Random elastic (Pathways) runs recorded by the library's real ElasticGoodputRecorder.

Each run is a random scenario of support/scenarios.py (restarts, checkpoints, custom events, data
loading, running or finished) with elastic events laid over it: slice counts that drop and come back,
waits of several types (slice down, scale up in either case, unknown), nested, unmatched and reversed
waits, a wait that spans a restart, and re-initialisation overlapping accelerator init and training
preparation.

Re-initialisation entries: the 0.2.3 recorder writes them without `job_name`, and the library's
_CloudLogger.write_cloud_logging_entry reads entry["job_name"] (a KeyError with the real logger; the
test logger drops them, as the library's reader filters on jsonPayload.job_name). So the recorder's
own re-initialisation entries never reach a calculator. The runs here also carry re-initialisation
entries *with* `job_name` (as a recorder that set it would write them) so that the pairing and the
init-overlap correction are compared too; `recorder_reinit` ops go through the real recorder.
"""

from __future__ import annotations

import bisect
from typing import Any

from ml_goodput_measurement.src.goodput_elastic import ElasticGoodputRecorder
from support.oracle import ListCloudLogger
from support.scenarios import Picker, envelope, record, scenario, utc

WAIT_TYPES = ["slice_down", "scale_up", "SCALE_UP_wait", "Elastic-Scale_Up", "slice_lost", "maintenance"]


def elastic_ops(seed: int) -> tuple[list[tuple], list[bool], float]:
    """A random scenario's ops with elastic ops inserted at their times, its ties, and its end."""
    base = scenario(seed)
    pick = Picker(seed ^ 0x5EED)
    ops = list(base["ops"])
    first = ops[0][1]
    last = base["end"]
    extra: list[tuple] = []
    total = pick.sampled_from([1, 2, 4, 8])
    # slice counts, sometimes before the job starts, sometimes not until well after
    t = first + pick.sampled_from([-30.0, 0.0, pick.floats(0, max(1.0, (last - first) / 2))])
    active = available = total
    while t < last + 20 and len(extra) < 40:
        extra.append(("slices", t, active, total, available))
        t += pick.floats(0.5, max(1.0, (last - first) / 6))
        available = pick.integers(0, total)
        active = pick.integers(0, available)
    if pick.integers(0, 4) == 0:
        extra.append(("slices", t, total, total, total))  # after the last entry: outside every window
    # waits: paired, nested (start, start, end), an end without a start, a start without an end,
    # an end before its start, and waits that cover a restart
    for _ in range(pick.integers(0, 5)):
        kind = pick.sampled_from(WAIT_TYPES)
        start = pick.floats(first - 10, last)
        end = start + pick.floats(0, 600) * pick.sampled_from([1, 1, 1, -0.1])
        shape = pick.integers(0, 6)
        if shape == 0:
            extra.append(("wait_start", start, kind))
        elif shape == 1:
            extra.append(("wait_end", end, kind))
        elif shape == 2:
            extra += [("wait_start", start, kind), ("wait_start", start + 1.5, kind), ("wait_end", end + 2, kind)]
        else:
            extra += [("wait_start", start, kind), ("wait_end", end, kind)]
    # re-initialisation around (part of) an accelerator init or training prep, or anywhere
    inits = [op[1] for op in ops if op[0] in ("tpu_init_start", "training_prep_start", "tpu_init_end")]
    for _ in range(pick.integers(0, 3)):
        around = pick.sampled_from(inits) if inits and pick.booleans() else pick.floats(first, last)
        start = around - pick.floats(0, 20)
        end = around + pick.floats(-5, 40)
        shape = pick.integers(0, 5)
        if shape == 0:
            extra.append(("reinit_start", start))
        elif shape == 1:
            extra.append(("reinit_end", end))
        elif shape == 2:
            extra += [("recorder_reinit_start", start), ("recorder_reinit_end", end)]
        else:
            extra += [("reinit_start", start), ("reinit_end", end)]
    times = [op[1] for op in ops]
    for op in sorted(extra, key=lambda op: op[1]):
        at = bisect.bisect_right(times, op[1])  # ops are written in order of time, roughly
        ops.insert(at, op)
        times.insert(at, op[1])
    ties = base["ties"] + [pick.integers(0, 3) == 0 for _ in extra]
    return ops, ties, max(last, max(op[1] for op in ops))


def record_elastic(name: str, ops: list[tuple]) -> list[dict[str, Any]]:
    """Replay ops: elastic ones through the real ElasticGoodputRecorder, the rest as scenarios.record."""
    logger = ListCloudLogger(name)
    recorder = ElasticGoodputRecorder(job_name=name, logger_name=f"goodput_{name}", logging_enabled=True,
                                      cloud_logger=logger)
    plain: list[tuple] = []

    def flush_plain() -> None:
        logger.entries.extend(record(name, plain))
        plain.clear()

    for op in ops:
        kind, t = op[0], op[1]
        if kind not in ("slices", "wait_start", "wait_end", "reinit_start", "reinit_end",
                        "recorder_reinit_start", "recorder_reinit_end"):
            plain.append(op)
            continue
        flush_plain()
        if kind == "slices":
            recorder.record_elastic_slice_counts(active_slices=op[2], total_slices=op[3], available_slices=op[4],
                                                 timestamp=utc(t))
        elif kind == "wait_start":
            recorder.record_elastic_wait_start_time(op[2], utc(t))
        elif kind == "wait_end":
            recorder.record_elastic_wait_end_time(op[2], utc(t))
        elif kind == "recorder_reinit_start":
            recorder.record_elastic_reinit_start_time(utc(t))
        elif kind == "recorder_reinit_end":
            recorder.record_elastic_reinit_end_time(utc(t))
        else:
            key = "elastic_reinit_start_time" if kind == "reinit_start" else "elastic_reinit_end_time"
            logger.entries.append({"job_name": name, key: utc(t).timestamp()})
    flush_plain()
    return logger.entries


def random_elastic_runs(seeds: list[int], prefix: str = "elastic") -> tuple[dict[str, list[dict[str, Any]]], float]:
    """One recorded elastic run per seed as LogEntries, and the latest time any of them reaches."""
    runs, end = {}, 0.0
    for i, seed in enumerate(seeds):
        ops, ties, last = elastic_ops(seed)
        name = f"{prefix}-{i:03d}"
        runs[name] = envelope(name, record_elastic(name, ops), ties)
        end = max(end, last)
    return runs, end
