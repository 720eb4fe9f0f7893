{{ config(**goodput_incremental_by_run('evaluated')) }}
{{ goodput_check_incremental_state() }}
{#
  One row per (run, window size, Badput bucket, custom event type or null)
  over the window ending at the run's end (job end or evaluation time): the
  interval Badput the library's monitor reports for each window size.
#}

with

latest_values as (

    select * from {{ ref('int_goodput__latest_window_values') }}
    where {{ goodput_run_is_rebuilt() }}

),

badput_types as (

    select * from {{ ref('badput_types') }}

),

buckets as (

    select * from {{ ref('int_goodput__badput_buckets') }}
    where {{ goodput_run_is_rebuilt() }}

),

runs as (

    select run_id, project_id, run_name from {{ ref('int_goodput__run_totals') }}
    where {{ goodput_run_is_rebuilt() }}

),

window_buckets as (

    {{ goodput_window_buckets('latest_values', 'badput_types', buckets='buckets') }}

)

select
    window_buckets.run_id,
    runs.project_id,
    runs.run_name,
    window_buckets.window_seconds,
    window_start_at,
    window_end_at,
    elapsed_seconds,
    badput_type,
    custom_badput_event_type,
    gcm_badput_source,
    badput_type_id,
    counts_against_goodput,
    exported_to_gcm,
    badput_seconds,
    badput_pct
from window_buckets
inner join runs
    on runs.run_id = window_buckets.run_id
