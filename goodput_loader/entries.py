"""Validation and normalisation of one Goodput log entry.

Every source (files and Cloud Logging; a log sink is read by dbt) produces the same two
things: a ``LandedEntry`` that matches the raw landing contract, or a
``Rejection`` that says where the input was and why it cannot be landed. Keeping
that decision in one module means a malformed entry is treated the same way
whatever it came from.

The rules follow what the reference library (ml-goodput-measurement 0.2.3)
needs to process an entry without failing: the time keys it reads must be
numbers, ``step_count`` an integer, custom badput events need their type, and
Orbax checkpoint records need the fields ``checkpoint_badput_calculator`` reads.
Entries with keys we do not know (elastic events, future versions) are landed
unchanged: losing them would be worse than ignoring them downstream.
"""

from __future__ import annotations

import calendar
import math
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping
from urllib.parse import quote, unquote

import orjson

# Payload keys written by GoodputRecorder (goodput.py).
JOB_NAME = "job_name"
STEP_COUNT = "step_count"
STEP_START_TIME = "step_start_time"
CUSTOM_BADPUT_EVENT_TYPE = "custom_badput_event_type"
TIME_KEYS = (
    "job_start_time",
    "job_end_time",
    STEP_START_TIME,
    "tpu_init_start_time",
    "tpu_init_end_time",
    "training_prep_start_time",
    "training_prep_end_time",
    "data_loading_start_time",
    "data_loading_end_time",
    "custom_badput_event_start_time",
    "custom_badput_event_end_time",
)
CUSTOM_BADPUT_TIME_KEYS = ("custom_badput_event_start_time", "custom_badput_event_end_time")

# Written by ElasticGoodputRecorder (goodput_elastic.py) for elastic (Pathways) jobs: slice counts at a
# time, waits for slices (by event type) and re-initialisation.
ELASTIC_SLICE_COUNTS_TIME = "elastic_slice_counts_timestamp"
ELASTIC_SLICE_COUNT_KEYS = ("active_slices", "total_slices", "available_slices")
ELASTIC_WAIT_EVENT_TYPE = "elastic_wait_event_type"
ELASTIC_WAIT_TIME_KEYS = ("elastic_wait_start_time", "elastic_wait_end_time")
ELASTIC_TIME_KEYS = (ELASTIC_SLICE_COUNTS_TIME, *ELASTIC_WAIT_TIME_KEYS, "elastic_reinit_start_time",
                     "elastic_reinit_end_time")

# Orbax checkpoint logger records (orbax step_statistics.py), as read by
# checkpoint_badput_calculator.py.
CHECKPOINT_EVENT_TYPES = ("save", "restore", "emergency_restore")
CHECKPOINT_REQUIRED_DURATION = {
    "save": "checkpoint_manager_blocking_duration_secs",
    "restore": "checkpoint_manager_duration_secs",
    "emergency_restore": "checkpoint_manager_duration_secs",
}
CHECKPOINT_OPTIONAL_NUMBERS = (
    "checkpointer_blocking_duration_secs",
    "wait_for_prev_duration_secs",
    "get_old_steps_duration_secs",
    "checkpointer_duration_secs",
    "broadcast_duration_secs",
    "checkpoint_manager_blocking_duration_secs",
    "checkpoint_manager_duration_secs",
)
# When an Orbax operation started: the models place its Badput there.
CHECKPOINT_OPTIONAL_TIMES = ("checkpoint_manager_blocking_start_time", "checkpoint_manager_start_time")

LOG_PREFIX = "goodput_"
MAX_RAW_CHARS = 65536

# What the models can use. Times are epoch seconds from 2000-01-01 up to (not
# including) 2100-01-01, UTC: a time outside is a unit mistake (milliseconds) or a
# placeholder (0, 1e308), and one such entry would stretch its run over decades or
# overflow the build's arithmetic for every run. Steps are integers 0..2^53 (the
# largest a float64 holds exactly); Orbax durations are 0 up to 10^7 s (115 days).
# sources/vectorized.py vouches only for values inside these ranges (see Kind below).
EARLIEST_TIME = 946_684_800
LATEST_TIME = 4_102_444_800
MAX_STEP = 2**53
MAX_CHECKPOINT_SECONDS = 10_000_000
# Slice counts of an elastic job: integers 0..2^31 (the screen vouches for up to 9 digits).
MAX_SLICES = 2**31

