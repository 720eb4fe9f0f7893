{{ config(**goodput_incremental_by_run(
    'new_entries', keeps_closed_segments_by='segment_no',
    reopened_by={'model': 'int_goodput__custom_badput_in_steps', 'key': 'event_seq', 'entry': 'event_end_seq',
                 'column': 'source_seq'},
    always_rebuilt_by='depends_on_whole_run', keyed=true)) }}
{{ goodput_check_incremental_state() }}
{#
  Every amount of the cumulative attribution, located on the time axis: one
  row per piece of productive time, Badput bucket, deduction or disruption,
  spread uniformly over [start_epoch, end_epoch] (a point when they are equal).
  The pieces of a run add up, measure by measure, to int_goodput__run_totals
  and int_goodput__badput_buckets (before sanitising), so a window's value is
  its overlap with these rows:
  - a productive step interval counts its raw length as PRODUCTIVE; each custom
    event inside it moves its span from PRODUCTIVE to CUSTOM_BADPUT_EVENTS (once
    per interval holding it, as the library counts it); when the events exceed
    the interval the library floors the step at zero, and the excess comes back
    as a PRODUCTIVE correction over the interval;
  - PROGRAM_STARTUP moves from PRODUCTIVE to its bucket over the segment's first
    productive interval(s);
  - the last step of an ended job is PRODUCTIVE up to the job end;
  - a checkpoint save moves its averaged blocking time from PRODUCTIVE (only
    when the run has steps, as the library deducts it) to
    UNPRODUCTIVE_CHECKPOINT_SAVE_TIME, starting where its first record started;
  - restore, accelerator init, training prep, data loading (sync and async by
    the times each interval counts as sync), wasted progress, infrastructure
    recovery: their own spans;
  - DISRUPTIONS: a count of 1 at each restart's resume step;
  - elastic runs: each paired wait (ELASTIC_SLICE_DOWN or ELASTIC_SCALE_UP) and
    re-initialisation (ELASTIC_REINITIALIZATION) over its span, and the
    accelerator init and training prep a re-initialisation overlaps taken back
    over each overlap (scaled down where the overlaps exceed the bucket, as the
    library never lets it go below 0).
  An appended run keeps the amounts of the segments the last build had closed
  (each is placed by its segment's entries, or by a pair or restart stored
  with it), but for a closed step a new custom event lies in (its step, custom
  and floor rows, as int_goodput__step_productive_time) and the rows flagged
  depends_on_whole_run, recomputed with the run: a checkpoint's average over
  its records (a late record moves it), a segment's program startup (the mean
  of its steps moves with a late custom event in any of them), and the
  re-initialisation overlaps (scaled by the run's totals).
#}

with

productive_time as (

    select productive_time.*
    from {{ ref('int_goodput__step_productive_time') }} as productive_time
    where {{ goodput_segment_is_rebuilt('productive_time.run_id', 'productive_time.segment_no',
                                        'productive_time.event_seq', keyed=true) }}

),

first_step_time as (

    select * from {{ ref('int_goodput__step_productive_time') }}
    where {{ goodput_run_is_rebuilt(keyed=true) }}
        and is_first_step
        and interval_class = 'productive'

),

custom_in_steps as (

    select custom_in_steps.*
    from {{ ref('int_goodput__custom_badput_in_steps') }} as custom_in_steps
    where {{ goodput_segment_is_rebuilt('custom_in_steps.run_id', 'custom_in_steps.segment_no',
                                        'custom_in_steps.event_seq') }}

),

segments as (

    select * from {{ ref('int_goodput__segment_startup_and_wasted_progress') }}
    where {{ goodput_run_is_rebuilt() }}

),

totals as (

    select * from {{ ref('int_goodput__run_totals') }}
    where {{ goodput_run_is_rebuilt() }}

),

paired as (

    select * from {{ ref('int_goodput__paired_intervals') }}
    where {{ goodput_run_is_rebuilt() }}
        and interval_kind in ('tpu_initialization', 'training_prep')

),

elastic_paired as (

    select * from {{ ref('int_goodput__paired_intervals') }}
    where {{ goodput_run_is_rebuilt() }}
        and interval_kind in ('elastic_wait', 'elastic_reinit')

),

data_loading as (

    select data_loading.*
    from {{ ref('int_goodput__data_loading') }} as data_loading
    where {{ goodput_segment_is_rebuilt('data_loading.run_id', 'data_loading.end_segment_no',
                                        'data_loading.end_seq') }}

),

checkpoints as (

    select * from {{ ref('int_goodput__checkpoint_badput') }}
    where {{ goodput_run_is_rebuilt() }}

),

disruptions as (

    select * from {{ ref('int_goodput__disruptions') }}
    where {{ goodput_run_is_rebuilt() }}

),

entries as (

    select * from {{ ref('int_goodput__entries_segmented') }}
    where {{ goodput_run_is_rebuilt(keyed=true) }}

),

{% set no_type = "cast('' as " ~ dbt.type_string() ~ ")" %}
{% set no_seq = "cast(null as " ~ dbt.type_bigint() ~ ")" %}

{#- Every branch below has the same columns, each aliased: run_id, segment_no,
    measure, custom_badput_event_type, component, source_seq (the entry the
    amount is placed by: a step entry, the end of a pair, a restart; null for
    the one last-step amount of a run), event_end_seq (custom events: the
    event's end entry, as one event can sit in two overlapping intervals),
    start_epoch, end_epoch, amount, depends_on_whole_run. -#}

step_amounts as (

    select
        run_id,
        segment_no,
        'PRODUCTIVE' as measure,
        {{ no_type }} as custom_badput_event_type,
        'step interval' as component,
        event_seq as source_seq,
        {{ no_seq }} as event_end_seq,
        start_epoch,
        end_epoch,
        raw_seconds as amount,
        false as depends_on_whole_run
    from productive_time
    where interval_class = 'productive'

    union all

    select
        run_id,
        segment_no,
        'PRODUCTIVE' as measure,
        {{ no_type }} as custom_badput_event_type,
        'step floored at zero' as component,
        event_seq as source_seq,
        {{ no_seq }} as event_end_seq,
        start_epoch,
        end_epoch,
        custom_badput_seconds - raw_seconds as amount,
        false as depends_on_whole_run
    from productive_time
    where interval_class = 'productive' and custom_badput_seconds > raw_seconds

    union all

    select
        run_id,
        segment_no,
        'WASTED_PROGRESS_FROM_DISRUPTION' as measure,
        {{ no_type }} as custom_badput_event_type,
        'wasted step interval' as component,
        event_seq as source_seq,
        {{ no_seq }} as event_end_seq,
        start_epoch,
        end_epoch,
        raw_seconds as amount,
        false as depends_on_whole_run
    from productive_time
    where interval_class = 'wasted'

),

custom_amounts as (

    select
        custom_in_steps.run_id,
        custom_in_steps.segment_no,
        sides.measure,
        case
            when sides.measure = 'PRODUCTIVE' then {{ no_type }}
            else custom_in_steps.custom_badput_event_type
        end as custom_badput_event_type,
        'custom event in step' as component,
        custom_in_steps.event_seq as source_seq,
        custom_in_steps.event_end_seq,
        custom_in_steps.start_epoch,
        custom_in_steps.end_epoch,
        case
            when sides.measure = 'PRODUCTIVE' then -custom_in_steps.duration_seconds
            else custom_in_steps.duration_seconds
        end as amount,
        false as depends_on_whole_run
    from custom_in_steps
    cross join (
        select 'PRODUCTIVE' as measure
        union all
        select 'CUSTOM_BADPUT_EVENTS' as measure
    ) as sides

),

first_steps as (

    select
        first_step_time.run_id,
        first_step_time.segment_no,
        first_step_time.event_seq,
        first_step_time.start_epoch,
        first_step_time.end_epoch,
        segments.program_startup_seconds * first_step_time.adjusted_seconds / segments.first_step_seconds
            as startup_seconds
    from first_step_time
    inner join segments
        on segments.run_id = first_step_time.run_id
        and segments.segment_no = first_step_time.segment_no
    where segments.program_startup_seconds > 0

),

startup_amounts as (

    select
        first_steps.run_id,
        first_steps.segment_no,
        sides.measure,
        {{ no_type }} as custom_badput_event_type,
        'program startup' as component,
        first_steps.event_seq as source_seq,
        {{ no_seq }} as event_end_seq,
        first_steps.start_epoch,
        first_steps.end_epoch,
        case
            when sides.measure = 'PRODUCTIVE' then -first_steps.startup_seconds
            else first_steps.startup_seconds
        end as amount,
        true as depends_on_whole_run
    from first_steps
    cross join (
        select 'PRODUCTIVE' as measure
        union all
        select 'PROGRAM_STARTUP' as measure
    ) as sides

),

last_step_amounts as (

    select
        totals.run_id,
        segments.segment_no,
        'PRODUCTIVE' as measure,
        {{ no_type }} as custom_badput_event_type,
        'last step until job end' as component,
        {{ no_seq }} as source_seq,
        {{ no_seq }} as event_end_seq,
        segments.max_step_start_epoch as start_epoch,
        totals.last_job_end_epoch as end_epoch,
        totals.last_job_end_epoch - segments.max_step_start_epoch as amount,
        false as depends_on_whole_run
    from totals
    inner join segments
        on segments.run_id = totals.run_id
        and segments.is_final_segment
    where totals.last_job_end_epoch is not null

),

checkpoint_located as (

    select
        checkpoints.run_id,
        coalesce(entries.segment_no, 0) as segment_no,
        checkpoints.operation,
        checkpoints.first_event_seq,
        checkpoints.mean_duration_seconds,
        coalesce(
            checkpoints.first_started_epoch,
            checkpoints.first_logged_epoch - checkpoints.mean_duration_seconds
        ) as start_epoch,
        steps_recorded.run_id is not null as run_has_steps
    from checkpoints
    left join entries
        on entries.run_id = checkpoints.run_id
        and entries.event_seq = checkpoints.first_event_seq
    left join (select run_id from segments where is_final_segment) as steps_recorded
        on steps_recorded.run_id = checkpoints.run_id

),

checkpoint_amounts as (

    select
        run_id,
        segment_no,
        case
            when operation = 'restore' then 'UNPRODUCTIVE_CHECKPOINT_RESTORE_TIME'
            else 'UNPRODUCTIVE_CHECKPOINT_SAVE_TIME'
        end as measure,
        {{ no_type }} as custom_badput_event_type,
        'checkpoint ' || operation as component,
        first_event_seq as source_seq,
        {{ no_seq }} as event_end_seq,
        start_epoch,
        start_epoch + mean_duration_seconds as end_epoch,
        mean_duration_seconds as amount,
        true as depends_on_whole_run
    from checkpoint_located

    union all

    select
        run_id,
        segment_no,
        'PRODUCTIVE' as measure,
        {{ no_type }} as custom_badput_event_type,
        'checkpoint save' as component,
        first_event_seq as source_seq,
        {{ no_seq }} as event_end_seq,
        start_epoch,
        start_epoch + mean_duration_seconds as end_epoch,
        -mean_duration_seconds as amount,
        true as depends_on_whole_run
    from checkpoint_located
    where operation = 'save' and run_has_steps

),

interval_amounts as (

    select
        run_id,
        end_segment_no as segment_no,
        case
            when interval_kind = 'tpu_initialization' then 'TPU_INITIALIZATION'
            else 'TRAINING_PREP'
        end as measure,
        {{ no_type }} as custom_badput_event_type,
        interval_kind as component,
        end_seq as source_seq,
        {{ no_seq }} as event_end_seq,
        start_epoch,
        end_epoch,
        duration_seconds as amount,
        false as depends_on_whole_run
    from paired

    union all

    select
        run_id,
        end_segment_no as segment_no,
        'DATA_LOADING_SYNC' as measure,
        {{ no_type }} as custom_badput_event_type,
        'data loading' as component,
        end_seq as source_seq,
        {{ no_seq }} as event_end_seq,
        start_epoch,
        end_epoch,
        duration_seconds * sync_count as amount,
        false as depends_on_whole_run
    from data_loading
    where sync_count > 0

    union all

    select
        run_id,
        end_segment_no as segment_no,
        'DATA_LOADING_ASYNC' as measure,
        {{ no_type }} as custom_badput_event_type,
        'data loading' as component,
        end_seq as source_seq,
        {{ no_seq }} as event_end_seq,
        start_epoch,
        end_epoch,
        duration_seconds * (1 - sync_count) as amount,
        false as depends_on_whole_run
    from data_loading
    where sync_count != 1

),

reinit_overlaps as (

    select
        paired.run_id,
        paired.end_segment_no,
        paired.interval_kind,
        paired.end_seq,
        reinit.end_seq as reinit_end_seq,
        greatest(paired.start_epoch, reinit.start_epoch) as start_epoch,
        least(paired.end_epoch, reinit.end_epoch) as end_epoch,
        {{ goodput_overlap_seconds('paired', 'reinit') }} as overlap_seconds
    from paired
    inner join elastic_paired as reinit
        on reinit.run_id = paired.run_id
        and reinit.interval_kind = 'elastic_reinit'
    where least(paired.end_epoch, reinit.end_epoch) > greatest(paired.start_epoch, reinit.start_epoch)

),

reinit_overlap_scale as (

    -- max(0, bucket - overlaps): the overlaps come off in full unless they exceed the bucket
    select
        overlap_totals.run_id,
        overlap_totals.interval_kind,
        case
            when overlap_totals.overlap_seconds > coalesce(bucket_totals.bucket_seconds, 0)
                then coalesce(bucket_totals.bucket_seconds, 0) / overlap_totals.overlap_seconds
            else 1
        end as scale
    from (
        select run_id, interval_kind, sum(overlap_seconds) as overlap_seconds
        from reinit_overlaps
        group by run_id, interval_kind
    ) as overlap_totals
    left join (
        select run_id, interval_kind, sum(duration_seconds) as bucket_seconds
        from paired
        group by run_id, interval_kind
    ) as bucket_totals
        on bucket_totals.run_id = overlap_totals.run_id
        and bucket_totals.interval_kind = overlap_totals.interval_kind

),

elastic_amounts as (

    select
        run_id,
        end_segment_no as segment_no,
        elastic_badput_type as measure,
        {{ no_type }} as custom_badput_event_type,
        replace(interval_kind, '_', ' ') as component,
        end_seq as source_seq,
        {{ no_seq }} as event_end_seq,
        start_epoch,
        end_epoch,
        duration_seconds as amount,
        false as depends_on_whole_run
    from elastic_paired

    union all

    select
        reinit_overlaps.run_id,
        reinit_overlaps.end_segment_no as segment_no,
        case
            when reinit_overlaps.interval_kind = 'tpu_initialization' then 'TPU_INITIALIZATION'
            else 'TRAINING_PREP'
        end as measure,
        {{ no_type }} as custom_badput_event_type,
        reinit_overlaps.interval_kind || ' inside re-initialisation' as component,
        reinit_overlaps.end_seq as source_seq,
        reinit_overlaps.reinit_end_seq as event_end_seq,
        reinit_overlaps.start_epoch,
        reinit_overlaps.end_epoch,
        -reinit_overlaps.overlap_seconds * reinit_overlap_scale.scale as amount,
        true as depends_on_whole_run
    from reinit_overlaps
    inner join reinit_overlap_scale
        on reinit_overlap_scale.run_id = reinit_overlaps.run_id
        and reinit_overlap_scale.interval_kind = reinit_overlaps.interval_kind

),

disruption_amounts as (

    select
        run_id,
        disruption_no as segment_no,
        'INFRASTRUCTURE_RECOVERY_FROM_DISRUPTION' as measure,
        {{ no_type }} as custom_badput_event_type,
        'restart recovery' as component,
        restart_seq as source_seq,
        {{ no_seq }} as event_end_seq,
        last_step_start_epoch as start_epoch,
        restart_job_start_epoch as end_epoch,
        infrastructure_recovery_seconds as amount,
        false as depends_on_whole_run
    from disruptions
    where infrastructure_recovery_seconds > 0

    union all

    select
        run_id,
        disruption_no as segment_no,
        'DISRUPTIONS' as measure,
        {{ no_type }} as custom_badput_event_type,
        'restart' as component,
        restart_seq as source_seq,
        {{ no_seq }} as event_end_seq,
        resume_start_epoch as start_epoch,
        resume_start_epoch as end_epoch,
        1 as amount,
        false as depends_on_whole_run
    from disruptions

),

unioned as (

    select * from step_amounts
    union all
    select * from custom_amounts
    union all
    select * from startup_amounts
    union all
    select * from last_step_amounts
    union all
    select * from checkpoint_amounts
    union all
    select * from interval_amounts
    union all
    select * from elastic_amounts
    union all
    select * from disruption_amounts

),

final as (

    select
        run_id,
        segment_no,
        measure,
        custom_badput_event_type,
        component,
        source_seq,
        event_end_seq,
        least(start_epoch, end_epoch) as start_epoch,
        greatest(start_epoch, end_epoch) as end_epoch,
        amount,
        depends_on_whole_run
    from unioned as amounts
    where amount != 0
        and {{ goodput_segment_is_rebuilt('amounts.run_id', 'amounts.segment_no', 'amounts.source_seq',
                                          'amounts.depends_on_whole_run') }}

)

{{ goodput_select_keyed_by_run('final') }}
