{#
  The landed entries in the raw contract's shape (log_name, run_name,
  insert_id, timestamp, receive_timestamp, severity, payload JSON,
  job_name_matches, source, loaded_at), from whichever source
  var('goodput_source') names:

  - loader (default): goodput_raw.log_entries, written by goodput-loader
    (DuckDB or BigQuery);
  - log_sink: the tables of a classic Cloud Logging -> BigQuery sink
    (camelCase LogEntry columns, jsonPayload a RECORD of lower-cased fields,
    date-sharded goodput_<run>_YYYYMMDD tables or one partitioned table);
  - log_analytics: the _AllLogs view of a Log Analytics linked dataset
    (snake_case columns, json_payload JSON).

  The run is what follows /logs/goodput_ in the log name (string functions,
  not a regular expression: the BigQuery emulator the tests use mistranslates
  a regexp next to a RECORD column). The sinks deliver at least once, so the two BigQuery sources are deduplicated
  on (log_name, timestamp, insert_id) here, as the loader does when it lands.

  In a window build (var goodput_library_windows, macros/library_windows) each
  window's entries come out as a run of their own.
#}

{% macro goodput_landed_entries() -%}
  {%- if goodput_library_window_mode() -%}
    {#- a window build (macros/library_windows): each window's entries as a run of its own -#}
    {{ goodput_library_window_entries(goodput_source_entries()) }}
  {%- else -%}
    {{ goodput_source_entries() }}
  {%- endif -%}
{%- endmacro %}


{% macro goodput_source_entries() -%}
  {%- set kind = var('goodput_source', 'loader') -%}
  {%- if kind == 'loader' -%}
    select
        log_name,
        run_name,
        insert_id,
        {{ adapter.quote('timestamp') }},
        receive_timestamp,
        severity,
        payload,
        job_name_matches,
        source,
        loaded_at
    from {{ source('goodput_raw', 'log_entries') }}
  {%- elif kind == 'log_sink' -%}
    {{ adapter.dispatch('goodput_log_sink_entries', 'goodput_warehouse')(source('goodput_log_sink', 'entries')) }}
  {%- elif kind == 'log_analytics' -%}
    {{ adapter.dispatch('goodput_log_analytics_entries', 'goodput_warehouse')(source('goodput_log_analytics', 'all_logs')) }}
  {%- else -%}
    {{ exceptions.raise_compiler_error("var goodput_source is " ~ kind ~ "; expected loader, log_sink or log_analytics") }}
  {%- endif -%}
{%- endmacro %}


{#-
  The run a logName names: its log ID after 'goodput_', URL-decoded as the
  loader decodes it (entries.py). Cloud Logging writes a log ID URL-encoded in
  logName, and of the characters a log ID may hold ([A-Za-z0-9/_.-]) only '/'
  needs it (%2F); '.', '_' and '-' are decoded too, for a writer that encodes
  more than it must. Undecoded, a run named 'team/llama' would be 'team%2Fllama'
  here and 'team/llama' in its payloads' job_name: no entry would count.
-#}
{% macro goodput_log_name_run_name(column) -%}
    {%- set nested = ["substr(" ~ column ~ ", strpos(" ~ column ~ ", '/logs/goodput_') + 14)"] -%}
    {%- for encoded, decoded in [('%2F', '/'), ('%2f', '/'), ('%2E', '.'), ('%2e', '.'), ('%5F', '_'), ('%5f', '_'),
                                  ('%2D', '-'), ('%2d', '-')] -%}
      {%- do nested.append("replace(" ~ nested[-1] ~ ", '" ~ encoded ~ "', '" ~ decoded ~ "')") -%}
    {%- endfor -%}
    {{ nested[-1] }}
{%- endmacro %}


{% macro default__goodput_log_sink_entries(relation) -%}
  {{ exceptions.raise_compiler_error("goodput_source log_sink reads a Cloud Logging -> BigQuery sink: use the bigquery target") }}
{%- endmacro %}

{% macro bigquery__goodput_log_sink_entries(relation) -%}
    select
        logName as log_name,
        {{ goodput_log_name_run_name('logName') }} as run_name,
        insertId as insert_id,
        `timestamp`,
        receiveTimestamp as receive_timestamp,
        severity,
        to_json(jsonPayload) as payload,
        coalesce(
            json_value(to_json(jsonPayload), '$.job_name') = {{ goodput_log_name_run_name('logName') }},
            false
        ) as job_name_matches,
        'log_sink' as source,
        coalesce(receiveTimestamp, `timestamp`) as loaded_at
    from {{ relation }}
    where strpos(logName, '/logs/goodput_') > 0
    qualify row_number() over (partition by logName, `timestamp`, insertId order by receiveTimestamp) = 1
{%- endmacro %}


{% macro default__goodput_log_analytics_entries(relation) -%}
  {{ exceptions.raise_compiler_error("goodput_source log_analytics reads a Log Analytics linked dataset: use the bigquery target") }}
{%- endmacro %}

{% macro bigquery__goodput_log_analytics_entries(relation) -%}
    select
        log_name,
        {{ goodput_log_name_run_name('log_name') }} as run_name,
        insert_id,
        `timestamp`,
        receive_timestamp,
        severity,
        json_payload as payload,
        coalesce(json_value(json_payload, '$.job_name') = {{ goodput_log_name_run_name('log_name') }}, false)
            as job_name_matches,
        'log_analytics' as source,
        coalesce(receive_timestamp, `timestamp`) as loaded_at
    from {{ relation }}
    where strpos(log_name, '/logs/goodput_') > 0
        and json_payload is not null
    qualify row_number() over (partition by log_name, `timestamp`, insert_id order by receive_timestamp) = 1
{%- endmacro %}