_LOG_NAME_RE = re.compile(r"^projects/([^/]+)/logs/([^/]+)$")
_RFC3339_RE = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?"
    r"(?:([Zz])|([+-])(\d{2}):?(\d{2}))$"
)


class InvalidEntry(ValueError):
    """An entry that cannot be landed; the message is the rejection reason."""


@dataclass(frozen=True, slots=True)
class LandedEntry:
    """One row of ``goodput_raw.log_entries`` before ``source``/``loaded_at``."""

    log_name: str
    run_name: str
    insert_id: str
    timestamp_us: int
    receive_timestamp_us: int | None
    severity: str
    payload: str
    job_name_matches: bool
    location: str


@dataclass(frozen=True, slots=True)
class Rejection:
    """One row of ``goodput_raw.rejected_entries``: input kept with its reason."""

    location: str
    reason: str
    raw: str


def truncate_raw(raw: str | bytes) -> str:
    """Keep at most MAX_RAW_CHARS of rejected input, so one huge line cannot bloat the table."""
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8", errors="replace")
    if len(raw) > MAX_RAW_CHARS:
        return raw[:MAX_RAW_CHARS] + f"... [{len(raw) - MAX_RAW_CHARS} more characters]"
    return raw


def parse_rfc3339_us(value: Any, field: str) -> int:
    """Parse an RFC 3339 timestamp (as Cloud Logging writes it) to epoch microseconds, UTC.

    Fractions beyond microseconds are truncated, as google-cloud-logging does.
    """
    if not isinstance(value, str):
        raise InvalidEntry(f"{field} must be an RFC 3339 string, got {type(value).__name__}")
    m = _RFC3339_RE.match(value)
    if not m:
        raise InvalidEntry(f"{field} is not an RFC 3339 timestamp: {value!r}")
    year, month, day, hour, minute, second = (int(g) for g in m.group(1, 2, 3, 4, 5, 6))
    frac = m.group(7) or ""
    micros = int((frac + "000000")[:6])
    if not (1 <= month <= 12 and hour < 24 and minute < 60 and second < 61):
        raise InvalidEntry(f"{field} is out of range: {value!r}")
    if not 1999 <= year <= 2100:  # the range check below needs timegm, which has no year 0
        raise InvalidEntry(f"{field} is outside 2000-2099 (UTC): {value!r}")
    if not 1 <= day <= calendar.monthrange(year, month)[1]:
        raise InvalidEntry(f"{field} is not a calendar date: {value!r}")
    seconds = calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0))
    if m.group(9):
        offset = (int(m.group(10)) * 60 + int(m.group(11))) * 60
        seconds -= offset if m.group(9) == "+" else -offset
    if not EARLIEST_TIME <= seconds < LATEST_TIME:
        raise InvalidEntry(f"{field} is outside 2000-2099 (UTC): {value!r}")
    return seconds * 1_000_000 + micros


def format_rfc3339_us(timestamp_us: int) -> str:
    """Inverse of parse_rfc3339_us, with microseconds and a Z suffix."""
    seconds, micros = divmod(timestamp_us, 1_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{micros:06d}Z"


def split_log_name(log_name: Any) -> tuple[str, str]:
    """Return (project, run_name) of ``projects/P/logs/goodput_<run>``.

    The log id is URL-encoded in logName (``/`` becomes ``%2F``); the run name is
    the decoded id without the ``goodput_`` prefix the library's users give it.
    """
    if not isinstance(log_name, str):
        raise InvalidEntry(f"logName must be a string, got {type(log_name).__name__}")
    m = _LOG_NAME_RE.match(log_name)
    if not m:
        raise InvalidEntry(f"logName is not of the form projects/P/logs/L: {log_name!r}")
    log_id = unquote(m.group(2))
    run = log_id[len(LOG_PREFIX):] if log_id.startswith(LOG_PREFIX) else log_id
    if not run:
        raise InvalidEntry(f"logName has an empty run name: {log_name!r}")
    return m.group(1), run


def log_id_for(run_name: str) -> str:
    """The log ID of a run as logName spells it: ``goodput_<run>``, URL-encoded (a '/' is ``%2F``)."""
    return quote(LOG_PREFIX + run_name, safe="")


def log_name_for(project: str, run_name: str) -> str:
    """The full logName the library writes a run to: ``projects/P/logs/goodput_<run>``."""
    return f"projects/{project}/logs/{log_id_for(run_name)}"


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _is_integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, float) and math.isfinite(value) and value.is_integer()


