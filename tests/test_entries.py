"""Validation of single entries: what lands, what is rejected and why."""

from __future__ import annotations

import pytest

from goodput_loader.entries import (
    InvalidEntry,
    format_rfc3339_us,
    from_bare_payload,
    from_log_entry,
    log_name_for,
    parse_rfc3339_us,
    split_log_name,
)


def entry(payload, **overrides):
    base = {
        "logName": "projects/p/logs/goodput_run-1",
        "insertId": "abc",
        "timestamp": "2026-01-01T00:00:00.123456789Z",
        "severity": "INFO",
        "jsonPayload": payload,
    }
    base.update(overrides)
    return base


def test_rfc3339_nanoseconds_truncate_and_offsets_apply():
    assert parse_rfc3339_us("2026-01-01T00:00:01.999999999Z", "t") == 1767225601_999_999
    assert parse_rfc3339_us("2026-01-01T01:00:01+01:00", "t") == 1767225601_000_000
    assert format_rfc3339_us(1767225601_999_999) == "2026-01-01T00:00:01.999999Z"
    with pytest.raises(InvalidEntry, match="not an RFC 3339"):
        parse_rfc3339_us("yesterday", "timestamp")


@pytest.mark.parametrize(
    "text, reason",
    [
        ("2026-02-31T00:00:00Z", "not a calendar date"),
        ("2027-02-29T00:00:00Z", "not a calendar date"),
        ("0000-01-01T00:00:00Z", "outside 2000-2099"),
        ("1999-12-31T23:59:59.999999Z", "outside 2000-2099"),
        ("2100-01-01T00:00:00Z", "outside 2000-2099"),
        ("2099-12-31T23:00:00-01:00", "outside 2000-2099"),
    ],
)
def test_impossible_or_implausible_timestamps_are_rejected(text, reason):
    with pytest.raises(InvalidEntry, match=reason):
        parse_rfc3339_us(text, "timestamp")


def test_the_plausible_range_ends_are_kept():
    assert parse_rfc3339_us("2000-01-01T00:00:00Z", "t") == 946_684_800_000_000
    assert parse_rfc3339_us("2028-02-29T00:00:00Z", "t") > 0
    assert parse_rfc3339_us("2099-12-31T23:59:59.999999Z", "t") == 4_102_444_799_999_999


def test_log_name_round_trip_with_url_encoding():
    name = log_name_for("p", "team/run 1")
    assert name == "projects/p/logs/goodput_team%2Frun%201"
    assert split_log_name(name) == ("p", "team/run 1")


def test_step_entry_lands_with_flag_for_foreign_job_name():
    landed = from_log_entry(entry({"job_name": "other", "step_count": 3, "step_start_time": 1795000000.5}), "f:1")
    assert landed.run_name == "run-1"
    assert landed.timestamp_us == parse_rfc3339_us("2026-01-01T00:00:00.123456Z", "t")
    assert not landed.job_name_matches


@pytest.mark.parametrize(
    "payload, reason",
    [
        ({"job_name": "run-1", "step_count": 3}, "no step_start_time"),
        ({"job_name": "run-1", "step_count": "x", "step_start_time": 1795000000.0}, "step_count must be an integer"),
        ({"job_name": "run-1", "job_start_time": "noon"}, "job_start_time must be a number"),
        ({"job_name": "run-1", "custom_badput_event_start_time": 1795000000.0}, "custom_badput_event_type"),
        ({"job_name": 7}, "job_name must be a string"),
        ({"step": 1, "event_type": "save", "directory": "gs://b"}, "checkpoint_manager_blocking_duration_secs"),
        ({"step": "one", "event_type": "restore", "directory": "/l", "checkpoint_manager_duration_secs": 1.0},
         "integer step"),
        # Values the models cannot use: a unit mistake, a placeholder, an overflow.
        ({"job_name": "run-1", "job_end_time": 1795000000000.0}, "not epoch seconds between 2000 and 2099"),
        ({"job_name": "run-1", "job_start_time": 0}, "not epoch seconds between 2000 and 2099"),
        ({"job_name": "run-1", "job_start_time": 1e308}, "not epoch seconds between 2000 and 2099"),
        ({"job_name": "run-1", "job_start_time": 946684799.5}, "not epoch seconds between 2000 and 2099"),
        ({"job_name": "run-1", "job_start_time": 4102444800}, "not epoch seconds between 2000 and 2099"),
        ({"job_name": "run-1", "step_count": 1e20, "step_start_time": 1795000000.0}, "outside 0..2\\^53"),
        ({"job_name": "run-1", "step_count": 2**63, "step_start_time": 1795000000.0}, "outside 0..2\\^53"),
        ({"job_name": "run-1", "step_count": -1, "step_start_time": 1795000000.0}, "outside 0..2\\^53"),
        ({"job_name": "run-1", "step_count": 2**53 + 1, "step_start_time": 1795000000.0}, "outside 0..2\\^53"),
        ({"step": -5, "event_type": "save", "directory": "gs://b", "checkpoint_manager_blocking_duration_secs": 1.0},
         "integer step in 0..2\\^53"),
        ({"step": 5, "event_type": "save", "directory": "gs://b", "checkpoint_manager_blocking_duration_secs": -1.0},
         "0 up to 10\\^7"),
        ({"step": 5, "event_type": "save", "directory": "gs://b", "checkpoint_manager_blocking_duration_secs": 1e308},
         "0 up to 10\\^7"),
        ({"step": 5, "event_type": "save", "directory": "gs://b", "checkpoint_manager_blocking_duration_secs": 1.0,
          "wait_for_prev_duration_secs": 1e7}, "0 up to 10\\^7"),
    ],
)
def test_wrong_types_and_missing_keys_are_rejected_with_reason(payload, reason):
    with pytest.raises(InvalidEntry, match=reason):
        from_log_entry(entry(payload), "f:1")


