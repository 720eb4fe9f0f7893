{{ config(**goodput_incremental_by_run('evaluated')) }}
{{ goodput_check_incremental_state() }}
{#
  Every measure of every run over the windows the library's monitor reports:
  each size in rolling_windows_seconds, ending exactly at the run's end (job
  end, or the evaluation time of a running job), not on the grid.
#}

{% set windows = var('rolling_windows_seconds') %}

with

totals as (

    select * from {{ ref('int_goodput__run_totals') }}
    where {{ goodput_run_is_rebuilt() }}
        and total_elapsed_seconds > 0

),

curves as {{ goodput_cte_read_in_place() }} (

    select * from {{ ref('int_goodput__timeline_curves') }}
    where {{ goodput_run_is_rebuilt(keyed=true) }}

),

window_sizes as (

    {% for size in windows %}
    select {{ size | int }} as window_seconds
    {% if not loop.last %}union all{% endif %}
    {% endfor %}

),

latest_windows as (

    select
        totals.run_id,
        window_sizes.window_seconds,
        totals.elapsed_origin_epoch + totals.total_elapsed_seconds as window_end_epoch
    from totals
    cross join window_sizes

),

latest_bounds as (

    {{ goodput_window_bounds('latest_windows', 'totals') }}

),

latest_points as (

    {{ goodput_window_points('latest_bounds') }}

),

latest_at_points as (

    {{ goodput_measures_at('latest_points', 'curves', method='lookup') }}

),

latest_amounts as (

    {{ goodput_window_amounts('latest_bounds', 'latest_at_points') }}

),

final as (

    select
        latest_amounts.run_id,
        latest_amounts.window_seconds,
        latest_amounts.window_end_epoch,
        latest_bounds.start_offset,
        latest_bounds.end_offset,
        latest_bounds.elapsed_origin_epoch,
        latest_amounts.measure,
        latest_amounts.custom_badput_event_type,
        latest_amounts.window_amount
    from latest_amounts
    inner join latest_bounds
        on latest_bounds.run_id = latest_amounts.run_id
        and latest_bounds.window_seconds = latest_amounts.window_seconds

)

select * from final
