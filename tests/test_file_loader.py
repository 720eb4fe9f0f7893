"""The file loader on real files of every accepted shape, good and bad."""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path

from conftest import query, run_cli

from goodput_loader.simulate import RunSpec, log_entries


def write_ndjson(path: Path, objects, compress: bool = False) -> Path:
    text = "".join(json.dumps(o) + "\n" for o in objects)
    if compress:
        with gzip.open(path, "wt") as fh:
            fh.write(text)
    else:
        path.write_text(text)
    return path


def sample_entries(n_steps: int = 30, name: str = "run-a", **kw) -> list[dict]:
    spec = RunSpec(name=name, start=1_795_000_000.0, steps=n_steps, checkpoint_every=10, eval_every=15, **kw)
    return list(log_entries(spec, "proj"))


def landed(db: Path) -> list[tuple]:
    return query(db, "select log_name, timestamp, insert_id, payload from goodput_raw.log_entries order by all")


def rejected(db: Path) -> list[tuple]:
    return query(db, "select location, reason from goodput_raw.rejected_entries order by location")


def test_ndjson_gzip_and_gcloud_array_land_the_same_rows(tmp_path, warehouse):
    entries = sample_entries()
    ndjson = write_ndjson(tmp_path / "a.ndjson.gz", entries, compress=True)
    run_cli("load", "--duckdb", warehouse, ndjson)
    other = tmp_path / "other.duckdb"
    # gcloud prints a pretty JSON array, newest first
    array_file = tmp_path / "dump.json"
    array_file.write_text(json.dumps(list(reversed(entries)), indent=2))
    run_cli("load", "--duckdb", other, array_file)
    assert landed(warehouse) == landed(other)
    assert len(landed(warehouse)) == len(entries)
    assert rejected(warehouse) == [] and rejected(other) == []


def test_duplicates_and_reloads_never_duplicate_rows(tmp_path, warehouse):
    entries = sample_entries()
    f1 = write_ndjson(tmp_path / "one.ndjson", entries + entries[:5])  # at-least-once delivery
    f2 = write_ndjson(tmp_path / "two.ndjson", list(reversed(entries)))  # out of order, same entries
    result = run_cli("load", "--json", "--duckdb", warehouse, f1, f2)
    summary = json.loads(result.stdout)["sources"]
    assert summary[0]["inserted"] == len(entries) and summary[0]["duplicates"] == 5
    assert summary[1]["inserted"] == 0 and summary[1]["duplicates"] == len(entries)
    run_cli("load", "--duckdb", warehouse, "--rescan", f1)
    assert len(landed(warehouse)) == len(entries)


def test_malformed_lines_are_rejected_with_file_line_and_reason(tmp_path, warehouse):
    good = sample_entries(5)
    bad_type = dict(good[1], jsonPayload={"job_name": "run-a", "step_count": "seven", "step_start_time": 1795000000.0})
    missing = dict(good[2], jsonPayload={"job_name": "run-a", "step_count": 3})
    lines = [json.dumps(good[0]), "{not json", json.dumps(bad_type), "", json.dumps(missing), "[1, 2]",
             json.dumps(good[3])]
    path = tmp_path / "mixed.ndjson"
    path.write_text("\n".join(lines) + "\n")
    result = run_cli("load", "--duckdb", warehouse, path)
    assert "4 input record(s) rejected" in result.stderr
    rows = rejected(warehouse)
    assert [loc.rsplit(":", 1)[1] for loc, _ in rows] == ["2", "3", "5", "6"]
    reasons = dict((loc.rsplit(":", 1)[1], reason) for loc, reason in rows)
    assert reasons["2"].startswith("invalid JSON")
    assert "step_count must be an integer" in reasons["3"]
    assert "no step_start_time" in reasons["5"]
    assert "expected a JSON object" in reasons["6"]
    assert len(landed(warehouse)) == 2
    raw = query(warehouse, "select raw from goodput_raw.rejected_entries where location like '%:2'")
    assert raw == [("{not json",)]
    listed = json.loads(run_cli("rejects", "--json", "--duckdb", warehouse).stdout)
    assert sorted(row["location"] for row in listed) == sorted(loc for loc, _ in rows)
    # --strict turns rejections into exit code 3 (and re-loading adds no duplicate rejections)
    run_cli("load", "--strict", "--rescan", "--duckdb", warehouse, path, expect=3)
    assert len(rejected(warehouse)) == 4


