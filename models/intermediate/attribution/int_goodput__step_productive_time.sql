{{ config(**goodput_incremental_by_run('new_entries')) }}
{{ goodput_check_incremental_state() }}
{#
  Each step interval's productive time: the raw interval minus the custom badput
  events inside it, floored at zero (productive intervals only).
#}

with

intervals as (

    select * from {{ ref('int_goodput__step_intervals') }}
    where {{ goodput_run_is_rebuilt() }}

),

custom_per_interval as (

    select
        run_id,
        event_seq,
        sum(duration_seconds) as custom_badput_seconds
    from {{ ref('int_goodput__custom_badput_in_steps') }}
    where {{ goodput_run_is_rebuilt() }}
    group by run_id, event_seq

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

select * from adjusted
