{#
  What every measure amounts to inside windows: CTEs to put in a `with`.

  windows: a relation or CTE with (run_id, window_seconds, window_end_epoch):
  the window is [window_end_epoch - window_seconds, window_end_epoch]. Each is
  cut at the run's elapsed origin (its first job start) and at its end (job end
  or evaluation time), as the cumulative mart counts time.

  Defines `<prefix>_bounds` (one row per window: start/end offsets, elapsed
  seconds) and `<prefix>_amounts` (one row per window and measure:
  window_amount = C(end) - C(start), cumulative_amount = C(end)), where the
  measures are those of int_goodput__located_curves, COUNTED read as OTHER.
  Runs without elapsed time (no job start) have no rows. method: how C is read
  at the points (goodput_measures_at): 'sweep' for many windows a run,
  'lookup' for a few.
#}

{% macro goodput_window_amounts(windows, prefix='window', method='sweep') -%}

{{ prefix }}_bounds as (

    select
        windows.run_id,
        windows.window_seconds,
        windows.window_end_epoch,
        totals.elapsed_origin_epoch,
        totals.total_elapsed_seconds,
        least(
            greatest(windows.window_end_epoch - totals.elapsed_origin_epoch, 0),
            totals.total_elapsed_seconds
        ) as end_offset,
        least(
            greatest(windows.window_end_epoch - windows.window_seconds - totals.elapsed_origin_epoch, 0),
            totals.total_elapsed_seconds
        ) as start_offset
    from {{ windows }} as windows
    inner join {{ ref('int_goodput__run_totals') }} as totals
        on totals.run_id = windows.run_id
    where totals.total_elapsed_seconds > 0

),

{{ prefix }}_points as (

    select distinct run_id, at_offset
    from (
        select run_id, end_offset as at_offset from {{ prefix }}_bounds
        union all
        select run_id, start_offset from {{ prefix }}_bounds
    ) as offsets
    where at_offset > 0

),

{{ prefix }}_at_points as (

    {{ goodput_measures_at(prefix ~ '_points', ref('int_goodput__located_curves'), method) }}

),

{{ prefix }}_amounts as (

    select
        bounds.run_id,
        bounds.window_seconds,
        bounds.window_end_epoch,
        at_end.measure,
        at_end.custom_badput_event_type,
        coalesce(at_end.cumulative_amount, 0) - coalesce(at_start.cumulative_amount, 0) as window_amount,
        coalesce(at_end.cumulative_amount, 0) as cumulative_amount
    from {{ prefix }}_bounds as bounds
    inner join {{ prefix }}_at_points as at_end
        on at_end.run_id = bounds.run_id
        and at_end.at_offset = bounds.end_offset
    left join {{ prefix }}_at_points as at_start
        on at_start.run_id = bounds.run_id
        and at_start.measure = at_end.measure
        and at_start.custom_badput_event_type = at_end.custom_badput_event_type
        and at_start.at_offset = bounds.start_offset

)

{%- endmacro %}
