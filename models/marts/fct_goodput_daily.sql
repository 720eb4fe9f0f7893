{{ config(**goodput_incremental_by_run('evaluated')) }}
{{ goodput_check_incremental_state() }}
{#
  One row per run and UTC day it ran: elapsed, productive and counted Badput
  seconds, Goodput % and disruptions of the day (int_goodput__daily_values: the
  cumulative attribution located in time, so a run's days add up to
  fct_goodput_cumulative). The run's last day is open while it runs: it grows
  at every build until the job ends.
#}

with

daily_values as (

    select * from {{ ref('int_goodput__daily_values') }}
    where {{ goodput_run_is_rebuilt(keyed=true) }}

),

badput_types as (

    select * from {{ ref('badput_types') }}

),

totals as (

    select * from {{ ref('int_goodput__run_totals') }}
    where {{ goodput_run_is_rebuilt() }}

),

per_day as (

    {{ goodput_window_totals('daily_values', 'badput_types') }}

)

select
    per_day.run_id,
    totals.project_id,
    totals.run_name,
    {{ goodput_epoch_to_date('per_day.window_end_epoch - per_day.window_seconds') }} as day,
    per_day.window_start_at as counted_from_at,
    per_day.counted_until_at,
    per_day.elapsed_seconds,
    per_day.productive_seconds,
    per_day.goodput_pct,
    per_day.badput_seconds,
    per_day.disruptions,
    per_day.is_partial and totals.last_job_end_epoch is null as is_open
from per_day
inner join totals
    on totals.run_id = per_day.run_id
{{ goodput_rows_by_run() }}
