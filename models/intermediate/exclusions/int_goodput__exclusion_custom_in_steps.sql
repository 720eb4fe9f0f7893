{#
  Custom badput events against the productive step intervals of the
  exclusion path: every second an event overlaps an interval counts, once per
  interval (the main path takes only events wholly inside a step). One row per
  interval and event type that overlap.
#}

with

productive_intervals as (

    select * from {{ ref('int_goodput__exclusion_step_intervals') }}
    where exclusion_class = 'productive'

),

custom_events as (

    select
        run_id,
        interval_subtype as custom_badput_event_type,
        start_epoch,
        end_epoch
    from {{ ref('int_goodput__paired_intervals') }}
    where interval_kind = 'custom_badput'
        and run_id in (select run_id from {{ ref('int_goodput__exclusion_windows') }})

),

final as (

    select
        productive_intervals.run_id,
        productive_intervals.event_seq,
        custom_events.custom_badput_event_type,
        sum(
            least(productive_intervals.end_epoch, custom_events.end_epoch)
            - greatest(productive_intervals.start_epoch, custom_events.start_epoch)
        ) as custom_seconds
    from productive_intervals
    inner join custom_events
        on custom_events.run_id = productive_intervals.run_id
        and custom_events.start_epoch < productive_intervals.end_epoch
        and custom_events.end_epoch > productive_intervals.start_epoch
    group by productive_intervals.run_id, productive_intervals.event_seq, custom_events.custom_badput_event_type

)

select * from final
