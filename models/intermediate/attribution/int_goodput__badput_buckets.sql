{{ config(**goodput_incremental_by_run('evaluated')) }}
{{ goodput_check_incremental_state() }}
{#
  Every Badput bucket of every run in long form (custom events one row per
  type), sanitised as the library does: a value below zero or above the total
  elapsed time becomes 0 (and is flagged). OTHER = total - productive - every
  bucket that counts against Goodput, never negative. Which buckets exist,
  whether each counts, their order and their Cloud Monitoring label come from
  the Badput catalogue (seed badput_types); the run_totals column of each
  bucket, the unpivot, sanitising and OTHER are macros/badput/badput_buckets.sql,
  shared with the exclusion path (fct_badput_with_exclusions).

  is_in_library_breakdown: whether the library's breakdown dict holds the
  bucket at all (its monitor writes one badput_time series per key, a key at
  0.0 included, and none for a missing key). TPU init, training prep, async
  data loading, checkpoint save/restore and OTHER are always there; the rest
  only once the computation created them (goodput.py 0.2.3,
  _get_total_productive_and_unproductive_time):
  - DATA_LOADING_SYNC: after a completed data-loading pair;
  - WASTED_PROGRESS_FROM_DISRUPTION: some segment ends at a step other than 0
    (the step a restart repeats, or the final segment's largest step);
  - PROGRAM_STARTUP (and the custom events dict): such a segment also holds a
    productive step interval;
  - INFRASTRUCTURE_RECOVERY_FROM_DISRUPTION: some restart came after a job
    start later than the last step before it;
  - a custom event type: some event of it lies inside a productive step (the
    rows of custom_badput_in_steps, so every custom row here);
  - ELASTIC_SLICE_DOWN, ELASTIC_SCALE_UP, ELASTIC_REINITIALIZATION: rows of
    elastic runs only (ElasticGoodputCalculator; a plain run has no such
    key), in the dict once a pair of its kind was found.
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

segments as (

    select * from {{ ref('int_goodput__segment_startup_and_wasted_progress') }}
    where {{ goodput_run_is_rebuilt() }}

),

restarts as (

    select * from {{ ref('int_goodput__disruptions') }}
    where {{ goodput_run_is_rebuilt() }}

),

data_loading as (

    select run_id, count(*) as completed_pairs
    from {{ ref('int_goodput__data_loading') }}
    where {{ goodput_run_is_rebuilt() }}
    group by run_id

),

segment_ends as (

    select
        segments.run_id,
        segments.productive_intervals,
        case when segments.is_final_segment then segments.max_step else restarts.resume_step end as end_step
    from segments
    left join restarts
        on restarts.run_id = segments.run_id
        and restarts.disruption_no = segments.segment_no + 1

),

segment_keys as (

    select
        run_id,
        max(case when end_step != 0 then 1 else 0 end) = 1 as has_wasted_progress,
        max(case when end_step != 0 and productive_intervals > 0 then 1 else 0 end) = 1 as has_program_startup
    from segment_ends
    group by run_id

),

created_keys as (

    select
        totals.run_id,
        coalesce(data_loading.completed_pairs, 0) > 0 as has_data_loading_sync,
        coalesce(segment_keys.has_wasted_progress, false) as has_wasted_progress,
        coalesce(segment_keys.has_program_startup, false) as has_program_startup,
        totals.infrastructure_recovery_seconds > 0 as has_infrastructure_recovery,
        totals.elastic_slice_down_seconds is not null as has_elastic_slice_down,
        totals.elastic_scale_up_seconds is not null as has_elastic_scale_up,
        totals.elastic_reinitialization_seconds is not null as has_elastic_reinitialization
    from totals
    left join data_loading on data_loading.run_id = totals.run_id
    left join segment_keys on segment_keys.run_id = totals.run_id

),

unpivoted as (

    {{ goodput_badput_unpivoted('totals', 'custom', elastic=true) }}

),

sanitized as (

    {{ goodput_badput_sanitized('unpivoted', 'totals', 'total_elapsed_seconds') }}

),

other as (

    {{ goodput_badput_other('sanitized', 'totals', 'total_elapsed_seconds', 'badput_types') }}

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
        case buckets.badput_type
            when 'DATA_LOADING_SYNC' then created_keys.has_data_loading_sync
            when 'WASTED_PROGRESS_FROM_DISRUPTION' then created_keys.has_wasted_progress
            when 'PROGRAM_STARTUP' then created_keys.has_program_startup
            when 'INFRASTRUCTURE_RECOVERY_FROM_DISRUPTION' then created_keys.has_infrastructure_recovery
            when 'ELASTIC_SLICE_DOWN' then created_keys.has_elastic_slice_down
            when 'ELASTIC_SCALE_UP' then created_keys.has_elastic_scale_up
            when 'ELASTIC_REINITIALIZATION' then created_keys.has_elastic_reinitialization
            else true
        end as is_in_library_breakdown,
        {{ goodput_gcm_badput_source('buckets.badput_type', 'buckets.custom_badput_event_type') }}
            as gcm_badput_source
    from buckets
    left join badput_types
        on badput_types.badput_type = buckets.badput_type
    inner join created_keys
        on created_keys.run_id = buckets.run_id

)

select * from final
