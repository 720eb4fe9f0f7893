{#
  Custom badput events (eval, SDC checks, ...) that the library removes from
  productive step time: every paired event fully inside a productive step
  interval, attributed to that interval. An event inside two overlapping
  intervals is counted in both, as the library's loop does.
#}

with

intervals as (

    select * from {{ ref('int_goodput__step_intervals') }}
    where interval_class = 'productive'

),

custom_events as (

    select * from {{ ref('int_goodput__paired_intervals') }}
    where interval_kind = 'custom_badput'

),

attributed as (

    select
        intervals.run_name,
        intervals.segment_no,
        intervals.event_seq,
        custom_events.interval_subtype as custom_badput_event_type,
        custom_events.start_epoch,
        custom_events.end_epoch,
        custom_events.duration_seconds
    from intervals
    inner join custom_events
        on custom_events.run_name = intervals.run_name
        and intervals.start_epoch <= custom_events.start_epoch
        and custom_events.end_epoch <= intervals.end_epoch

)

select * from attributed
