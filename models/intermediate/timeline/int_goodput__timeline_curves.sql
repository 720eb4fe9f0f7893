{{ config(**goodput_incremental_by_run('evaluated')) }}
{{ goodput_check_incremental_state() }}
{#
  The cumulative curve of every measure of every run, as breakpoints: C(x) =
  the measure's located amounts up to x seconds after the job start. Between
  two breakpoints C is linear, so
      C(x) = value_at + slope_after * (x - at_offset)
  with the last breakpoint at or before x. Windows then need two lookups per
  measure (C(end) - C(start)), never a scan of the amounts.

  - Offsets are seconds since the run's elapsed origin; amounts located
    outside [0, total elapsed] are squeezed onto its edges, so the curve
    reaches the run's total at the end and the whole job adds up.
  - Buckets the library zeroes when sanitising (below 0 or above the total)
    have no curve.
  - COUNTED is productive time plus every bucket that counts against Goodput
    (the catalogue's counts_against_goodput: all but DATA_LOADING_ASYNC): OTHER up to x is max(0, min over [x, total] of
    S(s) = s - COUNTED(s)), the slack left once every later overlap of
    buckets is paid for. That is non-decreasing (no window gets negative
    OTHER), adds up over any partition, and ends at the library's
    max(0, total - productive - counted). next_future_min is that minimum
    over the breakpoints after this one.
  - Slopes and intercepts are running sums in fixed point (goodput_exact), so
    they return to exactly zero between stretches of overlapping amounts and
    rounding does not creep along the run; two window passes in all.
#}

with

badput_types as (

    select * from {{ ref('badput_types') }}

),

amounts as (

    select * from {{ ref('int_goodput__timeline_amounts') }}
    where {{ goodput_run_is_rebuilt() }}

),

totals as (

    select * from {{ ref('int_goodput__run_totals') }}
    where {{ goodput_run_is_rebuilt() }}
        and total_elapsed_seconds > 0

),

sanitized as (

    select
        run_id,
        badput_type,
        coalesce(custom_badput_event_type, '') as custom_badput_event_type
    from {{ ref('int_goodput__badput_buckets') }}
    where {{ goodput_run_is_rebuilt() }}
        and was_sanitized

),

kept as (

    select
        amounts.run_id,
        amounts.measure,
        amounts.custom_badput_event_type,
        totals.total_elapsed_seconds,
        least(greatest(amounts.start_epoch - totals.elapsed_origin_epoch, 0), totals.total_elapsed_seconds)
            as start_offset,
        least(greatest(amounts.end_epoch - totals.elapsed_origin_epoch, 0), totals.total_elapsed_seconds)
            as end_offset,
        amounts.amount
    from amounts
    inner join totals
        on totals.run_id = amounts.run_id
    left join sanitized
        on sanitized.run_id = amounts.run_id
        and sanitized.badput_type = amounts.measure
        and sanitized.custom_badput_event_type = amounts.custom_badput_event_type
    where sanitized.run_id is null

),

with_counted as (

    select run_id, measure, custom_badput_event_type, start_offset, end_offset, amount
    from kept

    union all

    -- productive time and every bucket the catalogue counts against Goodput
    select
        kept.run_id,
        'COUNTED' as measure,
        '' as custom_badput_event_type,
        kept.start_offset,
        kept.end_offset,
        kept.amount
    from kept
    left join badput_types
        on badput_types.badput_type = kept.measure
    where kept.measure = 'PRODUCTIVE' or badput_types.counts_against_goodput

    union all

    -- the job's two ends are breakpoints of COUNTED, so S is linear between its breakpoints
    select
        edge.run_id,
        'COUNTED' as measure,
        '' as custom_badput_event_type,
        edge.at_offset as start_offset,
        edge.at_offset as end_offset,
        0 as amount
    from (
        select run_id, 0.0 as at_offset from totals
        union all
        select run_id, total_elapsed_seconds from totals
    ) as edge

),

events as (

    {#- Each span adds its slope and its intercept at its start and takes
        them back at its end, where its amount lands; a point (shorter than a
        microsecond) jumps by its amount. -#}
    {% set is_span = "end_offset - start_offset > 1e-6" %}
    {% set slope = "amount / (end_offset - start_offset)" %}
    select
        run_id,
        measure,
        custom_badput_event_type,
        start_offset as at_offset,
        case when {{ is_span }} then 0 else amount end as jump,
        {{ goodput_exact("case when " ~ is_span ~ " then " ~ slope ~ " else 0 end") }} as slope_delta,
        {{ goodput_exact("case when " ~ is_span ~ " then 0 else amount end") }}
            - {{ goodput_exact("case when " ~ is_span ~ " then " ~ slope ~ " * start_offset else 0 end") }}
            as intercept_delta
    from with_counted

    union all

    select
        run_id,
        measure,
        custom_badput_event_type,
        end_offset,
        0,
        -{{ goodput_exact(slope) }},
        {{ goodput_exact(slope ~ " * start_offset") }} + {{ goodput_exact("amount") }}
    from with_counted
    where {{ is_span }}

),

breakpoints as (

    select
        run_id,
        measure,
        custom_badput_event_type,
        at_offset,
        sum(jump) as jump,
        sum(slope_delta) as slope_delta,
        sum(intercept_delta) as intercept_delta
    from events
    group by run_id, measure, custom_badput_event_type, at_offset

),

{#- C(x) = x * slope + intercept after the last breakpoint at or before x:
    both are exact running sums, so they are exactly zero once every span
    so far has ended, and rounding does not creep along the run. -#}
running as (

    select
        run_id,
        measure,
        custom_badput_event_type,
        at_offset,
        jump,
        {{ goodput_exact_to_float('sum(slope_delta) over by_offset') }} as slope_after,
        {{ goodput_exact_to_float('sum(intercept_delta) over by_offset') }} as intercept_after
    from breakpoints
    window by_offset as (
        partition by run_id, measure, custom_badput_event_type
        order by at_offset
        rows between unbounded preceding and current row
    )

),

valued as (

    select
        run_id,
        measure,
        custom_badput_event_type,
        at_offset,
        jump,
        slope_after,
        at_offset * slope_after + intercept_after as value_at
    from running

),

{#- S = elapsed - COUNTED; at a jump the left limit counts too -#}
slack as (

    select
        valued.*,
        case
            when measure = 'COUNTED'
                then at_offset - greatest(value_at, value_at - jump)
        end as lowest_slack_here
    from valued

),

final as (

    select
        run_id,
        measure,
        custom_badput_event_type,
        at_offset,
        value_at,
        slope_after,
        -- a running minimum from the end (DuckDB: 1.3 s where the "1 following and
        -- unbounded following" frame took 11 s at 4M breakpoints)
        min(lowest_slack_here) over (
            partition by run_id, measure, custom_badput_event_type
            order by at_offset desc
            rows between unbounded preceding and 1 preceding
        ) as next_future_min
    from slack

)

select * from final
{{ goodput_rows_by_run() }}
