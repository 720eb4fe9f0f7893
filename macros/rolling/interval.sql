{#
  Goodput of one run over an arbitrary interval [start_at, end_at] (ISO 8601),
  from the same located attribution as the rolling marts: one row per measure
  (PRODUCTIVE, DISRUPTIONS, every Badput bucket of the run, OTHER), with the
  interval as counted (cut at the job start and at the job end or evaluation
  time) and each measure's share of its elapsed seconds; for an elastic run
  both slice efficiencies over that counted interval (null for other runs).

      dbt show --inline "{{ goodput_interval('my-run', '2026-12-01T00:00:00Z', '2026-12-01T06:00:00Z') }}"
      goodput-loader interval --run my-run --start 2026-12-01T00:00Z --end 2026-12-01T06:00Z

  run: a run_id (`<project_id>/<run_name>`, that run alone) or a run name; a
  name used in several projects gives one set of rows per run (told apart by run_id).

  Cost: one sweep over the run's curve breakpoints.

  semantics: 'additive' (the above) or 'library', what the library's
  get_job_goodput_interval returns for the window, which needs a window build
  listing it in var goodput_library_windows (macros/library_windows); the
  rows then also say why the library raises (invalid_reason), if it does.
#}

{% macro goodput_interval(run, start_at, end_at, semantics='additive') -%}
{%- if semantics == 'library' -%}
  {{ return(goodput_library_interval(run, start_at, end_at)) }}
{%- elif semantics != 'additive' -%}
  {{ exceptions.raise_compiler_error("goodput_interval: semantics is " ~ semantics ~ "; expected additive or library") }}
{%- endif %}

with

requested as (

    select
        run_id,
        -- why the library raises for this run (`goodput-loader interval` refuses it then), else null
        invalid_reason,
        {{ goodput_iso_to_epoch(start_at) }} as start_epoch,
        {{ goodput_iso_to_epoch(end_at) }} as end_epoch
    from {{ ref('fct_goodput_cumulative') }}
    -- a run_id names that run alone; otherwise every run of that name
    where run_id = {{ goodput_string_literal(run) }}
        or (
            run_name = {{ goodput_string_literal(run) }}
            and not exists (
                select 1 from {{ ref('fct_goodput_cumulative') }} where run_id = {{ goodput_string_literal(run) }}
            )
        )

),

interval_window as (

    select
        run_id,
        end_epoch - start_epoch as window_seconds,
        end_epoch as window_end_epoch
    from requested
    where end_epoch > start_epoch

),

interval_bounds as (

    {{ goodput_window_bounds('interval_window', ref('int_goodput__run_totals')) }}

),

interval_points as (

    {{ goodput_window_points('interval_bounds') }}

),

interval_at_points as (

    {{ goodput_measures_at('interval_points', ref('int_goodput__timeline_curves'), method='lookup') }}

),

interval_amounts as (

    {{ goodput_window_amounts('interval_bounds', 'interval_at_points') }}

),

interval_values as (

    select
        interval_amounts.*,
        interval_bounds.elapsed_origin_epoch,
        interval_bounds.start_offset,
        interval_bounds.end_offset
    from interval_amounts
    inner join interval_bounds
        on interval_bounds.run_id = interval_amounts.run_id

),

interval_buckets as (

    {{ goodput_window_buckets('interval_values', ref('badput_types'), buckets=ref('int_goodput__badput_buckets')) }}

),

interval_totals as (

    {{ goodput_window_totals('interval_values', ref('badput_types')) }}

),

interval_slice_counts as (

    {{ goodput_slice_count_records(ref('int_goodput__entries_ordered')) }}
        and run_id in (select run_id from requested)

),

interval_spans as (

    select
        run_id,
        elapsed_origin_epoch + start_offset as start_epoch,
        elapsed_origin_epoch + end_offset as end_epoch
    from interval_bounds
    where run_id in (select run_id from interval_slice_counts)

),

interval_slice_efficiency as (

    {{ goodput_slice_efficiency('interval_slice_counts', 'interval_spans') }}

),

measures as (

    select
        run_id,
        window_start_at,
        counted_until_at,
        elapsed_seconds,
        badput_type as measure,
        custom_badput_event_type,
        badput_type_id,
        counts_against_goodput,
        badput_seconds as seconds,
        badput_pct as pct
    from interval_buckets

    union all

    select
        run_id,
        window_start_at,
        counted_until_at,
        elapsed_seconds,
        'PRODUCTIVE' as measure,
        cast(null as {{ dbt.type_string() }}) as custom_badput_event_type,
        cast(null as {{ dbt.type_int() }}) as badput_type_id,
        cast(null as {{ dbt.type_boolean() }}) as counts_against_goodput,
        productive_seconds as seconds,
        goodput_pct as pct
    from interval_totals

    union all

    select
        run_id,
        window_start_at,
        counted_until_at,
        elapsed_seconds,
        'DISRUPTIONS' as measure,
        cast(null as {{ dbt.type_string() }}) as custom_badput_event_type,
        cast(null as {{ dbt.type_int() }}) as badput_type_id,
        cast(null as {{ dbt.type_boolean() }}) as counts_against_goodput,
        disruptions as seconds,
        null as pct
    from interval_totals

)

select
    measures.run_id,
    requested.invalid_reason,
    window_start_at as counted_from_at,
    counted_until_at,
    elapsed_seconds,
    measure,
    custom_badput_event_type,
    badput_type_id,
    counts_against_goodput,
    seconds,
    pct,
    interval_slice_efficiency.stepping_slice_efficiency,
    interval_slice_efficiency.available_slice_efficiency
from measures
inner join requested
    on requested.run_id = measures.run_id
left join interval_slice_efficiency
    on interval_slice_efficiency.run_id = measures.run_id

{%- endmacro %}
