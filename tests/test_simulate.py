"""`simulate --live-at`: the demo's running run looks live when it is evaluated."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from conftest import run_cli


def _entries(folder: Path) -> dict[str, list[dict]]:
    return {path.name: [json.loads(line) for line in path.read_text().splitlines()]
            for path in sorted(folder.glob("*.ndjson"))}


def _seconds(timestamp: str) -> float:
    return dt.datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp()


def test_live_at_moves_only_the_running_runs_to_end_a_minute_before(tmp_path: Path) -> None:
    args = ["simulate", "--runs", "3", "--steps", "300", "--running", "1", "--no-gzip",
            "--start", "2026-11-30T00:00:00Z"]
    run_cli(*args, tmp_path / "plain")
    run_cli(*args, "--live-at", "2026-12-02T12:00:00Z", tmp_path / "live")
    plain, live = _entries(tmp_path / "plain"), _entries(tmp_path / "live")

    assert plain.keys() == live.keys() == {f"goodput_sim-00{i}.ndjson" for i in range(3)}
    # Finished runs are untouched.
    assert live["goodput_sim-000.ndjson"] == plain["goodput_sim-000.ndjson"]
    assert live["goodput_sim-001.ndjson"] == plain["goodput_sim-001.ndjson"]

    before, after = plain["goodput_sim-002.ndjson"], live["goodput_sim-002.ndjson"]
    assert not any("job_end_time" in e["jsonPayload"] for e in after)
    live_at = dt.datetime(2026, 12, 2, 12, tzinfo=dt.timezone.utc).timestamp()
    assert abs(_seconds(after[-1]["timestamp"]) - (live_at - 60)) < 1e-3
    # The whole run moved by one offset: same entries, same gaps, same payload keys.
    shift = _seconds(after[0]["timestamp"]) - _seconds(before[0]["timestamp"])
    assert shift > 0
    assert len(before) == len(after)
    for old, new in zip(before, after):
        assert abs(_seconds(new["timestamp"]) - _seconds(old["timestamp"]) - shift) < 1e-3
        assert old["jsonPayload"].keys() == new["jsonPayload"].keys()
        if "step_start_time" in old["jsonPayload"]:
            assert abs(new["jsonPayload"]["step_start_time"] - old["jsonPayload"]["step_start_time"] - shift) < 1e-3


def test_live_at_rejects_a_time_that_is_not_iso_8601(tmp_path: Path) -> None:
    result = run_cli("simulate", "--live-at", "yesterday", tmp_path, expect=2)
    assert "--live-at" in result.stderr and "ISO 8601" in result.stderr


def test_elastic_makes_the_first_runs_elastic_and_leaves_the_others_as_they_were(tmp_path: Path) -> None:
    """`simulate --elastic`: the first runs write ElasticGoodputRecorder's entries (slice counts, both wait
    types, re-initialisation); the other runs are the same entries as without it. That the elastic runs'
    numbers are the elastic calculator's is tests/test_differential.py's business."""
    args = ["simulate", "--runs", "3", "--steps", "400", "--no-gzip", "--start", "2026-11-30T00:00:00Z"]
    run_cli(*args, tmp_path / "plain")
    run_cli(*args, "--elastic", "1", tmp_path / "elastic")
    plain, elastic = _entries(tmp_path / "plain"), _entries(tmp_path / "elastic")
    for name in ("goodput_sim-001.ndjson", "goodput_sim-002.ndjson"):
        assert elastic[name] == plain[name]
    payloads = [e["jsonPayload"] for e in elastic["goodput_sim-000.ndjson"]]
    waits = {p["elastic_wait_event_type"] for p in payloads if "elastic_wait_start_time" in p}
    assert waits == {"slice_down", "scale_up"}
    counts = [p for p in payloads if "elastic_slice_counts_timestamp" in p]
    assert counts[0]["active_slices"] == counts[0]["total_slices"] == 4
    assert {p["active_slices"] for p in counts} >= {0, 3, 4}
    assert sum("elastic_reinit_start_time" in p for p in payloads) == sum("elastic_reinit_end_time" in p for p in payloads) > 0
    assert all(p.get("job_name") == "sim-000" for p in payloads)
    bad = run_cli(*args, "--elastic", "4", tmp_path / "bad", expect=None)
    assert bad.exit_code == 2 and "--elastic cannot exceed --runs" in bad.stderr


def test_a_run_name_with_a_slash_is_one_file_named_as_its_log_id_and_loads_under_its_name(tmp_path: Path) -> None:
    import duckdb

    run_cli("simulate", "--runs", "1", "--steps", "50", "--prefix", "team/llama", "--no-gzip", tmp_path / "data")
    files = sorted(path.name for path in (tmp_path / "data").iterdir())
    assert files == ["goodput_team%2Fllama-000.ndjson"]  # Cloud Logging's logName spelling, one file
    run_cli("load", "--duckdb", tmp_path / "w.duckdb", tmp_path / "data" / files[0])
    with duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True) as con:
        assert con.execute("select distinct run_name from goodput_raw.log_entries").fetchall() == [("team/llama-000",)]


def test_an_unwritable_output_is_an_error_that_names_the_file_not_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("a file where the directory should be")
    result = run_cli("simulate", "--runs", "1", "--steps", "5", tmp_path / "taken" / "data", expect=1)
    assert "cannot write" in result.stderr and "goodput_sim-000.ndjson.gz" in result.stderr
