{#
  Cumulative value of every measure of int_goodput__timeline_curves at given
  offsets: a select to put in a CTE.

  points: a relation or CTE with (run_id, at_offset), offsets in seconds
  since the run's elapsed origin, at most its total elapsed time, distinct.
  Returns run_id, measure, custom_badput_event_type, at_offset,
  cumulative_amount; COUNTED comes back as OTHER (the slack that stays after
  every later overlap is paid for, see int_goodput__timeline_curves).
  Offsets at or before 0 are 0 for every measure.

  method='sweep' (many points, e.g. a grid): every point against every
  breakpoint in one ordered pass (goodput_last_breakpoints: an ASOF join on
  DuckDB, a window sweep on BigQuery), so the cost is a sort of breakpoints
  + points, not a join of one against the other.
  method='lookup' (a few points per run): each point finds its last
  breakpoint by a join and a max, with no sort of the whole curve.
  Either way only the breakpoints a point can land on take part
  (goodput_reachable_breakpoints): the latest windows of a run of 80 days
  join 6 % of its curve (2.4 s -> 1.2 s at L), and an hourly build's rolling
  grid, 5 days and an hour of it, sorts 7 % of it (ASOF join 1.7 -> 0.2 s).
  points_cover_runs=true reads the curves given whole: each run's points
  start at its origin (the daily values), so every breakpoint is reachable
  and the reduction would be an extra pass over the curves (1.1 -> 1.25 s at
  L), or the caller kept the reachable ones already (the rolling grid, before
  goodput_last_breakpoints_per_step). The values are the same either way;
  only the cost differs.
#}

{% macro goodput_measures_at(points, curves, method='sweep', points_cover_runs=false) -%}

    {% if method not in ('sweep', 'lookup') %}
    {{ exceptions.raise_compiler_error("goodput_measures_at: method must be 'sweep' or 'lookup', got " ~ method) }}
    {% endif %}
    select
        run_id,
        {{ goodput_reported_measure('measure') }} as measure,
        custom_badput_event_type,
        at_offset,
        {{ goodput_curve_value() }} as cumulative_amount
    from (
        {% if method == 'sweep' %}
        {{ goodput_last_breakpoints(points, curves, points_cover_runs) }}
        {% else %}
        {{ goodput_lookup_breakpoints(points, curves, points_cover_runs) }}
        {% endif %}
    ) as last_breakpoints

{%- endmacro %}


{#- The last breakpoint at or before each of a few points: a join and a max per
    point and measure, no sort of the whole curve. -#}
{% macro goodput_lookup_breakpoints(points, curves, points_cover_runs=false) -%}
    select
        last_breakpoints.run_id,
        last_breakpoints.measure,
        last_breakpoints.custom_badput_event_type,
        last_breakpoints.at_offset,
        curves.at_offset as breakpoint_offset,
        curves.value_at as breakpoint_value,
        curves.slope_after as breakpoint_slope,
        {{ goodput_future_min('curves.next_future_min') }} as carried_future_min
    from (
        select
            points.run_id,
            curves.measure,
            curves.custom_badput_event_type,
            points.at_offset,
            max(case when curves.at_offset <= points.at_offset then curves.at_offset end)
                as last_breakpoint_offset
        from {{ points }} as points
        inner join {{ goodput_breakpoints_for(points, curves, points_cover_runs) }} as curves
            on curves.run_id = points.run_id
        group by points.run_id, curves.measure, curves.custom_badput_event_type, points.at_offset
    ) as last_breakpoints
    left join {{ curves }} as curves
        on curves.run_id = last_breakpoints.run_id
        and curves.measure = last_breakpoints.measure
        and curves.custom_badput_event_type = last_breakpoints.custom_badput_event_type
        and curves.at_offset = last_breakpoints.last_breakpoint_offset
{%- endmacro %}


{#- The columns of int_goodput__timeline_curves, for the macros that pass a
    subset of its rows on as a curve of its own. -#}
{% macro goodput_curve_columns() -%}
  {{ return(['run_id', 'measure', 'custom_badput_event_type', 'at_offset', 'value_at', 'slope_after',
             'next_future_min']) }}
{%- endmacro %}

{#- The breakpoints of the points' runs that a point can land on: those at or
    after the run's first point, and each measure's last one before it (for
    a point p at or after the first point, the last breakpoint at or before p
    is one or the other; every measure keeps one, so a measure with none
    before p still comes back as none). Every column of curves'. -#}
{% macro goodput_reachable_breakpoints(points, curves) -%}
    {%- set first_points = "(select run_id, min(at_offset) as at_offset from " ~ points ~ " group by run_id)" -%}
    {%- set select_list = "curves." ~ goodput_curve_columns() | join(", curves.") -%}
    select {{ select_list }}
    from {{ curves }} as curves
    inner join {{ first_points }} as first_points
        on first_points.run_id = curves.run_id
    where curves.at_offset >= first_points.at_offset

    union all

    select {{ select_list }}
    from {{ curves }} as curves
    inner join (
        select curves.run_id, curves.measure, curves.custom_badput_event_type, max(curves.at_offset) as at_offset
        from {{ curves }} as curves
        inner join {{ first_points }} as first_points
            on first_points.run_id = curves.run_id
        where curves.at_offset < first_points.at_offset
        group by curves.run_id, curves.measure, curves.custom_badput_event_type
    ) as last_before
        on last_before.run_id = curves.run_id
        and last_before.measure = curves.measure
        and last_before.custom_badput_event_type = curves.custom_badput_event_type
        and last_before.at_offset = curves.at_offset
{%- endmacro %}


{#- The breakpoints a sweep or lookup reads: the reachable ones, or the whole
    curves when the caller's points start at each run's origin. -#}
{% macro goodput_breakpoints_for(points, curves, points_cover_runs) -%}
    {%- if points_cover_runs -%}
    {{ curves }}
    {%- else -%}
    ({{ goodput_reachable_breakpoints(points, curves) }})
    {%- endif -%}
{%- endmacro %}


{#- OTHER's slack, defined here and only here: S(x) = x - COUNTED(x) (elapsed
    time not yet claimed by productive time or a counted bucket), and OTHER up
    to x = max(0, min(S(x), the lowest S after x)). int_goodput__timeline_curves
    stores that lowest later S per breakpoint as next_future_min (null after
    the last breakpoint); goodput_future_min reads it, "no later breakpoint"
    being a minimum over nothing: +inf, spelled 1e300 (both warehouses' floats
    hold it, and any real slack is below it). -#}
{% macro goodput_future_min(next_future_min) -%}
    coalesce({{ next_future_min }}, 1e300)
{%- endmacro %}

{#- The measure a curve's values are reported under: the COUNTED curve's values
    are OTHER's (goodput_curve_value turns one into the other). -#}
{% macro goodput_reported_measure(measure) -%}
    case when {{ measure }} = 'COUNTED' then 'OTHER' else {{ measure }} end
{%- endmacro %}

{#- C(at_offset) from the last breakpoint at or before it (columns breakpoint_*,
    carried_future_min); COUNTED becomes OTHER = max(0, min(S here, min S after)). -#}
{% macro goodput_curve_value() -%}
        case
            when at_offset <= 0 or breakpoint_offset is null then 0
            when measure = 'COUNTED'
                then greatest(
                    0,
                    least(
                        at_offset - (breakpoint_value + breakpoint_slope * (at_offset - breakpoint_offset)),
                        carried_future_min
                    )
                )
            else breakpoint_value + breakpoint_slope * (at_offset - breakpoint_offset)
        end
{%- endmacro %}



{#- For every point and every measure of its run: the last breakpoint at or
    before it (breakpoint_offset/_value/_slope and carried_future_min, all null
    when there is none). DuckDB: an ASOF join (sort-merge, 1.9 s for 4M
    points against 4.4M breakpoints where the portable sweep took about 7 s).
    BigQuery has no ASOF join: the sweep merges the points into the
    breakpoints in offset order and carries the last one forward. -#}
{% macro goodput_last_breakpoints(points, curves, points_cover_runs=false) -%}
  {{ return(adapter.dispatch('goodput_last_breakpoints', 'goodput_warehouse')(points, curves, points_cover_runs)) }}
{%- endmacro %}

{% macro default__goodput_last_breakpoints(points, curves, points_cover_runs) -%}
    select
        measures.run_id,
        measures.measure,
        measures.custom_badput_event_type,
        points.at_offset,
        curves.at_offset as breakpoint_offset,
        curves.value_at as breakpoint_value,
        curves.slope_after as breakpoint_slope,
        {{ goodput_future_min('curves.next_future_min') }} as carried_future_min
    from {{ points }} as points
    inner join (
        select distinct run_id, measure, custom_badput_event_type from {{ curves }}
    ) as measures
        on measures.run_id = points.run_id
    asof left join {{ goodput_breakpoints_for(points, curves, points_cover_runs) }} as curves
        on curves.run_id = measures.run_id
        and curves.measure = measures.measure
        and curves.custom_badput_event_type = measures.custom_badput_event_type
        and curves.at_offset <= points.at_offset
{%- endmacro %}

{% macro bigquery__goodput_last_breakpoints(points, curves, points_cover_runs) -%}
    select *
    from (
        select
            merged.*,
            last_value(curve_offset ignore nulls) over sweep as breakpoint_offset,
            last_value(value_at ignore nulls) over sweep as breakpoint_value,
            last_value(slope_after ignore nulls) over sweep as breakpoint_slope,
            last_value(case when curve_offset is not null then {{ goodput_future_min('next_future_min') }} end ignore nulls)
                over sweep as carried_future_min
        from (

            select
                run_id,
                measure,
                custom_badput_event_type,
                at_offset,
                0 as is_point,
                at_offset as curve_offset,
                value_at,
                slope_after,
                next_future_min
            from {{ goodput_breakpoints_for(points, curves, points_cover_runs) }} as reachable
            {%- if points_cover_runs %}
            {#- the whole curves: only the points' runs (the reachable ones are already) #}
            where run_id in (select run_id from {{ points }})
            {%- endif %}

            union all

            select
                points.run_id,
                measures.measure,
                measures.custom_badput_event_type,
                points.at_offset,
                1,
                null,
                null,
                null,
                null
            from {{ points }} as points
            inner join (
                select distinct run_id, measure, custom_badput_event_type from {{ curves }}
                where run_id in (select run_id from {{ points }})
            ) as measures
                on measures.run_id = points.run_id

        ) as merged
        window sweep as (
            partition by run_id, measure, custom_badput_event_type
            order by at_offset, is_point
            rows between unbounded preceding and current row
        )
    ) as swept
    where is_point = 1
{%- endmacro %}


{#- The breakpoints a read at grid points can land on, when every point is a
    multiple of step (UTC epoch seconds) read at its offset from the run's
    origin as goodput_window_bounds computes it (clamped to the run, or 0):
    each measure's last breakpoint in each step. The last breakpoint at or
    before a grid point is the last of its own step or of an earlier one, and
    a point clamped to the run's end comes after every breakpoint; so the
    values read are the same, and the sweep sorts one breakpoint per measure
    and step instead of every one (a curve has ~10 per minute where steps
    take 6 s: the daily values at L 1.1 -> 0.45 s). A breakpoint's step is
    found by dividing its epoch, which can round across a multiple of step,
    so the guess is checked against the offsets either side of it. Every
    column of curves'; totals: (run_id, elapsed_origin_epoch). -#}
{% macro goodput_last_breakpoints_per_step(curves, totals, step) -%}
    {%- set step = step | int -%}
    {%- set guess = 'cast(ceil((curves.at_offset + totals.elapsed_origin_epoch) / ' ~ step ~ ') as '
                    ~ dbt.type_bigint() ~ ') * ' ~ step -%}
    {#- written out twice below rather than as a WITH inside the subquery: the same time on DuckDB at L
        (2.84-2.94 s either way), and no nested WITH for BigQuery -#}
    {%- set stepped -%}
        select
            curves.*,
            case
                when {{ guess }} - {{ step }} - totals.elapsed_origin_epoch >= curves.at_offset
                    then {{ guess }} - {{ step }}
                when {{ guess }} - totals.elapsed_origin_epoch >= curves.at_offset then {{ guess }}
                else {{ guess }} + {{ step }}
            end as step_end_epoch
        from {{ curves }} as curves
        inner join {{ totals }} as totals
            on totals.run_id = curves.run_id
    {%- endset %}
    select {{ 'stepped.' ~ goodput_curve_columns() | join(', stepped.') }}
    from ({{ stepped }}) as stepped
    inner join (
        select run_id, measure, custom_badput_event_type, step_end_epoch, max(at_offset) as at_offset
        from ({{ stepped }}) as stepped
        group by run_id, measure, custom_badput_event_type, step_end_epoch
    ) as last_of_step
        on last_of_step.run_id = stepped.run_id
        and last_of_step.measure = stepped.measure
        and last_of_step.custom_badput_event_type = stepped.custom_badput_event_type
        and last_of_step.step_end_epoch = stepped.step_end_epoch
        and last_of_step.at_offset = stepped.at_offset
{%- endmacro %}
