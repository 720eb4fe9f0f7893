"""The library monitor's own cycle at L (issue #18, target 2), side by side.

    python bench/monitor_cycle.py --repeats 1 [--out bench/RESULTS.md]

The L profile (one run, 3.3M entries) is landed and built up to a cut; then the entries
of the next 30 s, or of the next hour, arrive. Ours: `load` of those entries, the
incremental `build` (models only, as a scheduled cycle would run it), and `push --dry-run`,
each timed in its own process, each finding dbt's parse warm and the push state of the previous
cycle's push (untimed, sent to the tests' local Monitoring server) as a scheduled cycle does.
The library's: a GoodputCalculator warmed on the entries up to the cut (get_job_goodput
once, its cache filled), then its next poll with the new entries in its logger
(get_job_goodput again: what its monitor does every 30 s, cache path included), timed in
a child process. Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import BIN, MODELS_ONLY, ROOT, build, machine, measure, specs, warm, write_results  # noqa: E402

from goodput_loader.simulate import log_entries  # noqa: E402

sys.path.insert(0, str(ROOT / "tests"))
from support.fake_monitoring import FakeMonitoring  # noqa: E402

NEW = {"30 s": dt.timedelta(seconds=30), "1 h": dt.timedelta(hours=1)}


def write(folder: Path) -> dict[str, tuple[str, str, int]]:
    """L's entries up to each cut in folder/<label>/early.ndjson, the rest in later.ndjson.

    Returns, per label, the cut (the evaluation time of the warm build), the evaluation time of the
    cycle (a minute after the last entry) and the number of new entries.
    """
    entries = [e for spec in specs("L") for e in log_entries(spec, "bench")]
    last = dt.datetime.fromisoformat(entries[-1]["timestamp"].replace("Z", "+00:00"))
    out = {}
    for label, span in NEW.items():
        cut = (last - span).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        sub = folder / label.replace(" ", "")
        sub.mkdir(parents=True, exist_ok=True)
        early = [e for e in entries if e["timestamp"] <= cut]
        later = entries[len(early):]
        (sub / "early.ndjson").write_text("".join(json.dumps(e) + "\n" for e in early))
        (sub / "later.ndjson").write_text("".join(json.dumps(e) + "\n" for e in later))
        out[label] = (cut, (last + dt.timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%S.%fZ"), len(later))
    return out


def library_poll(early: Path, later: Path, cut: str, now: str) -> tuple[float, float]:
    """Seconds of the library's first computation (cold: every entry so far) and of its warm poll
    (run in this process: called as a child by main)."""
    sys.path.insert(0, str(ROOT / "tests"))
    import tempfile

    from ml_goodput_measurement.src import goodput as lib_goodput
    from support.oracle import ListCloudLogger, frozen_library_clock

    def payloads(path: Path) -> list[dict]:
        return [json.loads(line)["jsonPayload"] for line in path.open()]

    logger = ListCloudLogger("bench-l", payloads(early))
    with tempfile.TemporaryDirectory() as cache:
        calculator = lib_goodput.GoodputCalculator(job_name="bench-l", logger_name="goodput_bench-l",
                                                   cloud_logger=logger, cache_dir=cache)
        started = time.perf_counter()
        with frozen_library_clock(dt.datetime.fromisoformat(cut.replace("Z", "+00:00"))):
            calculator.get_job_goodput(include_badput_breakdown=True)  # warm: the cache holds every entry so far
        first = time.perf_counter() - started
        logger.entries.extend(payloads(later))
        started = time.perf_counter()
        with frozen_library_clock(dt.datetime.fromisoformat(now.replace("Z", "+00:00"))):
            calculator.get_job_goodput(include_badput_breakdown=True)
        return first, time.perf_counter() - started


def run(repeats: int, work: Path) -> list[dict]:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    folder = work / "monitor-cycle"
    # in a child: the 3.3M entries would otherwise count in the peak RSS of every process measured later
    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("fork")) as pool:
        cuts = pool.submit(write, folder).result()
    rows = []
    for label, (cut, now, new) in cuts.items():
        sub = folder / label.replace(" ", "")
        result: dict[str, list[float]] = {}
        for _ in range(repeats):
            db = sub / "l.duckdb"
            db.unlink(missing_ok=True)
            measure([str(BIN / "goodput-loader"), "load", "--duckdb", str(db), str(sub / "early.ndjson")])
            warm(db, cut)
            full = build(db, cut, MODELS_ONLY)
            result.setdefault("full_s", []).append(full.seconds)
            # L's entries lie in the simulated future: --since stands for the API's 25 hours before the
            # cycle's now, which push applies on its own to a run evaluated at the wall clock
            since = (dt.datetime.fromisoformat(now.replace("Z", "+00:00")) - dt.timedelta(hours=25)).isoformat()
            push_command = [str(BIN / "goodput-loader"), "push", "--duckdb", str(db), "--project", "p", "--location",
                            "us-central2", "--since", since]
            # the previous cycle's push, not timed, sent to the tests' local Monitoring server: it leaves the
            # push state a scheduled cycle finds (so the next push reads only what is new), and its window
            # build leaves dbt's parse of the scratch target warm (library_windows.scratch_dir)
            with FakeMonitoring(now=dt.datetime.fromisoformat(now.replace("Z", "+00:00"))) as server:
                measure(push_command + ["--endpoint", server.endpoint])
            push_command.append("--dry-run")
            warm(db, now)  # the cycle's parse: a scheduled refresh (no --as-of) always finds it
            load = measure([str(BIN / "goodput-loader"), "load", "--duckdb", str(db), str(sub / "later.ndjson")])
            built = build(db, now, MODELS_ONLY)
            push = measure(push_command)
            for key, value in [("load_s", load.seconds), ("build_s", built.seconds), ("push_s", push.seconds),
                               ("cycle_s", load.seconds + built.seconds + push.seconds),
                               ("cycle_rss", max(load.rss_mb, built.rss_mb, push.rss_mb))]:
                result.setdefault(key, []).append(value)
            poll = measure([sys.executable, __file__, "--library-poll", str(sub / "early.ndjson"),
                            str(sub / "later.ndjson"), cut, now])
            timed = json.loads(poll.stdout)
            result.setdefault("library_first_s", []).append(timed["first"])
            result.setdefault("library_s", []).append(timed["seconds"])
            result.setdefault("library_rss", []).append(poll.rss_mb)
        rows.append({"new": label, "new_entries": new, **{k: statistics.median(v) for k, v in result.items()}})
    return rows


def table(rows: list[dict]) -> str:
    lines = ["| new entries on L | ours: load + incremental build + push --dry-run s (RSS MB) "
             "| the library's warm poll s (RSS MB) | library / ours | our full build before, models only s "
             "| incremental build / full | the library's first computation s |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['new']} ({r['new_entries']:,}) | {r['load_s']:.1f} + {r['build_s']:.1f} + "
                     f"{r['push_s']:.1f} = {r['cycle_s']:.1f} ({r['cycle_rss']:.0f}) | "
                     f"{r['library_s']:.1f} ({r['library_rss']:.0f}) | {r['library_s'] / r['cycle_s']:.1f}× | "
                     f"{r['full_s']:.1f} | {r['build_s'] / r['full_s']:.0%} | {r['library_first_s']:.1f} |")
    return "\n".join(lines)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--library-poll":
        early, later, cut, now = sys.argv[2:6]
        first, seconds = library_poll(Path(early), Path(later), cut, now)
        print(json.dumps({"first": first, "seconds": seconds}))
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--work", type=Path, default=ROOT / "bench" / "work")
    parser.add_argument("--out", type=Path, help="also write the table into this Markdown file")
    args = parser.parse_args()
    rows = run(args.repeats, args.work)
    text = f"Machine: {machine()}; medians of {args.repeats} runs.\n\n{table(rows)}\n"
    if args.out:
        write_results(args.out, text, "monitor")
    print(text)


if __name__ == "__main__":
    main()