def _is_time(value: Any) -> bool:
    return _is_number(value) and EARLIEST_TIME <= value < LATEST_TIME


def _is_step(value: Any) -> bool:
    return _is_integer(value) and 0 <= value <= MAX_STEP


def _is_duration(value: Any) -> bool:
    return _is_number(value) and 0 <= value < MAX_CHECKPOINT_SECONDS


def _is_slice_count(value: Any) -> bool:
    return _is_integer(value) and 0 <= value <= MAX_SLICES


def _is_total_slices(value: Any) -> bool:
    return _is_slice_count(value) and value >= 1


def _is_string(value: Any) -> bool:
    return isinstance(value, str)


def _is_non_empty_string(value: Any) -> bool:
    return isinstance(value, str) and bool(value)


# ----------------------------------------------------------------------------- the payload rules
# One table, two users: validate_payload below applies it to one parsed payload, and
# sources/vectorized.py compiles it into the SQL that screens whole batches of lines. A rule
# changed here changes both; tests/test_vectorized.py checks that they still agree.


@dataclass(frozen=True)
class Kind:
    """A kind of payload value: its exact test, and the JSON text the vectorised screen vouches for.

    ``screen`` is an RE2 pattern over the compact text DuckDB writes for a
    value. It may accept less than ``test`` (a line it does not vouch for
    goes to the per-entry path, which applies ``test``), never more.
    """

    test: Callable[[Any], bool]
    screen: str


# Conservative screen texts of the ranges above: times of ten digits from 1e9 to 4e9
# (2001-2096), steps of at most 15 digits, durations below 10^7 s.
TIME = Kind(_is_time, r"[1-3]\d{9}(\.\d+)?")
STEP = Kind(_is_step, r"\d{1,15}(\.0+)?")
DURATION = Kind(_is_duration, r"\d{1,7}(\.\d+)?")
SLICE_COUNT = Kind(_is_slice_count, r"\d{1,9}(\.0+)?")
TOTAL_SLICES = Kind(_is_total_slices, r"0*[1-9]\d{0,8}(\.0+)?")
STRING = Kind(_is_string, r'"[^"\\]*"')
NON_EMPTY_STRING = Kind(_is_non_empty_string, r'"[^"\\]+"')

# How a rule treats a key that is absent, or present with null.
OPTIONAL = "optional"  # absent passes; present (null included) must be of the kind
NULLABLE = "nullable"  # absent or null passes
REQUIRED = "required"  # absent or null fails


@dataclass(frozen=True)
class ValueRule:
    """Each of ``keys``, as ``presence`` says, must hold a value of ``kind``.

    ``reason`` is the rejection's text, formatted with ``key``, ``value``,
    ``type`` (the value's type name) and ``event_type`` (of a checkpoint
    record). ``first`` is a coarser test checked before the kind's, with a
    reason of its own: "must be a number" says more than "out of range" to
    someone whose value is a string.
    """

    keys: tuple[str, ...]
    kind: Kind
    reason: str
    presence: str = OPTIONAL
    first: tuple[Callable[[Any], bool], str] | None = None
    # check(payload, event_type=None) raises InvalidEntry with the reason of the first key whose
    # value breaks the rule. Compiled once per rule (see _compile): it runs for every entry of the
    # per-entry path, where a generic loop cost 0.3 µs an entry more than the code it replaced.
    check: Callable[..., None] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "check", self._compile())

    def _compile(self) -> Callable[..., None]:
        """One test per present key, the kind's (which implies ``first``'s): which reason applies
        is worked out only for a value that fails."""
        keys, test, first, reason = self.keys, self.kind.test, self.first, self.reason

        def fail(key: str, value: Any, event_type: str | None) -> None:
            text = first[1] if first is not None and not first[0](value) else reason
            raise InvalidEntry(text.format(key=key, value=value, type=type(value).__name__, event_type=event_type))

        if self.presence == OPTIONAL:
            def check(payload: Mapping[str, Any], event_type: str | None = None) -> None:
                for key in keys:
                    if key in payload and not test(payload[key]):
                        fail(key, payload[key], event_type)
        elif self.presence == NULLABLE:
            def check(payload: Mapping[str, Any], event_type: str | None = None) -> None:
                for key in keys:
                    value = payload.get(key)
                    if value is not None and not test(value):
                        fail(key, value, event_type)
        else:
            def check(payload: Mapping[str, Any], event_type: str | None = None) -> None:
                for key in keys:
                    value = payload.get(key)
                    if not test(value):
                        fail(key, value, event_type)
        return check


