{{ config(**goodput_incremental_by_run('evaluated')) }}
{{ goodput_check_incremental_state() }}
{#
  One row per (run, window size) over the window ending at the run's end (job
  end, or the evaluation time of a running job): what the library's monitor
  reports as interval Goodput for each window size, computed from the same
  attribution as fct_goodput_cumulative (see docs/semantics.md for where the
  library's own interval computation differs). Elastic runs also get both
  slice efficiencies over the window's elapsed time, null for other runs.
#}

with

latest_values as (

    select * from {{ ref('int_goodput__latest_window_values') }}
    where {{ goodput_run_is_rebuilt() }}

),

badput_types as (

    select * from {{ ref('badput_types') }}

),

totals as (

    select * from {{ ref('int_goodput__run_totals') }}
    where {{ goodput_run_is_rebuilt() }}

),

per_window as (

    {{ goodput_window_totals('latest_values', 'badput_types') }}

),

slice_counts as (

    {{ goodput_slice_count_records(ref('int_goodput__entries_ordered')) }}
        and {{ goodput_run_is_rebuilt() }}

),

slice_efficiency as (

    -- each window over the job time it holds (elastic runs only)
    {{ goodput_window_slice_efficiency('slice_counts', 'latest_values', keys=['run_id', 'window_seconds']) }}

)

select
    per_window.run_id,
    totals.project_id,
    totals.run_name,
    per_window.window_seconds,
    per_window.window_start_at,
    per_window.window_end_at,
    per_window.elapsed_seconds,
    per_window.productive_seconds,
    per_window.goodput_pct,
    per_window.badput_seconds,
    totals.max_productive_step,
    per_window.disruptions,
    slice_efficiency.stepping_slice_efficiency,
    slice_efficiency.available_slice_efficiency,
    slice_efficiency.stepping_slice_efficiency_observed,
    slice_efficiency.available_slice_efficiency_observed,
    totals.last_job_end_epoch is null as is_running
from per_window
inner join totals
    on totals.run_id = per_window.run_id
left join slice_efficiency
    on slice_efficiency.run_id = per_window.run_id
    and slice_efficiency.window_seconds = per_window.window_seconds
