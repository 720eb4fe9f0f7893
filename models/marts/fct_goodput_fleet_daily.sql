{#
  One row per UTC day: the fleet's day, summed over every run with a valid
  Goodput (fct_goodput_cumulative.is_valid) that ran that day, from
  fct_goodput_daily. Goodput % is time weighted (the fleet's productive over
  its elapsed seconds), not a mean of the runs' percentages. The latest day
  is open while any run is running. Rebuilt whole at each build from the
  per-run days (a few rows per run and day).
#}

with

valid_runs as (

    select run_id from {{ ref('fct_goodput_cumulative') }}
    where is_valid

),

run_days as (

    select daily.*
    from {{ ref('fct_goodput_daily') }} as daily
    inner join valid_runs
        on valid_runs.run_id = daily.run_id

)

select
    day,
    count(*) as runs,
    sum(case when is_open then 1 else 0 end) as running_runs,
    sum(elapsed_seconds) as elapsed_seconds,
    sum(productive_seconds) as productive_seconds,
    case
        when sum(elapsed_seconds) > 0 then sum(productive_seconds) / sum(elapsed_seconds) * 100
    end as goodput_pct,
    sum(badput_seconds) as badput_seconds,
    sum(disruptions) as disruptions,
    max(case when is_open then 1 else 0 end) = 1 as is_open
from run_days
group by day
