{#
  One row per (run, window size, Badput bucket, custom event type or null)
  over the window ending at the run's end (job end or evaluation time): the
  interval Badput the library's monitor reports for each window size.
#}

with

latest_values as (

    select * from {{ ref('int_goodput__latest_window_values') }}

),

window_buckets as (

    {{ goodput_window_buckets('latest_values') }}

)

select
    run_name,
    window_seconds,
    window_start_at,
    window_end_at,
    elapsed_seconds,
    badput_type,
    custom_badput_event_type,
    badput_source,
    badput_seconds,
    badput_pct
from window_buckets
