{{
    config(**goodput_incremental_by_run(
        'new_entries',
        partition_by=goodput_partition_by('step_start_at'),
        cluster_by=['run_id', 'segment_no'],
    ))
}}
{{ goodput_check_incremental_state() }}
{#
  One row per recorded step entry: its segment, start, the interval to the next
  step entry of the segment (the step's time) and how the library counts it.
  The last step entry of a segment has no interval: it is productive only once
  the job has ended (its time then runs to the job end, see fct_goodput_cumulative).
#}

with

entries as (

    select * from {{ ref('int_goodput__entries_segmented') }}
    where {{ goodput_run_is_rebuilt() }}
        and step_start_epoch is not null

),

intervals as (

    select * from {{ ref('int_goodput__step_productive_time') }}
    where {{ goodput_run_is_rebuilt() }}

),

deviations as (

    select * from {{ ref('int_goodput__step_deviation') }}
    where {{ goodput_run_is_rebuilt() }}

),

runs as (

    select run_id, project_id, run_name from {{ ref('int_goodput__run_totals') }}
    where {{ goodput_run_is_rebuilt() }}

),

final as (

    select
        entries.run_id,
        runs.project_id,
        runs.run_name,
        entries.event_seq,
        entries.segment_no,
        entries.step_count,
        {{ goodput_epoch_to_timestamp('entries.step_start_epoch') }} as step_start_at,
        entries.step_start_epoch,
        entries.is_restart,
        intervals.raw_seconds as duration_seconds,
        coalesce(intervals.interval_class, 'open') as interval_class,
        intervals.interval_class = 'productive' as is_productive,
        intervals.interval_class = 'wasted' as is_wasted,
        coalesce(intervals.custom_badput_seconds, 0) as custom_badput_seconds,
        coalesce(intervals.adjusted_seconds, 0) as productive_seconds,
        deviations.step_seconds as deviation_step_seconds,
        deviations.deviation_seconds
    from entries
    inner join runs
        on runs.run_id = entries.run_id
    left join intervals
        on intervals.run_id = entries.run_id
        and intervals.segment_no = entries.segment_no
        and intervals.interval_step = entries.step_count
    left join deviations
        on deviations.run_id = entries.run_id
        and deviations.timed_from_seq = entries.event_seq

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
{{ goodput_rows_by_run() }}
