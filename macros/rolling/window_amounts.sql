{#
  What every measure amounts to inside windows, in three selects a model puts
  in its own CTEs (so every CTE name is in the model's text):

      <x>_bounds    as ({{ goodput_window_bounds('<windows>', '<totals>') }}),
      <x>_points    as ({{ goodput_window_points('<x>_bounds') }}),
      <x>_at_points as ({{ goodput_measures_at('<x>_points', '<curves>', method) }}),
      <x>_amounts   as ({{ goodput_window_amounts('<x>_bounds', '<x>_at_points') }})

  windows: a relation or CTE with (run_id, window_seconds, window_end_epoch):
  the window is [window_end_epoch - window_seconds, window_end_epoch]. Each is
  cut at the run's elapsed origin (its first job start) and at its end (job end
  or evaluation time), as the cumulative mart counts time. totals:
  int_goodput__run_totals (or a CTE over it); curves: int_goodput__timeline_curves.
  Runs without elapsed time (no job start) have no rows.
#}

{#- An epoch as an offset on a run's elapsed axis: seconds since its elapsed
    origin (int_goodput__run_totals.elapsed_origin_epoch), cut to [0, upto]
    (its total_elapsed_seconds, or a smaller bound), as the cumulative mart
    counts time. -#}
{% macro goodput_elapsed_offset(epoch, origin, upto) -%}
    least(greatest({{ epoch }} - {{ origin }}, 0), {{ upto }})
{%- endmacro %}


{#- One row per window: its start and end offsets (seconds since the run's
    elapsed origin) and the run's origin and total. -#}
{% macro goodput_window_bounds(windows, totals) -%}
    select
        windows.run_id,
        windows.window_seconds,
        windows.window_end_epoch,
        totals.elapsed_origin_epoch,
        totals.total_elapsed_seconds,
        {{ goodput_elapsed_offset('windows.window_end_epoch', 'totals.elapsed_origin_epoch',
                                  'totals.total_elapsed_seconds') }} as end_offset,
        {{ goodput_elapsed_offset('windows.window_end_epoch - windows.window_seconds', 'totals.elapsed_origin_epoch',
                                  'totals.total_elapsed_seconds') }} as start_offset
    from {{ windows }} as windows
    inner join {{ totals }} as totals
        on totals.run_id = windows.run_id
    where totals.total_elapsed_seconds > 0
{%- endmacro %}


{#- The distinct offsets the curves must be read at: every window's start and
    end after the origin (at or before it every curve is 0). -#}
{% macro goodput_window_points(bounds) -%}
    select distinct run_id, at_offset
    from (
        select run_id, end_offset as at_offset from {{ bounds }}
        union all
        select run_id, start_offset as at_offset from {{ bounds }}
    ) as offsets
    where at_offset > 0
{%- endmacro %}


{#- One row per window and measure: window_amount = C(end) - C(start),
    cumulative_amount = C(end), from the curves read at the points
    (goodput_measures_at, COUNTED read as OTHER). -#}
{% macro goodput_window_amounts(bounds, at_points) -%}
    select
        bounds.run_id,
        bounds.window_seconds,
        bounds.window_end_epoch,
        at_end.measure,
        at_end.custom_badput_event_type,
        coalesce(at_end.cumulative_amount, 0) - coalesce(at_start.cumulative_amount, 0) as window_amount,
        coalesce(at_end.cumulative_amount, 0) as cumulative_amount
    from {{ bounds }} as bounds
    inner join {{ at_points }} as at_end
        on at_end.run_id = bounds.run_id
        and at_end.at_offset = bounds.end_offset
    left join {{ at_points }} as at_start
        on at_start.run_id = bounds.run_id
        and at_start.measure = at_end.measure
        and at_start.custom_badput_event_type = at_end.custom_badput_event_type
        and at_start.at_offset = bounds.start_offset
{%- endmacro %}
