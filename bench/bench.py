"""Benchmarks: loader, dbt build (cumulative only / with rolling windows), incremental rebuild, and
the reference GoodputCalculator on the same entries, side by side. Prints a Markdown table.

    python bench/bench.py --profiles S M --repeats 3 [--out bench/RESULTS.md]

Every measurement runs in a child process, timed from outside, with its peak RSS from
wait4(); medians of --repeats runs. Nothing here asserts a time: the machine is shared and noisy,
the ratios are what to read.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import multiprocessing
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from goodput_loader.simulate import RunSpec, fleet, log_entries  # noqa: E402

BIN = Path(sys.executable).parent
START = dt.datetime(2026, 11, 1, tzinfo=dt.timezone.utc)
# Each profile is evaluated as a live job is: this long after its last entry (held-back hour included).
# Runs without a job end count as running until then, as the library counts them until now.
EVALUATED_AFTER = dt.timedelta(minutes=10)
MODELS_ONLY = ["--exclude", "resource_type:test", "resource_type:unit_test"]
# the local Logging server keeps every entry in memory and filters all of them for every page: S only
LOGGING_PROFILES = ("S",)
CUMULATIVE_ONLY = ["--select", "+fct_goodput_cumulative", "+fct_badput_breakdown", *MODELS_ONLY]


def specs(profile: str) -> list[RunSpec]:
    """The issue's profiles, seeded. L: 1e6 steps at ~6 s, ~400 restarts, checkpoints every 500, eval every 1000."""
    single = {"S": (10_000, 2), "M": (100_000, 20), "L": (1_000_000, 400)}
    if profile in single:
        steps, restarts = single[profile]
        return [RunSpec(name=f"bench-{profile.lower()}", start=START.timestamp(), steps=steps, step_seconds=6.0,
                        restarts=restarts, checkpoint_every=500, eval_every=1000, seed=7)]
    if profile == "fleet":  # 200 runs of mixed size, about 1e7 entries in all
        return fleet(200, seed=11, steps=16_000, restarts=3, running=20, start=START,
                     base=RunSpec(name="", start=0.0, step_seconds=6.0, checkpoint_every=500, eval_every=1000))
    raise SystemExit(f"unknown profile {profile}: S, M, L or fleet")


def write(spec: RunSpec, folder: Path, hold_back: dt.timedelta | None = None) -> tuple[int, int, str]:
    """Write the run as NDJSON; with hold_back, its last entries (that long) go to folder/../later/.

    Returns the counts written to each, and the run's last timestamp.
    """
    folder.mkdir(parents=True, exist_ok=True)
    entries = list(log_entries(spec, "bench"))
    cut = None
    if hold_back is not None:
        cut = (dt.datetime.fromisoformat(entries[-1]["timestamp"].replace("Z", "+00:00")) - hold_back)
        cut = cut.strftime("%Y-%m-%dT%H:%M:%S")
    early = [e for e in entries if cut is None or e["timestamp"] <= cut]
    late = [e for e in entries if cut is not None and e["timestamp"] > cut]
    with open(folder / f"goodput_{spec.name}.ndjson", "w") as fh:
        fh.writelines(json.dumps(e) + "\n" for e in early)
    if late:
        (folder.parent / "later").mkdir(exist_ok=True)
        with open(folder.parent / "later" / f"goodput_{spec.name}.ndjson", "w") as fh:
            fh.writelines(json.dumps(e) + "\n" for e in late)
    return len(early), len(late), max(e["timestamp"] for e in entries)


@dataclass
class Measure:
    seconds: float
    rss_mb: float
    stdout: str


def measure(cmd: list[str], env: dict[str, str] | None = None) -> Measure:
    """Run cmd (with env added to ours); its wall time and peak RSS (wait4 reaps it, so the RSS is this
    child's alone)."""
    import tempfile

    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        started = time.perf_counter()
        process = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=err, text=True,
                                   env={**os.environ, **(env or {})})
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if process.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{stdout[-3000:]}\n{stderr[-3000:]}")
    return Measure(seconds, usage.ru_maxrss / 1024, stdout)