# Every payload, in this order (the first rule broken gives the reason).
PAYLOAD_RULES = (
    ValueRule((JOB_NAME,), STRING, "jsonPayload.job_name must be a string, got {type}", NULLABLE),
    ValueRule(TIME_KEYS + ELASTIC_TIME_KEYS, TIME, "jsonPayload.{key} is {value!r}: not epoch seconds between 2000 and 2099 "
              "(milliseconds, or a placeholder?)",
              first=(_is_number, "jsonPayload.{key} must be a number of epoch seconds, got {value!r}")),
)
# A step entry has both keys (checked first, see validate_payload), and an integer step.
STEP_KEYS = (STEP_START_TIME, STEP_COUNT)
STEP_RULE = ValueRule((STEP_COUNT,), STEP, "jsonPayload.step_count is {value!r}: outside 0..2^53",
                      first=(_is_integer, "jsonPayload.step_count must be an integer, got {value!r}"))
# A payload with any of CUSTOM_BADPUT_TIME_KEYS is a custom badput event: it needs its type.
CUSTOM_BADPUT_RULE = ValueRule(
    (CUSTOM_BADPUT_EVENT_TYPE,), NON_EMPTY_STRING,
    "custom badput event needs a non-empty string custom_badput_event_type, got {value!r}", REQUIRED)
# A payload with ELASTIC_SLICE_COUNTS_TIME is an elastic slice-count record: three counts, at least one slice
# in all (the library divides by the total).
ELASTIC_SLICE_COUNT_RULES = tuple(
    ValueRule((key,), TOTAL_SLICES if key == "total_slices" else SLICE_COUNT,
              "elastic slice counts need {key} as an integer "
              + ("1..2^31" if key == "total_slices" else "0..2^31") + ", got {value!r}", REQUIRED)
    for key in ELASTIC_SLICE_COUNT_KEYS
)
# A wait's event type says which Badput it is (scale_up or slice down): a string when present.
ELASTIC_WAIT_RULE = ValueRule(
    (ELASTIC_WAIT_EVENT_TYPE,), STRING, "elastic wait needs a string elastic_wait_event_type, got {value!r}")
# A payload whose event_type is one of CHECKPOINT_EVENT_TYPES is an Orbax record.
CHECKPOINT_RULES = {
    event_type: (
        ValueRule(("step",), STEP, "checkpoint {event_type} record needs an integer step in 0..2^53, got {value!r}",
                  REQUIRED),
        ValueRule(("directory",), STRING, "checkpoint {event_type} record needs a string directory, got {value!r}",
                  REQUIRED),
        ValueRule((CHECKPOINT_REQUIRED_DURATION[event_type],), DURATION,
                  "checkpoint {event_type} record needs {key} in seconds (0 up to 10^7), got {value!r}", REQUIRED),
        ValueRule(CHECKPOINT_OPTIONAL_NUMBERS, DURATION,
                  "checkpoint {event_type} record: {key} must be seconds (0 up to 10^7), got {value!r}", NULLABLE),
        ValueRule(CHECKPOINT_OPTIONAL_TIMES, TIME,
                  "checkpoint {event_type} record: {key} is {value!r}: not epoch seconds between 2000 and 2099",
                  NULLABLE),
    )
    for event_type in CHECKPOINT_EVENT_TYPES
}


def validate_payload(payload: Any) -> None:
    """Raise InvalidEntry unless the reference library could process this payload."""
    if not isinstance(payload, dict):
        raise InvalidEntry(f"jsonPayload must be an object, got {type(payload).__name__}")
    for rule in PAYLOAD_RULES:
        rule.check(payload)
    if STEP_START_TIME in payload or STEP_COUNT in payload:
        if STEP_START_TIME not in payload:
            raise InvalidEntry("step entry has step_count but no step_start_time")
        if STEP_COUNT not in payload:
            raise InvalidEntry("step entry has step_start_time but no step_count")
        STEP_RULE.check(payload)
    if any(key in payload for key in CUSTOM_BADPUT_TIME_KEYS):
        CUSTOM_BADPUT_RULE.check(payload)
    if ELASTIC_SLICE_COUNTS_TIME in payload:
        for rule in ELASTIC_SLICE_COUNT_RULES:
            rule.check(payload)
    if any(key in payload for key in ELASTIC_WAIT_TIME_KEYS):
        ELASTIC_WAIT_RULE.check(payload)
    event_type = payload.get("event_type")
    if event_type in CHECKPOINT_EVENT_TYPES:
        for rule in CHECKPOINT_RULES[event_type]:
            rule.check(payload, event_type)