def test_foreign_job_name_is_kept_but_flagged(tmp_path, warehouse):
    entries = sample_entries(3)
    entries[1] = dict(entries[1], jsonPayload=dict(entries[1]["jsonPayload"], job_name="someone-else"))
    run_cli("load", "--duckdb", warehouse, write_ndjson(tmp_path / "f.ndjson", entries))
    flags = query(warehouse, "select count(*) filter (where not job_name_matches), count(*) from goodput_raw.log_entries")
    assert flags == [(1, len(entries))]


def test_empty_file_and_truncated_gzip_are_reported(tmp_path, warehouse):
    empty = tmp_path / "empty.ndjson"
    empty.write_text("\n\n")
    entries = sample_entries(200)
    full = gzip.compress("".join(json.dumps(e) + "\n" for e in entries).encode())
    truncated = tmp_path / "cut.ndjson.gz"
    truncated.write_bytes(full[: len(full) // 2])
    run_cli("load", "--duckdb", warehouse, empty, truncated)
    reasons = [reason for _, reason in rejected(warehouse)]
    assert any(r.startswith("empty file") for r in reasons)
    assert any("gzip data is cut short" in r for r in reasons)
    # Every line that was whole before the cut lands; the cut one is rejected.
    recoverable = zlib.decompressobj(wbits=31).decompress(full[: len(full) // 2])
    count = query(warehouse, "select count(*) from goodput_raw.log_entries")[0][0]
    assert 0 < count == recoverable.count(b"\n") < len(entries)
    assert any(r.startswith("last line, which has no newline") for r in reasons)


def test_truncated_gcloud_array_keeps_what_parsed(tmp_path, warehouse):
    entries = sample_entries(10)
    text = json.dumps(entries, indent=2)
    path = tmp_path / "cut.json"
    path.write_text(text[: int(len(text) * 0.6)])
    run_cli("load", "--duckdb", warehouse, path)
    count = query(warehouse, "select count(*) from goodput_raw.log_entries")[0][0]
    assert 0 < count < len(entries)
    assert len(rejected(warehouse)) == 1


def test_bare_payload_file_needs_run_and_keeps_file_order(tmp_path, warehouse):
    payloads = [e["jsonPayload"] for e in sample_entries(5)]
    path = write_ndjson(tmp_path / "run-a_timeline.jsonl", payloads)
    run_cli("load", "--duckdb", warehouse, path)
    assert query(warehouse, "select count(*) from goodput_raw.log_entries") == [(0,)]
    assert all("pass --run" in reason for _, reason in rejected(warehouse))
    other = tmp_path / "other.duckdb"
    run_cli("load", "--duckdb", other, "--run", "run-a", "--project", "proj", path)
    rows = query(other, "select log_name, payload from goodput_raw.log_entries order by timestamp, insert_id")
    assert [json.loads(p) for _, p in rows] == payloads
    assert {name for name, _ in rows} == {"projects/proj/logs/goodput_run-a"}


def test_many_files_keep_their_own_figures_and_a_file_named_twice_is_read_once(tmp_path, warehouse):
    """One read-ahead spans all files: each file still gets its own summary, cursor and count."""
    folder = tmp_path / "runs"
    folder.mkdir()
    sizes = {}
    for i, steps in enumerate([5, 40, 1, 25]):
        entries = sample_entries(steps, name=f"run-{i}")
        write_ndjson(folder / f"goodput_run-{i}.ndjson", entries + entries[:2])  # two duplicates each
        sizes[f"goodput_run-{i}.ndjson"] = len(entries)
    again = folder / "goodput_run-1.ndjson"
    result = run_cli("load", "--json", "--duckdb", warehouse, "--batch-size", "16", folder, again)
    sources = json.loads(result.stdout)["sources"]
    names = [Path(s["source_key"].removeprefix("file:")).name for s in sources]
    assert names == sorted(sizes)  # the second mention of run-1 is not a second source
    for name, source in zip(names, sources):
        assert (source["read"], source["inserted"], source["duplicates"]) == (sizes[name] + 2, sizes[name], 2)
    state = query(warehouse, "select source_key, cursor_offset, entries_landed from goodput_raw.load_state")
    assert sorted((Path(k.removeprefix("file:")).name, o, n) for k, o, n in state) == [
        (name, sizes[name] + 2, sizes[name]) for name in sorted(sizes)
    ]
    assert len(landed(warehouse)) == sum(sizes.values())


def test_grown_file_resumes_from_its_cursor(tmp_path, warehouse):
    entries = sample_entries(40)
    path = tmp_path / "growing.ndjson"
    write_ndjson(path, entries[:50])
    run_cli("load", "--duckdb", warehouse, "--batch-size", "7", path)
    with open(path, "a") as fh:
        fh.writelines(json.dumps(e) + "\n" for e in entries[50:])
    result = run_cli("load", "--json", "--duckdb", warehouse, path)
    summary = json.loads(result.stdout)["sources"][0]
    assert summary["read"] == len(entries) - 50  # only the new lines were read again
    assert len(landed(warehouse)) == len(entries)
    state = query(warehouse, "select cursor_offset, entries_landed from goodput_raw.load_state")
    assert state == [(len(entries), len(entries))]


def test_cli_usage_errors_exit_2(tmp_path, warehouse):
    assert run_cli("load", "--duckdb", warehouse, expect=2).exit_code == 2
    assert run_cli("load", "--from-logging", "--duckdb", warehouse, expect=2).exit_code == 2


def test_elastic_records_land_and_malformed_ones_are_rejected_with_a_reason(tmp_path, warehouse):
    """What ElasticGoodputRecorder writes lands; slice counts that are negative, fractional, missing or
    total 0, a wait type that is not a string, a time that is not a number are rejected, each with why."""
    import datetime as dt

    from ml_goodput_measurement.src.goodput_elastic import ElasticGoodputRecorder
    from support.oracle import ListCloudLogger
    from support.scenarios import envelope

    logger = ListCloudLogger("el")
    recorder = ElasticGoodputRecorder(job_name="el", logger_name="goodput_el", logging_enabled=True,
                                      cloud_logger=logger)
    at = dt.datetime(2026, 11, 18, tzinfo=dt.timezone.utc)
    recorder.record_job_start_time(at)
    recorder.record_elastic_slice_counts(3, 4, 4, at)
    recorder.record_elastic_wait_start_time("scale_up_wait", at)
    recorder.record_elastic_wait_end_time("scale_up_wait", at + dt.timedelta(seconds=30))
    recorder.record_elastic_reinit_start_time(at + dt.timedelta(seconds=30))
    recorder.record_elastic_reinit_end_time(at + dt.timedelta(seconds=90))
    good = logger.entries
    counts, wait = good[1], good[2]
    bad = [dict(counts, total_slices=0), dict(counts, active_slices=-1), dict(counts, available_slices=2.5),
           {k: v for k, v in counts.items() if k != "active_slices"}, dict(wait, elastic_wait_event_type=7),
           dict(wait, elastic_wait_start_time="soon")]
    entries = envelope("el", good + bad, [False] * (len(good) + len(bad)))
    path = write_ndjson(tmp_path / "elastic.ndjson", entries)
    run_cli("load", "--duckdb", warehouse, path)
    assert len(landed(warehouse)) == len(good)
    reasons = [reason for _, reason in rejected(warehouse)]
    assert len(reasons) == len(bad)
    for expected in ("total_slices as an integer 1..2^31, got 0", "active_slices as an integer 0..2^31, got -1",
                     "available_slices as an integer 0..2^31, got 2.5", "active_slices as an integer 0..2^31, got None",
                     "string elastic_wait_event_type, got 7", "elastic_wait_start_time must be a number"):
        assert any(expected in reason for reason in reasons), (expected, reasons)
