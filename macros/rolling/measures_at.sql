{#
  Cumulative value of every measure of int_goodput__located_curves at given
  offsets: a select to put in a CTE.

  points: a relation or CTE with (run_name, at_offset), offsets in seconds
  since the run's elapsed origin, at most its total elapsed time, distinct.
  Returns run_name, measure, custom_badput_event_type, at_offset,
  cumulative_amount; COUNTED comes back as OTHER (the slack that stays after
  every later overlap is paid for, see int_goodput__located_curves).
  Offsets at or before 0 are 0 for every measure.

  One sweep per (run, measure): the points are merged into the breakpoints in
  offset order and carry the last breakpoint forward (last_value ... ignore
  nulls), so the cost is a sort of breakpoints + points, not a join of one
  against the other.
#}

{% macro goodput_measures_at(points, curves) -%}

    select
        run_name,
        case when measure = 'COUNTED' then 'OTHER' else measure end as measure,
        custom_badput_event_type,
        at_offset,
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
        end as cumulative_amount
    from (

        select
            merged.*,
            last_value(curve_offset ignore nulls) over sweep as breakpoint_offset,
            last_value(value_at ignore nulls) over sweep as breakpoint_value,
            last_value(slope_after ignore nulls) over sweep as breakpoint_slope,
            -- 1e300 = no breakpoint after this one (the minimum is then S here)
            last_value(case when curve_offset is not null then coalesce(next_future_min, 1e300) end ignore nulls)
                over sweep as carried_future_min
        from (

            select
                run_name,
                measure,
                custom_badput_event_type,
                at_offset,
                0 as is_point,
                at_offset as curve_offset,
                value_at,
                slope_after,
                next_future_min
            from {{ curves }}
            where run_name in (select run_name from {{ points }})

            union all

            select
                points.run_name,
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
                select distinct run_name, measure, custom_badput_event_type from {{ curves }}
            ) as measures
                on measures.run_name = points.run_name

        ) as merged
        window sweep as (
            partition by run_name, measure, custom_badput_event_type
            order by at_offset, is_point
            rows between unbounded preceding and current row
        )

    ) as swept
    where is_point = 1

{%- endmacro %}
