{#
  One row per run with exclusion windows and Badput bucket (custom events one
  row per type): the breakdown get_job_goodput_with_exclusions returns, in
  seconds and in % of the adjusted total. Sanitised as the library does (a
  value below 0 or above the adjusted total becomes 0); OTHER = adjusted total
  - productive - every counted bucket, never negative; a share is 0 unless
  strictly between 0 and the total. A run whose whole time is excluded has no
  rows (the library returns an empty breakdown). An elastic run also has the
  three ELASTIC_* rows, at 0: ElasticGoodputCalculator lists them on this
  path but its exclusion loop accumulates no elastic time.
#}

with

badput_types as (

    select * from {{ ref('badput_types') }}

),

totals as (

    select * from {{ ref('int_goodput__exclusion_totals') }}
    where adjusted_total_seconds > 0

),

custom_types as (

    select distinct
        events.run_id,
        events.interval_subtype as custom_badput_event_type
    from {{ ref('int_goodput__paired_intervals') }} as events
    inner join totals
        on totals.run_id = events.run_id
        {# the library's custom dict exists once some segment has a productive step #}
        and totals.has_productive_steps
    where events.interval_kind = 'custom_badput'

),

custom as (

    select
        custom_types.run_id,
        custom_types.custom_badput_event_type,
        coalesce(sum(custom_in_steps.custom_seconds), 0) as badput_seconds
    from custom_types
    left join {{ ref('int_goodput__exclusion_custom_in_steps') }} as custom_in_steps
        on custom_in_steps.run_id = custom_types.run_id
        and custom_in_steps.custom_badput_event_type = custom_types.custom_badput_event_type
    group by custom_types.run_id, custom_types.custom_badput_event_type

),

unpivoted as (

    {{ goodput_badput_unpivoted('totals', 'custom', elastic=true) }}

),

sanitized as (

    {{ goodput_badput_sanitized('unpivoted', 'totals', 'adjusted_total_seconds') }}

),

other as (

    {{ goodput_badput_other('sanitized', 'totals', 'adjusted_total_seconds', 'badput_types') }}

),

buckets as (

    select * from sanitized
    union all
    select * from other

),

final as (

    select
        buckets.run_id,
        totals.project_id,
        totals.run_name,
        buckets.badput_type,
        buckets.custom_badput_event_type,
        badput_types.badput_type_id,
        badput_types.counts_against_goodput,
        buckets.raw_seconds,
        buckets.badput_seconds,
        {{ goodput_badput_share('buckets.badput_seconds', 'totals.adjusted_total_seconds') }} as badput_pct,
        {{ goodput_gcm_badput_source('buckets.badput_type', 'buckets.custom_badput_event_type') }}
            as gcm_badput_source
    from buckets
    inner join totals
        on totals.run_id = buckets.run_id
    left join badput_types
        on badput_types.badput_type = buckets.badput_type

)

select * from final
