"""The scheduled hourly build over a fleet with history (issue #18, target 1), side by side.

    python bench/hourly.py --histories 50 200 --repeats 3 [--out bench/RESULTS.md]

For each history size H: a fleet of H runs (about 50k entries each; all finished
but the 3 running ones, whose last entry is a minute before the evaluation time) is
loaded without the running runs' last hour and built from scratch; then that hour
lands and the warehouse is built again, as the scheduled refresh does. Beside it, a
warehouse holding only the 3 touched runs is built from scratch on all their entries:
the work an incremental build cannot avoid. Measured for each: wall time and peak RSS
(in child processes, medians), rows of untouched runs whose DuckDB rowid changed (the
models never write them; DuckDB moves rows when it compacts a row group it deleted
from) and the growth of the warehouse file. Nothing here asserts a time; the ratios are what to read.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shutil
import statistics
import sys
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import BIN, MODELS_ONLY, ROOT, START, build, machine, measure, warm, write_results  # noqa: E402

from goodput_loader.simulate import RunSpec, fleet, log_entries  # noqa: E402

LIVE = START + dt.timedelta(days=13)  # the evaluation time of the hourly build
HOUR = dt.timedelta(hours=1)
RUNNING = 3


def specs(history: int) -> list[RunSpec]:
    return fleet(history, seed=11, steps=16_000, restarts=3, running=RUNNING, start=START, live_at=LIVE,
                 base=RunSpec(name="", start=0.0, step_seconds=6.0, checkpoint_every=500, eval_every=1000))


def write(history: int, folder: Path) -> tuple[int, int]:
    """Every run's entries to folder/early/, the running runs' last hour to folder/later/."""
    cut = (LIVE - HOUR).strftime("%Y-%m-%dT%H:%M:%S")
    counts = [0, 0]
    for sub in ("early", "later", "touched"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    for spec in specs(history):
        entries = [json.dumps(e) + "\n" for e in log_entries(spec, "bench")]
        early = [e for e in entries if spec.finished or json.loads(e)["timestamp"] <= cut]
        later = entries[len(early):] if not spec.finished else []
        (folder / "early" / f"goodput_{spec.name}.ndjson").write_text("".join(early))
        counts[0] += len(early)
        if later:
            (folder / "later" / f"goodput_{spec.name}.ndjson").write_text("".join(later))
            (folder / "touched" / f"goodput_{spec.name}.ndjson").write_text("".join(entries))
            counts[1] += len(later)
    return counts[0], counts[1]


def snapshot_row_ids(db: Path, snapshot: Path, touched: set[str]) -> int:
    """Keep (table, run_id, rowid) of every row of untouched runs of every per-run table in snapshot
    (another file, so the warehouse's size is not changed); returns how many."""
    snapshot.unlink(missing_ok=True)
    con = duckdb.connect(str(snapshot))
    try:
        con.execute(f"attach '{db}' as w (read_only)")
        tables = [t for (t,) in con.execute(
            "select distinct table_name from duckdb_columns() where database_name = 'w' and schema_name = 'main' "
            "and column_name = 'run_id' and table_name in (select table_name from duckdb_tables() "
            "where database_name = 'w') and table_name != 'int_goodput__runs_to_rebuild'").fetchall()]
        con.execute("create table kept (table_name varchar, run_id varchar, row_id bigint)")
        for table in tables:
            con.execute(f"insert into kept select '{table}', run_id, rowid from w.main.{table} "  # noqa: S608
                        "where run_id not in (select unnest(?))", [sorted(touched)])
        return con.execute("select count(*) from kept").fetchone()[0]
    finally:
        con.close()


def rewritten(db: Path, snapshot: Path) -> int:
    """Rows of the snapshot no longer in the warehouse under the same rowid: deleted and written again."""
    con = duckdb.connect(str(snapshot))
    try:
        con.execute(f"attach '{db}' as w (read_only)")
        gone = 0
        for (table,) in con.execute("select distinct table_name from kept").fetchall():
            gone += con.execute(
                f"select count(*) from kept left join (select run_id, rowid as row_id from w.main.{table}) as now "  # noqa: S608
                f"using (run_id, row_id) where kept.table_name = '{table}' and now.run_id is null").fetchone()[0]
        return gone
    finally:
        con.close()


def run_history(history: int, repeats: int, work: Path) -> dict[str, float | int]:
    folder = work / f"hourly-{history}"
    shutil.rmtree(folder, ignore_errors=True)
    early_n, later_n = write(history, folder)
    touched = {f"bench/{p.stem.removeprefix('goodput_')}" for p in (folder / "later").glob("*.ndjson")}
    before, after = (LIVE - HOUR).strftime("%Y-%m-%dT%H:%M:%SZ"), LIVE.strftime("%Y-%m-%dT%H:%M:%SZ")
    result: dict[str, list[float]] = {}

    def add(key: str, value: float) -> None:
        result.setdefault(key, []).append(value)

    def load(db: Path, sub: str) -> None:
        measure([str(BIN / "goodput-loader"), "load", "--duckdb", str(db), *sorted(map(str, (folder / sub).glob("*")))])

    for _ in range(repeats):
        db = folder / "fleet.duckdb"
        for stale in (db, db.with_suffix(".duckdb.wal")):
            stale.unlink(missing_ok=True)
        load(db, "early")
        warm(db, before)
        full = build(db, before, MODELS_ONLY)
        add("full_s", full.seconds)
        add("full_rss", full.rss_mb)
        load(db, "later")
        snapshot = folder / "untouched-rows.duckdb"
        untouched = snapshot_row_ids(db, snapshot, touched)
        size = db.stat().st_size
        # the same build with its data tests, on a copy: they read the runs with entries landed since the
        # last complete build, which a tests-only build run after the models would no longer see as new
        tested = folder / "fleet-tested.duckdb"
        shutil.copy(db, tested)
        # dbt's parse for this evaluation time, as a scheduled build (no --as-of: now) always finds it
        warm(db, after)
        hourly = build(db, after, MODELS_ONLY)
        add("hourly_s", hourly.seconds)
        add("hourly_rss", hourly.rss_mb)
        add("growth", db.stat().st_size / size - 1)
        warm(tested, after)
        add("with_tests_s", build(tested, after, ["--exclude", "resource_type:unit_test"]).seconds)
        tested.unlink()
        add("rewritten", rewritten(db, snapshot))
        add("untouched_rows", untouched)

        alone = folder / "touched.duckdb"
        alone.unlink(missing_ok=True)
        load(alone, "touched")
        warm(alone, after)
        add("touched_s", build(alone, after, MODELS_ONLY).seconds)
    out: dict[str, float | int] = {"history": history, "entries": early_n + later_n, "new_entries": later_n}
    out.update({k: statistics.median(v) for k, v in result.items()})
    return out


def table(rows: list[dict]) -> str:
    lines = ["| runs of history | entries | full build s (RSS MB) | 1 h of new entries on 3 running runs: "
             "hourly build s (RSS MB) | / full | with its data tests s | the 3 runs alone, built from scratch s "
             "| hourly / alone | untouched rows DuckDB moved (rowid changed: compaction) | file growth |", "|" + "---|" * 10]
    for r in rows:
        lines.append(
            f"| {r['history']} | {r['entries']:,} | {r['full_s']:.1f} ({r['full_rss']:.0f}) | "
            f"{r['hourly_s']:.1f} ({r['hourly_rss']:.0f}) | {r['hourly_s'] / r['full_s']:.0%} | {r['with_tests_s']:.1f} | "
            f"{r['touched_s']:.1f} | {r['hourly_s'] / r['touched_s']:.2f} | "
            f"{r['rewritten']:,.0f} of {r['untouched_rows']:,.0f} | {r['growth']:+.1%} |")
    if len(rows) > 1:
        lines.append(f"\nHourly build with {rows[-1]['history']} runs of history / with {rows[0]['history']}: "
                     f"{rows[-1]['hourly_s'] / rows[0]['hourly_s']:.2f}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--histories", nargs="+", type=int, default=[50, 200])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--work", type=Path, default=ROOT / "bench" / "work")
    parser.add_argument("--out", type=Path, help="also write the table into this Markdown file")
    args = parser.parse_args()
    rows = []
    for history in args.histories:
        print(f"history {history} ...", file=sys.stderr, flush=True)
        rows.append(run_history(history, args.repeats, args.work))
        text = f"Machine: {machine()}; medians of {args.repeats} runs.\n\n{table(rows)}\n"
        print(table(rows[-1:]), file=sys.stderr, flush=True)
        if args.out:
            write_results(args.out, text, "hourly")
    print(text)


if __name__ == "__main__":
    main()