def payload_event_time(payload: Mapping[str, Any]) -> float | None:
    """The first ``*time*`` value of a payload, as the library's get_timestamp_from_log_entry."""
    for key, value in payload.items():
        if "time" in key and _is_number(value):
            return float(value)
    return None


def dump_payload(payload: Any) -> str:
    """Serialise a payload compactly; floats keep their shortest round-trip form."""
    return orjson.dumps(payload).decode()


def from_log_entry(obj: Any, location: str) -> LandedEntry:
    """Normalise one LogEntry (REST JSON shape) or raise InvalidEntry."""
    if not isinstance(obj, dict):
        raise InvalidEntry(f"a LogEntry must be a JSON object, got {type(obj).__name__}")
    _, run_name = split_log_name(obj.get("logName"))
    if "jsonPayload" not in obj:
        kinds = [k for k in ("textPayload", "protoPayload") if k in obj]
        what = f"it has {kinds[0]}" if kinds else "it has no jsonPayload"
        raise InvalidEntry(f"not a structured Goodput entry: {what}")
    payload = obj["jsonPayload"]
    validate_payload(payload)
    insert_id = obj.get("insertId")
    if not isinstance(insert_id, str) or not insert_id:
        raise InvalidEntry(f"insertId must be a non-empty string, got {insert_id!r}")
    timestamp_us = parse_rfc3339_us(obj.get("timestamp"), "timestamp")
    receive = obj.get("receiveTimestamp")
    receive_us = parse_rfc3339_us(receive, "receiveTimestamp") if receive is not None else None
    severity = obj.get("severity", "DEFAULT")
    if not isinstance(severity, str):
        raise InvalidEntry(f"severity must be a string, got {severity!r}")
    return LandedEntry(
        log_name=obj["logName"],
        run_name=run_name,
        insert_id=insert_id,
        timestamp_us=timestamp_us,
        receive_timestamp_us=receive_us,
        severity=severity.upper(),
        payload=dump_payload(payload),
        job_name_matches=payload.get(JOB_NAME) == run_name,
        location=location,
    )


def from_bare_payload(
    payload: Any,
    *,
    run_name: str,
    project: str,
    line_number: int,
    previous_timestamp_us: int | None,
    location: str,
) -> LandedEntry:
    """Normalise one bare recorder payload (a timeline-cache line) or raise InvalidEntry.

    Such files carry no LogEntry envelope, so: the timestamp is the payload's
    own first ``*time*`` value (the rule the library uses for cached entries),
    or the previous line's for records that have none (Orbax records); the
    insertId is the zero-padded line number, so ties keep file order and a
    re-load of the same file lands nothing new.
    """
    validate_payload(payload)
    event_time = payload_event_time(payload)
    if event_time is not None and not _is_time(event_time):
        raise InvalidEntry(
            f"bare payload's first *time* value {event_time!r} is not epoch seconds between 2000 and 2099: "
            "it cannot give the entry its timestamp"
        )
    if event_time is not None:
        timestamp_us = int(round(event_time * 1_000_000))
    elif previous_timestamp_us is not None:
        timestamp_us = previous_timestamp_us
    else:
        raise InvalidEntry("bare payload has no *_time value and no earlier line to take one from")
    return LandedEntry(
        log_name=log_name_for(project, run_name),
        run_name=run_name,
        insert_id=f"line-{line_number:012d}",
        timestamp_us=timestamp_us,
        receive_timestamp_us=None,
        severity="INFO",
        payload=dump_payload(payload),
        job_name_matches=payload.get(JOB_NAME) == run_name,
        location=location,
    )


def looks_like_log_entry(obj: Any) -> bool:
    """A LogEntry has an envelope key; a bare recorder payload has none of them."""
    return isinstance(obj, dict) and (
        "logName" in obj or "jsonPayload" in obj or "insertId" in obj or "textPayload" in obj
    )
