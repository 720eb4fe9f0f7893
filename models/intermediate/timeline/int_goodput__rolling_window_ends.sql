{{ config(**goodput_incremental_by_run('evaluated')) }}
{{ goodput_check_incremental_state() }}
{#
  One row per run with elapsed time: where its rolling grid starts and ends.
  Window ends sit on multiples of rolling_grid_seconds (UTC epoch seconds),
  from the first after the job start to the first at or after
  rolling_until_epoch (the job end or evaluation time; for a stalled run, no
  later than its last entry plus the largest window: see
  int_goodput__run_totals). final_segment_no is the run's segment at this
  build, which the incremental rolling build compares with the last one.
#}

{% set grid = var('rolling_grid_seconds') | int %}

with

totals as (

    select * from {{ ref('int_goodput__run_totals') }}
    where {{ goodput_run_is_rebuilt() }}
        and total_elapsed_seconds > 0

),

final_segments as (

    select
        run_id,
        max(segment_no) as final_segment_no
    from {{ ref('int_goodput__segments') }}
    where {{ goodput_run_is_rebuilt() }}
    group by run_id

),

final as (

    select
        totals.run_id,
        totals.elapsed_origin_epoch,
        cast(floor(totals.elapsed_origin_epoch / {{ grid }}) + 1 as {{ dbt.type_bigint() }}) * {{ grid }}
            as first_window_end_epoch,
        cast(ceil(totals.rolling_until_epoch / {{ grid }}) as {{ dbt.type_bigint() }}) * {{ grid }}
            as last_window_end_epoch,
        coalesce(final_segments.final_segment_no, 0) as final_segment_no
    from totals
    left join final_segments
        on final_segments.run_id = totals.run_id

)

select * from final
