{#
  One row per UTC day and Badput bucket (custom events one row per type):
  where the fleet's time went that day, summed over the runs of
  fct_goodput_fleet_daily (valid runs), as seconds and as a share of the
  fleet's elapsed seconds that day.
#}

with

valid_runs as (

    select run_id from {{ ref('fct_goodput_cumulative') }}
    where is_valid

),

fleet_days as (

    select * from {{ ref('fct_goodput_fleet_daily') }}

),

bucket_days as (

    select
        daily.day,
        daily.badput_type,
        daily.custom_badput_event_type,
        daily.gcm_badput_source,
        daily.badput_type_id,
        daily.counts_against_goodput,
        sum(daily.badput_seconds) as badput_seconds
    from {{ ref('fct_badput_daily') }} as daily
    inner join valid_runs
        on valid_runs.run_id = daily.run_id
    group by
        daily.day,
        daily.badput_type,
        daily.custom_badput_event_type,
        daily.gcm_badput_source,
        daily.badput_type_id,
        daily.counts_against_goodput

)

select
    bucket_days.day,
    bucket_days.badput_type,
    bucket_days.custom_badput_event_type,
    bucket_days.gcm_badput_source,
    bucket_days.badput_type_id,
    bucket_days.counts_against_goodput,
    bucket_days.badput_seconds,
    case
        when fleet_days.elapsed_seconds > 0 then bucket_days.badput_seconds / fleet_days.elapsed_seconds * 100
    end as badput_pct,
    fleet_days.elapsed_seconds
from bucket_days
inner join fleet_days
    on fleet_days.day = bucket_days.day
