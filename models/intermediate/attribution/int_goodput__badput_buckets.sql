{{ config(**goodput_incremental_by_run('evaluated')) }}
{{ goodput_check_incremental_state() }}
{#
  Every Badput bucket of every run in long form (custom events one row per
  type), sanitised as the library does: a value below zero or above the total
  elapsed time becomes 0 (and is flagged). OTHER = total - productive - every
  bucket that counts against Goodput, never negative. Which buckets exist,
  whether each counts, their order and their Cloud Monitoring label come from
  the Badput catalogue (seed badput_types); this model only maps each bucket
  to the run_totals column that computes it.
#}

with

badput_types as (

    select * from {{ ref('badput_types') }}

),

totals as (

    select * from {{ ref('int_goodput__run_totals') }}
    where {{ goodput_run_is_rebuilt() }}

),

custom as (

    select
        run_id,
        custom_badput_event_type,
        sum(duration_seconds) as badput_seconds
    from {{ ref('int_goodput__custom_badput_in_steps') }}
    where {{ goodput_run_is_rebuilt() }}
    group by run_id, custom_badput_event_type

),

{% set buckets = [
    ('TPU_INITIALIZATION', 'tpu_initialization_seconds'),
    ('TRAINING_PREP', 'training_prep_seconds'),
    ('PROGRAM_STARTUP', 'program_startup_seconds'),
    ('DATA_LOADING_SYNC', 'data_loading_sync_seconds'),
    ('DATA_LOADING_ASYNC', 'data_loading_async_seconds'),
    ('UNPRODUCTIVE_CHECKPOINT_SAVE_TIME', 'checkpoint_save_seconds'),
    ('UNPRODUCTIVE_CHECKPOINT_RESTORE_TIME', 'checkpoint_restore_seconds'),
    ('WASTED_PROGRESS_FROM_DISRUPTION', 'wasted_progress_seconds'),
    ('INFRASTRUCTURE_RECOVERY_FROM_DISRUPTION', 'infrastructure_recovery_seconds'),
] %}

unpivoted as (

    {% for badput_type, column in buckets %}
    select
        run_id,
        '{{ badput_type }}' as badput_type,
        cast(null as {{ dbt.type_string() }}) as custom_badput_event_type,
        {{ column }} as raw_seconds
    from totals
    union all
    {% endfor %}
    select
        custom.run_id,
        'CUSTOM_BADPUT_EVENTS' as badput_type,
        custom.custom_badput_event_type,
        custom.badput_seconds as raw_seconds
    from custom

),

sanitized as (

    select
        unpivoted.run_id,
        unpivoted.badput_type,
        unpivoted.custom_badput_event_type,
        unpivoted.raw_seconds,
        totals.total_elapsed_seconds,
        (unpivoted.raw_seconds < 0 or unpivoted.raw_seconds > totals.total_elapsed_seconds) as was_sanitized,
        case
            when unpivoted.raw_seconds < 0 or unpivoted.raw_seconds > totals.total_elapsed_seconds then 0
            else unpivoted.raw_seconds
        end as badput_seconds
    from unpivoted
    inner join totals
        on totals.run_id = unpivoted.run_id
    where totals.total_elapsed_seconds is not null

),

counted as (

    select
        sanitized.run_id,
        sum(sanitized.badput_seconds) as counted_seconds
    from sanitized
    inner join badput_types
        on badput_types.badput_type = sanitized.badput_type
    where badput_types.counts_against_goodput
    group by sanitized.run_id

),

other as (

    select
        totals.run_id,
        'OTHER' as badput_type,
        cast(null as {{ dbt.type_string() }}) as custom_badput_event_type,
        totals.total_elapsed_seconds - totals.productive_seconds - coalesce(counted.counted_seconds, 0)
            as raw_seconds,
        totals.total_elapsed_seconds,
        false as was_sanitized,
        greatest(0, totals.total_elapsed_seconds - totals.productive_seconds - coalesce(counted.counted_seconds, 0))
            as badput_seconds
    from totals
    inner join (select distinct run_id from sanitized) as bucketed
        on bucketed.run_id = totals.run_id
    left join counted
        on counted.run_id = totals.run_id

),

buckets as (

    select * from sanitized
    union all
    select * from other

),

-- a bucket missing from the catalogue keeps null catalogue columns and fails the relationships test
final as (

    select
        buckets.run_id,
        buckets.badput_type,
        buckets.custom_badput_event_type,
        buckets.raw_seconds,
        buckets.total_elapsed_seconds,
        buckets.was_sanitized,
        buckets.badput_seconds,
        badput_types.badput_type_id,
        badput_types.counts_against_goodput,
        badput_types.exported_to_gcm,
        {{ goodput_gcm_badput_source('buckets.badput_type', 'buckets.custom_badput_event_type') }}
            as gcm_badput_source
    from buckets
    left join badput_types
        on badput_types.badput_type = buckets.badput_type

)

select * from final
