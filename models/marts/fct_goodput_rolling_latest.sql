{#
  One row per (run, window size) over the window ending at the run's end (job
  end, or the evaluation time of a running job): what the library's monitor
  reports as interval Goodput for each window size, computed from the same
  attribution as fct_goodput_cumulative (see the README for where the
  library's own interval computation differs).
#}

with

latest_values as (

    select * from {{ ref('int_goodput__latest_window_values') }}

),

totals as (

    select * from {{ ref('int_goodput__run_totals') }}

),

per_window as (

    {{ goodput_window_totals('latest_values') }}

),

final as (

    select
        per_window.run_name,
        per_window.window_seconds,
        {{ goodput_epoch_to_timestamp('per_window.window_start_epoch') }} as window_start_at,
        {{ goodput_epoch_to_timestamp('per_window.window_end_epoch') }} as window_end_at,
        per_window.elapsed_seconds,
        per_window.productive_seconds,
        case
            when per_window.elapsed_seconds > 0
                then per_window.productive_seconds / per_window.elapsed_seconds * 100
        end as goodput_pct,
        per_window.badput_seconds,
        totals.max_productive_step,
        per_window.disruptions,
        totals.last_job_end_epoch is null as is_running
    from per_window
    inner join totals
        on totals.run_name = per_window.run_name

)

select
    run_name,
    window_seconds,
    window_start_at,
    window_end_at,
    elapsed_seconds,
    productive_seconds,
    goodput_pct,
    badput_seconds,
    max_productive_step,
    disruptions,
    is_running
from final
