"""Vectorised screening of NDJSON LogEntry lines, in DuckDB.

Checking entries one by one in Python costs about 10 µs each, which caps a
load at ~90k entries/s. Here a whole batch of lines is parsed and checked by
two DuckDB statements (yyjson, all cores), and the landed columns come back
as an Arrow table.

The rules stay in ``entries.py``: the payload checks here are compiled from
its rule table (``PAYLOAD_RULES``, ``STEP_RULE``, ``CUSTOM_BADPUT_RULE``,
``CHECKPOINT_RULES``; see ``_rule_sql``), so a rule changed there changes
both paths. The envelope's checks (timestamps, insertId, severity, logName)
are Python parsing in entries.py and conservative patterns here: they
cannot come from one table without a slower screen. This screen only vouches for lines it can
prove the per-entry path would accept, and builds exactly the fields that path
would build. A line that fails any check here is not rejected here: it is
handed to ``entries.from_log_entry``, which accepts it or writes the
rejection with its reason. So the screen may be conservative, never more
lenient. tests/test_vectorized.py holds it to that on generated hostile lines.

Where DuckDB's JSON reader is laxer than JSON (and than orjson), the screen
sends the line to the per-entry path:
- NaN and Infinity literals, and exponents of three digits (orjson rejects
  infinities);
- trailing commas;
- integers of 19 or more digits (orjson turns them into floats);
- escapes in the fields it decodes, and any ``\\u`` escape;
- duplicate keys (yyjson keeps the first, a Python dict the last): in the
  envelope found by the lexical guard, in the payload by json_keys;
- payloads with nesting or backslashes, whose keys it cannot find by text.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb
import numpy as np
import pyarrow as pa

from goodput_loader.columns import ENTRY_SCHEMA
from goodput_loader.entries import (
    CHECKPOINT_EVENT_TYPES,
    CHECKPOINT_RULES,
    CUSTOM_BADPUT_RULE,
    CUSTOM_BADPUT_TIME_KEYS,
    ELASTIC_SLICE_COUNT_RULES,
    ELASTIC_SLICE_COUNTS_TIME,
    ELASTIC_WAIT_RULE,
    ELASTIC_WAIT_TIME_KEYS,
    JOB_NAME,
    LOG_PREFIX,
    NULLABLE,
    OPTIONAL,
    PAYLOAD_RULES,
    STEP,
    STEP_COUNT,
    STEP_KEYS,
    STEP_RULE,
    STEP_START_TIME,
    STRING,
    TIME,
    TIME_KEYS,
    ValueRule,
)
from goodput_loader.sinks.base import DUCKDB_ROW_GROUP_ROWS

_ENVELOPE = ["logName", "insertId", "timestamp", "receiveTimestamp", "severity", "jsonPayload"]
# A lexical guard on the raw line (RE2, one pass). A match means "let Python decide".
_LAX_JSON = "|".join(
    [
        r"[:\[,]\s*-?(?i:nan|inf)",  # NaN / Infinity / inf literals as values
        r"[:\[,]\s*-?\d+(\.\d+)?[eE][+-]?\d{3}",  # exponents that may overflow a double
        r",\s*[\]}]",  # trailing commas
        r"[:\[,]\s*-?\d{19}",  # integers beyond 64 bits
        # \u escapes: surrogates, and keys spelled with escapes, which the next test cannot see
        r"\\[uU]",
        # an envelope key twice (yyjson keeps the first, Python the last). Conservative:
        # the text also matches a nested key of that name
        *(rf'"{key}"\s*:.*"{key}"\s*:' for key in _ENVELOPE),
    ]
)
# The envelope's texts. entries.from_log_entry checks these fields with Python's own parsing
# (the RFC 3339 regex and calendar, the logName split), which is not a pattern a table row can
# hold, so they stay here as conservative patterns: years 2000-2099, UTC only, no escapes.
# The payload's value patterns are entries.py's (Kind.screen), compiled from its rule table.
_TIMESTAMP = r'"20\d\d-\d\d-\d\dT([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,9})?Z"'
_INSERT_ID = r'"[^"\\]+"'
_SEVERITY = r'"[A-Za-z]*"'


def _has(key: str) -> str:
    """Whether the compact payload text has ``key`` (flat payloads only, see _checks_sql)."""
    return f"""contains(payload, '"{key}":')"""


def _value_is(key: str, pattern: str) -> str:
    """Whether ``key``'s value in the compact payload text starts with ``pattern``."""
    return f"""regexp_matches(payload, '"{key}":({pattern})[,}}]')"""