def load_from_logging(runs: list[RunSpec], db: Path, as_of: str) -> tuple[Measure, float]:
    """`load --from-logging` against the tests' local Cloud Logging server (real client, REST, 1,000 a page).

    Returns the measure and the seconds the server spent answering (filtering
    every entry again for each page's new cursor, JSON encoding), which the
    loader waited for. Real Cloud Logging caps entries.list at 60 requests a
    minute per project by default: 1,000 entries/s, whatever the loader can do.
    """
    sys.path.insert(0, str(ROOT / "tests"))
    from support.fake_logging import FakeLoggingServer

    entries = [e for spec in runs for e in log_entries(spec, "bench")]
    with FakeLoggingServer(entries) as server:
        cmd = [str(BIN / "goodput-loader"), "load", "--duckdb", str(db), "--from-logging", "--project", "bench",
               "--since", (START - dt.timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ"), "--until", as_of,
               "--logging-endpoint", server.endpoint, "--page-size", "1000", "--requests-per-minute", "1000000"]
        for spec in runs:
            cmd += ["--run", spec.name]
        result = measure(cmd)
    db.unlink()
    return result, server.busy_seconds


def build(db: Path, as_of: str, dbt_args: list[str]) -> Measure:
    """`goodput-loader build` of the warehouse db, with dbt's target directory beside it.

    dbt parses the whole project again whenever the warehouse path differs from
    the last build's (the path is in the profile hash of its partial parsing):
    about 2 s here. A user's hourly build always finds its own warehouse's
    parse, so each warehouse here keeps its own target directory, and warm()
    parses it before anything is measured.
    """
    return measure([str(BIN / "goodput-loader"), "build", "--duckdb", str(db), "--as-of", as_of, "--", *dbt_args],
                   env={"DBT_TARGET_PATH": str(db.with_suffix(".target"))})


def warm(db: Path, as_of: str) -> Measure:
    """dbt's parse of the project for this warehouse, and the staging view: no real model, no test."""
    return build(db, as_of, ["--select", "stg_goodput__events", *MODELS_ONLY])


def empty_build(db: Path, as_of: str) -> Measure:
    """Every model built over a warehouse that holds no entries (its raw tables made by loading an empty
    file), after a warm parse."""
    empty = db.with_suffix(".ndjson")
    empty.write_text("")
    measure([str(BIN / "goodput-loader"), "load", "--duckdb", str(db), str(empty)])
    warm(db, as_of)
    result = build(db, as_of, MODELS_ONLY)
    db.unlink()
    empty.unlink()
    return result


def _write_profile(profile: str, folder: Path, hold_back: dt.timedelta | None) -> tuple[int, int, str]:
    early = late = 0
    last = ""
    for spec in specs(profile):
        e, lt, run_last = write(spec, folder, hold_back)
        early, late, last = early + e, late + lt, max(last, run_last)
    return early, late, last


def write_all(profile: str, folder: Path, hold_back: dt.timedelta | None) -> tuple[int, int, str]:
    """Write the profile's files in a child process.

    Linux carries a process's peak RSS across fork and exec, so every child
    measured later would report at least this process's peak: generating L
    here (a list of 3.3M dicts) made every L figure read 3.6 GB.
    """
    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("fork")) as pool:
        return pool.submit(_write_profile, profile, folder, hold_back).result()


def run_profile(profile: str, repeats: int, work: Path) -> dict[str, float | int | str]:
    folder = work / profile
    shutil.rmtree(folder, ignore_errors=True)
    hold_back = dt.timedelta(hours=1) if profile in ("M", "L") else None
    early, late, last = write_all(profile, folder / "data", hold_back)
    as_of = dt.datetime.fromisoformat(last.replace("Z", "+00:00")) + EVALUATED_AFTER
    as_of = as_of.strftime("%Y-%m-%dT%H:%M:%SZ")
    files = sorted(map(str, (folder / "data").glob("*.ndjson")))
    result: dict[str, list[float]] = {}

    def add(key: str, value: float) -> None:
        result.setdefault(key, []).append(value)

    for i in range(repeats):
        # the same names in every repeat: each keeps its target directory (and dbt's parse) across them
        db = folder / "cumulative.duckdb"
        load = measure([str(BIN / "goodput-loader"), "load", "--duckdb", str(db), *files])
        add("load_s", load.seconds)
        add("load_rss", load.rss_mb)
        rolling_db = folder / "rolling.duckdb"
        shutil.copy(db, rolling_db)
        warm(db, as_of)
        warm(rolling_db, as_of)
        cumulative = build(db, as_of, CUMULATIVE_ONLY)
        add("build_cumulative_s", cumulative.seconds)
        add("build_cumulative_rss", cumulative.rss_mb)
        full = build(rolling_db, as_of, MODELS_ONLY)
        add("build_rolling_s", full.seconds)
        add("build_rolling_rss", full.rss_mb)
        if late:
            later = sorted(map(str, (folder / "later").glob("*.ndjson")))
            measure([str(BIN / "goodput-loader"), "load", "--duckdb", str(rolling_db), *later])
            incremental = build(rolling_db, as_of, MODELS_ONLY)
            add("incremental_s", incremental.seconds)
            # dbt's own floor: start, partial parse, one view, no tests (what any rebuild pays before its
            # first model)
            add("floor_s", warm(rolling_db, as_of).seconds)
            # and every model over a warehouse with no entries: what a rebuild of this project's models
            # costs when each of them has nothing to do, the least any incremental rebuild can take
            add("empty_floor_s", empty_build(folder / "empty.duckdb", as_of).seconds)
        if profile in LOGGING_PROFILES:
            logging, server_s = load_from_logging(specs(profile), folder / f"run{i}-logging.duckdb", as_of)
            add("logging_s", logging.seconds)
            add("logging_loader_s", logging.seconds - server_s)
            add("logging_rss", logging.rss_mb)
        reference_s, reference_rss = 0.0, 0.0
        for path in files:
            ref = measure([sys.executable, str(ROOT / "bench" / "reference.py"), path, as_of])
            reference_s += json.loads(ref.stdout)["seconds"]
            reference_rss = max(reference_rss, ref.rss_mb)
        add("reference_s", reference_s)
        add("reference_rss", reference_rss)
        db.unlink()
        rolling_db.unlink()
    out: dict[str, float | int | str] = {"profile": profile, "entries": early + late, "runs": len(files),
                                         "as_of": as_of}
    out.update({k: statistics.median(v) for k, v in result.items()})
    out["load_entries_per_s"] = early / out["load_s"]  # type: ignore[operator]
    if "logging_s" in out:
        out["logging_entries_per_s"] = (early + late) / out["logging_s"]  # type: ignore[operator]
        out["logging_loader_entries_per_s"] = (early + late) / out["logging_loader_s"]  # type: ignore[operator]
    return out


