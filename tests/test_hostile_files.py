"""Hostile files: resumed, rewritten, damaged and mis-encoded input loses no entry.

Each case asserts the exact rows that land and the exact rejections, against
what a clean load of the intended content gives.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import gzip
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import duckdb
import pytest
from conftest import dbt_build, query, run_cli
from test_file_loader import landed, rejected, sample_entries

from goodput_loader.simulate import RunSpec, write_run

ROOT = Path(__file__).resolve().parents[1]


def lines_of(entries: list[dict]) -> list[bytes]:
    return [json.dumps(e).encode() + b"\n" for e in entries]


def clean_load(tmp_path: Path, entries: list[dict]) -> list[tuple]:
    """The rows a load of ``entries`` as one clean NDJSON file lands."""
    path = tmp_path / "clean" / "clean.ndjson"
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(b"".join(lines_of(entries)))
    db = tmp_path / "clean" / "clean.duckdb"
    run_cli("load", "--duckdb", db, path)
    return landed(db)


def load_json(db: Path, *paths: Path) -> dict:
    return json.loads(run_cli("load", "--json", "--duckdb", db, *paths).stdout)["sources"]


def test_a_half_written_last_line_lands_once_the_file_grows(tmp_path, warehouse):
    entries = sample_entries(20)
    data = lines_of(entries)
    path = tmp_path / "live.ndjson"
    half = data[30][: len(data[30]) // 2]
    path.write_bytes(b"".join(data[:30]) + half)
    load_json(warehouse, path)
    assert len(landed(warehouse)) == 30
    [(location, reason)] = rejected(warehouse)
    assert location == f"{path}:31" and reason.startswith("last line, which has no newline")

    path.write_bytes(b"".join(data))  # the writer finished the line and went on
    [summary] = load_json(warehouse, path)
    assert summary["read"] == len(data) - 30  # resumed at the half-written line, not before
    assert landed(warehouse) == clean_load(tmp_path, entries)
    assert rejected(warehouse) == []  # the half line's rejection is withdrawn


def test_a_whole_last_line_without_newline_lands_and_is_not_landed_twice(tmp_path, warehouse):
    entries = sample_entries(10)
    data = lines_of(entries)
    path = tmp_path / "no-newline.ndjson"
    path.write_bytes(b"".join(data[:-1]) + data[-1].rstrip(b"\n"))
    load_json(warehouse, path)
    assert landed(warehouse) == clean_load(tmp_path, entries)
    more = sample_entries(12)[len(entries):]
    path.write_bytes(b"".join(data) + b"".join(lines_of(more)))
    [summary] = load_json(warehouse, path)
    assert summary["duplicates"] == 1 and summary["inserted"] == len(more)
    assert rejected(warehouse) == []


def test_a_rewrite_after_the_first_mebibyte_is_read_again_whole(tmp_path, warehouse):
    entries = sample_entries(2500)
    assert sum(map(len, lines_of(entries))) > 2 << 20
    missing = len(entries) * 2 // 3  # well past the first MiB
    path = tmp_path / "rewritten.ndjson"
    path.write_bytes(b"".join(lines_of(entries[:missing] + entries[missing + 1:])))
    load_json(warehouse, path)
    path.write_bytes(b"".join(lines_of(entries)))  # one entry inserted: the same first MiB, grown
    [summary] = load_json(warehouse, path)
    assert (summary["read"], summary["inserted"]) == (len(entries), 1)  # read from the start, not resumed
    assert landed(warehouse) == clean_load(tmp_path, entries)
    assert rejected(warehouse) == []


def test_an_unchanged_file_is_not_read_and_a_touched_one_lands_nothing_new(tmp_path, warehouse):
    entries = sample_entries(30)
    path = tmp_path / "same.ndjson"
    path.write_bytes(b"".join(lines_of(entries)))
    load_json(warehouse, path)
    [summary] = load_json(warehouse, path)
    assert (summary["shape"], summary["read"]) == ("unchanged", 0)
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    [summary] = load_json(warehouse, path)
    assert (summary["shape"], summary["read"], summary["inserted"]) == ("ndjson", 0, 0)  # prefix verified, nothing after it
    assert landed(warehouse) == clean_load(tmp_path, entries)


def test_gzip_followed_by_other_bytes_lands_every_record_and_rejects_the_rest_once(tmp_path, warehouse):
    entries = sample_entries(300)
    assert "job_end_time" in entries[-1]["jsonPayload"]
    path = tmp_path / "trailing.ndjson.gz"
    path.write_bytes(gzip.compress(b"".join(lines_of(entries))) + b"\x00\x00garbage after the stream\n")
    load_json(warehouse, path)
    assert landed(warehouse) == clean_load(tmp_path, entries)  # the job end included
    [(location, reason)] = rejected(warehouse)
    assert location == f"{path}:after-line-{len(entries)}"
    assert "are not gzip and were ignored" in reason


def test_gzip_of_several_members_lands_them_all(tmp_path, warehouse):
    entries = sample_entries(100)
    data = lines_of(entries)
    path = tmp_path / "members.ndjson.gz"
    path.write_bytes(b"".join(gzip.compress(b"".join(data[i:i + 37])) for i in range(0, len(data), 37)))
    load_json(warehouse, path)
    assert landed(warehouse) == clean_load(tmp_path, entries)
    assert rejected(warehouse) == []


def test_a_line_that_is_not_utf8_is_rejected_alone(tmp_path, warehouse):
    entries = sample_entries(3)[:10]
    data = lines_of(entries)
    data[4] = data[4].replace(b'"job_name": "run-a"', b'"job_name": "run-\xe9"')  # Latin-1 é
    assert b"\xe9" in data[4]
    path = tmp_path / "latin1.ndjson"
    path.write_bytes(b"".join(data))
    load_json(warehouse, path)
    assert landed(warehouse) == clean_load(tmp_path, entries[:4] + entries[5:])
    [(location, reason)] = rejected(warehouse)
    assert location == f"{path}:5" and reason.startswith("line is not UTF-8 text (byte 0xe9")


def test_a_byte_order_mark_is_not_part_of_the_first_entry(tmp_path, warehouse):
    entries = sample_entries(3)[:7]
    ndjson = tmp_path / "bom.ndjson"
    ndjson.write_bytes(b"\xef\xbb\xbf" + b"".join(lines_of(entries)))
    array = tmp_path / "bom.json"
    array.write_bytes(b"\xef\xbb\xbf" + json.dumps(entries, indent=2).encode())
    load_json(warehouse, ndjson)
    assert landed(warehouse) == clean_load(tmp_path, entries)
    other = tmp_path / "array.duckdb"
    load_json(other, array)
    assert landed(other) == clean_load(tmp_path, entries)
    assert rejected(warehouse) == rejected(other) == []
    # Resuming after the BOM: appended lines land, nothing twice.
    more = sample_entries(5)[7:12]
    ndjson.write_bytes(ndjson.read_bytes() + b"".join(lines_of(more)))
    [summary] = load_json(warehouse, ndjson)
    assert (summary["read"], summary["inserted"]) == (len(more), len(more))


def test_deep_nesting_in_a_gcloud_array_rejects_that_element_only(tmp_path, warehouse):
    entries = sample_entries(3)[:6]
    deep = "[" * 200_000 + "]" * 200_000
    text = "[\n" + ",\n".join([json.dumps(entries[0]), json.dumps(entries[1]), deep,
                               *map(json.dumps, entries[2:])]) + "\n]\n"
    path = tmp_path / "deep.json"
    path.write_text(text)
    load_json(warehouse, path)
    assert landed(warehouse) == clean_load(tmp_path, entries)
    [(location, reason)] = rejected(warehouse)
    assert location == f"{path}:4" and "nested too deeply" in reason


def test_an_array_element_that_is_not_utf8_is_rejected_alone(tmp_path, warehouse):
    entries = sample_entries(3)[:6]
    parts = [json.dumps(e, indent=2).encode() for e in entries]
    parts[2] = parts[2].replace(b'"run-a"', b'"run-\xe9"', 1)
    path = tmp_path / "latin1.json"
    path.write_bytes(b"[\n" + b",\n".join(parts) + b"\n]\n")
    load_json(warehouse, path)
    assert landed(warehouse) == clean_load(tmp_path, entries[:2] + entries[3:])
    [(_, reason)] = rejected(warehouse)
    assert reason.startswith("array element 3 is not UTF-8 text")


@pytest.mark.skipif(shutil.which("setpriv") is None and os.geteuid() == 0, reason="needs setpriv to drop root")
def test_an_unreadable_file_is_rejected_and_the_others_load(tmp_path):
    # Outside pytest's own folder (mode 700), so that nobody can reach it.
    shared = Path(tempfile.mkdtemp(prefix="goodput-unreadable-"))
    try:
        _load_folder_with_an_unreadable_file(shared, tmp_path)
    finally:
        shutil.rmtree(shared, ignore_errors=True)


def _load_folder_with_an_unreadable_file(shared: Path, tmp_path: Path) -> None:
    folder = shared / "exports"
    folder.mkdir()
    good = sample_entries(5, name="run-b")
    (folder / "a.ndjson").write_bytes(b"".join(lines_of(sample_entries(5))))
    (folder / "b.ndjson").write_bytes(b"".join(lines_of(good)))
    (folder / "a.ndjson").chmod(0)
    for p in (shared, folder, folder / "b.ndjson"):
        p.chmod(0o777 if p.is_dir() else 0o644)
    db = shared / "w.duckdb"
    command = [str(Path(sys.executable).parent / "goodput-loader"), "load", "--duckdb", str(db), str(folder)]
    if os.geteuid() == 0:  # root reads any file: run as nobody
        command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *command]
    result = subprocess.run(command, capture_output=True, text=True, cwd=shared)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert landed(db) == clean_load(tmp_path, good)
    [(location, reason)] = rejected(db)
    assert location == f"{folder / 'a.ndjson'}:unreadable" and "Permission denied" in reason


def assert_same_rows(got: list[tuple], expected: list[tuple], what: str) -> None:
    """Equal rows; floats equal up to summation order (parallel aggregates add in any order)."""
    assert len(got) == len(expected), what
    for row, other in zip(got, expected):
        for x, y in zip(row, other):
            if isinstance(x, float) and isinstance(y, float):
                assert math.isclose(x, y, rel_tol=1e-12, abs_tol=1e-9), (what, row, other)
            else:
                assert x == y, (what, row, other)


# One entry each, in the healthy run's own log: values no model can use.
POISON = {
    "job_end_time in milliseconds": {"job_name": "poisoned", "job_end_time": 1_795_100_000_000.0},
    "job_end_time 1e308": {"job_name": "poisoned", "job_end_time": 1e308},
    "job_start_time 0": {"job_name": "poisoned", "job_start_time": 0},
    "step_count 1e20": {"job_name": "poisoned", "step_count": 1e20, "step_start_time": 1_795_000_500.0},
    "step_count 2^63": {"job_name": "poisoned", "step_count": 2**63, "step_start_time": 1_795_000_500.0},
    "negative Orbax duration": {"event_type": "save", "step": 10, "directory": "gs://b",
                                "checkpoint_manager_blocking_duration_secs": -1e9},
}
POISON_TIMESTAMPS = {"2026-02-31T00:00:00Z": "not a calendar date", "0000-01-01T00:00:00Z": "outside 2000-2099"}


def test_poison_entries_are_rejected_and_every_healthy_run_builds_exactly(tmp_path):
    """Poison lines beside healthy runs: each is rejected with a reason, the healthy marts are
    exactly those of a warehouse that never saw them."""
    start = dt.datetime(2026, 11, 20, tzinfo=dt.timezone.utc)
    healthy = [e for name in ("run-a", "run-b") for e in sample_entries(150, name=name)]
    template = dict(healthy[5], logName="projects/proj/logs/goodput_poisoned")
    poison = [dict(template, insertId=f"poison-{i}", jsonPayload=payload) for i, payload in enumerate(POISON.values())]
    poison += [dict(template, insertId=f"date-{i}", timestamp=ts) for i, ts in enumerate(POISON_TIMESTAMPS)]

    clean_db, mixed_db = tmp_path / "clean.duckdb", tmp_path / "mixed.duckdb"
    (tmp_path / "clean.ndjson").write_bytes(b"".join(lines_of(healthy)))
    mixed = healthy[:100] + poison + healthy[100:]
    (tmp_path / "mixed.ndjson").write_bytes(b"".join(lines_of(mixed)))
    run_cli("load", "--duckdb", clean_db, tmp_path / "clean.ndjson")
    result = run_cli("load", "--duckdb", mixed_db, tmp_path / "mixed.ndjson")
    assert f"{len(poison)} input record(s) rejected" in result.stderr
    reasons = [reason for _, reason in rejected(mixed_db)]
    assert sum("between 2000 and 2099" in r for r in reasons) == 3
    assert sum("outside 0..2^53" in r for r in reasons) == 2
    assert sum("0 up to 10^7" in r for r in reasons) == 1
    assert sum("not a calendar date" in r for r in reasons) == sum("timestamp is outside 2000-2099" in r for r in reasons) == 1

    as_of = start + dt.timedelta(days=30)
    dbt_build(clean_db, as_of)
    dbt_build(mixed_db, as_of)
    for mart in ("fct_goodput_cumulative", "fct_badput_breakdown", "fct_goodput_rolling_latest", "fct_steps"):
        assert_same_rows(query(mixed_db, f"select * from {mart} order by all"),
                         query(clean_db, f"select * from {mart} order by all"), mart)


@contextlib.contextmanager
def small_disk(megabytes: int):
    """A tmpfs of that size (root only: CI and this machine run as root), unmounted afterwards."""
    where = Path(tempfile.mkdtemp(prefix="goodput-disk-"))
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={megabytes}M", "tmpfs", str(where)],
                             capture_output=True).returncode == 0
    if not mounted:
        where.rmdir()
        pytest.skip("cannot mount a tmpfs here (not root)")
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=False)
        where.rmdir()


def test_a_full_disk_says_so_and_the_next_load_resumes(tmp_path):
    path, _ = write_run(RunSpec(name="big", start=1_795_000_000.0, steps=20_000), tmp_path, "proj", compress=False)
    with small_disk(4) as disk:
        db = disk / "w.duckdb"
        result = run_cli("load", "--duckdb", db, "--batch-size", "20000", path, expect=1)
        assert f"the disk holding {db} is full" in result.stderr and "run the same command again" in result.stderr
        subprocess.run(["mount", "-o", "remount,size=64M", str(disk)], check=True)
        run_cli("load", "--duckdb", db, "--batch-size", "20000", path)
        reference = tmp_path / "reference.duckdb"
        run_cli("load", "--duckdb", reference, path)
        assert landed(db) == landed(reference)
        assert rejected(db) == []


def test_poison_that_bypasses_the_loader_marks_only_its_run_invalid(tmp_path):
    """Entries written straight into the raw table (a log sink, an older loader): the run holding them
    is invalid with a reason, and every other run's marts are exactly those of a clean warehouse."""
    healthy = [e for name in ("run-a", "run-b") for e in sample_entries(150, name=name)]
    poisoned = sample_entries(150, name="poisoned")
    clean_db, mixed_db = tmp_path / "clean.duckdb", tmp_path / "mixed.duckdb"
    (tmp_path / "clean.ndjson").write_bytes(b"".join(lines_of(healthy)))
    (tmp_path / "mixed.ndjson").write_bytes(b"".join(lines_of(healthy + poisoned)))
    run_cli("load", "--duckdb", clean_db, tmp_path / "clean.ndjson")
    run_cli("load", "--duckdb", mixed_db, tmp_path / "mixed.ndjson")
    payloads = [*POISON.values(),
                {"job_name": "poisoned", "step_count": -5, "step_start_time": 1_795_000_500.0},
                {"event_type": "save", "step": 10, "directory": "gs://b", "checkpoint_manager_blocking_duration_secs": 1.0,
                 "checkpoint_manager_blocking_start_time": 1e308}]
    con = duckdb.connect(str(mixed_db))
    for i, payload in enumerate(payloads):
        payload = {**payload, "job_name": "poisoned"}  # Orbax records carry it too (MaxText adds it)
        con.execute("""insert into goodput_raw.log_entries values ('projects/proj/logs/goodput_poisoned', 'poisoned',
                       ?, timestamp '2026-11-18 11:10:00' + to_seconds(?), null, 'INFO', ?, true, 'log_sink', now())""",
                    [f"poison-{i}", i, json.dumps(payload)])
    con.close()

    as_of = dt.datetime(2026, 12, 20, tzinfo=dt.timezone.utc)
    dbt_build(clean_db, as_of)
    dbt_build(mixed_db, as_of)
    for mart in ("fct_goodput_cumulative", "fct_badput_breakdown", "fct_goodput_rolling_latest", "fct_steps"):
        healthy_rows = f"select * from {mart} where run_name != 'poisoned' order by all"
        assert_same_rows(query(mixed_db, healthy_rows), query(clean_db, f"select * from {mart} order by all"), mart)
    [(is_valid, reason, goodput)] = query(
        mixed_db, "select is_valid, invalid_reason, goodput_pct from fct_goodput_cumulative where run_name = 'poisoned'")
    assert not is_valid and goodput is None
    assert reason.startswith(f"{len(payloads)} entries hold values no model can use")
    reasons = query(mixed_db, "select implausible_reason from stg_goodput__events where implausible_reason is not null "
                              "order by insert_id")
    assert len(reasons) == len(payloads)
