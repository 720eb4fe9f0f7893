{{ config(**goodput_incremental_by_run(
    'new_entries', keeps_closed_segments_by='segment_no',
    reopened_by={'model': 'int_goodput__custom_badput_in_steps', 'key': 'event_seq', 'entry': 'event_end_seq'},
    keyed=true)) }}
{{ goodput_check_incremental_state() }}
{#
  Each step interval's productive time: the raw interval minus the custom badput
  events inside it, floored at zero (productive intervals only).
  An appended run keeps the intervals of the segments the last build had
  closed (they stand, int_goodput__step_intervals), but for those a new custom
  event lies in (int_goodput__custom_badput_in_steps adds its row there).
#}

with

intervals as (

    select intervals.*
    from {{ ref('int_goodput__step_intervals') }} as intervals
    where {{ goodput_segment_is_rebuilt('intervals.run_id', 'intervals.segment_no', 'intervals.event_seq', keyed=true) }}

),

custom_per_interval as (

    select
        custom_in_steps.run_id,
        custom_in_steps.event_seq,
        sum(custom_in_steps.duration_seconds) as custom_badput_seconds
    from {{ ref('int_goodput__custom_badput_in_steps') }} as custom_in_steps
    where {{ goodput_segment_is_rebuilt('custom_in_steps.run_id', 'custom_in_steps.segment_no',
                                        'custom_in_steps.event_seq') }}
    group by custom_in_steps.run_id, custom_in_steps.event_seq

),

adjusted as (

    select
        intervals.*,
        coalesce(custom_per_interval.custom_badput_seconds, 0) as custom_badput_seconds,
        case
            when intervals.interval_class = 'productive'
                then greatest(
                    0,
                    intervals.raw_seconds - coalesce(custom_per_interval.custom_badput_seconds, 0)
                )
            else 0
        end as adjusted_seconds
    from intervals
    left join custom_per_interval
        on custom_per_interval.run_id = intervals.run_id
        and custom_per_interval.event_seq = intervals.event_seq

)

{{ goodput_select_keyed_by_run('adjusted') }}
