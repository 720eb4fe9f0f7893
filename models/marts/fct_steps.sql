{{ config(materialized='view', goodput_tested_runs='new_entries') }}
{#
  One row per recorded step entry: its segment, start, the interval to the next
  step entry of the segment (the step's time), how the library counts it, and
  its deviation from the run's ideal step time.
  The last step entry of a segment has no interval: it is productive only once
  the job has ended (its time then runs to the job end, see fct_goodput_cumulative).
  A view over stored rows: the steps and their intervals keep the segments a
  restart closed, while the ideal step time moves with every new step, and
  with it every step's deviation. Joined here, a build writes neither again
  (on BigQuery int_goodput__step_entries is partitioned by step start, and a
  filter on step_start_at prunes through the view).
#}

with

steps as (

    select * from {{ ref('int_goodput__step_entries') }}

),

intervals as (

    select * from {{ ref('int_goodput__step_productive_time') }}

),

latest_timings as (

    select run_id, timed_from_seq from {{ ref('int_goodput__step_times') }}

),

run_deviations as (

    select run_id, ideal_step_seconds from {{ ref('int_goodput__step_deviation') }}

),

runs as (

    select run_id, project_id, run_name from {{ ref('int_goodput__run_totals') }}

),

final as (

    select
        steps.run_id,
        runs.project_id,
        runs.run_name,
        steps.event_seq,
        steps.segment_no,
        steps.step_count,
        steps.step_start_at,
        steps.step_start_epoch,
        steps.is_restart,
        intervals.raw_seconds as duration_seconds,
        coalesce(intervals.interval_class, 'open') as interval_class,
        intervals.interval_class = 'productive' as is_productive,
        intervals.interval_class = 'wasted' as is_wasted,
        coalesce(intervals.custom_badput_seconds, 0) as custom_badput_seconds,
        coalesce(intervals.adjusted_seconds, 0) as productive_seconds,
        case when run_deviations.run_id is not null then steps.step_seconds end as deviation_step_seconds,
        abs(steps.step_seconds - run_deviations.ideal_step_seconds) as deviation_seconds
    from steps
    inner join runs
        on runs.run_id = steps.run_id
    left join intervals
        on intervals.run_id = steps.run_id
        and intervals.segment_no = steps.segment_no
        and intervals.interval_step = steps.step_count
    left join latest_timings
        on latest_timings.run_id = steps.run_id
        and latest_timings.timed_from_seq = steps.event_seq
    left join run_deviations
        on run_deviations.run_id = latest_timings.run_id

)

select
    run_id,
    project_id,
    run_name,
    event_seq,
    segment_no,
    step_count,
    step_start_at,
    step_start_epoch,
    is_restart,
    duration_seconds,
    interval_class,
    is_productive,
    is_wasted,
    custom_badput_seconds,
    productive_seconds,
    deviation_step_seconds,
    deviation_seconds
from final
