{{ config(**goodput_incremental_by_run('new_entries')) }}
{{ goodput_check_incremental_state() }}
{#
  UNPRODUCTIVE_CHECKPOINT_SAVE_TIME / RESTORE_TIME exactly as the library's
  CheckpointBadputCalculator reads Orbax records: group by step and storage
  (gs:// = persistent, anything else local), average the checkpoint-manager
  duration within a group (one save logged by several hosts counts once), and
  sum the averages. Each group is located (for the rolling windows) where its
  first record says the operation started.
#}

with

records as (

    select * from {{ ref('int_goodput__entries_ordered') }}
    where {{ goodput_run_is_rebuilt(keyed=true) }}
        and checkpoint_event_type is not null

),

keyed as (

    select
        run_id,
        event_seq,
        case when checkpoint_event_type = 'save' then 'save' else 'restore' end as operation,
        checkpoint_step,
        case when starts_with(checkpoint_directory, 'gs://') then 'persistent' else 'local' end as storage,
        case
            when checkpoint_event_type = 'save' then checkpoint_manager_blocking_seconds
            else checkpoint_manager_seconds
        end as duration_seconds,
        {# the record's start time; a record without one ends at its entry's timestamp #}
        event_epoch as started_epoch,
        {{ goodput_timestamp_to_epoch('entry_at') }} as logged_epoch
    from records

),

per_step as (

    select
        run_id,
        operation,
        checkpoint_step,
        storage,
        sum(duration_seconds) / count(*) as mean_duration_seconds,
        count(*) as occurrences,
        min(event_seq) as first_event_seq,
        min_by(started_epoch, event_seq) as first_started_epoch,
        min_by(logged_epoch, event_seq) as first_logged_epoch
    from keyed
    group by run_id, operation, checkpoint_step, storage

)

select * from per_step
