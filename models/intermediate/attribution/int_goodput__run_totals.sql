{{ config(**goodput_incremental_by_run('evaluated')) }}
{{ goodput_check_incremental_state() }}
{#
  One row per run: total elapsed time, productive time and every Badput bucket
  before sanitising, exactly as GoodputCalculator.get_job_goodput assembles them.
  - total = last job end (or the evaluation time) - first job start, both taken
    through microsecond datetimes as the library's cache does;
  - productive = sum of segment productive time, plus the last step's time once
    the job has ended, minus the blocking checkpoint save time (when any step
    was recorded).
  - elastic runs (any ElasticGoodputRecorder entry) add what
    ElasticGoodputCalculator adds: every paired wait as ELASTIC_SCALE_UP (its
    type contains scale_up, any case) or ELASTIC_SLICE_DOWN (any other type),
    every paired re-initialisation as ELASTIC_REINITIALIZATION, and accelerator
    init and training prep lose the time they overlap a re-initialisation
    (never below 0). Like the library, nothing is taken out of productive
    time or another bucket for a wait. The elastic columns are null for a
    run without elastic entries (the plain calculator has no such keys) and
    for a bucket no pair created (the library's dict then lacks the key);
    is_elastic says which runs are elastic.
#}

with

entries as {{ goodput_cte_read_in_place() }} (

    select * from {{ ref('int_goodput__entries_ordered') }}
    where {{ goodput_run_is_rebuilt(keyed=true) }}

),

segments as (

    select * from {{ ref('int_goodput__segment_startup_and_wasted_progress') }}
    where {{ goodput_run_is_rebuilt() }}

),

job_starts as (

    select run_id, min_by(job_start_epoch, event_seq) as first_job_start_epoch
    from entries
    where job_start_epoch is not null
    group by run_id

),

job_ends as (

    select run_id, max_by(job_end_epoch, event_seq) as last_job_end_epoch
    from entries
    where job_end_epoch is not null
    group by run_id

),

job_events as (

    select
        run_id,
        event_seq,
        job_start_epoch,
        max(job_end_epoch) over (
            partition by run_id order by event_seq rows between unbounded preceding and 1 preceding
        ) as previous_job_end_epoch
    from entries
    where job_start_epoch is not null or job_end_epoch is not null

),

late_starts as (

    -- a job start long after a job end: the library takes it for a restart of the ended job
    select run_id, event_seq
    from job_events
    where job_start_epoch - previous_job_end_epoch > {{ var('goodput_stall_seconds', 3600) }}

),

first_steps_after_late_starts as (

    select late_starts.run_id, late_starts.event_seq, min(steps.event_seq) as first_step_seq
    from late_starts
    inner join entries as steps
        on steps.run_id = late_starts.run_id
        and steps.event_seq > late_starts.event_seq
        and steps.step_count is not null
    group by late_starts.run_id, late_starts.event_seq

),

reused_names as (

    -- ... whose steps count from 0 again: a new experiment logged under the old run name
    select first_steps.run_id, count(*) as reused_name_starts
    from first_steps_after_late_starts as first_steps
    inner join entries as steps
        on steps.run_id = first_steps.run_id
        and steps.event_seq = first_steps.first_step_seq
    where steps.step_count = 0
    group by first_steps.run_id

),

job_bounds as (

    select
        runs.run_id,
        coalesce(reused_names.reused_name_starts, 0) as reused_name_starts,
        runs.counted_entries,
        runs.implausible_entries,
        runs.project_id,
        runs.run_name,
        runs.last_entry_epoch,
        job_starts.first_job_start_epoch,
        job_ends.last_job_end_epoch
    from (
        select
            run_id,
            count(*) as counted_entries,
            sum(case when event_kind = 'implausible' then 1 else 0 end) as implausible_entries,
            min(project_id) as project_id,
            min(run_name) as run_name,
            max({{ goodput_timestamp_to_epoch('entry_at') }}) as last_entry_epoch
        from entries
        group by run_id
    ) as runs
    left join job_starts on job_starts.run_id = runs.run_id
    left join job_ends on job_ends.run_id = runs.run_id
    left join reused_names on reused_names.run_id = runs.run_id

),

segment_totals as (

    select
        run_id,
        sum(productive_seconds) as segment_productive_seconds,
        sum(program_startup_seconds) as program_startup_seconds,
        sum(wasted_seconds) as wasted_progress_seconds,
        count(*) - 1 as disruptions
    from segments
    group by run_id

),

final_segment as (

    select run_id, max_step, max_step_start_epoch, max_productive_step
    from segments
    where is_final_segment

),

paired as (

    select
        run_id,
        sum(case when interval_kind = 'tpu_initialization' then duration_seconds else 0 end)
            as tpu_initialization_seconds,
        sum(case when interval_kind = 'training_prep' then duration_seconds else 0 end) as training_prep_seconds
    from {{ ref('int_goodput__paired_intervals') }}
    where {{ goodput_run_is_rebuilt() }}
    group by run_id

),

elastic_runs as (

    {%- if goodput_library_window_mode() %}
    {# a window is computed by its run's calculator: the caller says which (is_elastic_run), or else the
       window's own entries tell #}
    select distinct window_runs.run_id
    from (
        select
            run_id,
            max(case when event_kind like 'elastic%' then 1 else 0 end) = 1 as has_elastic_entries,
            cast(min({{ dbt.split_part('project_id', "'@w'", 2) }}) as {{ dbt.type_int() }}) as window_no
        from entries
        group by run_id
    ) as window_runs
    inner join ({{ goodput_library_window_rows() }}) as windows
        on windows.window_no = window_runs.window_no
    where coalesce(windows.is_elastic_run, window_runs.has_elastic_entries)
    {%- else %}
    select distinct run_id
    from entries
    where event_kind like 'elastic%'
    {%- endif %}

),

elastic_pairs as (

    select
        run_id,
        {%- for badput_type, column in goodput_elastic_badput_columns() %}
        sum(case when elastic_badput_type = '{{ badput_type }}' then duration_seconds end) as {{ column }}
        {{- "," if not loop.last }}
        {%- endfor %}
    from {{ ref('int_goodput__paired_intervals') }}
    where {{ goodput_run_is_rebuilt() }}
        and elastic_badput_type is not null
    group by run_id

),

reinit_overlaps as (

    {# ElasticGoodputCalculator._overlap_with_reinit: every (init, re-initialisation) pair's overlap #}
    select
        setup.run_id,
        sum(case when setup.interval_kind = 'tpu_initialization'
            then {{ goodput_overlap_seconds('setup', 'reinit') }} else 0 end) as tpu_initialization_overlap_seconds,
        sum(case when setup.interval_kind = 'training_prep'
            then {{ goodput_overlap_seconds('setup', 'reinit') }} else 0 end) as training_prep_overlap_seconds
    from {{ ref('int_goodput__paired_intervals') }} as setup
    inner join {{ ref('int_goodput__paired_intervals') }} as reinit
        on reinit.run_id = setup.run_id
        and reinit.interval_kind = 'elastic_reinit'
    where {{ goodput_run_is_rebuilt('setup.run_id') }}
        and setup.interval_kind in ('tpu_initialization', 'training_prep')
    group by setup.run_id

),

data_loading as (

    select
        run_id,
        sum(duration_seconds) as data_loading_seconds,
        sum(duration_seconds * sync_count) as data_loading_sync_seconds
    from {{ ref('int_goodput__data_loading') }}
    where {{ goodput_run_is_rebuilt() }}
    group by run_id

),

checkpoints as (

    select
        run_id,
        sum(case when operation = 'save' then mean_duration_seconds else 0 end) as checkpoint_save_seconds,
        sum(case when operation = 'restore' then mean_duration_seconds else 0 end) as checkpoint_restore_seconds
    from {{ ref('int_goodput__checkpoint_badput') }}
    where {{ goodput_run_is_rebuilt() }}
    group by run_id

),

recovery as (

    select run_id, sum(infrastructure_recovery_seconds) as infrastructure_recovery_seconds
    from {{ ref('int_goodput__disruptions') }}
    where {{ goodput_run_is_rebuilt() }}
    group by run_id

),

assembled as (

    select
        job_bounds.run_id,
        job_bounds.project_id,
        job_bounds.run_name,
        job_bounds.counted_entries,
        job_bounds.implausible_entries,
        job_bounds.reused_name_starts,
        job_bounds.last_entry_epoch,
        job_bounds.first_job_start_epoch,
        job_bounds.last_job_end_epoch,
        {# only a run without a job end runs to the evaluation time: an ended run's numbers (and rows,
           which incremental builds keep) do not depend on when it is evaluated #}
        case when job_bounds.last_job_end_epoch is null then {{ goodput_as_of_epoch() }} end as evaluated_at_epoch,
        coalesce(final_segment.max_step, 0) as last_recorded_step,
        case
            when final_segment.run_id is null then 0
            when job_bounds.last_job_end_epoch is not null then final_segment.max_step
            else final_segment.max_productive_step
        end as max_productive_step,
        coalesce(segment_totals.disruptions, 0) as disruptions,
        case
            when final_segment.run_id is null then 0
            else segment_totals.segment_productive_seconds
                + coalesce(job_bounds.last_job_end_epoch - final_segment.max_step_start_epoch, 0)
                - coalesce(checkpoints.checkpoint_save_seconds, 0)
        end as productive_seconds,
        case
            when reinit_overlaps.tpu_initialization_overlap_seconds > 0
                then greatest(0, coalesce(paired.tpu_initialization_seconds, 0)
                    - reinit_overlaps.tpu_initialization_overlap_seconds)
            else coalesce(paired.tpu_initialization_seconds, 0)
        end as tpu_initialization_seconds,
        case
            when reinit_overlaps.training_prep_overlap_seconds > 0
                then greatest(0, coalesce(paired.training_prep_seconds, 0)
                    - reinit_overlaps.training_prep_overlap_seconds)
            else coalesce(paired.training_prep_seconds, 0)
        end as training_prep_seconds,
        coalesce(segment_totals.program_startup_seconds, 0) as program_startup_seconds,
        coalesce(data_loading.data_loading_sync_seconds, 0) as data_loading_sync_seconds,
        coalesce(data_loading.data_loading_seconds, 0) - coalesce(data_loading.data_loading_sync_seconds, 0)
            as data_loading_async_seconds,
        coalesce(checkpoints.checkpoint_save_seconds, 0) as checkpoint_save_seconds,
        coalesce(checkpoints.checkpoint_restore_seconds, 0) as checkpoint_restore_seconds,
        coalesce(segment_totals.wasted_progress_seconds, 0) as wasted_progress_seconds,
        coalesce(recovery.infrastructure_recovery_seconds, 0) as infrastructure_recovery_seconds,
        elastic_runs.run_id is not null as is_elastic,
        elastic_pairs.elastic_slice_down_seconds,
        elastic_pairs.elastic_scale_up_seconds,
        elastic_pairs.elastic_reinitialization_seconds
    from job_bounds
    left join segment_totals on segment_totals.run_id = job_bounds.run_id
    left join final_segment on final_segment.run_id = job_bounds.run_id
    left join paired on paired.run_id = job_bounds.run_id
    left join data_loading on data_loading.run_id = job_bounds.run_id
    left join checkpoints on checkpoints.run_id = job_bounds.run_id
    left join recovery on recovery.run_id = job_bounds.run_id
    left join elastic_runs on elastic_runs.run_id = job_bounds.run_id
    left join elastic_pairs on elastic_pairs.run_id = job_bounds.run_id
    left join reinit_overlaps on reinit_overlaps.run_id = job_bounds.run_id

),

{%- if goodput_library_window_mode() %}

{#-
  A window build (macros/library_windows): each run is one window's entries,
  and its total is the library's interval total, min(end, last entry) -
  max(start, first entry), the entries taken in processing order and their
  times to the microsecond (get_job_goodput_interval).
#}
window_entry_times as (

    select
        run_id,
        cast({{ dbt.split_part('project_id', "'@w'", 2) }} as {{ dbt.type_int() }}) as window_no,
        first_value(entry_time_epoch) over (
            partition by run_id order by entry_at, insert_id
            rows between unbounded preceding and unbounded following
        ) as first_entry_time_epoch,
        last_value(entry_time_epoch) over (
            partition by run_id order by entry_at, insert_id
            rows between unbounded preceding and unbounded following
        ) as last_entry_time_epoch
    from (
        select
            run_id,
            project_id,
            entry_at,
            insert_id,
            {{ goodput_epoch_to_microseconds(goodput_payload_time('payload')) }} as entry_time_epoch
        from {{ ref('stg_goodput__events') }}
        where is_counted
    ) as window_entries

),

window_bounds as (

    select distinct
        window_entry_times.run_id,
        greatest(windows.start_epoch, window_entry_times.first_entry_time_epoch) as window_from_epoch,
        least(windows.end_epoch, window_entry_times.last_entry_time_epoch) as window_until_epoch
    from window_entry_times
    inner join ({{ goodput_library_window_rows() }}) as windows
        on windows.window_no = window_entry_times.window_no

),

with_total as (

    select
        assembled.*,
        window_bounds.window_from_epoch as elapsed_origin_epoch,
        window_bounds.window_until_epoch - window_bounds.window_from_epoch as total_elapsed_seconds,
        false as is_stalled
    from assembled
    inner join window_bounds
        on window_bounds.run_id = assembled.run_id

),

{%- else %}

with_total as (

    select
        assembled.*,
        -- where the elapsed time starts counting (the first job start, to the microsecond)
        {{ goodput_epoch_to_microseconds('first_job_start_epoch') }} as elapsed_origin_epoch,
        case
            when first_job_start_epoch is null then null
            else coalesce(
                    {{ goodput_epoch_to_microseconds('last_job_end_epoch') }},
                    evaluated_at_epoch
                )
                - {{ goodput_epoch_to_microseconds('first_job_start_epoch') }}
        end as total_elapsed_seconds,
        -- hang detection: no job end, and silent for longer than the stall threshold
        (last_job_end_epoch is null
            and evaluated_at_epoch - last_entry_epoch > {{ var('goodput_stall_seconds', 3600) }}) as is_stalled
    from assembled

),

{%- endif %}

{#
  Where the run's rolling grid ends: its end (job end or evaluation time), but
  for a stalled run no later than its last entry plus the largest window (or
  the stall threshold, if larger: the grid never ends before where it reached
  while the run still counted as running, so no stored window is left beyond
  it). Past that every window would hold nothing but OTHER, and the grid of a
  job that died without a job end would grow at every build.
#}
{%- set stalled_span = [var('rolling_windows_seconds') | map('int') | max, var('goodput_stall_seconds', 3600) | int] | max %}

with_grid_end as (

    select
        *,
        case
            when is_stalled and last_entry_epoch + {{ stalled_span }} < elapsed_origin_epoch + total_elapsed_seconds
                then last_entry_epoch + {{ stalled_span }}
            else elapsed_origin_epoch + total_elapsed_seconds
        end as rolling_until_epoch
    from with_total

)

select * from with_grid_end
