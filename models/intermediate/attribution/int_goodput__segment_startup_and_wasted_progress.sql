{{ config(**goodput_incremental_by_run('new_entries')) }}
{{ goodput_check_incremental_state() }}
{#
  One row per (run, segment): the library's per-segment productive time,
  PROGRAM_STARTUP (first-step excess over the mean of the segment's other
  steps) and WASTED_PROGRESS_FROM_DISRUPTION, plus the facts the run totals and
  the disruption mart need (last step entry, largest step and its start).
#}

with

entries as (

    select * from {{ ref('int_goodput__entries_segmented') }}
    where {{ goodput_run_is_rebuilt(keyed=true) }}
        and step_start_epoch is not null

),

intervals as (

    select * from {{ ref('int_goodput__step_productive_time') }}
    where {{ goodput_run_is_rebuilt(keyed=true) }}

),

restarts as (

    select * from {{ ref('int_goodput__segments') }}
    where {{ goodput_run_is_rebuilt() }}

),

segment_steps as (

    select
        run_id,
        segment_no,
        count(*) as step_entries,
        max(step_count) as max_step,
        max_by(step_start_epoch, step_count) as max_step_start_epoch,
        max_by(step_count, event_seq) as last_entry_step,
        max_by(step_start_epoch, event_seq) as last_entry_start_epoch
    from entries
    group by run_id, segment_no

),

interval_totals as (

    select
        run_id,
        segment_no,
        sum(case when interval_class = 'productive' then 1 else 0 end) as productive_intervals,
        sum(case when interval_class = 'productive' and not is_first_step then 1 else 0 end)
            as later_productive_intervals,
        sum(adjusted_seconds) as adjusted_seconds,
        sum(case when interval_class = 'productive' and is_first_step then adjusted_seconds else 0 end)
            as first_step_seconds,
        sum(case when interval_class = 'wasted' then raw_seconds else 0 end) as wasted_seconds
    from intervals
    group by run_id, segment_no

),

last_productive as (

    select
        run_id,
        segment_no,
        max_by(interval_step, event_seq) as max_productive_step
    from intervals
    where interval_class = 'productive'
    group by run_id, segment_no

),

joined as (

    select
        restarts.run_id,
        restarts.segment_no,
        restarts.segment_start_seq,
        restarts.segment_end_seq,
        restarts.segment_end_seq is null as is_final_segment,
        segment_steps.step_entries,
        segment_steps.max_step,
        segment_steps.max_step_start_epoch,
        segment_steps.last_entry_step,
        segment_steps.last_entry_start_epoch,
        coalesce(interval_totals.productive_intervals, 0) as productive_intervals,
        coalesce(interval_totals.later_productive_intervals, 0) as later_productive_intervals,
        coalesce(interval_totals.adjusted_seconds, 0) as adjusted_seconds,
        coalesce(interval_totals.first_step_seconds, 0) as first_step_seconds,
        coalesce(interval_totals.wasted_seconds, 0) as wasted_seconds,
        coalesce(last_productive.max_productive_step, 0) as max_productive_step
    from restarts
    inner join segment_steps
        on segment_steps.run_id = restarts.run_id
        and segment_steps.segment_no = restarts.segment_no
    left join interval_totals
        on interval_totals.run_id = restarts.run_id
        and interval_totals.segment_no = restarts.segment_no
    left join last_productive
        on last_productive.run_id = restarts.run_id
        and last_productive.segment_no = restarts.segment_no

),

final as (

    select
        joined.*,
        case
            when later_productive_intervals > 0
                then greatest(
                    0,
                    first_step_seconds - (adjusted_seconds - first_step_seconds) / later_productive_intervals
                )
            else 0
        end as program_startup_seconds
    from joined

)

select
    final.*,
    adjusted_seconds - program_startup_seconds as productive_seconds
from final
