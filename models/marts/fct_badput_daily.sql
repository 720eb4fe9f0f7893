{{ config(**goodput_incremental_by_run('evaluated')) }}
{{ goodput_check_incremental_state() }}
{#
  One row per run, UTC day and Badput bucket of the run (every bucket, 0 on
  a day without it; custom events one row per type): the day's seconds and
  share of the day's elapsed time, with the catalogue's columns. A run's days
  add up to fct_badput_breakdown.
#}

with

daily_values as (

    select * from {{ ref('int_goodput__daily_values') }}
    where {{ goodput_run_is_rebuilt(keyed=true) }}

),

badput_types as (

    select * from {{ ref('badput_types') }}

),

buckets as (

    select * from {{ ref('int_goodput__badput_buckets') }}
    where {{ goodput_run_is_rebuilt() }}

),

totals as (

    select * from {{ ref('int_goodput__run_totals') }}
    where {{ goodput_run_is_rebuilt() }}

),

per_bucket as (

    {{ goodput_window_buckets('daily_values', 'badput_types', buckets='buckets') }}

)

select
    per_bucket.run_id,
    totals.project_id,
    totals.run_name,
    {{ goodput_epoch_to_date('per_bucket.window_end_epoch - per_bucket.window_seconds') }} as day,
    per_bucket.badput_type,
    per_bucket.custom_badput_event_type,
    per_bucket.gcm_badput_source,
    per_bucket.badput_type_id,
    per_bucket.counts_against_goodput,
    per_bucket.badput_seconds,
    per_bucket.badput_pct,
    per_bucket.elapsed_seconds
from per_bucket
inner join totals
    on totals.run_id = per_bucket.run_id
{{ goodput_rows_by_run() }}
