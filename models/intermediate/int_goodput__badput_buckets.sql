{{ config(materialized='table') }}
{#
  Every Badput bucket of every run in long form (custom events one row per
  type), sanitised as the library does: a value below zero or above the total
  elapsed time becomes 0 (and is flagged). OTHER = total - productive - every
  counted bucket (all but DATA_LOADING_ASYNC), never negative.
#}

with

totals as (

    select * from {{ ref('int_goodput__run_totals') }}

),

custom as (

    select
        run_id,
        custom_badput_event_type,
        sum(duration_seconds) as badput_seconds
    from {{ ref('int_goodput__custom_badput_in_steps') }}
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

other as (

    select
        totals.run_id,
        'OTHER' as badput_type,
        cast(null as {{ dbt.type_string() }}) as custom_badput_event_type,
        totals.total_elapsed_seconds - totals.productive_seconds - counted.counted_seconds as raw_seconds,
        totals.total_elapsed_seconds,
        false as was_sanitized,
        greatest(0, totals.total_elapsed_seconds - totals.productive_seconds - counted.counted_seconds)
            as badput_seconds
    from totals
    inner join (
        select run_id, sum(badput_seconds) as counted_seconds
        from sanitized
        where badput_type != 'DATA_LOADING_ASYNC'
        group by run_id
    ) as counted
        on counted.run_id = totals.run_id

)

select * from sanitized
union all
select * from other
