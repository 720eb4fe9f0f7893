{#
  The step intervals of every run with exclusion windows, classified as
  get_job_goodput_with_exclusions walks them (_process_segment_with_exclusions),
  with the seconds of each inside the run's exclusion windows. Its classes are
  the main path's but for one rule: a segment restarted at step 0 is computed
  (productive: at or below the step the restart repeats and consecutive;
  wasted: above it; skipped: the rest), where the main path ignores it. Every
  interval's excluded seconds count in the excluded total, skipped ones too.
#}

with

windows as (

    select * from {{ ref('int_goodput__exclusion_windows') }}

),

step_intervals as (

    select
        intervals.run_id,
        intervals.segment_no,
        intervals.event_seq,
        intervals.interval_step,
        intervals.is_first_step,
        intervals.start_epoch,
        intervals.end_epoch,
        intervals.raw_seconds,
        case
            when intervals.next_step > intervals.bound_step then 'wasted'
            when intervals.next_step - 1 = intervals.interval_step then 'productive'
            else 'skipped'
        end as exclusion_class
    from {{ ref('int_goodput__step_intervals') }} as intervals
    where intervals.run_id in (select run_id from windows)

),

excluded as (

    {{ goodput_exclusion_overlap('step_intervals', ['event_seq'], 'windows') }}

),

final as (

    select
        step_intervals.*,
        excluded.excluded_seconds
    from step_intervals
    inner join excluded
        on excluded.run_id = step_intervals.run_id
        and excluded.event_seq = step_intervals.event_seq

)

select * from final
