{#
  Interval Goodput as the library computes it (semantics 'library').

  GoodputCalculator.get_job_goodput_interval(start, end) does not look up the
  job's attribution: it reruns its whole computation over the entries of the
  window alone (entry time > start and <= end, the entry time being the
  payload's first key containing "time", goodput_payload_time), and divides by
  min(end, last entry) - max(start, first entry). A window opening after a
  restart sees no restart; a step whose next step lies outside the window is
  not productive; a rollback after the window changes nothing in it.

  The warehouse gets the same numbers by running the same per-run models over
  the window's entries: var goodput_library_windows lists the windows
  ([{run, start, end}, ...]; run a run_id or a run name), goodput_landed_entries()
  then hands staging each window's entries as a run of its own (project
  '<project>@w<n>', n the window's position), and int_goodput__run_totals
  takes the window's total. goodput-loader does this in a scratch warehouse
  (target duckdb_library_windows: a separate file, the warehouse attached read
  only; see goodput_loader/library_windows.py), so the warehouse's own tables,
  incremental state and build watermark are never touched:

      dbt build --target duckdb_library_windows --select +int_goodput__badput_buckets \
          --exclude-resource-type test unit_test --full-refresh \
          --vars '{goodput_raw_database: warehouse, goodput_library_windows: [{run: my-run, start: "...", end: "..."}]}'
      dbt show --target duckdb_library_windows --vars '<the same>' \
          --inline "{{ goodput_interval('my-run', '...', '...', semantics='library') }}"

  The windows may also be a file: `--vars '{goodput_library_windows: {file:
  /abs/path/windows.json}}'`, a JSON array of the same objects, read when the
  build runs (DuckDB; goodput_library_window_file_rows). goodput-loader does
  that: the file's path stays the same from one window build of a warehouse
  to the next, so the vars do and dbt's parse of the project stays warm (a
  change of --vars makes dbt parse the whole project again, 3.4 s a push).

  Cost: one build of the attribution models over the windows' entries, about
  what building those entries costs (a window holding a whole long run costs
  that run's build), so the rolling history stays additive (docs/semantics.md).
#}

{#- The file of windows var goodput_library_windows names ({file: path}), or none: the var lists them. -#}
{% macro goodput_library_windows_file() -%}
  {%- set listed = var('goodput_library_windows', none) -%}
  {{ return(listed['file'] | string if listed is mapping and listed.get('file') else none) }}
{%- endmacro %}

{#- The windows the var lists, as [{run, start, end, read_by, elastic}] (ISO 8601 strings). -#}
{% macro goodput_library_windows() -%}
  {%- if goodput_library_windows_file() is not none -%}
    {{ return([]) }}
  {%- endif -%}
  {{ return(goodput_library_window_list(var('goodput_library_windows', none) or [])) }}
{%- endmacro %}

{#- windows ([{run, start, end, ...}] or [[run, start, end]]) checked and filled in. -#}
{% macro goodput_library_window_list(windows) -%}
  {%- if windows is string or windows is mapping -%}
    {{ exceptions.raise_compiler_error("var goodput_library_windows is a list of windows ([{run, start, end}, ...]) "
        ~ "or {file: <path of a JSON array of them>}; it is " ~ windows) }}
  {%- endif -%}
  {%- set out = [] -%}
  {%- for window in windows -%}
    {%- if window is mapping -%}
      {%- do out.append({'run': window['run'] | string, 'start': window['start'] | string, 'end': window['end'] | string,
                         'read_by': window.get('read_by', 'timestamp') | string,
                         'elastic': window.get('elastic', none)}) -%}
    {%- else -%}
      {%- do out.append({'run': window[0] | string, 'start': window[1] | string, 'end': window[2] | string,
                         'read_by': 'timestamp', 'elastic': none}) -%}
    {%- endif -%}
    {%- if out[-1]['read_by'] not in ('timestamp', 'payload') -%}
      {{ exceptions.raise_compiler_error("a library window's read_by is timestamp or payload, not " ~ out[-1]['read_by']) }}
    {%- endif -%}
  {%- endfor -%}
  {{ return(out) }}
{%- endmacro %}

{% macro goodput_library_window_mode() -%}
  {{ return(goodput_library_windows_file() is not none or goodput_library_windows() | length > 0) }}
{%- endmacro %}

{#- The windows as rows: window_no, window_run, start_epoch, end_epoch, start_us, end_us, read_by_timestamp,
    is_elastic_run (the run's calculator is ElasticGoodputCalculator: true, false, or null to tell by the
    window's own entries). -#}
{% macro goodput_library_window_rows() -%}
  {%- if goodput_library_windows_file() is not none %}
    {{ goodput_library_window_file_rows(goodput_library_windows_file()) }}
  {%- else -%}
    {{ goodput_library_window_literals(goodput_library_windows()) }}
  {%- endif -%}
{%- endmacro %}

{% macro goodput_library_window_literals(windows) -%}
  {%- for window in windows %}
    select
        {{ loop.index0 }} as window_no,
        {{ goodput_string_literal(window['run']) }} as window_run,
        {{ goodput_iso_to_epoch(window['start']) }} as start_epoch,
        {{ goodput_iso_to_epoch(window['end']) }} as end_epoch,
        {{ goodput_iso_to_epoch_us(window['start']) }} as start_us,
        {{ goodput_iso_to_epoch_us(window['end']) }} as end_us,
        {{ 'true' if window['read_by'] == 'timestamp' else 'false' }} as read_by_timestamp,
        {{ 'cast(null as ' ~ dbt.type_boolean() ~ ')' if window['elastic'] is none
           else ('true' if window['elastic'] else 'false') }} as is_elastic_run
    {{ "union all" if not loop.last }}
  {%- endfor %}
{%- endmacro %}

{#-
  The windows of the file at path (a JSON array of {run, start, end, read_by,
  elastic}, as the var would list them), read when the build runs, as the
  rows goodput_library_window_literals writes: the same conversions, applied
  to the file's strings instead of literals. A read_by other than timestamp
  or payload fails the build.
-#}
{% macro goodput_library_window_file_rows(path) -%}
  {{ return(adapter.dispatch('goodput_library_window_file_rows', 'goodput_warehouse')(path)) }}
{%- endmacro %}

{% macro default__goodput_library_window_file_rows(path) -%}
    {%- set file = goodput_string_literal(path) %}
    select
        window_no,
        window_run,
        ({{ goodput_iso_text_to_epoch_us('start_text') }} / 1000000.0) as start_epoch,
        ({{ goodput_iso_text_to_epoch_us('end_text') }} / 1000000.0) as end_epoch,
        {{ goodput_iso_text_to_epoch_us('start_text') }} as start_us,
        {{ goodput_iso_text_to_epoch_us('end_text') }} as end_us,
        case read_by
            when 'timestamp' then true
            when 'payload' then false
            else error('window ' || window_no || ' of ' || {{ file }} || ': read_by is timestamp or payload, not '
                       || read_by)
        end as read_by_timestamp,
        is_elastic_run
    from (
        select
            cast(position - 1 as integer) as window_no,
            {%- for key in ['run', 'start', 'end'] %}
            coalesce(windows[position] ->> '$.{{ key }}',
                     error('window ' || (position - 1) || ' of ' || {{ file }} || ' has no {{ key }}'))
                as {{ 'window_run' if key == 'run' else key ~ '_text' }},
            {%- endfor %}
            coalesce(windows[position] ->> '$.read_by', 'timestamp') as read_by,
            cast(windows[position] -> '$.elastic' as boolean) as is_elastic_run
        from (
            select cast(content as json) -> '$[*]' as windows
            from read_text({{ file }})
        ) as listed,
            range(1, len(listed.windows) + 1) as positions (position)
    ) as windows
{%- endmacro %}

{% macro bigquery__goodput_library_window_file_rows(path) -%}
  {{ exceptions.raise_compiler_error("a file of library windows (var goodput_library_windows: {file: ...}) is read by "
      ~ "DuckDB; on BigQuery list the windows in the var") }}
{%- endmacro %}


{#-
  The entries of every window, each window's as a run of its own: `landed`
  is the select of landed entries (raw contract columns). An entry is in a
  window when its time (goodput_payload_time) is after the start, to the
  microsecond as the library's datetime is (its in-memory filter), and:
  - read_by 'timestamp' (get_job_goodput_interval(start, end), the default):
    its LogEntry timestamp is in (start, end], Cloud Logging's filter on the
    library's read. An Orbax record is logged when the checkpoint is done, so
    a window ending during the checkpoint holds its step but not its record;
  - read_by 'payload' (push's live window: the monitor polling at `end`,
    when everything before it has been logged): its time is not after end.
-#}
{% macro goodput_library_window_entries(landed) -%}
    select
        replace(landed.log_name, '/logs/', '@w' || cast(windows.window_no as {{ dbt.type_string() }}) || '/logs/')
            as log_name,
        landed.run_name,
        landed.insert_id,
        landed.{{ adapter.quote('timestamp') }},
        landed.receive_timestamp,
        landed.severity,
        landed.payload,
        landed.job_name_matches,
        landed.source,
        landed.loaded_at
    from (
        {#- the windows' runs first: their time is in the payload, and parsing it is most of the cost #}
        select
            *,
            {{ goodput_payload_time('payload') }} as payload_time_epoch,
            {{ goodput_timestamp_to_epoch_us(adapter.quote('timestamp')) }} as logged_us
        from ({{ landed }}) as all_landed
        where all_landed.run_name in (select window_run from ({{ goodput_library_window_rows() }}) as runs)
            or {{ dbt.split_part('all_landed.log_name', "'/'", 2) }} || '/' || all_landed.run_name
                in (select window_run from ({{ goodput_library_window_rows() }}) as runs)
    ) as landed
    inner join ({{ goodput_library_window_rows() }}) as windows
        on (
            windows.window_run = landed.run_name
            or windows.window_run = {{ dbt.split_part('landed.log_name', "'/'", 2) }} || '/' || landed.run_name
        )
        and landed.payload_time_epoch > windows.start_epoch
        and {{ goodput_epoch_to_microseconds('landed.payload_time_epoch') }} > windows.start_epoch
        and (
            (
                windows.read_by_timestamp
                and landed.logged_us > windows.start_us
                and landed.logged_us <= windows.end_us
            )
            or (not windows.read_by_timestamp and landed.payload_time_epoch <= windows.end_epoch)
        )
{%- endmacro %}


{#-
  The time the library reads from an entry (goodput_utils.get_timestamp_from_log_entry):
  the value of the payload's first key containing "time", in the payload's key order.
  DuckDB keeps the JSON text as written, key order included. BigQuery's JSON
  type does not keep key order, so there the recorder's and Orbax's time keys
  are tried in the order they write them (each recorder entry has one; an
  Orbax record's first is its wait_for_prev / checkpointer start).
-#}
{% macro goodput_payload_time(payload) -%}
  {{ return(adapter.dispatch('goodput_payload_time', 'goodput_warehouse')(payload)) }}
{%- endmacro %}

{% macro default__goodput_payload_time(payload) -%}
  try_cast(json_extract_string(
      {{ payload }},
      '$."' || list_filter(json_keys({{ payload }}), k -> contains(k, 'time'))[1] || '"'
  ) as double)
{%- endmacro %}

{% macro bigquery__goodput_payload_time(payload) -%}
  coalesce(
    {%- for key in ['job_start_time', 'job_end_time', 'step_start_time', 'tpu_init_start_time', 'tpu_init_end_time',
                    'training_prep_start_time', 'training_prep_end_time', 'data_loading_start_time',
                    'data_loading_end_time', 'custom_badput_event_start_time', 'custom_badput_event_end_time',
                    'wait_for_prev_start_time', 'checkpointer_blocking_start_time', 'get_old_steps_start_time',
                    'checkpoint_manager_blocking_start_time', 'checkpointer_start_time',
                    'checkpoint_manager_start_time', 'elastic_slice_counts_timestamp', 'elastic_wait_start_time',
                    'elastic_wait_end_time', 'elastic_reinit_start_time', 'elastic_reinit_end_time'] %}
      lax_float64(json_query({{ payload }}, '$.{{ key }}')){{ "," if not loop.last }}
    {%- endfor %}
  )
{%- endmacro %}


{#-
  Every window's result, one row per measure (as goodput_interval's), from
  the window build's int_goodput__run_totals and int_goodput__badput_buckets.
  A window with no entries has one row, its invalid_reason the library's.
  invalid_reason is what get_job_goodput_interval raises with (its monitor
  then sends nothing for the window). Its breakdown holds every bucket of the
  catalogue and the custom event types inside the window's productive steps:
  the rows here, each pct as it computes it (0 unless strictly between 0 and
  the total). Elastic runs' windows (ElasticGoodputCalculator) also hold the
  three elastic buckets, and every row the window's slice efficiencies (null
  without a slice-count entry in the window, as the library then has none).
-#}
{% macro goodput_library_window_results() -%}
  {%- if not goodput_library_window_mode() -%}
    {{ exceptions.raise_compiler_error(
        "semantics 'library' needs a window build: var goodput_library_windows lists the windows "
        ~ "(goodput-loader interval --semantics library does it for you; see macros/library_windows/library_windows.sql)") }}
  {%- endif -%}
with

windows as (

    {{ goodput_library_window_rows() }}

),

totals as (

    select
        cast({{ dbt.split_part('project_id', "'@w'", 2) }} as {{ dbt.type_int() }}) as window_no,
        {{ dbt.split_part('project_id', "'@w'", 1) }} || '/' || run_name as run_id,
        run_id as window_run_id,
        implausible_entries,
        elapsed_origin_epoch,
        total_elapsed_seconds,
        productive_seconds,
        max_productive_step,
        disruptions
    from {{ ref('int_goodput__run_totals') }}

),

validity as (

    select
        windows.window_no,
        windows.window_run,
        windows.start_epoch,
        windows.end_epoch,
        totals.run_id,
        totals.window_run_id,
        totals.elapsed_origin_epoch,
        totals.total_elapsed_seconds,
        totals.productive_seconds,
        totals.max_productive_step,
        totals.disruptions,
        case
            when totals.window_run_id is null
                then 'No log entries found within the interval window.'
            when totals.implausible_entries > 0
                then 'the window holds entries whose values no model can use (see stg_goodput__events.implausible_reason)'
            when totals.total_elapsed_seconds <= 0
                then 'Start time is on or after end time, cannot compute total job time.'
            when totals.productive_seconds < 0 or totals.productive_seconds > totals.total_elapsed_seconds
                then 'Productive training time is invalid. Please fix the logging entries.'
        end as invalid_reason
    from windows
    left join totals
        on totals.window_no = windows.window_no

),

slice_counts as (

    {{ goodput_slice_count_records(ref('int_goodput__entries_ordered')) }}

),

window_spans as (

    select window_run_id as run_id, start_epoch, end_epoch
    from validity
    where window_run_id is not null

),

slice_efficiency as (

    -- ElasticGoodputCalculator.get_interval_metric_details: over the requested [start, end]
    {{ goodput_slice_efficiency('slice_counts', 'window_spans') }}

),

measures as (

    select
        window_run_id,
        badput_type as measure,
        custom_badput_event_type,
        badput_type_id,
        counts_against_goodput,
        exported_to_gcm,
        gcm_badput_source,
        badput_seconds as seconds,
        -- _get_job_badput_breakdown: a share only strictly between 0 and the total, else 0.0
        {{ goodput_badput_share('badput_seconds', 'total_elapsed_seconds') }} as pct
    from (
        select *, run_id as window_run_id from {{ ref('int_goodput__badput_buckets') }}
    ) as buckets

    union all

    select
        window_run_id,
        'PRODUCTIVE' as measure,
        cast(null as {{ dbt.type_string() }}) as custom_badput_event_type,
        cast(null as {{ dbt.type_int() }}) as badput_type_id,
        cast(null as {{ dbt.type_boolean() }}) as counts_against_goodput,
        cast(null as {{ dbt.type_boolean() }}) as exported_to_gcm,
        cast(null as {{ dbt.type_string() }}) as gcm_badput_source,
        productive_seconds as seconds,
        productive_seconds / nullif(total_elapsed_seconds, 0) * 100 as pct
    from validity
    where window_run_id is not null

    union all

    select
        window_run_id,
        'DISRUPTIONS' as measure,
        cast(null as {{ dbt.type_string() }}) as custom_badput_event_type,
        cast(null as {{ dbt.type_int() }}) as badput_type_id,
        cast(null as {{ dbt.type_boolean() }}) as counts_against_goodput,
        cast(null as {{ dbt.type_boolean() }}) as exported_to_gcm,
        cast(null as {{ dbt.type_string() }}) as gcm_badput_source,
        cast(disruptions as {{ dbt.type_float() }}) as seconds,
        cast(null as {{ dbt.type_float() }}) as pct
    from validity
    where window_run_id is not null

)

select
    validity.window_no,
    validity.window_run,
    {{ goodput_epoch_to_timestamp('validity.start_epoch') }} as requested_start_at,
    {{ goodput_epoch_to_timestamp('validity.end_epoch') }} as requested_end_at,
    validity.run_id,
    validity.invalid_reason,
    {{ goodput_epoch_to_timestamp('validity.elapsed_origin_epoch') }} as counted_from_at,
    {{ goodput_epoch_to_timestamp('validity.elapsed_origin_epoch + validity.total_elapsed_seconds') }}
        as counted_until_at,
    validity.total_elapsed_seconds as elapsed_seconds,
    validity.max_productive_step,
    measures.measure,
    measures.custom_badput_event_type,
    measures.badput_type_id,
    measures.counts_against_goodput,
    measures.exported_to_gcm,
    measures.gcm_badput_source,
    measures.seconds,
    case when validity.invalid_reason is null then measures.pct end as pct,
    slice_efficiency.stepping_slice_efficiency,
    slice_efficiency.available_slice_efficiency
from validity
left join measures
    on measures.window_run_id = validity.window_run_id
left join slice_efficiency
    on slice_efficiency.run_id = validity.window_run_id
{%- endmacro %}


{#- goodput_interval(..., semantics='library'): the rows of the window the build lists as (run, start, end). -#}
{% macro goodput_library_interval(run, start_at, end_at) -%}
  {%- set ns = namespace(window_no=none) -%}
  {%- for window in goodput_library_windows() -%}
    {%- if ns.window_no is none and window['run'] == run and window['start'] == start_at and window['end'] == end_at -%}
      {%- set ns.window_no = loop.index0 -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if ns.window_no is none and goodput_library_windows_file() is none -%}
    {{ exceptions.raise_compiler_error(
        "goodput_interval(" ~ run ~ ", " ~ start_at ~ ", " ~ end_at ~ ", semantics='library'): this window is not one "
        ~ "var goodput_library_windows lists, so no window build computed it; list it there and build "
        ~ "(macros/library_windows/library_windows.sql)") }}
  {%- endif -%}
select
    run_id,
    invalid_reason,
    counted_from_at,
    counted_until_at,
    elapsed_seconds,
    measure,
    custom_badput_event_type,
    badput_type_id,
    counts_against_goodput,
    seconds,
    pct
from ({{ goodput_library_window_results() }}) as library_windows
{%- if ns.window_no is not none %}
where window_no = {{ ns.window_no }}
{%- else %}
-- the file's windows: the first that is this one (none: no window build computed it, no rows)
where window_no = (
    select min(window_no)
    from ({{ goodput_library_window_rows() }}) as windows
    where window_run = {{ goodput_string_literal(run) }}
        and start_us = {{ goodput_iso_to_epoch_us(start_at) }}
        and end_us = {{ goodput_iso_to_epoch_us(end_at) }}
)
{%- endif %}
{%- endmacro %}


{#-
  run-operation after a window build on BigQuery (goodput_loader/library_windows.py):
  drop the scratch dataset the build wrote into, the target's dataset. The
  dataset must end in `suffix`, the random name the scratch profile gave it, so
  this never drops a dataset it did not create.
-#}
{% macro goodput_drop_window_build(suffix) -%}
  {%- if not suffix or not target.schema.endswith(suffix) -%}
    {{ exceptions.raise_compiler_error("goodput_drop_window_build drops only a window build's scratch dataset, named "
        ~ "<dataset>" ~ suffix ~ "; this target's is " ~ target.schema) }}
  {%- endif -%}
  {%- do adapter.drop_schema(api.Relation.create(database=target.database, schema=target.schema)) -%}
{%- endmacro %}
