{{ config(**goodput_incremental_by_run('new_entries')) }}
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
#}

{% set bucket_seconds = 3600 %}

with

intervals as (

    select * from {{ ref('int_goodput__step_intervals') }}
    where {{ goodput_run_is_rebuilt() }}
        and interval_class = 'productive'

),

interval_buckets as (

    select
        intervals.run_id,
        intervals.segment_no,
        intervals.event_seq,
        intervals.start_epoch,
        intervals.end_epoch,
        bucket
    from intervals
    {{ goodput_join_series(
        'cast(floor(intervals.start_epoch / ' ~ bucket_seconds ~ ') as ' ~ dbt.type_bigint() ~ ')',
        'cast(floor(intervals.end_epoch / ' ~ bucket_seconds ~ ') as ' ~ dbt.type_bigint() ~ ')',
        1, 'bucket') }}

),

custom_events as (

    select
        *,
        cast(floor(start_epoch / {{ bucket_seconds }}) as {{ dbt.type_bigint() }}) as bucket
    from {{ ref('int_goodput__paired_intervals') }}
    where {{ goodput_run_is_rebuilt() }}
        and interval_kind = 'custom_badput'

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
    where custom_events.end_epoch < custom_events.start_epoch

)

select * from attributed
