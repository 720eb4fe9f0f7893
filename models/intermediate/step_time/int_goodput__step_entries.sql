{{
    config(**goodput_incremental_by_run(
        'new_entries',
        keeps_closed_segments_by='segment_no',
        partition_by=goodput_partition_by('step_start_at'),
        cluster_by=['run_id', 'segment_no'],
        keyed=true,
    ))
}}
{{ goodput_check_incremental_state() }}
{#
  One row per recorded step entry (the rows of fct_steps), with the time to
  the run's next step entry when that one starts the next step: the step time
  the library's _get_step_times reads, in entry order across restarts.
  The next step entry after a segment's last is the restart that closes it,
  so a segment's rows depend on its entries and that restart alone: an
  appended run keeps the segments the last build had closed, and an hourly
  build writes the final segment's steps, not the run's (3.3 s of L's hourly
  build when fct_steps rewrote every step). What moves with every new step
  (the ideal step time, so each step's deviation) is joined on read, in
  fct_steps.
#}

with

entries as (

    select
        entries.run_id,
        entries.event_seq,
        entries.segment_no,
        entries.step_count,
        entries.step_start_epoch,
        entries.is_restart
    from {{ ref('int_goodput__entries_segmented') }} as entries
    where {{ goodput_segment_is_rebuilt('entries.run_id', 'entries.segment_no', keyed=true) }}
        and entries.step_start_epoch is not null

),

with_next_step as (

    select
        entries.*,
        lead(step_count) over by_run as next_step,
        lead(step_start_epoch) over by_run as next_start_epoch,
        lead(event_seq) over by_run as next_seq
    from entries
    window by_run as (partition by run_id order by event_seq)

),

final as (

    select
        run_id,
        event_seq,
        segment_no,
        step_count,
        {{ goodput_epoch_to_timestamp('step_start_epoch') }} as step_start_at,
        step_start_epoch,
        is_restart,
        case when next_step = step_count + 1 then next_seq end as timed_by_seq,
        case when next_step = step_count + 1 then next_start_epoch - step_start_epoch end as step_seconds
    from with_next_step

)

{{ goodput_select_keyed_by_run('final') }}
