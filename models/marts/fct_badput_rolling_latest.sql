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

),

final as (

    select
        run_name,
        window_seconds,
        {{ goodput_epoch_to_timestamp('window_start_epoch') }} as window_start_at,
        {{ goodput_epoch_to_timestamp('window_end_epoch') }} as window_end_at,
        elapsed_seconds,
        badput_type,
        custom_badput_event_type,
        badput_seconds,
        case when elapsed_seconds > 0 then badput_seconds / elapsed_seconds * 100 end as badput_pct
    from window_buckets

)

select
    run_name,
    window_seconds,
    window_start_at,
    window_end_at,
    elapsed_seconds,
    badput_type,
    custom_badput_event_type,
    badput_seconds,
    badput_pct
from final
