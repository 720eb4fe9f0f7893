{#
  The two marts a user reads Badput from must agree: per run, the breakdown's
  buckets that the catalogue (seeds/badput_types.csv) says count against
  Goodput add up to fct_goodput_cumulative's badput_seconds. A bucket whose
  counting rule differs between the seed and the models shows up here.
#}

with

breakdown as (

    select
        run_id,
        sum(case when counts_against_goodput then badput_seconds else 0 end) as counted_badput_seconds
    from {{ ref('fct_badput_breakdown') }}
    group by run_id

),

cumulative as (

    select run_id, badput_seconds
    from {{ ref('fct_goodput_cumulative') }}

)

select
    cumulative.run_id,
    cumulative.badput_seconds,
    breakdown.counted_badput_seconds
from cumulative
left join breakdown
    on breakdown.run_id = cumulative.run_id
where abs(coalesce(breakdown.counted_badput_seconds, 0) - coalesce(cumulative.badput_seconds, 0)) > 1e-6