def _every_value_is(keys: tuple[str, ...], pattern: str) -> str:
    """Whether every one of ``keys`` present in the compact payload text has a value matching ``pattern``."""
    key = f'"({_alternatives(keys)})":'
    return f"""(len(regexp_extract_all(payload, '{key}')) = len(regexp_extract_all(payload, '{key}({pattern})[,}}]')))"""


def _alternatives(keys: tuple[str, ...] | list[str]) -> str:
    return "|".join(dict.fromkeys(keys))


def _rule_sql(rule: ValueRule) -> str:
    """One of entries.py's ValueRules as a condition on the compact payload text.

    A conservative rendering: where the rule would accept a value the kind's
    screen pattern does not match, the line goes to the per-entry path, which
    applies the rule itself.
    """
    pattern = rule.kind.screen + ("|null" if rule.presence == NULLABLE else "")
    if len(rule.keys) > 1:
        if rule.presence not in (OPTIONAL, NULLABLE):  # no such rule yet; every key would need to be there
            raise NotImplementedError(f"a required rule over several keys: {rule.keys}")
        return _every_value_is(rule.keys, pattern)
    key = rule.keys[0]
    if rule.presence in (OPTIONAL, NULLABLE):
        return f"(not {_has(key)} or {_value_is(key, pattern)})"
    return _value_is(key, pattern)


def _payload_ok() -> str:
    """validate_payload's rules (entries.py's table), on the compact text DuckDB writes for a flat payload.

    In that text (no whitespace, no nesting, no escapes: the screen sends
    payloads with ``{``, ``[`` or a backslash after the opening brace to
    Python) ``"key":`` occurs exactly where a key starts.
    """
    checkpoint = []
    for event_type in CHECKPOINT_EVENT_TYPES:
        rules = "\n                and ".join(_rule_sql(rule) for rule in CHECKPOINT_RULES[event_type])
        checkpoint.append(
            f"""(regexp_matches(payload, '"event_type":"{event_type}"[,}}]')
                and {rules})"""
        )
    every_payload = "\n        and ".join(_rule_sql(rule) for rule in PAYLOAD_RULES)
    step_start, step_count = STEP_KEYS
    return f"""
        {every_payload}
        and {_has(step_start)} = {_has(step_count)}
        and {_rule_sql(STEP_RULE)}
        and (not ({' or '.join(_has(k) for k in CUSTOM_BADPUT_TIME_KEYS)})
             or {_rule_sql(CUSTOM_BADPUT_RULE)})
        and (not {_has(ELASTIC_SLICE_COUNTS_TIME)}
             or {' and '.join(_rule_sql(rule) for rule in ELASTIC_SLICE_COUNT_RULES)})
        and (not ({' or '.join(_has(k) for k in ELASTIC_WAIT_TIME_KEYS)})
             or {_rule_sql(ELASTIC_WAIT_RULE)})
        and (not {_has('event_type')}
             or not regexp_matches(payload, '"event_type":"({_alternatives(CHECKPOINT_EVENT_TYPES)})"[,}}]')
                and not regexp_matches(payload, '"event_type":"[^"]*\\\\')
             or {' or '.join(checkpoint)})"""


