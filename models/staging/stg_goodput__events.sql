{{ config(goodput_tested_runs='landed_since_last_build',
          materialized='table' if goodput_library_window_mode() else 'view') }}
{#
  One typed row per landed entry. Renaming and typing only: every key the
  recorder or Orbax's checkpoint logger writes becomes a column (epoch seconds
  stay float64, exactly as written, for the arithmetic downstream), plus the
  entry's event kind and event time for people reading the table. The entries
  come from the source var('goodput_source') names (macros/sources).

  A view: each build reads only what it needs of it (the new entries' runs).
  A window build (macros/library_windows) makes it a table of the windows'
  entries instead: finding them reads the time in every landed payload, which
  its three readers would otherwise do each (at L 3.3M payloads, 0.8 s a read).
#}

with

source as (

    {{ goodput_landed_entries() }}

),

{% set payload_keys = [
    'job_start_time',
    'job_end_time',
    'step_count',
    'step_start_time',
    'tpu_init_start_time',
    'tpu_init_end_time',
    'training_prep_start_time',
    'training_prep_end_time',
    'data_loading_start_time',
    'data_loading_end_time',
    'custom_badput_event_type',
    'custom_badput_event_start_time',
    'custom_badput_event_end_time',
    'event_type',
    'step',
    'directory',
    'checkpoint_manager_blocking_start_time',
    'checkpoint_manager_blocking_duration_secs',
    'checkpointer_blocking_duration_secs',
    'wait_for_prev_duration_secs',
    'get_old_steps_duration_secs',
    'checkpoint_manager_start_time',
    'checkpoint_manager_duration_secs',
    'checkpointer_duration_secs',
    'broadcast_duration_secs',
    'active_slices',
    'total_slices',
    'available_slices',
    'elastic_slice_counts_timestamp',
    'elastic_wait_event_type',
    'elastic_wait_start_time',
    'elastic_wait_end_time',
    'elastic_reinit_start_time',
    'elastic_reinit_end_time',
] %}

parsed as (

    select
        *,
        {{ goodput_json_fields('payload', payload_keys) }} as fields
    from source

),

typed as (

    select
        log_name,
        -- a run is (project, run name): the same name in two projects is two runs
        {{ dbt.split_part('log_name', "'/'", 2) }} as project_id,
        run_name,
        insert_id,
        {{ adapter.quote('timestamp') }} as entry_at,
        receive_timestamp as received_at,
        severity,
        source as loader_source,
        loaded_at,
        job_name_matches,
        -- read on its own, not from fields: entries_ordered filters on it (is_counted), and a filter that
        -- needed fields would parse every payload twice, once to filter and once to project
        {{ goodput_json_path_string('payload', 'job_name') }} as job_name,

        -- GoodputRecorder events
        {{ goodput_json_number('fields', 'job_start_time') }} as job_start_epoch,
        {{ goodput_json_number('fields', 'job_end_time') }} as job_end_epoch,
        {{ goodput_json_integer('fields', 'step_count') }} as step_count,
        {{ goodput_json_number('fields', 'step_count') }} as step_count_number,
        {{ goodput_json_number('fields', 'step_start_time') }} as step_start_epoch,
        {{ goodput_json_number('fields', 'tpu_init_start_time') }} as tpu_init_start_epoch,
        {{ goodput_json_number('fields', 'tpu_init_end_time') }} as tpu_init_end_epoch,
        {{ goodput_json_number('fields', 'training_prep_start_time') }} as training_prep_start_epoch,
        {{ goodput_json_number('fields', 'training_prep_end_time') }} as training_prep_end_epoch,
        {{ goodput_json_number('fields', 'data_loading_start_time') }} as data_loading_start_epoch,
        {{ goodput_json_number('fields', 'data_loading_end_time') }} as data_loading_end_epoch,
        upper({{ goodput_json_string('fields', 'custom_badput_event_type') }}) as custom_badput_event_type,
        {{ goodput_json_number('fields', 'custom_badput_event_start_time') }} as custom_badput_start_epoch,
        {{ goodput_json_number('fields', 'custom_badput_event_end_time') }} as custom_badput_end_epoch,

        -- Orbax checkpoint logger records
        {{ goodput_json_string('fields', 'event_type') }} as raw_event_type,
        {{ goodput_json_integer('fields', 'step') }} as checkpoint_step,
        {{ goodput_json_number('fields', 'step') }} as checkpoint_step_number,
        {{ goodput_json_string('fields', 'directory') }} as checkpoint_directory,
        {{ goodput_json_number('fields', 'checkpoint_manager_blocking_start_time') }}
            as checkpoint_manager_blocking_start_epoch,
        {{ goodput_json_number('fields', 'checkpoint_manager_blocking_duration_secs') }}
            as checkpoint_manager_blocking_seconds,
        {{ goodput_json_number('fields', 'checkpointer_blocking_duration_secs') }}
            as checkpointer_blocking_seconds,
        {{ goodput_json_number('fields', 'wait_for_prev_duration_secs') }} as wait_for_prev_seconds,
        {{ goodput_json_number('fields', 'get_old_steps_duration_secs') }} as get_old_steps_seconds,
        {{ goodput_json_number('fields', 'checkpoint_manager_start_time') }} as checkpoint_manager_start_epoch,
        {{ goodput_json_number('fields', 'checkpoint_manager_duration_secs') }} as checkpoint_manager_seconds,
        {{ goodput_json_number('fields', 'checkpointer_duration_secs') }} as checkpointer_seconds,
        {{ goodput_json_number('fields', 'broadcast_duration_secs') }} as broadcast_seconds,

        -- ElasticGoodputRecorder records (elastic Pathways jobs): slice counts, waits, re-initialisation
        {%- for key in ['active_slices', 'total_slices', 'available_slices'] %}
        {{ goodput_json_integer('fields', key) }} as {{ key }},
        {{ goodput_json_number('fields', key) }} as {{ key }}_number,
        {%- endfor %}
        {{ goodput_json_number('fields', 'elastic_slice_counts_timestamp') }} as elastic_slice_counts_epoch,
        {{ goodput_json_string('fields', 'elastic_wait_event_type') }} as elastic_wait_event_type,
        {{ goodput_json_number('fields', 'elastic_wait_start_time') }} as elastic_wait_start_epoch,
        {{ goodput_json_number('fields', 'elastic_wait_end_time') }} as elastic_wait_end_epoch,
        {{ goodput_json_number('fields', 'elastic_reinit_start_time') }} as elastic_reinit_start_epoch,
        {{ goodput_json_number('fields', 'elastic_reinit_end_time') }} as elastic_reinit_end_epoch,

        payload

    from parsed

),

{#
  The loader's ranges (goodput_loader/entries.py): epoch seconds in 2000-2099,
  steps 0..2^53, Orbax durations 0..10^7 s, elastic slice counts 0..2^31 (a
  total of at least 1). The loader rejects an entry outside
  them; a log sink delivers it anyway. Such an entry is kept but made inert
  (every value null, event_kind 'implausible'), so it can neither overflow the
  arithmetic nor stretch its run over decades, and fct_goodput_cumulative marks
  its run invalid with the reason. Every other run is computed as usual.
#}
{% set time_columns = [
    'job_start_epoch', 'job_end_epoch', 'step_start_epoch', 'tpu_init_start_epoch', 'tpu_init_end_epoch',
    'training_prep_start_epoch', 'training_prep_end_epoch', 'data_loading_start_epoch',
    'data_loading_end_epoch', 'custom_badput_start_epoch', 'custom_badput_end_epoch',
    'checkpoint_manager_blocking_start_epoch', 'checkpoint_manager_start_epoch',
    'elastic_slice_counts_epoch', 'elastic_wait_start_epoch', 'elastic_wait_end_epoch',
    'elastic_reinit_start_epoch', 'elastic_reinit_end_epoch',
] %}
{% set duration_columns = [
    'checkpoint_manager_blocking_seconds', 'checkpointer_blocking_seconds', 'wait_for_prev_seconds',
    'get_old_steps_seconds', 'checkpoint_manager_seconds', 'checkpointer_seconds', 'broadcast_seconds',
] %}

screened as (

    select
        *,
        case
            {%- for column in time_columns %}
            when not {{ column }} >= 946684800 or not {{ column }} < 4102444800
                then '{{ column }} outside 2000-2099 in epoch seconds'
            {%- endfor %}
            {%- for column in ['step_count_number', 'checkpoint_step_number'] %}
            when not {{ column }} >= 0 or not {{ column }} <= 9007199254740992 or {{ column }} != floor({{ column }})
                then '{{ column | replace("_number", "") }} not an integer in 0..2^53'
            {%- endfor %}
            {%- for column in duration_columns %}
            when not {{ column }} >= 0 or not {{ column }} < 10000000
                then '{{ column }} outside 0..10^7 s'
            {%- endfor %}
            {%- for column, lowest in [('active_slices', 0), ('total_slices', 1), ('available_slices', 0)] %}
            when not {{ column }}_number >= {{ lowest }} or not {{ column }}_number <= 2147483648
                or {{ column }}_number != floor({{ column }}_number)
                then '{{ column }} not an integer in {{ lowest }}..2^31'
            {%- endfor %}
        end as implausible_reason
    from typed

),

inert as (

    select
        * replace (
            {%- for column in time_columns + duration_columns
                + ['step_count', 'checkpoint_step', 'active_slices', 'total_slices', 'available_slices'] %}
            case when implausible_reason is null then {{ column }} end as {{ column }}{{ "," if not loop.last }}
            {%- endfor %}
        )
    from screened

),

classified as (

    select
        *,

        -- What the library reads from this entry, in the order its loop tests the keys.
        case
            when implausible_reason is not null then 'implausible'
            when job_start_epoch is not null then 'job_start'
            when step_start_epoch is not null then 'step_start'
            when job_end_epoch is not null then 'job_end'
            when tpu_init_start_epoch is not null then 'tpu_init_start'
            when tpu_init_end_epoch is not null then 'tpu_init_end'
            when training_prep_start_epoch is not null then 'training_prep_start'
            when training_prep_end_epoch is not null then 'training_prep_end'
            when data_loading_start_epoch is not null then 'data_loading_start'
            when data_loading_end_epoch is not null then 'data_loading_end'
            when custom_badput_start_epoch is not null then 'custom_badput_start'
            when custom_badput_end_epoch is not null then 'custom_badput_end'
            when elastic_slice_counts_epoch is not null then 'elastic_slice_counts'
            when elastic_wait_start_epoch is not null then 'elastic_wait_start'
            when elastic_wait_end_epoch is not null then 'elastic_wait_end'
            when elastic_reinit_start_epoch is not null then 'elastic_reinit_start'
            when elastic_reinit_end_epoch is not null then 'elastic_reinit_end'
            when raw_event_type = 'save' then 'checkpoint_save'
            when raw_event_type = 'restore' then 'checkpoint_restore'
            when raw_event_type = 'emergency_restore' then 'checkpoint_emergency_restore'
            else 'other'
        end as event_kind,

        {# Entries the library's reader returns: severity=INFO and jsonPayload.job_name = the run. #}
        (severity = 'INFO' and coalesce(job_name = run_name, false)) as is_counted,

        coalesce(
            job_start_epoch,
            step_start_epoch,
            job_end_epoch,
            tpu_init_start_epoch,
            tpu_init_end_epoch,
            training_prep_start_epoch,
            training_prep_end_epoch,
            data_loading_start_epoch,
            data_loading_end_epoch,
            custom_badput_start_epoch,
            custom_badput_end_epoch,
            checkpoint_manager_blocking_start_epoch,
            checkpoint_manager_start_epoch,
            elastic_slice_counts_epoch,
            elastic_wait_start_epoch,
            elastic_wait_end_epoch,
            elastic_reinit_start_epoch,
            elastic_reinit_end_epoch
        ) as event_epoch

    from inert

),

final as (

    select
        log_name,
        project_id || '/' || run_name as run_id,
        project_id,
        run_name,
        insert_id,
        entry_at,
        received_at,
        severity,
        loader_source,
        loaded_at,
        job_name,
        job_name_matches,
        is_counted,
        event_kind,
        implausible_reason,
        event_epoch,
        coalesce({{ goodput_epoch_to_timestamp('event_epoch') }}, entry_at) as event_at,
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
        case when event_kind like 'checkpoint_%' then raw_event_type end as checkpoint_event_type,
        checkpoint_step,
        checkpoint_directory,
        checkpoint_manager_blocking_seconds,
        checkpointer_blocking_seconds,
        wait_for_prev_seconds,
        get_old_steps_seconds,
        checkpoint_manager_seconds,
        checkpointer_seconds,
        broadcast_seconds,
        active_slices,
        total_slices,
        available_slices,
        elastic_slice_counts_epoch,
        elastic_wait_event_type,
        elastic_wait_start_epoch,
        elastic_wait_end_epoch,
        elastic_reinit_start_epoch,
        elastic_reinit_end_epoch,
        payload
    from classified

)

select * from final
