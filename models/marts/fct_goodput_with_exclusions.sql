{#
  One row per run with exclusion windows: what
  GoodputCalculator.get_job_goodput_with_exclusions(windows) returns for it
  (the windows: int_goodput__exclusion_windows) — Goodput over the adjusted
  total, the last productive step, the excluded seconds — and what it leaves in
  its cache (productive, adjusted total, disruptions). Runs without exclusion
  windows are not here: their Goodput is fct_goodput_cumulative's.

  The library never raises on this path. Where the whole time is excluded it
  returns Goodput 0 (goodput_pct 0, is_all_excluded); and it does not check the
  productive time against the total, so Goodput can leave [0, 100] % (two
  overlapping spans are excluded twice: is_goodput_in_range says whether it
  stayed inside).
#}

with

totals as (

    select * from {{ ref('int_goodput__exclusion_totals') }}

),

windows as (

    select
        run_id,
        count(*) as exclusion_windows,
        sum(declared_windows) as declared_windows,
        sum(end_epoch - start_epoch) as window_seconds,
        {{ dbt.listagg('reasons', "'; '", 'order by window_no') }} as reasons
    from {{ ref('int_goodput__exclusion_windows') }}
    group by run_id

),

badput as (

    select
        run_id,
        sum(case when counts_against_goodput then badput_seconds else 0 end) as badput_seconds,
        max(case when badput_type = 'OTHER' then badput_seconds end) as other_seconds
    from {{ ref('fct_badput_with_exclusions') }}
    group by run_id

),

final as (

    select
        totals.run_id,
        totals.project_id,
        totals.run_name,
        windows.exclusion_windows,
        windows.declared_windows,
        windows.window_seconds as exclusion_window_seconds,
        windows.reasons as exclusion_reasons,
        totals.raw_total_seconds,
        totals.excluded_seconds,
        totals.adjusted_total_seconds,
        totals.productive_seconds,
        case
            when totals.adjusted_total_seconds = 0 then 0.0
            else totals.productive_seconds / totals.adjusted_total_seconds * 100
        end as goodput_pct,
        coalesce(badput.badput_seconds, 0) as badput_seconds,
        badput.other_seconds,
        totals.max_productive_step,
        totals.disruptions,
        totals.adjusted_total_seconds = 0 as is_all_excluded,
        totals.adjusted_total_seconds > 0
            and totals.productive_seconds >= 0
            and totals.productive_seconds <= totals.adjusted_total_seconds as is_goodput_in_range
    from totals
    inner join windows
        on windows.run_id = totals.run_id
    left join badput
        on badput.run_id = totals.run_id

)

select * from final