def table(rows: list[dict]) -> str:
    head = ("| profile | entries | evaluated at | load s (entries/s, RSS MB) "
            "| from the local Logging server s (entries/s; RSS) | build cumulative s (RSS) | build + rolling s (RSS) "
            "| rolling / cumulative | incremental 1 h s (/ full; dbt floors: one view, every model over no entries) "
            "| reference s (RSS) "
            "| reference / (load + build) |")
    lines = [head, "|" + "---|" * 11]
    for r in rows:
        incremental = (f"{r['incremental_s']:.1f} ({r['incremental_s'] / r['build_rolling_s']:.0%}; "
                       f"floors {r['floor_s']:.1f}, {r['floor_s'] / r['build_rolling_s']:.0%}; "
                       f"{r['empty_floor_s']:.1f}, {r['empty_floor_s'] / r['build_rolling_s']:.0%})"
                       if "incremental_s" in r else "-")
        logging = (f"{r['logging_s']:.1f} ({r['logging_entries_per_s']:,.0f}/s; "
                   f"{r['logging_loader_entries_per_s']:,.0f}/s without the server's time; {r['logging_rss']:.0f})"
                   if "logging_s" in r else "-")
        lines.append(
            f"| {r['profile']} | {r['entries']:,} | {r['as_of']} | "
            f"{r['load_s']:.1f} ({r['load_entries_per_s']:,.0f}/s, {r['load_rss']:.0f}) | {logging} | "
            f"{r['build_cumulative_s']:.1f} ({r['build_cumulative_rss']:.0f}) | "
            f"{r['build_rolling_s']:.1f} ({r['build_rolling_rss']:.0f}) | "
            f"{r['build_rolling_s'] / r['build_cumulative_s']:.2f} | {incremental} | "
            f"{r['reference_s']:.1f} ({r['reference_rss']:.0f}) | "
            f"{r['reference_s'] / (r['load_s'] + r['build_cumulative_s']):.2f} |")
    return "\n".join(lines)


def machine() -> str:
    import duckdb

    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (f"{platform.machine()}, {os.cpu_count()} cores, {memory:.0f} GiB, Python {platform.python_version()}, "
            f"DuckDB {duckdb.__version__}, {dt.datetime.now(dt.timezone.utc):%Y-%m-%d}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profiles", nargs="+", default=["S", "M"], help="S, M, L, fleet")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--fleet-repeats", type=int, default=1,
                        help="repeats of the fleet profile (1e7 entries, about 15 min a repeat)")
    parser.add_argument("--work", type=Path, default=ROOT / "bench" / "work")
    parser.add_argument("--out", type=Path, help="also write the table to this Markdown file")
    args = parser.parse_args()
    rows = []
    for profile in args.profiles:
        print(f"profile {profile} ...", file=sys.stderr, flush=True)
        rows.append(run_profile(profile, args.fleet_repeats if profile == "fleet" else args.repeats, args.work))
        print(table(rows[-1:]), file=sys.stderr, flush=True)
        fleet_note = f" (fleet: {args.fleet_repeats})" if any(r["profile"] == "fleet" for r in rows) else ""
        text = f"Machine: {machine()}; medians of {args.repeats} runs{fleet_note}.\n\n{table(rows)}\n"
        if args.out:  # after every profile, so a long run that is stopped keeps what it measured
            write_results(args.out, text)
    print(text)


def write_results(path: Path, text: str, marker: str = "bench") -> None:
    """Replace the table between the marker's comments in path (keeping the notes around it), or append
    it with them."""
    start, end = f"<!-- {marker}:start -->", f"<!-- {marker}:end -->"
    old = path.read_text() if path.exists() else ""
    if start in old and end in old:
        path.write_text(old[:old.index(start) + len(start)] + "\n" + text + old[old.index(end):])
    else:
        path.write_text(old + f"\n{start}\n{text}{end}\n")


if __name__ == "__main__":
    main()