def _common_entry() -> str:
    """Whether the entry has the shape nearly every entry has, which passes every rule: one regex.

    The envelope texts the general checks test one by one (insertId,
    timestamp, receiveTimestamp, severity), then a payload of one of two
    shapes: ``{"job_name":"…","<a time key>":<number>}`` or
    ``{"job_name":"…","step_count":<integer>,"step_start_time":<number>}``
    (the order the library writes them). Three keys at most, all distinct, so
    neither _payload_ok's two dozen regexes nor the duplicate-key parse can
    fail for them. On such short texts each regex call costs more than its
    scan, so one call instead of about thirty took the checks from 0.64 s to
    0.41 s per 250k lines of L. The texts are joined by newlines, which no
    JSON text here can hold.
    """
    lone_times = [k for k in TIME_KEYS if k != STEP_START_TIME and k not in CUSTOM_BADPUT_TIME_KEYS]
    payload = (
        f"""[{{]"{JOB_NAME}":{STRING.screen},("({_alternatives(lone_times)})":{TIME.screen}"""
        f"""|"{STEP_COUNT}":{STEP.screen},"{STEP_START_TIME}":{TIME.screen})[}}]"""
    )
    texts = ", chr(10), ".join(["insert_id_text", "timestamp_text", "receive_text", "severity_text", "payload"])
    pattern = r"\n".join([_INSERT_ID, _TIMESTAMP, f"({_TIMESTAMP}|null)?", f"({_SEVERITY})?", payload])
    return f"regexp_full_match(concat({texts}), '{pattern}')"  # concat reads NULL as ''


def _timestamp_us(text: str) -> str:
    """Epoch µs of a quoted RFC 3339 UTC text, fraction truncated to µs (NULL if no such date)."""
    return f"epoch_us(try_cast(left(substr({text}, 2, length({text}) - 3), 26) as timestamp))"


def _unquote(text: str) -> str:
    """The value of a JSON string without escapes (checked by the caller)."""
    return f"substr({text}, 2, length({text}) - 2)"


def _extract_sql() -> str:
    """The first of the screen's two queries: the envelope of every line of ``chunk``, one parse a line.

    Its result is materialised before the checks read it (see Screen.run)
    because DuckDB inlines a projection into every expression that uses it:
    reading ``x[1]`` and ``x[2]`` of an inlined ``json_extract`` would parse
    the line twice.
    """
    paths = "[" + ", ".join(f"""'$."{k}"'""" for k in _ENVELOPE) + "]"
    return f"""
select line_no,
       try(json_extract(line, {paths}))::varchar[] as x
from chunk
where starts_with(ltrim(line), '{{') and not regexp_matches(line, '{_LAX_JSON}')
"""


def _checks_sql(extracted: str) -> str:
    """The second query: check the envelopes read from the relation ``extracted`` and build the rows."""
    return f"""
with fields as (
    select
        line_no,
        x[1] as log_name_text,
        x[2] as insert_id_text,
        x[3] as timestamp_text,
        x[4] as receive_text,
        x[5] as severity_text,
        x[6] as payload,
        regexp_extract(x[1], '^"projects/[^/"\\\\%]+/logs/([^/"\\\\%]+)"$', 1) as log_id
    from {extracted}
    where x is not null
      and starts_with(x[6], '{{')
      -- no nesting or backslash: three substring tests take a third of one regex's time
      and not (contains(substr(x[6], 2), '{{') or contains(substr(x[6], 2), '[') or contains(x[6], '\\'))
),

checked as (
    select
        line_no,
        {_unquote('log_name_text')} as log_name,
        case when starts_with(log_id, '{LOG_PREFIX}') then substr(log_id, {len(LOG_PREFIX) + 1}) else log_id end
            as run_name,
        {_unquote('insert_id_text')} as insert_id,
        {_timestamp_us('timestamp_text')} as timestamp_us,
        case when receive_text is null or receive_text = 'null' then null
             else {_timestamp_us('receive_text')} end as receive_timestamp_us,
        receive_text,
        coalesce(upper({_unquote('severity_text')}), 'DEFAULT') as severity,
        payload,
        regexp_extract(payload, '"{JOB_NAME}":"([^"\\\\]*)"', 1) as job_name,
        case when {_common_entry()} then true
             else regexp_full_match(coalesce(insert_id_text, ''), '{_INSERT_ID}')
                  and regexp_full_match(coalesce(timestamp_text, ''), '{_TIMESTAMP}')
                  and (receive_text is null or receive_text = 'null'
                       or regexp_full_match(receive_text, '{_TIMESTAMP}'))
                  and (severity_text is null or regexp_full_match(severity_text, '{_SEVERITY}'))
                  and {_payload_ok()}
                  and len(json_keys(payload)) = len(list_distinct(json_keys(payload))) end
            as ok
    from fields
)

select
    line_no,
    log_name,
    run_name,
    insert_id,
    timestamp_us,
    receive_timestamp_us,
    severity,
    payload,
    job_name = run_name as job_name_matches  -- '' when absent or not a string, and run_name is not ''
from checked
where ok
  and run_name <> ''
  and timestamp_us is not null
  and (receive_text is null or receive_text = 'null' or receive_timestamp_us is not null)
order by line_no
"""


