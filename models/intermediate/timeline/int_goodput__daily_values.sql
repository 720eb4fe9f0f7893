{{ config(**goodput_incremental_by_run('evaluated', keyed=true)) }}
{{ goodput_check_incremental_state() }}
{#
  Every measure of every run over each UTC day it ran: windows of 86,400 s
  ending at each midnight after the job start, the last at or after the run's
  end (job end, or the evaluation time of a running job). As every window, a
  day counts from the later of its start and the job start to the earlier of
  its end and the run's end, so a run's days partition it and add up to its
  cumulative numbers.

  The curves are read at midnights only, so the sweep reads each measure's
  last breakpoint of each day (goodput_last_breakpoints_per_step), not every
  breakpoint of the run (at L, 4.4M: their sort took 1.4 of the model's 1.5 s).
#}

{% set day = 86400 %}

with

totals as (

    select * from {{ ref('int_goodput__run_totals') }}
    where {{ goodput_run_is_rebuilt() }}
        and total_elapsed_seconds > 0

),

curves as {{ goodput_cte_read_in_place() }} (

    select * from {{ ref('int_goodput__timeline_curves') }}
    where {{ goodput_run_is_rebuilt(keyed=true) }}

),

{#- only each measure's last breakpoint of each day can be read at a midnight -#}
day_curves as (

    {{ goodput_last_breakpoints_per_step('curves', 'totals', day) }}

),

days as (

    select
        totals.run_id,
        {{ day }} as window_seconds,
        day_end_epoch as window_end_epoch
    from totals
    {{ goodput_join_series(
        'cast(floor(totals.elapsed_origin_epoch / ' ~ day ~ ') as ' ~ dbt.type_bigint() ~ ') * ' ~ day ~ ' + ' ~ day,
        'cast(ceil((totals.elapsed_origin_epoch + totals.total_elapsed_seconds) / ' ~ day ~ ') as '
            ~ dbt.type_bigint() ~ ') * ' ~ day,
        day, 'day_end_epoch') }}

),

day_bounds as (

    {{ goodput_window_bounds('days', 'totals') }}

),

day_points as (

    {{ goodput_window_points('day_bounds') }}

),

day_at_points as (

    {#- the first day starts at each run's origin -#}
    {{ goodput_measures_at('day_points', 'day_curves', method='sweep', points_cover_runs=true) }}

),

day_amounts as (

    {{ goodput_window_amounts('day_bounds', 'day_at_points') }}

),

final as (

    select
        day_amounts.run_id,
        day_amounts.window_seconds,
        day_amounts.window_end_epoch,
        day_bounds.start_offset,
        day_bounds.end_offset,
        day_bounds.elapsed_origin_epoch,
        day_amounts.measure,
        day_amounts.custom_badput_event_type,
        day_amounts.window_amount
    from day_amounts
    inner join day_bounds
        on day_bounds.run_id = day_amounts.run_id
        and day_bounds.window_end_epoch = day_amounts.window_end_epoch

)

{{ goodput_select_keyed_by_run('final') }}
