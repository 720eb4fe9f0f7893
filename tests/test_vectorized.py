"""The vectorised NDJSON screen never lands what the per-entry path would not, nor differently.

The screen (goodput_loader/sources/vectorized.py) re-implements entries.py's
rules in DuckDB SQL for speed. These tests hold it to the per-entry path on
hostile lines: every line the screen vouches for must be one that
``from_log_entry`` accepts, with the same columns; every clean line must be
vouched for (else the screen is useless, and the loader slow); and a whole
file of such lines loads into exactly the rows and rejections the per-entry
path gives, line numbers included.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import orjson
import pyarrow as pa
import pytest
from conftest import query, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from goodput_loader.entries import InvalidEntry, from_log_entry
from goodput_loader.sources.files.ndjson import split_lines as _split_lines
from goodput_loader.sources.vectorized import Screen

CLEAN_PAYLOADS = [
    {"job_name": "run-a", "job_start_time": 1795000000.0},
    {"job_name": "run-a", "step_count": 12, "step_start_time": 1795000012.25},
    {"job_name": "run-a", "tpu_init_start_time": 1795000001.5},
    {"job_name": "run-a", "custom_badput_event_type": "eval_step", "custom_badput_event_start_time": 1795000100.5},
    {"job_name": "other", "data_loading_end_time": 1795000003},
    {"event_type": "save", "step": 500, "directory": "gs://b/ckpt", "checkpoint_manager_blocking_duration_secs": 3.5,
     "checkpointer_blocking_duration_secs": None, "synchronous": True},
    {"event_type": "restore", "step": 500.0, "directory": "gs://b/ckpt", "checkpoint_manager_duration_secs": 12},
    {"event_type": "emergency_restore", "step": 7, "directory": "/local", "checkpoint_manager_duration_secs": 1.0},
    {"job_name": "run-a", "elastic_event": "scale_down", "unknown_number": 1e-7},
    # ElasticGoodputRecorder's records: slice counts, a wait, re-initialisation
    {"job_name": "run-a", "active_slices": 3, "total_slices": 4, "available_slices": 4,
     "elastic_slice_counts_timestamp": 1795000200.0},
    {"job_name": "run-a", "elastic_wait_event_type": "scale_up_wait", "elastic_wait_start_time": 1795000300.5},
    {"job_name": "run-a", "elastic_reinit_end_time": 1795000400},
]


def clean_entry(payload: dict, i: int) -> dict:
    return {
        "insertId": f"id{i:06d}",
        "jsonPayload": payload,
        "resource": {"type": "global", "labels": {"project_id": "proj"}},
        "timestamp": "2026-11-01T00:00:00.123456789Z",
        "severity": "INFO",
        "logName": "projects/proj/logs/goodput_run-a",
        "receiveTimestamp": "2026-11-01T00:00:01.5Z",
    }


# Raw text edits that make a line differ from clean JSON, or clean JSON differ from a LogEntry.
TEXT_EDITS = [
    # Values outside the ranges the models can use (entries.py EARLIEST_TIME, MAX_STEP, ...).
    ("1795000012.25", "1795000012250"), ("1795000012.25", "0"), ("1795000012.25", "1e308"),
    ("1795000012.25", "946684800"), ("1795000012.25", "946684799.99"), ("1795000012.25", "999999999.5"),
    ("1795000012.25", "1000000000"), ("1795000012.25", "4102444799.5"), ("1795000012.25", "4102444800"),
    ("1795000012.25", "3999999999.999"), ("1795000012.25", "-1795000012.25"), ("1795000012.25", "1.79500001225e9"),
    ("12,", "100000000000000000000,"), ("12,", "9223372036854775808,"), ("12,", "-1,"),
    ("12,", "9007199254740992,"), ("12,", "9007199254740993,"), ("12,", "999999999999999,"),
    ('"step": 500,', '"step": -500,'), ('"step": 500,', '"step": 1e20,'),
    ('"synchronous": true', '"synchronous": true, "checkpoint_manager_blocking_start_time": 0'),
    ('"synchronous": true', '"synchronous": true, "checkpoint_manager_blocking_start_time": 1795000000.5'),
    ('"synchronous": true', '"synchronous": true, "checkpoint_manager_blocking_start_time": null'),
    ("3.5", "-3.5"), ("3.5", "1e308"), ("3.5", "9999999.5"), ("3.5", "10000000"), ("3.5", "1e-05"),
    ('"checkpointer_blocking_duration_secs": null', '"checkpointer_blocking_duration_secs": -1'),
    ('"checkpointer_blocking_duration_secs": null', '"checkpointer_blocking_duration_secs": 2.5'),
    ("2026-11-01T00", "1999-12-31T23"), ("2026-11-01T00", "2100-01-01T00"), ("2026-11-01T00", "2099-12-31T23"),
    ("2026-11-01T00", "2028-02-29T00"), ("2026-11-01T00", "2027-02-29T00"),
    ("1795000012.25", "NaN"), ("1795000012.25", "Infinity"), ("1795000012.25", "-inf"), ("1795000012.25", "1e400"),
    ("1795000012.25", "1.5e300"), ("1795000012.25", '1795000012.25, "step_count": "x"'),
    ("1795000012.25", '1795000012.25, "job_start_time": "soon"'), ("1795000012.25", "1795000012.25e"),
    ("1795000012.25", '"12"'), ("1795000012.25", "null"), ("1795000012.25", "true"),
    ("12,", "12.5,"), ("12,", "12.0,"), ("12,", "1.2e1,"), ("12,", "123456789012345678901,"), ("12,", '"12",'),
    ('"INFO"', '"info"'), ('"INFO"', "null"), ('"INFO"', "3"), ('"INFO"', '"İNFO"'), ('"INFO"', '""'),
    ('"severity": "INFO", ', ""), ('"receiveTimestamp": "2026-11-01T00:00:01.5Z"', '"receiveTimestamp": null'),
    (".123456789Z", "Z"), (".123456789Z", ".1Z"), (".123456789Z", "+02:00"), (".123456789Z", ".5z"),
    ("2026-11-01T00", "2026-02-31T00"), ("T00:00:00", "T24:00:00"), ("T00:00:00", "T23:59:60"),
    ("T00:00:00", " 00:00:00"), ("2026-11-01", "2026-13-01"), ("2026-11-01", "0001-01-01"),
    ("goodput_run-a", "goodput_run%2Fa"), ("goodput_run-a", "goodput_"), ("goodput_run-a", "run-a"),
    ("projects/proj/logs/", "projects/proj/log/"), ("projects/proj", "projects/pr/oj"),
    ('"insertId": "id', '"insertId": "i\\u0064'), ('"insertId": "id', '"insertId": 5, "x": "'),
    ('"job_name": "run-a"', '"job_name": "run\\u002da"'), ('"job_name": "run-a"', '"job_name": null'),
    ('"job_name": "run-a"', '"job_name": 3'), ('"job_name": "run-a"', '"job_name": "run-b"'),
    ('"job_name": "run-a"', '"job_name": "run-a", "job_name": "run-b"'),
    ('"jsonPayload": {', '"jsonPayload": {"step_count": 1, '), ('"jsonPayload": {', '"jsonPayload": {"nested": {"a": 1}, '),
    ('"jsonPayload": {', '"jsonPayload": {"list": [1, 2], '), ('"jsonPayload": {', '"jsonPayload": {"s": "a\\"b", '),
    ('"jsonPayload": {', '"jsonPayload": {"a\\"step_count": 1, '), ('"jsonPayload": {', '"jsonPayload": {"x": "\\ud83d\\ude00", '),
    ('"jsonPayload": {', '"jsonPayload": {"x": "\\ud800", '), ('"jsonPayload": {', '"jsonPayload": {"z": 1,}, "q": {'),
    ('"logName"', '"logName": "projects/p/logs/goodput_x", "logName"'), ("}, ", "},, "),
    ('"logName"', '"logName": "projects/p/logs/goodput_x", "log\\u004eame"'),
    ('"severity": "INFO"', '"severity": "INFO", "severity" : "ERROR"'),
    ('"timestamp": "2026', '"timestamp": "2026-11-02T00:00:00Z", "timestamp":"2026'),
    ('"jsonPayload": {', '"jsonPayload": {"job_name": "x"}, "jsonPayload": {'),
    ('"resource": {', '"resource": {"timestamp": 1}, "resource": {'),
    ('"event_type": "save"', '"event_type": "saved"'), ('"event_type": "save"', '"event_type": "s\\u0061ve"'),
    ('"event_type": "save"', '"event_type": 3'), ('"step": 500,', '"step": "500",'), ('"step": 500,', ""),
    ('"directory": "gs://b/ckpt"', '"directory": 5'), ('"checkpoint_manager_blocking_duration_secs": 3.5', '"x": 1'),
    ('"checkpointer_blocking_duration_secs": null', '"checkpointer_blocking_duration_secs": "slow"'),
    ('"custom_badput_event_type": "eval_step"', '"custom_badput_event_type": ""'),
    ('"custom_badput_event_type": "eval_step", ', ""), ('"step_start_time"', '"step_start_timex"'),
    # malformed elastic records: counts negative, fractional, missing, huge or a total of 0; a wait type
    # that is not a string; a time that is not a number
    ('"total_slices": 4', '"total_slices": 0'), ('"total_slices": 4', '"total_slices": 4.0'),
    ('"total_slices": 4', '"total_slices": 00'), ('"active_slices": 3', '"active_slices": -3'),
    ('"active_slices": 3', '"active_slices": 3.5'), ('"active_slices": 3', '"active_slices": 3000000000'),
    ('"available_slices": 4, ', ""), ('"available_slices": 4', '"available_slices": null'),
    ('"elastic_wait_event_type": "scale_up_wait"', '"elastic_wait_event_type": 7'),
    ('"elastic_wait_event_type": "scale_up_wait", ', ""), ("1795000300.5", '"later"'), ("1795000400", "17950004000"),
    ("{", "["), ("{", " {"), ('"jsonPayload": {', '"textPayload": "x", "jsonPayload": {'),
    ('"jsonPayload": {', '"jsonPayload": "text", "other": {'),
]


def python_result(line: str) -> dict | None:
    """What the per-entry path lands for this line, or None if it rejects it."""
    try:
        obj = orjson.loads(line)
        entry = from_log_entry(obj, "here")
    except (orjson.JSONDecodeError, InvalidEntry):
        return None
    return {
        "log_name": entry.log_name, "run_name": entry.run_name, "insert_id": entry.insert_id,
        "timestamp_us": entry.timestamp_us, "receive_timestamp_us": entry.receive_timestamp_us,
        "severity": entry.severity, "payload": orjson.loads(entry.payload), "job_name_matches": entry.job_name_matches,
    }


def hostile_lines(seed: int, n: int = 400) -> list[str]:
    """Clean lines in several serialisations, then up to three text edits each."""
    rng = random.Random(seed)
    lines = []
    for i in range(n):
        entry = clean_entry(dict(rng.choice(CLEAN_PAYLOADS)), i)
        text = json.dumps(entry, ensure_ascii=rng.random() < 0.5)
        for _ in range(rng.choice([0, 0, 1, 1, 2, 3])):
            old, new = rng.choice(TEXT_EDITS)
            text = text.replace(old, new, 1)
        if rng.random() < 0.2:
            text = orjson.dumps(orjson.loads(text)).decode() if _loads_ok(text) else text
        lines.append(text)
    return lines


def _loads_ok(text: str) -> bool:
    try:
        orjson.loads(text)
        return True
    except orjson.JSONDecodeError:
        return False


# Both ways the screen materialises the extracted envelopes: a temp table (batches of a row
# group or more) and Arrow record batches (smaller batches); these tests' batches are small.
SCREEN_WAYS = pytest.mark.parametrize("table_rows", [0, 10**9], ids=["temp-table", "arrow"])


def screen_lines(lines: list[str], table_rows: int) -> dict[int, dict]:
    data = "".join(line + "\n" for line in lines).encode()
    screen = Screen(table_rows)
    try:
        result = screen.run(_split_lines(data), 1)
    finally:
        screen.close()
    rows = result.accepted.to_pylist()
    assert sorted(set(result.others) | {r["line_no"] - 1 for r in rows}) == list(range(len(lines)))
    return {r.pop("line_no") - 1: r for r in rows}


@SCREEN_WAYS
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=False)
@given(st.integers(min_value=0, max_value=2**32))
def test_screen_vouches_only_for_lines_the_per_entry_path_accepts_identically(table_rows, seed):
    lines = hostile_lines(seed)
    vouched = screen_lines(lines, table_rows)
    for i, row in vouched.items():
        expected = python_result(lines[i])
        assert expected is not None, f"seed {seed}: the screen landed a line Python rejects: {lines[i]}"
        row["payload"] = orjson.loads(row["payload"])
        assert row == expected, f"seed {seed}: line {lines[i]}"


@SCREEN_WAYS
def test_screen_vouches_for_every_clean_line(table_rows):
    lines = [json.dumps(clean_entry(p, i), ensure_ascii=i % 2 == 0) for i, p in enumerate(CLEAN_PAYLOADS * 3)]
    lines += [orjson.dumps(clean_entry(p, i)).decode() for i, p in enumerate(CLEAN_PAYLOADS)]
    vouched = screen_lines(lines, table_rows)
    assert sorted(vouched) == list(range(len(lines)))
    for i, row in vouched.items():
        row["payload"] = orjson.loads(row["payload"])
        assert row == python_result(lines[i])


@SCREEN_WAYS
def test_every_text_edit_is_either_vouched_identically_or_left_to_python(table_rows):
    """Each edit alone, so a screen that silently mishandles one of them cannot hide behind the others."""
    base = json.dumps(clean_entry(CLEAN_PAYLOADS[1], 1))
    ckpt = json.dumps(clean_entry(CLEAN_PAYLOADS[5], 2))
    custom = json.dumps(clean_entry(CLEAN_PAYLOADS[3], 3))
    elastic = [json.dumps(clean_entry(CLEAN_PAYLOADS[i], i)) for i in (9, 10, 11)]
    bases = (base, ckpt, custom, *elastic)
    lines = [text.replace(old, new, 1) for old, new in TEXT_EDITS for text in bases]
    lines = [line for line in lines if line not in bases]
    vouched = screen_lines(lines, table_rows)
    python_rejects = [i for i, line in enumerate(lines) if python_result(line) is None]
    assert python_rejects and not set(python_rejects) & set(vouched)
    for i, row in vouched.items():
        row["payload"] = orjson.loads(row["payload"])
        assert row == python_result(lines[i]), lines[i]


@SCREEN_WAYS
def test_payloads_not_readable_by_text_are_left_to_python(table_rows):
    """Nesting or an escape in the payload: its keys cannot be found in its text, so Python decides,
    whatever it decides (each of these lands there)."""
    base = json.dumps(clean_entry(CLEAN_PAYLOADS[1], 1))
    lines = [base.replace('"jsonPayload": {', '"jsonPayload": {' + extra, 1)
             for extra in ('"s": "a\\\\b", ', '"s": "a\\"b", ', '"o": {"k": 1}, ', '"l": [1], ')]
    assert all(python_result(line) is not None for line in lines)
    assert screen_lines(lines, table_rows) == {}
    assert sorted(screen_lines([base], table_rows)) == [0]


def test_a_file_of_hostile_lines_loads_like_the_per_entry_path(tmp_path: Path, warehouse):
    """Line numbers, blank lines, rejections and batch edges through the whole loader."""
    lines = hostile_lines(7, n=600)
    for at in (0, 5, 299, 300, 301):
        lines.insert(at, "   " if at % 2 else "")
    path = tmp_path / "hostile.ndjson"
    path.write_text("".join(line + "\n" for line in lines))
    run_cli("load", "--duckdb", warehouse, "--batch-size", "300", path)

    expected_rows, expected_rejections = {}, set()
    for line_no, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        row = python_result(line)
        if row is None:
            expected_rejections.add(f"{path}:{line_no}")
            continue
        key = (row["log_name"], row["timestamp_us"], row["insert_id"])
        expected_rows.setdefault(key, row)  # the first of a key lands, later ones are duplicates
    got = query(warehouse, """select log_name, epoch_us("timestamp"), insert_id, epoch_us(receive_timestamp),
                                     severity, payload::varchar, job_name_matches, run_name
                              from goodput_raw.log_entries""")
    got_rows = {(r[0], r[1], r[2]): r for r in got}
    assert set(got_rows) == set(expected_rows)
    for key, row in expected_rows.items():
        g = got_rows[key]
        assert (g[3], g[4], orjson.loads(g[5]), g[6], g[7]) == (
            row["receive_timestamp_us"], row["severity"], row["payload"], row["job_name_matches"], row["run_name"])
    rejections = {r[0] for r in query(warehouse, "select location from goodput_raw.rejected_entries")}
    assert rejections == expected_rejections
    assert len(got) > 100 and len(rejections) > 50  # the file exercises both paths


def test_arrow_lines_keep_a_missing_final_newline():
    lines = _split_lines(b'{"a":1}\n\n{"b":2}')
    assert isinstance(lines, pa.LargeStringArray)
    assert lines.to_pylist() == ['{"a":1}\n', "\n", '{"b":2}']


def test_a_grown_file_resumes_after_its_committed_records(tmp_path: Path):
    """The cursor counts records (not lines); a resumed load of mixed lines equals one load of the whole file."""
    lines = hostile_lines(11, n=500)
    lines[10:10] = ["", "  "]
    path = tmp_path / "grow.ndjson"
    path.write_text("".join(line + "\n" for line in lines[:260]))
    resumed, whole = tmp_path / "resumed.duckdb", tmp_path / "whole.duckdb"
    run_cli("load", "--duckdb", resumed, "--batch-size", "100", path)
    path.write_text("".join(line + "\n" for line in lines))  # appended: the first 1 MiB is unchanged
    run_cli("load", "--duckdb", resumed, "--batch-size", "100", path)
    run_cli("load", "--duckdb", whole, path)
    entries = """select log_name, "timestamp", insert_id, payload::varchar from goodput_raw.log_entries order by all"""
    rejections = "select location, reason from goodput_raw.rejected_entries order by all"
    assert query(resumed, entries) == query(whole, entries)
    assert query(resumed, rejections) == query(whole, rejections)
    state = "select cursor_offset from goodput_raw.load_state"
    assert query(resumed, state) == query(whole, state) == [(sum(1 for line in lines if line.strip()),)]