_SCAN_ROWS = 8192
# DuckDB scans a table one row group per thread, an Arrow table one record batch.
_SCREENED_SCHEMA = pa.schema([("line_no", pa.int64()), *ENTRY_SCHEMA])


@dataclass
class Screened:
    """The lines of one chunk the screen vouched for, and the rest."""

    accepted: pa.Table  # line_no plus columns.ENTRY_SCHEMA, in line order
    others: list[int]  # indexes (0-based, into the chunk) for the per-entry path


class Screen:
    """Runs the screening statement on chunks of lines, over a private in-memory DuckDB."""

    def __init__(self, table_rows: int = DUCKDB_ROW_GROUP_ROWS) -> None:
        """``table_rows``: batches of at least this many lines keep their extracted lists in a temp table."""
        self._table_rows = table_rows
        self._con = duckdb.connect(":memory:")
        self._con.execute("set timezone = 'UTC'")
        self._extract = _extract_sql()
        self._check_table = _checks_sql("screen_extracted")
        self._check_arrow = _checks_sql("extracted_batches")

    def run(self, lines: pa.Array | pa.ChunkedArray, first_line_no: int) -> Screened:
        """Screen ``lines`` (Arrow strings), numbered from ``first_line_no``."""
        table = pa.table(
            {"line_no": pa.array(np.arange(first_line_no, first_line_no + len(lines), dtype=np.int64)), "line": lines}
        )
        # Several record batches: DuckDB scans an Arrow table one batch per thread.
        chunk = pa.Table.from_batches(table.to_batches(max_chunksize=_SCAN_ROWS))  # noqa: F841 - scanned by name
        # The extracted lists are materialised where the checks scan them on every core: a temp
        # table of a few row groups for a large batch; for a batch under one row group (a
        # small file), an Arrow table of 8192-row batches, since that temp table would be
        # checked by one thread (at L the Arrow way costs 2 s more; 20 files of 50k lines load 0.3–0.4 s faster).
        if len(lines) >= self._table_rows:
            self._con.execute(f"create or replace temp table screen_extracted as {self._extract}")
            checks = self._check_table
        else:
            extracted = self._con.execute(self._extract).to_arrow_table()
            extracted_batches = pa.Table.from_batches(  # noqa: F841 - scanned by name
                extracted.to_batches(max_chunksize=_SCAN_ROWS), schema=extracted.schema
            )
            checks = self._check_arrow
        accepted = self._con.execute(checks).to_arrow_table().cast(_SCREENED_SCHEMA)
        rest = np.ones(len(lines), dtype=bool)
        rest[accepted.column("line_no").to_numpy() - first_line_no] = False
        return Screened(accepted=accepted, others=np.flatnonzero(rest).tolist())

    def close(self) -> None:
        self._con.close()
