{{ config(**goodput_incremental_by_run('new_entries', appends_by='event_seq', keyed=true)) }}
{{ goodput_check_incremental_state() }}
{#
  The entries the library counts (severity INFO, job_name = run), numbered in
  the order it processes them: (timestamp, insertId) ascending per run.
  A run whose new entries all follow its stored ones keeps its numbers, and
  the new entries are numbered on from its stored last entry.
#}

with

appended_runs as (

    select * from {{ goodput_appended_runs() }} as appended_runs

),

whole_runs_events as (

    select * from {{ ref('stg_goodput__events') }}
    where {{ goodput_run_is_rebuilt('run_id', name_column='run_name', part='whole') }}

),

appended_events as (

    select events.*
    from {{ ref('stg_goodput__events') }} as events
    inner join appended_runs
        on appended_runs.run_id = events.run_id
    where {{ goodput_run_is_rebuilt('events.run_id', name_column='events.run_name', part='appended') }}
        and {{ goodput_at_or_after_appended_runs('events.entry_at') }}
        and {{ goodput_entry_sorts_after('events.entry_at', 'events.insert_id',
                                         'appended_runs.appends_after_entry_at', 'appended_runs.appends_after_insert_id') }}

),

events as (

    select * from whole_runs_events
    union all
    select * from appended_events

),

counted as (

    select
        events.run_id,
        project_id,
        run_name,
        coalesce(appended_runs.appends_after_seq, 0)
            + row_number() over (partition by events.run_id order by entry_at, insert_id) as event_seq,
        event_kind,
        entry_at,
        event_epoch,
        insert_id,
        job_start_epoch,
        job_end_epoch,
        step_count,
        step_start_epoch,
        tpu_init_start_epoch,
        tpu_init_end_epoch,
        training_prep_start_epoch,
        training_prep_end_epoch,
        data_loading_start_epoch,
        data_loading_end_epoch,
        custom_badput_event_type,
        custom_badput_start_epoch,
        custom_badput_end_epoch,
        checkpoint_event_type,
        checkpoint_step,
        checkpoint_directory,
        checkpoint_manager_blocking_seconds,
        checkpoint_manager_seconds,
        active_slices,
        total_slices,
        available_slices,
        elastic_slice_counts_epoch,
        elastic_wait_event_type,
        elastic_wait_start_epoch,
        elastic_wait_end_epoch,
        elastic_reinit_start_epoch,
        elastic_reinit_end_epoch
    from events
    left join appended_runs
        on appended_runs.run_id = events.run_id
    where is_counted

)

{{ goodput_select_keyed_by_run('counted') }}
