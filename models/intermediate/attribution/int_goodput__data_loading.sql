{{ config(**goodput_incremental_by_run('new_entries', keeps_closed_segments_by='end_segment_no')) }}
{{ goodput_check_incremental_state() }}
{#
  Data-loading intervals and how many times the library counts each as
  synchronous (DATA_LOADING_SYNC):
  - the first interval to complete in each segment (the loader is "sync" at
    job start and again after every restart), and
  - at each restart, once more, the last interval completed in the segment the
    restart closes (the library adds its `current_sync_data_loading` then).
  An interval can so count 0, 1 or 2 times. Everything else is
  DATA_LOADING_ASYNC = all data loading - sync.
  A segment's counts depend on the intervals that end in it and on whether a
  restart closed it alone, so an appended run keeps the segments the last
  build had closed.
#}

with

intervals as (

    select intervals.*
    from {{ ref('int_goodput__paired_intervals') }} as intervals
    where {{ goodput_segment_is_rebuilt('intervals.run_id', 'intervals.end_segment_no') }}
        and intervals.interval_kind = 'data_loading'

),

restarts as (

    select restarts.*
    from {{ ref('int_goodput__segments') }} as restarts
    where {{ goodput_segment_is_rebuilt('restarts.run_id', 'restarts.segment_no') }}

),

ranked as (

    select
        intervals.*,
        row_number() over (
            partition by run_id, end_segment_no order by end_seq
        ) as rank_in_segment,
        row_number() over (
            partition by run_id, end_segment_no order by end_seq desc
        ) as rank_from_segment_end
    from intervals

),

attributed as (

    select
        ranked.run_id,
        ranked.start_seq,
        ranked.end_seq,
        ranked.end_segment_no,
        ranked.start_epoch,
        ranked.end_epoch,
        ranked.duration_seconds,
        (case when ranked.rank_in_segment = 1 then 1 else 0 end)
        + (case when ranked.rank_from_segment_end = 1 and restarts.segment_end_seq is not null then 1 else 0 end)
            as sync_count
    from ranked
    -- a run without step entries has no segments, and still its first interval is sync
    left join restarts
        on restarts.run_id = ranked.run_id
        and restarts.segment_no = ranked.end_segment_no

)

select * from attributed