def test_envelope_errors_name_the_field():
    with pytest.raises(InvalidEntry, match="logName"):
        from_log_entry(entry({}, logName="nope"), "f:1")
    with pytest.raises(InvalidEntry, match="textPayload"):
        from_log_entry({"logName": "projects/p/logs/goodput_r", "textPayload": "hi"}, "f:1")
    with pytest.raises(InvalidEntry, match="insertId"):
        from_log_entry(entry({}, insertId=""), "f:1")


def test_unknown_payload_keys_are_landed_not_dropped():
    """A key no rule knows is kept as written (a newer recorder's); known keys are checked (the elastic
    recorder's times are epoch seconds like every other time)."""
    landed = from_log_entry(entry({"job_name": "run-1", "future_start_time": 4.0, "note": [1]}), "f:1")
    assert "future_start_time" in landed.payload and "note" in landed.payload
    with pytest.raises(InvalidEntry, match="elastic_wait_start_time is 4.0: not epoch seconds"):
        from_log_entry(entry({"job_name": "run-1", "elastic_wait_event_type": "x", "elastic_wait_start_time": 4.0}),
                       "f:1")


def test_bare_payload_takes_time_from_payload_and_order_from_line():
    landed = from_bare_payload(
        {"job_name": "r", "job_start_time": 1795000010.25}, run_name="r", project="p", line_number=7,
        previous_timestamp_us=None, location="f:7",
    )
    assert landed.timestamp_us == 1_795_000_010_250_000
    assert landed.insert_id == "line-000000000007"
    orbax = from_bare_payload(
        {"step": 1, "event_type": "save", "directory": "gs://b", "checkpoint_manager_blocking_duration_secs": 1.0},
        run_name="r", project="p", line_number=8, previous_timestamp_us=1_795_000_010_250_000, location="f:8",
    )
    assert orbax.timestamp_us == 1_795_000_010_250_000


@pytest.mark.parametrize("payload", [{"job_name": "r", "job_start_time": 1e15}, {"job_name": "r", "my_time": 1e300}])
def test_a_bare_payload_with_an_implausible_time_is_rejected_not_an_overflow(payload):
    with pytest.raises(InvalidEntry, match="between 2000 and 2099"):
        from_bare_payload(payload, run_name="r", project="p", line_number=1, previous_timestamp_us=None, location="f:1")


def test_staging_applies_the_loader_s_ranges():
    """The ranges live in entries.py; staging repeats them in SQL for entries a log sink delivers."""
    from pathlib import Path

    from goodput_loader.entries import EARLIEST_TIME, LATEST_TIME, MAX_CHECKPOINT_SECONDS, MAX_STEP

    sql = (Path(__file__).resolve().parents[1] / "models" / "staging" / "stg_goodput__events.sql").read_text()
    for bound in (EARLIEST_TIME, LATEST_TIME, MAX_STEP, MAX_CHECKPOINT_SECONDS):
        assert str(bound) in sql, bound
