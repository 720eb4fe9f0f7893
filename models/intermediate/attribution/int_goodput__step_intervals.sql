{{ config(**goodput_incremental_by_run('new_entries', keeps_closed_segments_by='segment_no', keyed=true)) }}
{{ goodput_check_incremental_state() }}
{#
  Consecutive step entries of a segment, as the library walks its step dict:
  the interval [previous step start, this step start] is step `step_count - 1`'s
  time. Against the segment's bound (the step the next restart resumes from,
  or the last step of the final segment) each interval is:
  - productive: at or below the bound and consecutive (previous + 1),
  - skipped: at or below the bound but not consecutive (counted nowhere),
  - wasted: above the bound (WASTED_PROGRESS_FROM_DISRUPTION),
  - ignored: the bound is step 0, and the library drops the whole segment.
  (int_goodput__step_productive_time then removes custom badput events.)
  A segment's intervals depend on its entries and the restart that closes it
  alone, so an appended run keeps the segments the last build had closed.
#}

with

entries as (

    select entries.*
    from {{ ref('int_goodput__entries_segmented') }} as entries
    where {{ goodput_segment_is_rebuilt('entries.run_id', 'entries.segment_no', keyed=true) }}

),

restarts as (

    select restarts.*
    from {{ ref('int_goodput__segments') }} as restarts
    where {{ goodput_segment_is_rebuilt('restarts.run_id', 'restarts.segment_no') }}

),

segment_steps as (

    select
        run_id,
        segment_no,
        event_seq,
        step_count,
        step_start_epoch,
        lag(step_count) over by_segment as previous_step,
        lag(step_start_epoch) over by_segment as previous_start_epoch,
        min(step_count) over (partition by run_id, segment_no) as segment_min_step,
        max(step_count) over (partition by run_id, segment_no) as segment_max_step
    from entries
    where step_start_epoch is not null
    window by_segment as (partition by run_id, segment_no order by event_seq)

),

segment_bounds as (

    select
        restarts.run_id,
        restarts.segment_no,
        restarts.segment_end_seq is null as is_final_segment,
        coalesce(resume.step_count, max(segment_steps.segment_max_step)) as bound_step
    from restarts
    left join entries as resume
        on resume.run_id = restarts.run_id
        and resume.event_seq = restarts.segment_end_seq
    left join segment_steps
        on segment_steps.run_id = restarts.run_id
        and segment_steps.segment_no = restarts.segment_no
    group by restarts.run_id, restarts.segment_no, restarts.segment_end_seq, resume.step_count

),

classified as (

    select
        segment_steps.run_id,
        segment_steps.segment_no,
        segment_steps.event_seq,
        segment_steps.previous_step as interval_step,
        segment_steps.step_count as next_step,
        segment_steps.previous_start_epoch as start_epoch,
        segment_steps.step_start_epoch as end_epoch,
        segment_steps.step_start_epoch - segment_steps.previous_start_epoch as raw_seconds,
        segment_steps.previous_step = segment_steps.segment_min_step as is_first_step,
        segment_bounds.bound_step,
        segment_bounds.is_final_segment,
        case
            when segment_bounds.bound_step = 0 then 'ignored'
            when segment_steps.step_count > segment_bounds.bound_step then 'wasted'
            when segment_steps.step_count - 1 = segment_steps.previous_step then 'productive'
            else 'skipped'
        end as interval_class
    from segment_steps
    inner join segment_bounds
        on segment_bounds.run_id = segment_steps.run_id
        and segment_bounds.segment_no = segment_steps.segment_no
    where segment_steps.previous_step is not null

)

{{ goodput_select_keyed_by_run('classified') }}
