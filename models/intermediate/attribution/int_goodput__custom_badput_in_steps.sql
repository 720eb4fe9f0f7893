{{ config(**goodput_incremental_by_run('new_entries', keeps_closed_segments_by='segment_no')) }}
{{ goodput_check_incremental_state() }}
{#
  Custom badput events (eval, SDC checks, ...) that the library removes from
  productive step time: every paired event fully inside a productive step
  interval, attributed to that interval. An event inside two overlapping
  intervals is counted in both, as the library's loop does.

  The range join goes through hour buckets: an interval is listed under every
  hour it touches, an event under the hour it starts in, and the equi-join on
  (run, hour) leaves only a few candidates to test. A plain range join of 1e6
  step intervals against every eval of the run took 4.3 s; this takes well under one.

  A row is one (interval, event) pair, and neither side of a stored pair
  changes when entries are appended (the closed segments' intervals stand, and
  a stored event keeps its pair). So an appended run keeps the rows of the
  segments the last build had closed, and adds their pairs with the new events
  alone: an event's times come from its payload, and a late-logged one can lie
  in a step of any segment.
#}

{% set bucket_seconds = 3600 %}

with

appended_runs as (

    select * from {{ goodput_appended_runs() }} as appended_runs

),

custom_events as (

    select
        *,
        cast(floor(start_epoch / {{ bucket_seconds }}) as {{ dbt.type_bigint() }}) as bucket
    from {{ ref('int_goodput__paired_intervals') }}
    where {{ goodput_run_is_rebuilt() }}
        and interval_kind = 'custom_badput'

),

new_event_spans as (

    {#- per appended run: the span of the events whose end entries this build appends -#}
    select
        custom_events.run_id,
        appended_runs.appends_after_seq,
        appended_runs.appends_after_segment_no,
        max(custom_events.start_epoch) as last_start_epoch,
        min(custom_events.end_epoch) as first_end_epoch
    from custom_events
    inner join appended_runs
        on appended_runs.run_id = custom_events.run_id
    where custom_events.end_seq > appended_runs.appends_after_seq
    group by custom_events.run_id, appended_runs.appends_after_seq, appended_runs.appends_after_segment_no

),

{#- events_after_seq: the interval pairs with the events whose end entry comes after it -#}
intervals as (

    {# the segments this build recomputes, against every event #}
    select
        intervals.run_id,
        intervals.segment_no,
        intervals.event_seq,
        intervals.start_epoch,
        intervals.end_epoch,
        cast(-1 as {{ dbt.type_bigint() }}) as events_after_seq
    from {{ ref('int_goodput__step_intervals') }} as intervals
    where {{ goodput_segment_is_rebuilt('intervals.run_id', 'intervals.segment_no', keyed=true) }}
        and intervals.interval_class = 'productive'

    union all

    {# the kept segments, against the new events: the intervals that can hold one #}
    select
        closed.run_id,
        closed.segment_no,
        closed.event_seq,
        closed.start_epoch,
        closed.end_epoch,
        new_event_spans.appends_after_seq
    from {{ ref('int_goodput__step_intervals') }} as closed
    inner join new_event_spans
        on new_event_spans.run_id = closed.run_id
        and closed.segment_no < new_event_spans.appends_after_segment_no
        and closed.start_epoch <= new_event_spans.last_start_epoch
        and new_event_spans.first_end_epoch <= closed.end_epoch
    where {{ goodput_run_is_rebuilt('closed.run_id', keyed=true) }}
        and closed.interval_class = 'productive'

),

interval_buckets as (

    select intervals.*, bucket
    from intervals
    {{ goodput_join_series(
        'cast(floor(intervals.start_epoch / ' ~ bucket_seconds ~ ') as ' ~ dbt.type_bigint() ~ ')',
        'cast(floor(intervals.end_epoch / ' ~ bucket_seconds ~ ') as ' ~ dbt.type_bigint() ~ ')',
        1, 'bucket') }}

),

{#- An event that ends before it starts (clock skew) can sit "inside" an
    interval it does not start in; those few go through the plain range join. -#}
attributed as (

    select
        intervals.run_id,
        intervals.segment_no,
        intervals.event_seq,
        custom_events.end_seq as event_end_seq,
        custom_events.interval_subtype as custom_badput_event_type,
        custom_events.start_epoch,
        custom_events.end_epoch,
        custom_events.duration_seconds
    from interval_buckets as intervals
    inner join custom_events
        on custom_events.run_id = intervals.run_id
        and custom_events.bucket = intervals.bucket
        and intervals.start_epoch <= custom_events.start_epoch
        and custom_events.end_epoch <= intervals.end_epoch
        and custom_events.end_seq > intervals.events_after_seq
    where custom_events.start_epoch <= custom_events.end_epoch

    union all

    select
        intervals.run_id,
        intervals.segment_no,
        intervals.event_seq,
        custom_events.end_seq,
        custom_events.interval_subtype,
        custom_events.start_epoch,
        custom_events.end_epoch,
        custom_events.duration_seconds
    from intervals
    inner join custom_events
        on custom_events.run_id = intervals.run_id
        and intervals.start_epoch <= custom_events.start_epoch
        and custom_events.end_epoch <= intervals.end_epoch
        and custom_events.end_seq > intervals.events_after_seq
    where custom_events.end_epoch < custom_events.start_epoch

)

select * from attributed
